// Normalization ops. Each is composite: eager runs a fused
// kernel (a few passes over contiguous rows, parallel over rows), the
// compiler runs the decomposition into primitive ops.
#include "core/ops/norm.h"

#include "core/ops/builtin.h"
#include "core/ops/functional.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/ops/rowmath.h"
#include "core/ops/scalarmath.h"
#include "core/runtime/threadpool.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusescope {
namespace {

using namespace rowmath;

const char *const kSoftmax = "aten.softmax";
const char *const kLogSoftmax = "aten.log_softmax";
const char *const kLayerNorm = "aten.layer_norm";
const char *const kRmsNorm = "aten.rms_norm";
const char *const kGroupNorm = "aten.group_norm";
const char *const kBatchNorm = "aten.batch_norm";

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

std::optional<Tensor> optArg(const Args &a, size_t i)
{
    return a[i].toOptionalTensor();
}

// --- shared helpers ------------------------------------------------------------

using loops::contiguousAs;

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

// --- row primitives ------------------------------------------------------------

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
    expNormalize(x, y, n, m);
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
            loops::runVectorized([&] {
                for (int64_t r = begin; r < end; ++r)
                    softmaxRow(x + r * n, y + r * n, n, log);
            });
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
            loops::runVectorized([&] {
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

} // namespace

void registerNormOps(OpRegistry &r)
{
    registerSoftmax(r, kSoftmax, false);
    registerSoftmax(r, kLogSoftmax, true);
    registerLayerNorm(r);
    registerRmsNorm(r);
    registerGroupNorm(r);
    registerBatchNorm(r);
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

} // namespace ops
} // namespace fusescope
