#pragma once

#include "core/ops/value.h"

namespace fusescope::ops {

Tensor cat(const TensorList &tensors, int64_t dim = 0);
Tensor stack(const TensorList &tensors, int64_t dim = 0);
// Views: split into pieces of splitSize (the last may be smaller) / into `chunks` pieces.
TensorList split(const Tensor &x, int64_t splitSize, int64_t dim = 0);
TensorList splitWithSizes(const Tensor &x, const IntList &sizes, int64_t dim = 0);
TensorList chunk(const Tensor &x, int64_t chunks, int64_t dim = 0);
// pad: (left, right) pairs from the last dim backwards, as torch.nn.functional.pad;
// mode "constant" or "reflect".
Tensor pad(const Tensor &x, const IntList &pad, const std::string &mode = "constant", double value = 0);
Tensor gather(const Tensor &x, int64_t dim, const Tensor &index);
Tensor scatterAdd(const Tensor &x, int64_t dim, const Tensor &index, const Tensor &src);
Tensor indexSelect(const Tensor &x, int64_t dim, const Tensor &index);
// weight: [num, dim], indices: any shape of i32/i64
Tensor embedding(const Tensor &weight, const Tensor &indices);
Tensor triu(const Tensor &x, int64_t diagonal = 0);
Tensor tril(const Tensor &x, int64_t diagonal = 0);
Tensor repeat(const Tensor &x, const IntList &repeats);
Tensor flip(const Tensor &x, const IntList &dims);
// (values, indices) of the k largest (or smallest) along dim, sorted when `sorted`.
// [count, rank] i64: the index of every nonzero element (its shape depends on the data).
Tensor nonzero(const Tensor &x);
std::pair<Tensor, Tensor> topk(const Tensor &x, int64_t k, int64_t dim = -1, bool largest = true,
                               bool sorted = true);

} // namespace fusescope::ops
