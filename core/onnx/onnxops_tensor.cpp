// The ONNX ops for shapes and data movement, constants, casts, comparisons,
// indexing, Pad and Resize. Each composes the registry's ops (core/ops), so
// real inputs give real results and meta inputs (the compiler's capture)
// give meta results with the same shapes. Values that decide a result's
// shape (Reshape's shape, Slice's starts …) must be known at import: they
// come through constantInts / constantDoubles.
#include "core/onnx/onnxops.h"

#include "core/ops/functional.h"
#include "core/ops/loops.h"
#include "core/tensor/factory.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>

namespace fusescope::onnx {
namespace {

using Ints = std::vector<int64_t>;

std::string str(int64_t v)
{
    return std::to_string(v);
}

// --- shared helpers ------------------------------------------------------------

// A possibly negative axis in [-rank, rank) made non-negative.
int64_t axisOf(const OnnxOpContext &ctx, int64_t axis, int64_t rank)
{
    if (axis < -rank || axis >= rank)
        ctx.fail("axis " + str(axis) + " is out of range for rank " + str(rank));
    return axis < 0 ? axis + rank : axis;
}

Ints axesOf(const OnnxOpContext &ctx, const Ints &axes, int64_t rank)
{
    Ints out;
    for (int64_t a : axes)
        out.push_back(axisOf(ctx, a, rank));
    return out;
}

Ints allAxes(int64_t rank)
{
    Ints out(static_cast<size_t>(rank));
    std::iota(out.begin(), out.end(), int64_t(0));
    return out;
}

int64_t product(Ints::const_iterator begin, Ints::const_iterator end)
{
    return std::accumulate(begin, end, int64_t(1), std::multiplies<>());
}

// An integer list that moved from an attribute to an input at opset
// `inputSince` (Squeeze's axes at 13, Split's split at 13, Pad's pads at 11 …).
std::optional<Ints> intsOperand(const OnnxOpContext &ctx, const OnnxInputs &in, size_t index, const std::string &attr,
                                int64_t inputSince)
{
    if (ctx.opset() < inputSince)
        return ctx.has(attr) ? std::optional<Ints>(ctx.attrInts(attr)) : std::nullopt;
    return hasInput(in, index) ? std::optional<Ints>(constantInts(ctx, in, index)) : std::nullopt;
}

// The values of a constant input of any numeric type (Resize's scales, Range's
// limits, Pad's constant_value), which constantInts would truncate.
std::vector<double> constantDoubles(const OnnxOpContext &ctx, const OnnxInputs &in, size_t index)
{
    const Tensor &t = input(ctx, in, index);
    if (t.isMeta())
        ctx.fail("input " + str(static_cast<int64_t>(index))
                 + " is computed from the model's data; only values known at import (constants, shapes) are supported");
    return t.toDoubleVector();
}

double constantScalar(const OnnxOpContext &ctx, const OnnxInputs &in, size_t index)
{
    const std::vector<double> v = constantDoubles(ctx, in, index);
    if (v.size() != 1)
        ctx.fail("input " + str(static_cast<int64_t>(index)) + " must hold one value, it holds " + str(std::ssize(v)));
    return v[0];
}

// Built directly rather than through fromVector: i64 values such as
// INT64_MAX (Slice's "to the end") do not survive a trip through double.
Tensor int64Tensor(const Ints &values, const Shape &sizes)
{
    Tensor t = Tensor::empty(sizes, DType::I64);
    std::copy(values.begin(), values.end(), t.data<int64_t>());
    return t;
}

// ONNX's negative indices count from the end; indices may be data, so this
// stays in the graph.
Tensor wrapIndices(const Tensor &indices, int64_t bound)
{
    return ops::where(ops::lt(indices, int64_t(0)), ops::add(indices, bound), indices);
}

// --- generic kernels -----------------------------------------------------------------

template <auto F>
TensorList unary(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    return {F(input(ctx, in, 0))};
}

template <auto F>
TensorList binary(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    return {F(input(ctx, in, 0), input(ctx, in, 1))};
}

TensorList identityOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    return {input(ctx, in, 0)};
}

TensorList whereOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    return {ops::where(input(ctx, in, 0), input(ctx, in, 1), input(ctx, in, 2))};
}

// --- shapes and views ----------------------------------------------------------------

TensorList reshapeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    Ints shape = constantInts(ctx, in, 1);
    const bool allowZero = ctx.attrInt("allowzero", 0) != 0;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] != 0 || allowZero)
            continue;
        if (i >= x.sizes().size())
            ctx.fail("shape " + shapeStr(shape) + " copies dim " + str(static_cast<int64_t>(i))
                     + ", which the input of shape " + shapeStr(x.sizes()) + " lacks");
        shape[i] = x.sizes()[i]; // 0 means "as in the input" unless allowzero
    }
    return {ops::reshape(x, shape)};
}

TensorList transposeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    Ints perm = ctx.attrInts("perm");
    if (perm.empty()) { // the default reverses the dims
        perm = allAxes(x.dim());
        std::reverse(perm.begin(), perm.end());
    }
    return {ops::permute(x, perm)};
}

TensorList flattenOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    const int64_t given = ctx.attrInt("axis", 1);
    const int64_t axis = given == x.dim() ? given : axisOf(ctx, given, x.dim()); // rank itself is allowed too
    const Shape &s = x.sizes();
    return {ops::reshape(x, {product(s.begin(), s.begin() + axis), product(s.begin() + axis, s.end())})};
}

// Squeeze and Unsqueeze become one reshape: a view, whatever the number of axes.
TensorList squeezeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    const std::optional<Ints> axes = intsOperand(ctx, in, 1, "axes", 13);
    std::vector<bool> drop(x.sizes().size(), !axes.has_value());
    for (int64_t a : axes ? axesOf(ctx, *axes, x.dim()) : Ints{}) {
        if (x.size(a) != 1)
            ctx.fail("cannot squeeze dim " + str(a) + " of size " + str(x.size(a)) + " (shape " + shapeStr(x.sizes())
                     + ")");
        drop[static_cast<size_t>(a)] = true;
    }
    Shape out;
    for (size_t d = 0; d < drop.size(); ++d) {
        if (!drop[d] || x.sizes()[d] != 1) // without axes, every 1-dim goes
            out.push_back(x.sizes()[d]);
    }
    return {ops::reshape(x, out)};
}

TensorList unsqueezeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    const std::optional<Ints> axes = intsOperand(ctx, in, 1, "axes", 13);
    if (!axes)
        ctx.fail("axes are required");
    const int64_t rank = x.dim() + std::ssize(*axes); // axes index the output
    std::vector<bool> inserted(static_cast<size_t>(rank), false);
    for (int64_t a : axesOf(ctx, *axes, rank)) {
        if (inserted[static_cast<size_t>(a)])
            ctx.fail("axis " + str(a) + " repeats in axes " + shapeStr(*axes));
        inserted[static_cast<size_t>(a)] = true;
    }
    Shape out;
    auto next = x.sizes().begin();
    for (bool one : inserted)
        out.push_back(one ? 1 : *next++);
    return {ops::reshape(x, out)};
}

// Bidirectional: a dim of 1 in `shape` keeps the input's dim.
TensorList expandOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    return {ops::expand(x, loops::broadcastShapes(ctx.node().opType, x.sizes(), constantInts(ctx, in, 1)))};
}

TensorList tileOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    return {ops::repeat(input(ctx, in, 0), constantInts(ctx, in, 1))};
}

// --- concatenation, splitting, slicing, gathering -----------------------------------------

TensorList concatOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    TensorList parts;
    for (size_t i = 0; i < in.size(); ++i)
        parts.push_back(input(ctx, in, i));
    return {ops::cat(parts, ctx.attrInt("axis", 0))};
}

// Pieces of ceil(n / k), the last one smaller when k does not divide n.
Ints equalParts(int64_t n, int64_t k)
{
    const int64_t piece = (n + k - 1) / k;
    Ints sizes;
    for (int64_t i = 0; i < k; ++i)
        sizes.push_back(std::clamp<int64_t>(n - i * piece, 0, piece));
    return sizes;
}

TensorList splitOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    const int64_t axis = axisOf(ctx, ctx.attrInt("axis", 0), x.dim());
    const auto outputs = std::ssize(ctx.node().outputs);
    Ints sizes = intsOperand(ctx, in, 1, "split", 13).value_or(Ints{});
    if (sizes.empty()) { // equal parts, as many as num_outputs (opset 18) or the node's outputs
        const int64_t pieces = ctx.attrInt("num_outputs", outputs);
        if (pieces <= 0)
            ctx.fail("num_outputs must be positive, got " + str(pieces));
        sizes = equalParts(x.size(axis), pieces);
    }
    if (std::ssize(sizes) != outputs)
        ctx.fail("split " + shapeStr(sizes) + " makes " + str(std::ssize(sizes)) + " pieces for " + str(outputs)
                 + " outputs");
    return ops::splitWithSizes(x, sizes, axis);
}

struct SliceRange {
    int64_t start = 0, end = 0, step = 1; // for aten.slice: step > 0, in range
    bool flip = false;                    // the range runs backwards
};

// ONNX's clamping: ends beyond the dim (INT64_MAX) stop at it; a negative step
// walks from start down to end (exclusive), taken here as the forward range
// of the same elements, flipped afterwards.
SliceRange sliceRange(int64_t start, int64_t end, int64_t step, int64_t n)
{
    start = start < 0 ? start + n : start;
    end = end < 0 ? end + n : end;
    if (step > 0)
        return {std::clamp<int64_t>(start, 0, n), std::clamp<int64_t>(end, 0, n), step};
    if (n == 0)
        return {};
    start = std::clamp<int64_t>(start, 0, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
    if (start <= end)
        return {};
    const int64_t count = (start - end - 1) / -step + 1;
    return {start + (count - 1) * step, start + 1, -step, true};
}

TensorList sliceOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    const std::optional<Ints> starts = intsOperand(ctx, in, 1, "starts", 10);
    const std::optional<Ints> ends = intsOperand(ctx, in, 2, "ends", 10);
    if (!starts || !ends || starts->size() != ends->size())
        ctx.fail("starts and ends are required and must have the same length");
    const Ints axes = axesOf(ctx, intsOperand(ctx, in, 3, "axes", 10).value_or(allAxes(std::ssize(*starts))), x.dim());
    const Ints steps = intsOperand(ctx, in, 4, "steps", 10).value_or(Ints(starts->size(), 1));
    if (axes.size() != starts->size() || steps.size() != starts->size())
        ctx.fail("starts, ends, axes and steps must have the same length");
    Tensor y = x;
    Ints flips;
    for (size_t i = 0; i < axes.size(); ++i) {
        if (steps[i] == 0)
            ctx.fail("steps must not be 0");
        const SliceRange r = sliceRange((*starts)[i], (*ends)[i], steps[i], x.size(axes[i]));
        y = ops::slice(y, axes[i], r.start, r.end, r.step);
        if (r.flip)
            flips.push_back(axes[i]);
    }
    return {flips.empty() ? y : ops::flip(y, flips)};
}

// data[..., indices, ...] along axis, for indices of any shape (they may be data).
TensorList gatherOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0), &indices = input(ctx, in, 1);
    const int64_t axis = axisOf(ctx, ctx.attrInt("axis", 0), x.dim());
    Shape out(x.sizes().begin(), x.sizes().begin() + axis);
    out.insert(out.end(), indices.sizes().begin(), indices.sizes().end());
    out.insert(out.end(), x.sizes().begin() + axis + 1, x.sizes().end());
    const Tensor flat = ops::reshape(wrapIndices(indices, x.size(axis)), {-1});
    return {ops::reshape(ops::indexSelect(x, axis, flat), out)};
}

TensorList oneHotOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &indices = input(ctx, in, 0), &values = input(ctx, in, 2);
    const auto depth = static_cast<int64_t>(constantScalar(ctx, in, 1));
    const int64_t axis = axisOf(ctx, ctx.attrInt("axis", -1), indices.dim() + 1);
    Shape classes(static_cast<size_t>(indices.dim() + 1), 1);
    classes[static_cast<size_t>(axis)] = depth;
    const Tensor hot = ops::eq(ops::unsqueeze(wrapIndices(indices, depth), axis), ops::reshape(arange(depth), classes));
    return {ops::where(hot, ops::select(values, 0, 1), ops::select(values, 0, 0))}; // values: [off, on]
}

TensorList triluOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    const int64_t k = hasInput(in, 1) ? constantInts(ctx, in, 1).at(0) : 0;
    return {ctx.attrInt("upper", 1) != 0 ? ops::triu(x, k) : ops::tril(x, k)};
}

// --- shapes as values, constants -------------------------------------------------------

// A real tensor even for a meta input: the shape is known at capture, which is
// what lets the shape subgraphs that follow fold to constants.
TensorList shapeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Shape &s = input(ctx, in, 0).sizes();
    const auto rank = std::ssize(s);
    auto bound = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = bound(ctx.attrInt("start", 0)), end = std::max(start, bound(ctx.attrInt("end", rank)));
    return {int64Tensor(Ints(s.begin() + start, s.begin() + end), {end - start})};
}

TensorList sizeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    return {int64Tensor({input(ctx, in, 0).numel()}, {})};
}

const char *const kConstantAttrs[] = {"value", "value_float", "value_floats", "value_int", "value_ints"};

std::string constantCheck(const OnnxOpContext &ctx)
{
    for (const char *name : kConstantAttrs) {
        if (ctx.has(name))
            return "";
    }
    return "only value, value_float(s) and value_int(s) are supported (not sparse or string constants)";
}

TensorList constantOp(const OnnxOpContext &ctx, const OnnxInputs &)
{
    if (ctx.has("value_float"))
        return {fromVector({ctx.attrFloat("value_float", 0)}, {}, DType::F32)};
    if (ctx.has("value_floats")) {
        const std::vector<double> v = ctx.attrFloats("value_floats");
        return {fromVector(v, {std::ssize(v)}, DType::F32)};
    }
    if (ctx.has("value_int"))
        return {int64Tensor({ctx.attrInt("value_int", 0)}, {})};
    if (ctx.has("value_ints")) {
        const Ints v = ctx.attrInts("value_ints");
        return {int64Tensor(v, {std::ssize(v)})};
    }
    return {ctx.attrTensor("value")}; // fails naming the attribute when absent
}

TensorList constantOfShapeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Ints shape = constantInts(ctx, in, 0);
    if (!ctx.has("value"))
        return {full(shape, 0, DType::F32)};
    const Tensor value = ctx.attrTensor("value");
    return {full(shape, value.itemDouble(), value.dtype())};
}

TensorList rangeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const DType dtype = input(ctx, in, 0).dtype();
    return {arange(constantScalar(ctx, in, 0), constantScalar(ctx, in, 1), constantScalar(ctx, in, 2), dtype)};
}

// --- casts ---------------------------------------------------------------------------

// TensorProto.DataType names, by number, for messages.
const char *const kOnnxTypeNames[] = {
    "UNDEFINED", "FLOAT",        "UINT8",          "INT8",       "UINT16",         "INT16",  "INT32",     "INT64",
    "STRING",    "BOOL",         "FLOAT16",        "DOUBLE",     "UINT32",         "UINT64", "COMPLEX64", "COMPLEX128",
    "BFLOAT16",  "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",  "INT4"};

// The registry's dtype for a TensorProto.DataType number, if it has one.
std::optional<DType> dtypeOfOnnx(int64_t type)
{
    switch (type) {
    case 1: return DType::F32;
    case 6: return DType::I32;
    case 7: return DType::I64;
    case 9: return DType::Bool;
    case 10: return DType::F16;
    case 11: return DType::F64;
    case 16: return DType::BF16;
    default: return std::nullopt;
    }
}

std::string castCheck(const OnnxOpContext &ctx)
{
    const int64_t to = ctx.attrInt("to", 0);
    if (dtypeOfOnnx(to))
        return "";
    const std::string name = to >= 0 && to < std::ssize(kOnnxTypeNames) ? kOnnxTypeNames[to] : "type " + str(to);
    return "a cast to " + name + " is not supported (FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT32, INT64 and BOOL are)";
}

TensorList castOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const std::optional<DType> to = dtypeOfOnnx(ctx.attrInt("to", 0));
    if (!to)
        ctx.fail(castCheck(ctx));
    return {ops::cast(input(ctx, in, 0), *to)};
}

TensorList castLikeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    return {ops::cast(input(ctx, in, 0), input(ctx, in, 1).dtype())};
}

// --- Dropout, Clip ---------------------------------------------------------------------

// Inference only: the output is the input, the optional mask all true; the
// ratio does not matter.
TensorList dropoutOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    if (hasInput(in, 2)) {
        const Ints training = constantInts(ctx, in, 2);
        if (!training.empty() && training[0] != 0)
            ctx.fail("training mode is not supported (inference only)");
    }
    if (ctx.node().outputs.size() < 2)
        return {x};
    return {x, full(x.sizes(), 1, DType::Bool)};
}

std::optional<double> clipAttr(const OnnxOpContext &ctx, const std::string &name)
{
    return ctx.has(name) ? std::optional<double>(ctx.attrFloat(name, 0)) : std::nullopt;
}

// A bound of the input's kind: Clip keeps the input's type, where a float
// bound would lift an integer input to float (PyTorch's promotion, which
// aten.clamp follows). Integer bounds beyond int64 saturate.
Value clipBound(const OnnxOpContext &ctx, const OnnxInputs &in, size_t index)
{
    if (!hasInput(in, index))
        return Value();
    const double v = constantScalar(ctx, in, index);
    if (!isIntegral(input(ctx, in, 0).dtype()))
        return Value(v);
    if (v != v)
        ctx.fail("a NaN bound for an integer input");
    constexpr double limit = 9223372036854775808.0; // 2^63
    const int64_t i = v >= limit ? std::numeric_limits<int64_t>::max()
        : v <= -limit            ? std::numeric_limits<int64_t>::min()
                                 : static_cast<int64_t>(v);
    return Value(i);
}

// Constant bounds (the usual case: ReLU6 and friends) make one clamp; bounds
// computed from data clamp with maximum / minimum.
TensorList clipOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    if (ctx.opset() < 11) // min and max were attributes
        return {ops::clamp(x, clipAttr(ctx, "min"), clipAttr(ctx, "max"))};
    const bool lowFromData = hasInput(in, 1) && in[1]->isMeta(), highFromData = hasInput(in, 2) && in[2]->isMeta();
    if (!lowFromData && !highFromData)
        return {ops::clamp(x, clipBound(ctx, in, 1), clipBound(ctx, in, 2))};
    const Tensor low = hasInput(in, 1) ? ops::maximum(x, *in[1]) : x;
    return {hasInput(in, 2) ? ops::minimum(low, *in[2]) : low};
}

// --- Pad -------------------------------------------------------------------------------

std::string padCheck(const OnnxOpContext &ctx)
{
    const std::string mode = ctx.attrString("mode", "constant");
    if (mode == "constant" || mode == "reflect" || mode == "edge")
        return "";
    return "mode '" + mode + "' is not supported (constant, reflect and edge are)";
}

struct Padding {
    Ints before, after; // per dim of the input
};

Padding paddingOf(const OnnxOpContext &ctx, const OnnxInputs &in, int64_t rank)
{
    const std::optional<Ints> pads = intsOperand(ctx, in, 1, "pads", 11);
    const Ints axes = hasInput(in, 3) ? axesOf(ctx, constantInts(ctx, in, 3), rank) : allAxes(rank);
    if (!pads || pads->size() != 2 * axes.size())
        ctx.fail("pads must hold a begin and an end for each of the " + str(std::ssize(axes)) + " padded axes");
    Padding p{Ints(static_cast<size_t>(rank), 0), Ints(static_cast<size_t>(rank), 0)};
    for (size_t i = 0; i < axes.size(); ++i) { // [begin_0, begin_1, …, end_0, end_1, …]
        p.before[static_cast<size_t>(axes[i])] = (*pads)[i];
        p.after[static_cast<size_t>(axes[i])] = (*pads)[i + axes.size()];
    }
    return p;
}

// Negative padding crops: slice it away, leaving only non-negative padding in p.
Tensor cropNegative(const Tensor &x, Padding &p)
{
    Tensor y = x;
    for (size_t d = 0; d < p.before.size(); ++d) {
        const int64_t cutBefore = std::max<int64_t>(-p.before[d], 0), cutAfter = std::max<int64_t>(-p.after[d], 0);
        if (cutBefore > 0 || cutAfter > 0)
            y = ops::slice(y, static_cast<int64_t>(d), cutBefore, y.sizes()[d] - cutAfter);
        p.before[d] = std::max<int64_t>(p.before[d], 0);
        p.after[d] = std::max<int64_t>(p.after[d], 0);
    }
    return y;
}

// aten.pad's order: (before, after) pairs from the last dim backwards.
Ints torchPads(const Padding &p)
{
    Ints out;
    for (size_t d = p.before.size(); d-- > 0;) {
        out.push_back(p.before[d]);
        out.push_back(p.after[d]);
    }
    return out;
}

// The border element repeated `count` times along dim d.
Tensor edgeBlock(const Tensor &x, int64_t d, int64_t at, int64_t count)
{
    Shape sizes = x.sizes();
    sizes[static_cast<size_t>(d)] = count;
    return ops::expand(ops::slice(x, d, at, at + 1), sizes);
}

// aten.pad has no edge mode: concatenate repeated border slices, dim by dim.
Tensor padEdge(const OnnxOpContext &ctx, const Tensor &x, const Padding &p)
{
    Tensor y = x;
    for (int64_t d = 0; d < x.dim(); ++d) {
        const int64_t before = p.before[static_cast<size_t>(d)], after = p.after[static_cast<size_t>(d)];
        if (before == 0 && after == 0)
            continue;
        if (y.size(d) == 0)
            ctx.fail("edge padding of the empty dim " + str(d) + " (shape " + shapeStr(x.sizes()) + ")");
        TensorList parts;
        if (before > 0)
            parts.push_back(edgeBlock(y, d, 0, before));
        parts.push_back(y);
        if (after > 0)
            parts.push_back(edgeBlock(y, d, y.size(d) - 1, after));
        y = ops::cat(parts, d);
    }
    return y;
}

double padValue(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    if (ctx.opset() < 11)
        return ctx.attrFloat("value", 0);
    return hasInput(in, 2) ? constantScalar(ctx, in, 2) : 0;
}

TensorList padOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    Padding p = paddingOf(ctx, in, x.dim());
    const Tensor cropped = cropNegative(x, p);
    const std::string mode = ctx.attrString("mode", "constant");
    if (mode == "edge")
        return {padEdge(ctx, cropped, p)};
    return {ops::pad(cropped, torchPads(p), mode, padValue(ctx, in))};
}

// --- Resize ----------------------------------------------------------------------------
// aten.upsample2d resizes the last two dims of a 4-D tensor as PyTorch does:
// nearest takes floor(dst * in / out), bilinear samples at half pixels
// (clamped at 0) or with aligned corners. These are the ONNX modes that agree.

std::string resizeLinearCheck(const std::string &ctm)
{
    if (ctm == "half_pixel" || ctm == "pytorch_half_pixel" || ctm == "align_corners")
        return "";
    return "linear mode with coordinate_transformation_mode '" + ctm
           + "' is not supported (half_pixel, pytorch_half_pixel and align_corners are)";
}

// asymmetric + floor is PyTorch's rule; the half-pixel modes round to the
// same sources for whole upscaling factors (checked at run time).
std::string resizeNearestCheck(const std::string &ctm, const std::string &nearest)
{
    if (ctm == "asymmetric" && nearest == "floor")
        return "";
    if ((ctm == "half_pixel" || ctm == "pytorch_half_pixel")
        && (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil"))
        return "";
    return "nearest mode with coordinate_transformation_mode '" + ctm + "' and nearest_mode '" + nearest
           + "' is not supported (asymmetric with floor, or half_pixel / pytorch_half_pixel with round_prefer_floor / "
             "round_prefer_ceil are)";
}

std::string resizeCheck(const OnnxOpContext &ctx)
{
    const std::string mode = ctx.attrString("mode", "nearest");
    const std::string ctm = ctx.attrString("coordinate_transformation_mode", "half_pixel");
    const std::string policy = ctx.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch")
        return "keep_aspect_ratio_policy '" + policy + "' is not supported";
    if (mode == "linear")
        return ctx.attrInt("antialias", 0) != 0 ? "antialias is not supported" : resizeLinearCheck(ctm);
    if (mode == "nearest")
        return resizeNearestCheck(ctm, ctx.attrString("nearest_mode", "round_prefer_floor"));
    return "mode '" + mode + "' is not supported (nearest and linear are)";
}

// The output shape from sizes (input 3) or scales (input 2), over the
// `axes` attribute's dims (opset 18) or all. A scale must give a whole size:
// upsample2d derives its scale from the sizes.
Shape resizeShape(const OnnxOpContext &ctx, const OnnxInputs &in, const Tensor &x)
{
    const Ints axes = axesOf(ctx, ctx.attrInts("axes", allAxes(x.dim())), x.dim());
    Shape out = x.sizes();
    if (hasInput(in, 3)) {
        const Ints sizes = constantInts(ctx, in, 3);
        if (sizes.size() != axes.size())
            ctx.fail("sizes " + shapeStr(sizes) + " must have one entry per resized axis");
        for (size_t i = 0; i < axes.size(); ++i)
            out[static_cast<size_t>(axes[i])] = sizes[i];
        return out;
    }
    const std::vector<double> scales = hasInput(in, 2) ? constantDoubles(ctx, in, 2) : std::vector<double>{};
    if (scales.size() != axes.size()) // opset 11-12 pass an empty scales tensor along with sizes
        ctx.fail("scales or sizes must give one entry per resized axis");
    for (size_t i = 0; i < axes.size(); ++i) {
        const double exact = static_cast<double>(x.size(axes[i])) * scales[i];
        out[static_cast<size_t>(axes[i])] = static_cast<int64_t>(std::floor(exact));
        if (std::floor(exact) != exact)
            ctx.fail("scale " + std::to_string(scales[i]) + " of a dim of size " + str(x.size(axes[i]))
                     + " gives a fractional size, which is not supported");
    }
    return out;
}

// The run-time half of resizeCheck: what depends on the sizes.
void checkResizeAxis(const OnnxOpContext &ctx, int64_t in, int64_t out, bool linear, const std::string &ctm)
{
    if (!linear && ctm != "asymmetric" && (in == 0 || out % in != 0))
        ctx.fail("nearest resize with coordinate_transformation_mode '" + ctm
                 + "' is supported for whole upscaling factors only, not " + str(in) + " to " + str(out));
    if (linear && ctm == "pytorch_half_pixel" && out == 1 && in != 1)
        ctx.fail("pytorch_half_pixel resize to a size of 1 is not supported");
}

TensorList resizeOp(const OnnxOpContext &ctx, const OnnxInputs &in)
{
    const Tensor &x = input(ctx, in, 0);
    const Shape out = resizeShape(ctx, in, x);
    if (x.dim() != 4 || out[0] != x.size(0) || out[1] != x.size(1))
        ctx.fail("only the last two dims of a 4-D input can be resized, not " + shapeStr(x.sizes()) + " to "
                 + shapeStr(out));
    const bool linear = ctx.attrString("mode", "nearest") == "linear";
    const std::string ctm = ctx.attrString("coordinate_transformation_mode", "half_pixel");
    for (int64_t d : {2, 3})
        checkResizeAxis(ctx, x.size(d), out[static_cast<size_t>(d)], linear, ctm);
    return {ops::upsample2d(x, {out[2], out[3]}, linear ? "bilinear" : "nearest", linear && ctm == "align_corners")};
}

// One entry per op: {type, kernel, check, first opset with these semantics}.
const OnnxOpDef kTensorOps[] = {
    {"Reshape", reshapeOp, nullptr, 5},
    {"Transpose", transposeOp},
    {"Flatten", flattenOp},
    {"Squeeze", squeezeOp},
    {"Unsqueeze", unsqueezeOp},
    {"Expand", expandOp, nullptr, 8},
    {"Tile", tileOp, nullptr, 6},
    {"Concat", concatOp, nullptr, 4},
    {"Split", splitOp, nullptr, 2},
    {"Slice", sliceOp},
    {"Gather", gatherOp},
    {"OneHot", oneHotOp, nullptr, 9},
    {"Trilu", triluOp, nullptr, 14},
    {"Shape", shapeOp},
    {"Size", sizeOp},
    {"Constant", constantOp, constantCheck},
    {"ConstantOfShape", constantOfShapeOp, nullptr, 9},
    {"Range", rangeOp, nullptr, 11},
    {"Cast", castOp, castCheck, 6},
    {"CastLike", castLikeOp, nullptr, 15},
    {"Identity", identityOp},
    {"Dropout", dropoutOp, nullptr, 7},
    {"Clip", clipOp, nullptr, 6},
    {"Pad", padOp, padCheck, 2},
    {"Resize", resizeOp, resizeCheck, 11},
    {"Where", whereOp, nullptr, 9},
    {"Equal", binary<ops::eq>, nullptr, 7},
    {"Less", binary<ops::lt>, nullptr, 7},
    {"LessOrEqual", binary<ops::le>, nullptr, 12},
    {"Greater", binary<ops::gt>, nullptr, 7},
    {"GreaterOrEqual", binary<ops::ge>, nullptr, 12},
    {"And", binary<ops::logicalAnd>, nullptr, 7},
    {"Or", binary<ops::logicalOr>, nullptr, 7},
    {"Xor", binary<ops::ne>, nullptr, 7}, // on bool tensors, xor is inequality
    {"Not", unary<ops::logicalNot>},
    {"IsNaN", unary<ops::isnan>, nullptr, 9},
};

} // namespace

std::span<const OnnxOpDef> tensorOps()
{
    return kTensorOps;
}

} // namespace fusescope::onnx
