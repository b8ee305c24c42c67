// Loss ops. Each has a fused eager kernel; mse_loss and cross_entropy are
// composites whose decompositions the compiler uses. Losses are summed in
// f64 over fixed-size chunks, so the result does not depend on the number
// of threads.
#include "core/ops/loss.h"

#include "core/ops/builtin.h"
#include "core/ops/loops.h"
#include "core/ops/movement.h"
#include "core/ops/norm.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduction.h"
#include "core/ops/registry.h"
#include "core/ops/scalarmath.h"
#include "core/ops/views.h"

#include <cmath>
#include <numeric>

namespace fusescope {
namespace {

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

enum class Reduction { None, Mean, Sum };

Reduction parseReduction(const std::string &op, const std::string &reduction)
{
    if (reduction == "none")
        return Reduction::None;
    if (reduction == "mean")
        return Reduction::Mean;
    if (reduction == "sum")
        return Reduction::Sum;
    throw Error(op + ": reduction must be 'mean', 'sum' or 'none', got '" + reduction + "'");
}

// A copy made inside a kernel (no op event of its own), dense in row-major
// order at `shape`, broadcasting t.
Tensor denseAs(const Tensor &t, const Shape &shape, DType dtype)
{
    if (t.sizes() == shape && t.isContiguous() && t.dtype() == dtype)
        return t;
    Tensor out = Tensor::empty(shape, dtype, t.device());
    loops::copyInto(out, t.alias(shape, loops::broadcastStrides(t, shape), t.offset()));
    return out;
}

template <typename T>
void storeScalar(const Tensor &out, double value)
{
    *out.data<T>() = T(static_cast<compute_t<T>>(value));
}

using loops::asDType;

// Sums fn(begin, end) over [0, n) cut into chunks of a size the caller derives
// from shapes only, and adds the partial sums in chunk order.
template <typename Acc, typename Fn>
Acc chunkedSum(int64_t n, int64_t chunk, Fn fn)
{
    const int64_t chunks = (n + chunk - 1) / chunk;
    std::vector<Acc> partial(static_cast<size_t>(chunks));
    parallelFor(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c)
            partial[static_cast<size_t>(c)] = fn(c * chunk, std::min(n, (c + 1) * chunk));
    });
    Acc total{};
    for (const Acc &p : partial)
        total += p;
    return total;
}

// --- mse_loss ----------------------------------------------------------------------

// Eight f64 lanes, so the loop vectorizes without reassociating one sum.
template <typename T>
double sumSquaredDiff(const T *a, const T *b, int64_t n)
{
    constexpr int kLanes = 8;
    double lanes[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
            const double d = static_cast<double>(a[i + j]) - static_cast<double>(b[i + j]);
            lanes[j] += d * d;
        }
    }
    for (; i < n; ++i) {
        const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        lanes[0] += d * d;
    }
    return std::accumulate(lanes, lanes + kLanes, 0.0);
}

DType mseDType(const Tensor &x, const Tensor &t)
{
    return toFloating(ops::resultType(x, t));
}

void mseNone(const Tensor &x, const Tensor &t, const Tensor &out)
{
    const Tensor xc = asDType(x, out.dtype()), tc = asDType(t, out.dtype());
    visitFloating(out.dtype(), [&](auto tag) {
        using T = decltype(tag);
        loops::pointwise<T, T, 2>(out, {xc, tc}, [](auto a, auto b) {
            const auto d = a - b;
            return d * d;
        });
    });
}

void mseKernel(const Tensor &x, const Tensor &t, Reduction reduction, const Tensor &out)
{
    if (reduction == Reduction::None) {
        mseNone(x, t, out);
        return;
    }
    const Shape shape = loops::broadcastShapes("aten.mse_loss", x.sizes(), t.sizes());
    const int64_t n = numelOf(shape);
    // f16/bf16 are read as f32: the sum is f64 either way.
    const DType wide = out.dtype() == DType::F64 ? DType::F64 : DType::F32;
    const Tensor xd = denseAs(x, shape, wide), td = denseAs(t, shape, wide);
    double total = 0;
    visitFloating(wide, [&](auto tag) {
        using T = decltype(tag);
        const T *a = n ? xd.data<T>() : nullptr, *b = n ? td.data<T>() : nullptr;
        total = chunkedSum<double>(n, 16384,
                                   [&](int64_t lo, int64_t hi) { return sumSquaredDiff(a + lo, b + lo, hi - lo); });
    });
    if (reduction == Reduction::Mean)
        total /= static_cast<double>(n); // 0/0 gives NaN, as PyTorch
    visitFloating(out.dtype(), [&](auto tag) { storeScalar<decltype(tag)>(out, total); });
}

void registerMse(OpRegistry &r)
{
    OpDef mse;
    mse.kind = OpKind::Composite;
    mse.shape = [](const Args &a) {
        const Reduction red = parseReduction("aten.mse_loss", a[2].toStringRef());
        const Shape shape = loops::broadcastShapes("aten.mse_loss", arg(a, 0).sizes(), arg(a, 1).sizes());
        const DType dtype = mseDType(arg(a, 0), arg(a, 1));
        return std::vector<TensorSpec>{{red == Reduction::None ? shape : Shape{}, dtype}};
    };
    mse.cpu = [](const Args &a, std::span<Tensor> outs) {
        mseKernel(arg(a, 0), arg(a, 1), parseReduction("aten.mse_loss", a[2].toStringRef()), outs[0]);
    };
    mse.decompose = [](const Args &a) {
        // Integer inputs give a floating loss: convert before subtracting.
        const DType dtype = mseDType(arg(a, 0), arg(a, 1));
        auto floating = [dtype](const Tensor &t) { return t.dtype() == dtype ? t : ops::cast(t, dtype); };
        const Tensor diff = ops::sub(floating(arg(a, 0)), floating(arg(a, 1)));
        const Tensor sq = ops::mul(diff, diff);
        switch (parseReduction("aten.mse_loss", a[2].toStringRef())) {
        case Reduction::None: return TensorList{sq};
        case Reduction::Sum: return TensorList{ops::sum(sq)};
        case Reduction::Mean: break;
        }
        return TensorList{ops::mean(sq)};
    };
    mse.cost = [](const Args &a, std::span<const Tensor> outs) {
        OpCost c;
        const Shape shape = loops::broadcastShapes("aten.mse_loss", arg(a, 0).sizes(), arg(a, 1).sizes());
        c.flops = 3.0 * static_cast<double>(numelOf(shape));
        c.bytesRead = static_cast<double>(arg(a, 0).nbytes() + arg(a, 1).nbytes());
        c.bytesWritten = static_cast<double>(outs[0].nbytes());
        return c;
    };
    r.add("aten.mse_loss(Tensor self, Tensor target, str reduction='mean') -> Tensor", std::move(mse));
}

// --- nll_loss / cross_entropy: shapes ------------------------------------------------

// The input seen as [N, C, S], S the product of the trailing dims.
struct ClassGeometry {
    int64_t n = 1, c = 1, s = 1;
};

void checkTarget(const char *op, const Tensor &x, const Tensor &target)
{
    if (target.dtype() != DType::I64 && target.dtype() != DType::I32)
        throw Error(std::string(op) + ": target must hold class indices (i64), got " + dtypeName(target.dtype()));
    Shape expected;
    if (x.dim() >= 2) {
        expected = x.sizes();
        expected.erase(expected.begin() + 1);
    }
    if (target.sizes() != expected)
        throw Error(std::string(op) + ": target of shape " + shapeStr(target.sizes())
                    + " does not match input of shape " + shapeStr(x.sizes()) + " (expected " + shapeStr(expected)
                    + ")");
}

void checkWeight(const char *op, const Tensor &x, const std::optional<Tensor> &weight, int64_t classes)
{
    if (!weight)
        return;
    if (weight->dim() != 1 || weight->numel() != classes)
        throw Error(std::string(op) + ": weight of shape " + shapeStr(weight->sizes())
                    + " must have one entry per class [" + std::to_string(classes) + "] of input shape "
                    + shapeStr(x.sizes()));
    if (!isFloating(weight->dtype()))
        throw Error(std::string(op) + ": weight must be floating point, got " + dtypeName(weight->dtype()));
}

ClassGeometry checkClassArgs(const char *op, const Tensor &x, const Tensor &target, const std::optional<Tensor> &weight)
{
    if (!isFloating(x.dtype()))
        throw Error(std::string(op) + ": input must be floating point, got " + dtypeName(x.dtype()));
    if (x.dim() == 0)
        throw Error(std::string(op) + ": input must be [C], [N,C] or [N,C,d...], got shape []");
    checkTarget(op, x, target);
    ClassGeometry g;
    g.c = x.dim() == 1 ? x.size(0) : x.size(1);
    g.n = x.dim() == 1 ? 1 : x.size(0);
    for (int64_t d = 2; d < x.dim(); ++d)
        g.s *= x.size(d);
    checkWeight(op, x, weight, g.c);
    return g;
}

std::vector<TensorSpec> classLossShape(const char *op, const Args &a)
{
    checkClassArgs(op, arg(a, 0), arg(a, 1), a[2].toOptionalTensor());
    const Reduction red = parseReduction(op, a[3].toStringRef());
    return {{red == Reduction::None ? arg(a, 1).sizes() : Shape{}, arg(a, 0).dtype()}};
}

// --- nll_loss / cross_entropy: kernels -----------------------------------------------

// Everything a per-position loss needs, dense and converted once.
struct ClassLoss {
    const char *op = "";
    ClassGeometry g;
    Tensor x;                    // contiguous
    Tensor target;               // contiguous i64
    const int64_t *targets = nullptr; // its data
    std::vector<double> weight;  // empty: all ones
    double weightTotal = 0;      // sum of weight
    Reduction reduction = Reduction::Mean;
    int64_t ignoreIndex = -100;
    double smoothing = 0;

    // The class of position p, or -1 when it is ignored; throws when out of range.
    int64_t classAt(int64_t p) const
    {
        const int64_t t = targets[p];
        if (t == ignoreIndex)
            return -1;
        if (t < 0 || t >= g.c)
            throw Error(std::string(op) + ": target " + std::to_string(t) + " is out of bounds for "
                        + std::to_string(g.c) + " classes");
        return t;
    }
    double weightOf(int64_t c) const { return weight.empty() ? 1.0 : weight[static_cast<size_t>(c)]; }
};

ClassLoss makeClassLoss(const char *op, const Args &a)
{
    const Tensor &x = arg(a, 0);
    const std::optional<Tensor> weight = a[2].toOptionalTensor();
    ClassLoss l;
    l.op = op;
    l.g = checkClassArgs(op, x, arg(a, 1), weight);
    l.reduction = parseReduction(op, a[3].toStringRef());
    l.ignoreIndex = a[4].toInt();
    l.x = denseAs(x, x.sizes(), x.dtype());
    l.target = denseAs(arg(a, 1), arg(a, 1).sizes(), DType::I64);
    l.targets = l.target.numel() ? l.target.data<int64_t>() : nullptr;
    if (weight)
        l.weight = weight->toDoubleVector();
    l.weightTotal = weight ? std::accumulate(l.weight.begin(), l.weight.end(), 0.0) : static_cast<double>(l.g.c);
    return l;
}

struct LossSum {
    double loss = 0, weight = 0;
    LossSum &operator+=(const LossSum &o)
    {
        loss += o.loss;
        weight += o.weight;
        return *this;
    }
};

// Positions handled together: they share a sample, so their classes are the
// same stride apart and loops over a block vectorize.
constexpr int64_t kBlock = 64;

// Runs block(p0, count, loss, weight) over all N*S positions, in blocks that
// stay inside one sample, and writes the reduced (or per-position) result.
// makeBlock() builds one block function per chunk (with its own scratch).
template <typename T, typename MakeBlock>
void reduceClassLoss(const ClassLoss &l, const Tensor &out, MakeBlock makeBlock)
{
    const int64_t positions = l.g.n * l.g.s;
    const int64_t chunk = std::max<int64_t>(kBlock, loops::kGrain / std::max<int64_t>(l.g.c, 1));
    T *perPosition = l.reduction == Reduction::None && positions > 0 ? out.data<T>() : nullptr;
    auto runChunk = [&](int64_t begin, int64_t end) {
        auto block = makeBlock();
        double loss[kBlock], weight[kBlock];
        LossSum sum;
        for (int64_t p = begin; p < end;) {
            const int64_t count = std::min({end - p, kBlock, l.g.s - p % l.g.s});
            block(p, count, loss, weight);
            for (int64_t i = 0; i < count; ++i) {
                if (perPosition)
                    perPosition[p + i] = T(static_cast<compute_t<T>>(loss[i]));
                sum += LossSum{loss[i], weight[i]};
            }
            p += count;
        }
        return sum;
    };
    const LossSum total = chunkedSum<LossSum>(positions, chunk, runChunk);
    if (l.reduction != Reduction::None) // all targets ignored: 0/0 is NaN, as PyTorch
        storeScalar<T>(out, l.reduction == Reduction::Sum ? total.loss : total.loss / total.weight);
}

void nllKernel(const ClassLoss &l, const Tensor &out)
{
    visitFloating(l.x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T *x = l.x.numel() ? l.x.data<T>() : nullptr;
        reduceClassLoss<T>(l, out, [&] {
            return [&](int64_t p0, int64_t count, double *loss, double *weight) {
                for (int64_t i = 0; i < count; ++i) {
                    const int64_t p = p0 + i, t = l.classAt(p);
                    const int64_t n = p / l.g.s, s = p % l.g.s;
                    weight[i] = t < 0 ? 0 : l.weightOf(t);
                    loss[i] = t < 0 ? 0 : -weight[i] * double(compute_t<T>(x[(n * l.g.c + t) * l.g.s + s]));
                }
            };
        });
    });
}

// Max of n values, eight lanes wide so it vectorizes. A NaN never wins here,
// but it still reaches the sum of exponentials.
template <typename C>
C rowMax(const C *v, int64_t n)
{
    constexpr int kLanes = 8;
    C lanes[kLanes];
    std::fill(lanes, lanes + kLanes, C(-INFINITY));
    int64_t c = 0;
    for (; c + kLanes <= n; c += kLanes) {
        for (int j = 0; j < kLanes; ++j)
            lanes[j] = v[c + j] > lanes[j] ? v[c + j] : lanes[j];
    }
    for (; c < n; ++c)
        lanes[0] = v[c] > lanes[0] ? v[c] : lanes[0];
    return *std::max_element(lanes, lanes + kLanes);
}

template <typename C>
C rowSum(const C *v, int64_t n)
{
    constexpr int kLanes = 8;
    C lanes[kLanes] = {};
    int64_t c = 0;
    for (; c + kLanes <= n; c += kLanes) {
        for (int j = 0; j < kLanes; ++j)
            lanes[j] += v[c + j];
    }
    for (; c < n; ++c)
        lanes[0] += v[c];
    return std::accumulate(lanes, lanes + kLanes, C(0));
}

// log(sum(exp(row))) of one contiguous row; scratch holds n values.
template <typename T>
compute_t<T> rowLogSumExp(const T *row, int64_t n, compute_t<T> *scratch)
{
    using C = compute_t<T>;
    for (int64_t c = 0; c < n; ++c)
        scratch[c] = C(row[c]);
    const C m = rowMax(scratch, n);
    for (int64_t c = 0; c < n; ++c)
        scratch[c] = sm::exp<C>(scratch[c] - m);
    return m + sm::log<C>(rowSum(scratch, n));
}

// log(sum(exp)) over n classes `stride` apart, for `count` consecutive
// positions at once: the inner loops run along the positions.
template <typename T>
void blockLogSumExp(const T *base, int64_t n, int64_t stride, int64_t count, compute_t<T> *lse)
{
    using C = compute_t<T>;
    C maxv[kBlock], sum[kBlock];
    std::fill(maxv, maxv + count, C(-INFINITY));
    std::fill(sum, sum + count, C(0));
    for (int64_t c = 0; c < n; ++c) {
        const T *r = base + c * stride;
        for (int64_t j = 0; j < count; ++j)
            maxv[j] = C(r[j]) > maxv[j] ? C(r[j]) : maxv[j];
    }
    for (int64_t c = 0; c < n; ++c) {
        const T *r = base + c * stride;
        for (int64_t j = 0; j < count; ++j)
            sum[j] += sm::exp<C>(C(r[j]) - maxv[j]);
    }
    for (int64_t j = 0; j < count; ++j)
        lse[j] = maxv[j] + sm::log<C>(sum[j]);
}

// -sum_c w_c * log p_c at one position, for label smoothing, as
// lse * sum_c w_c - sum_c w_c * x_c.
template <typename T>
double smoothingTerm(const ClassLoss &l, const T *row, double lse)
{
    using C = compute_t<T>;
    double dot = 0;
    if (l.weight.empty()) {
        for (int64_t c = 0; c < l.g.c; ++c)
            dot += static_cast<double>(C(row[c * l.g.s]));
    } else {
        for (int64_t c = 0; c < l.g.c; ++c)
            dot += l.weight[static_cast<size_t>(c)] * static_cast<double>(C(row[c * l.g.s]));
    }
    return lse * l.weightTotal - dot;
}

// log_softmax and nll fused: log-probabilities are never materialized.
void crossEntropyKernel(const ClassLoss &l, const Tensor &out)
{
    visitFloating(l.x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using C = compute_t<T>;
        const T *x = l.x.numel() ? l.x.data<T>() : nullptr;
        const double classes = static_cast<double>(l.g.c);
        reduceClassLoss<T>(l, out, [&] {
            return [&, scratch = std::vector<C>(static_cast<size_t>(l.g.s == 1 ? l.g.c : 0))](
                       int64_t p0, int64_t count, double *loss, double *weight) mutable {
                if (l.g.c == 0) { // no classes: every target is ignored or out of bounds
                    for (int64_t i = 0; i < count; ++i)
                        l.classAt(p0 + i); // throws unless ignored
                    std::fill(loss, loss + count, 0.0);
                    std::fill(weight, weight + count, 0.0);
                    return;
                }
                const int64_t n = p0 / l.g.s, s0 = p0 % l.g.s;
                const T *base = x + (n * l.g.c * l.g.s + s0);
                C lse[kBlock];
                if (l.g.s == 1)
                    lse[0] = rowLogSumExp(base, l.g.c, scratch.data());
                else
                    blockLogSumExp(base, l.g.c, l.g.s, count, lse);
                for (int64_t i = 0; i < count; ++i) {
                    const int64_t t = l.classAt(p0 + i);
                    weight[i] = t < 0 ? 0 : l.weightOf(t);
                    if (t < 0) {
                        loss[i] = 0;
                        continue;
                    }
                    const double logp = double(C(base[t * l.g.s + i])) - double(lse[i]);
                    loss[i] = -weight[i] * logp;
                    if (l.smoothing > 0)
                        loss[i] = (1 - l.smoothing) * loss[i]
                            + l.smoothing / classes * smoothingTerm(l, base + i, double(lse[i]));
                }
            };
        });
    });
}

OpCost classLossCost(const Args &a, std::span<const Tensor> outs, double flopsPerInput)
{
    OpCost c;
    c.flops = flopsPerInput * static_cast<double>(arg(a, 0).numel());
    c.bytesRead = static_cast<double>(arg(a, 0).nbytes() + arg(a, 1).nbytes());
    c.bytesWritten = static_cast<double>(outs[0].nbytes());
    return c;
}

void registerNll(OpRegistry &r)
{
    OpDef nll;
    nll.kind = OpKind::Opaque;
    nll.shape = [](const Args &a) { return classLossShape("aten.nll_loss", a); };
    nll.cpu = [](const Args &a, std::span<Tensor> outs) { nllKernel(makeClassLoss("aten.nll_loss", a), outs[0]); };
    nll.cost = [](const Args &a, std::span<const Tensor> outs) {
        OpCost c = classLossCost(a, outs, 0);
        c.flops = 2.0 * static_cast<double>(arg(a, 1).numel());
        return c;
    };
    r.add("aten.nll_loss(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', "
          "int ignore_index=-100) -> Tensor",
          std::move(nll));
}

double labelSmoothing(const Args &a)
{
    const double eps = a[5].toDouble();
    if (!(eps >= 0 && eps <= 1))
        throw Error("aten.cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(eps));
    return eps;
}

// PyTorch's definition: (1 - eps) * nll + eps / C * smooth, where smooth is
// -sum_c w_c log p_c, zero at ignored targets, and "mean" divides both by the
// summed weight of the non-ignored targets.
TensorList crossEntropyDecomposition(const Args &a)
{
    const Tensor &x = arg(a, 0), &target = arg(a, 1);
    const std::optional<Tensor> weight = a[2].toOptionalTensor();
    const std::string &reduction = a[3].toStringRef();
    const int64_t ignore = a[4].toInt(), classDim = x.dim() == 1 ? 0 : 1;
    const double eps = labelSmoothing(a);
    const Tensor logp = ops::logSoftmax(x, classDim);
    const Tensor nll = ops::nllLoss(logp, target, weight, reduction, ignore);
    if (eps == 0)
        return {nll};
    Tensor weighted = logp;
    if (weight) {
        Shape shape(static_cast<size_t>(x.dim()), 1);
        shape[static_cast<size_t>(classDim)] = weight->numel();
        weighted = ops::mul(logp, ops::reshape(*weight, shape));
    }
    const Tensor ignored = ops::eq(target, ignore);
    Tensor smooth = ops::maskedFill(ops::neg(ops::sum(weighted, {classDim})), ignored, 0);
    if (reduction != "none")
        smooth = ops::sum(smooth);
    if (reduction == "mean") {
        Tensor counted = ops::logicalNot(ignored);
        if (weight) {
            const Tensor safeTarget = ops::where(ignored, int64_t(0), target);
            const Tensor w = ops::indexSelect(*weight, 0, ops::reshape(safeTarget, {-1}));
            counted = ops::maskedFill(ops::reshape(w, target.sizes()), ignored, 0);
        }
        smooth = ops::div(smooth, ops::sum(counted));
    }
    const double classes = static_cast<double>(x.dim() == 1 ? x.size(0) : x.size(1));
    return {ops::add(ops::mul(nll, 1 - eps), ops::mul(smooth, eps / classes))};
}

void registerCrossEntropy(OpRegistry &r)
{
    OpDef ce;
    ce.kind = OpKind::Composite;
    ce.shape = [](const Args &a) {
        labelSmoothing(a);
        return classLossShape("aten.cross_entropy", a);
    };
    ce.cpu = [](const Args &a, std::span<Tensor> outs) {
        ClassLoss l = makeClassLoss("aten.cross_entropy", a);
        l.smoothing = labelSmoothing(a);
        crossEntropyKernel(l, outs[0]);
    };
    ce.decompose = crossEntropyDecomposition;
    ce.cost = [](const Args &a, std::span<const Tensor> outs) { return classLossCost(a, outs, 12); };
    r.add("aten.cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', "
          "int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
          std::move(ce));
}

} // namespace

void registerLossOps(OpRegistry &r)
{
    registerMse(r);
    registerNll(r);
    registerCrossEntropy(r);
}

namespace ops {

Tensor crossEntropy(const Tensor &input, const Tensor &target, const std::optional<Tensor> &weight,
                    const std::string &reduction, int64_t ignoreIndex, double labelSmoothing)
{
    return callOp1("aten.cross_entropy", {input, target, Value(weight), reduction, ignoreIndex, labelSmoothing});
}

Tensor nllLoss(const Tensor &input, const Tensor &target, const std::optional<Tensor> &weight,
               const std::string &reduction, int64_t ignoreIndex)
{
    return callOp1("aten.nll_loss", {input, target, Value(weight), reduction, ignoreIndex});
}

Tensor mseLoss(const Tensor &input, const Tensor &target, const std::string &reduction)
{
    return callOp1("aten.mse_loss", {input, target, reduction});
}

} // namespace ops
} // namespace fusescope
