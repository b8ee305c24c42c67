// Normalization and attention ops. Each is composite: eager runs a fused
// kernel (a few passes over contiguous rows, parallel over rows), the
// compiler runs the decomposition into primitive ops.
#include "core/ops/norm.h"

#include "core/ops/builtin.h"
#include "core/ops/functional.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/ops/scalarmath.h"
#include "core/runtime/threadpool.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusescope {
namespace {

const char *const kSoftmax = "aten.softmax";
const char *const kLogSoftmax = "aten.log_softmax";
const char *const kLayerNorm = "aten.layer_norm";
const char *const kRmsNorm = "aten.rms_norm";
const char *const kGroupNorm = "aten.group_norm";
const char *const kBatchNorm = "aten.batch_norm";
const char *const kSdpa = "aten.scaled_dot_product_attention";

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

std::optional<Tensor> optArg(const Args &a, size_t i)
{
    return a[i].toOptionalTensor();
}

// --- shared helpers ------------------------------------------------------------

// The dtype kernels compute in: f32 for the 16-bit floats.
DType computeDType(DType t)
{
    return t == DType::F16 || t == DType::BF16 ? DType::F32 : t;
}

using loops::contiguousAs;

void requireFloating(const char *op, const char *what, const Tensor &t)
{
    if (!isFloating(t.dtype()))
        throw Error(std::string(op) + ": " + what + " must be a floating-point tensor, got " + dtypeName(t.dtype())
                    + " of shape " + shapeStr(t.sizes()));
}

// Rows of `work` elements each: enough of them per chunk to be worth a thread.
int64_t grainFor(int64_t work)
{
    return std::max<int64_t>(1, loops::kGrain / std::max<int64_t>(1, work));
}

// Calls body(in, out) with C-typed contiguous buffers, C the compute type of
// x: `in` holds x, and what body writes to `out` ends up in `out`.
template <typename Body>
void runInComputeType(const Tensor &x, const Tensor &out, Body body)
{
    if (out.numel() == 0)
        return;
    const DType c = computeDType(x.dtype());
    const Tensor in = contiguousAs(x, c);
    const Tensor o = out.dtype() == c ? out : Tensor::empty(out.sizes(), c, out.device());
    visitFloating(c, [&](auto tag) {
        using C = decltype(tag);
        if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>)
            body(in.data<C>(), o.data<C>());
    });
    if (o.dtype() != out.dtype())
        loops::copyInto(out, o);
}

// A contiguous compute-type copy of an optional per-element parameter
// (weight, bias); undefined when absent.
Tensor paramAs(const std::optional<Tensor> &t, DType dtype)
{
    return t ? contiguousAs(*t, dtype) : Tensor();
}

template <typename C>
const C *dataOrNull(const Tensor &t)
{
    return t.defined() && t.numel() > 0 ? t.data<C>() : nullptr;
}

CostFn perElementCost(double flops)
{
    return [flops](const Args &args, std::span<const Tensor> outs) {
        OpCost c = ioBytes(args, outs);
        c.flops = flops * static_cast<double>(outs[0].numel());
        return c;
    };
}

// Decompositions compute 16-bit inputs in f32 and round once at the end, as
// the kernels do.
Tensor upcast(const Tensor &t)
{
    const DType c = computeDType(t.dtype());
    return c == t.dtype() ? t : ops::cast(t, c);
}

Tensor castBack(const Tensor &t, DType dtype)
{
    return t.dtype() == dtype ? t : ops::cast(t, dtype);
}

// --- row primitives ------------------------------------------------------------

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

// Two passes (mean, then squared deviations) rather than one: no
// cancellation when the mean is large against the spread.
template <typename C>
std::pair<C, C> meanAndRstd(const C *x, int64_t n, C eps)
{
    const C mean = laneSum<C>(n, [&](int64_t i) { return x[i]; }) / C(n);
    const C var = laneSum<C>(n, [&](int64_t i) { return (x[i] - mean) * (x[i] - mean); }) / C(n);
    return {mean, C(1) / std::sqrt(var + eps)};
}

// y = (x - mean) * rstd * w + b, each of w, b optional.
template <typename C>
void normalizeRow(const C *x, C *y, int64_t n, C mean, C rstd, const C *w, const C *b)
{
    if (w && b) {
        for (int64_t i = 0; i < n; ++i)
            y[i] = (x[i] - mean) * rstd * w[i] + b[i];
    } else if (w) {
        for (int64_t i = 0; i < n; ++i)
            y[i] = (x[i] - mean) * rstd * w[i];
    } else if (b) {
        for (int64_t i = 0; i < n; ++i)
            y[i] = (x[i] - mean) * rstd + b[i];
    } else {
        for (int64_t i = 0; i < n; ++i)
            y[i] = (x[i] - mean) * rstd;
    }
}

template <typename C>
void affineRun(const C *x, C *y, int64_t n, C scale, C shift)
{
    for (int64_t i = 0; i < n; ++i)
        y[i] = x[i] * scale + shift;
}

// --- softmax -------------------------------------------------------------------

// One contiguous row: max, exp-sum, write.
template <typename C>
void softmaxRow(const C *x, C *y, int64_t n, bool log)
{
    const C m = rowMax(x, n);
    if (log) {
        const C logSum = sm::log(laneSum<C>(n, [&](int64_t i) { return sm::exp(x[i] - m); }));
        for (int64_t i = 0; i < n; ++i)
            y[i] = x[i] - m - logSum;
        return;
    }
    const C sum = laneSum<C>(n, [&](int64_t i) {
        const C e = sm::exp(x[i] - m);
        y[i] = e;
        return e;
    });
    const C inv = C(1) / sum;
    for (int64_t i = 0; i < n; ++i)
        y[i] *= inv;
}

// Softmax over a non-last dim: a tile of `w` adjacent columns (element (r, j)
// at x[r * stride + j]) is reduced together, so the loops run along the
// contiguous columns and vectorize.
constexpr int64_t kTile = 64;

template <typename C>
void softmaxColumns(const C *x, C *y, int64_t n, int64_t stride, int64_t w, bool log)
{
    C mx[kTile], sum[kTile];
    std::fill(mx, mx + w, -std::numeric_limits<C>::infinity());
    std::fill(sum, sum + w, C(0));
    for (int64_t r = 0; r < n; ++r) {
        const C *xr = x + r * stride;
        for (int64_t j = 0; j < w; ++j)
            mx[j] = xr[j] > mx[j] ? xr[j] : mx[j];
    }
    for (int64_t r = 0; r < n; ++r) {
        const C *xr = x + r * stride;
        C *yr = y + r * stride;
        for (int64_t j = 0; j < w; ++j) {
            const C e = sm::exp(xr[j] - mx[j]);
            sum[j] += e;
            if (!log)
                yr[j] = e;
        }
    }
    for (int64_t j = 0; j < w; ++j)
        sum[j] = log ? sm::log(sum[j]) : C(1) / sum[j];
    for (int64_t r = 0; r < n; ++r) {
        const C *xr = x + r * stride;
        C *yr = y + r * stride;
        if (log) {
            for (int64_t j = 0; j < w; ++j)
                yr[j] = xr[j] - mx[j] - sum[j];
        } else {
            for (int64_t j = 0; j < w; ++j)
                yr[j] *= sum[j];
        }
    }
}

template <typename C>
void softmaxContiguous(const C *x, C *y, int64_t outer, int64_t n, int64_t inner, bool log)
{
    if (inner == 1) {
        parallelFor(0, outer, grainFor(n), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r)
                softmaxRow(x + r * n, y + r * n, n, log);
        });
        return;
    }
    const int64_t tiles = (inner + kTile - 1) / kTile;
    parallelFor(0, outer * tiles, grainFor(n * kTile), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t j0 = (t % tiles) * kTile;
            const int64_t offset = (t / tiles) * n * inner + j0;
            softmaxColumns(x + offset, y + offset, n, inner, std::min(kTile, inner - j0), log);
        }
    });
}

// A 0-d tensor is softmaxed as one element along dim 0 or -1 (wrapDim
// accepts those), as in PyTorch.
int64_t softmaxDim(const char *op, const Tensor &x, int64_t dim)
{
    return wrapDim(dim, x.dim(), op);
}

void softmaxKernel(const char *op, const Tensor &x, int64_t dim, const Tensor &out, bool log)
{
    if (x.numel() == 0)
        return;
    const int64_t d = softmaxDim(op, x, dim);
    const int64_t n = x.dim() == 0 ? 1 : x.size(d);
    const int64_t inner = x.dim() == 0 ? 1 : numelOf(Shape(x.sizes().begin() + d + 1, x.sizes().end()));
    const int64_t outer = x.numel() / (n * inner);
    runInComputeType(x, out, [&](const auto *in, auto *o) { softmaxContiguous(in, o, outer, n, inner, log); });
}

TensorList softmaxDecomposition(const Args &a, bool log)
{
    const Tensor x = upcast(arg(a, 0));
    const IntList dims{a[1].toInt()};
    const Tensor shifted = ops::sub(x, ops::amax(x, dims, true));
    Tensor y;
    if (log) {
        y = ops::sub(shifted, ops::log(ops::sum(ops::exp(shifted), dims, true)));
    } else {
        const Tensor e = ops::exp(shifted);
        y = ops::div(e, ops::sum(e, dims, true));
    }
    return {castBack(y, arg(a, 0).dtype())};
}

void registerSoftmax(OpRegistry &r, const char *op, bool log)
{
    OpDef def;
    def.kind = OpKind::Composite;
    def.shape = [op](const Args &a) {
        const Tensor &x = arg(a, 0);
        requireFloating(op, "input", x);
        softmaxDim(op, x, a[1].toInt());
        return std::vector<TensorSpec>{{x.sizes(), x.dtype()}};
    };
    def.cpu = [op, log](const Args &a, std::span<Tensor> outs) {
        softmaxKernel(op, arg(a, 0), a[1].toInt(), outs[0], log);
    };
    def.decompose = [log](const Args &a) { return softmaxDecomposition(a, log); };
    def.cost = perElementCost(12); // max, sub, exp (8), sum, scale
    r.add(std::string(op) + "(Tensor self, int dim) -> Tensor", std::move(def));
}

// --- layer_norm and rms_norm -----------------------------------------------------

// The number of elements normalized together; checks normalized_shape
// against the input's trailing dims and the affine parameters against it.
int64_t checkNormalizedShape(const char *op, const Tensor &x, const IntList &normalized,
                             std::initializer_list<std::pair<const char *, std::optional<Tensor>>> params)
{
    const size_t k = normalized.size();
    if (k == 0)
        throw Error(std::string(op) + ": normalized_shape must not be empty (input of shape " + shapeStr(x.sizes())
                    + ")");
    const Shape &sizes = x.sizes();
    if (sizes.size() < k || !std::equal(normalized.begin(), normalized.end(), sizes.end() - static_cast<long>(k)))
        throw Error(std::string(op) + ": normalized_shape " + shapeStr(normalized)
                    + " does not match the trailing dims of input of shape " + shapeStr(sizes));
    for (const auto &[name, p] : params) {
        if (p && p->sizes() != normalized)
            throw Error(std::string(op) + ": " + name + " of shape " + shapeStr(p->sizes())
                        + " does not match normalized_shape " + shapeStr(normalized));
    }
    return numelOf(normalized);
}

// eps=None of rms_norm: the machine epsilon of the type it computes in
// (PyTorch's kernel: f32's epsilon for f16/bf16/f32, f64's for f64).
double rmsNormEps(const Value &eps, DType dtype)
{
    if (!eps.isNone())
        return eps.toDouble();
    return computeDType(dtype) == DType::F64 ? std::numeric_limits<double>::epsilon()
                                              : std::numeric_limits<float>::epsilon();
}

// rms: y = x / sqrt(mean(x^2) + eps) * w; otherwise layer_norm.
void rowNormKernel(const Tensor &x, int64_t m, const std::optional<Tensor> &weight,
                   const std::optional<Tensor> &bias, double eps, bool rms, const Tensor &out)
{
    const DType c = computeDType(x.dtype());
    const Tensor w = paramAs(weight, c), b = paramAs(bias, c);
    const int64_t rows = x.numel() / std::max<int64_t>(m, 1);
    runInComputeType(x, out, [&](const auto *in, auto *o) {
        using C = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
        const C *wp = dataOrNull<C>(w), *bp = dataOrNull<C>(b);
        parallelFor(0, rows, grainFor(m), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const C *xr = in + r * m;
                if (rms) {
                    const C ms = laneSum<C>(m, [&](int64_t i) { return xr[i] * xr[i]; }) / C(m);
                    normalizeRow(xr, o + r * m, m, C(0), C(1) / std::sqrt(ms + C(eps)), wp, bp);
                } else {
                    const auto [mean, rstd] = meanAndRstd(xr, m, C(eps));
                    normalizeRow(xr, o + r * m, m, mean, rstd, wp, bp);
                }
            }
        });
    });
}

IntList trailingDims(int64_t rank, size_t k)
{
    IntList dims;
    for (size_t i = 0; i < k; ++i)
        dims.push_back(rank - static_cast<int64_t>(k) + static_cast<int64_t>(i));
    return dims;
}

TensorList layerNormDecomposition(const Args &a)
{
    const Tensor x = upcast(arg(a, 0));
    const IntList dims = trailingDims(x.dim(), a[1].toIntList().size());
    const Tensor centered = ops::sub(x, ops::mean(x, dims, true));
    const Tensor var = ops::mean(ops::mul(centered, centered), dims, true);
    Tensor y = ops::mul(centered, ops::rsqrt(ops::add(var, a[4].toDouble())));
    if (const auto w = optArg(a, 2))
        y = ops::mul(y, *w);
    if (const auto b = optArg(a, 3))
        y = ops::add(y, *b);
    return {castBack(y, arg(a, 0).dtype())};
}

TensorList rmsNormDecomposition(const Args &a)
{
    const Tensor x = upcast(arg(a, 0));
    const IntList dims = trailingDims(x.dim(), a[1].toIntList().size());
    const Tensor meanSquare = ops::mean(ops::mul(x, x), dims, true);
    Tensor y = ops::mul(x, ops::rsqrt(ops::add(meanSquare, rmsNormEps(a[3], x.dtype()))));
    if (const auto w = optArg(a, 2))
        y = ops::mul(y, *w);
    return {castBack(y, arg(a, 0).dtype())};
}

void registerLayerNorm(OpRegistry &r)
{
    OpDef def;
    def.kind = OpKind::Composite;
    def.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        requireFloating(kLayerNorm, "input", x);
        checkNormalizedShape(kLayerNorm, x, a[1].toIntList(), {{"weight", optArg(a, 2)}, {"bias", optArg(a, 3)}});
        return std::vector<TensorSpec>{{x.sizes(), x.dtype()}};
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) {
        const int64_t m = numelOf(a[1].toIntList());
        rowNormKernel(arg(a, 0), m, optArg(a, 2), optArg(a, 3), a[4].toDouble(), false, outs[0]);
    };
    def.decompose = layerNormDecomposition;
    def.cost = perElementCost(8);
    r.add("aten.layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
          "float eps=1e-5) -> Tensor",
          std::move(def));
}

void registerRmsNorm(OpRegistry &r)
{
    OpDef def;
    def.kind = OpKind::Composite;
    def.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        requireFloating(kRmsNorm, "input", x);
        checkNormalizedShape(kRmsNorm, x, a[1].toIntList(), {{"weight", optArg(a, 2)}});
        return std::vector<TensorSpec>{{x.sizes(), x.dtype()}};
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) {
        const Tensor &x = arg(a, 0);
        const int64_t m = numelOf(a[1].toIntList());
        rowNormKernel(x, m, optArg(a, 2), std::nullopt, rmsNormEps(a[3], x.dtype()), true, outs[0]);
    };
    def.decompose = rmsNormDecomposition;
    def.cost = perElementCost(5);
    r.add("aten.rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
          std::move(def));
}

// --- group_norm and batch_norm -------------------------------------------------------

// [N, C, *] as (N, C, elements per channel).
struct ChannelLayout {
    int64_t n = 0, channels = 0, perChannel = 0;
};

ChannelLayout channelLayout(const char *op, const Tensor &x)
{
    if (x.dim() < 2)
        throw Error(std::string(op) + ": expected an input of shape [N, C, *], got " + shapeStr(x.sizes()));
    return {x.size(0), x.size(1), numelOf(Shape(x.sizes().begin() + 2, x.sizes().end()))};
}

void checkPerChannel(const char *op, const char *name, const std::optional<Tensor> &p, const Tensor &x)
{
    if (p && (p->dim() != 1 || p->size(0) != x.size(1)))
        throw Error(std::string(op) + ": " + name + " of shape " + shapeStr(p->sizes()) + " does not match the "
                    + std::to_string(x.size(1)) + " channels of input of shape " + shapeStr(x.sizes()));
}

// Shape [C, 1, ...]: a per-channel tensor that broadcasts against [N, C, *].
Tensor perChannelView(const Tensor &p, int64_t rank)
{
    Shape shape(static_cast<size_t>(rank - 1), 1);
    shape[0] = p.numel();
    return ops::reshape(p, shape);
}

ChannelLayout checkGroups(const Tensor &x, int64_t groups)
{
    const ChannelLayout l = channelLayout(kGroupNorm, x);
    if (groups <= 0 || l.channels % groups != 0)
        throw Error(std::string(kGroupNorm) + ": num_groups " + std::to_string(groups) + " does not divide the "
                    + std::to_string(l.channels) + " channels of input of shape " + shapeStr(x.sizes()));
    return l;
}

template <typename C>
void groupNormContiguous(const C *x, C *y, const ChannelLayout &l, int64_t groups, const C *w, const C *b, C eps)
{
    const int64_t perGroup = l.channels / groups;
    const int64_t groupSize = perGroup * l.perChannel;
    parallelFor(0, l.n * groups, grainFor(groupSize), [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g) {
            const C *xg = x + g * groupSize;
            const auto [mean, rstd] = meanAndRstd(xg, groupSize, eps);
            const int64_t c0 = (g % groups) * perGroup;
            for (int64_t c = 0; c < perGroup; ++c) {
                const C scale = w ? rstd * w[c0 + c] : rstd;
                const C shift = (b ? b[c0 + c] : C(0)) - mean * scale;
                const int64_t offset = c * l.perChannel;
                affineRun(xg + offset, y + g * groupSize + offset, l.perChannel, scale, shift);
            }
        }
    });
}

void groupNormKernel(const Args &a, const Tensor &out)
{
    const Tensor &x = arg(a, 0);
    const ChannelLayout l = channelLayout(kGroupNorm, x);
    const DType c = computeDType(x.dtype());
    const Tensor w = paramAs(optArg(a, 2), c), b = paramAs(optArg(a, 3), c);
    const int64_t groups = a[1].toInt();
    const double eps = a[4].toDouble();
    runInComputeType(x, out, [&](const auto *in, auto *o) {
        using C = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
        groupNormContiguous(in, o, l, groups, dataOrNull<C>(w), dataOrNull<C>(b), C(eps));
    });
}

TensorList groupNormDecomposition(const Args &a)
{
    const Tensor x = upcast(arg(a, 0));
    const int64_t groups = a[1].toInt();
    const ChannelLayout l = checkGroups(x, groups);
    const Tensor grouped = ops::reshape(x, {l.n, groups, l.channels / groups * l.perChannel});
    const Tensor centered = ops::sub(grouped, ops::mean(grouped, {2}, true));
    const Tensor var = ops::mean(ops::mul(centered, centered), {2}, true);
    Tensor y = ops::reshape(ops::mul(centered, ops::rsqrt(ops::add(var, a[4].toDouble()))), x.sizes());
    if (const auto w = optArg(a, 2))
        y = ops::mul(y, perChannelView(*w, x.dim()));
    if (const auto b = optArg(a, 3))
        y = ops::add(y, perChannelView(*b, x.dim()));
    return {castBack(y, arg(a, 0).dtype())};
}

void registerGroupNorm(OpRegistry &r)
{
    OpDef def;
    def.kind = OpKind::Composite;
    def.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        requireFloating(kGroupNorm, "input", x);
        checkGroups(x, a[1].toInt());
        checkPerChannel(kGroupNorm, "weight", optArg(a, 2), x);
        checkPerChannel(kGroupNorm, "bias", optArg(a, 3), x);
        return std::vector<TensorSpec>{{x.sizes(), x.dtype()}};
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) { groupNormKernel(a, outs[0]); };
    def.decompose = groupNormDecomposition;
    def.cost = perElementCost(8);
    r.add("aten.group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-5) "
          "-> Tensor",
          std::move(def));
}

// Inference batch norm is one affine map per channel: y = x * scale + shift,
// with scale and shift folded from the statistics in f64.
template <typename C>
std::pair<std::vector<C>, std::vector<C>> foldBatchNorm(const Args &a)
{
    const Tensor mean = contiguousAs(arg(a, 1), DType::F64), var = contiguousAs(arg(a, 2), DType::F64);
    const Tensor w = paramAs(optArg(a, 3), DType::F64), b = paramAs(optArg(a, 4), DType::F64);
    const double *mp = mean.data<double>(), *vp = var.data<double>();
    const double *wp = dataOrNull<double>(w), *bp = dataOrNull<double>(b);
    const double eps = a[5].toDouble();
    std::vector<C> scale(static_cast<size_t>(mean.numel())), shift(scale.size());
    for (size_t c = 0; c < scale.size(); ++c) {
        const double s = (wp ? wp[c] : 1.0) / std::sqrt(vp[c] + eps);
        scale[c] = C(s);
        shift[c] = C((bp ? bp[c] : 0.0) - mp[c] * s);
    }
    return {scale, shift};
}

template <typename C>
void batchNormContiguous(const C *x, C *y, const ChannelLayout &l, const C *scale, const C *shift)
{
    if (l.perChannel == 1) { // [N, C]: vectorize across channels
        parallelFor(0, l.n, grainFor(l.channels), [&](int64_t begin, int64_t end) {
            for (int64_t i = begin * l.channels; i < end * l.channels; i += l.channels) {
                for (int64_t c = 0; c < l.channels; ++c)
                    y[i + c] = x[i + c] * scale[c] + shift[c];
            }
        });
        return;
    }
    parallelFor(0, l.n * l.channels, grainFor(l.perChannel), [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            const int64_t c = plane % l.channels, offset = plane * l.perChannel;
            affineRun(x + offset, y + offset, l.perChannel, scale[c], shift[c]);
        }
    });
}

void batchNormKernel(const Args &a, const Tensor &out)
{
    const ChannelLayout l = channelLayout(kBatchNorm, arg(a, 0));
    runInComputeType(arg(a, 0), out, [&](const auto *in, auto *o) {
        using C = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
        const auto [scale, shift] = foldBatchNorm<C>(a);
        batchNormContiguous(in, o, l, scale.data(), shift.data());
    });
}

TensorList batchNormDecomposition(const Args &a)
{
    const Tensor x = upcast(arg(a, 0));
    const int64_t rank = x.dim();
    const Tensor centered = ops::sub(x, perChannelView(arg(a, 1), rank));
    const Tensor rstd = ops::rsqrt(ops::add(perChannelView(arg(a, 2), rank), a[5].toDouble()));
    Tensor y = ops::mul(centered, rstd);
    if (const auto w = optArg(a, 3))
        y = ops::mul(y, perChannelView(*w, rank));
    if (const auto b = optArg(a, 4))
        y = ops::add(y, perChannelView(*b, rank));
    return {castBack(y, arg(a, 0).dtype())};
}

void registerBatchNorm(OpRegistry &r)
{
    OpDef def;
    def.kind = OpKind::Composite;
    def.shape = [](const Args &a) {
        const Tensor &x = arg(a, 0);
        requireFloating(kBatchNorm, "input", x);
        channelLayout(kBatchNorm, x);
        checkPerChannel(kBatchNorm, "running_mean", optArg(a, 1), x);
        checkPerChannel(kBatchNorm, "running_var", optArg(a, 2), x);
        checkPerChannel(kBatchNorm, "weight", optArg(a, 3), x);
        checkPerChannel(kBatchNorm, "bias", optArg(a, 4), x);
        return std::vector<TensorSpec>{{x.sizes(), x.dtype()}};
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) { batchNormKernel(a, outs[0]); };
    def.decompose = batchNormDecomposition;
    def.cost = perElementCost(2);
    r.add("aten.batch_norm(Tensor input, Tensor running_mean, Tensor running_var, Tensor? weight=None, "
          "Tensor? bias=None, float eps=1e-5) -> Tensor",
          std::move(def));
}

// --- scaled_dot_product_attention ------------------------------------------------------

// q [..., L, E], k [..., S, E], v [..., S, Ev] -> out [batch..., L, Ev], the
// batch dims of q, k and v broadcast together.
struct AttnShape {
    Shape batch;
    int64_t L = 0, S = 0, E = 0, Ev = 0;

    Shape withInner(int64_t rows, int64_t cols) const
    {
        Shape s = batch;
        s.push_back(rows);
        s.push_back(cols);
        return s;
    }
};

Shape batchDims(const Tensor &t)
{
    return Shape(t.sizes().begin(), t.sizes().end() - 2);
}

std::string qkvShapes(const Tensor &q, const Tensor &k, const Tensor &v)
{
    return "query " + shapeStr(q.sizes()) + ", key " + shapeStr(k.sizes()) + " and value " + shapeStr(v.sizes());
}

void checkQkv(const char *op, const Tensor &q, const Tensor &k, const Tensor &v)
{
    const std::string prefix = std::string(op) + ": ";
    if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
        throw Error(prefix + "need at least 2 dims each, got " + qkvShapes(q, k, v));
    requireFloating(op, "query", q);
    if (k.dtype() != q.dtype() || v.dtype() != q.dtype())
        throw Error(prefix + "query, key and value must have the same dtype, got " + dtypeName(q.dtype()) + ", "
                    + dtypeName(k.dtype()) + " and " + dtypeName(v.dtype()));
    if (k.size(-1) != q.size(-1))
        throw Error(prefix + "query and key must have the same embedding size, got " + qkvShapes(q, k, v));
    if (v.size(-2) != k.size(-2))
        throw Error(prefix + "key and value must have the same sequence length, got " + qkvShapes(q, k, v));
}

bool broadcastsTo(const Shape &from, const Shape &to)
{
    if (from.size() > to.size())
        return false;
    const size_t lead = to.size() - from.size();
    for (size_t i = 0; i < from.size(); ++i) {
        if (from[i] != 1 && from[i] != to[lead + i])
            return false;
    }
    return true;
}

void checkMask(const std::optional<Tensor> &mask, bool causal, const AttnShape &s)
{
    if (!mask)
        return;
    const std::string prefix = std::string(kSdpa) + ": ";
    if (causal)
        throw Error(prefix + "attn_mask and is_causal cannot both be set");
    if (mask->dtype() != DType::Bool && !isFloating(mask->dtype()))
        throw Error(prefix + "attn_mask must be bool or floating-point, got " + dtypeName(mask->dtype()));
    const Shape target = s.withInner(s.L, s.S);
    if (!broadcastsTo(mask->sizes(), target))
        throw Error(prefix + "attn_mask of shape " + shapeStr(mask->sizes()) + " does not broadcast to the scores' shape "
                    + shapeStr(target));
}

AttnShape qkvShape(const char *op, const Args &a)
{
    const Tensor &q = arg(a, 0), &k = arg(a, 1), &v = arg(a, 2);
    checkQkv(op, q, k, v);
    AttnShape s;
    try {
        s.batch = loops::broadcastAll(op, {batchDims(q), batchDims(k), batchDims(v)});
    } catch (const Error &) {
        throw Error(std::string(op) + ": the batch dims of " + qkvShapes(q, k, v) + " cannot be broadcast together");
    }
    s.L = q.size(-2);
    s.S = k.size(-2);
    s.E = q.size(-1);
    s.Ev = v.size(-1);
    return s;
}

AttnShape attnShape(const Args &a)
{
    const AttnShape s = qkvShape(kSdpa, a);
    checkMask(optArg(a, 3), a[4].toBool(), s);
    return s;
}

// fusescope.attention(query, key, value, masked, fill, scale): the compiler's
// form of a decomposed attention. `masked` is a bool tensor broadcasting to
// the scores; where it holds, the score becomes `fill`.
const char *const kFusedAttention = "fusescope.attention";

AttnShape fusedAttnShape(const Args &a)
{
    const AttnShape s = qkvShape(kFusedAttention, a);
    if (const std::optional<Tensor> masked = optArg(a, 3)) {
        const Shape target = s.withInner(s.L, s.S);
        if (masked->dtype() != DType::Bool || !broadcastsTo(masked->sizes(), target))
            throw Error(std::string(kFusedAttention) + ": masked must be a bool tensor broadcasting to the scores' shape "
                        + shapeStr(target) + ", got " + dtypeName(masked->dtype()) + " " + shapeStr(masked->sizes()));
    }
    return s;
}

double attnScale(const Args &a, int64_t e)
{
    return a[5].isNone() ? 1.0 / std::sqrt(static_cast<double>(e)) : a[5].toDouble();
}

// Element offsets of each batch block, walking `batch` in row-major order
// with the given per-dim strides.
std::vector<int64_t> blockOffsets(const Shape &batch, const Shape &strides)
{
    std::vector<int64_t> out(static_cast<size_t>(numelOf(batch)));
    Shape index(batch.size(), 0);
    int64_t offset = 0;
    for (int64_t &o : out) {
        o = offset;
        for (size_t d = batch.size(); d-- > 0;) {
            offset += strides[d];
            if (++index[d] < batch[d])
                break;
            offset -= strides[d] * batch[d];
            index[d] = 0;
        }
    }
    return out;
}

// One operand of a batched GEMM: a [rows, cols] matrix per batch block,
// read in place when either inner dim is unit-stride (BLAS takes both
// orders), otherwise from a contiguous copy.
template <typename C>
struct MatrixOperand {
    Tensor storage;
    const C *data = nullptr;
    std::vector<int64_t> offsets;
    bool colMajor = false;
    int64_t ld = 1;

    // Zero-size operands have no data: pointer arithmetic on null is undefined.
    const C *block(int64_t b) const { return data ? data + offsets[static_cast<size_t>(b)] : nullptr; }
};

bool rowMajorLd(int64_t rows, int64_t cols, int64_t sRow, int64_t sCol, int64_t &ld)
{
    if ((cols > 1 && sCol != 1) || (rows > 1 && sRow < std::max<int64_t>(cols, 1)))
        return false;
    ld = rows > 1 ? sRow : std::max<int64_t>(cols, 1);
    return true;
}

template <typename C>
MatrixOperand<C> matrixOperand(const Tensor &t, const AttnShape &s)
{
    MatrixOperand<C> m;
    const int64_t rows = t.size(-2), cols = t.size(-1);
    m.storage = t.dtype() == DTypeOf<C>::value ? t : contiguousAs(t, DTypeOf<C>::value);
    bool ok = rowMajorLd(rows, cols, m.storage.stride(-2), m.storage.stride(-1), m.ld);
    if (!ok) {
        m.colMajor = rowMajorLd(cols, rows, m.storage.stride(-1), m.storage.stride(-2), m.ld);
        ok = m.colMajor;
    }
    if (!ok) { // neither order fits, so t is not contiguous and this copies
        m.storage = contiguousAs(m.storage, DTypeOf<C>::value);
        m.ld = std::max<int64_t>(cols, 1);
    }
    m.data = m.storage.template data<C>();
    m.offsets = blockOffsets(s.batch, loops::broadcastStrides(m.storage, s.withInner(rows, cols)));
    return m;
}

// A mask kept at its own shape and read through broadcast strides: additive
// scores of type C, or the bool positions whose score becomes a fill value.
template <typename E>
struct ScoreMask {
    Tensor storage;
    const E *data = nullptr;
    std::vector<int64_t> offsets;
    int64_t rowStride = 0, colStride = 0;

    const E *row(int64_t b, int64_t i) const { return data + offsets[static_cast<size_t>(b)] + i * rowStride; }
};

template <typename E>
ScoreMask<E> scoreMask(Tensor storage, const AttnShape &s)
{
    ScoreMask<E> m;
    m.storage = std::move(storage);
    m.data = m.storage.template data<E>();
    const Shape strides = loops::broadcastStrides(m.storage, s.withInner(s.L, s.S));
    m.offsets = blockOffsets(s.batch, strides);
    m.rowStride = strides[s.batch.size()];
    m.colStride = strides[s.batch.size() + 1];
    return m;
}

// bool: 0 to attend, -inf not.
template <typename C>
ScoreMask<C> additiveMask(const Tensor &mask, const AttnShape &s)
{
    if (mask.dtype() != DType::Bool)
        return scoreMask<C>(contiguousAs(mask, DTypeOf<C>::value), s);
    Tensor scores = Tensor::empty(mask.sizes(), DTypeOf<C>::value, mask.device());
    loops::pointwise<C, bool, 1>(scores, {mask}, [](bool keep) { return keep ? C(0) : -std::numeric_limits<C>::infinity(); });
    return scoreMask<C>(scores, s);
}

inline void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c, static_cast<blasint>(ldc));
}

inline void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
                 int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc)
{
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0, c, static_cast<blasint>(ldc));
}

template <typename C>
struct AttnPlan {
    AttnShape shape;
    C scale = 1;
    bool causal = false;
    MatrixOperand<C> q, k, v;
    std::optional<ScoreMask<C>> mask;
    std::optional<ScoreMask<bool>> masked; // fusescope.attention: score = fill where it holds
    C fill = 0;
    // aten.scaled_dot_product_attention gives a row with nothing to attend to
    // zero weights (PyTorch's _safe_softmax); a decomposed softmax gives NaN.
    bool safe = true;
    C *out = nullptr;
};

// What one row of scores goes through before its softmax.
template <typename C>
struct RowMasks {
    const C *add = nullptr;
    int64_t addStride = 0;
    const bool *masked = nullptr;
    int64_t maskedStride = 0;
    C fill = 0;
    bool safe = true;
};

// Softmax of scores[0, valid) in place; the columns a causal mask hides and
// rows with nothing left to attend to (all -inf) become 0, as PyTorch's
// _safe_softmax.
template <typename C>
void attnSoftmaxRow(C *row, int64_t n, int64_t valid, const RowMasks<C> &masks)
{
    if (masks.masked && masks.maskedStride == 1) {
        // As bytes: GCC has no vector type for bool, and the strided loop
        // below, element by element, took a fifth of an attention's time.
        const auto *hidden = reinterpret_cast<const uint8_t *>(masks.masked);
        for (int64_t j = 0; j < valid; ++j)
            row[j] = hidden[j] ? masks.fill : row[j];
    } else if (masks.masked) {
        for (int64_t j = 0; j < valid; ++j)
            row[j] = masks.masked[j * masks.maskedStride] ? masks.fill : row[j];
    }
    if (masks.add) {
        for (int64_t j = 0; j < valid; ++j)
            row[j] += masks.add[j * masks.addStride];
    }
    const C m = rowMax(row, valid);
    if (masks.safe && (valid == 0 || m == -std::numeric_limits<C>::infinity())) {
        std::fill(row, row + n, C(0));
        return;
    }
    const C sum = laneSum<C>(valid, [&](int64_t j) {
        const C e = sm::exp(row[j] - m);
        row[j] = e;
        return e;
    });
    const C inv = C(1) / sum;
    for (int64_t j = 0; j < valid; ++j)
        row[j] *= inv;
    std::fill(row + valid, row + n, C(0));
}

// The keys rows [i0, i1) attend to at all, from the first: past the last
// column that a `masked` filling with -inf leaves open in some row, every
// weight is exactly 0, so neither GEMM computes those columns (a causal mask
// given as a tensor halves the work). With none open, all are kept: those
// rows' softmax is NaN, as the decomposed graph's.
template <typename C>
int64_t openColumns(const AttnPlan<C> &p, int64_t b, int64_t i0, int64_t i1)
{
    const int64_t all = p.causal ? std::min(p.shape.S, i1) : p.shape.S;
    if (!p.masked || p.fill != -std::numeric_limits<C>::infinity())
        return all;
    int64_t open = 0;
    for (int64_t i = i0; i < i1; ++i) {
        const bool *row = p.masked->row(b, i);
        for (int64_t j = all; j-- > open;) {
            if (!row[j * p.masked->colStride]) {
                open = j + 1;
                break;
            }
        }
    }
    return open ? open : all;
}

// Query rows [i0, i1) of one (batch, head) block: scores = scale * q k^T,
// masked softmax, scores v. Causal rows never see keys past i1, so those
// columns are not computed at all.
template <typename C>
void attendRows(const AttnPlan<C> &p, int64_t b, int64_t i0, int64_t i1, C *scores)
{
    const AttnShape &s = p.shape;
    const int64_t rows = i1 - i0, cols = openColumns(p, b, i0, i1);
    const C *q = p.q.block(b) + (p.q.colMajor ? i0 : i0 * p.q.ld);
    if (s.E == 0)
        std::fill(scores, scores + rows * s.S, C(0));
    else // k^T: a row-major k is read transposed, a column-major one as is
        gemm(p.q.colMajor, !p.k.colMajor, rows, cols, s.E, p.scale, q, p.q.ld, p.k.block(b), p.k.ld, scores, s.S);
    parallelFor(0, rows, grainFor(cols), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t i = i0 + r;
            const int64_t valid = p.causal ? std::min(i + 1, s.S) : cols;
            RowMasks<C> masks;
            if (p.mask) {
                masks.add = p.mask->row(b, i);
                masks.addStride = p.mask->colStride;
            }
            if (p.masked) {
                masks.masked = p.masked->row(b, i);
                masks.maskedStride = p.masked->colStride;
                masks.fill = p.fill;
            }
            masks.safe = p.safe;
            attnSoftmaxRow(scores + r * s.S, cols, valid, masks);
        }
    });
    gemm(false, p.v.colMajor, rows, s.Ev, cols, C(1), scores, s.S, p.v.block(b), p.v.ld,
         p.out + (b * s.L + i0) * s.Ev, s.Ev);
}

// OpenBLAS runs a GEMM of up to this many multiply-adds on the calling
// thread alone, so tasks this small can run side by side on the pool
// without oversubscribing the cores (BLAS is never threaded inside it).
constexpr int64_t kSingleThreadGemm = 65536 * 4;
// Fewer query rows per GEMM than this waste most of what BLAS is good at.
constexpr int64_t kMinRowsPerTask = 16;
// A whole block's scores, at most (1 MiB in f32: within a core's L2).
constexpr int64_t kMaxBlockScores = 512 * 512;

template <typename C>
void runAttention(const AttnPlan<C> &p)
{
    const AttnShape &s = p.shape;
    const int64_t blocks = numelOf(s.batch);
    const int64_t macsPerRow = std::max<int64_t>(1, s.S * std::max(s.E, s.Ev));
    const int64_t rowsPerTask = std::clamp<int64_t>(kSingleThreadGemm / macsPerRow, 1, s.L);
    if (rowsPerTask < std::min(s.L, kMinRowsPerTask)) {
        // Long keys: whole blocks one after the other, BLAS and the softmax rows use all threads.
        std::vector<C> scores(static_cast<size_t>(s.L * s.S));
        for (int64_t b = 0; b < blocks; ++b)
            attendRows(p, b, 0, s.L, scores.data());
        return;
    }
    // Tasks of (block, row chunk) on the pool, each with its single-threaded
    // GEMMs. With blocks enough for every thread, a task is a whole block, so
    // its keys and values are packed once, not once per row chunk: the
    // encoder's 32 blocks of 128 x 128 x 64 ran as 128 tasks of 32 rows.
    // Where whole columns may be skipped (a causal mask, or one filling with
    // -inf), a quarter of the rows: their first blocks attend to fewer keys.
    const bool skips = p.causal || (p.masked && p.fill == -std::numeric_limits<C>::infinity());
    const bool wholeBlocks = blocks >= 2 * numThreads() && s.L * s.S <= kMaxBlockScores;
    const int64_t rows = !wholeBlocks ? rowsPerTask : skips ? std::max(rowsPerTask, s.L / 4) : s.L;
    const int64_t chunks = (s.L + rows - 1) / rows;
    const SerialBlasScope serialBlas;
    parallelFor(0, blocks * chunks, 1, [&](int64_t begin, int64_t end) {
        std::vector<C> scores(static_cast<size_t>(rows * s.S));
        for (int64_t t = begin; t < end; ++t) {
            const int64_t i0 = (t % chunks) * rows;
            attendRows(p, t / chunks, i0, std::min(s.L, i0 + rows), scores.data());
        }
    });
}

template <typename C>
void attentionInType(const Args &a, const AttnShape &s, const Tensor &out, bool fused)
{
    AttnPlan<C> p;
    p.shape = s;
    p.q = matrixOperand<C>(arg(a, 0), s);
    p.k = matrixOperand<C>(arg(a, 1), s);
    p.v = matrixOperand<C>(arg(a, 2), s);
    if (fused) {
        p.scale = C(a[5].toDouble());
        if (const auto masked = optArg(a, 3)) {
            p.masked = scoreMask<bool>(*masked, s);
            p.fill = C(a[4].toDouble());
        }
        p.safe = false;
    } else {
        p.scale = C(attnScale(a, s.E));
        p.causal = a[4].toBool();
        if (const auto mask = optArg(a, 3))
            p.mask = additiveMask<C>(*mask, s);
    }
    p.out = out.data<C>();
    runAttention(p);
}

// `fused`: fusescope.attention's arguments, else aten.scaled_dot_product_attention's.
void attentionKernel(const Args &a, const Tensor &out, bool fused)
{
    if (out.numel() == 0)
        return;
    const AttnShape s = fused ? fusedAttnShape(a) : attnShape(a);
    if (s.S == 0) { // nothing to attend to: _safe_softmax gives zero weights
        visitFloating(out.dtype(), [&](auto tag) {
            using T = decltype(tag);
            std::fill(out.data<T>(), out.data<T>() + out.numel(), T(0.0f));
        });
        return;
    }
    const DType c = computeDType(out.dtype());
    const Tensor o = out.dtype() == c ? out : Tensor::empty(out.sizes(), c, out.device());
    if (c == DType::F64)
        attentionInType<double>(a, s, o, fused);
    else
        attentionInType<float>(a, s, o, fused);
    if (o.dtype() != out.dtype())
        loops::copyInto(out, o);
}

// Scores expanded to the mask's batch dims where the mask has more of them
// than q and k (v's batch dims can add some too).
Tensor expandToMask(const Tensor &scores, const Tensor &mask)
{
    const Shape target = loops::broadcastShapes(kSdpa, scores.sizes(), mask.sizes());
    return target == scores.sizes() ? scores : ops::expand(scores, target);
}

Tensor causalMaskedScores(const Tensor &scores)
{
    const int64_t l = scores.size(-2), s = scores.size(-1);
    const Tensor rows = ops::view(callOp1("aten.arange", {int64_t(0), l}), {l, 1});
    const Tensor cols = callOp1("aten.arange", {int64_t(0), s});
    return ops::maskedFill(scores, ops::lt(rows, cols), -std::numeric_limits<double>::infinity());
}

TensorList attentionDecomposition(const Args &a)
{
    const Tensor q = upcast(arg(a, 0)), k = upcast(arg(a, 1)), v = upcast(arg(a, 2));
    // Scaling q rather than the scores: fewer elements when E < S, and an
    // empty q (E = 0, scale inf) gives zero scores as in the kernel and PyTorch.
    Tensor scores = ops::matmul(ops::mul(q, attnScale(a, q.size(-1))), ops::transpose(k, -2, -1));
    if (a[4].toBool())
        scores = causalMaskedScores(scores);
    const auto mask = optArg(a, 3);
    if (mask) {
        scores = expandToMask(scores, *mask);
        if (mask->dtype() == DType::Bool)
            scores = ops::maskedFill(scores, ops::logicalNot(*mask), -std::numeric_limits<double>::infinity());
        else
            scores = ops::add(scores, upcast(*mask));
    }
    Tensor weights = ops::softmax(scores, -1);
    if (mask) { // rows the mask hides completely attend to nothing, as in the kernel
        const Tensor hidden = ops::all(ops::eq(scores, -std::numeric_limits<double>::infinity()), {-1}, true);
        weights = ops::where(hidden, 0.0, weights);
    }
    return {castBack(ops::matmul(weights, v), arg(a, 0).dtype())};
}

OpCost attentionCost(const Args &a, std::span<const Tensor> outs, bool fused)
{
    OpCost c = ioBytes(a, outs);
    const AttnShape s = fused ? fusedAttnShape(a) : attnShape(a);
    const double scores = static_cast<double>(numelOf(s.batch)) * static_cast<double>(s.L * s.S);
    c.flops = scores * (2.0 * static_cast<double>(s.E + s.Ev) + 12.0);
    return c;
}

void registerAttention(OpRegistry &r)
{
    OpDef def;
    def.kind = OpKind::Composite;
    def.shape = [](const Args &a) {
        const AttnShape s = attnShape(a);
        return std::vector<TensorSpec>{{s.withInner(s.L, s.Ev), arg(a, 0).dtype()}};
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) { attentionKernel(a, outs[0], false); };
    def.decompose = attentionDecomposition;
    def.cost = [](const Args &a, std::span<const Tensor> outs) { return attentionCost(a, outs, false); };
    r.add("aten.scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
          "bool is_causal=False, float? scale=None) -> Tensor",
          std::move(def));
    // The compiler's simplify stage forms this from a decomposed attention
    // (matmul, scale, mask, softmax, matmul): one kernel whose scores stay in
    // the cache, row block by row block, instead of two GEMMs and a softmax
    // over scores written out in full.
    OpDef fused;
    fused.kind = OpKind::Opaque;
    fused.shape = [](const Args &a) {
        const AttnShape s = fusedAttnShape(a);
        return std::vector<TensorSpec>{{s.withInner(s.L, s.Ev), arg(a, 0).dtype()}};
    };
    fused.cpu = [](const Args &a, std::span<Tensor> outs) { attentionKernel(a, outs[0], true); };
    fused.cost = [](const Args &a, std::span<const Tensor> outs) { return attentionCost(a, outs, true); };
    r.add("fusescope.attention(Tensor query, Tensor key, Tensor value, Tensor? masked=None, float fill=0.0, "
          "float scale=1.0) -> Tensor",
          std::move(fused));
}

} // namespace

void registerNormOps(OpRegistry &r)
{
    registerSoftmax(r, kSoftmax, false);
    registerSoftmax(r, kLogSoftmax, true);
    registerLayerNorm(r);
    registerRmsNorm(r);
    registerGroupNorm(r);
    registerBatchNorm(r);
    registerAttention(r);
}

namespace ops {

Tensor softmax(const Tensor &x, int64_t dim)
{
    return callOp1(kSoftmax, {x, dim});
}

Tensor logSoftmax(const Tensor &x, int64_t dim)
{
    return callOp1(kLogSoftmax, {x, dim});
}

Tensor layerNorm(const Tensor &x, const Shape &normalizedShape, const std::optional<Tensor> &weight,
                 const std::optional<Tensor> &bias, double eps)
{
    return callOp1(kLayerNorm, {x, IntList(normalizedShape), Value(weight), Value(bias), eps});
}

Tensor rmsNorm(const Tensor &x, const Shape &normalizedShape, const std::optional<Tensor> &weight,
               std::optional<double> eps)
{
    return callOp1(kRmsNorm, {x, IntList(normalizedShape), Value(weight), Value(eps)});
}

Tensor groupNorm(const Tensor &x, int64_t numGroups, const std::optional<Tensor> &weight,
                 const std::optional<Tensor> &bias, double eps)
{
    return callOp1(kGroupNorm, {x, numGroups, Value(weight), Value(bias), eps});
}

Tensor batchNorm(const Tensor &x, const Tensor &runningMean, const Tensor &runningVar,
                 const std::optional<Tensor> &weight, const std::optional<Tensor> &bias, double eps)
{
    return callOp1(kBatchNorm, {x, runningMean, runningVar, Value(weight), Value(bias), eps});
}

Tensor scaledDotProductAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                                 const std::optional<Tensor> &attnMask, bool isCausal, std::optional<double> scale)
{
    return callOp1(kSdpa, {q, k, v, Value(attnMask), isCausal, Value(scale)});
}

} // namespace ops
} // namespace fusescope
