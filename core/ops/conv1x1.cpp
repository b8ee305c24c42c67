// A 1x1 convolution is a GEMM per image and group, [outC x inC] by
// [inC x pixels], whose right operand is the input image as it lies. BLAS
// packs both operands on every call, which pays for large square products
// but not for the short ones of a CNN at batch 1: 32 input channels at 56x56,
// or 49 pixels at 7x7. Here a block of 8 output channels by 48 pixels (6 by
// 64 at the end of a row) accumulates in 24 AVX-512 registers over the input
// channels, reading each weight as a broadcast and each input row where it
// lies; a row's last vector is loaded and stored under a mask.
#include "core/ops/conv1x1.h"

#include "core/ops/loops.h"
#include "core/runtime/threadpool.h"

#include <algorithm>
#include <stdexcept>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define FUSESCOPE_CONV1X1_AVX512 1
#include <immintrin.h>
#endif

namespace fusescope::conv1x1 {

#ifdef FUSESCOPE_CONV1X1_AVX512
namespace {

#define FUSESCOPE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

constexpr int64_t kLanes = 16;
constexpr int64_t kVectors = 3;           // 16-pixel vectors per block, 4 in a row's last one
constexpr int64_t kMinPixels = 2 * kLanes; // below, most lanes would idle
constexpr int64_t kRowUnit = 4;            // tasks cut the output channels at multiples of this
// Each row of a block's weights is read one float per step, R rows at a time, from wherever the weights
// were last evicted to: prefetched this far ahead (4 cache lines, about 800 cycles).
constexpr int64_t kPrefetch = 4 * kLanes;

int64_t ceilDiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

// acc[r][v] += w[r * ldw + c] * x[16v, 16v + 16): one input channel of a
// block; of the last vector only the lanes of `last` are read.
template <int R, int V>
FUSESCOPE_AVX512 __attribute__((always_inline)) inline void step(__m512 (&acc)[R][V], const float *w, int64_t ldw,
                                                                 const float *x, int64_t c, __mmask16 last)
{
    __m512 xv[V];
    #pragma GCC unroll 24
    for (int v = 0; v + 1 < V; ++v)
        xv[v] = _mm512_loadu_ps(x + v * kLanes);
    xv[V - 1] = _mm512_maskz_loadu_ps(last, x + (V - 1) * kLanes);
    #pragma GCC unroll 24
    for (int r = 0; r < R; ++r) {
        const __m512 wv = _mm512_set1_ps(w[r * ldw + c]);
        #pragma GCC unroll 24
        for (int v = 0; v < V; ++v)
            acc[r][v] = _mm512_fmadd_ps(wv, xv[v], acc[r][v]);
    }
}

// The activation as StoreActivation applies it, 16 lanes at a time. relu
// as sm::relu: +0 for x < 0, -0 kept; clamp as sm::clamp: the low bound
// where x < lo, then the high bound where x > hi. NaN is kept (an ordered
// compare is false for it).
FUSESCOPE_AVX512 inline __m512 activate(__m512 v, const StoreActivation &act)
{
    if (act.kind == StoreActivation::Kind::Relu) {
        const __m512 zero = _mm512_setzero_ps();
        return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);
    }
    const __m512 lo = _mm512_set1_ps(float(act.lo)), hi = _mm512_set1_ps(float(act.hi));
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
}

// out[r][0, 16V) = act(bias[r] + sum over c < k of w[r * ldw + c] * x[c * ldx + (0, 16V)]), r < R; of
// the last vector, only the lanes of `last` are read and stored.
// The loops over r and v are unrolled by pragma: GCC's -O3 otherwise kept
// the accumulator array in memory too, storing all of it every iteration.
template <int R, int V>
FUSESCOPE_AVX512 void block(const float *w, int64_t k, int64_t ldw, const float *x, int64_t ldx, const float *bias,
                            float *out, int64_t ldo, __mmask16 last, const StoreActivation &act)
{
    __m512 acc[R][V];
    #pragma GCC unroll 24
    for (int r = 0; r < R; ++r)
        #pragma GCC unroll 24
        for (int v = 0; v < V; ++v)
            acc[r][v] = _mm512_set1_ps(bias ? bias[r] : 0.f);
    // The first lines of the next block's rows, which the prefetches below
    // only reach after their first kPrefetch floats (prefetching past the
    // last row is harmless: a prefetch does not fault).
    #pragma GCC unroll 24
    for (int r = 0; r < R; ++r)
        for (int64_t l = 0; l < std::min(k, kPrefetch); l += kLanes)
            _mm_prefetch(reinterpret_cast<const char *>(w + (R + r) * ldw + l), _MM_HINT_T0);
    int64_t c = 0;
    for (; c + kLanes <= k; c += kLanes) {
        #pragma GCC unroll 24
        for (int r = 0; r < R; ++r)
            _mm_prefetch(reinterpret_cast<const char *>(w + r * ldw + c + kPrefetch), _MM_HINT_T0);
        for (int64_t i = c; i < c + kLanes; ++i)
            step<R, V>(acc, w, ldw, x + i * ldx, i, last);
    }
    for (; c < k; ++c)
        step<R, V>(acc, w, ldw, x + c * ldx, c, last);
    if (act.any()) {
        #pragma GCC unroll 24
        for (int r = 0; r < R; ++r)
            #pragma GCC unroll 24
            for (int v = 0; v < V; ++v)
                acc[r][v] = activate(acc[r][v], act);
    }
    #pragma GCC unroll 24
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 24
        for (int v = 0; v + 1 < V; ++v)
            _mm512_storeu_ps(out + r * ldo + v * kLanes, acc[r][v]);
        _mm512_mask_storeu_ps(out + r * ldo + (V - 1) * kLanes, last, acc[r][V - 1]);
    }
}

// `count` rows from w, bias and out on: blocks of R (24 accumulators with
// V vectors), then of 4, 2 and 1 rows.
template <int V>
FUSESCOPE_AVX512 void rows(const float *w, int64_t k, int64_t ldw, const float *x, int64_t ldx, const float *bias,
                           float *out, int64_t ldo, int64_t count, __mmask16 last, const StoreActivation &act)
{
    constexpr int R = 24 / V;
    int64_t o = 0;
    auto at = [&](int64_t row) { return bias ? bias + row : nullptr; };
    for (; o + R <= count; o += R)
        block<R, V>(w + o * ldw, k, ldw, x, ldx, at(o), out + o * ldo, ldo, last, act);
    for (; R > 4 && o + 4 <= count; o += 4)
        block<4, V>(w + o * ldw, k, ldw, x, ldx, at(o), out + o * ldo, ldo, last, act);
    for (; R > 2 && o + 2 <= count; o += 2)
        block<2, V>(w + o * ldw, k, ldw, x, ldx, at(o), out + o * ldo, ldo, last, act);
    if (o < count)
        block<1, V>(w + o * ldw, k, ldw, x, ldx, at(o), out + o * ldo, ldo, last, act);
}

// The pixels of an image in blocks of 3 vectors; a single vector left over
// joins the last block (a 7x7 image is one block of 4, so each weight is
// read once per image), two left over make a block of their own.
struct PixelBlocks {
    int64_t pixels, vectors, count;
    explicit PixelBlocks(int64_t p)
        : pixels(p), vectors(ceilDiv(p, kLanes)),
          count(std::max<int64_t>(1, vectors / kVectors + (vectors % kVectors == 2)))
    {
    }
    int64_t begin(int64_t b) const { return std::min(pixels, b * kVectors * kLanes); }
    int64_t end(int64_t b) const { return b + 1 >= count ? pixels : begin(b + 1); }
};

// One image and group's operands, and the part of its output a task computes.
struct Task {
    const float *x, *w, *bias;
    float *out;
    int64_t k;              // input channels
    int64_t ldw, ldx, ldo;  // row lengths of w, x and out
    int64_t b0, b1, o0, o1; // pixel blocks and output channels
    StoreActivation act;
};

FUSESCOPE_AVX512 void runTask(const Task &t, const PixelBlocks &blocks)
{
    const int64_t count = t.o1 - t.o0;
    const float *w = t.w + t.o0 * t.ldw, *bias = t.bias ? t.bias + t.o0 : nullptr;
    float *out = t.out + t.o0 * t.ldo;
    for (int64_t b = t.b0; b < t.b1; ++b) {
        const int64_t p0 = blocks.begin(b), n = blocks.end(b) - p0, v = ceilDiv(n, kLanes);
        const int64_t tail = n - (v - 1) * kLanes; // lanes of the last vector, 1..16
        const auto last = static_cast<__mmask16>((1u << tail) - 1u);
        const float *xb = t.x + p0;
        switch (v) { // 2 to 4 vectors: images have at least kMinPixels
        case 2: rows<2>(w, t.k, t.ldw, xb, t.ldx, bias, out + p0, t.ldo, count, last, t.act); break;
        case 3: rows<3>(w, t.k, t.ldw, xb, t.ldx, bias, out + p0, t.ldo, count, last, t.act); break;
        default: rows<4>(w, t.k, t.ldw, xb, t.ldx, bias, out + p0, t.ldo, count, last, t.act); break;
        }
    }
}

} // namespace

bool worthIt(const Problem &p)
{
    return loops::wideVectors() && p.pixels >= kMinPixels && p.inC > 0 && p.outC > 0;
}

bool fits(const Gemm &g)
{
    return loops::wideVectors() && g.pixels >= kMinPixels && g.rows > 0 && g.k > 0;
}

// Whether a task should take a stretch of pixels of every output channel
// rather than some output channels of every pixel. Each task then reads
// its own part of the image and all the weights instead of all the image
// and its part of the weights: less to read where the image is the larger
// operand (MobileNet v2's 32 -> 16 at 112x112 ran slower on two threads than
// on one, both reading the whole 1.6 MB image that the layer before had
// left half in each core's cache). The cuts fall between blocks of 48
// pixels, on cache-line boundaries of every row when a row is a whole
// number of lines long. Otherwise both tasks store into one line of every
// output row, which costs little only where each task's stretch is long
// and the image large (SqueezeNet's 128 -> 16 at 55x55: 248-271 -> 122-124
// us in the model; MobileNet v3's 96 -> 40 at 14x14 ran 2.5x slower so).
bool pixelsFirst(const Problem &p, const PixelBlocks &blocks, int64_t parts)
{
    constexpr int64_t kMinPixelsPerPart = 256, kMinImage = 128 << 10; // floats
    const bool lines = p.pixels % kLanes == 0;
    const bool large = p.pixels >= kMinPixelsPerPart * parts && p.inC * p.pixels >= kMinImage;
    return parts > 1 && (lines || large) && p.pixels > p.outC && blocks.count >= 2 * parts;
}

// Tasks: every image and group; with fewer of them than threads, the pixel
// blocks are cut where pixelsFirst says, else the output channels (in units
// of 4), and the pixel blocks too only where there are too few channels. A
// task cut by channels reads only its own rows of the weights and writes
// whole rows of the output: cutting a 14x14 image between two blocks
// puts both tasks' stores in one cache line of every output row, which ran
// MobileNet v3's 96 -> 40 at 14x14 2.5x slower on two threads than on one.
// More than one task per thread ran slower too: each reads the weights again.
void run(const Problem &p, const float *x, const float *w, const float *bias, float *out)
{
    if (p.pixels < kMinPixels)
        throw std::logic_error("conv1x1::run on an image narrower than its blocks");
    const PixelBlocks blocks(p.pixels);
    const int64_t units = p.images * p.groups, rowUnits = ceilDiv(p.outC, kRowUnit);
    const int64_t parts = inParallelRegion() ? 1 : ceilDiv(numThreads(), units);
    const bool cutPixels = pixelsFirst(p, blocks, parts);
    const int64_t rowParts = cutPixels ? 1 : std::min(parts, rowUnits);
    const int64_t colParts = std::min(ceilDiv(parts, rowParts), blocks.count);
    parallelFor(0, units * rowParts * colParts, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t unit = i / (rowParts * colParts), r = i / colParts % rowParts, c = i % colParts;
            const int64_t img = unit / p.groups, grp = unit % p.groups;
            const Task t{x + (img * p.groups + grp) * p.inC * p.pixels,
                         w + grp * p.outC * p.inC,
                         bias ? bias + grp * p.outC : nullptr,
                         out + (img * p.groups + grp) * p.outC * p.pixels,
                         p.inC,
                         p.inC,
                         p.pixels,
                         p.pixels,
                         c * blocks.count / colParts,
                         (c + 1) * blocks.count / colParts,
                         std::min(p.outC, r * rowUnits / rowParts * kRowUnit),
                         std::min(p.outC, (r + 1) * rowUnits / rowParts * kRowUnit),
                         p.act};
            if (t.b0 < t.b1 && t.o0 < t.o1)
                runTask(t, blocks);
        }
    });
}

void gemm(const Gemm &g, const float *w, const float *x, const float *bias, float *out)
{
    if (g.pixels < kMinPixels)
        throw std::logic_error("conv1x1::gemm on rows narrower than its blocks");
    const PixelBlocks blocks(g.pixels);
    runTask({x, w, bias, out, g.k, g.ldw ? g.ldw : g.k, g.ldx, g.ldo, 0, blocks.count, 0, g.rows, g.act}, blocks);
}

#else

bool worthIt(const Problem &)
{
    return false;
}

bool fits(const Gemm &)
{
    return false;
}

void gemm(const Gemm &, const float *, const float *, const float *, float *)
{
    throw std::logic_error("conv1x1::gemm without AVX-512 support compiled in");
}

void run(const Problem &, const float *, const float *, const float *, float *)
{
    throw std::logic_error("conv1x1::run without AVX-512 support compiled in");
}

#endif

} // namespace fusescope::conv1x1
