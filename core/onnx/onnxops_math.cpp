// The ONNX math table: elementwise ops, GEMMs, convolution, pooling,
// normalization, softmax and reductions, each expressed with the registry's
// ops (core/ops/functional.h) so eager runs and capture see ordinary op calls.
#include "core/compiler/tracer.h"
#include "core/onnx/onnxops.h"
#include "core/ops/functional.h"
#include "core/tensor/factory.h"

#include <cmath>
#include <numeric>

namespace fusescope::onnx {

namespace {

using Ctx = OnnxOpContext;
using In = OnnxInputs;

// --- helpers -------------------------------------------------------------------------

std::optional<Tensor> optionalInput(const In &in, size_t index)
{
    return hasInput(in, index) ? in[index] : std::nullopt;
}

// Whether the node asks for output `index` (an optional output may be "" or absent).
bool wants(const Ctx &c, size_t index)
{
    const std::vector<std::string> &outs = c.node().outputs;
    return index < outs.size() && !outs[index].empty();
}

// A cast only where the type differs, so the captured graph holds no no-op casts.
Tensor asType(const Tensor &x, DType dtype)
{
    return x.dtype() == dtype ? x : ops::cast(x, dtype);
}

IntList allDims(const Tensor &x)
{
    IntList dims(static_cast<size_t>(x.dim()));
    std::iota(dims.begin(), dims.end(), 0);
    return dims;
}

IntList dimsFrom(int64_t first, int64_t rank)
{
    IntList dims;
    for (int64_t d = first; d < rank; ++d)
        dims.push_back(d);
    return dims;
}

// --- elementwise -----------------------------------------------------------------------

template <Tensor (*F)(const Tensor &)> TensorList unary(const Ctx &c, const In &in)
{
    return {F(input(c, in, 0))};
}

template <Tensor (*F)(const Tensor &, const Tensor &)> TensorList binary(const Ctx &c, const In &in)
{
    return {F(input(c, in, 0), input(c, in, 1))};
}

// Min, Max, Sum: any number of inputs, broadcast together.
template <Tensor (*F)(const Tensor &, const Tensor &)> Tensor fold(const Ctx &c, const In &in)
{
    Tensor acc = input(c, in, 0);
    for (size_t i = 1; i < in.size(); ++i)
        acc = F(acc, input(c, in, i));
    return acc;
}

template <Tensor (*F)(const Tensor &, const Tensor &)> TensorList variadic(const Ctx &c, const In &in)
{
    return {fold<F>(c, in)};
}

Tensor plus(const Tensor &a, const Tensor &b)
{
    return ops::add(a, b);
}
Tensor minus(const Tensor &a, const Tensor &b)
{
    return ops::sub(a, b);
}
Tensor times(const Tensor &a, const Tensor &b)
{
    return ops::mul(a, b);
}

// ONNX's integer Div truncates toward zero (C semantics), not floor.
Tensor divide(const Tensor &a, const Tensor &b)
{
    return ops::div(a, b, isIntegral(a.dtype()) ? "trunc" : "");
}

// Pow's result takes the base's type (an integer exponent keeps a float base, and back).
Tensor power(const Tensor &a, const Tensor &b)
{
    return asType(ops::pow(a, b), a.dtype());
}

TensorList mean(const Ctx &c, const In &in)
{
    return {ops::div(fold<plus>(c, in), static_cast<double>(in.size()))};
}

TensorList mod(const Ctx &c, const In &in)
{
    const Tensor &a = input(c, in, 0), &b = input(c, in, 1);
    return {c.attrInt("fmod", 0) ? ops::fmod(a, b) : ops::remainder(a, b)};
}

// log(1 + exp(x)) without overflow for large x.
Tensor softplus(const Tensor &x)
{
    return ops::add(ops::relu(x), ops::log1p(ops::exp(ops::neg(ops::abs(x)))));
}

Tensor softsign(const Tensor &x)
{
    return ops::div(x, ops::add(ops::abs(x), 1.0));
}

TensorList leakyRelu(const Ctx &c, const In &in)
{
    return {ops::leakyRelu(input(c, in, 0), c.attrFloat("alpha", 0.01))};
}

TensorList prelu(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    return {ops::where(ops::lt(x, 0.0), ops::mul(x, input(c, in, 1)), x)};
}

// alpha * (exp(x) - 1) below zero, scaled by gamma (1 for Elu).
Tensor elu(const Tensor &x, double alpha, double gamma)
{
    const Tensor negative = ops::mul(ops::sub(ops::exp(x), 1.0), alpha * gamma);
    return ops::where(ops::gt(x, 0.0), ops::mul(x, gamma), negative);
}

TensorList eluOp(const Ctx &c, const In &in)
{
    return {elu(input(c, in, 0), c.attrFloat("alpha", 1.0), 1.0)};
}

TensorList selu(const Ctx &c, const In &in)
{
    return {elu(input(c, in, 0), c.attrFloat("alpha", 1.67326319217681884765625),
                c.attrFloat("gamma", 1.05070102214813232421875))};
}

TensorList thresholdedRelu(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    return {ops::where(ops::gt(x, c.attrFloat("alpha", 1.0)), x, 0.0)};
}

// ONNX's defaults (alpha 0.2) differ from PyTorch's hardsigmoid (1/6), so compose.
TensorList hardSigmoid(const Ctx &c, const In &in)
{
    const Tensor y = ops::add(ops::mul(input(c, in, 0), c.attrFloat("alpha", 0.2)), c.attrFloat("beta", 0.5));
    return {ops::clamp(y, 0.0, 1.0)};
}

TensorList gelu(const Ctx &c, const In &in)
{
    return {ops::gelu(input(c, in, 0), c.attrString("approximate", "none"))};
}

std::string checkGelu(const Ctx &c)
{
    const std::string a = c.attrString("approximate", "none");
    return a == "none" || a == "tanh" ? "" : "approximate '" + a + "' is not supported";
}

// Before opset 7, Add/Sub/Mul/Div broadcast only through these attributes.
std::string checkLegacyBroadcast(const Ctx &c)
{
    return c.attrInt("broadcast", 0) ? "the legacy 'broadcast' attribute (opset < 7) is not supported" : "";
}

// --- GEMM ------------------------------------------------------------------------------

TensorList gemm(const Ctx &c, const In &in)
{
    Tensor a = input(c, in, 0), b = input(c, in, 1);
    if (c.attrInt("transA", 0))
        a = ops::transpose(a, 0, 1);
    if (c.attrInt("transB", 0))
        b = ops::transpose(b, 0, 1);
    const double alpha = c.attrFloat("alpha", 1.0), beta = c.attrFloat("beta", 1.0);
    if (hasInput(in, 2))
        return {ops::addmm(input(c, in, 2), a, b, beta, alpha)};
    const Tensor y = ops::mm(a, b);
    return {alpha == 1.0 ? y : ops::mul(y, alpha)};
}

// --- convolution and pooling -----------------------------------------------------------

// The spatial geometry of a Conv or pooling node; 1-D windows run as 2-D
// ones over a height of 1, since the registry's kernels are 2-D.
struct Window {
    IntList kernel, strides, dilations, padBegin, padEnd;

    bool symmetric() const { return padBegin == padEnd; }
    // The registry's pools take at most half a kernel of padding per side.
    bool poolPaddable() const
    {
        for (size_t i = 0; i < kernel.size(); ++i)
            if (padBegin[i] > kernel[i] / 2)
                return false;
        return symmetric();
    }
};

std::string checkAutoPad(const Ctx &c)
{
    const std::string p = c.attrString("auto_pad", "NOTSET");
    if (p == "NOTSET" || p == "VALID" || p == "SAME_UPPER" || p == "SAME_LOWER")
        return "";
    return "auto_pad '" + p + "' is not supported";
}

// SAME_UPPER / SAME_LOWER: pad so that out = ceil(in / stride); the odd
// pixel goes to the end (UPPER) or the beginning (LOWER).
void autoPad(Window &w, const Shape &spatial, bool upper)
{
    for (size_t i = 0; i < w.kernel.size(); ++i) {
        const int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
        const int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
        const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - spatial[i]);
        w.padBegin[i] = upper ? total / 2 : total - total / 2;
        w.padEnd[i] = total - w.padBegin[i];
    }
}

Window windowOf(const Ctx &c, const Tensor &x, const IntList &kernel)
{
    const size_t n = kernel.size();
    if (n < 1 || n > 2 || x.dim() != static_cast<int64_t>(n) + 2)
        c.fail("only 1-D and 2-D windows over [N,C,...] inputs are supported, got kernel " + shapeStr(kernel)
               + " on input " + shapeStr(x.sizes()));
    Window w {kernel, c.attrInts("strides", IntList(n, 1)), c.attrInts("dilations", IntList(n, 1)), {}, {}};
    const IntList pads = c.attrInts("pads", IntList(2 * n, 0));
    if (w.strides.size() != n || w.dilations.size() != n || pads.size() != 2 * n)
        c.fail("strides " + shapeStr(w.strides) + ", dilations " + shapeStr(w.dilations) + " or pads " + shapeStr(pads)
               + " do not match the " + std::to_string(n) + "-D kernel");
    w.padBegin.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(n));
    w.padEnd.assign(pads.begin() + static_cast<ptrdiff_t>(n), pads.end());
    const std::string mode = c.attrString("auto_pad", "NOTSET");
    if (mode == "VALID")
        w.padBegin = w.padEnd = IntList(n, 0);
    else if (mode == "SAME_UPPER" || mode == "SAME_LOWER")
        autoPad(w, Shape(x.sizes().begin() + 2, x.sizes().end()), mode == "SAME_UPPER");
    return w;
}

Window lift(Window w)
{
    if (w.kernel.size() == 1) {
        for (IntList *l : {&w.kernel, &w.strides, &w.dilations})
            l->insert(l->begin(), 1);
        for (IntList *l : {&w.padBegin, &w.padEnd})
            l->insert(l->begin(), 0);
    }
    return w;
}

Tensor liftInput(const Tensor &x)
{
    return x.dim() == 3 ? ops::unsqueeze(x, 2) : x;
}
Tensor lowerOutput(const Tensor &y, const Tensor &x)
{
    return x.dim() == 3 ? ops::squeeze(y, 2) : y;
}

// Pads a 2-D window's input explicitly (asymmetric or wide padding).
Tensor padInput(const Tensor &x, const Window &w, double value)
{
    return ops::pad(x, {w.padBegin[1], w.padEnd[1], w.padBegin[0], w.padEnd[0]}, "constant", value);
}

IntList kernelOfWeight(const Tensor &weight)
{
    return IntList(weight.sizes().begin() + std::min<int64_t>(2, weight.dim()), weight.sizes().end());
}

TensorList conv(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0), &weight = input(c, in, 1);
    const Window w = lift(windowOf(c, x, kernelOfWeight(weight)));
    Tensor xin = liftInput(x);
    IntList padding = w.padBegin;
    if (!w.symmetric()) {
        xin = padInput(xin, w, 0.0);
        padding = {0, 0};
    }
    const Tensor y = ops::conv2d(xin, liftInput(weight), optionalInput(in, 2), w.strides, padding, w.dilations,
                                 c.attrInt("group", 1));
    return {lowerOutput(y, x)};
}

std::string checkConv(const Ctx &c)
{
    if (c.attrInts("kernel_shape").size() > 2)
        return "only 1-D and 2-D convolutions are supported";
    return checkAutoPad(c);
}

TensorList maxPool(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    const Window w = lift(windowOf(c, x, c.attrInts("kernel_shape")));
    const bool ceil = c.attrInt("ceil_mode", 0) != 0;
    if (w.poolPaddable())
        return {lowerOutput(ops::maxPool2d(liftInput(x), w.kernel, w.strides, w.padBegin, w.dilations, ceil), x)};
    const Tensor padded = padInput(liftInput(x), w, -INFINITY);
    return {lowerOutput(ops::maxPool2d(padded, w.kernel, w.strides, {0, 0}, w.dilations, ceil), x)};
}

std::string checkPoolKernel(const Ctx &c)
{
    const size_t rank = c.attrInts("kernel_shape").size();
    if (rank < 1 || rank > 2)
        return "only 1-D and 2-D pooling is supported (kernel_shape " + shapeStr(c.attrInts("kernel_shape")) + ")";
    return checkAutoPad(c);
}

std::string checkMaxPool(const Ctx &c)
{
    if (wants(c, 1))
        return "the Indices output is not supported";
    return checkPoolKernel(c);
}

// With explicit padding, the zero-padded window sum divided by the number
// of real elements in each window gives count_include_pad=0; that count is
// the same pooling over ones, computed untraced so a capture holds it as a constant.
Tensor validCounts(const Tensor &x, const Window &w, bool ceil)
{
    compiler::TracerScope untraced(nullptr);
    const Tensor ones = fusescope::ones({1, 1, x.size(2), x.size(3)}, x.dtype());
    return ops::avgPool2d(padInput(ones, w, 0.0), w.kernel, w.strides, {0, 0}, ceil, true);
}

TensorList averagePool(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0), xin = liftInput(x);
    const Window w = lift(windowOf(c, x, c.attrInts("kernel_shape")));
    const bool ceil = c.attrInt("ceil_mode", 0) != 0, includePad = c.attrInt("count_include_pad", 0) != 0;
    if (w.poolPaddable())
        return {lowerOutput(ops::avgPool2d(xin, w.kernel, w.strides, w.padBegin, ceil, includePad), x)};
    const Tensor y = ops::avgPool2d(padInput(xin, w, 0.0), w.kernel, w.strides, {0, 0}, ceil, true);
    return {lowerOutput(includePad ? y : ops::div(y, validCounts(xin, w, ceil)), x)};
}

std::string checkAveragePool(const Ctx &c)
{
    for (int64_t d : c.attrInts("dilations"))
        if (d != 1)
            return "dilations other than 1 are not supported";
    return checkPoolKernel(c);
}

TensorList globalAveragePool(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    return {ops::mean(x, dimsFrom(2, x.dim()), true)};
}

TensorList globalMaxPool(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    return {ops::amax(x, dimsFrom(2, x.dim()), true)};
}

// --- normalization ---------------------------------------------------------------------

TensorList batchNorm(const Ctx &c, const In &in)
{
    return {ops::batchNorm(input(c, in, 0), input(c, in, 3), input(c, in, 4), input(c, in, 1), input(c, in, 2),
                           c.attrFloat("epsilon", 1e-5))};
}

std::string checkBatchNorm(const Ctx &c)
{
    if (c.attrInt("training_mode", 0) || wants(c, 1))
        return "training mode (running statistics as outputs) is not supported";
    return c.attrInt("spatial", 1) ? "" : "spatial=0 (opset < 9) is not supported";
}

TensorList instanceNorm(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    return {ops::groupNorm(x, x.size(1), input(c, in, 1), input(c, in, 2), c.attrFloat("epsilon", 1e-5))};
}

// x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta,
// the window [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the
// channels: a sum pooling of the zero-padded squares along C.
TensorList lrn(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    const int64_t size = c.attrInt("size", 1), channels = x.size(1);
    const int64_t rest = x.numel() == 0 ? 0 : x.numel() / (x.size(0) * channels);
    const Tensor squares = ops::reshape(ops::mul(x, x), {x.size(0), 1, channels, rest});
    const Tensor padded = ops::pad(squares, {0, 0, (size - 1) / 2, size / 2});
    const Tensor mean = ops::avgPool2d(padded, {size, 1}, {1, 1}, {0, 0}, false, true);
    const double alpha = c.attrFloat("alpha", 1e-4), bias = c.attrFloat("bias", 1.0);
    const Tensor base = ops::add(ops::mul(ops::reshape(mean, x.sizes()), alpha), bias);
    return {ops::div(x, ops::pow(base, c.attrFloat("beta", 0.75)))};
}

// stash_type 1: statistics in f32 even for f16/bf16 inputs.
Tensor stashed(const Tensor &x)
{
    return x.dtype() == DType::F16 || x.dtype() == DType::BF16 ? asType(x, DType::F32) : x;
}

// Y, and Mean / InvStdDev only when the node names them.
TensorList layerNorm(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0), xs = stashed(x);
    const int64_t axis = wrapDim(c.attrInt("axis", -1), x.dim(), "LayerNormalization");
    const double eps = c.attrFloat("epsilon", 1e-5);
    const Shape normalized(x.sizes().begin() + axis, x.sizes().end());
    Tensor y = ops::layerNorm(xs, normalized, std::nullopt, std::nullopt, eps);
    y = ops::mul(y, asType(input(c, in, 1), xs.dtype()));
    if (hasInput(in, 2))
        y = ops::add(y, asType(input(c, in, 2), xs.dtype()));
    TensorList out {asType(y, x.dtype()), Tensor(), Tensor()};
    const IntList dims = dimsFrom(axis, x.dim());
    if (wants(c, 1))
        out[1] = ops::mean(xs, dims, true);
    if (wants(c, 2))
        out[2] = ops::rsqrt(ops::add(ops::var(xs, dims, 0, true), eps));
    return out;
}

std::string checkLayerNorm(const Ctx &c)
{
    return c.attrInt("stash_type", 1) == 1 ? "" : "stash_type other than 1 (float) is not supported";
}

// Opset 13 normalizes along one axis (default -1); before, the input is seen
// as 2-D [prod(dims < axis), prod(dims >= axis)] (axis default 1).
template <Tensor (*F)(const Tensor &, int64_t)> TensorList softmaxLike(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    if (c.opset() >= 13)
        return {F(x, c.attrInt("axis", -1))};
    const int64_t axis = wrapDim(c.attrInt("axis", 1), x.dim(), c.node().opType.c_str());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d)
        outer *= x.size(d);
    const int64_t inner = outer == 0 ? 0 : x.numel() / outer;
    return {ops::reshape(F(ops::reshape(x, {outer, inner}), 1), x.sizes())};
}

// exclusive: the sum before each element (the inclusive sum minus it);
// reverse: from the end, as the sum of the flipped tensor flipped back.
TensorList cumSum(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    const std::vector<int64_t> axis = constantInts(c, in, 1);
    if (axis.size() != 1)
        c.fail("axis must hold one value, got " + shapeStr(axis));
    const bool reverse = c.attrInt("reverse", 0) != 0;
    const Tensor xs = reverse ? ops::flip(x, {axis[0]}) : x;
    Tensor y = ops::cumsum(xs, axis[0], x.dtype());
    if (c.attrInt("exclusive", 0))
        y = ops::sub(y, xs);
    return {reverse ? ops::flip(y, {axis[0]}) : y};
}

// --- reductions --------------------------------------------------------------------------

using Reducer = Tensor (*)(const Tensor &, const IntList &, bool);

// ONNX keeps the input's type; the registry's sum widens integers to i64.
Tensor sumOf(const Tensor &x, const IntList &dims, bool keep)
{
    return ops::sum(x, dims, keep, x.dtype());
}
Tensor l1Of(const Tensor &x, const IntList &dims, bool keep)
{
    return sumOf(ops::abs(x), dims, keep);
}
Tensor sumSquareOf(const Tensor &x, const IntList &dims, bool keep)
{
    return sumOf(ops::mul(x, x), dims, keep);
}
Tensor l2Of(const Tensor &x, const IntList &dims, bool keep)
{
    return ops::sqrt(sumSquareOf(x, dims, keep));
}
Tensor logSumOf(const Tensor &x, const IntList &dims, bool keep)
{
    return ops::log(sumOf(x, dims, keep));
}

// Axes are an attribute before `axesInputFrom` and an optional input after;
// none means all, unless noop_with_empty_axes makes the node an identity.
template <Reducer R, int64_t axesInputFrom> TensorList reduce(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    IntList axes = c.attrInts("axes");
    if (c.opset() >= axesInputFrom)
        axes = hasInput(in, 1) ? constantInts(c, in, 1) : IntList {};
    if (axes.empty() && c.attrInt("noop_with_empty_axes", 0))
        return {x};
    return {R(x, axes.empty() ? allDims(x) : axes, c.attrInt("keepdims", 1) != 0)};
}

// select_last_index: the last of equal values is the first one of the flipped tensor.
template <Tensor (*A)(const Tensor &, std::optional<int64_t>, bool)> TensorList argReduce(const Ctx &c, const In &in)
{
    const Tensor &x = input(c, in, 0);
    const int64_t axis = wrapDim(c.attrInt("axis", 0), x.dim(), c.node().opType.c_str());
    const bool keep = c.attrInt("keepdims", 1) != 0;
    if (!c.attrInt("select_last_index", 0))
        return {A(x, axis, keep)};
    return {ops::sub(x.size(axis) - 1, A(ops::flip(x, {axis}), axis, keep))};
}

// One entry per op. minOpset marks where the implemented semantics begin
// (BatchNormalization's is_test and Gemm's broadcast end at 7); the ops'
// later changes (Softmax's axis at 13, axes as inputs) branch inside, and
// the legacy broadcast attribute of Add & co. is refused by their check.
const OnnxOpDef kMathOps[] = {
    {"Add", binary<plus>, checkLegacyBroadcast},
    {"Sub", binary<minus>, checkLegacyBroadcast},
    {"Mul", binary<times>, checkLegacyBroadcast},
    {"Div", binary<divide>, checkLegacyBroadcast},
    {"Pow", binary<power>, checkLegacyBroadcast},
    {"Mod", mod, nullptr, 10},
    {"Neg", unary<ops::neg>},
    {"Abs", unary<ops::abs>},
    {"Exp", unary<ops::exp>},
    {"Log", unary<ops::log>},
    {"Sqrt", unary<ops::sqrt>},
    {"Reciprocal", unary<ops::reciprocal>},
    {"Sin", unary<ops::sin>, nullptr, 7},
    {"Cos", unary<ops::cos>, nullptr, 7},
    {"Floor", unary<ops::floor>},
    {"Ceil", unary<ops::ceil>},
    {"Round", unary<ops::round>, nullptr, 11},
    {"Sign", unary<ops::sign>, nullptr, 9},
    {"Erf", unary<ops::erf>, nullptr, 9},
    {"Relu", unary<ops::relu>},
    {"Sigmoid", unary<ops::sigmoid>},
    {"Tanh", unary<ops::tanh>},
    {"Softplus", unary<softplus>},
    {"Softsign", unary<softsign>},
    {"HardSwish", unary<ops::hardswish>, nullptr, 14},
    {"Mish", unary<ops::mish>, nullptr, 18},
    {"LeakyRelu", leakyRelu},
    {"PRelu", prelu, nullptr, 7},
    {"Elu", eluOp},
    {"Selu", selu},
    {"ThresholdedRelu", thresholdedRelu, nullptr, 10},
    {"HardSigmoid", hardSigmoid},
    {"Gelu", gelu, checkGelu, 20},
    {"Min", variadic<ops::minimum>},
    {"Max", variadic<ops::maximum>},
    {"Sum", variadic<plus>},
    {"Mean", mean},
    {"MatMul", binary<ops::matmul>},
    {"Gemm", gemm, nullptr, 7},
    {"Conv", conv, checkConv},
    {"MaxPool", maxPool, checkMaxPool},
    {"AveragePool", averagePool, checkAveragePool},
    {"GlobalAveragePool", globalAveragePool},
    {"GlobalMaxPool", globalMaxPool},
    {"BatchNormalization", batchNorm, checkBatchNorm, 7},
    {"InstanceNormalization", instanceNorm, nullptr, 6},
    {"LRN", lrn},
    {"LayerNormalization", layerNorm, checkLayerNorm, 17},
    {"Softmax", softmaxLike<ops::softmax>},
    {"LogSoftmax", softmaxLike<ops::logSoftmax>},
    {"ReduceSum", reduce<sumOf, 13>},
    {"ReduceMean", reduce<ops::mean, 18>},
    {"ReduceMax", reduce<ops::amax, 18>},
    {"ReduceMin", reduce<ops::amin, 18>},
    {"ReduceProd", reduce<ops::prod, 18>},
    {"ReduceL1", reduce<l1Of, 18>},
    {"ReduceL2", reduce<l2Of, 18>},
    {"ReduceSumSquare", reduce<sumSquareOf, 18>},
    {"ReduceLogSum", reduce<logSumOf, 18>},
    {"ReduceLogSumExp", reduce<ops::logsumexp, 18>},
    {"CumSum", cumSum, nullptr, 11},
    {"ArgMax", argReduce<ops::argmax>},
    {"ArgMin", argReduce<ops::argmin>},
};

} // namespace

std::span<const OnnxOpDef> mathOps()
{
    return kMathOps;
}

} // namespace fusescope::onnx
