// Winograd F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks"): each 2x2 block of output pixels is A^T [(G g G^T) .*
// (B^T d B)] A over the 4x4 input window d, so the 36 multiplications of a
// direct 3x3 convolution per block become 16. Summed over the input
// channels, each of the 16 transformed points is one GEMM
// M[point] = U[point] (outC x c) . V[point] (c x tiles), which costs 16/36 of
// im2col's single GEMM. The transforms are additions only; their rounding
// stays within a few ulp of the direct sum for 3x3 kernels.
#include "core/ops/winograd.h"

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

// 2x2 output tiles per image.
struct Tiles {
    int64_t rows = 0, cols = 0;
    explicit Tiles(const Problem &p) : rows(ceilDiv(p.outH, 2)), cols(ceilDiv(p.outW, 2)) {}
};

// The four input rows under tile row `th` of one plane, zero-padded to
// `width` = 2 * tiles + 2 columns starting at column -padW.
void windowRows(const Problem &p, const float *plane, int64_t th, int64_t width, float *rows)
{
    const int64_t j0 = std::min(p.padW, width), j1 = std::clamp<int64_t>(p.w + p.padW, j0, width);
    for (int64_t k = 0; k < 4; ++k) {
        float *row = rows + k * width;
        const int64_t ih = 2 * th + k - p.padH;
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
            windowRows(p, x + (r / t.rows * p.c + c) * p.h * p.w, r % t.rows, width, d);
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
            const int64_t img = r / t.rows, oh = 2 * (r % t.rows);
            float *dst = out + ((img * p.outC + o) * p.outH + oh) * p.outW;
            std::copy_n(y0, p.outW, dst);
            if (oh + 1 < p.outH)
                std::copy_n(y1, p.outW, dst + p.outW);
        }
    }
}

} // namespace

// U[point][o][c] = G g G^T for the filter g = w[o][c], with
// G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]. A block of filters is
// transformed into a local [16][block] array first and then copied out one
// point at a time: the 16 points lie a power-of-two distance apart for
// typical channel counts, and storing to all 16 per filter made them evict
// each other from the same cache sets (512x512 weights: 9 ms, then 1.3).
void transformWeights(int64_t outC, int64_t c, const float *w, float *u)
{
    constexpr int64_t kBlock = 64;
    const int64_t filters = outC * c;
    parallelFor(0, ceilDiv(filters, kBlock), 16, [&](int64_t b0, int64_t b1) {
        float block[kPoints][kBlock];
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t first = b * kBlock, count = std::min(kBlock, filters - first);
            for (int64_t i = 0; i < count; ++i) {
                const float *g = w + (first + i) * 9;
                float gg[4][3]; // G g
                for (int j = 0; j < 3; ++j) {
                    gg[0][j] = g[j];
                    gg[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
                    gg[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
                    gg[3][j] = g[6 + j];
                }
                for (int r = 0; r < 4; ++r) {
                    const float a = gg[r][0], bb = gg[r][1], cc = gg[r][2];
                    block[r * 4][i] = a;
                    block[r * 4 + 1][i] = 0.5f * (a + bb + cc);
                    block[r * 4 + 2][i] = 0.5f * (a - bb + cc);
                    block[r * 4 + 3][i] = cc;
                }
            }
            for (int64_t k = 0; k < kPoints; ++k)
                std::copy_n(block[k], count, u + k * filters + first);
        }
    });
}

bool worthIt(const Problem &p, bool weightsReady)
{
    const Tiles t(p);
    const int64_t minTiles = weightsReady ? kMinTilesWeightsReady : kMinTiles;
    return p.c >= kMinChannels && p.outC >= kMinChannels && p.n * t.rows * t.cols >= minTiles;
}

void conv3x3(const Problem &p, const float *x, const float *w, const float *bias, float *out)
{
    const Tensor weights = Tensor::empty({kPoints * p.outC * p.c}, DType::F32);
    transformWeights(p.outC, p.c, w, weights.data<float>());
    conv3x3Transformed(p, x, weights.data<float>(), bias, out);
}

void conv3x3Transformed(const Problem &p, const float *x, const float *u, const float *bias, float *out)
{
    const Tiles t(p);
    const int64_t tileRows = p.n * t.rows;
    if (tileRows == 0 || t.cols == 0)
        return;
    // Chunks of whole tile rows, a multiple of the pool's threads.
    const bool nested = inParallelRegion();
    const int64_t threads = nested ? 1 : numThreads();
    const int64_t wanted = ceilDiv(ceilDiv(tileRows * t.cols, kChunkTiles), threads) * threads;
    const int64_t rowsPerChunk = ceilDiv(tileRows, std::min(tileRows, wanted));
    const int64_t chunks = ceilDiv(tileRows, rowsPerChunk), maxTiles = rowsPerChunk * t.cols;
    std::optional<SerialBlasScope> serialBlas;
    if (!nested)
        serialBlas.emplace();
    parallelFor(0, chunks, 1, [&](int64_t c0, int64_t c1) {
        const int64_t vSize = kPoints * p.c * maxTiles, mSize = kPoints * p.outC * maxTiles;
        const Tensor scratch = Tensor::empty({vSize + mSize + 8 * (2 * t.cols + 2)}, DType::F32);
        float *v = scratch.data<float>(), *m = v + vSize, *buf = m + mSize;
        for (int64_t chunk = c0; chunk < c1; ++chunk) {
            const int64_t r0 = chunk * rowsPerChunk, r1 = std::min(tileRows, r0 + rowsPerChunk);
            const int64_t tiles = (r1 - r0) * t.cols;
            transformInput(p, t, x, r0, r1, v, buf);
            for (int64_t k = 0; k < kPoints; ++k)
                blas::gemm(false, false, p.outC, tiles, p.c, 1.f, u + k * p.outC * p.c, p.c, v + k * p.c * tiles,
                           tiles, 0.f, m + k * p.outC * tiles, tiles);
            transformOutput(p, t, m, bias, r0, r1, out, buf);
        }
    });
}

} // namespace fusescope::winograd
