// View ops: results alias the input's storage (for meta tensors, just the
// geometry). Every function here works on meta tensors unchanged.
#include "core/ops/views.h"

#include "core/ops/builtin.h"
#include "core/ops/loops.h"
#include "core/ops/pointwise.h"
#include "core/ops/registry.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace fusescope {
namespace {

// Resolves one -1 in `size` against numel; throws naming the op.
Shape inferSize(const char *op, const Shape &size, int64_t numel)
{
    Shape out = size;
    int64_t known = 1;
    int inferred = -1;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == -1) {
            if (inferred >= 0)
                throw Error(std::string(op) + ": only one dimension can be -1 in shape " + shapeStr(size));
            inferred = static_cast<int>(i);
        } else if (out[i] < 0) {
            throw Error(std::string(op) + ": invalid size " + std::to_string(out[i]) + " in shape " + shapeStr(size));
        } else {
            known *= out[i];
        }
    }
    if (inferred >= 0) {
        if (known == 0 || numel % known != 0)
            throw Error(std::string(op) + ": shape " + shapeStr(size) + " is invalid for input of size "
                        + std::to_string(numel));
        out[static_cast<size_t>(inferred)] = numel / known;
    } else if (known != numel) {
        throw Error(std::string(op) + ": shape " + shapeStr(size) + " is invalid for input of size "
                    + std::to_string(numel));
    }
    return out;
}

// Strides for viewing (sizes, strides) as newSize without a copy, or false.
// Groups of old dims that are contiguous among themselves can be split or
// merged freely; nothing can cross a group boundary.
bool viewStrides(const Shape &sizes, const Shape &strides, const Shape &newSize, Shape &out)
{
    out.assign(newSize.size(), 0);
    if (sizes.empty() || numelOf(sizes) == 0) {
        out = contiguousStrides(newSize);
        return true;
    }
    int64_t viewD = static_cast<int64_t>(newSize.size()) - 1;
    int64_t chunkBase = strides.empty() ? 1 : strides.back();
    int64_t tensorNumel = 1, viewNumel = 1;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
        tensorNumel *= sizes[static_cast<size_t>(d)];
        const bool groupEnds = d == 0
            || (sizes[static_cast<size_t>(d - 1)] != 1
                && strides[static_cast<size_t>(d - 1)] != tensorNumel * chunkBase);
        if (!groupEnds)
            continue;
        while (viewD >= 0 && (viewNumel < tensorNumel || newSize[static_cast<size_t>(viewD)] == 1)) {
            out[static_cast<size_t>(viewD)] = viewNumel * chunkBase;
            viewNumel *= newSize[static_cast<size_t>(viewD)];
            --viewD;
        }
        if (viewNumel != tensorNumel)
            return false;
        if (d > 0) {
            chunkBase = strides[static_cast<size_t>(d - 1)];
            tensorNumel = 1;
            viewNumel = 1;
        }
    }
    return viewD == -1;
}

Tensor self0(const Args &a)
{
    return a[0].toTensor();
}

TensorList viewOp(const Args &a)
{
    const Tensor self = self0(a);
    const Shape size = inferSize("aten.view", a[1].toIntList(), self.numel());
    Shape strides;
    if (!viewStrides(self.sizes(), self.strides(), size, strides))
        throw Error("aten.view: a tensor of shape " + shapeStr(self.sizes()) + " with strides "
                    + shapeStr(self.strides()) + " cannot be viewed as " + shapeStr(size) + "; use reshape");
    return {self.alias(size, strides, self.offset())};
}

TensorList reshapeOp(const Args &a)
{
    const Tensor self = self0(a);
    const Shape size = inferSize("aten.reshape", a[1].toIntList(), self.numel());
    Shape strides;
    if (viewStrides(self.sizes(), self.strides(), size, strides))
        return {self.alias(size, strides, self.offset())};
    if (self.isMeta())
        return {Tensor::empty(size, self.dtype(), kMeta)};
    return {ops::clone(self).alias(size, contiguousStrides(size), 0)};
}

TensorList permuteOp(const Args &a)
{
    const Tensor self = self0(a);
    const IntList &dims = a[1].toIntList();
    const int64_t rank = self.dim();
    if (static_cast<int64_t>(dims.size()) != rank)
        throw Error("aten.permute: " + std::to_string(dims.size()) + " dims given for a tensor of rank "
                    + std::to_string(rank));
    Shape sizes(dims.size()), strides(dims.size());
    std::vector<bool> seen(dims.size(), false);
    for (size_t i = 0; i < dims.size(); ++i) {
        const auto d = static_cast<size_t>(wrapDim(dims[i], rank, "aten.permute"));
        if (seen[d])
            throw Error("aten.permute: dimension " + std::to_string(dims[i]) + " repeats in " + shapeStr(dims));
        seen[d] = true;
        sizes[i] = self.sizes()[d];
        strides[i] = self.strides()[d];
    }
    return {self.alias(sizes, strides, self.offset())};
}

TensorList transposeOp(const Args &a)
{
    const Tensor self = self0(a);
    if (self.dim() == 0)
        return {self.alias({}, {}, self.offset())};
    const auto d0 = static_cast<size_t>(wrapDim(a[1].toInt(), self.dim(), "aten.transpose"));
    const auto d1 = static_cast<size_t>(wrapDim(a[2].toInt(), self.dim(), "aten.transpose"));
    Shape sizes = self.sizes(), strides = self.strides();
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
    return {self.alias(sizes, strides, self.offset())};
}

TensorList sliceOp(const Args &a)
{
    const Tensor self = self0(a);
    if (self.dim() == 0)
        throw Error("aten.slice: cannot slice a 0-d tensor");
    const auto d = static_cast<size_t>(wrapDim(a[1].toInt(), self.dim(), "aten.slice"));
    const int64_t n = self.sizes()[d];
    const int64_t step = a[4].toInt();
    if (step <= 0)
        throw Error("aten.slice: step must be positive, got " + std::to_string(step));
    auto clampIndex = [n](int64_t i) {
        if (i < 0)
            i += n;
        return std::clamp<int64_t>(i, 0, n);
    };
    const int64_t start = a[2].isNone() ? 0 : clampIndex(a[2].toInt());
    const int64_t end = a[3].isNone() ? n : clampIndex(a[3].toInt());
    Shape sizes = self.sizes(), strides = self.strides();
    sizes[d] = end > start ? (end - start + step - 1) / step : 0;
    strides[d] *= step;
    return {self.alias(sizes, strides, self.offset() + start * self.strides()[d])};
}

TensorList narrowOp(const Args &a)
{
    const Tensor self = self0(a);
    const auto d = wrapDim(a[1].toInt(), self.dim(), "aten.narrow");
    const int64_t n = self.sizes()[static_cast<size_t>(d)];
    int64_t start = a[2].toInt();
    const int64_t length = a[3].toInt();
    if (start < 0)
        start += n;
    if (start < 0 || length < 0 || start + length > n)
        throw Error("aten.narrow: start " + std::to_string(a[2].toInt()) + " and length " + std::to_string(length)
                    + " exceed dimension " + std::to_string(d) + " of size " + std::to_string(n));
    return sliceOp({self, d, start, start + length, int64_t(1)});
}

TensorList selectOp(const Args &a)
{
    const Tensor self = self0(a);
    if (self.dim() == 0)
        throw Error("aten.select: cannot select from a 0-d tensor");
    const auto d = static_cast<size_t>(wrapDim(a[1].toInt(), self.dim(), "aten.select"));
    const int64_t n = self.sizes()[d];
    int64_t index = a[2].toInt();
    if (index < -n || index >= n)
        throw Error("aten.select: index " + std::to_string(index) + " is out of range for dimension "
                    + std::to_string(d) + " of size " + std::to_string(n));
    if (index < 0)
        index += n;
    Shape sizes = self.sizes(), strides = self.strides();
    const int64_t offset = self.offset() + index * strides[d];
    sizes.erase(sizes.begin() + static_cast<int64_t>(d));
    strides.erase(strides.begin() + static_cast<int64_t>(d));
    return {self.alias(sizes, strides, offset)};
}

TensorList expandOp(const Args &a)
{
    const Tensor self = self0(a);
    const IntList &size = a[1].toIntList();
    if (size.size() < self.sizes().size())
        throw Error("aten.expand: cannot expand " + shapeStr(self.sizes()) + " to fewer dimensions "
                    + shapeStr(size));
    const size_t lead = size.size() - self.sizes().size();
    Shape sizes(size.size()), strides(size.size(), 0);
    for (size_t i = 0; i < size.size(); ++i) {
        if (i < lead) {
            if (size[i] < 0)
                throw Error("aten.expand: -1 is not allowed in a new leading dimension of " + shapeStr(size));
            sizes[i] = size[i];
            continue;
        }
        const int64_t have = self.sizes()[i - lead];
        const int64_t want = size[i] == -1 ? have : size[i];
        if (have != want && have != 1)
            throw Error("aten.expand: shape " + shapeStr(self.sizes()) + " cannot be expanded to "
                        + shapeStr(size));
        sizes[i] = want;
        strides[i] = have == want ? self.strides()[i - lead] : 0;
    }
    return {self.alias(sizes, strides, self.offset())};
}

TensorList squeezeOp(const Args &a)
{
    const Tensor self = self0(a);
    std::vector<bool> drop(self.sizes().size(), false);
    if (a[1].isNone()) {
        for (size_t i = 0; i < drop.size(); ++i)
            drop[i] = self.sizes()[i] == 1;
    } else {
        for (int64_t d : a[1].toIntList()) {
            if (self.dim() == 0)
                continue;
            const auto w = static_cast<size_t>(wrapDim(d, self.dim(), "aten.squeeze"));
            drop[w] = self.sizes()[w] == 1;
        }
    }
    Shape sizes, strides;
    for (size_t i = 0; i < drop.size(); ++i) {
        if (!drop[i]) {
            sizes.push_back(self.sizes()[i]);
            strides.push_back(self.strides()[i]);
        }
    }
    return {self.alias(sizes, strides, self.offset())};
}

TensorList unsqueezeOp(const Args &a)
{
    const Tensor self = self0(a);
    const auto d = static_cast<size_t>(wrapDim(a[1].toInt(), self.dim() + 1, "aten.unsqueeze"));
    Shape sizes = self.sizes(), strides = self.strides();
    const int64_t stride = d < sizes.size() ? sizes[d] * strides[d] : 1;
    sizes.insert(sizes.begin() + static_cast<int64_t>(d), 1);
    strides.insert(strides.begin() + static_cast<int64_t>(d), stride);
    return {self.alias(sizes, strides, self.offset())};
}

TensorList flattenOp(const Args &a)
{
    const Tensor self = self0(a);
    if (self.dim() == 0)
        return reshapeOp({self, IntList{1}});
    const auto s = static_cast<size_t>(wrapDim(a[1].toInt(), self.dim(), "aten.flatten"));
    const auto e = static_cast<size_t>(wrapDim(a[2].toInt(), self.dim(), "aten.flatten"));
    if (s > e)
        throw Error("aten.flatten: start_dim " + std::to_string(s) + " comes after end_dim " + std::to_string(e));
    Shape size(self.sizes().begin(), self.sizes().begin() + static_cast<int64_t>(s));
    int64_t merged = 1;
    for (size_t i = s; i <= e; ++i)
        merged *= self.sizes()[i];
    size.push_back(merged);
    size.insert(size.end(), self.sizes().begin() + static_cast<int64_t>(e) + 1, self.sizes().end());
    return reshapeOp({self, size});
}

TensorList asStridedOp(const Args &a)
{
    const Tensor self = self0(a);
    const IntList &size = a[1].toIntList();
    const IntList &stride = a[2].toIntList();
    if (size.size() != stride.size())
        throw Error("aten.as_strided: size " + shapeStr(size) + " and stride " + shapeStr(stride)
                    + " differ in length");
    const int64_t offset = a[3].toInt();
    if (!self.isMeta() && numelOf(size) > 0) {
        int64_t extent = offset;
        for (size_t i = 0; i < size.size(); ++i)
            extent += (size[i] - 1) * stride[i];
        const auto capacity = static_cast<int64_t>(self.storage()->bytes() / self.itemSize());
        if (offset < 0 || extent >= capacity)
            throw Error("aten.as_strided: size " + shapeStr(size) + " with stride " + shapeStr(stride)
                        + " reaches outside the storage of " + std::to_string(capacity) + " elements");
    }
    return {self.alias(size, stride, offset)};
}

// Reshape and flatten copy where their input cannot be viewed in the new
// shape (merging attention's heads read through a transpose). This kernel
// writes that copy into a buffer it is given, in the input's element order
// (the buffer is contiguous, so it takes the input's shape): the compiled
// runtime hands it the planned buffer, where the view op would clone into a
// fresh allocation that the runtime then copied again.
void copyInElementOrder(const Args &a, std::span<Tensor> outs)
{
    const Tensor self = self0(a);
    const Tensor &out = outs[0];
    if (!out.isContiguous() || out.numel() != self.numel() || out.dtype() != self.dtype())
        throw std::logic_error("a reshape's copy into a buffer of another size, type or layout");
    loops::copyInto(out.alias(self.sizes(), contiguousStrides(self.sizes()), out.offset()), self);
}

void addView(OpRegistry &r, const char *schema, ViewFn fn, KernelFn copy = {})
{
    OpDef def;
    def.kind = OpKind::View;
    def.view = std::move(fn);
    def.cpu = std::move(copy);
    r.add(schema, std::move(def));
}

} // namespace

void registerViewOps(OpRegistry &r)
{
    addView(r, "aten.view(Tensor self, int[] size) -> Tensor", viewOp);
    addView(r, "aten.reshape(Tensor self, int[] shape) -> Tensor", reshapeOp, copyInElementOrder);
    addView(r, "aten.permute(Tensor self, int[] dims) -> Tensor", permuteOp);
    addView(r, "aten.transpose(Tensor self, int dim0, int dim1) -> Tensor", transposeOp);
    addView(r, "aten.slice(Tensor self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor", sliceOp);
    addView(r, "aten.narrow(Tensor self, int dim, int start, int length) -> Tensor", narrowOp);
    addView(r, "aten.select(Tensor self, int dim, int index) -> Tensor", selectOp);
    addView(r, "aten.expand(Tensor self, int[] size) -> Tensor", expandOp);
    addView(r, "aten.squeeze(Tensor self, int[]? dim=None) -> Tensor", squeezeOp);
    addView(r, "aten.unsqueeze(Tensor self, int dim) -> Tensor", unsqueezeOp);
    addView(r, "aten.flatten(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor", flattenOp,
            copyInElementOrder);
    addView(r, "aten.as_strided(Tensor self, int[] size, int[] stride, int storage_offset=0) -> Tensor",
            asStridedOp);
}

namespace ops {

Tensor view(const Tensor &self, const Shape &size) { return callOp1("aten.view", {self, size}); }
Tensor reshape(const Tensor &self, const Shape &size) { return callOp1("aten.reshape", {self, size}); }
Tensor permute(const Tensor &self, const Shape &dims) { return callOp1("aten.permute", {self, dims}); }
Tensor transpose(const Tensor &self, int64_t d0, int64_t d1) { return callOp1("aten.transpose", {self, d0, d1}); }
Tensor slice(const Tensor &self, int64_t dim, int64_t start, int64_t end, int64_t step)
{
    return callOp1("aten.slice", {self, dim, start, end, step});
}
Tensor narrow(const Tensor &self, int64_t dim, int64_t start, int64_t length)
{
    return callOp1("aten.narrow", {self, dim, start, length});
}
Tensor select(const Tensor &self, int64_t dim, int64_t index) { return callOp1("aten.select", {self, dim, index}); }
Tensor expand(const Tensor &self, const Shape &size) { return callOp1("aten.expand", {self, size}); }
Tensor squeeze(const Tensor &self) { return callOp1("aten.squeeze", {self}); }
Tensor squeeze(const Tensor &self, int64_t dim) { return callOp1("aten.squeeze", {self, IntList{dim}}); }
Tensor unsqueeze(const Tensor &self, int64_t dim) { return callOp1("aten.unsqueeze", {self, dim}); }
Tensor flatten(const Tensor &self, int64_t s, int64_t e) { return callOp1("aten.flatten", {self, s, e}); }
Tensor asStrided(const Tensor &self, const Shape &size, const Shape &stride, int64_t offset)
{
    return callOp1("aten.as_strided", {self, size, stride, offset});
}

} // namespace ops
} // namespace fusescope
