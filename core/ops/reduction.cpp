// Reduction ops. One strided engine (runReduction) walks the input as kept
// dims x reduced dims and hands a Reducer either contiguous runs of the
// reduction (inner case: each output reduces a run held in several partial
// accumulators) or whole contiguous rows of outputs (outer case: a row
// buffer accumulates row after row). Both give simple loops that vectorize.
#include "core/ops/reduction.h"

#include "core/ops/builtin.h"
#include "core/ops/loops.h"
#include "core/ops/pointwise.h"
#include "core/ops/registry.h"
#include "core/ops/scalarmath.h"
#include "core/ops/views.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

namespace fusescope {
namespace {

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

using loops::contiguousAs;

// --- element conversion ------------------------------------------------------------

// Half::operator float lives in another translation unit; this inline form
// keeps f16 reductions vectorizable. The half's exponent and mantissa bits,
// placed in a float, read as the value times 2^-112 (subnormals included),
// so one multiply rescales them exactly.
inline float halfToFloat(uint16_t h)
{
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t rest = h & 0x7fffu;
    const float scaled = sm::bitsToFloat(rest << 13) * 0x1p112f;
    const uint32_t special = 0x7f800000u | (rest & 0x3ffu) << 13; // inf and NaN
    return sm::bitsToFloat((rest >= 0x7c00u ? special : sm::floatToBits(scaled)) | sign);
}

template <typename A, typename T>
inline A load(T v)
{
    if constexpr (std::is_same_v<T, Half>)
        return static_cast<A>(halfToFloat(v.bits));
    else
        return static_cast<A>(static_cast<compute_t<T>>(v));
}

template <typename Out, typename A>
inline Out store(A v)
{
    if constexpr (std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>)
        return Out(static_cast<float>(v));
    else
        return static_cast<Out>(v);
}

// Accumulator of sums and products: f32 for the 16-bit floats, and unsigned
// 64-bit for integers so that overflow wraps instead of being undefined.
template <typename T> struct AccumulateType { using type = compute_t<T>; };
template <> struct AccumulateType<bool> { using type = uint64_t; };
template <> struct AccumulateType<int32_t> { using type = uint64_t; };
template <> struct AccumulateType<int64_t> { using type = uint64_t; };
template <typename T> using acc_t = typename AccumulateType<T>::type;

template <typename T>
constexpr bool isFloatType = std::is_floating_point_v<compute_t<T>>;

// --- shape rules -----------------------------------------------------------------

struct ReduceSpec {
    std::vector<bool> reduced; // per input dim
    Shape outShape;
    int64_t count = 1; // input elements reduced into each output
};

IntList dimsArg(const Value &v)
{
    return v.isNone() ? IntList{} : v.toIntList();
}

std::optional<DType> dtypeArg(const Value &v)
{
    return v.isNone() ? std::nullopt : std::optional<DType>(v.toDType());
}

// An empty dim list reduces every dim.
ReduceSpec reduceSpec(const std::string &op, const Tensor &x, const IntList &dims, bool keepdim)
{
    const int64_t rank = x.dim();
    ReduceSpec s;
    s.reduced.assign(static_cast<size_t>(rank), dims.empty());
    std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 1)), false);
    for (int64_t d : dims) {
        const auto w = static_cast<size_t>(wrapDim(d, rank, op.c_str()));
        if (seen[w])
            throw Error(op + ": dim " + std::to_string(w) + " appears multiple times in the list of dims "
                        + shapeStr(dims) + " for a tensor of shape " + shapeStr(x.sizes()));
        seen[w] = true;
        if (rank > 0)
            s.reduced[w] = true;
    }
    for (size_t d = 0; d < s.reduced.size(); ++d) {
        if (s.reduced[d]) {
            s.count *= x.sizes()[d];
            if (keepdim)
                s.outShape.push_back(1);
        } else {
            s.outShape.push_back(x.sizes()[d]);
        }
    }
    return s;
}

// max, min, amax, argmax ... have no identity to give an empty reduction.
void requireNonEmpty(const std::string &op, const Tensor &x, const ReduceSpec &s)
{
    if (s.count == 0)
        throw Error(op + ": cannot reduce over a zero-size dimension of a tensor of shape " + shapeStr(x.sizes())
                    + " (the op has no identity)");
}

void requireFloating(const std::string &op, const Tensor &x, DType t)
{
    if (!isFloating(t))
        throw Error(op + ": expected a floating-point input or dtype, got " + dtypeName(t) + " for a tensor of shape "
                    + shapeStr(x.sizes()));
}

// sum, prod and cumsum: integers and bool accumulate to i64 unless a dtype is given.
DType accumulatingDType(const std::string &op, DType in, const std::optional<DType> &dtype)
{
    if (!dtype)
        return isFloating(in) ? in : DType::I64;
    if (*dtype == DType::Bool)
        throw Error(op + ": dtype bool is not supported");
    return *dtype;
}

std::vector<TensorSpec> oneSpec(Shape shape, DType dtype)
{
    return {{std::move(shape), dtype}};
}

// --- geometry ------------------------------------------------------------------------

struct Dim {
    int64_t size;
    int64_t stride; // elements
};
using Dims = std::vector<Dim>;

// Drops size-1 dims and merges neighbours that are contiguous with each
// other; never empty (a single element is {1, 0}).
Dims coalesceDims(const Dims &in)
{
    Dims out;
    for (const Dim &d : in) {
        if (d.size == 1)
            continue;
        if (!out.empty() && out.back().stride == d.stride * d.size) {
            out.back() = {out.back().size * d.size, d.stride};
            continue;
        }
        out.push_back(d);
    }
    if (out.empty())
        out.push_back({1, 0});
    return out;
}

int64_t offsetOf(const Dims &dims, int64_t flat)
{
    int64_t off = 0;
    for (size_t d = dims.size(); d-- > 0;) {
        off += flat % dims[d].size * dims[d].stride;
        flat /= dims[d].size;
    }
    return off;
}

// Walks the element offsets of dims in row-major order; wraps to the start
// after the last element, so one walker serves several passes.
class Odometer
{
public:
    Odometer(const Dims &dims, int64_t flat)
        : m_dims(dims)
        , m_index(dims.size(), 0)
        , m_offset(offsetOf(dims, flat))
    {
        for (size_t d = dims.size(); d-- > 0;) {
            m_index[d] = flat % dims[d].size;
            flat /= dims[d].size;
        }
    }

    int64_t offset() const { return m_offset; }

    void next()
    {
        for (size_t d = m_dims.size(); d-- > 0;) {
            m_offset += m_dims[d].stride;
            if (++m_index[d] < m_dims[d].size)
                return;
            m_offset -= m_dims[d].stride * m_dims[d].size;
            m_index[d] = 0;
        }
    }

private:
    const Dims &m_dims;
    Shape m_index;
    int64_t m_offset;
};

struct ReduceGeometry {
    Dims kept;    // in the order of the contiguous output
    Dims reduced; // innermost last
    int64_t numOut = 1;
    int64_t count = 1;
};

// orderFree: the reducer does not care in which order it sees elements, so
// the reduced dims may be sorted to put the smallest stride innermost (a
// reduction over a transposed tensor then reads memory in order).
ReduceGeometry reduceGeometry(const Tensor &x, const std::vector<bool> &mask, bool orderFree)
{
    ReduceGeometry g;
    Dims kept, reduced;
    for (size_t d = 0; d < mask.size(); ++d) {
        const Dim dim{x.sizes()[d], x.strides()[d]};
        (mask[d] ? reduced : kept).push_back(dim);
        (mask[d] ? g.count : g.numOut) *= dim.size;
    }
    if (orderFree) {
        // Broadcast (stride 0) dims go outermost: they never form a run.
        auto key = [](const Dim &d) { return d.stride == 0 ? std::numeric_limits<int64_t>::max() : d.stride; };
        std::stable_sort(reduced.begin(), reduced.end(), [&](const Dim &a, const Dim &b) { return key(a) > key(b); });
    }
    g.kept = coalesceDims(kept);
    g.reduced = coalesceDims(reduced);
    return g;
}

// --- the engine --------------------------------------------------------------------

// A Reducer R provides: In (element type), Acc, kOrderFree, init(),
// combine(earlier, later), run(acc, p, n, stride, out, r) for a run of n
// elements whose first one has reduced index r, rows(acc, p, w, out0, r)
// for w contiguous elements of outputs out0.. at reduced index r, and
// finish(out, acc, count).

constexpr int64_t kColBlock = 512;   // outputs per row buffer: stays in L1
constexpr int64_t kCascadeRows = 64; // rows summed apart before joining the total

// Reduces the flat reduced range [e0, e1) of one output.
template <typename R>
typename R::Acc reduceRange(const R &r, const ReduceGeometry &g, const typename R::In *p, int64_t o, int64_t e0,
                            int64_t e1)
{
    const Dim run = g.reduced.back();
    const Dims outer(g.reduced.begin(), g.reduced.end() - 1);
    typename R::Acc acc = r.init();
    int64_t j = e0 / run.size, i = e0 % run.size;
    Odometer runs(outer, j);
    for (int64_t e = e0; e < e1; ++j, runs.next()) {
        const int64_t len = std::min(run.size - i, e1 - e);
        r.run(acc, p + runs.offset() + i * run.stride, len, run.stride, o, j * run.size + i);
        e += len;
        i = 0;
    }
    return acc;
}

template <typename R>
void innerPerOutput(const R &r, const ReduceGeometry &g, const typename R::In *base)
{
    const Dim run = g.reduced.back();
    const Dims outer(g.reduced.begin(), g.reduced.end() - 1);
    const int64_t numRuns = g.count / run.size;
    parallelFor(0, g.numOut, std::max<int64_t>(1, loops::kGrain / g.count), [&](int64_t b, int64_t e) {
        Odometer out(g.kept, b), runs(outer, 0);
        for (int64_t o = b; o < e; ++o, out.next()) {
            typename R::Acc acc = r.init();
            for (int64_t j = 0; j < numRuns; ++j, runs.next())
                r.run(acc, base + out.offset() + runs.offset(), run.size, run.stride, o, j * run.size);
            r.finish(o, acc, g.count);
        }
    });
}

// Few outputs, long reductions: each output's reduction is split across the
// pool and the partial results are combined in order.
template <typename R>
void innerSplit(const R &r, const ReduceGeometry &g, const typename R::In *base)
{
    const int64_t tasks = std::min<int64_t>(numThreads(), ceilDiv(g.count, loops::kGrain));
    const int64_t step = ceilDiv(g.count, tasks);
    const auto partial = std::make_unique<typename R::Acc[]>(static_cast<size_t>(tasks));
    Odometer out(g.kept, 0);
    for (int64_t o = 0; o < g.numOut; ++o, out.next()) {
        parallelFor(0, tasks, 1, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t)
                partial[static_cast<size_t>(t)] =
                    reduceRange(r, g, base + out.offset(), o, t * step, std::min(g.count, (t + 1) * step));
        });
        typename R::Acc acc = partial[0];
        for (int64_t t = 1; t < tasks; ++t)
            acc = r.combine(acc, partial[static_cast<size_t>(t)]);
        r.finish(o, acc, g.count);
    }
}

// acc[0..w) = the reduction of rows [r0, r1), in groups of kCascadeRows so
// that long f32 sums keep their accuracy.
template <typename R>
void accumulateRows(const R &r, const Dims &reduced, const typename R::In *p, int64_t w, int64_t o0, int64_t r0,
                    int64_t r1, typename R::Acc *acc, typename R::Acc *tmp)
{
    std::fill_n(acc, w, r.init());
    Odometer rows(reduced, r0);
    for (int64_t g0 = r0; g0 < r1; g0 += kCascadeRows) {
        std::fill_n(tmp, w, r.init());
        const int64_t g1 = std::min(r1, g0 + kCascadeRows);
        for (int64_t j = g0; j < g1; ++j, rows.next())
            r.rows(tmp, p + rows.offset(), w, o0, j);
        for (int64_t i = 0; i < w; ++i)
            acc[i] = r.combine(acc[i], tmp[i]);
    }
}

// The innermost kept dim is contiguous: tiles of kColBlock outputs each
// accumulate whole rows. With too few tiles for the pool, the reduced rows
// are split into parts too, combined in order afterwards.
template <typename R>
void outerReduce(const R &r, const ReduceGeometry &g, const typename R::In *base)
{
    using Acc = typename R::Acc;
    const int64_t width = g.kept.back().size;
    const int64_t blockW = std::min(width, kColBlock);
    const Dims outerKept(g.kept.begin(), g.kept.end() - 1);
    const int64_t blocks = ceilDiv(width, kColBlock);
    const int64_t tiles = g.numOut / width * blocks;
    const bool split = tiles < numThreads() && g.numOut * g.count >= loops::kGrain;
    const int64_t parts = split ? std::min<int64_t>(numThreads(), std::max<int64_t>(1, g.count / kCascadeRows)) : 1;
    const int64_t partRows = ceilDiv(g.count, parts);
    const auto partial = std::make_unique<Acc[]>(static_cast<size_t>(parts > 1 ? parts * g.numOut : 0));
    const int64_t grain = std::max<int64_t>(1, loops::kGrain / (blockW * partRows));
    parallelFor(0, tiles * parts, grain, [&](int64_t b, int64_t e) {
        const auto acc = std::make_unique<Acc[]>(static_cast<size_t>(blockW));
        const auto tmp = std::make_unique<Acc[]>(static_cast<size_t>(blockW));
        for (int64_t t = b; t < e; ++t) {
            const int64_t part = t % parts, tile = t / parts;
            const int64_t c0 = tile % blocks * kColBlock, w = std::min(kColBlock, width - c0);
            const int64_t o0 = tile / blocks * width + c0;
            const int64_t r0 = part * partRows, r1 = std::min(g.count, r0 + partRows);
            const auto *p = base + offsetOf(outerKept, tile / blocks) + c0;
            accumulateRows(r, g.reduced, p, w, o0, r0, r1, acc.get(), tmp.get());
            for (int64_t i = 0; i < w; ++i) {
                if (parts == 1)
                    r.finish(o0 + i, acc[static_cast<size_t>(i)], g.count);
                else
                    partial[static_cast<size_t>(part * g.numOut + o0 + i)] = acc[static_cast<size_t>(i)];
            }
        }
    });
    for (int64_t o = 0; parts > 1 && o < g.numOut; ++o) {
        Acc a = partial[static_cast<size_t>(o)];
        for (int64_t k = 1; k < parts; ++k)
            a = r.combine(a, partial[static_cast<size_t>(k * g.numOut + o)]);
        r.finish(o, a, g.count);
    }
}

template <typename R>
void runReduction(const Tensor &x, const std::vector<bool> &mask, const R &r)
{
    const ReduceGeometry g = reduceGeometry(x, mask, R::kOrderFree);
    if (g.numOut == 0)
        return;
    if (g.count == 0) {
        for (int64_t o = 0; o < g.numOut; ++o)
            r.finish(o, r.init(), 0);
        return;
    }
    const auto *base = x.data<typename R::In>();
    const Dim run = g.reduced.back(), col = g.kept.back();
    if (run.stride != 1 && col.stride == 1 && col.size > 1)
        outerReduce(r, g, base);
    else if (g.numOut >= numThreads() || g.numOut * g.count < loops::kGrain)
        innerPerOutput(r, g, base);
    else
        innerSplit(r, g, base);
}

// --- reducers ----------------------------------------------------------------------

constexpr int64_t kBlock = 2048; // elements folded apart before joining the total

// Folds up to kBlock elements into 64 bytes of independent accumulators
// (they map onto SIMD registers), joined pairwise at the end.
template <typename A, typename Join, typename T, typename Map>
A laneBlock(const T *q, int64_t m, Map map, Join join)
{
    constexpr int lanes = std::max(1, 64 / static_cast<int>(sizeof(A)));
    A lane[lanes];
    for (int j = 0; j < lanes; ++j)
        lane[j] = Join::template identity<A>();
    int64_t i = 0;
    for (; i + lanes <= m; i += lanes) {
        for (int j = 0; j < lanes; ++j)
            lane[j] = join(lane[j], map(q[i + j]));
    }
    for (; i < m; ++i)
        lane[0] = join(lane[0], map(q[i]));
    for (int w = lanes / 2; w > 0; w /= 2) {
        for (int j = 0; j < w; ++j)
            lane[j] = join(lane[j], lane[j + w]);
    }
    return lane[0];
}

// Adds or multiplies a contiguous run. Blocks are joined pairwise (a binary
// counter of partial results), so the f32 sum of a long run errs like a
// short one. Short runs, the common case, skip the counter.
template <typename A, typename Join, typename T, typename Map>
A laneFold(const T *p, int64_t n, Map map, Join join)
{
    if (n <= kBlock)
        return laneBlock<A>(p, n, map, join);
    A level[64];
    uint64_t blocksDone = 0;
    for (int64_t b = 0; b < n; b += kBlock) {
        A carry = laneBlock<A>(p + b, std::min(kBlock, n - b), map, join);
        int l = 0;
        for (uint64_t c = blocksDone; c & 1u; c >>= 1, ++l)
            carry = join(level[l], carry);
        level[l] = carry;
        ++blocksDone;
    }
    A total = Join::template identity<A>();
    for (int l = 63; l >= 0; --l) {
        if (blocksDone >> l & 1u)
            total = join(total, level[l]);
    }
    return total;
}

// Where a max (min) starts: -inf (+inf), or the integer type's limit.
template <bool isMax, typename A>
A extremeIdentity()
{
    if constexpr (std::numeric_limits<A>::has_infinity)
        return isMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    else
        return isMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
}

// The max (isMax) or min of a contiguous run. The select `x > m ? x : m` is
// what maxps computes, so it vectorizes, but it passes over NaN: NaNs are
// counted on the side. (sm::maximum's NaN-first select does not vectorize
// on SSE2 without many more instructions.)
template <bool isMax, typename A, typename T, typename Map>
A extremeRun(const T *p, int64_t n, Map map)
{
    constexpr int lanes = std::max(1, 128 / static_cast<int>(sizeof(A)));
    constexpr bool hasNaN = std::numeric_limits<A>::has_quiet_NaN;
    auto wins = [](A x, A m) { return isMax ? x > m : x < m; };
    A best[lanes], nans[lanes];
    for (int j = 0; j < lanes; ++j) {
        best[j] = extremeIdentity<isMax, A>();
        nans[j] = A(0);
    }
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        for (int j = 0; j < lanes; ++j) {
            const A x = map(p[i + j]);
            best[j] = wins(x, best[j]) ? x : best[j];
            if constexpr (hasNaN)
                nans[j] += x != x ? A(1) : A(0);
        }
    }
    for (; i < n; ++i) {
        const A x = map(p[i]);
        best[0] = wins(x, best[0]) ? x : best[0];
        if constexpr (hasNaN)
            nans[0] += x != x ? A(1) : A(0);
    }
    for (int w = lanes / 2; w > 0; w /= 2) {
        for (int j = 0; j < w; ++j) {
            best[j] = wins(best[j + w], best[j]) ? best[j + w] : best[j];
            nans[j] += nans[j + w];
        }
    }
    if constexpr (hasNaN) {
        if (nans[0] != A(0))
            return std::numeric_limits<A>::quiet_NaN();
    }
    return best[0];
}

struct Plus {
    template <typename A> static A identity() { return A(0); }
    template <typename A> A operator()(A a, A b) const { return a + b; }
    template <typename A, typename T, typename Map> static A run(const T *p, int64_t n, Map map)
    {
        return laneFold<A>(p, n, map, Plus{});
    }
};

struct Times {
    template <typename A> static A identity() { return A(1); }
    template <typename A> A operator()(A a, A b) const { return a * b; }
    template <typename A, typename T, typename Map> static A run(const T *p, int64_t n, Map map)
    {
        return laneFold<A>(p, n, map, Times{});
    }
};

// max/min that propagate NaN.
template <bool isMax>
struct Extreme {
    template <typename A> static A identity() { return extremeIdentity<isMax, A>(); }
    template <typename A> A operator()(A a, A b) const { return isMax ? sm::maximum(a, b) : sm::minimum(a, b); }
    template <typename A, typename T, typename Map> static A run(const T *p, int64_t n, Map map)
    {
        return extremeRun<isMax, A>(p, n, map);
    }
};

// Join::run over a contiguous run. 16-bit floats are widened a block at a
// time first: the widening loop vectorizes on its own, the fold then runs
// on plain floats (map takes either).
template <typename A, typename Join, typename T, typename Map>
A foldContiguous(const T *p, int64_t n, Map map)
{
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        A acc = Join::template identity<A>();
        float wide[kBlock];
        for (int64_t b = 0; b < n; b += kBlock) {
            const int64_t m = std::min(kBlock, n - b);
            for (int64_t i = 0; i < m; ++i)
                wide[i] = load<float>(p[b + i]);
            acc = Join{}(acc, Join::template run<A>(wide, m, map));
        }
        return acc;
    } else {
        return Join::template run<A>(p, n, map);
    }
}

// Maps from an element to what is folded; at(out) binds per-output data.
template <typename A>
struct Identity {
    auto at(int64_t) const
    {
        return [](auto v) { return load<A>(v); };
    }
};

template <typename A>
struct SquaredDeviation {
    const A *mean;
    auto at(int64_t o) const
    {
        return [m = mean[o]](auto v) {
            const A d = load<A>(v) - m;
            return d * d;
        };
    }
};

template <typename A>
struct ShiftedExp {
    const A *shift;
    auto at(int64_t o) const
    {
        return [m = shift[o]](auto v) { return sm::exp<A>(load<A>(v) - m); };
    }
};

// Folds map(x) with Join; Fin turns the folded value into the result.
template <typename T, typename A, typename Join, typename Map, typename Fin>
struct FoldReducer {
    using In = T;
    using Acc = A;
    static constexpr bool kOrderFree = true;
    Map map;
    Fin fin;

    A init() const { return Join::template identity<A>(); }
    A combine(A a, A b) const { return Join{}(a, b); }
    void run(A &acc, const T *p, int64_t n, int64_t stride, int64_t o, int64_t) const
    {
        const auto f = map.at(o);
        if (stride == 1) {
            acc = Join{}(acc, foldContiguous<A, Join>(p, n, f));
            return;
        }
        for (int64_t i = 0; i < n; ++i)
            acc = Join{}(acc, f(p[i * stride]));
    }
    void rows(A *acc, const T *p, int64_t w, int64_t o0, int64_t) const
    {
        for (int64_t i = 0; i < w; ++i)
            acc[i] = Join{}(acc[i], map.at(o0 + i)(p[i]));
    }
    void finish(int64_t o, A acc, int64_t count) const { fin(o, acc, count); }
};

template <typename T, typename A, typename Join, typename Map, typename Fin>
void fold(const Tensor &x, const std::vector<bool> &mask, Map map, Fin fin)
{
    runReduction(x, mask, FoldReducer<T, A, Join, Map, Fin>{map, fin});
}

template <typename C>
struct ArgAcc {
    C value;
    int64_t index; // -1: nothing seen yet
};

// Value and first index of the max (or min); NaN beats everything.
template <typename T, bool isMax, typename Fin>
struct ArgReducer {
    using In = T;
    using C = compute_t<T>;
    using Acc = ArgAcc<C>;
    static constexpr bool kOrderFree = false; // indices follow the row-major order
    Fin fin;

    static bool better(C x, C a)
    {
        return (isMax ? x > a : x < a) || (x != x && a == a);
    }
    static bool takes(C x, const Acc &acc) { return acc.index < 0 || better(x, acc.value); }

    Acc init() const { return {Extreme<isMax>::template identity<C>(), -1}; }
    Acc combine(const Acc &a, const Acc &b) const { return b.index >= 0 && takes(b.value, a) ? b : a; }
    // The extreme value vectorizes; then a scan finds its first position.
    void run(Acc &acc, const T *p, int64_t n, int64_t stride, int64_t, int64_t r) const
    {
        if (stride != 1) {
            for (int64_t i = 0; i < n; ++i) {
                const C x = load<C>(p[i * stride]);
                if (takes(x, acc))
                    acc = {x, r + i};
            }
            return;
        }
        const C m = foldContiguous<C, Extreme<isMax>>(p, n, Identity<C>{}.at(0));
        if (takes(m, acc))
            acc = {m, r + firstIndexOf(p, n, m)};
    }
    // m is one of the n elements (or NaN, and one of them is NaN).
    static int64_t firstIndexOf(const T *p, int64_t n, C m)
    {
        if (m != m)
            return firstHit(p, n, [](C x) { return x != x; });
        return firstHit(p, n, [m](C x) { return x == m; });
    }
    // Hits are counted a block at a time (a loop that vectorizes) before the
    // exact position is searched in the block that has one.
    template <typename Hit>
    static int64_t firstHit(const T *p, int64_t n, Hit hit)
    {
        constexpr int64_t kSpan = 64;
        int64_t b = 0;
        for (; b < n; b += kSpan) {
            const int64_t len = std::min(kSpan, n - b);
            int hits = 0;
            for (int64_t j = 0; j < len; ++j)
                hits += hit(load<C>(p[b + j])) ? 1 : 0;
            if (hits > 0)
                break;
        }
        while (!hit(load<C>(p[b])))
            ++b;
        return b;
    }
    void rows(Acc *acc, const T *p, int64_t w, int64_t, int64_t r) const
    {
        for (int64_t i = 0; i < w; ++i) {
            const C x = load<C>(p[i]);
            if (takes(x, acc[i]))
                acc[i] = {x, r};
        }
    }
    void finish(int64_t o, const Acc &acc, int64_t) const { fin(o, acc); }
};

// all/any on truthiness (NaN is true).
template <typename T, bool isAll>
struct LogicalReducer {
    using In = T;
    using Acc = bool;
    static constexpr bool kOrderFree = true;
    bool *out;

    static bool truthy(T v) { return load<compute_t<T>>(v) != compute_t<T>(0); }
    Acc init() const { return isAll; }
    Acc combine(Acc a, Acc b) const { return isAll ? a && b : a || b; }
    void run(Acc &acc, const T *p, int64_t n, int64_t stride, int64_t, int64_t) const
    {
        for (int64_t i = 0; i < n && acc == init(); ++i) {
            if (truthy(p[i * stride]) != isAll)
                acc = !isAll;
        }
    }
    void rows(Acc *acc, const T *p, int64_t w, int64_t, int64_t) const
    {
        for (int64_t i = 0; i < w; ++i)
            acc[i] = combine(acc[i], truthy(p[i]));
    }
    void finish(int64_t o, Acc acc, int64_t) const { out[o] = acc; }
};

// --- kernels ------------------------------------------------------------------------

template <typename T, typename Out>
void sumLikeTyped(const Tensor &x, const std::vector<bool> &mask, const Tensor &out, bool product)
{
    using A = acc_t<T>;
    Out *o = out.data<Out>();
    auto fin = [o](int64_t i, A acc, int64_t) { o[i] = store<Out>(acc); };
    if (product)
        fold<T, A, Times>(x, mask, Identity<A>{}, fin);
    else
        fold<T, A, Plus>(x, mask, Identity<A>{}, fin);
}

// Integers and bool read as they are into an i64 result; any other dtype
// change converts the input first, as PyTorch's dtype= does.
void sumLikeKernel(const Tensor &x, const std::vector<bool> &mask, const Tensor &out, bool product)
{
    const DType od = out.dtype();
    const bool direct = x.dtype() == od || (od == DType::I64 && !isFloating(x.dtype()));
    const Tensor in = direct ? x : contiguousAs(x, od);
    visitDType(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (isFloatType<T>)
            sumLikeTyped<T, T>(in, mask, out, product);
        else if (od == DType::I64)
            sumLikeTyped<T, int64_t>(in, mask, out, product);
        else if constexpr (!std::is_same_v<T, bool>)
            sumLikeTyped<T, T>(in, mask, out, product);
    });
}

void meanKernel(const Tensor &x, const std::vector<bool> &mask, const Tensor &out)
{
    const Tensor in = x.dtype() == out.dtype() ? x : contiguousAs(x, out.dtype());
    visitFloating(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using A = acc_t<T>;
        T *o = out.data<T>();
        fold<T, A, Plus>(in, mask, Identity<A>{},
                         [o](int64_t i, A acc, int64_t count) { o[i] = store<T>(acc / static_cast<A>(count)); });
    });
}

template <bool isMax>
void extremeKernel(const Tensor &x, const std::vector<bool> &mask, const Tensor &out)
{
    visitDType(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using C = compute_t<T>;
        T *o = out.data<T>();
        fold<T, C, Extreme<isMax>>(x, mask, Identity<C>{}, [o](int64_t i, C acc, int64_t) { o[i] = store<T>(acc); });
    });
}

// values may be null (argmax/argmin).
template <bool isMax>
void argKernel(const Tensor &x, const std::vector<bool> &mask, Tensor *values, const Tensor &indices)
{
    visitDType(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using C = compute_t<T>;
        T *v = values ? values->data<T>() : nullptr;
        int64_t *idx = indices.data<int64_t>();
        auto fin = [v, idx](int64_t o, const ArgAcc<C> &acc) {
            idx[o] = acc.index;
            if (v)
                v[o] = store<T>(acc.value);
        };
        runReduction(x, mask, ArgReducer<T, isMax, decltype(fin)>{fin});
    });
}

// Two passes (mean, then squared deviations from it) stay accurate where a
// one-pass sum of squares cancels.
void varKernel(const Tensor &x, const std::vector<bool> &mask, double correction, bool takeSqrt, const Tensor &out)
{
    visitFloating(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using A = acc_t<T>;
        std::vector<A> mean(static_cast<size_t>(out.numel()));
        A *m = mean.data();
        fold<T, A, Plus>(x, mask, Identity<A>{},
                         [m](int64_t o, A acc, int64_t count) { m[o] = acc / static_cast<A>(count); });
        T *o = out.data<T>();
        fold<T, A, Plus>(x, mask, SquaredDeviation<A>{m}, [=](int64_t i, A acc, int64_t count) {
            const A v = acc / static_cast<A>(std::max(0.0, static_cast<double>(count) - correction));
            o[i] = store<T>(takeSqrt ? std::sqrt(v) : v);
        });
    });
}

// log(sum(exp(x - m))) + m with m the max; an infinite max shifts by 0 so
// that all -inf gives -inf and +inf gives +inf rather than NaN.
void logsumexpKernel(const Tensor &x, const std::vector<bool> &mask, const Tensor &out)
{
    const Tensor in = x.dtype() == out.dtype() ? x : contiguousAs(x, out.dtype());
    visitFloating(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using A = acc_t<T>;
        std::vector<A> shift(static_cast<size_t>(out.numel()));
        A *s = shift.data();
        fold<T, A, Extreme<true>>(in, mask, Identity<A>{},
                                  [s](int64_t o, A acc, int64_t) { s[o] = std::isinf(acc) ? A(0) : acc; });
        T *o = out.data<T>();
        fold<T, A, Plus>(in, mask, ShiftedExp<A>{s},
                         [o, s](int64_t i, A acc, int64_t) { o[i] = store<T>(sm::log<A>(acc) + s[i]); });
    });
}

template <bool isAll>
void logicalKernel(const Tensor &x, const std::vector<bool> &mask, const Tensor &out)
{
    visitDType(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        runReduction(x, mask, LogicalReducer<T, isAll>{out.data<bool>()});
    });
}

// f32 scans accumulate in f64 (as PyTorch's CPU cumsum), the 16-bit floats in f32.
template <typename T> struct ScanAccumulate { using type = acc_t<T>; };
template <> struct ScanAccumulate<float> { using type = double; };

template <typename A, typename T>
void scanRow(const T *x, T *y, int64_t n)
{
    A acc = 0;
    for (int64_t k = 0; k < n; ++k) {
        acc += load<A>(x[k]);
        y[k] = store<T>(acc);
    }
}

// y = running sum of x along the middle dim of [outer, n, inner]; rows of
// the inner dim accumulate together, so a scan over an outer dim vectorizes.
template <typename T>
void scan(const T *x, T *y, int64_t outer, int64_t n, int64_t inner)
{
    using A = typename ScanAccumulate<T>::type;
    const int64_t blockW = std::min(inner, kColBlock), blocks = ceilDiv(inner, kColBlock);
    parallelFor(0, outer * blocks, std::max<int64_t>(1, loops::kGrain / (n * blockW)), [&](int64_t b, int64_t e) {
        std::vector<A> acc(static_cast<size_t>(blockW));
        for (int64_t t = b; t < e; ++t) {
            const int64_t c0 = t % blocks * kColBlock, w = std::min(kColBlock, inner - c0);
            const int64_t start = t / blocks * n * inner + c0;
            if (inner == 1) {
                scanRow<A>(x + start, y + start, n);
                continue;
            }
            std::fill_n(acc.data(), w, A(0));
            for (int64_t k = 0; k < n; ++k) {
                const T *src = x + start + k * inner;
                T *dst = y + start + k * inner;
                for (int64_t i = 0; i < w; ++i) {
                    acc[static_cast<size_t>(i)] += load<A>(src[i]);
                    dst[i] = store<T>(acc[static_cast<size_t>(i)]);
                }
            }
        }
    });
}

void cumsumKernel(const Tensor &x, int64_t dim, const Tensor &out)
{
    if (out.numel() == 0)
        return;
    const Tensor in = contiguousAs(x, out.dtype());
    const int64_t d = wrapDim(dim, x.dim(), "aten.cumsum");
    const int64_t n = x.dim() == 0 ? 1 : x.size(d);
    int64_t inner = 1;
    for (int64_t k = d + 1; k < x.dim(); ++k)
        inner *= x.size(k);
    visitNumeric(out.dtype(), [&](auto tag) {
        using T = decltype(tag);
        scan<T>(in.data<T>(), out.data<T>(), x.numel() / (n * inner), n, inner);
    });
}

// --- decompositions ------------------------------------------------------------------

TensorList meanDecomposition(const Args &a)
{
    const Tensor &x = arg(a, 0);
    const ReduceSpec s = reduceSpec("aten.mean", x, dimsArg(a[1]), a[2].toBool());
    requireFloating("aten.mean", x, dtypeArg(a[3]).value_or(x.dtype()));
    const Tensor total = ops::sum(x, dimsArg(a[1]), a[2].toBool(), dtypeArg(a[3]));
    return {ops::div(total, static_cast<double>(s.count))};
}

Tensor varianceDecomposition(const std::string &op, const Args &a)
{
    const Tensor &x = arg(a, 0);
    const IntList dims = dimsArg(a[1]);
    const bool keepdim = a[3].toBool();
    const ReduceSpec s = reduceSpec(op, x, dims, keepdim);
    requireFloating(op, x, x.dtype());
    const Tensor d = ops::sub(x, ops::mean(x, dims, true));
    const double divisor = std::max(0.0, static_cast<double>(s.count) - a[2].toDouble());
    return ops::div(ops::sum(ops::mul(d, d), dims, keepdim), divisor);
}

// As PyTorch: an empty reduction has no max to shift by, and gives log(0).
TensorList logsumexpDecomposition(const Args &a)
{
    const IntList dims = dimsArg(a[1]);
    const bool keepdim = a[2].toBool();
    const Tensor x = isFloating(arg(a, 0).dtype()) ? arg(a, 0) : ops::cast(arg(a, 0), toFloating(arg(a, 0).dtype()));
    const ReduceSpec s = reduceSpec("aten.logsumexp", x, dims, keepdim);
    if (s.count == 0)
        return {ops::log(ops::sum(ops::exp(x), dims, keepdim))};
    const Tensor m = ops::amax(x, dims, true);
    const Tensor shift = ops::where(ops::eq(ops::abs(m), INFINITY), 0.0, m);
    const Tensor total = ops::sum(ops::exp(ops::sub(x, shift)), dims, keepdim);
    return {ops::add(ops::log(total), keepdim ? shift : ops::reshape(shift, total.sizes()))};
}

// --- registration ------------------------------------------------------------------

// Reads the input once (twice for the two-pass ops) and writes the outputs.
CostFn reductionCost(double flopsPerElement, double passes = 1)
{
    return [=](const Args &a, std::span<const Tensor> outs) {
        OpCost c;
        const Tensor &x = arg(a, 0);
        c.flops = flopsPerElement * static_cast<double>(x.numel());
        c.bytesRead = passes * static_cast<double>(x.nbytes());
        for (const Tensor &t : outs)
            c.bytesWritten += static_cast<double>(t.nbytes());
        return c;
    };
}

OpDef reductionDef(OpKind kind, double flops, double passes = 1)
{
    OpDef def;
    def.kind = kind;
    def.flopsPerElement = flops;
    def.cost = reductionCost(flops, passes);
    return def;
}

void registerSumLike(OpRegistry &r)
{
    for (const auto &[schema, product] :
         {std::pair{"aten.sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                    false},
          std::pair{"aten.prod(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                    true}}) {
        OpDef def = reductionDef(OpKind::Reduction, 1);
        def.reduceFn = product ? "prod" : "sum";
        const std::string name = Schema::parse(schema).name;
        def.shape = [name](const Args &a) {
            const ReduceSpec s = reduceSpec(name, arg(a, 0), dimsArg(a[1]), a[2].toBool());
            return oneSpec(s.outShape, accumulatingDType(name, arg(a, 0).dtype(), dtypeArg(a[3])));
        };
        def.cpu = [name, product = product](const Args &a, std::span<Tensor> outs) {
            const ReduceSpec s = reduceSpec(name, arg(a, 0), dimsArg(a[1]), a[2].toBool());
            sumLikeKernel(arg(a, 0), s.reduced, outs[0], product);
        };
        r.add(schema, std::move(def));
    }
}

// A reduction with an epilogue, so it stays a Reduction for the fuser; the
// decomposition (sum / count) serves backends without a mean.
void registerMean(OpRegistry &r)
{
    OpDef mean = reductionDef(OpKind::Reduction, 1);
    mean.shape = [](const Args &a) {
        const ReduceSpec s = reduceSpec("aten.mean", arg(a, 0), dimsArg(a[1]), a[2].toBool());
        const DType t = dtypeArg(a[3]).value_or(arg(a, 0).dtype());
        requireFloating("aten.mean", arg(a, 0), t);
        return oneSpec(s.outShape, t);
    };
    mean.cpu = [](const Args &a, std::span<Tensor> outs) {
        meanKernel(arg(a, 0), reduceSpec("aten.mean", arg(a, 0), dimsArg(a[1]), a[2].toBool()).reduced, outs[0]);
    };
    mean.decompose = meanDecomposition;
    r.add("aten.mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
          std::move(mean));
}

// amax/amin over a dim list, and max/min of the whole tensor.
template <bool isMax>
void registerExtremeValues(OpRegistry &r)
{
    const std::string name = isMax ? "aten.amax" : "aten.amin";
    OpDef def = reductionDef(OpKind::Reduction, 1);
    def.reduceFn = isMax ? "max" : "min";
    def.shape = [name](const Args &a) {
        const ReduceSpec s = reduceSpec(name, arg(a, 0), a[1].toIntList(), a[2].toBool());
        requireNonEmpty(name, arg(a, 0), s);
        return oneSpec(s.outShape, arg(a, 0).dtype());
    };
    def.cpu = [name](const Args &a, std::span<Tensor> outs) {
        extremeKernel<isMax>(arg(a, 0), reduceSpec(name, arg(a, 0), a[1].toIntList(), a[2].toBool()).reduced, outs[0]);
    };
    r.add(name + "(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", std::move(def));

    const std::string global = isMax ? "aten.max" : "aten.min";
    OpDef all = reductionDef(OpKind::Reduction, 1);
    all.shape = [global](const Args &a) {
        const ReduceSpec s = reduceSpec(global, arg(a, 0), {}, false);
        requireNonEmpty(global, arg(a, 0), s);
        return oneSpec(s.outShape, arg(a, 0).dtype());
    };
    all.cpu = [global](const Args &a, std::span<Tensor> outs) {
        extremeKernel<isMax>(arg(a, 0), reduceSpec(global, arg(a, 0), {}, false).reduced, outs[0]);
    };
    all.decompose = [](const Args &a) { return TensorList{isMax ? ops::amax(arg(a, 0)) : ops::amin(arg(a, 0))}; };
    r.add(global + "(Tensor self) -> Tensor", std::move(all));
}

// max.dim/min.dim give (values, indices); argmax/argmin only the indices,
// of the flattened tensor (row-major) when dim is None.
template <bool isMax>
void registerExtremeIndices(OpRegistry &r)
{
    const std::string withDim = isMax ? "aten.max.dim" : "aten.min.dim";
    OpDef pair = reductionDef(OpKind::Reduction, 1);
    pair.shape = [withDim](const Args &a) {
        const ReduceSpec s = reduceSpec(withDim, arg(a, 0), {a[1].toInt()}, a[2].toBool());
        requireNonEmpty(withDim, arg(a, 0), s);
        return std::vector<TensorSpec>{{s.outShape, arg(a, 0).dtype()}, {s.outShape, DType::I64}};
    };
    pair.cpu = [withDim](const Args &a, std::span<Tensor> outs) {
        argKernel<isMax>(arg(a, 0), reduceSpec(withDim, arg(a, 0), {a[1].toInt()}, a[2].toBool()).reduced, &outs[0],
                         outs[1]);
    };
    r.add(withDim + "(Tensor self, int dim, bool keepdim=False) -> (Tensor, Tensor)", std::move(pair));

    const std::string name = isMax ? "aten.argmax" : "aten.argmin";
    auto spec = [name](const Args &a) {
        const IntList dims = a[1].isNone() ? IntList{} : IntList{a[1].toInt()};
        const ReduceSpec s = reduceSpec(name, arg(a, 0), dims, a[2].toBool());
        requireNonEmpty(name, arg(a, 0), s);
        return s;
    };
    OpDef index = reductionDef(OpKind::Reduction, 1);
    index.shape = [spec](const Args &a) { return oneSpec(spec(a).outShape, DType::I64); };
    index.cpu = [spec](const Args &a, std::span<Tensor> outs) {
        argKernel<isMax>(arg(a, 0), spec(a).reduced, nullptr, outs[0]);
    };
    r.add(name + "(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", std::move(index));
}

// var/std/logsumexp are Composite: the compiler decomposes them into the
// primitive reductions and pointwise ops it fuses; eager runs the kernels.
void registerVariance(OpRegistry &r)
{
    for (const auto &[name, takeSqrt] : {std::pair{"aten.var", false}, std::pair{"aten.std", true}}) {
        OpDef def = reductionDef(OpKind::Composite, 4, 2);
        const std::string op = name;
        def.shape = [op](const Args &a) {
            const ReduceSpec s = reduceSpec(op, arg(a, 0), dimsArg(a[1]), a[3].toBool());
            requireFloating(op, arg(a, 0), arg(a, 0).dtype());
            return oneSpec(s.outShape, arg(a, 0).dtype());
        };
        def.cpu = [op, takeSqrt = takeSqrt](const Args &a, std::span<Tensor> outs) {
            const ReduceSpec s = reduceSpec(op, arg(a, 0), dimsArg(a[1]), a[3].toBool());
            varKernel(arg(a, 0), s.reduced, a[2].toDouble(), takeSqrt, outs[0]);
        };
        def.decompose = [op, takeSqrt = takeSqrt](const Args &a) {
            const Tensor v = varianceDecomposition(op, a);
            return TensorList{takeSqrt ? ops::sqrt(v) : v};
        };
        r.add(op + "(Tensor self, int[1]? dim=None, *, float correction=1, bool keepdim=False) -> Tensor",
              std::move(def));
    }
}

void registerLogsumexp(OpRegistry &r)
{
    OpDef lse = reductionDef(OpKind::Composite, 11, 2);
    lse.shape = [](const Args &a) {
        const ReduceSpec s = reduceSpec("aten.logsumexp", arg(a, 0), a[1].toIntList(), a[2].toBool());
        return oneSpec(s.outShape, toFloating(arg(a, 0).dtype()));
    };
    lse.cpu = [](const Args &a, std::span<Tensor> outs) {
        const ReduceSpec s = reduceSpec("aten.logsumexp", arg(a, 0), a[1].toIntList(), a[2].toBool());
        logsumexpKernel(arg(a, 0), s.reduced, outs[0]);
    };
    lse.decompose = logsumexpDecomposition;
    r.add("aten.logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", std::move(lse));
}

void registerLogical(OpRegistry &r)
{
    for (const auto &[schema, isAll] :
         {std::pair{"aten.all(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", true},
          std::pair{"aten.any(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", false}}) {
        OpDef def = reductionDef(OpKind::Reduction, 1);
        const std::string name = Schema::parse(schema).name;
        def.shape = [name](const Args &a) {
            return oneSpec(reduceSpec(name, arg(a, 0), dimsArg(a[1]), a[2].toBool()).outShape, DType::Bool);
        };
        def.cpu = [name, isAll = isAll](const Args &a, std::span<Tensor> outs) {
            const ReduceSpec s = reduceSpec(name, arg(a, 0), dimsArg(a[1]), a[2].toBool());
            if (isAll)
                logicalKernel<true>(arg(a, 0), s.reduced, outs[0]);
            else
                logicalKernel<false>(arg(a, 0), s.reduced, outs[0]);
        };
        r.add(schema, std::move(def));
    }
}

// A scan keeps the input's shape, so the fuser cannot treat it as a reduction.
void registerCumsum(OpRegistry &r)
{
    OpDef def = reductionDef(OpKind::Opaque, 1);
    def.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        wrapDim(a[1].toInt(), x.dim(), "aten.cumsum");
        return oneSpec(x.sizes(), accumulatingDType("aten.cumsum", x.dtype(), dtypeArg(a[2])));
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) { cumsumKernel(arg(a, 0), a[1].toInt(), outs[0]); };
    r.add("aten.cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", std::move(def));
}

} // namespace

void registerReductionOps(OpRegistry &r)
{
    registerSumLike(r);
    registerMean(r);
    registerExtremeValues<true>(r);
    registerExtremeValues<false>(r);
    registerExtremeIndices<true>(r);
    registerExtremeIndices<false>(r);
    registerVariance(r);
    registerLogsumexp(r);
    registerLogical(r);
    registerCumsum(r);
}

namespace ops {

Tensor sum(const Tensor &x, const IntList &dims, bool keepdim, std::optional<DType> dtype)
{
    return callOp1("aten.sum", {x, dims, keepdim, dtype});
}
Tensor mean(const Tensor &x, const IntList &dims, bool keepdim) { return callOp1("aten.mean", {x, dims, keepdim}); }
Tensor prod(const Tensor &x, const IntList &dims, bool keepdim) { return callOp1("aten.prod", {x, dims, keepdim}); }
Tensor amax(const Tensor &x, const IntList &dims, bool keepdim) { return callOp1("aten.amax", {x, dims, keepdim}); }
Tensor amin(const Tensor &x, const IntList &dims, bool keepdim) { return callOp1("aten.amin", {x, dims, keepdim}); }

std::pair<Tensor, Tensor> max(const Tensor &x, int64_t dim, bool keepdim)
{
    const TensorList outs = callOp("aten.max.dim", {x, dim, keepdim});
    return {outs[0], outs[1]};
}
std::pair<Tensor, Tensor> min(const Tensor &x, int64_t dim, bool keepdim)
{
    const TensorList outs = callOp("aten.min.dim", {x, dim, keepdim});
    return {outs[0], outs[1]};
}
Tensor max(const Tensor &x) { return callOp1("aten.max", {x}); }
Tensor min(const Tensor &x) { return callOp1("aten.min", {x}); }

Tensor argmax(const Tensor &x, std::optional<int64_t> dim, bool keepdim)
{
    return callOp1("aten.argmax", {x, dim, keepdim});
}
Tensor argmin(const Tensor &x, std::optional<int64_t> dim, bool keepdim)
{
    return callOp1("aten.argmin", {x, dim, keepdim});
}
Tensor var(const Tensor &x, const IntList &dims, double correction, bool keepdim)
{
    return callOp1("aten.var", {x, dims, correction, keepdim});
}
Tensor stdDev(const Tensor &x, const IntList &dims, double correction, bool keepdim)
{
    return callOp1("aten.std", {x, dims, correction, keepdim});
}
Tensor logsumexp(const Tensor &x, const IntList &dims, bool keepdim)
{
    return callOp1("aten.logsumexp", {x, dims, keepdim});
}
Tensor all(const Tensor &x, const IntList &dims, bool keepdim) { return callOp1("aten.all", {x, dims, keepdim}); }
Tensor any(const Tensor &x, const IntList &dims, bool keepdim) { return callOp1("aten.any", {x, dims, keepdim}); }
Tensor cumsum(const Tensor &x, int64_t dim, std::optional<DType> dtype)
{
    return callOp1("aten.cumsum", {x, dim, dtype});
}

} // namespace ops
} // namespace fusescope
