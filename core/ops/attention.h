#pragma once

#include "core/ops/value.h"

#include <optional>

namespace fusescope::ops {

// q: [..., L, E], k: [..., S, E], v: [..., S, Ev]. attnMask: bool (true = attend) or additive float,
// broadcastable to [..., L, S]. scale defaults to 1/sqrt(E).
Tensor scaledDotProductAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                                 const std::optional<Tensor> &attnMask = std::nullopt, bool isCausal = false,
                                 std::optional<double> scale = std::nullopt);

} // namespace fusescope::ops
