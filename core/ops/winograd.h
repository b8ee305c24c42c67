// Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions: 3x3, stride 1, undilated, ungrouped, f32.
// Internal to the convolution kernels: aten.conv2d (core/ops/conv.cpp, which decides
// when eager mode uses F(2x2)) and the compiler's ops of core/ops/winograd_ops.cpp.
#pragma once

#include "core/ops/storeactivation.h"

#include <cstdint>

namespace fusescope::winograd {

struct Problem {
    int64_t n = 0, c = 0, h = 0, w = 0;  // input, NCHW contiguous
    int64_t outC = 0, outH = 0, outW = 0; // output, NCHW contiguous
    int64_t padH = 0, padW = 0;
    StoreActivation act; // applied to out as each tile row is stored
};

// Whether the transforms pay for themselves: enough output tiles per
// weight matrix, and channels enough for the GEMMs to run at speed. With
// `weightsReady` (transformed once, at compile time) fewer tiles suffice.
bool worthIt(const Problem &p, bool weightsReady = false);

// The tile for a convolution whose weights are transformed beforehand and
// that worthIt accepts: 4 (F(4x4, 3x3)) with enough 4x4 tiles, else 2.
int readyTile(const Problem &p);

// Transformed weights: 16 points of [outC, c] each, the layout conv3x3Transformed reads.
constexpr int64_t kTransformedPoints = 16;

// u[16][outC][c] from w[outC][c][3][3]: the part of the convolution that
// depends on the weights alone, which the compiler runs once at compile time.
void transformWeights(int64_t outC, int64_t c, const float *w, float *u);

// out = conv2d(x, w[outC, c, 3, 3]) + bias (bias may be null).
void conv3x3(const Problem &p, const float *x, const float *w, const float *bias, float *out);

// The same with weights already transformed by transformWeights.
void conv3x3Transformed(const Problem &p, const float *x, const float *u, const float *bias, float *out);

// F(4x4, 3x3): 36 points per 4x4 output pixels, 2.25 multiplications per
// output against F(2x2)'s 4, for larger transforms whose weights are 2.25x
// F(2x2)'s. Only run with weights transformed beforehand (the compiler).
constexpr int64_t kTransformedPoints4 = 36;
void transformWeights4(int64_t outC, int64_t c, const float *w, float *u);
void conv3x3Transformed4(const Problem &p, const float *x, const float *u, const float *bias, float *out);

} // namespace fusescope::winograd
