// 3x3 stride-2 max pooling (ResNet, SqueezeNet, DenseNet, ShuffleNet, f32)
// on AVX-512: each input row's windows of three through permutes, then the
// maximum of three such rows.
// Internal to aten.max_pool2d (core/ops/conv.cpp, which decides when to use it).
#pragma once

#include <cstdint>
#include <vector>

namespace fusescope::maxpool3s2 {

struct Plane {
    int64_t inH = 0, inW = 0, outH = 0, outW = 0;
    int64_t padH = 0, padW = 0; // at most 1, as aten.max_pool2d allows for a 3x3 window
};

// Whether this kernel runs: the CPU has AVX-512.
bool available();

// The scratch one thread needs for planes of this shape.
std::vector<float> scratch(const Plane &p);

// out[oh][ow] = the maximum of x's window at (2 oh - padH, 2 ow - padW), its
// cells outside the plane left out. As aten.max_pool2d's other kernels: a NaN
// anywhere in the window is the result, and of equal maxima (+0 and -0) the
// window's first in row-major order.
void pool(const Plane &p, const float *x, float *out, std::vector<float> &scratch);

} // namespace fusescope::maxpool3s2
