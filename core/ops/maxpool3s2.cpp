#include "core/ops/maxpool3s2.h"

#include "core/ops/loops.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace fusescope::maxpool3s2 {

namespace {

#define FUSESCOPE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

// max(earlier, later) as the scalar kernels take it: NaN when either is, and
// `earlier` when they are equal. vmaxps returns its second operand when they
// are equal or either is NaN, so `earlier` goes second and a NaN `later` is
// put back.
FUSESCOPE_AVX512 inline __m512 maxNan(__m512 earlier, __m512 later)
{
    // The masked form: GCC 12's _mm512_max_ps passes an undefined vector that -Wmaybe-uninitialized flags.
    const __m512 larger = _mm512_mask_max_ps(earlier, __mmask16(0xffff), later, earlier);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(later, later, _CMP_UNORD_Q), larger, later);
}

// 16 columns from `column` on, -inf (untouched) outside [0, width). The
// address is formed as an integer: `column` may be before the row's start.
FUSESCOPE_AVX512 inline __m512 loadColumns(const float *row, int64_t column, int64_t width)
{
    const int64_t lo = std::clamp<int64_t>(-column, 0, 16), hi = std::clamp<int64_t>(width - column, 0, 16);
    const auto mask = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
    const auto at = reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(column) * sizeof(float);
    return _mm512_mask_loadu_ps(_mm512_set1_ps(-std::numeric_limits<float>::infinity()), mask,
                                reinterpret_cast<const float *>(at));
}

// max(row[c], row[c + 1], row[c + 2]) for the 16 windows from c = 2o - pad
// on: the even and odd lanes of two vectors, and the even lanes of the two a
// step on. Only the windows at the row's ends (`edge`) mask their loads.
template <bool edge>
FUSESCOPE_AVX512 inline __m512 windows16(const float *row, int64_t c, int64_t width)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512 v[4];
    for (int i = 0; i < 4; ++i) {
        const int64_t column = c + (i & 1) * 16 + (i >> 1) * 2; // c, c + 16, c + 2, c + 18
        v[i] = edge ? loadColumns(row, column, width) : _mm512_loadu_ps(row + column);
    }
    const __m512 first = _mm512_permutex2var_ps(v[0], even, v[1]), second = _mm512_permutex2var_ps(v[0], odd, v[1]);
    return maxNan(maxNan(first, second), _mm512_permutex2var_ps(v[2], even, v[3]));
}

// dst[o] = max(row[c], row[c + 1], row[c + 2]), c = 2o - pad, o < n; whole
// vectors are stored.
FUSESCOPE_AVX512 void rowWindows(float *dst, const float *row, int64_t width, int64_t pad, int64_t n)
{
    for (int64_t o = 0; o < n; o += 16) {
        const int64_t c = 2 * o - pad;
        const bool inside = c >= 0 && c + 34 <= width;
        _mm512_storeu_ps(dst + o, inside ? windows16<false>(row, c, width) : windows16<true>(row, c, width));
    }
}

// dst[o] = the maximum of rows[0..count)[o] in their order, o < n.
FUSESCOPE_AVX512 void maxOfRows(float *dst, const float *const *rows, int count, int64_t n)
{
    for (int64_t o = 0; o < n; o += 16) {
        const auto mask = static_cast<__mmask16>(n - o >= 16 ? 0xffffu : (1u << (n - o)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(mask, rows[0] + o);
        for (int r = 1; r < count; ++r)
            v = maxNan(v, _mm512_maskz_loadu_ps(mask, rows[r] + o));
        _mm512_mask_storeu_ps(dst + o, mask, v);
    }
}

int64_t pitch(const Plane &p)
{
    return (p.outW + 15) / 16 * 16; // rowWindows stores whole vectors
}

} // namespace

bool available()
{
    return loops::wideVectors();
}

std::vector<float> scratch(const Plane &p)
{
    return std::vector<float>(static_cast<size_t>(p.inH * pitch(p)));
}

// Each input row's windows once (most rows serve two output rows), then the
// rows of each output row's window.
void pool(const Plane &p, const float *x, float *out, std::vector<float> &scratch)
{
    const int64_t rowPitch = pitch(p);
    for (int64_t ih = 0; ih < p.inH; ++ih)
        rowWindows(scratch.data() + ih * rowPitch, x + ih * p.inW, p.inW, p.padW, p.outW);
    for (int64_t oh = 0; oh < p.outH; ++oh) {
        const float *rows[3];
        int count = 0;
        for (int64_t ih = 2 * oh - p.padH; ih < 2 * oh - p.padH + 3; ++ih) {
            if (ih >= 0 && ih < p.inH)
                rows[count++] = scratch.data() + ih * rowPitch;
        }
        if (count == 0) { // not for aten.max_pool2d's output sizes; kept safe all the same
            std::fill(out + oh * p.outW, out + (oh + 1) * p.outW, -std::numeric_limits<float>::infinity());
            continue;
        }
        maxOfRows(out + oh * p.outW, rows, count, p.outW);
    }
}

} // namespace fusescope::maxpool3s2
