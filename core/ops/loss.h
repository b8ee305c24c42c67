#pragma once

#include "core/ops/value.h"

#include <optional>

namespace fusescope::ops {

// reduction: "mean", "sum" or "none".
// input: [N, C] or [N, C, d1...] logits; target: class indices [N] / [N, d1...] (i64),
// ignoreIndex entries contribute nothing (and are not counted by "mean").
Tensor crossEntropy(const Tensor &input, const Tensor &target, const std::optional<Tensor> &weight = std::nullopt,
                    const std::string &reduction = "mean", int64_t ignoreIndex = -100, double labelSmoothing = 0);
// input: log-probabilities [N, C] or [N, C, d1...]
Tensor nllLoss(const Tensor &input, const Tensor &target, const std::optional<Tensor> &weight = std::nullopt,
               const std::string &reduction = "mean", int64_t ignoreIndex = -100);
Tensor mseLoss(const Tensor &input, const Tensor &target, const std::string &reduction = "mean");

} // namespace fusescope::ops
