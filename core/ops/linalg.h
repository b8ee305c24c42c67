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
