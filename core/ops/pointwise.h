#pragma once

#include "core/ops/value.h"

#include <optional>

namespace fusescope::ops {

// Unary
Tensor neg(const Tensor &x);
Tensor abs(const Tensor &x);
Tensor exp(const Tensor &x);
Tensor exp2(const Tensor &x);
Tensor log(const Tensor &x);
Tensor log1p(const Tensor &x);
Tensor sqrt(const Tensor &x);
Tensor rsqrt(const Tensor &x);
Tensor reciprocal(const Tensor &x);
Tensor sin(const Tensor &x);
Tensor cos(const Tensor &x);
Tensor tanh(const Tensor &x);
Tensor sigmoid(const Tensor &x);
Tensor relu(const Tensor &x);
Tensor relu6(const Tensor &x);
Tensor leakyRelu(const Tensor &x, double slope = 0.01);
Tensor hardsigmoid(const Tensor &x);
Tensor hardswish(const Tensor &x);
// approximate: "none" (erf form) or "tanh"
Tensor gelu(const Tensor &x, const std::string &approximate = "none");
Tensor silu(const Tensor &x);
Tensor mish(const Tensor &x);
Tensor erf(const Tensor &x);
Tensor normalCdf(const Tensor &x); // Phi(x), the standard normal CDF
Tensor sign(const Tensor &x);
Tensor floor(const Tensor &x);
Tensor ceil(const Tensor &x);
Tensor round(const Tensor &x);
Tensor trunc(const Tensor &x);
Tensor isnan(const Tensor &x);
Tensor logicalNot(const Tensor &x);
Tensor bitwiseNot(const Tensor &x);

// Binary (a Value operand may be a Tensor or a number)
Tensor add(const Value &a, const Value &b, double alpha = 1);
Tensor sub(const Value &a, const Value &b, double alpha = 1);
Tensor mul(const Value &a, const Value &b);
// roundingMode: "" (true division), "floor" or "trunc"
Tensor div(const Value &a, const Value &b, const std::string &roundingMode = "");
Tensor pow(const Value &a, const Value &b);
Tensor maximum(const Tensor &a, const Tensor &b);
Tensor minimum(const Tensor &a, const Tensor &b);
Tensor fmod(const Value &a, const Value &b);
Tensor remainder(const Value &a, const Value &b);
Tensor eq(const Value &a, const Value &b);
Tensor ne(const Value &a, const Value &b);
Tensor lt(const Value &a, const Value &b);
Tensor le(const Value &a, const Value &b);
Tensor gt(const Value &a, const Value &b);
Tensor ge(const Value &a, const Value &b);
Tensor logicalAnd(const Tensor &a, const Tensor &b);
Tensor logicalOr(const Tensor &a, const Tensor &b);

// Ternary and others
Tensor where(const Tensor &cond, const Value &a, const Value &b);
// Bounds are scalars or None; as in PyTorch, a float bound makes an integer
// tensor's result the default float (clamp(ints, 0.5, 2.5) is f32).
Tensor clamp(const Tensor &x, const Value &min, const Value &max);
Tensor maskedFill(const Tensor &x, const Tensor &mask, double value);
Tensor cast(const Tensor &x, DType dtype);
Tensor clone(const Tensor &x);
// Copies src into dst in place (broadcasting src), converting dtypes.
void copy_(const Tensor &dst, const Tensor &src);

// Result dtype of a binary op on a and b (wrapped numbers promote by category).
DType resultType(const Tensor &a, const Tensor &b);

} // namespace fusescope::ops
