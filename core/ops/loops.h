#pragma once
// The strided-loop engine every eager kernel is built on: broadcasting,
// dimension coalescing, parallel splitting, and contiguous fast paths the
// compiler can vectorize.

#include "core/ops/registry.h"
#include "core/runtime/threadpool.h"

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
};

template <int N>
Geometry<N> coalesce(const Shape &sizes, const std::array<Shape, N> &elemStrides, const std::array<size_t, N> &itemSizes)
{
    Geometry<N> g;
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

// Below this many elements a loop runs on the calling thread.
constexpr int64_t kGrain = 32768;

// Calls inner(ptrs, innerStrides, n) for runs along the innermost dim, over
// the whole iteration space, split across the pool by element ranges.
template <int N, typename Inner>
void forEach(const Geometry<N> &g, const std::array<char *, N> &base, Inner &&inner, int64_t grain = kGrain)
{
    const int64_t total = numelOf(g.sizes);
    if (total == 0)
        return;
    const size_t nd = g.sizes.size();
    const int64_t innerSize = g.sizes[nd - 1];
    std::array<int64_t, N> innerStrides;
    for (int k = 0; k < N; ++k)
        innerStrides[k] = g.strides[k][nd - 1];
    parallelFor(0, total, grain, [&](int64_t begin, int64_t end) {
        // Multi-index of `begin`, then walk row by row.
        Shape index(nd, 0);
        int64_t rest = begin;
        for (size_t d = nd; d-- > 0;) {
            index[d] = rest % g.sizes[d];
            rest /= g.sizes[d];
        }
        int64_t pos = begin;
        while (pos < end) {
            std::array<char *, N> ptrs;
            for (int k = 0; k < N; ++k) {
                int64_t off = 0;
                for (size_t d = 0; d < nd; ++d)
                    off += index[d] * g.strides[k][d];
                ptrs[k] = base[k] + off;
            }
            const int64_t n = std::min(innerSize - index[nd - 1], end - pos);
            inner(ptrs, innerStrides, n);
            pos += n;
            index[nd - 1] += n;
            for (size_t d = nd - 1; d > 0 && index[d] >= g.sizes[d]; --d) {
                index[d] = 0;
                ++index[d - 1];
            }
        }
    });
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
    forEach<N>(g, base, [&](const std::array<char *, N> &p, const std::array<int64_t, N> &s, int64_t n) {
        Out *o = reinterpret_cast<Out *>(p[0]);
        if constexpr (NIn == 1) {
            const In *a = reinterpret_cast<const In *>(p[1]);
            if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
                for (int64_t i = 0; i < n; ++i)
                    o[i] = Out(CO(f(C(a[i]))));
                return;
            }
        } else if constexpr (NIn == 2) {
            const In *a = reinterpret_cast<const In *>(p[1]);
            const In *b = reinterpret_cast<const In *>(p[2]);
            if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
                for (int64_t i = 0; i < n; ++i)
                    o[i] = Out(CO(f(C(a[i]), C(b[i]))));
                return;
            }
            if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
                const C bv = C(b[0]);
                for (int64_t i = 0; i < n; ++i)
                    o[i] = Out(CO(f(C(a[i]), bv)));
                return;
            }
            if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(In)) {
                const C av = C(a[0]);
                for (int64_t i = 0; i < n; ++i)
                    o[i] = Out(CO(f(av, C(b[i]))));
                return;
            }
        }
        // General strided path.
        std::array<char *, N> q = p;
        for (int64_t i = 0; i < n; ++i) {
            [&]<size_t... K>(std::index_sequence<K...>) {
                *reinterpret_cast<Out *>(q[0]) = Out(CO(f(C(*reinterpret_cast<const In *>(q[K + 1]))...)));
            }(std::make_index_sequence<NIn>{});
            for (int k = 0; k < N; ++k)
                q[k] += s[k];
        }
    });
}

// Copies src into dst (same shape, any strides), converting dtypes.
void copyInto(const Tensor &dst, const Tensor &src);
// t itself when it already has `dtype`, else a converted copy (kernels'
// internal conversions: no op event, unlike Tensor::to).
Tensor asDType(const Tensor &t, DType dtype);
// t itself when contiguous with `dtype`, else a contiguous converted copy.
Tensor contiguousAs(const Tensor &t, DType dtype);

} // namespace fusescope::loops
