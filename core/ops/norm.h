#pragma once

#include "core/ops/value.h"

#include <optional>

namespace fusescope::ops {

Tensor softmax(const Tensor &x, int64_t dim);
Tensor logSoftmax(const Tensor &x, int64_t dim);
// Normalizes over the trailing dims given by normalizedShape.
Tensor layerNorm(const Tensor &x, const Shape &normalizedShape, const std::optional<Tensor> &weight = std::nullopt,
                 const std::optional<Tensor> &bias = std::nullopt, double eps = 1e-5);
Tensor rmsNorm(const Tensor &x, const Shape &normalizedShape, const std::optional<Tensor> &weight = std::nullopt,
               std::optional<double> eps = std::nullopt);
// x: [N, C, *]
Tensor groupNorm(const Tensor &x, int64_t numGroups, const std::optional<Tensor> &weight = std::nullopt,
                 const std::optional<Tensor> &bias = std::nullopt, double eps = 1e-5);
// Inference form: uses running statistics. x: [N, C, *]
Tensor batchNorm(const Tensor &x, const Tensor &runningMean, const Tensor &runningVar,
                 const std::optional<Tensor> &weight = std::nullopt, const std::optional<Tensor> &bias = std::nullopt,
                 double eps = 1e-5);
// q: [..., L, E], k: [..., S, E], v: [..., S, Ev]. attnMask: bool (true = attend) or additive float,
// broadcastable to [..., L, S]. scale defaults to 1/sqrt(E).
Tensor scaledDotProductAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                                 const std::optional<Tensor> &attnMask = std::nullopt, bool isCausal = false,
                                 std::optional<double> scale = std::nullopt);

} // namespace fusescope::ops
