#pragma once

#include <string>

namespace fusescope {

// The optional parts decided at configure time (see cmake/FusescopeDependencies.cmake).
struct BuildFeatures {
    bool cuda = false;
    bool cupti = false;
    bool nvrtc = false;
    bool onnx = false;
};

BuildFeatures buildFeatures();
std::string versionString();
// "cuda=on cupti=off nvrtc=on onnx=on", the second line of `fusescope --version`.
std::string featureLine();

} // namespace fusescope
