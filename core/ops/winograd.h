// Winograd F(2x2, 3x3) convolution: 3x3, stride 1, undilated, ungrouped, f32.
// Internal to conv2d's kernel (core/ops/conv.cpp), which decides when to use it.
#pragma once

#include <cstdint>

namespace fusescope::winograd {

struct Problem {
    int64_t n = 0, c = 0, h = 0, w = 0;  // input, NCHW contiguous
    int64_t outC = 0, outH = 0, outW = 0; // output, NCHW contiguous
    int64_t padH = 0, padW = 0;
};

// Whether the transforms pay for themselves: enough output tiles per
// weight matrix, and channels enough for the GEMMs to run at speed. With
// `weightsReady` (transformed once, at compile time) fewer tiles suffice.
bool worthIt(const Problem &p, bool weightsReady = false);

// Transformed weights: 16 points of [outC, c] each, the layout conv3x3Transformed reads.
constexpr int64_t kTransformedPoints = 16;

// u[16][outC][c] from w[outC][c][3][3]: the part of the convolution that
// depends on the weights alone, which the compiler runs once at compile time.
void transformWeights(int64_t outC, int64_t c, const float *w, float *u);

// out = conv2d(x, w[outC, c, 3, 3]) + bias (bias may be null).
void conv3x3(const Problem &p, const float *x, const float *w, const float *bias, float *out);

// The same with weights already transformed by transformWeights.
void conv3x3Transformed(const Problem &p, const float *x, const float *u, const float *bias, float *out);

} // namespace fusescope::winograd
