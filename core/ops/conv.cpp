// Convolution, pooling and resampling of NCHW images; an unbatched [C,H,W]
// input is a batch of one. Convolution runs on BLAS (a GEMM per image and
// group over an im2col buffer, or straight over the input for 1x1 kernels);
// depthwise convolution and pooling are direct loops whose inner loop runs
// along an output row, so the compiler vectorizes it.
#include "core/ops/conv.h"

#include "core/ops/builtin.h"
#include "core/ops/conv1x1.h"
#include "core/ops/depthwise.h"
#include "core/ops/linalg.h"
#include "core/ops/loops.h"
#include "core/ops/maxpool3s2.h"
#include "core/ops/registry.h"
#include "core/ops/rowmath.h"
#include "core/ops/storeactivation.h"
#include "core/ops/winograd.h"
#include "core/runtime/threadpool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace fusescope {
namespace {

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

// Rounds toward minus infinity (PyTorch's div_rtn), for negative spans too.
int64_t floorDiv(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

using loops::contiguousAs;

// --- geometry ---------------------------------------------------------------------

// A (height, width) parameter given as one or two ints.
struct Hw {
    int64_t h = 0, w = 0;
};

std::string hwStr(Hw v)
{
    return shapeStr({v.h, v.w});
}

Hw hwArg(const std::string &op, const char *name, const IntList &v)
{
    if (v.size() == 1)
        return {v[0], v[0]};
    if (v.size() == 2)
        return {v[0], v[1]};
    throw Error(op + ": " + name + " takes one or two values, got " + shapeStr(v));
}

Hw hwAtLeast(const std::string &op, const char *name, const IntList &v, int64_t min)
{
    const Hw hw = hwArg(op, name, v);
    if (hw.h < min || hw.w < min)
        throw Error(op + ": " + name + " must be " + (min > 0 ? "positive" : "non-negative") + ", got " + hwStr(hw));
    return hw;
}

// NCHW geometry of an input.
struct Images {
    int64_t n = 1, c = 0, h = 0, w = 0;
    bool batched = true;

    int64_t plane() const { return h * w; }
    Shape outShape(int64_t channels, Hw size) const
    {
        return batched ? Shape{n, channels, size.h, size.w} : Shape{channels, size.h, size.w};
    }
};

Images imagesOf(const std::string &op, const Tensor &x)
{
    if (x.dim() == 4)
        return {x.size(0), x.size(1), x.size(2), x.size(3), true};
    if (x.dim() == 3)
        return {1, x.size(0), x.size(1), x.size(2), false};
    throw Error(op + ": expected a 3-D [C,H,W] or 4-D [N,C,H,W] input, got " + shapeStr(x.sizes()));
}

void checkSpatialNonEmpty(const std::string &op, const Tensor &x, const Images &im)
{
    if (im.h == 0 || im.w == 0)
        throw Error(op + ": input " + shapeStr(x.sizes()) + " has an empty spatial dim");
}

// One spatial dim of a sliding window: output o, tap k reads input
// o * stride - pad + k * dilation.
struct Axis {
    int64_t in = 0, out = 0, kernel = 1, stride = 1, pad = 0, dilation = 1;

    int64_t offset(int64_t k) const { return k * dilation - pad; } // input index = o * stride + offset(k)
    bool inside(int64_t o, int64_t k) const
    {
        const int64_t i = o * stride + offset(k);
        return i >= 0 && i < in;
    }
};

// Outputs [lo, hi) whose tap k lands inside the input.
struct Span {
    int64_t lo = 0, hi = 0;
};

Span validOutputs(const Axis &a, int64_t k)
{
    const int64_t off = a.offset(k);
    const int64_t lo = std::min(a.out, off >= 0 ? 0 : ceilDiv(-off, a.stride));
    const int64_t hi = a.in - off <= 0 ? 0 : std::min(a.out, ceilDiv(a.in - off, a.stride));
    return {lo, std::max(lo, hi)};
}

std::vector<Span> validOutputsPerTap(const Axis &a)
{
    std::vector<Span> spans(static_cast<size_t>(a.kernel));
    for (int64_t k = 0; k < a.kernel; ++k)
        spans[size_t(k)] = validOutputs(a, k);
    return spans;
}

// Planes run in parallel; a chunk gets at least kGrain elements of work.
int64_t planeGrain(int64_t workPerPlane)
{
    return std::max<int64_t>(1, loops::kGrain / std::max<int64_t>(workPerPlane, 1));
}

OpCost costOf(const Args &args, std::span<const Tensor> outs, double flops)
{
    OpCost c = ioBytes(args, outs);
    c.flops = flops;
    return c;
}

// --- conv2d: geometry and checks ------------------------------------------------------

struct ConvGeometry {
    Images in;
    int64_t outC = 0, groups = 1;
    Axis h, w;
    StoreActivation act; // fusescope.conv2d_relu / conv2d_clamp: applied where each kernel stores

    int64_t cg() const { return in.c / groups; }   // input channels per group
    int64_t og() const { return outC / groups; }   // output channels per group
    int64_t taps() const { return h.kernel * w.kernel; }
    int64_t cols() const { return h.out * w.out; } // output pixels per image
    int64_t k() const { return cg() * taps(); }    // GEMM reduction size
};

const char kConv[] = "aten.conv2d";
const char kConvRelu[] = "fusescope.conv2d_relu";
const char kConvClamp[] = "fusescope.conv2d_clamp";

void checkConvDTypes(const char *op, const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias)
{
    const bool same = x.dtype() == w.dtype() && (!bias || bias->dtype() == x.dtype());
    if (!same || !isFloating(x.dtype()))
        throw Error(std::string(op) + ": expected floating input, weight and bias of one dtype, got "
                    + dtypeName(x.dtype()) + " input and " + dtypeName(w.dtype()) + " weight"
                    + (bias ? std::string(" and ") + dtypeName(bias->dtype()) + " bias" : std::string()));
}

void checkConvChannels(const char *op, const Tensor &x, const Tensor &w, const Images &im, int64_t groups)
{
    if (w.dim() != 4)
        throw Error(std::string(op) + ": weight must be 4-D [O,C/groups,kH,kW], got " + shapeStr(w.sizes()));
    if (groups < 1)
        throw Error(std::string(op) + ": groups must be positive, got " + std::to_string(groups));
    if (w.size(1) * groups != im.c)
        throw Error(std::string(op) + ": input " + shapeStr(x.sizes()) + " has " + std::to_string(im.c)
                    + " channels but weight " + shapeStr(w.sizes())
                    + (groups > 1 ? " with groups=" + std::to_string(groups) : std::string()) + " expects "
                    + std::to_string(w.size(1) * groups));
    if (w.size(0) % groups != 0)
        throw Error(std::string(op) + ": weight " + shapeStr(w.sizes()) + " has " + std::to_string(w.size(0))
                    + " output channels, which groups=" + std::to_string(groups) + " does not divide");
    if (w.size(2) < 1 || w.size(3) < 1)
        throw Error(std::string(op) + ": weight " + shapeStr(w.sizes()) + " has an empty kernel");
}

// Output size of a convolution along one axis; throws when the dilated
// kernel does not fit the padded input.
void convOutputs(const char *op, const Tensor &x, const Tensor &w, Axis &h, Axis &wd)
{
    const int64_t spanH = h.dilation * (h.kernel - 1) + 1, spanW = wd.dilation * (wd.kernel - 1) + 1;
    const int64_t paddedH = h.in + 2 * h.pad, paddedW = wd.in + 2 * wd.pad;
    if (spanH > paddedH || spanW > paddedW)
        throw Error(std::string(op) + ": kernel of weight " + shapeStr(w.sizes()) + " (dilated " + hwStr({spanH, spanW})
                    + ") is larger than input " + shapeStr(x.sizes()) + " padded to " + hwStr({paddedH, paddedW}));
    h.out = (paddedH - spanH) / h.stride + 1;
    wd.out = (paddedW - spanW) / wd.stride + 1;
}

// `op` names the op in errors: aten.conv2d, or the fused forms that share its checks.
ConvGeometry convGeometry(const Args &a, const char *op = kConv)
{
    const Tensor &x = arg(a, 0), &w = arg(a, 1);
    const std::optional<Tensor> bias = a[2].toOptionalTensor();
    ConvGeometry g;
    g.in = imagesOf(op, x);
    g.groups = a[6].toInt();
    checkConvChannels(op, x, w, g.in, g.groups);
    checkConvDTypes(op, x, w, bias);
    if (bias && (bias->dim() != 1 || bias->size(0) != w.size(0)))
        throw Error(std::string(op) + ": bias " + shapeStr(bias->sizes()) + " does not match weight "
                    + shapeStr(w.sizes()) + " with " + std::to_string(w.size(0)) + " output channels");
    const Hw stride = hwAtLeast(op, "stride", a[3].toIntList(), 1);
    const Hw pad = hwAtLeast(op, "padding", a[4].toIntList(), 0);
    const Hw dilation = hwAtLeast(op, "dilation", a[5].toIntList(), 1);
    g.outC = w.size(0);
    g.h = {g.in.h, 0, w.size(2), stride.h, pad.h, dilation.h};
    g.w = {g.in.w, 0, w.size(3), stride.w, pad.w, dilation.w};
    convOutputs(op, x, w, g.h, g.w);
    return g;
}

template <const char *Op> std::vector<TensorSpec> convShape(const Args &a)
{
    const ConvGeometry g = convGeometry(a, Op);
    return {{g.in.outShape(g.outC, {g.h.out, g.w.out}), arg(a, 0).dtype()}};
}

// --- conv2d: kernels ---------------------------------------------------------------------

// Output planes start as the bias (or zero): the GEMMs then add with beta = 1.
template <typename T>
void fillBias(const ConvGeometry &g, const T *bias, T *out)
{
    const int64_t planes = g.in.n * g.outC, cols = g.cols();
    parallelFor(0, planes, planeGrain(cols), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
            std::fill(out + p * cols, out + (p + 1) * cols, bias ? bias[p % g.outC] : T(0));
    });
}

// One block of a convolution's GEMMs: output channels [o0, o1) and pixels
// [c0, c1) of GEMM `gemm` (one per image and group, or per group of a band).
struct GemmBlock {
    int64_t gemm = 0, o0 = 0, o1 = 0, c0 = 0, c1 = 0;
};

// How a convolution's GEMMs are cut for the pool: into one block per thread
// in all (two per thread ran 3-8% slower: each block packs its operands
// again), along the output channels when a block keeps at least
// kMinBlockRows of them, else along the pixels while a block stays
// kMinBlockCols wide. Cutting the channels ran MobileNet v2's expanding 1x1
// convolutions (32 -> 192 at 28x28, 64 -> 384 at 14x14) 2-3x faster than
// cutting the pixels, and resnet18's layer4 at batch 4 12% faster
// (bench_conv). Each block is a single-threaded GEMM,
// so the pool, not OpenBLAS, splits the work: OpenBLAS synchronizes its
// threads for every product, and the narrow ones of a CNN's last stages at
// batch 1 (resnet18's layer4: [512 x 49 x 4608]) gain little from its split.
struct GemmBlocks {
    int64_t gemms = 1, rowParts = 1, colParts = 1, rows = 0, cols = 0;

    static constexpr int64_t kMinBlockRows = 16, kMinBlockCols = 32;
    GemmBlocks(int64_t gemmCount, int64_t m, int64_t n, int threads) : gemms(gemmCount), rows(m), cols(n)
    {
        const int64_t parts = ceilDiv(int64_t(threads), std::max<int64_t>(gemms, 1));
        if (parts <= 1)
            return;
        if (m / parts >= kMinBlockRows || n / parts < kMinBlockCols)
            rowParts = std::min(parts, std::max<int64_t>(m / 8, 1));
        else
            colParts = parts;
    }
    int64_t count() const { return gemms * rowParts * colParts; }
    GemmBlock block(int64_t i) const
    {
        const int64_t r = i / colParts % rowParts, c = i % colParts;
        const int64_t rowStep = ceilDiv(rows, rowParts), colStep = ceilDiv(cols, colParts);
        return {i / (rowParts * colParts), std::min(rows, r * rowStep), std::min(rows, (r + 1) * rowStep),
                std::min(cols, c * colStep), std::min(cols, (c + 1) * colStep)};
    }
};

// fn(block) for every non-empty block, on the pool with serial BLAS.
template <typename Fn>
void runGemmBlocks(const GemmBlocks &blocks, Fn &&fn)
{
    auto run = [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const GemmBlock b = blocks.block(i);
            if (b.o0 < b.o1 && b.c0 < b.c1)
                fn(b);
        }
    };
    if (blocks.count() == 1 || inParallelRegion())
        return run(0, blocks.count());
    const SerialBlasScope serialBlas;
    parallelFor(0, blocks.count(), 1, run);
}

int poolWidth()
{
    return inParallelRegion() ? 1 : numThreads();
}

// 1x1, stride 1, no padding: the input image is already the GEMM's right
// operand [C/groups, H*W] per group. The blocks run on the pool with
// single-threaded BLAS: OpenBLAS runs MobileNet's small GEMMs at batch 1
// (96x49x576) on one thread, and its idle thread spun on the other core.
template <typename T>
void pointwiseConv(const ConvGeometry &g, const T *x, const T *w, const T *bias, T *out)
{
    const int64_t cols = g.cols(), cg = g.cg(), og = g.og();
    runGemmBlocks(GemmBlocks(g.in.n * g.groups, og, cols, poolWidth()), [&](const GemmBlock &b) {
        const int64_t n = b.gemm / g.groups, grp = b.gemm % g.groups, width = b.c1 - b.c0;
        T *dst = out + (n * g.outC + grp * og + b.o0) * cols + b.c0;
        for (int64_t o = b.o0; bias && o < b.o1; ++o)
            std::fill_n(dst + (o - b.o0) * cols, width, bias[grp * og + o]);
        blas::gemm(false, false, b.o1 - b.o0, width, cg, T(1), w + (grp * og + b.o0) * cg, cg,
                   x + (n * g.in.c + grp * cg) * cols + b.c0, cols, T(bias ? 1 : 0), dst, cols);
    });
}

// dst[o] = src[2 * o] for o < n: two vectors of the source, their even
// lanes picked by one permute. The loads are masked to the elements read,
// so nothing past src[2 * (n - 1)] is touched.
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void gatherEvenWide(float *dst, const float *src,
                                                                                 int64_t n)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (int64_t o = 0; o < n; o += 16) {
        const int64_t count = std::min<int64_t>(16, n - o), reads = 2 * count - 1;
        const auto lo = static_cast<__mmask16>((1u << std::min<int64_t>(16, reads)) - 1u);
        const auto hi = static_cast<__mmask16>((1u << std::max<int64_t>(0, reads - 16)) - 1u);
        const __m512 a = _mm512_maskz_loadu_ps(lo, src + 2 * o), b = _mm512_maskz_loadu_ps(hi, src + 2 * o + 16);
        _mm512_mask_storeu_ps(dst + o, static_cast<__mmask16>((1u << count) - 1u), _mm512_permutex2var_ps(a, even, b));
    }
}

// Copies input row `src` under the taps of one kernel column: dst[o] =
// src[o * stride + offset] inside `valid`, zero (padding) outside. Stride 2
// in f32 moves a vector at a time: element by element it took longer than
// the product of a stem's shallow column matrix.
template <typename T>
void gatherRow(T *dst, const T *src, int64_t outW, Span valid, int64_t stride, int64_t offset)
{
    std::fill(dst, dst + valid.lo, T(0));
    bool wide = false;
    if constexpr (std::is_same_v<T, float>)
        wide = stride == 2 && valid.lo < valid.hi && loops::wideVectors();
    if (stride == 1 && valid.lo < valid.hi) { // contiguous: std::copy becomes memmove
        std::copy(src + valid.lo + offset, src + valid.hi + offset, dst + valid.lo);
    } else if (wide) {
        if constexpr (std::is_same_v<T, float>)
            gatherEvenWide(dst + valid.lo, src + 2 * valid.lo + offset, valid.hi - valid.lo);
    } else {
        for (int64_t o = valid.lo; o < valid.hi; ++o)
            dst[o] = src[o * stride + offset];
    }
    std::fill(dst + valid.hi, dst + outW, T(0));
}

// Output rows [begin, end) of an image: the unit of im2col when a whole
// image's buffer would be too large.
struct Band {
    int64_t begin = 0, end = 0;
};

// Stride 1 with output rows as wide as the input's ("same" padding): tap
// (ki, kj) sees the input plane shifted by one constant, so its part of a
// band is a single contiguous copy, plus zeros where the window hangs over
// the padding (whole rows, and the few columns that wrapped around from the
// neighbouring row). One copy per plane instead of one per output row: the
// rows of the later layers are only 7-28 pixels long.
bool shiftedGather(const ConvGeometry &g)
{
    return g.h.stride == 1 && g.w.stride == 1 && g.w.out == g.w.in;
}

// dst holds output pixels [band.begin * W, band.end * W) of one tap and image.
template <typename T>
void gatherShifted(T *dst, const T *plane, int64_t width, Band band, Span rows, Span cols, int64_t shift)
{
    T *base = dst - band.begin * width; // indexed by output pixel
    const int64_t r0 = std::max(band.begin, rows.lo), r1 = std::min(band.end, rows.hi);
    if (r0 >= r1 || cols.lo >= cols.hi) {
        std::fill(dst, dst + (band.end - band.begin) * width, T(0));
        return;
    }
    // The copy starts and ends on valid taps, so it never reads outside the plane.
    const int64_t first = r0 * width + cols.lo, last = (r1 - 1) * width + cols.hi;
    std::fill(base + band.begin * width, base + first, T(0));
    std::copy(plane + first + shift, plane + last + shift, base + first);
    std::fill(base + last, base + band.end * width, T(0));
    for (int64_t oh = r0; oh < r1; ++oh) {
        std::fill(base + oh * width, base + oh * width + cols.lo, T(0));
        std::fill(base + oh * width + cols.hi, base + (oh + 1) * width, T(0));
    }
}

// One row of the column matrix (tap (ki, kj) of channel c) for one image.
template <typename T>
void im2colRow(const ConvGeometry &g, const T *plane, Band band, T *dst, int64_t ki, int64_t kj,
               const std::vector<Span> &spansW)
{
    if (shiftedGather(g)) {
        const int64_t shift = g.h.offset(ki) * g.in.w + g.w.offset(kj);
        gatherShifted(dst, plane, g.w.out, band, validOutputs(g.h, ki), spansW[size_t(kj)], shift);
        return;
    }
    for (int64_t oh = band.begin; oh < band.end; ++oh) {
        T *row = dst + (oh - band.begin) * g.w.out;
        if (!g.h.inside(oh, ki)) {
            std::fill(row, row + g.w.out, T(0));
            continue;
        }
        const T *src = plane + (oh * g.h.stride + g.h.offset(ki)) * g.in.w;
        gatherRow(row, src, g.w.out, spansW[size_t(kj)], g.w.stride, g.w.offset(kj));
    }
}

// col[(c, ki, kj), j * pixels + pixel] for `count` images over one band of
// output rows: row r of the GEMM's right operand holds what tap (ki, kj) of
// channel c sees at every output pixel of the band.
template <typename T>
void im2col(const ConvGeometry &g, const T *x, int64_t count, Band band, T *col, const std::vector<Span> &spansW)
{
    const int64_t rows = g.in.c * g.taps(), pixels = (band.end - band.begin) * g.w.out, width = count * pixels;
    parallelFor(0, rows, planeGrain(width), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t c = r / g.taps(), ki = (r % g.taps()) / g.w.kernel, kj = r % g.w.kernel;
            for (int64_t j = 0; j < count; ++j)
                im2colRow(g, x + (j * g.in.c + c) * g.in.plane(), band, col + r * width + j * pixels, ki, kj, spansW);
        }
    });
}

// The GEMM of several images lands as [O, images * pixels]; NCHW wants
// [images, O, pixels], with the bias added on the way.
template <typename T>
void scatterImages(const ConvGeometry &g, const T *product, int64_t count, const T *bias, T *out)
{
    const int64_t cols = g.cols(), width = count * cols;
    parallelFor(0, count * g.outC, planeGrain(cols), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t j = p / g.outC, o = p % g.outC;
            const T *src = product + o * width + j * cols;
            T *dst = out + p * cols;
            const T b = bias ? bias[o] : T(0);
            for (int64_t i = 0; i < cols; ++i)
                dst[i] = src[i] + b;
            g.act.apply(dst, 1, cols, cols);
        }
    });
}

// The im2col buffer stays within a few tens of MiB.
constexpr int64_t kMaxColElements = int64_t(8) << 20;

// Small images are batched into one wider GEMM (BLAS is slow on narrow
// matrices).
int64_t imagesPerGemm(const ConvGeometry &g)
{
    constexpr int64_t kWideEnough = 1024;
    const int64_t cols = std::max<int64_t>(g.cols(), 1);
    const int64_t count = std::min(g.in.n, ceilDiv(kWideEnough, cols));
    return std::max<int64_t>(std::min(count, kMaxColElements / std::max<int64_t>(g.in.c * g.taps() * cols, 1)), 1);
}

// Large images go through im2col a band of output rows at a time.
int64_t rowsPerBand(const ConvGeometry &g)
{
    const int64_t perRow = std::max<int64_t>(g.in.c * g.taps() * g.w.out, 1);
    return std::clamp<int64_t>(kMaxColElements / perRow, 1, std::max<int64_t>(g.h.out, 1));
}

// Several small images per GEMM, through a product buffer.
template <typename T>
void convImagesBatched(const ConvGeometry &g, const T *x, const T *w, const T *bias, T *out, int64_t batch,
                       DType dtype)
{
    const int64_t cols = g.cols(), og = g.og(), k = g.k();
    const std::vector<Span> spansW = validOutputsPerTap(g.w);
    // Scratch through the caching allocator: the next call reuses the blocks.
    const Tensor colBuffer = Tensor::empty({g.in.c * g.taps() * batch * cols}, dtype);
    const Tensor product = Tensor::empty({g.outC * batch * cols}, dtype);
    T *col = colBuffer.data<T>(), *prod = product.data<T>();
    for (int64_t n0 = 0; n0 < g.in.n; n0 += batch) {
        const int64_t count = std::min(batch, g.in.n - n0), width = count * cols;
        im2col(g, x + n0 * g.in.c * g.in.plane(), count, {0, g.h.out}, col, spansW);
        runGemmBlocks(GemmBlocks(g.groups, og, width, poolWidth()), [&](const GemmBlock &b) {
            blas::gemm(false, false, b.o1 - b.o0, b.c1 - b.c0, k, T(1), w + (b.gemm * og + b.o0) * k, k,
                       col + b.gemm * k * width + b.c0, width, T(0), prod + (b.gemm * og + b.o0) * width + b.c0,
                       width);
        });
        scatterImages(g, prod, count, bias, out + n0 * g.outC * cols);
    }
}

// A product only 32-64 pixels wide (a 7x7 or 8x8 output plane at batch 1:
// ResNet's layer4) goes through the 1x1 convolution's register blocks, which
// hold all of its pixels in one block and read the column matrix in place:
// BLAS packs both operands for 2-4 vectors of output per row. resnet18's
// 512 -> 512 3x3 at 7x7 took 1.23-1.52 ms against 1.58-1.75 ms through BLAS,
// 256 -> 512 at 14x14 stride 2 0.82-0.89 against 0.87-0.96 ms (minimum of
// 200-300 calls, three runs, two threads); at 14x14 output (196 pixels) BLAS
// stayed ahead.
constexpr int64_t kNarrowPixels = 64;

bool narrowBlock(int64_t pixels)
{
    return pixels >= 32 && pixels <= kNarrowPixels && loops::wideVectors();
}

// One image at a time, a band of output rows per GEMM, written straight into
// the output (rows of a band are contiguous within each output plane).
template <typename T>
void convImageBands(const ConvGeometry &g, const T *x, const T *w, const T *bias, T *out, DType dtype)
{
    const int64_t cols = g.cols(), og = g.og(), k = g.k(), bandRows = rowsPerBand(g);
    const std::vector<Span> spansW = validOutputsPerTap(g.w);
    const Tensor colBuffer = Tensor::empty({g.in.c * g.taps() * bandRows * g.w.out}, dtype);
    T *col = colBuffer.data<T>();
    if (bias)
        fillBias(g, bias, out);
    for (int64_t n = 0; n < g.in.n; ++n) {
        for (int64_t oh = 0; oh < g.h.out; oh += bandRows) {
            const Band band{oh, std::min(oh + bandRows, g.h.out)};
            const int64_t pixels = (band.end - band.begin) * g.w.out;
            im2col(g, x + n * g.in.c * g.in.plane(), 1, band, col, spansW);
            T *dst = out + n * g.outC * cols + oh * g.w.out;
            runGemmBlocks(GemmBlocks(g.groups, og, pixels, poolWidth()), [&](const GemmBlock &b) {
                const T *wb = w + (b.gemm * og + b.o0) * k, *xb = col + b.gemm * k * pixels + b.c0;
                T *ob = dst + (b.gemm * og + b.o0) * cols + b.c0;
                if constexpr (std::is_same_v<T, float>) {
                    if (narrowBlock(b.c1 - b.c0)) // over the bias fillBias wrote
                        return conv1x1::gemm({b.o1 - b.o0, k, b.c1 - b.c0, pixels, cols, g.act}, wb, xb,
                                             bias ? bias + b.gemm * og + b.o0 : nullptr, ob);
                }
                blas::gemm(false, false, b.o1 - b.o0, b.c1 - b.c0, k, T(1), wb, k, xb, pixels, T(bias ? 1 : 0), ob,
                           cols);
                g.act.apply(ob, b.o1 - b.o0, b.c1 - b.c0, cols);
            });
        }
    }
}

// --- tiles: im2col and GEMM per pool thread ---------------------------------------------
// Large output planes (the early layers of a CNN) are cut into bands of
// output rows; each pool thread gathers a band's columns into its own
// buffer and multiplies it at once with single-threaded BLAS, straight into
// the output. The buffer is still in the core's cache when BLAS packs it,
// the gathering runs on every core without a barrier before each GEMM, and
// no product buffer has to be scattered into NCHW afterwards.
constexpr int64_t kTileColBytes = int64_t(1) << 20; // half of a 2 MiB L2
// A tile must be wide enough for BLAS to run at speed.
constexpr int64_t kMinTilePixels = 192;

// Rows per tile: as many as fit kTileColBytes, then fewer so that the tiles
// of the whole batch split evenly over the pool's threads (resnet18's layer1
// at batch 1 was 7 tiles of 8 rows: one thread ran 4 while the other ran 3).
int64_t tileRows(const ConvGeometry &g, size_t itemSize)
{
    const int64_t perRow = std::max<int64_t>(g.in.c * g.taps() * g.w.out * int64_t(itemSize), 1);
    const int64_t outRows = std::max<int64_t>(g.h.out, 1), images = std::max<int64_t>(g.in.n, 1);
    const int64_t rows = std::clamp<int64_t>(kTileColBytes / perRow, 1, outRows);
    const int64_t threads = poolWidth(), tiles = ceilDiv(images * ceilDiv(outRows, rows), threads) * threads;
    return ceilDiv(outRows, ceilDiv(tiles, images));
}

// Tiles pay when every thread gets a few of them and each is wide enough.
bool useTiles(const ConvGeometry &g, size_t itemSize)
{
    const int64_t rows = tileRows(g, itemSize), tiles = g.in.n * ceilDiv(g.h.out, rows);
    return rows * g.w.out >= kMinTilePixels && tiles >= 2 * numThreads();
}

// Column matrices at most this deep (a stem's 3 channels by 3x3 to 7x7
// taps, 16-32 channels by 3x3) go through the 1x1 convolution's register
// blocks: BLAS packs both operands for a product of 27 steps, and ran
// squeezenet's stem (3 -> 64, 3x3 stride 2) at 40 GFLOP/s. Against BLAS
// tiles, minimum of 60-100 calls, two runs each: resnet18's stem (3 -> 64,
// 7x7 stride 2, 147 deep) 1.57-2.33 -> 1.35-1.89 ms at batch 1, 16 -> 64 3x3
// stride 2 at 112x112 (144) 0.54-0.65 -> 0.36-0.48 ms, 32 -> 64 (288)
// 0.71-1.00 -> 0.64-0.91 ms.
constexpr int64_t kShallowDepth = 288;

bool shallowTile(const ConvGeometry &g, int64_t pixels)
{
    return g.k() <= kShallowDepth && pixels >= 32 && loops::wideVectors();
}

// One group of one band: dst = bias + w col, through BLAS or the register blocks.
template <typename T>
void tileProduct(const ConvGeometry &g, const T *w, const T *col, const T *bias, T *dst, int64_t pixels)
{
    const int64_t og = g.og(), k = g.k();
    if constexpr (std::is_same_v<T, float>) {
        if (shallowTile(g, pixels))
            return conv1x1::gemm({og, k, pixels, pixels, g.cols(), g.act}, w, col, bias, dst);
    }
    if (bias)
        for (int64_t o = 0; o < og; ++o)
            std::fill(dst + o * g.cols(), dst + o * g.cols() + pixels, bias[o]);
    blas::gemm(false, false, og, pixels, k, T(1), w, k, col, pixels, T(bias ? 1 : 0), dst, g.cols());
    g.act.apply(dst, og, pixels, g.cols());
}

template <typename T>
void convTiles(const ConvGeometry &g, const T *x, const T *w, const T *bias, T *out, DType dtype)
{
    const int64_t rows = tileRows(g, sizeof(T)), bands = ceilDiv(g.h.out, rows);
    const int64_t cols = g.cols(), og = g.og(), k = g.k();
    const std::vector<Span> spansW = validOutputsPerTap(g.w);
    const SerialBlasScope serialBlas;
    parallelFor(0, g.in.n * bands, 1, [&](int64_t t0, int64_t t1) {
        const Tensor colBuffer = Tensor::empty({g.in.c * g.taps() * rows * g.w.out}, dtype);
        T *col = colBuffer.data<T>();
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t n = t / bands;
            const Band band{t % bands * rows, std::min(t % bands * rows + rows, g.h.out)};
            const int64_t pixels = (band.end - band.begin) * g.w.out;
            T *dst = out + n * g.outC * cols + band.begin * g.w.out;
            im2col(g, x + n * g.in.c * g.in.plane(), 1, band, col, spansW); // serial: nested in the pool
            for (int64_t grp = 0; grp < g.groups; ++grp)
                tileProduct(g, w + grp * og * k, col + grp * k * pixels, bias ? bias + grp * og : nullptr,
                            dst + grp * og * cols, pixels);
        }
    });
}

// Shallow products take tiles whenever every thread gets one: the register
// blocks need neither BLAS's width nor several tiles per thread to balance.
bool useShallowTiles(const ConvGeometry &g)
{
    const int64_t rows = tileRows(g, sizeof(float)), tiles = g.in.n * ceilDiv(g.h.out, rows);
    return shallowTile(g, rows * g.w.out) && tiles >= numThreads();
}

template <typename T>
void im2colConv(const ConvGeometry &g, const T *x, const T *w, const T *bias, T *out, DType dtype)
{
    if (useTiles(g, sizeof(T)) || (std::is_same_v<T, float> && useShallowTiles(g)))
        return convTiles(g, x, w, bias, out, dtype);
    const int64_t batch = imagesPerGemm(g);
    if (batch > 1)
        convImagesBatched(g, x, w, bias, out, batch, dtype);
    else
        convImageBands(g, x, w, bias, out, dtype);
}

// dst[0, n) = src[0, n) for the short rows of small planes: up to 16
// elements as two overlapping fixed-size copies that compile to a few vector
// moves, longer ones through memmove (a call per row of 7 floats cost more
// than the copy).
template <typename T>
void copyShort(T *dst, const T *src, int64_t n)
{
    constexpr int64_t half = 32 / int64_t(sizeof(T));
    if (n > 2 * half || n < half / 2) {
        std::copy(src, src + n, dst);
    } else if (n >= half) {
        T head[half], tail[half];
        std::memcpy(head, src, sizeof head);
        std::memcpy(tail, src + n - half, sizeof tail);
        std::memcpy(dst, head, sizeof head);
        std::memcpy(dst + n - half, tail, sizeof tail);
    } else {
        T head[half / 2], tail[half / 2];
        std::memcpy(head, src, sizeof head);
        std::memcpy(tail, src + n - half / 2, sizeof tail);
        std::memcpy(dst, head, sizeof head);
        std::memcpy(dst + n - half / 2, tail, sizeof tail);
    }
}

// Depthwise convolution and max pooling read each input plane through a
// padded copy split into stride x stride phases: phase (r, c) holds padded
// rows r, r + s, ... and columns c, c + s, ..., so every tap reads a
// contiguous run. Output rows are laid out at the phase's row pitch, which
// makes one tap one loop over a whole band of rows: long enough to vectorize
// on MobileNet's 7x7 and 14x14 planes, where a loop per output row ran 7-14
// iterations. The price is (kernel - 1) * dilation / stride discarded columns
// per row.
struct PhasedPlane {
    static constexpr int64_t kShortRow = 32;
    Axis h, w;
    int64_t rows = 0, pitch = 0; // of one phase
    int64_t phases = 0;          // stride.h * stride.w

    // `align`: the pitch is rounded up to a multiple of it (extra columns are padding).
    PhasedPlane(const Axis &height, const Axis &width, int64_t align = 1)
        : h(height), w(width), rows(h.out + (h.kernel - 1) * h.dilation / h.stride),
          pitch(ceilDiv(w.out + (w.kernel - 1) * w.dilation / w.stride, align) * align), phases(h.stride * w.stride)
    {
    }
    int64_t size() const { return rows * pitch; }
    // Offset of tap (ki, kj) into the phases buffer.
    int64_t tapOffset(int64_t ki, int64_t kj) const
    {
        const int64_t di = ki * h.dilation, dj = kj * w.dilation;
        const int64_t phase = di % h.stride * w.stride + dj % w.stride;
        return phase * size() + di / h.stride * pitch + dj / w.stride;
    }

    // Phase (r, c) row i, column j = input row i * sh + r - pad.h, column
    // j * sw + c - pad.w, or `outside` (the padding) where that is not in the plane.
    // Short rows get their padding from one pass over all phases first: on
    // 7x7 and 14x14 planes, filling it row by row cost more library calls
    // than the rows had elements. Long rows would be written twice.
    template <typename T, typename P>
    void fill(const T *plane, P *dst, P outside) const
    {
        const bool shortRows = pitch <= kShortRow;
        if (shortRows)
            std::fill(dst, dst + phases * size(), outside);
        for (int64_t r = 0; r < h.stride; ++r) {
            for (int64_t c = 0; c < w.stride; ++c) {
                const Span inside = validOutputs({w.in, pitch, 1, w.stride, w.pad - c, 1}, 0);
                for (int64_t i = 0; i < rows; ++i, dst += pitch) {
                    const int64_t ih = i * h.stride + r - h.pad;
                    const bool in = ih >= 0 && ih < h.in && inside.lo < inside.hi;
                    if (!shortRows) {
                        std::fill(dst, dst + (in ? inside.lo : pitch), outside);
                        std::fill(dst + (in ? inside.hi : pitch), dst + pitch, outside);
                    }
                    if (in)
                        copyRow(plane + ih * w.in, dst, inside, c - w.pad);
                }
            }
        }
    }

private:
    // dst[j] = src[j * stride + shift] for j in `cols`.
    template <typename T, typename P>
    void copyRow(const T *src, P *dst, Span cols, int64_t shift) const
    {
        if constexpr (std::is_same_v<T, P>) {
            if (w.stride == 1)
                return copyShort(dst + cols.lo, src + cols.lo + shift, cols.hi - cols.lo);
        }
        if (w.stride == 1)
            std::copy(src + cols.lo + shift, src + cols.hi + shift, dst + cols.lo);
        else if (w.stride == 2) // a constant stride vectorizes as loads and shuffles
            for (int64_t j = cols.lo; j < cols.hi; ++j)
                dst[j] = P(src[2 * j + shift]);
        else
            for (int64_t j = cols.lo; j < cols.hi; ++j)
                dst[j] = P(src[j * w.stride + shift]);
    }
};

// The tap loops run in whole blocks of kBlock, so no scalar remainder loop
// follows the vector one; the scratch buffers carry kBlock elements of slack
// for the columns past the band's last output.
constexpr int64_t kBlock = 16;

// acc[k] += tap * src[k] over one band; both at the phase pitch.
template <typename T>
void accumulateTap(T *__restrict acc, const T *__restrict src, T tap, int64_t n)
{
    for (int64_t k0 = 0; k0 < n; k0 += kBlock)
        for (int64_t k = k0; k < k0 + kBlock; ++k)
            acc[k] += tap * src[k];
}

// A kernel row of 3 or 5 taps in one pass, so acc is loaded and stored once
// per row instead of once per tap (MobileNet's and EfficientNet's kernels).
template <typename T>
void accumulate3(T *__restrict acc, const T *__restrict a, const T *__restrict b, const T *__restrict c,
                 const T *taps, int64_t n)
{
    const T ta = taps[0], tb = taps[1], tc = taps[2];
    for (int64_t k0 = 0; k0 < n; k0 += kBlock)
        for (int64_t k = k0; k < k0 + kBlock; ++k)
            acc[k] += ta * a[k] + tb * b[k] + tc * c[k];
}

template <typename T>
void accumulate5(T *__restrict acc, const T *__restrict a, const T *__restrict b, const T *__restrict c,
                 const T *__restrict d, const T *__restrict e, const T *taps, int64_t n)
{
    const T ta = taps[0], tb = taps[1], tc = taps[2], td = taps[3], te = taps[4];
    for (int64_t k0 = 0; k0 < n; k0 += kBlock)
        for (int64_t k = k0; k < k0 + kBlock; ++k)
            acc[k] += ta * a[k] + tb * b[k] + tc * c[k] + td * d[k] + te * e[k];
}

// Output rows [row0, row1) of one plane: taps summed into acc at the phase
// pitch, then the valid columns copied out.
template <typename T>
void depthwiseBand(const ConvGeometry &g, const PhasedPlane &pp, const T *phases, const T *taps, T bias, T *acc,
                   T *dst, int64_t row0, int64_t row1)
{
    const int64_t begin = row0 * pp.pitch, kw = g.w.kernel;
    const int64_t n = ceilDiv((row1 - 1 - row0) * pp.pitch + g.w.out, kBlock) * kBlock;
    std::fill(acc, acc + n, bias);
    for (int64_t ki = 0; ki < g.h.kernel; ++ki) {
        const T *row = taps + ki * kw;
        auto src = [&](int64_t kj) { return phases + pp.tapOffset(ki, kj) + begin; };
        if (kw == 3)
            accumulate3(acc, src(0), src(1), src(2), row, n);
        else if (kw == 5)
            accumulate5(acc, src(0), src(1), src(2), src(3), src(4), row, n);
        else
            for (int64_t kj = 0; kj < kw; ++kj)
                accumulateTap(acc, src(kj), row[kj], n);
    }
    for (int64_t oh = row0; oh < row1; ++oh)
        std::copy_n(acc + (oh - row0) * pp.pitch, g.w.out, dst + oh * g.w.out);
}

// Rows per band: the band's accumulator stays in L1 across the taps.
constexpr int64_t kDepthwiseBandBytes = 16 << 10;

// groups == C with one input channel per group: each output plane is a
// weighted sum of shifted copies of one input plane.
template <typename T>
void depthwiseConv(const ConvGeometry &g, const T *x, const T *w, const T *bias, T *out, DType dtype)
{
    const int64_t og = g.og();
    const bool wide = std::is_same_v<T, float> && depthwise::worthIt(g.h.kernel, g.w.kernel, g.h.stride, g.w.stride,
                                                                    g.h.dilation, g.w.dilation, g.w.out);
    const PhasedPlane pp(g.h, g.w, wide ? depthwise::kPitchAlign : 1);
    const int64_t bandRows = std::clamp<int64_t>(kDepthwiseBandBytes / int64_t(sizeof(T)) / pp.pitch, 1, g.h.out);
    const int64_t slack = std::max(kBlock, depthwise::kSlack); // read only into discarded columns
    const int64_t phasesSize = pp.phases * pp.size() + slack, accSize = bandRows * pp.pitch + kBlock;
    const int64_t work = pp.phases * pp.size() + g.h.out * pp.pitch * g.taps();
    parallelFor(0, g.in.n * g.outC, planeGrain(work), [&](int64_t p0, int64_t p1) {
        const Tensor scratch = Tensor::empty({phasesSize + accSize}, dtype);
        T *phases = scratch.data<T>(), *acc = phases + phasesSize;
        std::fill(phases + phasesSize - slack, phases + phasesSize, T(0));
        int64_t filled = -1; // the input plane now in `phases`
        auto planeOf = [&](int64_t p) { return p / g.outC * g.in.c + p % g.outC / og; }; // output plane -> input
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t o = p % g.outC, plane = planeOf(p);
            if constexpr (std::is_same_v<T, float>) {
                if (wide) {
                    const int64_t next = p + 1 < p1 ? planeOf(p + 1) : plane;
                    if (plane != filled)
                        depthwise::fillWide(x + plane * g.in.plane(),
                                            {g.h.in, g.w.in, g.h.pad, g.w.pad, g.h.stride, pp.rows, pp.pitch}, phases,
                                            next != plane ? x + next * g.in.plane() : nullptr);
                    filled = plane;
                    depthwise::planeWide(g.h.kernel, g.h.stride, {phases, pp.size(), pp.pitch}, w + o * g.taps(),
                                         bias ? bias[o] : 0.f, out + p * g.cols(), g.h.out, g.w.out);
                    g.act.apply(out + p * g.cols(), 1, g.cols(), 0); // the plane is still in cache
                    continue;
                }
            }
            if (plane != filled)
                pp.fill(x + plane * g.in.plane(), phases, T(0));
            filled = plane;
            // The tap loops are compute bound in L1: 16 lanes where the CPU has them.
            loops::runVectorized([&] {
                for (int64_t row = 0; row < g.h.out; row += bandRows)
                    depthwiseBand(g, pp, phases, w + o * g.taps(), bias ? bias[o] : T(0), acc, out + p * g.cols(),
                                  row, std::min(row + bandRows, g.h.out));
            });
            g.act.apply(out + p * g.cols(), 1, g.cols(), 0);
        }
    });
}

// Output planes of 6 to 8 columns (depthwise.h): a plane a task, no copies.
bool useSmallPlanes(const ConvGeometry &g)
{
    return g.og() == 1 && depthwise::smallWorthIt(g.h.kernel, g.w.kernel, g.h.stride, g.w.stride, g.h.dilation,
                                                  g.w.dilation, g.h.out, g.w.out);
}

void depthwiseSmall(const ConvGeometry &g, const float *x, const float *w, const float *bias, float *out)
{
    const depthwise::SmallPlanes planes({g.h.in, g.w.in, g.h.pad, g.w.pad, g.h.kernel, g.h.stride, g.h.out, g.w.out});
    parallelFor(0, g.in.n * g.outC, planeGrain(g.cols() * g.taps()), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t o = p % g.outC;
            planes.run(x + p * g.in.plane(), w + o * g.taps(), bias ? bias[o] : 0.f, out + p * g.cols());
            g.act.apply(out + p * g.cols(), 1, g.cols(), 0);
        }
    });
}

// 8 f32 lanes (AVX2) as a GCC/Clang vector type, for the register-blocked kernels below.
using Vec8 = float __attribute__((vector_size(32)));

inline Vec8 load8(const float *p)
{
    Vec8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline void store8(float *p, Vec8 v)
{
    std::memcpy(p, &v, sizeof v);
}

// --- depthwise convolution on small planes, channels innermost ---------------------
// On 14x14 and 7x7 planes a plane's rows are shorter than the vector blocks
// above, so the per-plane loops spend their time on edges, fills and copies
// (576 channels at 7x7 with 5x5 taps: 21 GFLOP/s). Here a block of channels
// is transposed channels-last into a zero-padded tile, and each output pixel
// sums its taps as one loop over the block's channels: every load is a full
// vector whatever the plane's size. The two transposes cost about as much as
// 9 taps, so only 5x5 kernels at stride 1 gain (bench_conv: 576@7 0.065 ->
// 0.035 ms, 240@14 0.057 -> 0.047 ms; 3x3 and stride 2 ran 10-30% slower).
constexpr int64_t kChannelBlock = 32;
constexpr int64_t kSmallPlane = 14 * 14; // output pixels
constexpr int64_t kMinChannelsLastTaps = 25;

bool useChannelsLast(const ConvGeometry &g)
{
    return g.og() == 1 && g.taps() >= kMinChannelsLastTaps && g.h.stride == 1 && g.w.stride == 1 &&
           g.cols() <= kSmallPlane;
}

// The padded input rows and columns that the taps read.
struct PaddedTile {
    int64_t rows = 0, cols = 0;
    explicit PaddedTile(const ConvGeometry &g)
        : rows((g.h.out - 1) * g.h.stride + (g.h.kernel - 1) * g.h.dilation + 1),
          cols((g.w.out - 1) * g.w.stride + (g.w.kernel - 1) * g.w.dilation + 1)
    {
    }
};

// tile[(r * cols + c) * kChannelBlock + ch] = channel ch of the padded input,
// zero outside it; channels past `count` stay zero.
void fillChannelsLast(const ConvGeometry &g, const PaddedTile &pt, const float *x, int64_t count, float *tile)
{
    std::fill_n(tile, pt.rows * pt.cols * kChannelBlock, 0.f);
    const int64_t ih1 = std::min(g.h.in, pt.rows - g.h.pad), iw1 = std::min(g.w.in, pt.cols - g.w.pad);
    for (int64_t ch = 0; ch < count; ++ch) {
        const float *plane = x + ch * g.in.plane();
        for (int64_t ih = 0; ih < ih1; ++ih) {
            float *dst = tile + ((ih + g.h.pad) * pt.cols + g.w.pad) * kChannelBlock + ch;
            for (int64_t iw = 0; iw < iw1; ++iw)
                dst[iw * kChannelBlock] = plane[ih * g.w.in + iw];
        }
    }
}

// acc[ch] = bias + sum over taps of w[t][ch] * src[tap offset + ch], for one
// output pixel; the block's channels live in registers across the taps.
void channelsLastPixel(const float *src, const float *wt, const int64_t *offsets, int64_t taps, const float *bias,
                       float *acc)
{
    constexpr int kVecs = kChannelBlock / 8;
    Vec8 a[kVecs];
    for (int v = 0; v < kVecs; ++v)
        a[v] = load8(bias + 8 * v);
    for (int64_t t = 0; t < taps; ++t) {
        const float *s = src + offsets[t], *wv = wt + t * kChannelBlock;
        for (int v = 0; v < kVecs; ++v)
            a[v] += load8(wv + 8 * v) * load8(s + 8 * v);
    }
    for (int v = 0; v < kVecs; ++v)
        store8(acc + 8 * v, a[v]);
}

void depthwiseChannelsLast(const ConvGeometry &g, const float *x, const float *w, const float *bias, float *out)
{
    const PaddedTile pt(g);
    const int64_t blocks = ceilDiv(g.outC, kChannelBlock), taps = g.taps(), cols = g.cols();
    std::vector<int64_t> offsets;
    for (int64_t ki = 0; ki < g.h.kernel; ++ki)
        for (int64_t kj = 0; kj < g.w.kernel; ++kj)
            offsets.push_back((ki * g.h.dilation * pt.cols + kj * g.w.dilation) * kChannelBlock);
    parallelFor(0, g.in.n * blocks, 1, [&](int64_t b0, int64_t b1) {
        const int64_t tileSize = pt.rows * pt.cols * kChannelBlock, wSize = (taps + 1) * kChannelBlock;
        const Tensor scratch = Tensor::empty({tileSize + wSize + cols * kChannelBlock}, DType::F32);
        float *tile = scratch.data<float>(), *wt = tile + tileSize, *acc = wt + wSize;
        float *bt = wt + taps * kChannelBlock; // the block's bias after its taps
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t n = b / blocks, c0 = b % blocks * kChannelBlock;
            const int64_t count = std::min(kChannelBlock, g.outC - c0);
            fillChannelsLast(g, pt, x + (n * g.in.c + c0) * g.in.plane(), count, tile);
            for (int64_t ch = 0; ch < kChannelBlock; ++ch) {
                for (int64_t t = 0; t < taps; ++t)
                    wt[t * kChannelBlock + ch] = ch < count ? w[(c0 + ch) * taps + t] : 0.f;
                bt[ch] = ch < count && bias ? bias[c0 + ch] : 0.f;
            }
            for (int64_t oh = 0; oh < g.h.out; ++oh)
                for (int64_t ow = 0; ow < g.w.out; ++ow)
                    channelsLastPixel(tile + (oh * g.h.stride * pt.cols + ow * g.w.stride) * kChannelBlock, wt,
                                      offsets.data(), taps, bt, acc + (oh * g.w.out + ow) * kChannelBlock);
            float *dst = out + (n * g.outC + c0) * cols;
            for (int64_t ch = 0; ch < count; ++ch)
                for (int64_t p = 0; p < cols; ++p)
                    dst[ch * cols + p] = acc[p * kChannelBlock + ch];
        }
    });
}

// --- grouped convolution with few channels per group -------------------------------
// RegNet's 3x3 convolutions have 16 channels per group: a GEMM per group is
// 16 rows by 144 deep, too small for BLAS to pay for its packing, and im2col
// copies the input nine times first. Here every input channel of a group goes
// through the phased plane once, and a register block of kRowBlock output
// channels by 16 pixels accumulates over (channel, tap) straight from it.
// f32 only (GCC/Clang vector types; 8 lanes, AVX2, or 16 where the CPU has
// AVX-512); f64 keeps im2col.
constexpr int64_t kRowBlock = 4;
constexpr int64_t kMaxGroupChannels = 64; // above, the GEMM's packing pays

bool useGroupedDirect(const ConvGeometry &g)
{
    return g.groups > 1 && g.cg() > 1 && g.cg() <= kMaxGroupChannels;
}

// One group's input planes, phased, and where each tap starts in a phase.
struct GroupInput {
    const PhasedPlane &pp;
    const float *phases;  // cg planes, `stride` apart
    int64_t stride = 0;
    std::vector<int64_t> taps; // offsets of tap (ki, kj), row-major
};

// Pixels [k0, k0 + 16) at the phase pitch of output channels [0, R) of w:
// acc[r][k] = bias[r] + sum over c, t of w[r][c][t] * phase_c[taps[t] + k].
template <int R>
void groupedBlock(const GroupInput &in, int64_t cg, const float *w, const float *bias, float *acc, int64_t n,
                  int64_t k0)
{
    const int64_t taps = static_cast<int64_t>(in.taps.size()), wRow = cg * taps;
    Vec8 a[R][2];
    for (int r = 0; r < R; ++r)
        a[r][0] = a[r][1] = Vec8{} + (bias ? bias[r] : 0.f);
    for (int64_t c = 0; c < cg; ++c) {
        const float *src = in.phases + c * in.stride + k0;
        const float *wc = w + c * taps;
        for (int64_t t = 0; t < taps; ++t) {
            const Vec8 x0 = load8(src + in.taps[size_t(t)]), x1 = load8(src + in.taps[size_t(t)] + 8);
            for (int r = 0; r < R; ++r) {
                const float wv = wc[r * wRow + t];
                a[r][0] += wv * x0;
                a[r][1] += wv * x1;
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        store8(acc + r * n + k0, a[r][0]);
        store8(acc + r * n + k0 + 8, a[r][1]);
    }
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
// groupedBlock with 16-lane vectors: 8 output channels by 3 vectors of pixels
// (1 at the end of a row), so each weight broadcast feeds 3 FMAs. The build
// targets AVX2, so this is compiled for AVX-512 alone and runs where
// loops::wideVectors() says the CPU has it (bench_conv, RegNetX-400MF's 22
// grouped convolutions per forward on Zen 5: 2.02-2.19 ms with the AVX2
// blocks, 1.73-1.78 ms with one vector per channel; on a 2-core Xeon 1.48-1.54
// ms with one vector, 1.34 ms with three).
constexpr int64_t kWideRowBlock = 8;
constexpr int64_t kWideVectors = 3; // 16-pixel vectors per block: 24 accumulators

template <int V>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void
groupedBlockWide(const GroupInput &in, int64_t cg, const float *w, const float *bias, float *acc, int64_t n,
                 int64_t k0)
{
    const int64_t taps = static_cast<int64_t>(in.taps.size()), wRow = cg * taps;
    __m512 a[kWideRowBlock][V];
    // Unrolled by pragma: GCC's -O3 otherwise keeps the accumulators in memory too (conv1x1.cpp).
    #pragma GCC unroll 8
    for (int r = 0; r < kWideRowBlock; ++r)
        #pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
            a[r][v] = _mm512_set1_ps(bias ? bias[r] : 0.f);
    for (int64_t c = 0; c < cg; ++c) {
        const float *src = in.phases + c * in.stride + k0;
        const float *wc = w + c * taps;
        for (int64_t t = 0; t < taps; ++t) {
            __m512 x[V];
            #pragma GCC unroll 4
            for (int v = 0; v < V; ++v)
                x[v] = _mm512_loadu_ps(src + in.taps[size_t(t)] + v * kBlock);
            #pragma GCC unroll 8
            for (int r = 0; r < kWideRowBlock; ++r) {
                const __m512 wv = _mm512_set1_ps(wc[r * wRow + t]);
                #pragma GCC unroll 4
                for (int v = 0; v < V; ++v)
                    a[r][v] = _mm512_fmadd_ps(wv, x[v], a[r][v]);
            }
        }
    }
    #pragma GCC unroll 8
    for (int r = 0; r < kWideRowBlock; ++r)
        #pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
            _mm512_storeu_ps(acc + r * n + k0 + v * kBlock, a[r][v]);
}
#define FUSESCOPE_WIDE_GROUPED 1
#endif

// Output channels [o, o + rows) over all pixels, rows the largest block that
// fits in what is left of the group.
int64_t groupedRows(const GroupInput &in, int64_t cg, int64_t og, int64_t o, const float *w, const float *bias,
                    float *acc, int64_t n)
{
    const int64_t wPerChannel = cg * static_cast<int64_t>(in.taps.size());
    w += o * wPerChannel;
    bias = bias ? bias + o : nullptr;
    acc += o * n;
#ifdef FUSESCOPE_WIDE_GROUPED
    if (loops::wideVectors() && o + kWideRowBlock <= og) {
        int64_t k0 = 0;
        for (; k0 + kWideVectors * kBlock <= n; k0 += kWideVectors * kBlock)
            groupedBlockWide<kWideVectors>(in, cg, w, bias, acc, n, k0);
        for (; k0 < n; k0 += kBlock)
            groupedBlockWide<1>(in, cg, w, bias, acc, n, k0);
        return kWideRowBlock;
    }
#endif
    const int64_t rows = o + kRowBlock <= og ? kRowBlock : 1;
    for (int64_t k0 = 0; k0 < n; k0 += kBlock) {
        if (rows == kRowBlock)
            groupedBlock<kRowBlock>(in, cg, w, bias, acc, n, k0);
        else
            groupedBlock<1>(in, cg, w, bias, acc, n, k0);
    }
    return rows;
}

// All output channels of one group and image, then copied from the phase
// pitch into the output planes.
void groupedOutputs(const ConvGeometry &g, const GroupInput &in, const float *w, const float *bias, float *acc,
                    int64_t n, float *out)
{
    const int64_t og = g.og(), cg = g.cg();
    for (int64_t o = 0; o < og;)
        o += groupedRows(in, cg, og, o, w, bias, acc, n);
    for (int64_t o = 0; o < og; ++o)
        for (int64_t oh = 0; oh < g.h.out; ++oh)
            copyShort(out + o * g.cols() + oh * g.w.out, acc + o * n + oh * in.pp.pitch, g.w.out);
}

void groupedDirectConv(const ConvGeometry &g, const float *x, const float *w, const float *bias, float *out)
{
    const PhasedPlane pp(g.h, g.w);
    const int64_t cg = g.cg(), og = g.og();
    const int64_t plane = pp.phases * pp.size() + kBlock; // per input channel, with slack for the last block
    const int64_t n = ceilDiv((g.h.out - 1) * pp.pitch + g.w.out, kBlock) * kBlock;
    std::vector<int64_t> taps;
    for (int64_t ki = 0; ki < g.h.kernel; ++ki)
        for (int64_t kj = 0; kj < g.w.kernel; ++kj)
            taps.push_back(pp.tapOffset(ki, kj));
    parallelFor(0, g.in.n * g.groups, 1, [&](int64_t t0, int64_t t1) {
        const Tensor scratch = Tensor::empty({cg * plane + og * n}, DType::F32);
        float *phases = scratch.data<float>(), *acc = phases + cg * plane;
        const GroupInput in{pp, phases, plane, taps};
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t img = t / g.groups, grp = t % g.groups;
            for (int64_t c = 0; c < cg; ++c) {
                pp.fill(x + (img * g.in.c + grp * cg + c) * g.in.plane(), phases + c * plane, 0.f);
                std::fill_n(phases + c * plane + plane - kBlock, kBlock, 0.f);
            }
            groupedOutputs(g, in, w + grp * og * cg * g.taps(), bias ? bias + grp * og : nullptr, acc, n,
                           out + (img * g.outC + grp * og) * g.cols());
        }
    });
}

// 3x3 stride-1 convolutions with enough output tiles go through Winograd
// F(2x2, 3x3) (core/ops/winograd.cpp): 16 multiplications per 2x2 outputs
// instead of 36.
winograd::Problem winogradProblem(const ConvGeometry &g)
{
    return {g.in.n, g.in.c, g.in.h, g.in.w, g.outC, g.h.out, g.w.out, g.h.pad, g.w.pad, g.act};
}

bool useWinograd(const ConvGeometry &g, bool weightsReady = false)
{
    auto plain3 = [](const Axis &a) { return a.kernel == 3 && a.stride == 1 && a.dilation == 1; };
    return g.groups == 1 && plain3(g.h) && plain3(g.w) && winograd::worthIt(winogradProblem(g), weightsReady);
}

conv1x1::Problem pointwiseProblem(const ConvGeometry &g)
{
    return {g.in.n, g.groups, g.cg(), g.og(), g.cols(), g.act};
}

// 1x1 with a stride (the downsampling shortcuts of ResNet and RegNet): the
// pixels it reads gathered into one contiguous image, then the 1x1 register
// blocks. That image is im2col's column matrix too, but BLAS ran RegNet's
// shortcuts from it at 40 GFLOP/s.
void stridedPointwise(const ConvGeometry &g, const float *x, const float *w, const float *bias, float *out)
{
    const int64_t cols = g.cols(), planes = g.in.n * g.in.c;
    const Tensor gathered = Tensor::empty({planes * cols}, DType::F32);
    float *dst = gathered.data<float>();
    parallelFor(0, planes, planeGrain(cols), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
            for (int64_t oh = 0; oh < g.h.out; ++oh)
                gatherRow(dst + p * cols + oh * g.w.out, x + p * g.in.plane() + oh * g.h.stride * g.w.in, g.w.out,
                          Span{0, g.w.out}, g.w.stride, 0);
    });
    conv1x1::run(pointwiseProblem(g), dst, w, bias, out);
}

// The kernels conv2d chooses from, each named in the profiler as it runs.
enum class ConvAlgorithm {
    BiasOnly,
    Depthwise,
    DepthwiseSmall,
    DepthwiseChannelsLast,
    Pointwise,
    PointwiseDirect,
    PointwiseStrided,
    GroupedDirect,
    Winograd,
    Im2col
};

const char *algorithmName(ConvAlgorithm a)
{
    switch (a) {
    case ConvAlgorithm::BiasOnly: return "conv2d_bias";
    case ConvAlgorithm::Depthwise: return "conv2d_depthwise";
    case ConvAlgorithm::DepthwiseSmall: return "conv2d_depthwise_small";
    case ConvAlgorithm::DepthwiseChannelsLast: return "conv2d_depthwise_channels_last";
    case ConvAlgorithm::Pointwise: return "conv2d_1x1_gemm";
    case ConvAlgorithm::PointwiseDirect: return "conv2d_1x1_direct";
    case ConvAlgorithm::PointwiseStrided: return "conv2d_1x1_strided";
    case ConvAlgorithm::GroupedDirect: return "conv2d_grouped_direct";
    case ConvAlgorithm::Winograd: return "conv2d_winograd";
    case ConvAlgorithm::Im2col: return "conv2d_im2col_gemm";
    }
    return "conv2d";
}

// The register-blocked kernels are f32 only (f16/bf16 compute in f32).
ConvAlgorithm chooseAlgorithm(const ConvGeometry &g, bool f32)
{
    const bool unpadded1x1 = g.taps() == 1 && g.h.pad == 0 && g.w.pad == 0;
    const bool pointwise = unpadded1x1 && g.h.stride == 1 && g.w.stride == 1;
    if (g.cg() == 0)
        return ConvAlgorithm::BiasOnly;
    if (g.cg() == 1 && g.groups > 1 && f32 && useSmallPlanes(g))
        return ConvAlgorithm::DepthwiseSmall;
    if (g.cg() == 1 && g.groups > 1)
        return f32 && useChannelsLast(g) ? ConvAlgorithm::DepthwiseChannelsLast : ConvAlgorithm::Depthwise;
    if (pointwise)
        return f32 && conv1x1::worthIt(pointwiseProblem(g)) ? ConvAlgorithm::PointwiseDirect : ConvAlgorithm::Pointwise;
    if (f32 && unpadded1x1 && g.h.dilation == 1 && g.w.dilation == 1 && conv1x1::worthIt(pointwiseProblem(g)))
        return ConvAlgorithm::PointwiseStrided;
    if (f32 && useGroupedDirect(g))
        return ConvAlgorithm::GroupedDirect;
    if (f32 && useWinograd(g))
        return ConvAlgorithm::Winograd;
    return ConvAlgorithm::Im2col;
}

template <typename T>
void runAlgorithm(ConvAlgorithm algorithm, const ConvGeometry &g, const T *px, const T *pw, const T *pb, T *po,
                  DType dtype)
{
    switch (algorithm) {
    case ConvAlgorithm::BiasOnly: return fillBias(g, pb, po);
    case ConvAlgorithm::Depthwise: return depthwiseConv(g, px, pw, pb, po, dtype);
    case ConvAlgorithm::Pointwise: return pointwiseConv(g, px, pw, pb, po);
    case ConvAlgorithm::Im2col: return im2colConv(g, px, pw, pb, po, dtype);
    default: break;
    }
    if constexpr (std::is_same_v<T, float>) {
        if (algorithm == ConvAlgorithm::DepthwiseChannelsLast)
            depthwiseChannelsLast(g, px, pw, pb, po);
        else if (algorithm == ConvAlgorithm::DepthwiseSmall)
            depthwiseSmall(g, px, pw, pb, po);
        else if (algorithm == ConvAlgorithm::GroupedDirect)
            groupedDirectConv(g, px, pw, pb, po);
        else if (algorithm == ConvAlgorithm::PointwiseDirect)
            conv1x1::run(pointwiseProblem(g), px, pw, pb, po);
        else if (algorithm == ConvAlgorithm::PointwiseStrided)
            stridedPointwise(g, px, pw, pb, po);
        else
            winograd::conv3x3(winogradProblem(g), px, pw, pb, po);
    }
}

// The kernels that apply a fused activation as they store (ConvGeometry::act);
// after the others it is a pass of its own.
bool storesActivation(ConvAlgorithm a)
{
    return a == ConvAlgorithm::PointwiseDirect || a == ConvAlgorithm::PointwiseStrided || a == ConvAlgorithm::Winograd
        || a == ConvAlgorithm::Im2col || a == ConvAlgorithm::Depthwise || a == ConvAlgorithm::DepthwiseSmall;
}

template <typename T>
void runConv(const ConvGeometry &g, const Tensor &x, const Tensor &w, const Tensor &bias, const Tensor &out)
{
    const T *px = x.data<T>(), *pw = w.data<T>(), *pb = bias.defined() ? bias.data<T>() : nullptr;
    T *po = out.data<T>();
    const ConvAlgorithm algorithm = chooseAlgorithm(g, std::is_same_v<T, float>);
    KernelEvent event;
    event.name = algorithmName(algorithm);
    event.cost.flops = 2.0 * static_cast<double>(out.numel()) * static_cast<double>(g.k());
    const KernelScope scope(event);
    runAlgorithm<T>(algorithm, g, px, pw, pb, po, out.dtype());
    if (g.act.any() && !storesActivation(algorithm))
        parallelFor(0, out.numel(), int64_t(1) << 16, [&](int64_t i0, int64_t i1) { g.act.apply(po + i0, 1, i1 - i0, 0); });
}

// f16/bf16 compute in f32.
void convInto(const Args &a, std::span<Tensor> outs, StoreActivation act)
{
    ConvGeometry g = convGeometry(a);
    g.act = act;
    const Tensor &out = outs[0];
    if (out.numel() == 0)
        return;
    const DType compute = out.dtype() == DType::F64 ? DType::F64 : DType::F32;
    const Tensor x = contiguousAs(arg(a, 0), compute), w = contiguousAs(arg(a, 1), compute);
    const std::optional<Tensor> bias = a[2].toOptionalTensor();
    const Tensor b = bias ? contiguousAs(*bias, compute) : Tensor();
    const Tensor y = out.dtype() == compute ? out : Tensor::empty(out.sizes(), compute);
    if (compute == DType::F64)
        runConv<double>(g, x, w, b, y);
    else
        runConv<float>(g, x, w, b, y);
    if (out.dtype() != compute)
        loops::copyInto(out, y);
}

void convKernel(const Args &a, std::span<Tensor> outs)
{
    convInto(a, outs, {});
}

void convReluKernel(const Args &a, std::span<Tensor> outs)
{
    convInto(a, outs, StoreActivation::relu());
}

void convClampKernel(const Args &a, std::span<Tensor> outs)
{
    convInto(a, outs, StoreActivation::clampBounds(a, 7));
}

OpCost convCost(const Args &a, std::span<const Tensor> outs)
{
    const Tensor &w = arg(a, 1);
    const double k = static_cast<double>(w.size(1) * w.size(2) * w.size(3));
    return costOf(a, outs, 2.0 * k * static_cast<double>(outs[0].numel()));
}

OpCost convActivationCost(const Args &a, std::span<const Tensor> outs)
{
    OpCost cost = convCost(a, outs);
    cost.flops += static_cast<double>(outs[0].numel());
    return cost;
}

// --- pooling geometry ---------------------------------------------------------------------

struct PoolGeometry {
    Images in;
    Axis h, w;
};

// PyTorch's pooling output size: the last window must start inside the
// input or the left padding, also under ceil_mode.
int64_t poolOutputs(const Axis &a, bool ceilMode)
{
    const int64_t span = a.in + 2 * a.pad - a.dilation * (a.kernel - 1) - 1;
    int64_t out = floorDiv(span + (ceilMode ? a.stride - 1 : 0), a.stride) + 1;
    if (ceilMode && (out - 1) * a.stride >= a.in + a.pad)
        --out;
    return out;
}

struct PoolArgs {
    IntList kernel, stride, padding, dilation;
    bool ceilMode = false;
};

PoolGeometry poolGeometry(const std::string &op, const Tensor &x, const PoolArgs &p)
{
    PoolGeometry g;
    g.in = imagesOf(op, x);
    checkSpatialNonEmpty(op, x, g.in);
    const Hw kernel = hwAtLeast(op, "kernel_size", p.kernel, 1);
    const Hw stride = p.stride.empty() ? kernel : hwAtLeast(op, "stride", p.stride, 1);
    const Hw pad = hwAtLeast(op, "padding", p.padding, 0);
    const Hw dilation = hwAtLeast(op, "dilation", p.dilation, 1);
    if (pad.h > kernel.h / 2 || pad.w > kernel.w / 2)
        throw Error(op + ": padding " + hwStr(pad) + " must be at most half of kernel_size " + hwStr(kernel));
    g.h = {g.in.h, 0, kernel.h, stride.h, pad.h, dilation.h};
    g.w = {g.in.w, 0, kernel.w, stride.w, pad.w, dilation.w};
    g.h.out = poolOutputs(g.h, p.ceilMode);
    g.w.out = poolOutputs(g.w, p.ceilMode);
    if (g.h.out < 1 || g.w.out < 1)
        throw Error(op + ": input " + shapeStr(x.sizes()) + " is too small for kernel_size " + hwStr(kernel)
                    + " with padding " + hwStr(pad) + " and dilation " + hwStr(dilation) + " (output "
                    + hwStr({g.h.out, g.w.out}) + ")");
    return g;
}

PoolArgs maxPoolArgs(const Args &a)
{
    return {a[1].toIntList(), a[2].toIntList(), a[3].toIntList(), a[4].toIntList(), a[5].toBool()};
}

PoolArgs avgPoolArgs(const Args &a)
{
    return {a[1].toIntList(), a[2].toIntList(), a[3].toIntList(), IntList{1}, a[4].toBool()};
}

void checkFloating(const std::string &op, const Tensor &x)
{
    if (!isFloating(x.dtype()))
        throw Error(op + ": expected a floating input, got " + dtypeName(x.dtype()) + " " + shapeStr(x.sizes()));
}

// Runs fn(srcPlane, dstPlane, scratchRow) over all N*C planes in parallel.
template <typename T, typename C, typename Fn>
void forEachPlane(const Images &in, int64_t outPlane, const Tensor &x, const Tensor &out, int64_t work, Fn fn)
{
    const T *px = x.data<T>();
    T *po = out.data<T>();
    parallelFor(0, in.n * in.c, planeGrain(work), [&](int64_t p0, int64_t p1) {
        std::vector<C> acc;
        for (int64_t p = p0; p < p1; ++p)
            fn(px + p * in.plane(), po + p * outPlane, acc);
    });
}

// --- max_pool2d ---------------------------------------------------------------------------

// max that propagates NaN, as PyTorch's pooling does.
template <typename C>
C maxNan(C acc, C v)
{
    return (v > acc || v != v) ? v : acc;
}

// acc[k] = max(acc[k], src[k]) over one plane at the phase pitch.
template <typename C>
void maxTap(C *__restrict acc, const C *__restrict src, int64_t n)
{
    for (int64_t k0 = 0; k0 < n; k0 += kBlock)
        for (int64_t k = k0; k < k0 + kBlock; ++k)
            acc[k] = maxNan(acc[k], src[k]);
}

// A kernel row of 3 taps in one pass, in the taps' order, so acc is loaded
// and stored once per row instead of once per tap (the 3x3 pools of ResNet,
// SqueezeNet, ShuffleNet and DenseNet).
template <typename C>
void maxTap3(C *__restrict acc, const C *__restrict a, const C *__restrict b, const C *__restrict c, int64_t n)
{
    for (int64_t k0 = 0; k0 < n; k0 += kBlock)
        for (int64_t k = k0; k < k0 + kBlock; ++k)
            acc[k] = maxNan(maxNan(maxNan(acc[k], a[k]), b[k]), c[k]);
}

bool isMaxPool3x3s2(const PoolGeometry &g)
{
    for (const Axis &a : {g.h, g.w}) {
        if (a.kernel != 3 || a.stride != 2 || a.dilation != 1)
            return false;
    }
    return maxpool3s2::available();
}

// ResNet's, SqueezeNet's, DenseNet's and ShuffleNet's pools a row at a time:
// the phased plane below cost SqueezeNet's first pool 0.47 ms (8 GB/s).
void maxPool3x3s2(const PoolGeometry &g, const float *x, float *out)
{
    const maxpool3s2::Plane plane{g.in.h, g.in.w, g.h.out, g.w.out, g.h.pad, g.w.pad};
    const int64_t outPlane = g.h.out * g.w.out;
    parallelFor(0, g.in.n * g.in.c, planeGrain(g.in.plane() + outPlane), [&](int64_t p0, int64_t p1) {
        std::vector<float> scratch = maxpool3s2::scratch(plane);
        for (int64_t p = p0; p < p1; ++p)
            maxpool3s2::pool(plane, x + p * g.in.plane(), out + p * outPlane, scratch);
    });
}

// Through the phased plane, as depthwise convolution, with the padding read
// as the lowest value: each tap is one contiguous loop over the plane instead
// of a strided one per output row.
template <typename T>
void maxPool(const PoolGeometry &g, const Tensor &x, const Tensor &out)
{
    if constexpr (std::is_same_v<T, float>) {
        if (isMaxPool3x3s2(g))
            return maxPool3x3s2(g, x.data<float>(), out.data<float>());
    }
    using C = compute_t<T>;
    const C lowest = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                          : std::numeric_limits<C>::lowest();
    const PhasedPlane pp(g.h, g.w);
    const int64_t outW = g.w.out, outPlane = g.h.out * outW;
    const int64_t n = ceilDiv((g.h.out - 1) * pp.pitch + outW, kBlock) * kBlock;
    const T *px = x.data<T>();
    T *po = out.data<T>();
    const int64_t work = pp.phases * pp.size() + n * g.h.kernel * g.w.kernel;
    parallelFor(0, g.in.n * g.in.c, planeGrain(work), [&](int64_t p0, int64_t p1) {
        std::vector<C> phases(static_cast<size_t>(pp.phases * pp.size() + kBlock), lowest);
        std::vector<C> acc(static_cast<size_t>(n));
        for (int64_t p = p0; p < p1; ++p) {
            pp.fill(px + p * g.in.plane(), phases.data(), lowest);
            std::fill(acc.begin(), acc.end(), lowest);
            // The tap loops are compute bound in L1: 16 lanes where the CPU has them.
            loops::runVectorized([&] {
                for (int64_t ki = 0; ki < g.h.kernel; ++ki) {
                    auto tap = [&](int64_t kj) { return phases.data() + pp.tapOffset(ki, kj); };
                    if (g.w.kernel == 3)
                        maxTap3(acc.data(), tap(0), tap(1), tap(2), n);
                    else
                        for (int64_t kj = 0; kj < g.w.kernel; ++kj)
                            maxTap(acc.data(), tap(kj), n);
                }
            });
            for (int64_t oh = 0; oh < g.h.out; ++oh)
                for (int64_t ow = 0; ow < outW; ++ow)
                    po[p * outPlane + oh * outW + ow] = T(acc[size_t(oh * pp.pitch + ow)]);
        }
    });
}

std::vector<TensorSpec> maxPoolShape(const Args &a)
{
    const Tensor &x = arg(a, 0);
    if (x.dtype() == DType::Bool)
        throw Error("aten.max_pool2d: not supported for bool tensors");
    const PoolGeometry g = poolGeometry("aten.max_pool2d", x, maxPoolArgs(a));
    return {{g.in.outShape(g.in.c, {g.h.out, g.w.out}), x.dtype()}};
}

void maxPoolKernel(const Args &a, std::span<Tensor> outs)
{
    if (outs[0].numel() == 0)
        return;
    const Tensor x = contiguousAs(arg(a, 0), arg(a, 0).dtype());
    const PoolGeometry g = poolGeometry("aten.max_pool2d", x, maxPoolArgs(a));
    visitNumeric(x.dtype(), [&](auto tag) { maxPool<decltype(tag)>(g, x, outs[0]); });
}

// --- avg_pool2d ---------------------------------------------------------------------------

// PyTorch's divisor per output along one axis: the window clipped to the
// padded input, or to the input itself without count_include_pad.
std::vector<double> avgDivisors(const Axis &a, bool countIncludePad)
{
    std::vector<double> d(static_cast<size_t>(a.out));
    for (int64_t o = 0; o < a.out; ++o) {
        const int64_t start = o * a.stride - a.pad;
        const int64_t end = std::min(start + a.kernel, a.in + a.pad);
        const int64_t clipped = std::min(end, a.in) - std::max<int64_t>(start, 0);
        d[size_t(o)] = static_cast<double>(countIncludePad ? end - start : clipped);
    }
    return d;
}

template <typename T>
void avgPool(const PoolGeometry &g, bool countIncludePad, const Tensor &x, const Tensor &out)
{
    using C = compute_t<T>;
    const std::vector<Span> spansW = validOutputsPerTap(g.w);
    const std::vector<double> divH = avgDivisors(g.h, countIncludePad), divW = avgDivisors(g.w, countIncludePad);
    const int64_t outW = g.w.out, s = g.w.stride;
    forEachPlane<T, C>(g.in, g.h.out * outW, x, out, g.h.out * outW * g.h.kernel * g.w.kernel,
                       [&](const T *src, T *dst, std::vector<C> &acc) {
        acc.resize(size_t(outW));
        for (int64_t oh = 0; oh < g.h.out; ++oh) {
            std::fill(acc.begin(), acc.end(), C(0));
            for (int64_t ki = 0; ki < g.h.kernel; ++ki) {
                if (!g.h.inside(oh, ki))
                    continue;
                const T *row = src + (oh * g.h.stride + g.h.offset(ki)) * g.in.w;
                for (int64_t kj = 0; kj < g.w.kernel; ++kj) {
                    const int64_t off = g.w.offset(kj);
                    for (int64_t ow = spansW[size_t(kj)].lo; ow < spansW[size_t(kj)].hi; ++ow)
                        acc[size_t(ow)] += C(row[ow * s + off]);
                }
            }
            for (int64_t ow = 0; ow < outW; ++ow)
                dst[oh * outW + ow] = T(acc[size_t(ow)] / C(divH[size_t(oh)] * divW[size_t(ow)]));
        }
    });
}

std::vector<TensorSpec> avgPoolShape(const Args &a)
{
    const Tensor &x = arg(a, 0);
    checkFloating("aten.avg_pool2d", x);
    const PoolGeometry g = poolGeometry("aten.avg_pool2d", x, avgPoolArgs(a));
    return {{g.in.outShape(g.in.c, {g.h.out, g.w.out}), x.dtype()}};
}

void avgPoolKernel(const Args &a, std::span<Tensor> outs)
{
    if (outs[0].numel() == 0)
        return;
    const Tensor x = contiguousAs(arg(a, 0), arg(a, 0).dtype());
    const PoolGeometry g = poolGeometry("aten.avg_pool2d", x, avgPoolArgs(a));
    visitFloating(x.dtype(), [&](auto tag) { avgPool<decltype(tag)>(g, a[5].toBool(), x, outs[0]); });
}

OpCost windowCost(const Args &a, std::span<const Tensor> outs)
{
    const Hw k = hwArg("pool", "kernel_size", a[1].toIntList());
    return costOf(a, outs, static_cast<double>(outs[0].numel() * k.h * k.w));
}

// --- adaptive_avg_pool2d ---------------------------------------------------------------------

Hw outputSizeArg(const std::string &op, const Args &a)
{
    return hwAtLeast(op, "output_size", a[1].toIntList(), 0);
}

std::vector<TensorSpec> adaptiveShape(const Args &a)
{
    const Tensor &x = arg(a, 0);
    const Images im = imagesOf("aten.adaptive_avg_pool2d", x);
    checkFloating("aten.adaptive_avg_pool2d", x);
    checkSpatialNonEmpty("aten.adaptive_avg_pool2d", x, im);
    return {{im.outShape(im.c, outputSizeArg("aten.adaptive_avg_pool2d", a)), x.dtype()}};
}

// Input range [floor(o*in/out), ceil((o+1)*in/out)) of output o.
Span adaptiveRange(int64_t o, int64_t in, int64_t out)
{
    return {o * in / out, ceilDiv((o + 1) * in, out)};
}

template <typename T>
void adaptiveAvgPool(const Images &im, Hw size, const Tensor &x, const Tensor &out)
{
    using C = compute_t<T>;
    forEachPlane<T, C>(im, size.h * size.w, x, out, im.plane(), [&](const T *src, T *dst, std::vector<C> &) {
        for (int64_t oh = 0; oh < size.h; ++oh) {
            const Span rh = adaptiveRange(oh, im.h, size.h);
            for (int64_t ow = 0; ow < size.w; ++ow) {
                const Span rw = adaptiveRange(ow, im.w, size.w);
                // In lanes: one running sum kept each window serial (a
                // global pool over [8,64,56,56] took 3.7 times PyTorch's time).
                const bool wholeRows = rw.lo == 0 && rw.hi == im.w;
                C sum = 0;
                for (int64_t ih = rh.lo; ih < (wholeRows ? rh.lo + 1 : rh.hi); ++ih) {
                    const T *run = src + ih * im.w + rw.lo;
                    const int64_t n = wholeRows ? (rh.hi - rh.lo) * im.w : rw.hi - rw.lo;
                    sum += rowmath::laneSum<C>(n, [run](int64_t i) { return C(run[i]); });
                }
                dst[oh * size.w + ow] = T(sum / C((rh.hi - rh.lo) * (rw.hi - rw.lo)));
            }
        }
    });
}

void adaptiveKernel(const Args &a, std::span<Tensor> outs)
{
    if (outs[0].numel() == 0)
        return;
    const Tensor x = contiguousAs(arg(a, 0), arg(a, 0).dtype());
    const Images im = imagesOf("aten.adaptive_avg_pool2d", x);
    const Hw size = outputSizeArg("aten.adaptive_avg_pool2d", a);
    visitFloating(x.dtype(), [&](auto tag) { adaptiveAvgPool<decltype(tag)>(im, size, x, outs[0]); });
}

// --- upsample2d ----------------------------------------------------------------------------

const char *kUpsample = "aten.upsample2d";

std::vector<TensorSpec> upsampleShape(const Args &a)
{
    const Tensor &x = arg(a, 0);
    const Images im = imagesOf(kUpsample, x);
    checkSpatialNonEmpty(kUpsample, x, im);
    const Hw size = hwAtLeast(kUpsample, "output_size", a[1].toIntList(), 1);
    const std::string &mode = a[2].toStringRef();
    if (mode != "nearest" && mode != "bilinear")
        throw Error(std::string(kUpsample) + ": mode must be 'nearest' or 'bilinear', got '" + mode + "'");
    if (mode == "nearest" && a[3].toBool())
        throw Error(std::string(kUpsample) + ": align_corners only applies to mode 'bilinear'");
    if (mode == "bilinear")
        checkFloating(kUpsample, x);
    if (x.dtype() == DType::Bool)
        throw Error(std::string(kUpsample) + ": not supported for bool tensors");
    return {{im.outShape(im.c, size), x.dtype()}};
}

// PyTorch's nearest source index: floor(dst * in/out) with the scale in f32.
std::vector<int64_t> nearestSources(int64_t in, int64_t out)
{
    std::vector<int64_t> src(static_cast<size_t>(out));
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    for (int64_t o = 0; o < out; ++o)
        src[size_t(o)] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
    return src;
}

template <typename T>
void upsampleNearest(const Images &im, Hw size, const Tensor &x, const Tensor &out)
{
    const std::vector<int64_t> rows = nearestSources(im.h, size.h), cols = nearestSources(im.w, size.w);
    forEachPlane<T, T>(im, size.h * size.w, x, out, size.h * size.w, [&](const T *src, T *dst, std::vector<T> &) {
        for (int64_t oh = 0; oh < size.h; ++oh) {
            const T *row = src + rows[size_t(oh)] * im.w;
            for (int64_t ow = 0; ow < size.w; ++ow)
                dst[oh * size.w + ow] = row[cols[size_t(ow)]];
        }
    });
}

// The two input neighbours of an output along one axis and their weights.
template <typename C>
struct Lerp {
    int64_t i0 = 0, i1 = 0;
    C w0 = 1, w1 = 0;
};

// PyTorch's area_pixel_compute_source_index for linear modes.
template <typename C>
std::vector<Lerp<C>> lerps(int64_t in, int64_t out, bool alignCorners)
{
    const C scale = alignCorners ? (out > 1 ? C(in - 1) / C(out - 1) : C(0)) : C(in) / C(out);
    std::vector<Lerp<C>> l(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
        const C src = alignCorners ? scale * C(o) : std::max(scale * (C(o) + C(0.5)) - C(0.5), C(0));
        Lerp<C> &e = l[size_t(o)];
        e.i0 = std::min(static_cast<int64_t>(src), in - 1);
        e.i1 = e.i0 + (e.i0 < in - 1 ? 1 : 0);
        e.w1 = src - C(e.i0);
        e.w0 = C(1) - e.w1;
    }
    return l;
}

template <typename T>
void upsampleBilinear(const Images &im, Hw size, bool alignCorners, const Tensor &x, const Tensor &out)
{
    using C = compute_t<T>;
    const auto rows = lerps<C>(im.h, size.h, alignCorners), cols = lerps<C>(im.w, size.w, alignCorners);
    forEachPlane<T, C>(im, size.h * size.w, x, out, 4 * size.h * size.w, [&](const T *src, T *dst, std::vector<C> &) {
        for (int64_t oh = 0; oh < size.h; ++oh) {
            const Lerp<C> &r = rows[size_t(oh)];
            const T *top = src + r.i0 * im.w, *bottom = src + r.i1 * im.w;
            for (int64_t ow = 0; ow < size.w; ++ow) {
                const Lerp<C> &c = cols[size_t(ow)];
                const C upper = c.w0 * C(top[c.i0]) + c.w1 * C(top[c.i1]);
                const C lower = c.w0 * C(bottom[c.i0]) + c.w1 * C(bottom[c.i1]);
                dst[oh * size.w + ow] = T(r.w0 * upper + r.w1 * lower);
            }
        }
    });
}

void upsampleKernel(const Args &a, std::span<Tensor> outs)
{
    if (outs[0].numel() == 0)
        return;
    const Tensor x = contiguousAs(arg(a, 0), arg(a, 0).dtype());
    const Images im = imagesOf(kUpsample, x);
    const Hw size = hwArg(kUpsample, "output_size", a[1].toIntList());
    if (a[2].toStringRef() == "bilinear")
        visitFloating(x.dtype(), [&](auto tag) { upsampleBilinear<decltype(tag)>(im, size, a[3].toBool(), x, outs[0]); });
    else
        visitNumeric(x.dtype(), [&](auto tag) { upsampleNearest<decltype(tag)>(im, size, x, outs[0]); });
}

OpCost upsampleCost(const Args &a, std::span<const Tensor> outs)
{
    const double perOutput = a[2].toStringRef() == "bilinear" ? 6 : 0;
    return costOf(a, outs, perOutput * static_cast<double>(outs[0].numel()));
}

void addKernelOp(OpRegistry &r, const char *schema, OpKind kind, ShapeFn shape, KernelFn cpu, CostFn cost)
{
    OpDef def;
    def.kind = kind;
    def.shape = std::move(shape);
    def.cpu = std::move(cpu);
    def.cost = std::move(cost);
    r.add(schema, std::move(def));
}

} // namespace

void registerConvOps(OpRegistry &r)
{
    addKernelOp(r,
                "aten.conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1,1], "
                "int[] padding=[0,0], int[] dilation=[1,1], int groups=1) -> Tensor",
                OpKind::Convolution, convShape<kConv>, convKernel, convCost);
    // relu(conv2d(…)) and clamp(conv2d(…), min, max) as one kernel, which
    // applies the activation where it stores the output: the compiler's
    // simplify stage forms them (no extra pass over the output).
    addKernelOp(r,
                "fusescope.conv2d_relu(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1,1], "
                "int[] padding=[0,0], int[] dilation=[1,1], int groups=1) -> Tensor",
                OpKind::Convolution, convShape<kConvRelu>, convReluKernel, convActivationCost);
    addKernelOp(
        r,
        "fusescope.conv2d_clamp(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1,1], "
        "int[] padding=[0,0], int[] dilation=[1,1], int groups=1, Scalar? min=None, Scalar? max=None) -> Tensor",
        OpKind::Convolution, convShape<kConvClamp>, convClampKernel, convActivationCost);
    // Pooling and resampling run as kernels of their own (no decomposition).
    addKernelOp(r,
                "aten.max_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0,0], "
                "int[] dilation=[1,1], bool ceil_mode=False) -> Tensor",
                OpKind::Opaque, maxPoolShape, maxPoolKernel, windowCost);
    addKernelOp(r,
                "aten.avg_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0,0], "
                "bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
                OpKind::Opaque, avgPoolShape, avgPoolKernel, windowCost);
    addKernelOp(r, "aten.adaptive_avg_pool2d(Tensor self, int[] output_size) -> Tensor", OpKind::Opaque,
                adaptiveShape, adaptiveKernel, [](const Args &a, std::span<const Tensor> outs) {
                    return costOf(a, outs, static_cast<double>(arg(a, 0).numel()));
                });
    addKernelOp(r,
                "aten.upsample2d(Tensor self, int[] output_size, str mode='nearest', bool align_corners=False) "
                "-> Tensor",
                OpKind::Opaque, upsampleShape, upsampleKernel, upsampleCost);
}

namespace ops {

Tensor conv2d(const Tensor &x, const Tensor &weight, const std::optional<Tensor> &bias, const IntList &stride,
              const IntList &padding, const IntList &dilation, int64_t groups)
{
    return callOp1("aten.conv2d", {x, weight, Value(bias), stride, padding, dilation, groups});
}

int conv2dWinogradTile(const Args &conv2dArgs, bool weightsReady)
{
    const ConvGeometry g = convGeometry(conv2dArgs);
    if (conv2dArgs[0].toTensor().dtype() != DType::F32 || !g.in.batched)
        return 0;
    const ConvAlgorithm eager = chooseAlgorithm(g, true);
    if (!weightsReady)
        return eager == ConvAlgorithm::Winograd ? 2 : 0;
    // A 3x3 stride-1 ungrouped conv that Winograd does not take runs im2col.
    const bool winograd = eager == ConvAlgorithm::Winograd || (eager == ConvAlgorithm::Im2col && useWinograd(g, true));
    return winograd ? winograd::readyTile(winogradProblem(g)) : 0;
}

Tensor maxPool2d(const Tensor &x, const IntList &kernelSize, const IntList &stride, const IntList &padding,
                 const IntList &dilation, bool ceilMode)
{
    return callOp1("aten.max_pool2d", {x, kernelSize, stride, padding, dilation, ceilMode});
}

Tensor avgPool2d(const Tensor &x, const IntList &kernelSize, const IntList &stride, const IntList &padding,
                 bool ceilMode, bool countIncludePad)
{
    return callOp1("aten.avg_pool2d", {x, kernelSize, stride, padding, ceilMode, countIncludePad});
}

Tensor adaptiveAvgPool2d(const Tensor &x, const IntList &outputSize)
{
    return callOp1("aten.adaptive_avg_pool2d", {x, outputSize});
}

Tensor upsample2d(const Tensor &x, const IntList &outputSize, const std::string &mode, bool alignCorners)
{
    return callOp1("aten.upsample2d", {x, outputSize, mode, alignCorners});
}

} // namespace ops
} // namespace fusescope
