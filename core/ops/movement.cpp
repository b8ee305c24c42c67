// Data-movement ops: concatenation, splitting, padding, indexing, triangles,
// repeat, flip and topk. Most of them only move bytes, so their kernels are
// written over the element size (1, 2, 4 or 8 bytes) rather than the dtype,
// copying through memcpy so no storage is read through a foreign type.
// Every op that takes indices checks each one before it touches memory.
#include "core/ops/movement.h"

#include "core/ops/builtin.h"
#include "core/ops/loops.h"
#include "core/ops/pointwise.h"
#include "core/ops/registry.h"
#include "core/ops/views.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#if defined(__AVX2__) && defined(__BMI2__)
#define FUSESCOPE_NONZERO_AVX2 1
#include <immintrin.h>
#endif

namespace fusescope {
namespace {

// --- shared helpers ----------------------------------------------------------------

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

std::string str(int64_t v)
{
    return std::to_string(v);
}

// Calls fn(std::integral_constant<size_t, B>) for the element size B of a dtype.
template <typename Fn>
void visitBytes(size_t itemSize, Fn &&fn)
{
    switch (itemSize) {
    case 1: fn(std::integral_constant<size_t, 1>{}); return;
    case 2: fn(std::integral_constant<size_t, 2>{}); return;
    case 4: fn(std::integral_constant<size_t, 4>{}); return;
    default: fn(std::integral_constant<size_t, 8>{}); return;
    }
}

template <typename Fn>
void visitIndex(DType t, Fn &&fn)
{
    if (t == DType::I32)
        fn(int32_t{});
    else
        fn(int64_t{});
}

template <size_t B>
inline void copyElem(char *dst, const char *src)
{
    std::memcpy(dst, src, B);
}

// n elements from src (element stride srcStride) to contiguous dst.
template <size_t B>
void copyRun(char *dst, const char *src, int64_t n, int64_t srcStride)
{
    if (n <= 0)
        return;
    if (srcStride == 1) {
        std::memcpy(dst, src, static_cast<size_t>(n) * B);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        copyElem<B>(dst + i * static_cast<int64_t>(B), src + i * srcStride * static_cast<int64_t>(B));
}

template <size_t B>
void fillRun(char *dst, int64_t n, const unsigned char *value)
{
    for (int64_t i = 0; i < n; ++i)
        std::memcpy(dst + i * static_cast<int64_t>(B), value, B);
}

char *bytesOf(const Tensor &t)
{
    return static_cast<char *>(t.rawData());
}

// A 0-d tensor seen as [1], so kernels only deal with rank >= 1.
Tensor as1d(const Tensor &t)
{
    return t.dim() == 0 ? t.alias({1}, {1}, t.offset()) : t;
}

// A contiguous copy made inside a kernel (no op event of its own).
Tensor contiguousInternal(const Tensor &t, DType dtype)
{
    if (t.isContiguous() && t.dtype() == dtype)
        return t;
    Tensor out = Tensor::empty(t.sizes(), dtype, t.device());
    loops::copyInto(out, t);
    return out;
}

Shape without(const Shape &s, size_t d)
{
    Shape out = s;
    out.erase(out.begin() + static_cast<int64_t>(d));
    return out;
}

Shape dropLast(const Shape &s)
{
    return Shape(s.begin(), s.end() - 1);
}

void checkIndexDType(const char *op, const Tensor &index)
{
    if (index.dtype() != DType::I32 && index.dtype() != DType::I64)
        throw Error(std::string(op) + ": index must be i32 or i64, got " + dtypeName(index.dtype()));
}

[[noreturn]] void indexOutOfRange(const char *op, int64_t index, const std::string &range)
{
    throw Error(std::string(op) + ": index " + str(index) + " is out of range for " + range);
}

std::string dimRange(int64_t dim, int64_t size)
{
    return "dimension " + str(dim) + " of size " + str(size);
}

// The values of an index tensor (any layout, i32 or i64) in row-major order,
// each checked against [0, bound).
std::vector<int64_t> readIndices(const char *op, const Tensor &index, int64_t bound, const std::string &range)
{
    const Tensor flat = contiguousInternal(index, DType::I64);
    std::vector<int64_t> out(static_cast<size_t>(flat.numel()));
    if (!out.empty())
        std::memcpy(out.data(), flat.rawData(), out.size() * sizeof(int64_t));
    for (int64_t v : out) {
        if (v < 0 || v >= bound)
            indexOutOfRange(op, v, range);
    }
    return out;
}

// Element offsets of the rows (runs along the innermost dim) of an iteration
// space in K operands, stepping through the outer dims in row-major order.
template <size_t K>
class RowWalker
{
public:
    RowWalker(const Shape &outer, const std::array<Shape, K> &strides)
        : m_outer(outer)
        , m_strides(strides)
        , m_index(outer.size(), 0)
    {
    }

    void seek(int64_t row)
    {
        m_off.fill(0);
        for (size_t d = m_outer.size(); d-- > 0;) {
            m_index[d] = row % m_outer[d];
            row /= m_outer[d];
            for (size_t k = 0; k < K; ++k)
                m_off[k] += m_index[d] * m_strides[k][d];
        }
    }

    void next()
    {
        for (size_t d = m_outer.size(); d-- > 0;) {
            for (size_t k = 0; k < K; ++k)
                m_off[k] += m_strides[k][d];
            if (++m_index[d] < m_outer[d])
                return;
            for (size_t k = 0; k < K; ++k)
                m_off[k] -= m_outer[d] * m_strides[k][d];
            m_index[d] = 0;
        }
    }

    int64_t operator[](size_t k) const { return m_off[k]; }
    const Shape &index() const { return m_index; }

private:
    const Shape &m_outer;
    const std::array<Shape, K> &m_strides;
    Shape m_index;
    std::array<int64_t, K> m_off{};
};

// Splits the rows of `outer` across the pool: fn(walker, rowBegin, rowEnd),
// with the walker at rowBegin; fn advances it.
template <size_t K, typename Fn>
void forRowChunks(const Shape &outer, const std::array<Shape, K> &strides, int64_t rowLength, Fn fn)
{
    const int64_t rows = numelOf(outer);
    if (rows == 0 || rowLength == 0)
        return;
    const int64_t grain = std::max<int64_t>(1, loops::kGrain / rowLength);
    parallelFor(0, rows, grain, [&](int64_t begin, int64_t end) {
        RowWalker<K> walker(outer, strides);
        walker.seek(begin);
        fn(walker, begin, end);
    });
}

// fn(walker, row) for every row.
template <size_t K, typename Fn>
void forRows(const Shape &outer, const std::array<Shape, K> &strides, int64_t rowLength, Fn fn)
{
    forRowChunks<K>(outer, strides, rowLength, [&](RowWalker<K> &walker, int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r, walker.next())
            fn(static_cast<const RowWalker<K> &>(walker), r);
    });
}

OpCost listCost(const Args &a, std::span<const Tensor> outs)
{
    OpCost c;
    for (const Tensor &t : a[0].toTensorList())
        c.bytesRead += static_cast<double>(t.nbytes());
    c.bytesWritten = static_cast<double>(outs[0].nbytes());
    return c;
}

// Ops that read only what they write (plus the indices), however big the source.
OpCost gatherCost(const Args &a, std::span<const Tensor> outs, size_t indexArg)
{
    OpCost c;
    c.bytesWritten = static_cast<double>(outs[0].nbytes());
    c.bytesRead = c.bytesWritten + static_cast<double>(arg(a, indexArg).nbytes());
    return c;
}

// --- cat / stack -------------------------------------------------------------------

// PyTorch still accepts 1-D empty tensors of any other rank in cat and skips them.
bool skippedInCat(const Tensor &t)
{
    return t.dim() == 1 && t.size(0) == 0;
}

struct CatPlan {
    Shape sizes;
    DType dtype = DType::F32;
    int64_t dim = 0;
};

[[noreturn]] void throwZeroDimInCat(size_t pos)
{
    throw Error("aten.cat: zero-dimensional tensor (at position " + str(static_cast<int64_t>(pos))
                + ") cannot be concatenated");
}

void checkCatMember(const Tensor &ref, size_t refPos, const Tensor &t, size_t pos, int64_t dim)
{
    if (t.dim() == 0)
        throwZeroDimInCat(pos);
    const std::string pair = ": tensor " + str(static_cast<int64_t>(refPos)) + " has shape " + shapeStr(ref.sizes())
        + " and tensor " + str(static_cast<int64_t>(pos)) + " has shape " + shapeStr(t.sizes());
    if (t.dim() != ref.dim())
        throw Error("aten.cat: tensors must have the same rank" + pair);
    for (int64_t d = 0; d < t.dim(); ++d) {
        if (d != dim && t.size(d) != ref.size(d))
            throw Error("aten.cat: sizes of tensors must match except in dimension " + str(dim) + pair);
    }
}

CatPlan planCat(const TensorList &tensors, int64_t dim)
{
    if (tensors.empty())
        throw Error("aten.cat: expected a non-empty list of tensors");
    CatPlan plan;
    plan.dtype = tensors[0].dtype();
    for (const Tensor &t : tensors)
        plan.dtype = promoteTypes(plan.dtype, t.dtype());
    const auto ref = std::find_if(tensors.begin(), tensors.end(), [](const Tensor &t) { return !skippedInCat(t); });
    if (ref == tensors.end()) {
        plan.dim = wrapDim(dim, 1, "aten.cat");
        plan.sizes = {0};
        return plan;
    }
    const auto refPos = static_cast<size_t>(ref - tensors.begin());
    if (ref->dim() == 0)
        throwZeroDimInCat(refPos);
    plan.dim = wrapDim(dim, ref->dim(), "aten.cat");
    plan.sizes = ref->sizes();
    plan.sizes[static_cast<size_t>(plan.dim)] = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (skippedInCat(tensors[i]))
            continue;
        checkCatMember(*ref, refPos, tensors[i], i, plan.dim);
        plan.sizes[static_cast<size_t>(plan.dim)] += tensors[i].size(plan.dim);
    }
    return plan;
}

struct CatBlock {
    const char *src;
    int64_t bytes;  // per outer row
    int64_t offset; // byte offset inside an output row
};

// With few output rows (a cat along dim 0 has one) a task a row left the
// other threads idle: two 64 MiB inputs took 17 ms to cat along dim 0 and 8.4
// along dim 1. Such rows' blocks are copied in pieces of up to 1 MiB instead.
constexpr int64_t kFewRows = 64, kPieceBytes = 1 << 20;

void copyPieces(char *base, int64_t rowBytes, int64_t outer, const std::vector<CatBlock> &blocks)
{
    struct Piece {
        char *dst;
        const char *src;
        int64_t bytes;
    };
    std::vector<Piece> pieces;
    int64_t total = 0;
    for (const CatBlock &b : blocks)
        total += b.bytes * outer;
    for (int64_t o = 0; o < outer; ++o) {
        for (const CatBlock &b : blocks) {
            for (int64_t at = 0; at < b.bytes; at += kPieceBytes)
                pieces.push_back({base + o * rowBytes + b.offset + at, b.src + o * b.bytes + at,
                                  std::min(kPieceBytes, b.bytes - at)});
        }
    }
    // Small cats stay on the calling thread, as they did: waking the pool costs more than their copy.
    const int64_t grain = total < kPieceBytes ? static_cast<int64_t>(pieces.size()) : 1;
    parallelFor(0, static_cast<int64_t>(pieces.size()), grain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
            std::memcpy(pieces[static_cast<size_t>(i)].dst, pieces[static_cast<size_t>(i)].src,
                        static_cast<size_t>(pieces[static_cast<size_t>(i)].bytes));
    });
}

// Inputs that are contiguous and of the output's dtype are copied as whole
// row blocks; the others, and blocks too short for a memcpy call to pay
// (stack along the last dim), go through the strided converting copy.
void catInto(const TensorList &inputs, int64_t dim, const Tensor &out)
{
    if (out.numel() == 0)
        return;
    const auto d = static_cast<size_t>(dim);
    int64_t outer = 1, rest = 1;
    for (size_t i = 0; i < d; ++i)
        outer *= out.sizes()[i];
    for (size_t i = d + 1; i < out.sizes().size(); ++i)
        rest *= out.sizes()[i];
    const auto item = static_cast<int64_t>(out.itemSize());
    std::vector<CatBlock> blocks;
    int64_t at = 0;
    for (const Tensor &t : inputs) {
        if (t.numel() == 0)
            continue; // contributes nothing along dim (or is a skipped 1-D empty tensor)
        const int64_t len = t.size(dim);
        if (t.isContiguous() && t.dtype() == out.dtype() && len * rest * item >= 64)
            blocks.push_back({bytesOf(t), len * rest * item, at * rest * item});
        else
            loops::copyInto(out.alias(t.sizes(), out.strides(), out.offset() + at * rest), t);
        at += len;
    }
    if (blocks.empty())
        return;
    const int64_t rowBytes = out.size(dim) * rest * item;
    char *base = bytesOf(out);
    if (outer < kFewRows) {
        copyPieces(base, rowBytes, outer, blocks);
        return;
    }
    parallelFor(0, outer, std::max<int64_t>(1, loops::kGrain * 4 / rowBytes), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
            for (const CatBlock &b : blocks)
                std::memcpy(base + o * rowBytes + b.offset, b.src + o * b.bytes, static_cast<size_t>(b.bytes));
        }
    });
}

void registerCat(OpRegistry &r)
{
    OpDef cat;
    cat.kind = OpKind::Opaque;
    cat.shape = [](const Args &a) {
        const CatPlan plan = planCat(a[0].toTensorList(), a[1].toInt());
        return std::vector<TensorSpec>{{plan.sizes, plan.dtype}};
    };
    cat.cpu = [](const Args &a, std::span<Tensor> outs) {
        const CatPlan plan = planCat(a[0].toTensorList(), a[1].toInt());
        catInto(a[0].toTensorList(), plan.dim, outs[0]);
    };
    cat.cost = listCost;
    r.add("aten.cat(Tensor[] tensors, int dim=0) -> Tensor", std::move(cat));
}

int64_t stackDim(const TensorList &tensors, int64_t dim)
{
    if (tensors.empty())
        throw Error("aten.stack: expected a non-empty list of tensors");
    for (size_t i = 1; i < tensors.size(); ++i) {
        if (tensors[i].sizes() != tensors[0].sizes())
            throw Error("aten.stack: all tensors must have the same shape: tensor 0 has shape "
                        + shapeStr(tensors[0].sizes()) + " and tensor " + str(static_cast<int64_t>(i))
                        + " has shape " + shapeStr(tensors[i].sizes()));
    }
    return wrapDim(dim, tensors[0].dim() + 1, "aten.stack");
}

Tensor unsqueezeAlias(const Tensor &t, int64_t dim)
{
    Shape sizes = t.sizes(), strides = t.strides();
    sizes.insert(sizes.begin() + dim, 1);
    strides.insert(strides.begin() + dim, 1);
    return t.alias(sizes, strides, t.offset());
}

void registerStack(OpRegistry &r)
{
    OpDef stack;
    stack.kind = OpKind::Opaque;
    stack.shape = [](const Args &a) {
        const TensorList &ts = a[0].toTensorList();
        const int64_t d = stackDim(ts, a[1].toInt());
        Shape sizes = ts[0].sizes();
        sizes.insert(sizes.begin() + d, static_cast<int64_t>(ts.size()));
        DType dtype = ts[0].dtype();
        for (const Tensor &t : ts)
            dtype = promoteTypes(dtype, t.dtype());
        return std::vector<TensorSpec>{{sizes, dtype}};
    };
    stack.cpu = [](const Args &a, std::span<Tensor> outs) {
        const TensorList &ts = a[0].toTensorList();
        const int64_t d = stackDim(ts, a[1].toInt());
        TensorList parts;
        for (const Tensor &t : ts)
            parts.push_back(unsqueezeAlias(t, d));
        catInto(parts, d, outs[0]);
    };
    stack.decompose = [](const Args &a) {
        const TensorList &ts = a[0].toTensorList();
        const int64_t d = stackDim(ts, a[1].toInt());
        TensorList parts;
        for (const Tensor &t : ts)
            parts.push_back(ops::unsqueeze(t, d));
        return TensorList{ops::cat(parts, d)};
    };
    stack.cost = listCost;
    r.add("aten.stack(Tensor[] tensors, int dim=0) -> Tensor", std::move(stack));
}

// --- split / chunk -----------------------------------------------------------------

TensorList splitBySizes(const Tensor &x, int64_t dim, const IntList &sizes)
{
    TensorList out;
    Shape shape = x.sizes();
    int64_t start = 0;
    for (int64_t len : sizes) {
        shape[static_cast<size_t>(dim)] = len;
        out.push_back(x.alias(shape, x.strides(), x.offset() + start * x.stride(dim)));
        start += len;
    }
    return out;
}

int64_t splitDim(const char *op, const Tensor &x, int64_t dim)
{
    if (x.dim() == 0)
        throw Error(std::string(op) + ": cannot split a 0-d tensor");
    return wrapDim(dim, x.dim(), op);
}

IntList splitSizes(const Tensor &x, int64_t splitSize, int64_t dim)
{
    const int64_t n = x.size(dim);
    if (splitSize < 0 || (splitSize == 0 && n != 0))
        throw Error("aten.split: split_size " + str(splitSize) + " cannot split dimension " + str(dim) + " of size "
                    + str(n) + " of shape " + shapeStr(x.sizes()));
    if (n == 0)
        return {0};
    IntList sizes;
    for (int64_t start = 0; start < n; start += splitSize)
        sizes.push_back(std::min(splitSize, n - start));
    return sizes;
}

TensorList splitOp(const Args &a)
{
    const Tensor &x = arg(a, 0);
    const int64_t dim = splitDim("aten.split", x, a[2].toInt());
    return splitBySizes(x, dim, splitSizes(x, a[1].toInt(), dim));
}

TensorList splitWithSizesOp(const Args &a)
{
    const Tensor &x = arg(a, 0);
    const int64_t dim = splitDim("aten.split_with_sizes", x, a[2].toInt());
    const IntList &sizes = a[1].toIntList();
    int64_t total = 0;
    for (int64_t s : sizes) {
        if (s < 0)
            throw Error("aten.split_with_sizes: split sizes " + shapeStr(sizes) + " contain a negative size");
        total += s;
    }
    if (total != x.size(dim))
        throw Error("aten.split_with_sizes: split sizes " + shapeStr(sizes) + " do not add up to "
                    + str(x.size(dim)) + ", the size of dimension " + str(dim) + " of shape "
                    + shapeStr(x.sizes()));
    return splitBySizes(x, dim, sizes);
}

// As PyTorch: pieces of ceil(n / chunks), so there may be fewer than `chunks`;
// an empty dim still gives `chunks` empty pieces.
IntList chunkSizes(const Tensor &x, int64_t chunks, int64_t dim)
{
    if (chunks <= 0)
        throw Error("aten.chunk: chunks must be positive, got " + str(chunks));
    const int64_t n = x.size(dim);
    if (n == 0)
        return IntList(static_cast<size_t>(chunks), 0);
    return splitSizes(x, (n + chunks - 1) / chunks, dim);
}

TensorList chunkOp(const Args &a)
{
    const Tensor &x = arg(a, 0);
    const int64_t dim = splitDim("aten.chunk", x, a[2].toInt());
    return splitBySizes(x, dim, chunkSizes(x, a[1].toInt(), dim));
}

void addView(OpRegistry &r, const char *schema, ViewFn fn, DecompFn decompose = {})
{
    OpDef def;
    def.kind = OpKind::View;
    def.view = std::move(fn);
    def.decompose = std::move(decompose);
    r.add(schema, std::move(def));
}

void registerSplits(OpRegistry &r)
{
    addView(r, "aten.split(Tensor self, int split_size, int dim=0) -> Tensor[]", splitOp);
    addView(r, "aten.split_with_sizes(Tensor self, int[] split_sizes, int dim=0) -> Tensor[]", splitWithSizesOp);
    addView(r, "aten.chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", chunkOp, [](const Args &a) {
        const Tensor &x = arg(a, 0);
        const int64_t dim = splitDim("aten.chunk", x, a[2].toInt());
        const IntList sizes = chunkSizes(x, a[1].toInt(), dim);
        if (x.size(dim) == 0) // split cannot make several empty pieces
            return ops::splitWithSizes(x, sizes, dim);
        return ops::split(x, sizes[0], dim);
    });
}

// --- pad ---------------------------------------------------------------------------

struct PadPlan {
    Shape sizes;
    IntList before; // per dim
    bool reflect = false;
};

void checkReflectPad(const Tensor &x, int64_t d, int64_t lo, int64_t hi)
{
    if (lo < 0 || hi < 0)
        throw Error("aten.pad: reflect padding (" + str(lo) + ", " + str(hi) + ") of dimension " + str(d)
                    + " must not be negative");
    if ((lo > 0 || hi > 0) && (lo >= x.size(d) || hi >= x.size(d)))
        throw Error("aten.pad: reflect padding (" + str(lo) + ", " + str(hi) + ") of dimension " + str(d)
                    + " must be smaller than its size " + str(x.size(d)) + " (input shape " + shapeStr(x.sizes())
                    + ")");
}

PadPlan planPad(const Tensor &x, const IntList &pad, const std::string &mode)
{
    if (mode != "constant" && mode != "reflect")
        throw Error("aten.pad: mode must be 'constant' or 'reflect', got '" + mode + "'");
    const auto rank = x.dim();
    const auto pairs = static_cast<int64_t>(pad.size() / 2);
    if (pad.size() % 2 != 0 || pairs > rank)
        throw Error("aten.pad: padding " + shapeStr(pad) + " must hold (left, right) pairs for at most the "
                    + str(rank) + " dims of shape " + shapeStr(x.sizes()));
    PadPlan plan;
    plan.reflect = mode == "reflect";
    plan.sizes = x.sizes();
    plan.before.assign(static_cast<size_t>(rank), 0);
    for (int64_t i = 0; i < pairs; ++i) {
        const int64_t d = rank - 1 - i;
        const int64_t lo = pad[static_cast<size_t>(2 * i)], hi = pad[static_cast<size_t>(2 * i + 1)];
        if (plan.reflect)
            checkReflectPad(x, d, lo, hi);
        const int64_t size = x.size(d) + lo + hi;
        if (size < 0)
            throw Error("aten.pad: padding (" + str(lo) + ", " + str(hi) + ") makes dimension " + str(d)
                        + " of shape " + shapeStr(x.sizes()) + " negative");
        plan.sizes[static_cast<size_t>(d)] = size;
        plan.before[static_cast<size_t>(d)] = lo;
    }
    return plan;
}

// Source index along one dim of output index i, or -1 for padding.
inline int64_t padSource(int64_t i, int64_t before, int64_t n, bool reflect)
{
    const int64_t j = i - before;
    if (reflect)
        return j < 0 ? -j : (j >= n ? 2 * (n - 1) - j : j);
    return j >= 0 && j < n ? j : -1;
}

struct PadRow {
    int64_t before, n, stride; // of the input's last dim
    bool reflect;
};

template <size_t B>
void padLastDim(char *o, int64_t outLen, const char *in, const PadRow &p, const unsigned char *fill)
{
    const auto b = static_cast<int64_t>(B);
    const int64_t midBegin = std::clamp<int64_t>(p.before, 0, outLen);
    const int64_t midEnd = std::clamp<int64_t>(p.before + p.n, midBegin, outLen);
    auto edge = [&](int64_t i) {
        if (p.reflect)
            copyElem<B>(o + i * b, in + padSource(i, p.before, p.n, true) * p.stride * b);
        else
            std::memcpy(o + i * b, fill, B);
    };
    for (int64_t i = 0; i < midBegin; ++i)
        edge(i);
    if (midEnd > midBegin) // else the source address may lie outside the input
        copyRun<B>(o + midBegin * b, in + (midBegin - p.before) * p.stride * b, midEnd - midBegin, p.stride);
    for (int64_t i = midEnd; i < outLen; ++i)
        edge(i);
}

template <size_t B>
void padKernel(const Tensor &x, const Tensor &out, const PadPlan &plan, const unsigned char *fill)
{
    const size_t last = x.sizes().size() - 1;
    const int64_t outLen = out.sizes()[last];
    const Shape outer = dropLast(out.sizes());
    const std::array<Shape, 1> strides{dropLast(out.strides())};
    const PadRow row{plan.before[last], x.sizes()[last], x.strides()[last], plan.reflect};
    const char *xb = bytesOf(x);
    char *ob = bytesOf(out);
    const auto b = static_cast<int64_t>(B);
    forRows<1>(outer, strides, outLen, [&](const RowWalker<1> &w, int64_t r) {
        char *o = ob + r * outLen * b;
        int64_t src = 0;
        for (size_t d = 0; d < last; ++d) {
            const int64_t j = padSource(w.index()[d], plan.before[d], x.sizes()[d], plan.reflect);
            if (j < 0) {
                fillRun<B>(o, outLen, fill);
                return;
            }
            src += j * x.strides()[d];
        }
        padLastDim<B>(o, outLen, xb + src * b, row, fill);
    });
}

void registerPad(OpRegistry &r)
{
    OpDef pad;
    pad.kind = OpKind::Opaque;
    pad.shape = [](const Args &a) {
        const PadPlan plan = planPad(arg(a, 0), a[1].toIntList(), a[2].toStringRef());
        return std::vector<TensorSpec>{{plan.sizes, arg(a, 0).dtype()}};
    };
    pad.cpu = [](const Args &a, std::span<Tensor> outs) {
        if (outs[0].numel() == 0)
            return;
        PadPlan plan = planPad(arg(a, 0), a[1].toIntList(), a[2].toStringRef());
        if (plan.before.empty())
            plan.before = {0};
        const Tensor x = as1d(arg(a, 0)), out = as1d(outs[0]);
        unsigned char fill[8] = {};
        const Tensor value = Tensor::wrapScalar(a[3].toDouble(), x.dtype());
        std::memcpy(fill, value.rawData(), x.itemSize());
        if (x.numel() == 0) { // constant mode only: reflect cannot pad an empty dim
            visitBytes(x.itemSize(), [&](auto b) { fillRun<decltype(b)::value>(bytesOf(out), out.numel(), fill); });
            return;
        }
        visitBytes(x.itemSize(), [&](auto b) { padKernel<decltype(b)::value>(x, out, plan, fill); });
    };
    r.add("aten.pad(Tensor self, int[] pad, str mode='constant', float value=0) -> Tensor", std::move(pad));
}

// --- gather / scatter_add / index_select / embedding --------------------------------

// Ranks agree, with a 0-d tensor standing for [1].
void checkSameRank(const char *op, const char *what, const Tensor &t, const Tensor &x)
{
    if (std::max<int64_t>(t.dim(), 1) != std::max<int64_t>(x.dim(), 1))
        throw Error(std::string(op) + ": " + what + " of shape " + shapeStr(t.sizes())
                    + " must have the same rank as the input of shape " + shapeStr(x.sizes()));
}

// index.size(d) <= x.size(d) for every d (except `skip`).
void checkIndexFits(const char *op, const Tensor &index, const Tensor &x, const char *what, int64_t skip)
{
    const Tensor i1 = as1d(index), x1 = as1d(x);
    for (int64_t d = 0; d < i1.dim(); ++d) {
        if (d != skip && i1.size(d) > x1.size(d))
            throw Error(std::string(op) + ": index of shape " + shapeStr(index.sizes()) + " is larger than " + what
                        + " of shape " + shapeStr(x.sizes()) + " in dimension " + str(d));
    }
}

// One row of gather: out[i] = x[i * xs + index[i] * dimStride].
template <size_t B, typename I>
void gatherRow(char *o, int64_t os, const I *idx, int64_t is, const char *x, int64_t xs, int64_t dimStride,
               int64_t n, int64_t bound, int64_t dim)
{
    const auto b = static_cast<int64_t>(B);
    auto one = [&](int64_t i, int64_t v) {
        if (v < 0 || v >= bound)
            indexOutOfRange("aten.gather", v, dimRange(dim, bound));
        copyElem<B>(o + i * os * b, x + (i * xs + v * dimStride) * b);
    };
    if (os == 1 && is == 1) { // the common dense case, with constant strides
        for (int64_t i = 0; i < n; ++i)
            one(i, idx[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        one(i, idx[i * is]);
}

void gatherKernel(const Tensor &self, int64_t dim, const Tensor &index, const Tensor &out)
{
    if (out.numel() == 0)
        return;
    const Tensor x = as1d(self), idx = as1d(index), o = as1d(out);
    const auto d = static_cast<size_t>(dim), last = idx.sizes().size() - 1;
    Shape xStrides = x.strides();
    const int64_t dimStride = xStrides[d], bound = x.sizes()[d];
    xStrides[d] = 0; // the index supplies this coordinate
    const std::array<Shape, 3> strides{dropLast(o.strides()), dropLast(idx.strides()), dropLast(xStrides)};
    const int64_t n = idx.sizes()[last], os = o.strides()[last], is = idx.strides()[last], xs = xStrides[last];
    visitIndex(idx.dtype(), [&](auto itag) {
        using I = decltype(itag);
        visitBytes(x.itemSize(), [&](auto btag) {
            constexpr size_t B = decltype(btag)::value;
            const auto b = static_cast<int64_t>(B);
            char *ob = bytesOf(o);
            const char *xb = bytesOf(x);
            const I *ib = idx.data<I>();
            forRows<3>(dropLast(idx.sizes()), strides, n, [&](const RowWalker<3> &w, int64_t) {
                gatherRow<B>(ob + w[0] * b, os, ib + w[1], is, xb + w[2] * b, xs, dimStride, n, bound, dim);
            });
        });
    });
}

void registerGather(OpRegistry &r)
{
    OpDef gather;
    gather.kind = OpKind::Opaque;
    gather.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0), &index = arg(a, 2);
        checkIndexDType("aten.gather", index);
        const int64_t dim = wrapDim(a[1].toInt(), x.dim(), "aten.gather");
        checkSameRank("aten.gather", "index", index, x);
        checkIndexFits("aten.gather", index, x, "the input", dim);
        return std::vector<TensorSpec>{{index.sizes(), x.dtype()}};
    };
    gather.cpu = [](const Args &a, std::span<Tensor> outs) {
        gatherKernel(arg(a, 0), wrapDim(a[1].toInt(), arg(a, 0).dim(), "aten.gather"), arg(a, 2), outs[0]);
    };
    gather.cost = [](const Args &a, std::span<const Tensor> outs) { return gatherCost(a, outs, 2); };
    r.add("aten.gather(Tensor self, int dim, Tensor index) -> Tensor", std::move(gather));
}

struct ScatterGeometry {
    std::array<Shape, 3> strides; // out (dim zeroed: the index supplies it), index, src; without the last dim
    Shape outer;                  // index sizes without the last dim
    int64_t n, outStride, indexStride, srcStride; // along the last dim (outStride 0 if it is dim)
    int64_t dimStride, bound, dim;
};

// Adds src into out along rows of the index's last dim, for the columns
// [c0, c1) of every row. Rows are visited in order, so each output element
// receives its additions in index order whatever the split.
template <typename T, typename I>
void scatterColumns(const ScatterGeometry &g, T *out, const I *index, const T *src, int64_t c0, int64_t c1,
                    int64_t row0, int64_t row1)
{
    using C = compute_t<T>;
    RowWalker<3> w(g.outer, g.strides);
    w.seek(row0);
    for (int64_t r = row0; r < row1; ++r, w.next()) {
        for (int64_t i = c0; i < c1; ++i) {
            const int64_t v = index[w[1] + i * g.indexStride];
            if (v < 0 || v >= g.bound)
                indexOutOfRange("aten.scatter_add", v, dimRange(g.dim, g.bound));
            T &dst = out[w[0] + v * g.dimStride + i * g.outStride]; // outStride is 0 when dim is last
            dst = T(C(dst) + C(src[w[2] + i * g.srcStride]));
        }
    }
}

// Threads must never add into the same element. When dim is the last dim,
// rows (which differ outside dim) are split across the pool; otherwise the
// columns of the last dim are, and every thread walks all rows in order.
void scatterAddKernel(const Tensor &out, int64_t dim, const Tensor &index, const Tensor &src)
{
    if (index.numel() == 0)
        return;
    const Tensor o = as1d(out), idx = as1d(index), s = as1d(src);
    const auto d = static_cast<size_t>(dim), last = idx.sizes().size() - 1;
    Shape outStrides = o.strides();
    outStrides[d] = 0;
    const ScatterGeometry g{{dropLast(outStrides), dropLast(idx.strides()), dropLast(s.strides())},
                            dropLast(idx.sizes()),
                            idx.sizes()[last], outStrides[last], idx.strides()[last], s.strides()[last],
                            o.strides()[d], o.sizes()[d], dim};
    const int64_t rows = numelOf(g.outer);
    visitIndex(idx.dtype(), [&](auto itag) {
        using I = decltype(itag);
        visitNumeric(o.dtype(), [&](auto ttag) {
            using T = decltype(ttag);
            T *ob = o.data<T>();
            const T *sb = s.data<T>();
            const I *ib = idx.data<I>();
            if (d == last) {
                parallelFor(0, rows, std::max<int64_t>(1, loops::kGrain / g.n), [&](int64_t r0, int64_t r1) {
                    scatterColumns<T, I>(g, ob, ib, sb, 0, g.n, r0, r1);
                });
            } else {
                parallelFor(0, g.n, std::max<int64_t>(1, loops::kGrain / std::max<int64_t>(rows, 1)),
                            [&](int64_t c0, int64_t c1) { scatterColumns<T, I>(g, ob, ib, sb, c0, c1, 0, rows); });
            }
        });
    });
}

void checkScatterArgs(const Tensor &x, int64_t dim, const Tensor &index, const Tensor &src)
{
    checkIndexDType("aten.scatter_add", index);
    if (x.dtype() == DType::Bool)
        throw Error("aten.scatter_add: not supported for bool tensors");
    if (src.dtype() != x.dtype())
        throw Error(std::string("aten.scatter_add: src dtype ") + dtypeName(src.dtype())
                    + " differs from the input dtype " + dtypeName(x.dtype()));
    checkSameRank("aten.scatter_add", "index", index, x);
    checkSameRank("aten.scatter_add", "src", src, x);
    checkIndexFits("aten.scatter_add", index, src, "src", -1);
    checkIndexFits("aten.scatter_add", index, x, "the input", dim);
}

void registerScatterAdd(OpRegistry &r)
{
    OpDef scatter;
    scatter.kind = OpKind::Opaque;
    scatter.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        checkScatterArgs(x, wrapDim(a[1].toInt(), x.dim(), "aten.scatter_add"), arg(a, 2), arg(a, 3));
        return std::vector<TensorSpec>{{x.sizes(), x.dtype()}};
    };
    scatter.cpu = [](const Args &a, std::span<Tensor> outs) {
        loops::copyInto(outs[0], arg(a, 0));
        scatterAddKernel(outs[0], wrapDim(a[1].toInt(), arg(a, 0).dim(), "aten.scatter_add"), arg(a, 2), arg(a, 3));
    };
    r.add("aten.scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", std::move(scatter));
}

// out[o, k] = x[o, idx[k]] for x viewed as [outer, bound] (contiguous): a
// gather along each row. Row by row rather than an element at a time, which
// divided by n twice an element to find its row (3.5 times slower).
template <size_t B>
void selectColumns(const char *x, char *out, int64_t outer, int64_t bound, const std::vector<int64_t> &idx)
{
    const auto n = static_cast<int64_t>(idx.size()), b = static_cast<int64_t>(B);
    const int64_t *k = idx.data();
    parallelFor(0, outer, std::max<int64_t>(1, loops::kGrain / std::max<int64_t>(n, 1)),
                [&](int64_t begin, int64_t end) {
                    for (int64_t o = begin; o < end; ++o) {
                        const char *row = x + o * bound * b;
                        char *dst = out + o * n * b;
                        for (int64_t i = 0; i < n; ++i)
                            copyElem<B>(dst + i * b, row + k[i] * b);
                    }
                });
}

// out[o, k, :] = x[o, idx[k], :] for x viewed as [outer, bound, inner] (contiguous).
template <size_t B>
void selectRows(const char *x, char *out, int64_t outer, int64_t bound, int64_t inner, const std::vector<int64_t> &idx)
{
    const auto n = static_cast<int64_t>(idx.size());
    const int64_t rowBytes = inner * static_cast<int64_t>(B);
    if (inner == 1) {
        selectColumns<B>(x, out, outer, bound, idx);
        return;
    }
    parallelFor(0, outer * n, std::max<int64_t>(1, loops::kGrain / inner), [&](int64_t begin, int64_t end) {
        int64_t o = begin / n, k = begin % n;
        for (int64_t r = begin; r < end; ++r) {
            const char *src = x + (o * bound + idx[static_cast<size_t>(k)]) * rowBytes;
            std::memcpy(out + r * rowBytes, src, static_cast<size_t>(rowBytes));
            if (++k == n) {
                k = 0;
                ++o;
            }
        }
    });
}

// The same for any layout of x, row by row over the output (x is never
// copied: it may be a large table of which few rows are read).
template <size_t B>
void selectStrided(const Tensor &x, int64_t dim, const std::vector<int64_t> &idx, const Tensor &out)
{
    const auto d = static_cast<size_t>(dim), last = out.sizes().size() - 1;
    const auto b = static_cast<int64_t>(B);
    Shape xStrides = x.strides();
    const int64_t dimStride = xStrides[d];
    xStrides[d] = 0; // idx supplies this coordinate
    const std::array<Shape, 2> strides{dropLast(out.strides()), dropLast(xStrides)};
    const int64_t n = out.sizes()[last], xs = xStrides[last];
    char *ob = bytesOf(out);
    const char *xb = bytesOf(x);
    forRows<2>(dropLast(out.sizes()), strides, n, [&](const RowWalker<2> &w, int64_t) {
        char *o = ob + w[0] * b;
        if (d == last) {
            for (int64_t i = 0; i < n; ++i)
                copyElem<B>(o + i * b, xb + (w[1] + idx[static_cast<size_t>(i)] * dimStride) * b);
        } else {
            const int64_t k = idx[static_cast<size_t>(w.index()[d])];
            copyRun<B>(o, xb + (w[1] + k * dimStride) * b, n, xs);
        }
    });
}

void indexSelectKernel(const Tensor &self, int64_t dim, const std::vector<int64_t> &idx, const Tensor &out)
{
    if (out.numel() == 0)
        return;
    const Tensor x = as1d(self), o = as1d(out);
    visitBytes(x.itemSize(), [&](auto btag) {
        constexpr size_t B = decltype(btag)::value;
        if (!x.isContiguous()) {
            selectStrided<B>(x, dim, idx, o);
            return;
        }
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d)
            outer *= x.size(d);
        for (int64_t d = dim + 1; d < x.dim(); ++d)
            inner *= x.size(d);
        selectRows<B>(bytesOf(x), bytesOf(o), outer, x.size(dim), inner, idx);
    });
}

Shape indexSelectShape(const Tensor &x, int64_t dim, const Tensor &index)
{
    checkIndexDType("aten.index_select", index);
    if (index.dim() > 1)
        throw Error("aten.index_select: index must be 0-d or 1-D, got shape " + shapeStr(index.sizes()));
    if (x.dim() == 0) {
        if (index.numel() != 1)
            throw Error("aten.index_select: a 0-d input takes exactly one index, got shape "
                        + shapeStr(index.sizes()));
        return {};
    }
    Shape sizes = x.sizes();
    sizes[static_cast<size_t>(dim)] = index.numel();
    return sizes;
}

void registerIndexSelect(OpRegistry &r)
{
    OpDef sel;
    sel.kind = OpKind::Opaque;
    sel.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        const int64_t dim = wrapDim(a[1].toInt(), x.dim(), "aten.index_select");
        return std::vector<TensorSpec>{{indexSelectShape(x, dim, arg(a, 2)), x.dtype()}};
    };
    sel.cpu = [](const Args &a, std::span<Tensor> outs) {
        const Tensor x = as1d(arg(a, 0));
        const int64_t dim = wrapDim(a[1].toInt(), x.dim(), "aten.index_select");
        const int64_t bound = x.size(dim);
        const std::vector<int64_t> idx = readIndices("aten.index_select", arg(a, 2), bound, dimRange(dim, bound));
        indexSelectKernel(x, dim, idx, outs[0]);
    };
    sel.cost = [](const Args &a, std::span<const Tensor> outs) { return gatherCost(a, outs, 2); };
    r.add("aten.index_select(Tensor self, int dim, Tensor index) -> Tensor", std::move(sel));
}

void registerEmbedding(OpRegistry &r)
{
    OpDef emb;
    emb.kind = OpKind::Opaque;
    emb.shape = [](const Args &a) {
        const Tensor &weight = arg(a, 0), &indices = arg(a, 1);
        if (weight.dim() != 2)
            throw Error("aten.embedding: weight must be 2-D [num, dim], got shape " + shapeStr(weight.sizes()));
        checkIndexDType("aten.embedding", indices);
        Shape sizes = indices.sizes();
        sizes.push_back(weight.size(1));
        return std::vector<TensorSpec>{{sizes, weight.dtype()}};
    };
    emb.cpu = [](const Args &a, std::span<Tensor> outs) {
        const Tensor &weight = arg(a, 0);
        const int64_t rows = weight.size(0);
        const std::vector<int64_t> idx =
            readIndices("aten.embedding", arg(a, 1), rows, "a table of " + str(rows) + " entries");
        const Shape rowsShape{static_cast<int64_t>(idx.size()), weight.size(1)};
        indexSelectKernel(weight, 0, idx, outs[0].alias(rowsShape, contiguousStrides(rowsShape), outs[0].offset()));
    };
    emb.decompose = [](const Args &a) {
        const Tensor &weight = arg(a, 0), &indices = arg(a, 1);
        Shape sizes = indices.sizes();
        sizes.push_back(weight.size(1));
        const Tensor rows = ops::indexSelect(weight, 0, ops::reshape(indices, {-1}));
        return TensorList{ops::reshape(rows, sizes)};
    };
    emb.cost = [](const Args &a, std::span<const Tensor> outs) { return gatherCost(a, outs, 1); };
    r.add("aten.embedding(Tensor weight, Tensor indices) -> Tensor", std::move(emb));
}

// --- triu / tril / repeat / flip ---------------------------------------------------

// Keeps the elements of each matrix row on one side of the diagonal, zeroes
// the rest (all-zero bits are zero in every dtype).
void triangleKernel(const Tensor &x, int64_t diagonal, bool upper, const Tensor &out)
{
    if (out.numel() == 0)
        return;
    const int64_t m = x.size(-2), n = x.size(-1), xs = x.stride(-1);
    diagonal = std::clamp<int64_t>(diagonal, -m - 1, n + 1); // wider values change nothing
    const std::array<Shape, 1> strides{dropLast(x.strides())};
    visitBytes(x.itemSize(), [&](auto btag) {
        constexpr size_t B = decltype(btag)::value;
        const auto b = static_cast<int64_t>(B);
        char *ob = bytesOf(out);
        const char *xb = bytesOf(x);
        forRows<1>(dropLast(x.sizes()), strides, n, [&](const RowWalker<1> &w, int64_t r) {
            const int64_t i = r % m;
            const int64_t keepBegin = upper ? std::clamp<int64_t>(i + diagonal, 0, n) : 0;
            const int64_t keepEnd = upper ? n : std::clamp<int64_t>(i + diagonal + 1, 0, n);
            char *o = ob + r * n * b;
            std::memset(o, 0, static_cast<size_t>(keepBegin * b));
            if (keepEnd > keepBegin)
                copyRun<B>(o + keepBegin * b, xb + (w[0] + keepBegin * xs) * b, keepEnd - keepBegin, xs);
            std::memset(o + keepEnd * b, 0, static_cast<size_t>((n - keepEnd) * b));
        });
    });
}

void addTriangle(OpRegistry &r, const char *schema, bool upper)
{
    OpDef def;
    def.kind = OpKind::Opaque;
    const std::string name = Schema::parse(schema).name;
    def.shape = [name](const Args &a) {
        const Tensor &x = arg(a, 0);
        if (x.dim() < 2)
            throw Error(name + ": input must have at least 2 dimensions, got shape " + shapeStr(x.sizes()));
        return std::vector<TensorSpec>{{x.sizes(), x.dtype()}};
    };
    def.cpu = [upper](const Args &a, std::span<Tensor> outs) {
        triangleKernel(arg(a, 0), a[1].toInt(), upper, outs[0]);
    };
    r.add(schema, std::move(def));
}

Shape repeatShape(const Tensor &x, const IntList &repeats)
{
    if (static_cast<int64_t>(repeats.size()) < x.dim())
        throw Error("aten.repeat: " + str(static_cast<int64_t>(repeats.size())) + " repeat counts "
                    + shapeStr(repeats) + " given for a tensor of shape " + shapeStr(x.sizes()));
    const size_t lead = repeats.size() - x.sizes().size();
    Shape sizes(repeats.size());
    for (size_t d = 0; d < repeats.size(); ++d) {
        if (repeats[d] < 0)
            throw Error("aten.repeat: repeat counts " + shapeStr(repeats) + " must not be negative");
        sizes[d] = repeats[d] * (d < lead ? 1 : x.sizes()[d - lead]);
    }
    return sizes;
}

// x seen as [r0, s0, r1, s1, ...] with stride 0 on the repeat dims; the output
// is that shape stored contiguously.
void repeatKernel(const Tensor &x, const IntList &repeats, const Tensor &out)
{
    if (out.numel() == 0)
        return;
    const size_t lead = repeats.size() - x.sizes().size();
    Shape sizes, strides;
    for (size_t d = 0; d < repeats.size(); ++d) {
        sizes.push_back(repeats[d]);
        sizes.push_back(d < lead ? 1 : x.sizes()[d - lead]);
        strides.push_back(0);
        strides.push_back(d < lead ? 0 : x.strides()[d - lead]);
    }
    loops::copyInto(out.alias(sizes, contiguousStrides(sizes), out.offset()), x.alias(sizes, strides, x.offset()));
}

void registerRepeat(OpRegistry &r)
{
    OpDef repeat;
    repeat.kind = OpKind::Opaque;
    repeat.shape = [](const Args &a) {
        return std::vector<TensorSpec>{{repeatShape(arg(a, 0), a[1].toIntList()), arg(a, 0).dtype()}};
    };
    repeat.cpu = [](const Args &a, std::span<Tensor> outs) { repeatKernel(arg(a, 0), a[1].toIntList(), outs[0]); };
    repeat.decompose = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        const IntList &repeats = a[1].toIntList();
        const Shape outSizes = repeatShape(x, repeats);
        const size_t lead = repeats.size() - x.sizes().size();
        Shape interleaved, expanded;
        for (size_t d = 0; d < repeats.size(); ++d) {
            const int64_t s = d < lead ? 1 : x.sizes()[d - lead];
            interleaved.insert(interleaved.end(), {1, s});
            expanded.insert(expanded.end(), {repeats[d], s});
        }
        const Tensor big = ops::expand(ops::reshape(x, interleaved), expanded);
        return TensorList{ops::reshape(ops::clone(big), outSizes)};
    };
    r.add("aten.repeat(Tensor self, int[] repeats) -> Tensor", std::move(repeat));
}

std::vector<bool> flipDims(const Tensor &x, const IntList &dims)
{
    std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), false);
    for (int64_t d : dims) {
        const auto w = static_cast<size_t>(wrapDim(d, x.dim(), "aten.flip"));
        if (flipped[w])
            throw Error("aten.flip: dim " + str(d) + " appears more than once in " + shapeStr(dims));
        flipped[w] = true;
    }
    return flipped;
}

// A view with negated strides starting at the last element of each flipped dim.
void flipKernel(const Tensor &x, const IntList &dims, const Tensor &out)
{
    if (out.numel() == 0)
        return;
    const std::vector<bool> flipped = flipDims(x, dims);
    Shape strides = x.strides();
    int64_t offset = x.offset();
    for (size_t d = 0; d < strides.size(); ++d) {
        if (flipped[d]) {
            offset += (x.sizes()[d] - 1) * strides[d];
            strides[d] = -strides[d];
        }
    }
    loops::copyInto(out, x.alias(x.sizes(), strides, offset));
}

void registerFlip(OpRegistry &r)
{
    OpDef flip;
    flip.kind = OpKind::Opaque;
    flip.shape = [](const Args &a) {
        flipDims(arg(a, 0), a[1].toIntList());
        return std::vector<TensorSpec>{{arg(a, 0).sizes(), arg(a, 0).dtype()}};
    };
    flip.cpu = [](const Args &a, std::span<Tensor> outs) { flipKernel(arg(a, 0), a[1].toIntList(), outs[0]); };
    r.add("aten.flip(Tensor self, int[] dims) -> Tensor", std::move(flip));
}

// --- nonzero ------------------------------------------------------------------------

// The indices of the nonzero elements, one row each, in row-major order.
// NaN counts as nonzero, as in PyTorch. Items are tested by their bits: an
// item is nonzero when any bit under its mask is set, the mask leaving out a
// float's sign so that -0 is zero. Blocks are counted in parallel, then each
// writes its rows at its prefix of the counts (an element-by-element pass
// through doubles took 56 ms over a [4096, 1024] mask; PyTorch 11).
constexpr int64_t kNonzeroBlock = 4096;

template <size_t B>
using ItemBits
    = std::conditional_t<B == 1, uint8_t,
                         std::conditional_t<B == 2, uint16_t, std::conditional_t<B == 4, uint32_t, uint64_t>>>;

template <typename U> U valueMask(DType t)
{
    constexpr U ones = std::numeric_limits<U>::max(); // not ~U(0): a uint16_t's ~ promotes to a negative int
    return isFloating(t) ? U(ones >> 1) : ones;
}

#if defined(FUSESCOPE_NONZERO_AVX2)
// Bit k set where item k of the 32 bytes at p is zero under m.
template <typename U> uint32_t zeroBits32Bytes(const U *p, __m256i m)
{
    const __m256i v = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)), m);
    const __m256i zero = _mm256_setzero_si256();
    if constexpr (sizeof(U) == 1)
        return uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, zero)));
    else if constexpr (sizeof(U) == 2)
        return _pext_u32(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi16(v, zero))), 0x55555555u);
    else if constexpr (sizeof(U) == 4)
        return uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, zero))));
    else
        return uint32_t(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, zero))));
}

template <typename U> __m256i broadcastMask(U mask)
{
    if constexpr (sizeof(U) == 1)
        return _mm256_set1_epi8(static_cast<char>(mask));
    else if constexpr (sizeof(U) == 2)
        return _mm256_set1_epi16(static_cast<short>(mask));
    else if constexpr (sizeof(U) == 4)
        return _mm256_set1_epi32(static_cast<int>(mask));
    else
        return _mm256_set1_epi64x(static_cast<long long>(mask));
}
#endif

// Bit k: whether item k of the n <= 64 at p is nonzero under mask.
template <typename U> uint64_t nonzeroBits(const U *p, int64_t n, U mask)
{
#if defined(FUSESCOPE_NONZERO_AVX2)
    if (n == 64) {
        constexpr int per = 32 / sizeof(U);
        const __m256i m = broadcastMask(mask);
        uint64_t zeros = 0;
        for (int k = 0; k < 64; k += per)
            zeros |= uint64_t(zeroBits32Bytes(p + k, m)) << k;
        return ~zeros;
    }
#endif
    uint64_t bits = 0;
    for (int64_t k = 0; k < n; ++k)
        bits |= uint64_t((p[k] & mask) != 0) << k;
    return bits;
}

Shape unravelIndex(int64_t flat, const Shape &sizes)
{
    Shape index(sizes.size());
    for (size_t d = sizes.size(); d-- > 0;) {
        index[d] = flat % sizes[d];
        flat /= sizes[d];
    }
    return index;
}

// The rows of the nonzero items in [begin, end) (flat, row-major), written to
// out. Each run along the last dim is tested 64 items at a time and only the
// set bits are visited, so the time goes with the nonzeros found.
template <typename U>
void writeNonzero(const U *p, U mask, int64_t begin, int64_t end, const Shape &sizes, int64_t *out)
{
    const size_t nd = sizes.size();
    Shape index = unravelIndex(begin, sizes);
    for (int64_t flat = begin; flat < end;) {
        const int64_t run = std::min(end - flat, sizes.back() - index.back());
        for (int64_t g = 0; g < run; g += 64) {
            for (uint64_t bits = nonzeroBits(p + flat + g, std::min<int64_t>(64, run - g), mask); bits;
                 bits &= bits - 1) {
                for (size_t d = 0; d + 1 < nd; ++d)
                    *out++ = index[d];
                *out++ = index.back() + g + std::countr_zero(bits);
            }
        }
        flat += run;
        index.back() += run - 1;
        for (size_t d = nd; d-- > 0;) {
            if (++index[d] < sizes[d])
                break;
            index[d] = 0;
        }
    }
}

int64_t blockCount(const Tensor &x)
{
    return (x.numel() + kNonzeroBlock - 1) / kNonzeroBlock;
}

// Calls fn(p, mask, block, begin, end) for each block of the contiguous x, in parallel.
template <typename Fn> void forEachNonzeroBlock(const Tensor &x, int64_t grain, Fn &&fn)
{
    visitBytes(x.itemSize(), [&](auto b) {
        using U = ItemBits<decltype(b)::value>;
        const U *p = static_cast<const U *>(x.rawData());
        const U mask = valueMask<U>(x.dtype());
        parallelFor(0, blockCount(x), grain, [&](int64_t lo, int64_t hi) {
            for (int64_t blk = lo; blk < hi; ++blk)
                fn(p, mask, blk, blk * kNonzeroBlock, std::min(x.numel(), (blk + 1) * kNonzeroBlock));
        });
    });
}

// The number of nonzero items of each block of the contiguous x.
std::vector<int64_t> nonzeroCounts(const Tensor &x)
{
    std::vector<int64_t> counts(static_cast<size_t>(blockCount(x)));
    forEachNonzeroBlock(x, 16, [&](const auto *p, auto mask, int64_t blk, int64_t begin, int64_t end) {
        int64_t count = 0;
        for (int64_t i = begin; i < end; i += 64)
            count += std::popcount(nonzeroBits(p + i, std::min<int64_t>(64, end - i), mask));
        counts[size_t(blk)] = count;
    });
    return counts;
}

void nonzeroKernel(const Tensor &input, const Tensor &out)
{
    const Tensor x = loops::contiguousAs(input, input.dtype());
    if (x.dim() == 0 || out.numel() == 0)
        return;
    std::vector<int64_t> offsets = nonzeroCounts(x);
    int64_t total = 0;
    for (int64_t &c : offsets)
        total = std::exchange(c, total) + total; // exclusive prefix sums, in rows
    int64_t *o = out.data<int64_t>();
    forEachNonzeroBlock(x, 4, [&](const auto *p, auto mask, int64_t blk, int64_t begin, int64_t end) {
        writeNonzero(p, mask, begin, end, x.sizes(), o + offsets[size_t(blk)] * x.dim());
    });
}

void registerNonzero(OpRegistry &r)
{
    OpDef nz;
    nz.kind = OpKind::Opaque;
    nz.dataDependent = true;
    nz.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        if (x.isMeta())
            throw Error("aten.nonzero: the output shape depends on the values of the input");
        int64_t count = 0;
        for (int64_t c : nonzeroCounts(loops::contiguousAs(x, x.dtype())))
            count += c;
        return std::vector<TensorSpec>{{Shape{count, x.dim()}, DType::I64}};
    };
    nz.cpu = [](const Args &a, std::span<Tensor> outs) { nonzeroKernel(arg(a, 0), outs[0]); };
    r.add("aten.nonzero(Tensor self) -> Tensor", std::move(nz));
}

// --- topk --------------------------------------------------------------------------

// Unsigned keys whose order is the value order, NaN above everything (as in
// PyTorch) and -0 equal to +0, so the selection compares plain integers.
template <typename C>
auto orderedBits(C v)
{
    if constexpr (std::is_integral_v<C>) {
        using U = std::make_unsigned_t<C>;
        return static_cast<U>(static_cast<U>(v) ^ (U(1) << (sizeof(C) * 8 - 1)));
    } else {
        using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
        constexpr U sign = U(1) << (sizeof(C) * 8 - 1);
        if (std::isnan(v))
            v = std::numeric_limits<C>::quiet_NaN();
        else if (v == C(0))
            v = C(0);
        U bits;
        std::memcpy(&bits, &v, sizeof(C));
        return (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
    }
}

// A value's place in the output order: ascending ranks come first.
template <typename C> auto topkRank(C v, bool largest)
{
    const auto rank = orderedBits(v);
    return largest ? static_cast<decltype(rank)>(~rank) : rank;
}

// The sort key of element i: ascending key order is the output order, ties
// broken by the lower index. 32-bit values pack value and index in one word.
template <typename C>
auto topkKey(C v, int64_t i, bool largest)
{
    const auto rank = topkRank(v, largest);
    if constexpr (sizeof(rank) == 4)
        return (static_cast<uint64_t>(rank) << 32) | static_cast<uint64_t>(i);
    else
        return std::pair<uint64_t, int64_t>{rank, i};
}

inline int64_t keyIndex(uint64_t key)
{
    return static_cast<int64_t>(key & 0xffffffffu);
}

inline int64_t keyIndex(const std::pair<uint64_t, int64_t> &key)
{
    return key.second;
}

inline uint32_t keyRank(uint64_t key)
{
    return static_cast<uint32_t>(key >> 32);
}

inline uint64_t keyRank(const std::pair<uint64_t, int64_t> &key)
{
    return key.first;
}

// The k (>= 1) smallest of a row's n keys, sorted, for k small against n.
// The row's ranks come first, in a loop the compiler vectorizes; then a
// max-heap of the best k so far, whose top is the worst of them, takes each
// element whose rank beats the top's (a later element of equal rank loses on
// its index). In a row of random values few do after the first hundreds.
// Building every key and partial_sort-ing them took 1.6 times PyTorch's time
// for the 8 largest of each row of [4096,1024].
template <typename Key, typename Rank, typename RankOf, typename KeyOf>
void streamTopk(std::vector<Key> &heap, std::vector<Rank> &ranks, int64_t n, int64_t k, const RankOf &rankOf,
                const KeyOf &keyOf)
{
    ranks.resize(static_cast<size_t>(n));
    Rank *r = ranks.data();
    for (int64_t i = 0; i < n; ++i)
        r[i] = rankOf(i);
    heap.clear();
    for (int64_t i = 0; i < k; ++i)
        heap.push_back(keyOf(i));
    std::make_heap(heap.begin(), heap.end());
    Rank worst = keyRank(heap.front());
    for (int64_t i = k; i < n; ++i) {
        if (r[i] > worst)
            continue;
        const Key key = keyOf(i);
        if (key < heap.front()) {
            std::pop_heap(heap.begin(), heap.end());
            heap.back() = key;
            std::push_heap(heap.begin(), heap.end());
            worst = keyRank(heap.front());
        }
    }
    std::sort_heap(heap.begin(), heap.end());
}

// The k smallest of all n keys, sorted, for k large against n.
template <typename Key, typename KeyOf> void sortTopk(std::vector<Key> &keys, int64_t n, int64_t k, const KeyOf &keyOf)
{
    keys.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        keys[static_cast<size_t>(i)] = keyOf(i);
    const auto mid = keys.begin() + k;
    std::nth_element(keys.begin(), mid, keys.end());
    std::sort(keys.begin(), mid);
}

struct TopkArgs {
    int64_t k, dim;
    bool largest;
};

TopkArgs topkArgs(const Args &a)
{
    const Tensor &x = arg(a, 0);
    if (x.dtype() == DType::Bool)
        throw Error("aten.topk: not supported for bool tensors");
    const int64_t dim = wrapDim(a[2].toInt(), x.dim(), "aten.topk");
    const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
    const int64_t k = a[1].toInt();
    if (k < (x.dim() == 0 ? 1 : 0) || k > n)
        throw Error("aten.topk: k (" + str(k) + ") is out of range for dimension " + str(dim) + " of size " + str(n)
                    + " of shape " + shapeStr(x.sizes()));
    return {k, dim, a[3].toBool()};
}

// Each row (a run along dim) becomes sort keys, is partially sorted, and
// its first k entries are written out.
void topkKernel(const Tensor &self, const TopkArgs &t, const Tensor &values, const Tensor &indices)
{
    if (values.numel() == 0)
        return;
    const Tensor x = as1d(self), v = as1d(values), ix = as1d(indices);
    const auto d = static_cast<size_t>(t.dim);
    const std::array<Shape, 3> strides{without(x.strides(), d), without(v.strides(), d), without(ix.strides(), d)};
    const int64_t n = x.sizes()[d], xs = x.strides()[d], vs = v.strides()[d], is = ix.strides()[d];
    if (n > int64_t(0xffffffff))
        throw Error("aten.topk: dimension " + str(t.dim) + " of size " + str(n) + " is too long");
    visitNumeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using C = compute_t<T>;
        using Key = decltype(topkKey(C(0), 0, true));
        const T *xb = x.data<T>();
        T *vb = v.data<T>();
        int64_t *ib = ix.data<int64_t>();
        forRowChunks<3>(without(x.sizes(), d), strides, n, [&](RowWalker<3> &w, int64_t begin, int64_t end) {
            std::vector<Key> keys;
            std::vector<decltype(topkRank(C(0), true))> ranks;
            for (int64_t r = begin; r < end; ++r, w.next()) {
                const T *row = xb + w[0];
                auto keyOf = [&](int64_t i) { return topkKey(C(row[i * xs]), i, t.largest); };
                auto rankOf = [&](int64_t i) { return topkRank(C(row[i * xs]), t.largest); };
                if (t.k * 8 < n)
                    streamTopk(keys, ranks, n, t.k, rankOf, keyOf);
                else
                    sortTopk(keys, n, t.k, keyOf);
                for (int64_t j = 0; j < t.k; ++j) {
                    const int64_t i = keyIndex(keys[static_cast<size_t>(j)]);
                    vb[w[1] + j * vs] = xb[w[0] + i * xs];
                    ib[w[2] + j * is] = i;
                }
            }
        });
    });
}

void registerTopk(OpRegistry &r)
{
    OpDef topk;
    topk.kind = OpKind::Opaque;
    topk.shape = [](const Args &a) {
        const TopkArgs t = topkArgs(a);
        Shape sizes = arg(a, 0).sizes();
        if (!sizes.empty())
            sizes[static_cast<size_t>(t.dim)] = t.k;
        return std::vector<TensorSpec>{{sizes, arg(a, 0).dtype()}, {sizes, DType::I64}};
    };
    // `sorted` is accepted for compatibility: the result is always sorted,
    // which is one of the orders an unsorted topk may return.
    topk.cpu = [](const Args &a, std::span<Tensor> outs) { topkKernel(arg(a, 0), topkArgs(a), outs[0], outs[1]); };
    topk.cost = [](const Args &a, std::span<const Tensor> outs) {
        OpCost c;
        const Tensor &x = arg(a, 0);
        c.bytesRead = static_cast<double>(x.nbytes());
        c.bytesWritten = static_cast<double>(outs[0].nbytes() + outs[1].nbytes());
        const double k = static_cast<double>(std::max<int64_t>(a[1].toInt(), 2));
        c.flops = static_cast<double>(x.numel()) * std::log2(k);
        return c;
    };
    r.add("aten.topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor, Tensor)",
          std::move(topk));
}

} // namespace

void registerMovementOps(OpRegistry &r)
{
    registerCat(r);
    registerStack(r);
    registerSplits(r);
    registerPad(r);
    registerGather(r);
    registerScatterAdd(r);
    registerIndexSelect(r);
    registerEmbedding(r);
    addTriangle(r, "aten.triu(Tensor self, int diagonal=0) -> Tensor", true);
    addTriangle(r, "aten.tril(Tensor self, int diagonal=0) -> Tensor", false);
    registerRepeat(r);
    registerFlip(r);
    registerTopk(r);
    registerNonzero(r);
}

namespace ops {

Tensor cat(const TensorList &tensors, int64_t dim) { return callOp1("aten.cat", {tensors, dim}); }
Tensor stack(const TensorList &tensors, int64_t dim) { return callOp1("aten.stack", {tensors, dim}); }
TensorList split(const Tensor &x, int64_t splitSize, int64_t dim)
{
    return callOp("aten.split", {x, splitSize, dim});
}
TensorList splitWithSizes(const Tensor &x, const IntList &sizes, int64_t dim)
{
    return callOp("aten.split_with_sizes", {x, sizes, dim});
}
TensorList chunk(const Tensor &x, int64_t chunks, int64_t dim) { return callOp("aten.chunk", {x, chunks, dim}); }
Tensor nonzero(const Tensor &x) { return callOp1("aten.nonzero", {x}); }
Tensor pad(const Tensor &x, const IntList &pad, const std::string &mode, double value)
{
    return callOp1("aten.pad", {x, pad, mode, value});
}
Tensor gather(const Tensor &x, int64_t dim, const Tensor &index) { return callOp1("aten.gather", {x, dim, index}); }
Tensor scatterAdd(const Tensor &x, int64_t dim, const Tensor &index, const Tensor &src)
{
    return callOp1("aten.scatter_add", {x, dim, index, src});
}
Tensor indexSelect(const Tensor &x, int64_t dim, const Tensor &index)
{
    return callOp1("aten.index_select", {x, dim, index});
}
Tensor embedding(const Tensor &weight, const Tensor &indices) { return callOp1("aten.embedding", {weight, indices}); }
Tensor triu(const Tensor &x, int64_t diagonal) { return callOp1("aten.triu", {x, diagonal}); }
Tensor tril(const Tensor &x, int64_t diagonal) { return callOp1("aten.tril", {x, diagonal}); }
Tensor repeat(const Tensor &x, const IntList &repeats) { return callOp1("aten.repeat", {x, repeats}); }
Tensor flip(const Tensor &x, const IntList &dims) { return callOp1("aten.flip", {x, dims}); }
std::pair<Tensor, Tensor> topk(const Tensor &x, int64_t k, int64_t dim, bool largest, bool sorted)
{
    const TensorList outs = callOp("aten.topk", {x, k, dim, largest, sorted});
    return {outs[0], outs[1]};
}

} // namespace ops
} // namespace fusescope
