#pragma once
// The strided-loop engine every eager kernel is built on: broadcasting,
// dimension coalescing, parallel splitting, and contiguous fast paths the
// compiler can vectorize.

#include "core/ops/registry.h"
#include "core/runtime/threadpool.h"

#include <algorithm>
#include <array>

namespace fusescope::loops {

// NumPy broadcasting of two shapes; throws naming the op and both shapes.
Shape broadcastShapes(const std::string &op, const Shape &a, const Shape &b);
Shape broadcastAll(const std::string &op, const std::vector<Shape> &shapes);
// Element strides of t seen at shape `out` (0 on broadcast dims).
Shape broadcastStrides(const Tensor &t, const Shape &out);

// Strided geometry of N operands over one iteration shape, after merging
// dims that are contiguous for every operand. Strides are in bytes.
template <int N>
struct Geometry {
    Shape sizes;
    std::array<Shape, N> strides;
    std::array<int64_t, N> items{}; // bytes an element
};

template <int N>
Geometry<N> coalesce(const Shape &sizes, const std::array<Shape, N> &elemStrides, const std::array<size_t, N> &itemSizes)
{
    Geometry<N> g;
    for (int k = 0; k < N; ++k)
        g.items[k] = static_cast<int64_t>(itemSizes[k]);
    for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] == 1)
            continue;
        bool merge = !g.sizes.empty();
        for (int k = 0; k < N && merge; ++k)
            merge = g.strides[k].back() == elemStrides[k][d] * static_cast<int64_t>(itemSizes[k]) * sizes[d];
        if (merge) {
            g.sizes.back() *= sizes[d];
            for (int k = 0; k < N; ++k)
                g.strides[k].back() = elemStrides[k][d] * static_cast<int64_t>(itemSizes[k]);
            continue;
        }
        g.sizes.push_back(sizes[d]);
        for (int k = 0; k < N; ++k)
            g.strides[k].push_back(elemStrides[k][d] * static_cast<int64_t>(itemSizes[k]));
    }
    if (g.sizes.empty()) { // a single element
        g.sizes.push_back(1);
        for (int k = 0; k < N; ++k)
            g.strides[k].push_back(0);
    }
    return g;
}

// --- streaming stores for large outputs -----------------------------------------------
// An output far larger than the caches is written back to memory anyway;
// plain stores first read every line they write (write-allocate), streaming
// stores do not. But a streamed output leaves the caches, and the next op
// reads it back from memory: the threshold is the larger of 12 MiB and half
// the last-level cache. Measured on a VM with a 32 MB L3, a chain of binary
// ops: 16% faster at 16 MiB per tensor, 3-10% slower at 2-8 MiB. On a Xeon VM
// with a 504 MB L3 the six ops of `pointwise` as a chain took 15-20% longer
// with 16 MiB tensors streamed, and were no faster streamed at 32-128 MiB.
// FUSESCOPE_STREAM_BYTES overrides the threshold (to measure on other machines).
int64_t streamBytes();
// What streamBytes() is without FUSESCOPE_STREAM_BYTES, for a last-level
// cache of `llcBytes` (0 when unknown).
int64_t streamBytesForCache(int64_t llcBytes);
// Sets the threshold for the rest of the process (tests; <= 0 restores the default).
void setStreamBytes(int64_t bytes);
// Elements computed into a stack block before they are streamed out.
constexpr int64_t kStreamBlock = 1024;

// Copies with non-temporal stores (a plain copy where the CPU has none);
// the thread that stored calls streamFence() before other threads read dst
// (once per parallel chunk: a fence per short run costs more than it saves).
void streamCopy(void *dst, const void *src, size_t bytes);
void streamFence();

// Below this many elements a loop runs on the calling thread.
constexpr int64_t kGrain = 32768;

// --- tiles for operands that lie across the innermost dim ---------------------------
// An operand whose innermost stride crosses cache lines while it is
// contiguous along another dim (the input of a transposed copy) was read a
// line per element, and each line again a row later, once evicted: x.T
// copied at 4.7-5.7 ns an element from [1024, 1024] to [4096, 4096]. Such
// iterations run in tiles of kTileRows along that dim by kTileCols along the
// innermost one, whose lines stay in L1 while the tile's rows use them:
// 0.55-0.70 ns with 32 x 128 tiles, 0.58-0.75 with 16 x 64, 0.62-0.83 with
// 16 x 256, 1.3-1.8 with 8 x 512.
constexpr int64_t kTileRows = 32, kTileCols = 128;

// The dim to tile with the innermost one, or -1.
template <int N>
int acrossDim(const Geometry<N> &g)
{
    const size_t nd = g.sizes.size();
    if (nd < 2 || g.sizes[nd - 1] < kTileCols / 4)
        return -1;
    for (int k = 0; k < N; ++k) {
        if (std::abs(g.strides[k][nd - 1]) < 64)
            continue;
        for (size_t d = 0; d + 1 < nd; ++d) {
            const int64_t s = std::abs(g.strides[k][d]);
            if (s > 0 && s <= 16 && g.sizes[d] >= kTileRows / 2) // one item apart: contiguous along d
                return static_cast<int>(d);
        }
    }
    return -1;
}

// dst[(r * cols + c) * item] = src[r * item + c * colStride] for r < rows,
// c < cols: a tile of an operand contiguous along the rows, made contiguous
// along the columns (8 x 8 blocks through AVX registers for 4-byte items).
void transposeTile(const char *src, int64_t colStride, int64_t item, int64_t rows, int64_t cols, char *dst);

template <int N, typename Inner>
void forEachTiled(const Geometry<N> &g, const std::array<char *, N> &base, Inner &&inner, int rowDim,
                  bool fenceStreams)
{
    const size_t nd = g.sizes.size(), td = static_cast<size_t>(rowDim);
    const int64_t rows = g.sizes[td], cols = g.sizes[nd - 1];
    const int64_t rowBlocks = (rows + kTileRows - 1) / kTileRows, colBlocks = (cols + kTileCols - 1) / kTileCols;
    const int64_t tiles = numelOf(g.sizes) / rows / cols * rowBlocks * colBlocks;
    std::array<int64_t, N> innerStrides;
    // Inputs lying across the rows (contiguous along the tiled dim) are
    // transposed a tile at a time into a buffer, which the rows then read
    // contiguously. Read an element a line, they kept the row loop scalar:
    // x.T + x.T took 2.7 ms for [1024,4096], 2.2 this way; x.T copied, 2.6
    // and 1.4 ms.
    std::array<int64_t, N> across{};
    for (int k = 0; k < N; ++k) {
        innerStrides[k] = g.strides[k][nd - 1];
        if (k > 0 && std::abs(innerStrides[k]) >= 64 && g.strides[k][td] == g.items[k])
            across[k] = g.items[k];
    }
    parallelFor(0, tiles, 1, [&](int64_t begin, int64_t end) {
        std::array<std::vector<char>, N> buffers;
        std::array<int64_t, N> strides = innerStrides;
        for (int k = 0; k < N; ++k) {
            if (across[k]) {
                buffers[k].resize(static_cast<size_t>(kTileRows * kTileCols * across[k]));
                strides[k] = across[k];
            }
        }
        for (int64_t t = begin; t < end; ++t) {
            const int64_t col = t % colBlocks * kTileCols, n = std::min(kTileCols, cols - col);
            int64_t rest = t / colBlocks;
            const int64_t row = rest % rowBlocks * kTileRows, rowEnd = std::min(row + kTileRows, rows);
            rest /= rowBlocks;
            std::array<char *, N> at;
            for (int k = 0; k < N; ++k)
                at[k] = base[k] + col * g.strides[k][nd - 1];
            for (size_t d = nd - 1; d-- > 0;) { // the other dims, innermost first
                if (d == td)
                    continue;
                for (int k = 0; k < N; ++k)
                    at[k] += rest % g.sizes[d] * g.strides[k][d];
                rest /= g.sizes[d];
            }
            for (int k = 0; k < N; ++k) {
                if (across[k])
                    transposeTile(at[k] + row * across[k], innerStrides[k], across[k], rowEnd - row, n,
                                  buffers[k].data());
            }
            for (int64_t r = row; r < rowEnd; ++r) {
                std::array<char *, N> ptrs;
                for (int k = 0; k < N; ++k)
                    ptrs[k] = across[k] ? buffers[k].data() + (r - row) * n * across[k] : at[k] + r * g.strides[k][td];
                inner(ptrs, strides, n);
            }
        }
        if (fenceStreams)
            streamFence();
    });
}

// Calls inner(ptrs, innerStrides, n) for runs along the innermost dim, over
// the whole iteration space, split across the pool by element ranges (or by
// tiles, see acrossDim).
template <int N, typename Inner>
void forEach(const Geometry<N> &g, const std::array<char *, N> &base, Inner &&inner, int64_t grain = kGrain,
             bool fenceStreams = false)
{
    const int64_t total = numelOf(g.sizes);
    if (total == 0)
        return;
    if (const int rowDim = acrossDim(g); rowDim >= 0 && total >= grain) {
        forEachTiled<N>(g, base, inner, rowDim, fenceStreams);
        return;
    }
    const size_t nd = g.sizes.size();
    const int64_t innerSize = g.sizes[nd - 1];
    std::array<int64_t, N> innerStrides;
    for (int k = 0; k < N; ++k)
        innerStrides[k] = g.strides[k][nd - 1];
    parallelFor(0, total, grain, [&](int64_t begin, int64_t end) {
        // Multi-index of `begin`, then walk run by run, moving the pointers
        // along with the index: recomputing them from the whole index cost
        // more than copying a run of 32-64 elements (a permuted copy, cat).
        Shape index(nd, 0);
        int64_t rest = begin;
        for (size_t d = nd; d-- > 0;) {
            index[d] = rest % g.sizes[d];
            rest /= g.sizes[d];
        }
        std::array<char *, N> ptrs;
        for (int k = 0; k < N; ++k) {
            int64_t off = 0;
            for (size_t d = 0; d < nd; ++d)
                off += index[d] * g.strides[k][d];
            ptrs[k] = base[k] + off;
        }
        int64_t pos = begin;
        while (pos < end) {
            const int64_t n = std::min(innerSize - index[nd - 1], end - pos);
            inner(ptrs, innerStrides, n);
            pos += n;
            index[nd - 1] += n;
            for (int k = 0; k < N; ++k)
                ptrs[k] += n * innerStrides[k];
            // A dim that reached its size goes back to 0 and carries into the one outside it.
            for (size_t d = nd - 1; d > 0 && index[d] >= g.sizes[d]; --d) {
                for (int k = 0; k < N; ++k)
                    ptrs[k] += g.strides[k][d - 1] - index[d] * g.strides[k][d];
                index[d] = 0;
                ++index[d - 1];
            }
        }
        if (fenceStreams)
            streamFence();
    });
}

// --- AVX-512 for the contiguous loops ------------------------------------------------
// The build targets x86-64-v3 (AVX2), but the CPUs that run the benchmarks
// have AVX-512: compute-bound kernels (gelu, sigmoid, exp) run about twice as
// fast with 16 lanes. The contiguous loops are therefore compiled twice, once
// more inside a function with the AVX-512 target that `flatten` inlines the
// loop and its scalar maths into, and the CPU picks one at run time.
// FUSESCOPE_NO_AVX512=1 forces the baseline loops (to compare or to test them).
bool wideVectors();

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
template <typename Loop>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), flatten)) void runWide(const Loop &loop)
{
    loop();
}

template <typename Loop>
void runVectorized(const Loop &loop)
{
    if (wideVectors())
        runWide(loop);
    else
        loop();
}
#else
template <typename Loop>
void runVectorized(const Loop &loop)
{
    loop();
}
#endif

// The contiguous loops of `pointwise`. Pointers are copied to locals so the
// compiler sees that stores to o cannot change them (a bool output would
// otherwise alias every captured pointer and block vectorization).
// o[i] = value(i) for i in [0, n): straight into o, or through a stack block
// and streaming stores when Stream.
template <bool Stream, typename Out, typename Value>
inline void storeRun(Out *o, int64_t n, const Value &value)
{
    if constexpr (!Stream) {
        for (int64_t i = 0; i < n; ++i)
            o[i] = value(i);
    } else {
        alignas(64) Out block[kStreamBlock];
        for (int64_t start = 0; start < n; start += kStreamBlock) {
            const int64_t m = std::min(kStreamBlock, n - start);
            for (int64_t i = 0; i < m; ++i)
                block[i] = value(start + i);
            streamCopy(o + start, block, size_t(m) * sizeof(Out));
        }
    }
}

// step is 1, or -1 for an input read backwards (a flip along the last dim):
// each vector then costs one permute, where the strided path took an element
// at a time (flip of [4096, 1024] f32 1.4-1.6 times PyTorch's time).
template <bool Stream, int Step, typename Out, typename In, typename F>
void contiguousUnary(Out *o, const In *a, int64_t n, const F &f)
{
    using C = compute_t<In>;
    using CO = compute_t<Out>;
    runVectorized([o, a, n, &f] { storeRun<Stream>(o, n, [a, &f](int64_t i) { return Out(CO(f(C(a[i * Step])))); }); });
}

// stepA / stepB are 1 (contiguous) or 0 (one value for the whole run).
template <bool Stream, int StepA, int StepB, typename Out, typename In, typename F>
void contiguousBinary(Out *o, const In *a, const In *b, int64_t n, const F &f)
{
    using C = compute_t<In>;
    using CO = compute_t<Out>;
    runVectorized([o, a, b, n, &f] {
        if constexpr (StepA == 0) {
            const C av = C(a[0]);
            storeRun<Stream>(o, n, [av, b, &f](int64_t i) { return Out(CO(f(av, C(b[i])))); });
        } else if constexpr (StepB == 0) {
            const C bv = C(b[0]);
            storeRun<Stream>(o, n, [a, bv, &f](int64_t i) { return Out(CO(f(C(a[i]), bv))); });
        } else {
            storeRun<Stream>(o, n, [a, b, &f](int64_t i) { return Out(CO(f(C(a[i]), C(b[i])))); });
        }
    });
}

// where's and masked_fill's loop: three inputs, the second or third may be
// one value for the run (stride 0). Without it they took the scalar strided
// path: where over 16 M floats 46 ms, against 6.7 for add.
template <bool Stream, int StepB, int StepC, typename Out, typename In, typename F>
void contiguousTernary(Out *o, const In *a, const In *b, const In *c, int64_t n, const F &f)
{
    using C = compute_t<In>;
    using CO = compute_t<Out>;
    runVectorized([o, a, b, c, n, &f] {
        storeRun<Stream>(o, n, [a, b, c, &f](int64_t i) {
            return Out(CO(f(C(a[i]), C(b[i * StepB]), C(c[i * StepC]))));
        });
    });
}

// Runs the contiguous loop for this run's strides; false when none fits.
template <bool Stream, typename Out, typename In, int N, typename F>
bool tryContiguous(const std::array<char *, N> &p, const std::array<int64_t, N> &s, int64_t n, const F &f)
{
    Out *o = reinterpret_cast<Out *>(p[0]);
    if (s[0] != int64_t(sizeof(Out)))
        return false;
    const int64_t one = sizeof(In);
    if constexpr (N == 2) {
        if (s[1] == one)
            contiguousUnary<Stream, 1>(o, reinterpret_cast<const In *>(p[1]), n, f);
        else if (s[1] == -one)
            contiguousUnary<Stream, -1>(o, reinterpret_cast<const In *>(p[1]), n, f);
        else
            return false;
        return true;
    } else if constexpr (N == 3) {
        const In *a = reinterpret_cast<const In *>(p[1]), *b = reinterpret_cast<const In *>(p[2]);
        if (s[1] == one && s[2] == one)
            contiguousBinary<Stream, 1, 1>(o, a, b, n, f);
        else if (s[1] == one && s[2] == 0)
            contiguousBinary<Stream, 1, 0>(o, a, b, n, f);
        else if (s[1] == 0 && s[2] == one)
            contiguousBinary<Stream, 0, 1>(o, a, b, n, f);
        else
            return false;
        return true;
    } else if constexpr (N == 4) {
        const In *a = reinterpret_cast<const In *>(p[1]), *b = reinterpret_cast<const In *>(p[2]),
                 *c = reinterpret_cast<const In *>(p[3]);
        if (s[1] != one)
            return false;
        if (s[2] == one && s[3] == one)
            contiguousTernary<Stream, 1, 1>(o, a, b, c, n, f);
        else if (s[2] == 0 && s[3] == one)
            contiguousTernary<Stream, 0, 1>(o, a, b, c, n, f);
        else if (s[2] == one && s[3] == 0)
            contiguousTernary<Stream, 1, 0>(o, a, b, c, n, f);
        else
            return false;
        return true;
    }
    return false;
}

// out (contiguous or not) = f(ins...) elementwise, inputs already broadcast-
// compatible with out and of type In; f works on compute_t<In> and returns
// something convertible to compute_t<Out>.
template <typename Out, typename In, int NIn, typename F>
void pointwise(const Tensor &out, const std::array<Tensor, NIn> &ins, F f)
{
    constexpr int N = NIn + 1;
    std::array<Shape, N> strides;
    std::array<size_t, N> items;
    std::array<char *, N> base;
    strides[0] = out.strides();
    items[0] = sizeof(Out);
    base[0] = static_cast<char *>(out.rawData());
    for (int k = 0; k < NIn; ++k) {
        strides[k + 1] = broadcastStrides(ins[k], out.sizes());
        items[k + 1] = sizeof(In);
        base[k + 1] = static_cast<char *>(ins[k].rawData());
    }
    const Geometry<N> g = coalesce<N>(out.sizes(), strides, items);
    using C = compute_t<In>;
    using CO = compute_t<Out>;
    const bool stream = static_cast<int64_t>(out.nbytes()) >= streamBytes();
    forEach<N>(g, base, [&](const std::array<char *, N> &p, const std::array<int64_t, N> &s, int64_t n) {
        if (stream ? tryContiguous<true, Out, In, N>(p, s, n, f) : tryContiguous<false, Out, In, N>(p, s, n, f))
            return;
        // General strided path.
        std::array<char *, N> q = p;
        for (int64_t i = 0; i < n; ++i) {
            [&]<size_t... K>(std::index_sequence<K...>) {
                *reinterpret_cast<Out *>(q[0]) = Out(CO(f(C(*reinterpret_cast<const In *>(q[K + 1]))...)));
            }(std::make_index_sequence<NIn>{});
            for (int k = 0; k < N; ++k)
                q[k] += s[k];
        }
    }, kGrain, stream);
}

// Copies src into dst (same shape, any strides), converting dtypes.
void copyInto(const Tensor &dst, const Tensor &src);
// t itself when it already has `dtype`, else a converted copy (kernels'
// internal conversions: no op event, unlike Tensor::to).
Tensor asDType(const Tensor &t, DType dtype);
// t itself when contiguous with `dtype`, else a contiguous converted copy.
Tensor contiguousAs(const Tensor &t, DType dtype);

} // namespace fusescope::loops
