#pragma once

#include "core/ops/value.h"

namespace fusescope::ops {

Tensor view(const Tensor &self, const Shape &size);
Tensor reshape(const Tensor &self, const Shape &size);
Tensor permute(const Tensor &self, const Shape &dims);
Tensor transpose(const Tensor &self, int64_t dim0, int64_t dim1);
Tensor slice(const Tensor &self, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor narrow(const Tensor &self, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor &self, int64_t dim, int64_t index);
Tensor expand(const Tensor &self, const Shape &size);
Tensor squeeze(const Tensor &self);
Tensor squeeze(const Tensor &self, int64_t dim);
Tensor unsqueeze(const Tensor &self, int64_t dim);
Tensor flatten(const Tensor &self, int64_t startDim = 0, int64_t endDim = -1);
Tensor asStrided(const Tensor &self, const Shape &size, const Shape &stride, int64_t storageOffset = 0);

} // namespace fusescope::ops
