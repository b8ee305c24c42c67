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
} // namespace fusescope::ops
