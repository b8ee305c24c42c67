// 1x1 convolutions (stride 1, no padding), f32, as register blocks that read
// the input image in place: no packed copies of either operand.
// Internal to aten.conv2d (core/ops/conv.cpp, which decides when to use it).
#pragma once

#include "core/ops/storeactivation.h"

#include <cstdint>

namespace fusescope::conv1x1 {

struct Problem {
    int64_t images = 0, groups = 1;
    int64_t inC = 0, outC = 0; // per group
    int64_t pixels = 0;        // H * W of input and output
    StoreActivation act;       // applied to out as it is stored
};

// Whether this kernel runs the problem: the CPU has AVX-512 (the blocks are
// written for 16 lanes; elsewhere BLAS stays ahead) and an image has at
// least 32 pixels (two vectors; fewer would leave most lanes idle).
bool worthIt(const Problem &p);

// out[n][g*outC + o][p] = bias[g*outC + o] + sum over c of
// w[g*outC + o][c] * x[n][g*inC + c][p]; NCHW and OIHW, contiguous. bias may be null.
void run(const Problem &p, const float *x, const float *w, const float *bias, float *out);

// The same register blocks as one product on the calling thread, for
// im2col's column matrices whose depth is too small for BLAS to pay for its
// packing (a stem's 3 channels by 3x3 taps: 27):
// out[o * ldo + p] = bias[o] + sum over c < k of w[o * ldw + c] * x[c * ldx + p], o < rows, p < pixels
// (ldw 0: k). pixels must be at least 32 (see `fits`); bias may be null. Attention's per-head products
// (core/ops/attention.cpp) run here too.
struct Gemm {
    int64_t rows = 0, k = 0, pixels = 0;
    int64_t ldx = 0, ldo = 0;
    StoreActivation act;
    int64_t ldw = 0;
};
// Whether gemm runs g: the CPU has AVX-512, g has rows and depth, and at least 32 pixels.
bool fits(const Gemm &g);
void gemm(const Gemm &g, const float *w, const float *x, const float *bias, float *out);

} // namespace fusescope::conv1x1
