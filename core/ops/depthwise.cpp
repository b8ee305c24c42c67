// The plane loops of core/ops/conv.cpp sum a band of output rows tap row by
// tap row through an accumulator in memory (each pass loading and storing it
// again), then copy the valid columns out, a library call per row: on
// MobileNet v2's 32 channels at 112x112 the copies alone took a third of the
// time. Here a block of 4 output rows by 32 pixels sums all its taps in 8
// registers and is stored once, straight into the output plane (the last
// vector of a row under a mask). Each input row is loaded once per block as
// aligned vectors (the phase pitch is a multiple of 16) and feeds every
// output row of the block that reads it; a tap one or more columns on is two
// of those vectors spliced, not an unaligned load that straddles two cache
// lines. K, S and R are template parameters, so the loops over taps and rows
// unroll into straight-line code in which every tap index is a constant.
#include "core/ops/depthwise.h"

#include "core/ops/loops.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define FUSESCOPE_DEPTHWISE_AVX512 1
#include <immintrin.h>
#endif

namespace fusescope::depthwise {

#ifdef FUSESCOPE_DEPTHWISE_AVX512
namespace {

#define FUSESCOPE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

constexpr int64_t kLanes = 16;
constexpr int kRows = 4; // output rows per block

// Lanes [lo, hi) of a vector, clipped to [0, 16).
__mmask16 span(int64_t lo, int64_t hi)
{
    lo = std::clamp<int64_t>(lo, 0, kLanes);
    hi = std::clamp<int64_t>(hi, lo, kLanes);
    return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// Up to 16 floats from src + at (lanes of `m` only; at may be negative: the
// lanes before the row are masked off, so nothing outside it is read).
FUSESCOPE_AVX512 __m512 loadMasked(const float *src, int64_t at, __mmask16 m)
{
    const auto address = reinterpret_cast<uintptr_t>(src) + static_cast<uintptr_t>(at) * sizeof(float);
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float *>(address));
}

// The input plane is read once, by the fill: the next plane's rows are
// fetched while this one's taps are summed.
void prefetchRow(const float *row, int64_t n)
{
    for (int64_t j = 0; j < n; j += kLanes)
        __builtin_prefetch(row + j);
}

// Stride 1: padded row = pad zeros, the input row, zeros up to the pitch.
FUSESCOPE_AVX512 void fillRow1(const float *row, const Layout &l, float *dst)
{
    for (int64_t j0 = 0; j0 < l.pitch; j0 += kLanes) {
        const int64_t first = j0 - l.padW; // input column of lane 0
        const __mmask16 m = row ? span(-first, l.inW - first) : 0;
        _mm512_store_ps(dst + j0, m ? loadMasked(row, first, m) : _mm512_setzero_ps());
    }
}

// Stride 2: phase c, column j = input column 2j + c - pad. 32 input columns
// from 2 j0 - pad hold 16 columns of each phase: the even lanes for phase 0,
// the odd ones for phase 1.
FUSESCOPE_AVX512 void fillRow2(const float *row, const Layout &l, float *dst0, float *dst1)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (int64_t j0 = 0; j0 < l.pitch; j0 += kLanes) {
        const int64_t first = 2 * j0 - l.padW;
        __m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
        if (row) {
            a = loadMasked(row, first, span(-first, l.inW - first));
            b = loadMasked(row, first + kLanes, span(-first - kLanes, l.inW - first - kLanes));
        }
        _mm512_store_ps(dst0 + j0, _mm512_permutex2var_ps(a, even, b));
        _mm512_store_ps(dst1 + j0, _mm512_permutex2var_ps(a, odd, b));
    }
}

// lo shifted down by s lanes, hi's first s lanes after it (s a constant once
// unrolled). The masked form: the plain one passes GCC 12 an undefined
// vector that -Wmaybe-uninitialized reports.
FUSESCOPE_AVX512 __attribute__((always_inline)) inline __m512 shifted(__m512 lo, __m512 hi, int s)
{
    const __m512i a = _mm512_castps_si512(lo), b = _mm512_castps_si512(hi);
    switch (s) {
    case 1: return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(a, 0xffff, b, a, 1));
    case 2: return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(a, 0xffff, b, a, 2));
    case 3: return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(a, 0xffff, b, a, 3));
    case 4: return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(a, 0xffff, b, a, 4));
    default: return lo;
    }
}

// Output rows [oh0, oh0 + R), pixels [ow0, ow0 + 16V) (the lanes of `last` in
// the last vector). Phase (pr, pc) holds the taps ki = pr (mod S), kj = pc
// (mod S); phase row oh0 + j is tap row ki of output row oh0 + j - ki / S.
template <int K, int S, int R, int V>
FUSESCOPE_AVX512 __attribute__((always_inline)) inline void
block(const Phased &in, const __m512 (&wv)[K * K], __m512 bias, float *out, int64_t outW, int64_t oh0, int64_t ow0,
      __mmask16 last)
{
    __m512 acc[R][V];
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
        #pragma GCC unroll 2
        for (int v = 0; v < V; ++v)
            acc[r][v] = bias;
    #pragma GCC unroll 2
    for (int pr = 0; pr < S; ++pr) {
        #pragma GCC unroll 2
        for (int pc = 0; pc < S; ++pc) {
            const float *base = in.data + (pr * S + pc) * in.size + oh0 * in.pitch + ow0;
            #pragma GCC unroll 8
            for (int j = 0; j < R + (K - 1 - pr) / S; ++j) {
                // The row's vectors, aligned; a tap kj / S columns on is two of them spliced.
                __m512 xs[V + 1];
                #pragma GCC unroll 3
                for (int v = 0; v <= V; ++v)
                    xs[v] = _mm512_load_ps(base + j * in.pitch + v * kLanes);
                #pragma GCC unroll 5
                for (int kj = pc; kj < K; kj += S) {
                    __m512 x[V];
                    #pragma GCC unroll 2
                    for (int v = 0; v < V; ++v)
                        x[v] = shifted(xs[v], xs[v + 1], kj / S);
                    #pragma GCC unroll 5
                    for (int ki = pr; ki < K; ki += S) {
                        const int r = j - ki / S;
                        if (r < 0 || r >= R)
                            continue;
                        #pragma GCC unroll 2
                        for (int v = 0; v < V; ++v)
                            acc[r][v] = _mm512_fmadd_ps(wv[ki * K + kj], x[v], acc[r][v]);
                    }
                }
            }
        }
    }
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        float *row = out + (oh0 + r) * outW + ow0;
        #pragma GCC unroll 2
        for (int v = 0; v + 1 < V; ++v)
            _mm512_storeu_ps(row + v * kLanes, acc[r][v]);
        _mm512_mask_storeu_ps(row + (V - 1) * kLanes, last, acc[r][V - 1]);
    }
}

// One row block across the plane: 32-pixel blocks, then 16 or fewer.
template <int K, int S, int R>
FUSESCOPE_AVX512 __attribute__((always_inline)) inline void
rowSweep(const Phased &in, const __m512 (&wv)[K * K], __m512 bias, float *out, int64_t outW, int64_t oh0)
{
    int64_t ow0 = 0;
    for (; ow0 + 2 * kLanes <= outW; ow0 += 2 * kLanes)
        block<K, S, R, 2>(in, wv, bias, out, outW, oh0, ow0, span(0, kLanes));
    if (ow0 + kLanes < outW)
        block<K, S, R, 2>(in, wv, bias, out, outW, oh0, ow0, span(0, outW - ow0 - kLanes));
    else if (ow0 < outW)
        block<K, S, R, 1>(in, wv, bias, out, outW, oh0, ow0, span(0, outW - ow0));
}

template <int K, int S>
FUSESCOPE_AVX512 void plane(const Phased &in, const float *w, float bias, float *out, int64_t outH, int64_t outW)
{
    __m512 wv[K * K];
    for (int i = 0; i < K * K; ++i)
        wv[i] = _mm512_set1_ps(w[i]);
    const __m512 b = _mm512_set1_ps(bias);
    int64_t oh0 = 0;
    for (; oh0 + kRows <= outH; oh0 += kRows)
        rowSweep<K, S, kRows>(in, wv, b, out, outW, oh0);
    for (; oh0 < outH; ++oh0)
        rowSweep<K, S, 1>(in, wv, b, out, outW, oh0);
}

// Taps outermost: a tap's weight is broadcast once for the whole plane, and
// each pair of output rows keeps its sum in a register (at most 4 pairs).
template <int K, bool OneRun>
FUSESCOPE_AVX512 void smallPlane(const SmallPlanes::Load *loads, int64_t pairs, const int32_t *permutation,
                                 const float *in, const float *w, float bias, float *out, int64_t outH, int64_t outW)
{
    constexpr int kMaxPairs = 4;
    const __m512i perm = _mm512_loadu_si512(permutation);
    __m512 acc[kMaxPairs];
    for (int q = 0; q < kMaxPairs; ++q)
        acc[q] = _mm512_set1_ps(bias);
    for (int t = 0; t < K * K; ++t) {
        const __m512 wv = _mm512_set1_ps(w[t]);
        for (int64_t q = 0; q < pairs; ++q) {
            const SmallPlanes::Load *l = loads + (t * pairs + q) * (OneRun ? 1 : 2);
            __m512 v = loadMasked(in, l[0].at, l[0].lanes);
            if constexpr (!OneRun)
                v = _mm512_permutex2var_ps(v, perm, loadMasked(in, l[1].at, l[1].lanes));
            acc[q] = _mm512_fmadd_ps(wv, v, acc[q]);
        }
    }
    for (int64_t q = 0; q < pairs; ++q)
        _mm512_mask_storeu_ps(out + 2 * q * outW, span(0, std::min<int64_t>(2, outH - 2 * q) * outW), acc[q]);
}

// One input row's load at a tap: lane j reads column col0 + j of input row
// `row`; `lanes` are the columns inside the row, none where the row is padding.
SmallPlanes::Load rowLoad(const SmallPlane &p, int64_t row, int64_t col0, uint16_t lanes)
{
    const bool inside = row >= 0 && row < p.inH;
    return {row * p.inW + col0, inside ? lanes : uint16_t(0)};
}

// What both kernels take: the CPU has AVX-512, square 3x3 or 5x5 taps,
// undilated, stride 1 or 2 both ways.
bool tapsFit(int64_t kernelH, int64_t kernelW, int64_t strideH, int64_t strideW, int64_t dilationH, int64_t dilationW)
{
    return loops::wideVectors() && kernelH == kernelW && (kernelH == 3 || kernelH == 5) && strideH == strideW &&
           (strideH == 1 || strideH == 2) && dilationH == 1 && dilationW == 1;
}

} // namespace

bool smallWorthIt(int64_t kernelH, int64_t kernelW, int64_t strideH, int64_t strideW, int64_t dilationH,
                  int64_t dilationW, int64_t outH, int64_t outW)
{
    return tapsFit(kernelH, kernelW, strideH, strideW, dilationH, dilationW) && outW >= 6 && outW <= 8 && outH >= 1 &&
           outH <= 8;
}

SmallPlanes::SmallPlanes(const SmallPlane &p)
    : m_p(p), m_oneRun(p.stride == 1 && p.inW == p.outW), m_pairs((p.outH + 1) / 2), m_permutation(kLanes, 0)
{
    for (int64_t c = 0; c < p.outW; ++c) {
        m_permutation[static_cast<size_t>(c)] = static_cast<int32_t>(c * p.stride);
        m_permutation[static_cast<size_t>(p.outW + c)] = static_cast<int32_t>(kLanes + c * p.stride);
    }
    for (int64_t ki = 0; ki < p.kernel; ++ki) {
        for (int64_t kj = 0; kj < p.kernel; ++kj) {
            const int64_t col0 = kj - p.padW;
            for (int64_t q = 0; q < m_pairs; ++q) {
                const int64_t a = 2 * q * p.stride + ki - p.padH, b = a + p.stride;
                const bool second = 2 * q + 1 < p.outH;
                if (!m_oneRun) {
                    const uint16_t cols = span(-col0, p.inW - col0);
                    m_loads.push_back(rowLoad(p, a, col0, cols));
                    m_loads.push_back(rowLoad(p, b, col0, second ? cols : uint16_t(0)));
                    continue;
                }
                // Lane r * outW + c: output row 2q + r, column c, reading input row a + r, column c + col0.
                uint16_t lanes = 0;
                for (int64_t r = 0; r < (second ? 2 : 1); ++r) {
                    const int64_t row = a + r;
                    const int64_t first = r * p.outW + std::max<int64_t>(0, -col0);
                    if (row >= 0 && row < p.inH)
                        lanes |= span(first, r * p.outW + std::min(p.outW, p.inW - col0));
                }
                m_loads.push_back({a * p.inW + col0, lanes});
            }
        }
    }
}

void SmallPlanes::run(const float *in, const float *w, float bias, float *out) const
{
    const int k = static_cast<int>(m_p.kernel);
    const Load *l = m_loads.data();
    const int32_t *perm = m_permutation.data();
    if (k == 3 && m_oneRun)
        return smallPlane<3, true>(l, m_pairs, perm, in, w, bias, out, m_p.outH, m_p.outW);
    if (k == 3)
        return smallPlane<3, false>(l, m_pairs, perm, in, w, bias, out, m_p.outH, m_p.outW);
    if (k == 5 && m_oneRun)
        return smallPlane<5, true>(l, m_pairs, perm, in, w, bias, out, m_p.outH, m_p.outW);
    if (k == 5)
        return smallPlane<5, false>(l, m_pairs, perm, in, w, bias, out, m_p.outH, m_p.outW);
    throw std::logic_error("depthwise::SmallPlanes: unsupported kernel");
}

bool worthIt(int64_t kernelH, int64_t kernelW, int64_t strideH, int64_t strideW, int64_t dilationH,
             int64_t dilationW, int64_t outW)
{
    return tapsFit(kernelH, kernelW, strideH, strideW, dilationH, dilationW) && outW >= 14;
}

void fillWide(const float *plane, const Layout &l, float *dst, const float *next)
{
    const int64_t size = l.rows * l.pitch, s = l.stride;
    for (int64_t r = 0; r < s; ++r) {
        for (int64_t i = 0; i < l.rows; ++i) {
            const int64_t ih = i * s + r - l.padH;
            const float *row = ih >= 0 && ih < l.inH ? plane + ih * l.inW : nullptr;
            if (row && next)
                prefetchRow(next + ih * l.inW, l.inW);
            float *d = dst + r * s * size + i * l.pitch;
            if (s == 1)
                fillRow1(row, l, d);
            else
                fillRow2(row, l, d, d + size);
        }
    }
}

void planeWide(int64_t kernel, int64_t stride, const Phased &in, const float *w, float bias, float *out, int64_t outH,
               int64_t outW)
{
    if (kernel == 3 && stride == 1)
        return plane<3, 1>(in, w, bias, out, outH, outW);
    if (kernel == 3 && stride == 2)
        return plane<3, 2>(in, w, bias, out, outH, outW);
    if (kernel == 5 && stride == 1)
        return plane<5, 1>(in, w, bias, out, outH, outW);
    if (kernel == 5 && stride == 2)
        return plane<5, 2>(in, w, bias, out, outH, outW);
    throw std::logic_error("depthwise::planeWide: unsupported kernel or stride");
}

#else

bool smallWorthIt(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t)
{
    return false;
}

SmallPlanes::SmallPlanes(const SmallPlane &p) : m_p(p) {}

void SmallPlanes::run(const float *, const float *, float, float *) const
{
    throw std::logic_error("depthwise::SmallPlanes without AVX-512 support compiled in");
}

bool worthIt(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t)
{
    return false;
}

void fillWide(const float *, const Layout &, float *, const float *)
{
    throw std::logic_error("depthwise::fillWide without AVX-512 support compiled in");
}

void planeWide(int64_t, int64_t, const Phased &, const float *, float, float *, int64_t, int64_t)
{
    throw std::logic_error("depthwise::planeWide without AVX-512 support compiled in");
}

#endif

} // namespace fusescope::depthwise
