#pragma once
// The model zoo: the standard benchmark workloads (docs: DESIGN.md, "Standard
// benchmark workloads") built with deterministic seeded weights and inputs.

#include "core/nn/module.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fusescope::zoo {

struct InputSpec {
    std::string name; // "x"
    Shape shape;
    DType dtype = DType::F32;
};

struct ModelInfo {
    std::string name;        // "resnet18"
    std::string description; // one line
    std::vector<InputSpec> inputs;
    Shape outputShape;
};

struct Instance {
    std::shared_ptr<nn::Module> model; // in eval mode
    std::vector<Tensor> inputs;        // standard normal, on the CPU, as ModelInfo::inputs
};

// In the order of DESIGN.md's table.
std::vector<std::string> modelNames();
// Throws Error listing the known names for an unknown one.
ModelInfo info(const std::string &name);
// The same seed gives the same weights and inputs.
Instance create(const std::string &name, uint64_t seed = 0);
// Shape-only inputs on the meta device: what the compiler's capture runs.
std::vector<Tensor> metaInputs(const std::string &name);

} // namespace fusescope::zoo
