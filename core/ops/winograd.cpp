// Winograd F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks"): each 2x2 block of output pixels is A^T [(G g G^T) .*
// (B^T d B)] A over the 4x4 input window d, so the 36 multiplications of a
// direct 3x3 convolution per block become 16. Summed over the input
// channels, each of the 16 transformed points is one GEMM
// M[point] = U[point] (outC x c) . V[point] (c x tiles), which costs 16/36 of
// im2col's single GEMM. The transforms are additions only; their rounding
// stays within a few ulp of the direct sum for 3x3 kernels.
#include "core/ops/winograd.h"

#include "core/ops/conv1x1.h"
#include "core/ops/linalg.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/tensor.h"

#include <algorithm>
#include <optional>

namespace fusescope::winograd {
namespace {

constexpr int64_t kPoints = kTransformedPoints; // a 4x4 transformed tile
constexpr int64_t kChunkTiles = 512; // output tiles per chunk: GEMMs of [outC x 512 x c]
constexpr int64_t kMinTiles = 128;   // fewer, and the GEMMs are too narrow to gain
// With the weights transformed once, the narrower GEMMs still gain down to
// about this many tiles (bench_conv, resnet18 layer3 at batch 1, 49 tiles:
// 0.74x im2col's time; layer4, 16 tiles: 1.14x).
constexpr int64_t kMinTilesWeightsReady = 32;
constexpr int64_t kMinChannels = 16;
// F(4x4, 3x3) reads 2.25x F(2x2)'s transformed weights for a quarter of its
// tiles, so with few tiles its GEMMs wait on the weights (bench_conv,
// resnet18 at batch 4: layer1, 784 tiles of 4x4, 5.07 -> 4.19 ms; layer2, 196,
// 4.01 -> 3.32; layer3, 64, 3.83 -> 4.17; layer4, 16, 4.97 -> 7.36).
constexpr int64_t kMinTiles4 = 128;
// Its transforms cost 2-3x F(2x2)'s per pixel and channel; with 16 input
// channels they outweigh the GEMMs' saving (bench_conv, SqueezeNet's fire2
// expand 16 -> 64 at 55x55: F(2x2) 0.21-0.23 ms, F(4x4) 0.26-0.27 ms).
constexpr int64_t kMinChannels4 = 32;

// M x M output tiles per image (M = 2 or 4).
template <int M>
struct TilesOf {
    int64_t rows = 0, cols = 0;
    explicit TilesOf(const Problem &p) : rows(ceilDiv(p.outH, M)), cols(ceilDiv(p.outW, M)) {}
};
using Tiles = TilesOf<2>;

// The M + 2 input rows under tile row `th` of one plane, zero-padded to
// `width` = M * tiles + 2 columns starting at column -padW.
template <int M>
void windowRows(const Problem &p, const float *plane, int64_t th, int64_t width, float *rows)
{
    const int64_t j0 = std::min(p.padW, width), j1 = std::clamp<int64_t>(p.w + p.padW, j0, width);
    for (int64_t k = 0; k < M + 2; ++k) {
        float *row = rows + k * width;
        const int64_t ih = M * th + k - p.padH;
        if (ih < 0 || ih >= p.h) {
            std::fill_n(row, width, 0.f);
            continue;
        }
        std::fill(row, row + j0, 0.f);
        std::copy(plane + ih * p.w + j0 - p.padW, plane + ih * p.w + j1 - p.padW, row + j0);
        std::fill(row + j1, row + width, 0.f);
    }
}

// V[point][c][tile] = B^T d B for the 4x4 window d of every tile in tile
// rows [r0, r1) (counted over the whole batch), with
// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. B^T runs along whole rows
// first, then B along each tile's four columns, both as loops over tiles.
void transformInput(const Problem &p, const Tiles &t, const float *x, int64_t r0, int64_t r1, float *v, float *buf)
{
    const int64_t tiles = (r1 - r0) * t.cols, width = 2 * t.cols + 2, pointStride = p.c * tiles;
    float *d = buf, *e = buf + 4 * width;
    for (int64_t c = 0; c < p.c; ++c) {
        for (int64_t r = r0; r < r1; ++r) {
            windowRows<2>(p, x + (r / t.rows * p.c + c) * p.h * p.w, r % t.rows, width, d);
            const float *d0 = d, *d1 = d + width, *d2 = d + 2 * width, *d3 = d + 3 * width;
            for (int64_t j = 0; j < width; ++j) {
                e[j] = d0[j] - d2[j];
                e[width + j] = d1[j] + d2[j];
                e[2 * width + j] = d2[j] - d1[j];
                e[3 * width + j] = d1[j] - d3[j];
            }
            float *dst = v + c * tiles + (r - r0) * t.cols;
            for (int64_t i = 0; i < 4; ++i) {
                const float *s = e + i * width;
                float *v0 = dst + 4 * i * pointStride, *v1 = v0 + pointStride, *v2 = v1 + pointStride,
                      *v3 = v2 + pointStride;
                for (int64_t tw = 0; tw < t.cols; ++tw) {
                    const float a = s[2 * tw], b = s[2 * tw + 1], cc = s[2 * tw + 2], dd = s[2 * tw + 3];
                    v0[tw] = a - cc;
                    v1[tw] = b + cc;
                    v2[tw] = cc - b;
                    v3[tw] = b - dd;
                }
            }
        }
    }
}

// out = A^T m A + bias for every tile, A^T = [1 1 1 0; 0 1 -1 -1]; a tile's
// second row or column is dropped where the output ends.
void transformOutput(const Problem &p, const Tiles &t, const float *m, const float *bias, int64_t r0, int64_t r1,
                     float *out, float *buf)
{
    const int64_t tiles = (r1 - r0) * t.cols, pointStride = p.outC * tiles, width = 2 * t.cols;
    float *y0 = buf, *y1 = buf + width;
    for (int64_t o = 0; o < p.outC; ++o) {
        const float b = bias ? bias[o] : 0.f;
        for (int64_t r = r0; r < r1; ++r) {
            const float *src = m + o * tiles + (r - r0) * t.cols;
            for (int64_t tw = 0; tw < t.cols; ++tw) {
                float q[kPoints];
                for (int64_t k = 0; k < kPoints; ++k)
                    q[k] = src[k * pointStride + tw];
                float t0[4], t1[4];
                for (int j = 0; j < 4; ++j) {
                    t0[j] = q[j] + q[4 + j] + q[8 + j];
                    t1[j] = q[4 + j] - q[8 + j] - q[12 + j];
                }
                y0[2 * tw] = t0[0] + t0[1] + t0[2] + b;
                y0[2 * tw + 1] = t0[1] - t0[2] - t0[3] + b;
                y1[2 * tw] = t1[0] + t1[1] + t1[2] + b;
                y1[2 * tw + 1] = t1[1] - t1[2] - t1[3] + b;
            }
            p.act.apply(buf, 1, 2 * width, 0);
            const int64_t img = r / t.rows, oh = 2 * (r % t.rows);
            float *dst = out + ((img * p.outC + o) * p.outH + oh) * p.outW;
            std::copy_n(y0, p.outW, dst);
            if (oh + 1 < p.outH)
                std::copy_n(y1, p.outW, dst + p.outW);
        }
    }
}

// F(4x4, 3x3): 6x6 input windows every 4 pixels, 36 points, with
// B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1].
struct Six {
    float v[6];
};

inline Six inputRow(float a, float b, float c, float d, float e, float f)
{
    return {{4.f * a - 5.f * c + e, -4.f * b - 4.f * c + d + e, 4.f * b - 4.f * c - d + e,
             -2.f * b - c + 2.f * d + e, 2.f * b - c - 2.f * d + e, 4.f * b - 5.f * d + f}};
}

void transformInput4(const Problem &p, const TilesOf<4> &t, const float *x, int64_t r0, int64_t r1, float *v,
                     float *buf)
{
    const int64_t tiles = (r1 - r0) * t.cols, width = 4 * t.cols + 2, pointStride = p.c * tiles;
    float *d = buf, *e = buf + 6 * width;
    for (int64_t c = 0; c < p.c; ++c) {
        for (int64_t r = r0; r < r1; ++r) {
            windowRows<4>(p, x + (r / t.rows * p.c + c) * p.h * p.w, r % t.rows, width, d);
            for (int64_t j = 0; j < width; ++j) {
                const Six col = inputRow(d[j], d[width + j], d[2 * width + j], d[3 * width + j], d[4 * width + j],
                                         d[5 * width + j]);
                for (int i = 0; i < 6; ++i)
                    e[i * width + j] = col.v[i];
            }
            float *dst = v + c * tiles + (r - r0) * t.cols;
            for (int64_t i = 0; i < 6; ++i) {
                const float *s = e + i * width;
                float *vi = dst + 6 * i * pointStride;
                for (int64_t tw = 0; tw < t.cols; ++tw) {
                    const float *w = s + 4 * tw;
                    const Six row = inputRow(w[0], w[1], w[2], w[3], w[4], w[5]);
                    for (int k = 0; k < 6; ++k)
                        vi[k * pointStride + tw] = row.v[k];
                }
            }
        }
    }
}

// A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
inline void outputRow(const float *m, int64_t stride, float *y)
{
    const float a = m[0], b = m[stride], c = m[2 * stride], d = m[3 * stride], e = m[4 * stride],
                f = m[5 * stride];
    const float s1 = b + c, d1 = b - c, s2 = d + e, d2 = d - e;
    y[0] = a + s1 + s2;
    y[1] = d1 + 2.f * d2;
    y[2] = s1 + 4.f * s2;
    y[3] = d1 + 8.f * d2 + f;
}

// out = A^T m A + bias for every tile; rows and columns past the output's end are dropped.
void transformOutput4(const Problem &p, const TilesOf<4> &t, const float *m, const float *bias, int64_t r0,
                      int64_t r1, float *out, float *buf)
{
    const int64_t tiles = (r1 - r0) * t.cols, pointStride = p.outC * tiles, width = 4 * t.cols;
    for (int64_t o = 0; o < p.outC; ++o) {
        const float b = bias ? bias[o] : 0.f;
        for (int64_t r = r0; r < r1; ++r) {
            const float *src = m + o * tiles + (r - r0) * t.cols;
            for (int64_t tw = 0; tw < t.cols; ++tw) {
                float q[36], cols[4][6];
                for (int64_t k = 0; k < 36; ++k)
                    q[k] = src[k * pointStride + tw];
                for (int j = 0; j < 6; ++j) { // A^T along the point rows, column j
                    float y[4];
                    outputRow(q + j, 6, y);
                    for (int i = 0; i < 4; ++i)
                        cols[i][j] = y[i];
                }
                for (int i = 0; i < 4; ++i) {
                    float y[4];
                    outputRow(cols[i], 1, y);
                    for (int k = 0; k < 4; ++k)
                        buf[i * width + 4 * tw + k] = y[k] + b;
                }
            }
            p.act.apply(buf, 1, 4 * width, 0);
            const int64_t img = r / t.rows, oh = 4 * (r % t.rows);
            float *dst = out + ((img * p.outC + o) * p.outH + oh) * p.outW;
            for (int64_t i = 0; i < 4 && oh + i < p.outH; ++i)
                std::copy_n(buf + i * width, p.outW, dst + i * p.outW);
        }
    }
}

template <int M>
using InputTransform = void (*)(const Problem &, const TilesOf<M> &, const float *, int64_t, int64_t, float *, float *);
template <int M>
using OutputTransform = void (*)(const Problem &, const TilesOf<M> &, const float *, const float *, int64_t, int64_t,
                                 float *, float *);

// Chunks of whole tile rows, a multiple of the pool's threads, and of the
// same number of output pixels for both tile sizes; per chunk the input
// transform, one GEMM per point and the output transform.
template <int M>
void runTransformed(const Problem &p, const float *x, const float *u, const float *bias, float *out,
                    InputTransform<M> input, OutputTransform<M> output)
{
    constexpr int64_t points = (M + 2) * (M + 2), chunkTiles = kChunkTiles * 4 / (M * M);
    const TilesOf<M> t(p);
    const int64_t tileRows = p.n * t.rows;
    if (tileRows == 0 || t.cols == 0)
        return;
    const bool nested = inParallelRegion();
    const int64_t threads = nested ? 1 : numThreads();
    const int64_t wanted = ceilDiv(ceilDiv(tileRows * t.cols, chunkTiles), threads) * threads;
    const int64_t rowsPerChunk = ceilDiv(tileRows, std::min(tileRows, wanted));
    const int64_t chunks = ceilDiv(tileRows, rowsPerChunk), maxTiles = rowsPerChunk * t.cols;
    std::optional<SerialBlasScope> serialBlas;
    if (!nested)
        serialBlas.emplace();
    parallelFor(0, chunks, 1, [&](int64_t c0, int64_t c1) {
        const int64_t vSize = points * p.c * maxTiles, mSize = points * p.outC * maxTiles;
        const Tensor scratch = Tensor::empty({vSize + mSize + 2 * (M + 2) * (M * t.cols + 2)}, DType::F32);
        float *v = scratch.data<float>(), *m = v + vSize, *buf = m + mSize;
        for (int64_t chunk = c0; chunk < c1; ++chunk) {
            const int64_t r0 = chunk * rowsPerChunk, r1 = std::min(tileRows, r0 + rowsPerChunk);
            const int64_t tiles = (r1 - r0) * t.cols;
            input(p, t, x, r0, r1, v, buf);
            // The products read v where the input transform wrote it. BLAS
            // copied each v into its packed layout first (OpenBLAS's packing
            // was 17 % of resnet18's compiled time); bench_conv, batch 4:
            // F(2x2) layer4 3.9-4.0 -> 2.7-2.8 ms, F(4x4) layer3 2.70-2.76 ->
            // 2.01-2.04.
            const conv1x1::Gemm g {p.outC, p.c, tiles, tiles, tiles, {}, 0};
            const bool direct = conv1x1::fits(g);
            for (int64_t k = 0; k < points; ++k) {
                const float *uk = u + k * p.outC * p.c, *vk = v + k * p.c * tiles;
                float *mk = m + k * p.outC * tiles;
                if (direct)
                    conv1x1::gemm(g, uk, vk, nullptr, mk);
                else
                    blas::gemm(false, false, p.outC, tiles, p.c, 1.f, uk, p.c, vk, tiles, 0.f, mk, tiles);
            }
            output(p, t, m, bias, r0, r1, out, buf);
        }
    });
}

// G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] applied to (a, b, c).
inline void g4(float a, float b, float c, float *o, int stride)
{
    o[0] = a;
    o[stride] = 0.5f * (a + b + c);
    o[2 * stride] = 0.5f * (a - b + c);
    o[3 * stride] = c;
}

// G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1].
inline void g6(float a, float b, float c, float *o, int stride)
{
    o[0] = 0.25f * a;
    o[stride] = -(a + b + c) / 6.f;
    o[2 * stride] = -(a - b + c) / 6.f;
    o[3 * stride] = a / 24.f + b / 12.f + c / 6.f;
    o[4 * stride] = a / 24.f - b / 12.f + c / 6.f;
    o[5 * stride] = c;
}

// points[r * N + k] = (G g G^T)[r][k] for the 3x3 filter g.
template <int N>
void filterPoints(const float *g, float *points)
{
    auto apply = [](float a, float b, float c, float *o, int stride) {
        if constexpr (N == 4)
            g4(a, b, c, o, stride);
        else
            g6(a, b, c, o, stride);
    };
    float gg[N * 3]; // G g, row-major [N][3]
    for (int j = 0; j < 3; ++j)
        apply(g[j], g[3 + j], g[6 + j], gg + j, 3);
    for (int r = 0; r < N; ++r)
        apply(gg[r * 3], gg[r * 3 + 1], gg[r * 3 + 2], points + r * N, 1);
}

// U[point][o][c] for every filter w[o][c] (N x N points). A block of
// filters is transformed into a local [points][block] array first and then
// copied out one point at a time: the points lie a power-of-two distance
// apart for typical channel counts, and storing to all of them per filter
// made them evict each other from the same cache sets (F(2x2) of 512x512
// weights: 8.9 ms, then about 2).
template <int N>
void transformFilters(int64_t outC, int64_t c, const float *w, float *u)
{
    constexpr int64_t kCount = N * N, kBlock = 64;
    const int64_t filters = outC * c;
    parallelFor(0, ceilDiv(filters, kBlock), 16, [&](int64_t b0, int64_t b1) {
        float block[kCount][kBlock];
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t first = b * kBlock, count = std::min(kBlock, filters - first);
            for (int64_t i = 0; i < count; ++i) {
                float points[kCount];
                filterPoints<N>(w + (first + i) * 9, points);
                for (int64_t k = 0; k < kCount; ++k)
                    block[k][i] = points[k];
            }
            for (int64_t k = 0; k < kCount; ++k)
                std::copy_n(block[k], count, u + k * filters + first);
        }
    });
}

} // namespace

void transformWeights(int64_t outC, int64_t c, const float *w, float *u)
{
    transformFilters<4>(outC, c, w, u);
}

void transformWeights4(int64_t outC, int64_t c, const float *w, float *u)
{
    transformFilters<6>(outC, c, w, u);
}

bool worthIt(const Problem &p, bool weightsReady)
{
    const Tiles t(p);
    const int64_t minTiles = weightsReady ? kMinTilesWeightsReady : kMinTiles;
    return p.c >= kMinChannels && p.outC >= kMinChannels && p.n * t.rows * t.cols >= minTiles;
}

int readyTile(const Problem &p)
{
    const TilesOf<4> t(p);
    return p.n * t.rows * t.cols >= kMinTiles4 && p.c >= kMinChannels4 ? 4 : 2;
}

void conv3x3(const Problem &p, const float *x, const float *w, const float *bias, float *out)
{
    const Tensor weights = Tensor::empty({kPoints * p.outC * p.c}, DType::F32);
    transformWeights(p.outC, p.c, w, weights.data<float>());
    conv3x3Transformed(p, x, weights.data<float>(), bias, out);
}

void conv3x3Transformed(const Problem &p, const float *x, const float *u, const float *bias, float *out)
{
    runTransformed<2>(p, x, u, bias, out, transformInput, transformOutput);
}

void conv3x3Transformed4(const Problem &p, const float *x, const float *u, const float *bias, float *out)
{
    runTransformed<4>(p, x, u, bias, out, transformInput4, transformOutput4);
}

} // namespace fusescope::winograd
