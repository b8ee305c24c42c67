#include "core/ops/amx_gemm.h"

#include "core/runtime/threadpool.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FUSESCOPE_HAS_AMX 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define FUSESCOPE_AMX __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16")))
#endif

namespace fusescope::amx {
namespace {

// A step is 32 values of k; an A block is 32 rows, a B panel 32 columns: one
// part of a block (or panel) for one step is 32 x 32 bf16, two tiles.
constexpr int64_t kTile = 32;
constexpr int64_t kPartElems = kTile * kTile;
constexpr int kParts = 3;
constexpr int64_t kStepElems = kParts * kPartElems;
// Steps per pass over a C block (1024 of k): C goes to L2 and back once per
// chunk. bench_amx_gemm over the workloads' shapes: chunks of 16 and 32 steps
// ran 5-15 % faster than chunks of 4 or 8, whose B would stay in L1.
constexpr int64_t kChunkSteps = 32;
// A thread's unit of work: up to 8 row blocks by 8 panels (C: 256 KiB). 4 and
// 16 were slower.
constexpr int64_t kGroup = 8;

constexpr float kMaxAbs = 0x1p120f, kMinAbs = 0x1p-100f;

int64_t blocks(int64_t n)
{
    return (n + kTile - 1) / kTile;
}

// Where element (i, j) of a packed right operand of `steps` steps keeps its
// first part: panel j / 32, step i / 32, then the tiles' pair layout (k-pair,
// column, the pair); the other parts follow 1024 and 2048 further on.
int64_t rightOffset(int64_t i, int64_t j, int64_t steps)
{
    return ((j / kTile) * steps + i / kTile) * kStepElems + ((i % kTile) / 2) * 64 + (j % kTile) * 2 + i % 2;
}

uint16_t bf16Nearest(float x) // round to nearest even; x finite
{
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

float fromBf16(uint16_t h)
{
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

bool splittableValue(float x)
{
    const float a = std::abs(x);
    return a <= kMaxAbs && (a >= kMinAbs || a == 0.0f); // NaN fails the first test
}

// 64-byte aligned scratch of the calling thread, grown as needed (a fresh
// allocation per call would pay its page faults every time).
uint16_t *scratch(size_t elems)
{
    struct Free {
        void operator()(uint16_t *p) const { std::free(p); }
    };
    thread_local std::unique_ptr<uint16_t, Free> buffer;
    thread_local size_t capacity = 0;
    if (elems > capacity) {
        const size_t bytes = (elems * sizeof(uint16_t) + 63) / 64 * 64;
        buffer.reset(static_cast<uint16_t *>(std::aligned_alloc(64, bytes)));
        if (!buffer)
            throw std::bad_alloc();
        capacity = elems;
    }
    return buffer.get();
}

#ifdef FUSESCOPE_HAS_AMX

bool detect()
{
    const char *off = std::getenv("FUSESCOPE_NO_AMX");
    if (off && *off && std::strcmp(off, "0") != 0)
        return false;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    const bool tile = d & (1u << 24), tileBf16 = d & (1u << 22), avx512f = b & (1u << 16);
    if (!tile || !tileBf16 || !avx512f || !__get_cpuid_count(7, 1, &a, &b, &c, &d) || !(a & (1u << 5)))
        return false;
    // Linux hands out the 8 KiB tile state only on request (ARCH_REQ_XCOMP_PERM for XTILEDATA).
    return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
}

struct alignas(64) TileConfig {
    uint8_t palette = 1, startRow = 0;
    uint8_t reserved[14] = {};
    uint16_t colBytes[16] = {};
    uint8_t rows[16] = {};
};

// All eight tiles are 16 rows of 64 bytes: C blocks of 16 x 16 f32, A tiles of
// 16 rows x 32 bf16, B tiles of 16 k-pairs x 16 columns x 2 bf16.
FUSESCOPE_AMX void configureTiles()
{
    TileConfig config;
    for (int t = 0; t < 8; ++t) {
        config.colBytes[t] = 64;
        config.rows[t] = 16;
    }
    _tile_loadconfig(&config);
}

// The three parts of 16 values: part q in out[q].
FUSESCOPE_AMX inline void split16(__m512 v, __m256i out[kParts])
{
    for (int q = 0; q < kParts; ++q) {
        const __m256i h = std::bit_cast<__m256i>(_mm512_cvtneps_pbh(v));
        out[q] = h;
        v = _mm512_sub_ps(
            v, _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16)));
    }
}

FUSESCOPE_AMX inline __mmask16 badLanes(__m512 v)
{
    const __m512 a = _mm512_abs_ps(v);
    const __mmask16 big = _mm512_cmp_ps_mask(a, _mm512_set1_ps(kMaxAbs), _CMP_NLE_UQ); // also NaN
    const __mmask16 tiny = _mm512_cmp_ps_mask(a, _mm512_set1_ps(kMinAbs), _CMP_LT_OQ)
        & _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_NEQ_OQ);
    return big | tiny;
}

// A's row block `b` into its parts, step by step: ((b * steps + s) * 3 + q) * 1024,
// rows of 32 k. Rows past m and k past the end are zeros. Returns false on a
// value that does not split exactly.
FUSESCOPE_AMX bool packLeftBlock(const float *a, int64_t m, int64_t k, int64_t lda, int64_t b, int64_t steps,
                                 uint16_t *packed)
{
    __mmask16 bad = 0;
    for (int64_t r = 0; r < kTile; ++r) {
        const int64_t row = b * kTile + r;
        for (int64_t s = 0; s < steps; ++s) {
            uint16_t *dst = packed + (b * steps + s) * kStepElems + r * kTile;
            for (int64_t h = 0; h < 2; ++h) {
                const int64_t k0 = s * kTile + h * 16;
                const int64_t n = row < m ? std::clamp<int64_t>(k - k0, 0, 16) : 0;
                const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1);
                const __m512 v = _mm512_maskz_loadu_ps(lanes, a + row * lda + k0);
                bad |= badLanes(v);
                __m256i parts[kParts];
                split16(v, parts);
                for (int q = 0; q < kParts; ++q)
                    _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + q * kPartElems + h * 16), parts[q]);
            }
        }
    }
    return bad == 0;
}

// The four products of the A part in tiles 4-5 by the B part in tiles 6-7
// (C's row halves by B's column halves), each B tile reloaded with the next
// pair's B right after its last reader.
FUSESCOPE_AMX inline void pairThenB(const uint16_t *nextB)
{
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(2, 5, 6);
    _tile_loadd(6, nextB, 128);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(3, 5, 7);
    _tile_loadd(7, nextB + 32, 128);
}

// The same, reloading both A and B for the next pair; nothing when nextA is
// null (the block's last pair).
FUSESCOPE_AMX inline void pairThenAB(const uint16_t *nextA, const uint16_t *nextB)
{
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(2, 5, 6);
    if (nextA)
        _tile_loadd(6, nextB, 128);
    _tile_dpbf16ps(1, 4, 7);
    if (nextA)
        _tile_loadd(4, nextA, 64);
    _tile_dpbf16ps(3, 5, 7);
    if (nextA) {
        _tile_loadd(5, nextA + 512, 64);
        _tile_loadd(7, nextB + 32, 128);
    }
}

// C block (32 x 32 at c) += A block x B panel over `steps` steps, or = when
// not accumulating: the six part products of each step, software-pipelined.
// The tiles are not renamed, so a load into a tile waits until the products
// reading it are done, and the next products then wait for the load: each
// operand is reloaded right after its last reader, while the products on the
// other half of C keep the unit busy. On one thread 2-10 % faster than
// loading both operands at the start of each pair of parts (a harness timing
// amx::gemm on 512^3, 256 x 2048 x 2048 and 1024 x 1024 x 256, alternated).
FUSESCOPE_AMX void blockProduct(const uint16_t *a, const uint16_t *b, int64_t steps, float *c, int64_t ldc,
                                bool accumulate)
{
    const int64_t cs = ldc * static_cast<int64_t>(sizeof(float));
    if (accumulate) {
        _tile_loadd(0, c, cs);
        _tile_loadd(1, c + 16, cs);
        _tile_loadd(2, c + 16 * ldc, cs);
        _tile_loadd(3, c + 16 * ldc + 16, cs);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    // A part q of a step: rows 0-15 at +q * 1024, rows 16-31 512 further; B
    // part q: columns 0-15 at +q * 1024, columns 16-31 32 further (rows of 128 bytes).
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a + 512, 64);
    _tile_loadd(6, b, 128);
    _tile_loadd(7, b + 32, 128);
    for (int64_t s = 0; s < steps; ++s) {
        const uint16_t *as = a + s * kStepElems, *bs = b + s * kStepElems;
        const bool more = s + 1 < steps;
        pairThenB(bs + kPartElems); // (A0, B0)
        pairThenB(bs + 2 * kPartElems); // (A0, B1)
        pairThenAB(as + kPartElems, bs); // (A0, B2)
        pairThenB(bs + kPartElems); // (A1, B0)
        pairThenAB(as + 2 * kPartElems, bs); // (A1, B1)
        pairThenAB(more ? as + kStepElems : nullptr, bs + kStepElems); // (A2, B0), then the next step's
    }
    _tile_stored(0, c, cs);
    _tile_stored(1, c + 16, cs);
    _tile_stored(2, c + 16 * ldc, cs);
    _tile_stored(3, c + 16 * ldc + 16, cs);
}

struct Range {
    int64_t begin, end;
};

// C's blocks of row blocks `rows` by panels `panels`, K in chunks: each
// chunk of a panel's B is read from memory once and from L2 by every row block.
FUSESCOPE_AMX void productTile(const uint16_t *pa, const uint16_t *pb, int64_t steps, float *c, int64_t ldc, Range rows,
                               Range panels)
{
    for (int64_t s0 = 0; s0 < steps; s0 += kChunkSteps) {
        const int64_t ns = std::min(kChunkSteps, steps - s0);
        for (int64_t p = panels.begin; p < panels.end; ++p) {
            for (int64_t b = rows.begin; b < rows.end; ++b)
                blockProduct(pa + (b * steps + s0) * kStepElems, pb + (p * steps + s0) * kStepElems, ns,
                             c + b * kTile * ldc + p * kTile, ldc, s0 > 0);
        }
    }
}

// Groups of row blocks and panels, shrunk until every thread has one to take.
struct Grouping {
    int64_t rows = kGroup, panels = kGroup, rowGroups = 0, items = 0;
};

Grouping groupsFor(int64_t rowBlocks, int64_t panels, int64_t threads)
{
    Grouping g;
    for (;;) {
        g.rowGroups = (rowBlocks + g.rows - 1) / g.rows;
        g.items = g.rowGroups * ((panels + g.panels - 1) / g.panels);
        if (g.items >= threads || (g.rows == 1 && g.panels == 1))
            return g;
        if (g.panels >= g.rows && g.panels > 1)
            g.panels /= 2;
        else
            g.rows /= 2;
    }
}

struct Problem {
    const uint16_t *pa, *pb;
    int64_t rowBlocks, steps, panels;
    float *c;
    int64_t ldc;
};

// Items [i0, i1) in panel-group order: consecutive items share B.
FUSESCOPE_AMX void productItems(const Problem &pr, const Grouping &g, int64_t i0, int64_t i1)
{
    configureTiles();
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t r = (i % g.rowGroups) * g.rows, p = (i / g.rowGroups) * g.panels;
        productTile(pr.pa, pr.pb, pr.steps, pr.c, pr.ldc, {r, std::min(r + g.rows, pr.rowBlocks)},
                    {p, std::min(p + g.panels, pr.panels)});
    }
    _tile_release();
}

void product(const Problem &pr)
{
    const int64_t threads = numThreads();
    const Grouping g = groupsFor(pr.rowBlocks, pr.panels, threads);
    // One contiguous run of items per thread: a thread's consecutive items share A or B.
    parallelFor(0, g.items, (g.items + threads - 1) / threads,
                [&](int64_t i0, int64_t i1) { productItems(pr, g, i0, i1); });
}

#endif

} // namespace

bool available()
{
#ifdef FUSESCOPE_HAS_AMX
    static const bool yes = detect();
    return yes;
#else
    return false;
#endif
}

int64_t packedElements(int64_t k, int64_t n)
{
    return blocks(n) * blocks(k) * kStepElems;
}

bool splittable(const float *x, int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride)
{
    // Along the smaller stride: a linear layer's weight comes transposed, and
    // a column at a time missed the cache on every value (mlp's simplify
    // stage took 102 ms with that walk, 59 without).
    if (rowStride < colStride) {
        std::swap(rows, cols);
        std::swap(rowStride, colStride);
    }
    for (int64_t i = 0; i < rows; ++i) {
        bool ok = true;
        for (int64_t j = 0; j < cols; ++j)
            ok &= splittableValue(x[i * rowStride + j * colStride]);
        if (!ok)
            return false;
    }
    return true;
}

namespace {

// One block of at most 32 x 32 values of b (src[i * rs + j * cs]) into its
// kStepElems of packed parts (zeroed first, for the padding); false where a
// value does not split. Within a block, rightOffset's layout with one step.
bool packRightBlock(const float *src, int64_t rs, int64_t cs, int64_t rows, int64_t cols, uint16_t *dst)
{
    std::fill(dst, dst + kStepElems, uint16_t(0));
    bool good = true;
    for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
            float x = src[i * rs + j * cs];
            good &= splittableValue(x);
            uint16_t *at = dst + rightOffset(i, j, 1);
            for (int q = 0; q < kParts; ++q) {
                at[q * kPartElems] = bf16Nearest(x);
                x -= fromBf16(at[q * kPartElems]);
            }
        }
    }
    return good;
}

} // namespace

bool packRight(const float *b, int64_t k, int64_t n, int64_t sk, int64_t sn, uint16_t *packed)
{
    const int64_t steps = blocks(k), panels = blocks(n);
    std::atomic<bool> ok = true;
    // Panels pack in parallel, a block at a time: its 6 KiB of parts stay in
    // L1, where a whole column at a time went through L2 for every value
    // (mlp's simplify stage: 59 ms before, 34-37 after, on two threads). A
    // block of a transposed b (a linear layer's weight, sk = 1) is read a
    // column at a time from 32 lines.
    parallelFor(0, panels, 1, [&](int64_t p0, int64_t p1) {
        bool good = true;
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t j0 = p * kTile, cols = std::min(kTile, n - j0);
            for (int64_t s = 0; s < steps; ++s) {
                const int64_t i0 = s * kTile, rows = std::min(kTile, k - i0);
                good &= packRightBlock(b + i0 * sk + j0 * sn, sk, sn, rows, cols,
                                       packed + (p * steps + s) * kStepElems);
            }
        }
        if (!good)
            ok = false;
    });
    return ok;
}

std::vector<float> unpackRight(const uint16_t *packed, int64_t k, int64_t n)
{
    const int64_t steps = blocks(k);
    std::vector<float> out(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            const uint16_t *src = packed + rightOffset(i, j, steps);
            // The small parts first: the sum is exact either way, as the parts came from one f32.
            out[static_cast<size_t>(i * n + j)]
                = fromBf16(src[0]) + (fromBf16(src[kPartElems]) + fromBf16(src[2 * kPartElems]));
        }
    }
    return out;
}

bool gemm(const float *a, int64_t m, int64_t k, int64_t lda, const uint16_t *packed, int64_t n, float *c, int64_t ldc)
{
#ifdef FUSESCOPE_HAS_AMX
    if (!available() || m <= 0 || n <= 0 || k <= 0)
        return false;
    const int64_t rowBlocks = blocks(m), steps = blocks(k), panels = blocks(n);
    const size_t leftElems = static_cast<size_t>(rowBlocks * steps * kStepElems);
    // Where C's edges are not whole blocks the product goes to a padded buffer first.
    const bool whole = m % kTile == 0 && n % kTile == 0;
    const size_t padFloats = whole ? 0 : static_cast<size_t>(rowBlocks * panels * kTile * kTile);
    uint16_t *pa = scratch(leftElems + padFloats * 2);
    float *pc = whole ? c : reinterpret_cast<float *>(pa + leftElems);
    const int64_t pldc = whole ? ldc : panels * kTile;
    std::atomic<bool> ok = true;
    parallelFor(0, rowBlocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            if (!packLeftBlock(a, m, k, lda, b, steps, pa))
                ok = false;
        }
    });
    if (!ok)
        return false;
    product({pa, packed, rowBlocks, steps, panels, pc, pldc});
    if (!whole) {
        for (int64_t i = 0; i < m; ++i)
            std::memcpy(c + i * ldc, pc + i * pldc, static_cast<size_t>(n) * sizeof(float));
    }
    return true;
#else
    (void)a, (void)m, (void)k, (void)lda, (void)packed, (void)n, (void)c, (void)ldc;
    return false;
#endif
}

} // namespace fusescope::amx
