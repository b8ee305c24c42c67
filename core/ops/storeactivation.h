// What a convolution kernel applies to each output value as it stores it:
// relu or clamp taken into the convolution by the compiler
// (fusescope.conv2d_relu, fusescope.conv2d_clamp, conv2d_winograd's relu,
// min and max). The arithmetic is the pointwise ops' own (scalarmath.h), so
// the result equals the separate op's bit for bit.
#pragma once

#include "core/ops/scalarmath.h"
#include "core/ops/value.h"

#include <cstdint>
#include <limits>

namespace fusescope {

struct StoreActivation {
    enum class Kind : uint8_t { None, Relu, Clamp };
    Kind kind = Kind::None;
    // Clamp's bounds; an absent one is infinite, which sm::clamp leaves alone.
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();

    static StoreActivation relu() { return {Kind::Relu}; }
    // Clamp by the bounds at a[first] and a[first + 1], as aten.clamp takes
    // them: None, or past the end of `a`, for no bound.
    static StoreActivation clampBounds(const Args &a, size_t first)
    {
        StoreActivation act{Kind::Clamp};
        if (a.size() > first && !a[first].isNone())
            act.lo = a[first].toDouble();
        if (a.size() > first + 1 && !a[first + 1].isNone())
            act.hi = a[first + 1].toDouble();
        return act;
    }
    bool any() const { return kind != Kind::None; }

    // In place over `count` rows of `width` values, `stride` apart: right
    // after a kernel stored them, while they are in cache.
    template <typename T>
    void apply(T *rows, int64_t count, int64_t width, int64_t stride) const
    {
        for (int64_t r = 0; r < count; ++r) {
            T *row = rows + r * stride;
            if (kind == Kind::Relu) {
                for (int64_t i = 0; i < width; ++i)
                    row[i] = sm::relu(row[i]);
            } else if (kind == Kind::Clamp) {
                // sm::clamp written so that GCC vectorizes it (its nested
                // selects ran as branches, 7 ns a value): the same result.
                const T l = T(lo), h = T(hi);
                for (int64_t i = 0; i < width; ++i) {
                    const T x = row[i];
                    T y = x < l ? l : x;
                    y = y > h ? h : y;
                    row[i] = x != x ? x : y;
                }
            }
        }
    }
};

} // namespace fusescope
