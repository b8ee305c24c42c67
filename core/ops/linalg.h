#pragma once

#include "core/ops/value.h"

#include <optional>

namespace fusescope::ops {

// NumPy matmul semantics: 1-D operands are promoted and squeezed back,
// batch dims broadcast. Errors read "aten.matmul: shapes [8,256] and [128,64] cannot be multiplied".
Tensor matmul(const Tensor &a, const Tensor &b);
Tensor mm(const Tensor &a, const Tensor &b);   // [n,k] x [k,m]
Tensor bmm(const Tensor &a, const Tensor &b);  // [b,n,k] x [b,k,m]
// x: [..., in], weight: [out, in], bias: [out]
Tensor linear(const Tensor &x, const Tensor &weight, const std::optional<Tensor> &bias = std::nullopt);
// beta * self + alpha * (a @ b); self broadcasts to [n,m]
Tensor addmm(const Tensor &self, const Tensor &a, const Tensor &b, double beta = 1, double alpha = 1);

} // namespace fusescope::ops

namespace fusescope::blas {

// Row-major C[m,n] = alpha * op(A)[m,k] @ op(B)[k,n] + beta * C, op = transpose
// when the flag is set: cblas_sgemm/cblas_dgemm for kernels that hold raw
// buffers (convolution). Throws Error when a size exceeds BLAS's int range.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
          const double *b, int64_t ldb, double beta, double *c, int64_t ldc);

} // namespace fusescope::blas
