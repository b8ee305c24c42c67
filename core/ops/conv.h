#pragma once

#include "core/ops/value.h"

#include <optional>

namespace fusescope::ops {

// x: [N, C, H, W], weight: [O, C/groups, kH, kW]
Tensor conv2d(const Tensor &x, const Tensor &weight, const std::optional<Tensor> &bias = std::nullopt,
              const IntList &stride = {1, 1}, const IntList &padding = {0, 0}, const IntList &dilation = {1, 1},
              int64_t groups = 1);
Tensor maxPool2d(const Tensor &x, const IntList &kernelSize, const IntList &stride = {},
                 const IntList &padding = {0, 0}, const IntList &dilation = {1, 1}, bool ceilMode = false);
Tensor avgPool2d(const Tensor &x, const IntList &kernelSize, const IntList &stride = {},
                 const IntList &padding = {0, 0}, bool ceilMode = false, bool countIncludePad = true);
Tensor adaptiveAvgPool2d(const Tensor &x, const IntList &outputSize);
// mode: "nearest" or "bilinear"; outputSize is [H, W].
Tensor upsample2d(const Tensor &x, const IntList &outputSize, const std::string &mode = "nearest",
                  bool alignCorners = false);

// The Winograd tile that suits aten.conv2d with these arguments (meta
// tensors suffice): 0 for none, 2 for F(2x2, 3x3) as aten.conv2d itself
// runs it, or, with `weightsReady` (the weight transform done once
// beforehand, which the compiler does through fusescope.winograd_weights
// and fusescope.conv2d_winograd), also for fewer tiles, and 4 for
// F(4x4, 3x3) on large planes.
int conv2dWinogradTile(const Args &conv2dArgs, bool weightsReady);

} // namespace fusescope::ops
