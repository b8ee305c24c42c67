#pragma once
// Helpers the fused normalization and attention kernels share (core/ops
// internal): the compute dtype of 16-bit floats, row chunking, and row
// reductions written so GCC vectorizes them.

#include "core/ops/functional.h"
#include "core/ops/loops.h"
#include "core/ops/scalarmath.h"

#include <algorithm>
#include <limits>
#include <string>

namespace fusescope::rowmath {

// The dtype kernels compute in: f32 for the 16-bit floats.
inline DType computeDType(DType t)
{
    return t == DType::F16 || t == DType::BF16 ? DType::F32 : t;
}

inline void requireFloating(const char *op, const char *what, const Tensor &t)
{
    if (!isFloating(t.dtype()))
        throw Error(std::string(op) + ": " + what + " must be a floating-point tensor, got " + dtypeName(t.dtype())
                    + " of shape " + shapeStr(t.sizes()));
}

// Rows of `work` elements each: enough of them per chunk to be worth a thread.
inline int64_t grainFor(int64_t work)
{
    return std::max<int64_t>(1, loops::kGrain / std::max<int64_t>(1, work));
}

// Decompositions compute 16-bit inputs in f32 and round once at the end, as
// the kernels do.
inline Tensor upcast(const Tensor &t)
{
    const DType c = computeDType(t.dtype());
    return c == t.dtype() ? t : ops::cast(t, c);
}

inline Tensor castBack(const Tensor &t, DType dtype)
{
    return t.dtype() == dtype ? t : ops::cast(t, dtype);
}

// Independent accumulators: IEEE order would otherwise keep a reduction
// serial, with them the compiler vectorizes it.
constexpr int kLanes = 16;

template <typename C, typename Term>
C laneSum(int64_t n, Term term)
{
    C acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (int k = 0; k < kLanes; ++k)
            acc[k] += term(i + k);
    }
    for (; i < n; ++i)
        acc[0] += term(i);
    C s = 0;
    for (int k = 0; k < kLanes; ++k)
        s += acc[k];
    return s;
}

// NaNs are skipped here; they still poison the exp-sum that follows. More
// lanes than laneSum: GCC unrolls a 16-lane max loop completely and then
// fails to vectorize it, a 32-lane one becomes vector max instructions.
constexpr int kMaxLanes = 32;

template <typename C>
C rowMax(const C *x, int64_t n)
{
    C acc[kMaxLanes];
    std::fill(acc, acc + kMaxLanes, -std::numeric_limits<C>::infinity());
    int64_t i = 0;
    for (; i + kMaxLanes <= n; i += kMaxLanes) {
        const C *block = x + i;
        for (int k = 0; k < kMaxLanes; ++k)
            acc[k] = block[k] > acc[k] ? block[k] : acc[k];
    }
    for (; i < n; ++i)
        acc[0] = x[i] > acc[0] ? x[i] : acc[0];
    C m = acc[0];
    for (int k = 1; k < kMaxLanes; ++k)
        m = acc[k] > m ? acc[k] : m;
    return m;
}

// y[i] = exp(x[i] - m) / (the sum of them) for i < n: softmax given its row's
// maximum m; y may be x.
template <typename C>
void expNormalize(const C *x, C *y, int64_t n, C m)
{
    const C sum = laneSum<C>(n, [&](int64_t i) {
        const C e = sm::exp(x[i] - m);
        y[i] = e;
        return e;
    });
    const C inv = C(1) / sum;
    for (int64_t i = 0; i < n; ++i)
        y[i] *= inv;
}

} // namespace fusescope::rowmath
