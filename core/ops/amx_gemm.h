#pragma once
// f32 GEMMs on the AMX tile units of recent Xeons, at f32 accuracy. The
// tiles multiply bf16 (8 significant bits) and accumulate in f32, so every
// f32 value x is split into three bf16 parts x = x0 + x1 + x2 (exact: each
// part takes the next 8 bits of the 24), and a·b is the sum of the six
// partial products not below 2^-24 of a·b:
//   a0b0 + a0b1 + a1b0 + a0b2 + a1b1 + a2b0
// (the three left out, a1b2, a2b1, a2b2, are at most 2^-24 of it together).
// The error is that of an f32 GEMM with another summation order; tests
// compare it with OpenBLAS's against a double reference.
//
// The right operand is a constant (a weight): it is packed once, at compile
// time (fusescope.pack_bf16x6), into 32-column panels in the tiles' pair
// layout; the left operand is split and packed on every call. Values the
// split cannot carry exactly (non-finite, beyond 2^120, nonzero below 2^-100,
// where the tile units flush bf16 subnormals) make gemm() decline. Results
// below f32's normal range (1.2e-38) come out as 0, as under flush-to-zero.
#include <cstdint>
#include <vector>

namespace fusescope::amx {

// The CPU has AMX-BF16 and the kernel granted this process the tile state
// (asked once); FUSESCOPE_NO_AMX=1 turns it off.
bool available();

// Elements (bf16 bits) of a packed [k, n] right operand.
int64_t packedElements(int64_t k, int64_t n);

// Whether every value of the strided [rows, cols] matrix splits exactly.
bool splittable(const float *x, int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride);

// Packs b[i, j] = b[i * sk + j * sn] (k rows, n columns). Returns false where
// a value is not splittable(): packed is then of no use.
bool packRight(const float *b, int64_t k, int64_t n, int64_t sk, int64_t sn, uint16_t *packed);

// The f32 matrix a packed one holds, row-major [k, n] (the parts summed: exact).
std::vector<float> unpackRight(const uint16_t *packed, int64_t k, int64_t n);

// c[m, n] (row stride ldc) = a[m, k] (row stride lda, unit column stride) @
// the packed right operand, on the thread pool. Returns false, writing
// nothing, when a value of a is not splittable() or AMX is not available.
bool gemm(const float *a, int64_t m, int64_t k, int64_t lda, const uint16_t *packed, int64_t n, float *c, int64_t ldc);

} // namespace fusescope::amx
