#pragma once

#include "core/ops/value.h"

#include <optional>

namespace fusescope::ops {

// `dims` empty means all dims. Negative dims wrap. keepdim keeps reduced dims as size 1.
// sum/prod of bool and integer inputs accumulate in i64 (as PyTorch); `dtype` overrides.
Tensor sum(const Tensor &x, const IntList &dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor &x, const IntList &dims = {}, bool keepdim = false);
Tensor prod(const Tensor &x, const IntList &dims = {}, bool keepdim = false);
Tensor amax(const Tensor &x, const IntList &dims = {}, bool keepdim = false);
Tensor amin(const Tensor &x, const IntList &dims = {}, bool keepdim = false);
// max/min along one dim: (values, indices); without a dim: the global value.
std::pair<Tensor, Tensor> max(const Tensor &x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor &x);
Tensor min(const Tensor &x);
// dim = nullopt: over the flattened tensor. Ties give the first index.
Tensor argmax(const Tensor &x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor &x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor &x, const IntList &dims = {}, double correction = 1, bool keepdim = false);
Tensor stdDev(const Tensor &x, const IntList &dims = {}, double correction = 1, bool keepdim = false);
Tensor logsumexp(const Tensor &x, const IntList &dims, bool keepdim = false);
Tensor all(const Tensor &x, const IntList &dims = {}, bool keepdim = false);
Tensor any(const Tensor &x, const IntList &dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor &x, int64_t dim, std::optional<DType> dtype = std::nullopt);

} // namespace fusescope::ops
