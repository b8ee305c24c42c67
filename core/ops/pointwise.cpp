// Pointwise ops. Each functor calls the scalar function of scalarmath.h that
// generated code calls too; the loops engine broadcasts and vectorizes.
#include "core/ops/pointwise.h"

#include "core/ops/builtin.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/ops/rowmath.h"
#include "core/ops/scalarmath.h"

#include <cmath>
#include <limits>

namespace fusescope {
namespace {

using loops::pointwise;

using loops::asDType;

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

// --- unary -------------------------------------------------------------------

enum class Rule {
    Float,   // integers and bool compute in f32
    Numeric, // keeps the dtype; bool is refused
    ToBool,  // predicate: bool result
};

DType unaryOutDType(const std::string &op, Rule rule, DType in)
{
    switch (rule) {
    case Rule::Float: return toFloating(in);
    case Rule::ToBool: return DType::Bool;
    case Rule::Numeric:
        if (in == DType::Bool)
            throw Error(op + ": not supported for bool tensors");
        return in;
    }
    return in;
}

template <Rule rule, typename F>
void runUnary(const Tensor &x, const Tensor &out, F f)
{
    if constexpr (rule == Rule::ToBool) {
        visitDType(x.dtype(), [&](auto tag) {
            using T = decltype(tag);
            pointwise<bool, T, 1>(out, {x}, f);
        });
    } else {
        const Tensor in = asDType(x, out.dtype());
        auto body = [&](auto tag) {
            using T = decltype(tag);
            pointwise<T, T, 1>(out, {in}, f);
        };
        if constexpr (rule == Rule::Float)
            visitFloating(out.dtype(), body);
        else
            visitNumeric(out.dtype(), body);
    }
}

struct UnaryInfo {
    const char *schema;
    const char *scalarFn;
    double flops;
};

template <Rule rule, typename F>
void addUnary(OpRegistry &r, const UnaryInfo &info, F f)
{
    OpDef def;
    def.kind = OpKind::Pointwise;
    def.scalarFn = info.scalarFn;
    def.flopsPerElement = info.flops;
    const std::string name = Schema::parse(info.schema).name;
    def.shape = [name](const Args &a) {
        return std::vector<TensorSpec>{{arg(a, 0).sizes(), unaryOutDType(name, rule, arg(a, 0).dtype())}};
    };
    def.cpu = [f](const Args &a, std::span<Tensor> outs) { runUnary<rule>(arg(a, 0), outs[0], f); };
    r.add(info.schema, std::move(def));
}

// Rounding on integers is the identity.
template <typename T, typename F>
T roundLike(T x, F f)
{
    if constexpr (std::is_integral_v<T>)
        return x;
    else
        return f(x);
}

void registerUnary(OpRegistry &r)
{
    addUnary<Rule::Numeric>(r, {"aten.neg(Tensor self) -> Tensor", "neg", 1}, [](auto x) { return -x; });
    addUnary<Rule::Numeric>(r, {"aten.abs(Tensor self) -> Tensor", "abs", 1}, [](auto x) { return sm::abs(x); });
    addUnary<Rule::Float>(r, {"aten.exp(Tensor self) -> Tensor", "exp", 8}, [](auto x) { return sm::exp(x); });
    addUnary<Rule::Float>(r, {"aten.exp2(Tensor self) -> Tensor", "exp2", 8}, [](auto x) { return sm::exp2(x); });
    addUnary<Rule::Float>(r, {"aten.log(Tensor self) -> Tensor", "log", 8}, [](auto x) { return sm::log(x); });
    addUnary<Rule::Float>(r, {"aten.log1p(Tensor self) -> Tensor", "log1p", 8}, [](auto x) { return sm::log1p(x); });
    addUnary<Rule::Float>(r, {"aten.sqrt(Tensor self) -> Tensor", "sqrt", 1}, [](auto x) { return std::sqrt(x); });
    addUnary<Rule::Float>(r, {"aten.rsqrt(Tensor self) -> Tensor", "rsqrt", 2}, [](auto x) { return sm::rsqrt(x); });
    addUnary<Rule::Float>(r, {"aten.reciprocal(Tensor self) -> Tensor", "reciprocal", 1},
             [](auto x) { return sm::reciprocal(x); });
    addUnary<Rule::Float>(r, {"aten.sin(Tensor self) -> Tensor", "sin", 8}, [](auto x) { return sm::sin(x); });
    addUnary<Rule::Float>(r, {"aten.cos(Tensor self) -> Tensor", "cos", 8}, [](auto x) { return sm::cos(x); });
    addUnary<Rule::Float>(r, {"aten.tanh(Tensor self) -> Tensor", "tanh", 10}, [](auto x) { return sm::tanh(x); });
    addUnary<Rule::Float>(r, {"aten.sigmoid(Tensor self) -> Tensor", "sigmoid", 10},
             [](auto x) { return sm::sigmoid(x); });
    addUnary<Rule::Numeric>(r, {"aten.relu(Tensor self) -> Tensor", "relu", 1}, [](auto x) { return sm::relu(x); });
    addUnary<Rule::Numeric>(r, {"aten.relu6(Tensor self) -> Tensor", "relu6", 2}, [](auto x) { return sm::relu6(x); });
    addUnary<Rule::Float>(r, {"aten.hardsigmoid(Tensor self) -> Tensor", "hardsigmoid", 4},
             [](auto x) { return sm::hardsigmoid(x); });
    addUnary<Rule::Float>(r, {"aten.hardswish(Tensor self) -> Tensor", "hardswish", 5},
             [](auto x) { return sm::hardswish(x); });
    addUnary<Rule::Float>(r, {"aten.silu(Tensor self) -> Tensor", "silu", 11}, [](auto x) { return sm::silu(x); });
    addUnary<Rule::Float>(r, {"aten.mish(Tensor self) -> Tensor", "mish", 20}, [](auto x) { return sm::mish(x); });
    addUnary<Rule::Float>(r, {"aten.erf(Tensor self) -> Tensor", "erf", 12}, [](auto x) { return sm::erf(x); });
    // Phi(x), which exact GELU is x times: the compiler's decompose stage
    // spells gelu with it (scalarmath.h says why not with erf).
    addUnary<Rule::Float>(r, {"fusescope.normal_cdf(Tensor self) -> Tensor", "normal_cdf", 12},
             [](auto x) { return sm::normal_cdf(x); });
    addUnary<Rule::Numeric>(r, {"aten.sign(Tensor self) -> Tensor", "sign", 2}, [](auto x) { return sm::sign(x); });
    addUnary<Rule::Numeric>(r, {"aten.floor(Tensor self) -> Tensor", "floor", 1},
             [](auto x) { return roundLike(x, [](auto v) { return std::floor(v); }); });
    addUnary<Rule::Numeric>(r, {"aten.ceil(Tensor self) -> Tensor", "ceil", 1},
             [](auto x) { return roundLike(x, [](auto v) { return std::ceil(v); }); });
    // Round half to even, as PyTorch does.
    addUnary<Rule::Numeric>(r, {"aten.round(Tensor self) -> Tensor", "round", 1},
             [](auto x) { return roundLike(x, [](auto v) { return std::nearbyint(v); }); });
    addUnary<Rule::Numeric>(r, {"aten.trunc(Tensor self) -> Tensor", "trunc", 1},
             [](auto x) { return roundLike(x, [](auto v) { return std::trunc(v); }); });
    addUnary<Rule::ToBool>(r, {"aten.isnan(Tensor self) -> Tensor", "isnan", 1}, [](auto x) { return x != x; });
    addUnary<Rule::ToBool>(r, {"aten.logical_not(Tensor self) -> Tensor", "logical_not", 1},
             [](auto x) { return x == decltype(x)(0); });
}

// Unary ops with parameters, and bitwise_not (integers and bool only).
void registerUnaryWithArgs(OpRegistry &r)
{
    OpDef leaky;
    leaky.kind = OpKind::Pointwise;
    leaky.scalarFn = "leaky_relu";
    leaky.scalarCall = [](const Args &a) { return ScalarCall{"leaky_relu", {a[1].toDouble()}}; };
    leaky.shape = [](const Args &a) {
        return std::vector<TensorSpec>{{arg(a, 0).sizes(), toFloating(arg(a, 0).dtype())}};
    };
    leaky.cpu = [](const Args &a, std::span<Tensor> outs) {
        const double slope = a[1].toDouble();
        runUnary<Rule::Float>(arg(a, 0), outs[0], [slope](auto x) { return sm::leaky_relu(x, decltype(x)(slope)); });
    };
    r.add("aten.leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", std::move(leaky));

    OpDef gelu;
    gelu.kind = OpKind::Pointwise;
    gelu.scalarFn = "gelu";
    gelu.scalarCall = [](const Args &a) { return ScalarCall{a[1].toStringRef() == "tanh" ? "gelu_tanh" : "gelu", {}}; };
    gelu.flopsPerElement = 14;
    gelu.shape = [](const Args &a) {
        const std::string &mode = a[1].toStringRef();
        if (mode != "none" && mode != "tanh")
            throw Error("aten.gelu: approximate must be 'none' or 'tanh', got '" + mode + "'");
        return std::vector<TensorSpec>{{arg(a, 0).sizes(), toFloating(arg(a, 0).dtype())}};
    };
    gelu.cpu = [](const Args &a, std::span<Tensor> outs) {
        if (a[1].toStringRef() == "tanh")
            runUnary<Rule::Float>(arg(a, 0), outs[0], [](auto x) { return sm::gelu_tanh(x); });
        else
            runUnary<Rule::Float>(arg(a, 0), outs[0], [](auto x) { return sm::gelu(x); });
    };
    // The compiler's decompose stage spells gelu in primitives; the maths is
    // sm::gelu / sm::gelu_tanh's, so compiled and eager agree. 16-bit inputs
    // are computed in f32 and rounded once, as the kernel does (rounded at
    // every step, bf16 results were an ulp off).
    gelu.decompose = [](const Args &a) {
        const Tensor &in = arg(a, 0);
        const Tensor x = rowmath::upcast(in);
        Tensor y;
        if (a[1].toStringRef() == "tanh") {
            const Tensor cube = ops::mul(ops::mul(ops::mul(x, 0.044715), x), x);
            y = ops::mul(x, ops::sigmoid(ops::mul(ops::add(x, cube), 1.59576912160573071176)));
        } else {
            y = ops::mul(x, ops::normalCdf(x));
        }
        return TensorList{x.dtype() == in.dtype() ? y : rowmath::castBack(y, in.dtype())};
    };
    r.add("aten.gelu(Tensor self, *, str approximate='none') -> Tensor", std::move(gelu));

    OpDef bnot;
    bnot.kind = OpKind::Pointwise;
    bnot.scalarFn = "bitwise_not";
    bnot.shape = [](const Args &a) {
        const DType t = arg(a, 0).dtype();
        if (isFloating(t))
            throw Error(std::string("aten.bitwise_not: not supported for ") + dtypeName(t) + " tensors");
        return std::vector<TensorSpec>{{arg(a, 0).sizes(), t}};
    };
    bnot.cpu = [](const Args &a, std::span<Tensor> outs) {
        const Tensor &x = arg(a, 0);
        if (x.dtype() == DType::Bool)
            pointwise<bool, bool, 1>(outs[0], {x}, [](bool v) { return !v; });
        else if (x.dtype() == DType::I32)
            pointwise<int32_t, int32_t, 1>(outs[0], {x}, [](int32_t v) { return ~v; });
        else
            pointwise<int64_t, int64_t, 1>(outs[0], {x}, [](int64_t v) { return ~v; });
    };
    r.add("aten.bitwise_not(Tensor self) -> Tensor", std::move(bnot));
}

// --- binary ------------------------------------------------------------------

enum class BinRule {
    Promote,   // promoted dtype
    TrueDiv,   // promoted, then floating
    Compare,   // computes promoted, returns bool
    Logical,   // bool result from truthiness
};

int category(DType t)
{
    return t == DType::Bool ? 0 : isIntegral(t) ? 1 : 2;
}

DType computeDType(BinRule rule, DType promoted)
{
    return rule == BinRule::TrueDiv ? toFloating(promoted) : promoted;
}

// NoBool: the op refuses bool (its shape rule says so), so its functor is
// never instantiated for bool.
template <BinRule rule, bool NoBool = false, typename F>
void runBinary(const Tensor &a, const Tensor &b, const Tensor &out, F f)
{
    const DType compute = computeDType(rule, ops::resultType(a, b));
    const Tensor ac = asDType(a, compute), bc = asDType(b, compute);
    auto body = [&](auto tag) {
        using T = decltype(tag);
        if constexpr (rule == BinRule::Compare || rule == BinRule::Logical)
            pointwise<bool, T, 2>(out, {ac, bc}, f);
        else
            pointwise<T, T, 2>(out, {ac, bc}, f);
    };
    if constexpr (NoBool)
        visitNumeric(compute, body);
    else
        visitDType(compute, body);
}

struct BinaryInfo {
    const char *schema;
    const char *scalarFn;
};

std::vector<TensorSpec> binaryShape(const std::string &name, BinRule rule, bool noBool, const Args &a)
{
    const Tensor &x = arg(a, 0), &y = arg(a, 1);
    const Shape shape = loops::broadcastShapes(name, x.sizes(), y.sizes());
    const DType promoted = ops::resultType(x, y);
    if (noBool && promoted == DType::Bool)
        throw Error(name + ": not supported for bool tensors");
    const bool toBool = rule == BinRule::Compare || rule == BinRule::Logical;
    return {{shape, toBool ? DType::Bool : computeDType(rule, promoted)}};
}

// noBool: arithmetic that PyTorch refuses on bool.
template <BinRule rule, bool noBool = false, typename F>
void addBinary(OpRegistry &r, const BinaryInfo &info, F f)
{
    OpDef def;
    def.kind = OpKind::Pointwise;
    def.scalarFn = info.scalarFn;
    const std::string name = Schema::parse(info.schema).name;
    def.shape = [=](const Args &a) { return binaryShape(name, rule, noBool, a); };
    def.cpu = [f](const Args &a, std::span<Tensor> outs) { runBinary<rule, noBool>(arg(a, 0), arg(a, 1), outs[0], f); };
    r.add(info.schema, std::move(def));
}

template <typename T>
constexpr bool isBoolType = std::is_same_v<T, bool>;

// pow(x, 2) of floats, the exponent one value that does not broadcast x, as
// x * x: the square correctly rounded (glibc's pow, within 0.52 ulp, is one ulp
// off it for about 1 random input in 1,400), in vector code, where libm's pow
// is a call per element (an RMSNorm's mean of x ** 2).
bool squaresUnbroadcast(const Tensor &x, const Tensor &exponent, const Tensor &out)
{
    return isFloating(x.dtype()) && out.dtype() == x.dtype() && out.sizes() == x.sizes() && exponent.numel() == 1
        && exponent.toDoubleVector()[0] == 2;
}

// a op b with bool operands treated as 0/1 where arithmetic is allowed.
void registerArithmetic(OpRegistry &r)
{
    OpDef add;
    add.kind = OpKind::Pointwise;
    add.scalarFn = "add";
    add.scalarCall = [](const Args &a) { return ScalarCall{"add", {a[2].toDouble()}}; };
    add.shape = [](const Args &a) { return binaryShape("aten.add", BinRule::Promote, false, a); };
    add.cpu = [](const Args &a, std::span<Tensor> outs) {
        const double alpha = a[2].toDouble();
        runBinary<BinRule::Promote>(arg(a, 0), arg(a, 1), outs[0], [alpha](auto x, auto y) {
            return sm::add(x, y, static_cast<decltype(x)>(alpha));
        });
    };
    r.add("aten.add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", std::move(add));

    OpDef sub;
    sub.kind = OpKind::Pointwise;
    sub.scalarFn = "sub";
    sub.scalarCall = [](const Args &a) { return ScalarCall{"sub", {a[2].toDouble()}}; };
    sub.shape = [](const Args &a) { return binaryShape("aten.sub", BinRule::Promote, true, a); };
    sub.cpu = [](const Args &a, std::span<Tensor> outs) {
        const double alpha = a[2].toDouble();
        runBinary<BinRule::Promote, true>(arg(a, 0), arg(a, 1), outs[0], [alpha](auto x, auto y) {
            return sm::sub(x, y, static_cast<decltype(x)>(alpha));
        });
    };
    r.add("aten.sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", std::move(sub));

    addBinary<BinRule::Promote>(r, {"aten.mul(Tensor self, Tensor other) -> Tensor", "mul"}, [](auto x, auto y) {
        if constexpr (isBoolType<decltype(x)>)
            return x && y;
        else
            return x * y;
    });
    OpDef pow;
    pow.kind = OpKind::Pointwise;
    pow.scalarFn = "pow";
    pow.shape = [](const Args &a) { return binaryShape("aten.pow", BinRule::Promote, true, a); };
    pow.cpu = [](const Args &a, std::span<Tensor> outs) {
        if (squaresUnbroadcast(arg(a, 0), arg(a, 1), outs[0])) {
            runUnary<Rule::Float>(arg(a, 0), outs[0], [](auto x) { return x * x; });
            return;
        }
        runBinary<BinRule::Promote, true>(arg(a, 0), arg(a, 1), outs[0],
                                          [](auto x, auto y) { return sm::pow(x, y); });
    };
    r.add("aten.pow(Tensor self, Tensor exponent) -> Tensor", std::move(pow));
    addBinary<BinRule::Promote>(r, {"aten.maximum(Tensor self, Tensor other) -> Tensor", "maximum"},
              [](auto x, auto y) { return sm::maximum(x, y); });
    addBinary<BinRule::Promote>(r, {"aten.minimum(Tensor self, Tensor other) -> Tensor", "minimum"},
              [](auto x, auto y) { return sm::minimum(x, y); });
}

// Integer division by zero is undefined behaviour in C++: check first.
void checkIntDivisor(const std::string &op, const Tensor &b, DType compute)
{
    if (isFloating(compute) || b.isMeta())
        return;
    for (double v : asDType(b, DType::F64).toDoubleVector()) {
        if (v == 0)
            throw Error(op + ": integer division by zero");
    }
}

void registerDivision(OpRegistry &r)
{
    OpDef div;
    div.kind = OpKind::Pointwise;
    div.scalarFn = "div";
    div.checksIntDivisor = true;
    div.scalarCall = [](const Args &a) {
        const std::string mode = a[2].isNone() ? std::string() : a[2].toStringRef();
        return ScalarCall{mode.empty() ? "div" : mode == "floor" ? "floor_divide" : "div_trunc", {}};
    };
    div.shape = [](const Args &a) {
        const std::string &mode = a[2].isNone() ? std::string() : a[2].toStringRef();
        if (!mode.empty() && mode != "floor" && mode != "trunc")
            throw Error("aten.div: rounding_mode must be None, 'floor' or 'trunc', got '" + mode + "'");
        return binaryShape("aten.div", mode.empty() ? BinRule::TrueDiv : BinRule::Promote, true, a);
    };
    div.cpu = [](const Args &a, std::span<Tensor> outs) {
        const std::string mode = a[2].isNone() ? std::string() : a[2].toStringRef();
        const BinRule rule = mode.empty() ? BinRule::TrueDiv : BinRule::Promote;
        checkIntDivisor("aten.div", arg(a, 1), computeDType(rule, ops::resultType(arg(a, 0), arg(a, 1))));
        if (mode.empty())
            runBinary<BinRule::TrueDiv, true>(arg(a, 0), arg(a, 1), outs[0], [](auto x, auto y) { return x / y; });
        else if (mode == "floor")
            runBinary<BinRule::Promote, true>(arg(a, 0), arg(a, 1), outs[0],
                                              [](auto x, auto y) { return sm::floor_divide(x, y); });
        else
            runBinary<BinRule::Promote, true>(arg(a, 0), arg(a, 1), outs[0],
                                              [](auto x, auto y) { return sm::div_trunc(x, y); });
    };
    r.add("aten.div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor", std::move(div));

    for (auto [schema, fn, isFmod] :
         {std::tuple{"aten.fmod(Tensor self, Tensor other) -> Tensor", "fmod", true},
          std::tuple{"aten.remainder(Tensor self, Tensor other) -> Tensor", "remainder", false}}) {
        OpDef def;
        def.kind = OpKind::Pointwise;
        def.scalarFn = fn;
        def.checksIntDivisor = true;
        const std::string name = Schema::parse(schema).name;
        def.shape = [name](const Args &a) { return binaryShape(name, BinRule::Promote, true, a); };
        // A plain copy: clang 14 cannot capture a structured binding.
        const bool fmodSemantics = isFmod;
        def.cpu = [name, fmodSemantics](const Args &a, std::span<Tensor> outs) {
            checkIntDivisor(name, arg(a, 1), ops::resultType(arg(a, 0), arg(a, 1)));
            if (fmodSemantics)
                runBinary<BinRule::Promote, true>(arg(a, 0), arg(a, 1), outs[0],
                                                  [](auto x, auto y) { return sm::fmod(x, y); });
            else
                runBinary<BinRule::Promote, true>(arg(a, 0), arg(a, 1), outs[0],
                                                  [](auto x, auto y) { return sm::remainder(x, y); });
        };
        r.add(schema, std::move(def));
    }
}

void registerComparisons(OpRegistry &r)
{
    addBinary<BinRule::Compare>(r, {"aten.eq(Tensor self, Tensor other) -> Tensor", "eq"},
              [](auto x, auto y) { return x == y; });
    addBinary<BinRule::Compare>(r, {"aten.ne(Tensor self, Tensor other) -> Tensor", "ne"},
              [](auto x, auto y) { return x != y; });
    addBinary<BinRule::Compare>(r, {"aten.lt(Tensor self, Tensor other) -> Tensor", "lt"},
              [](auto x, auto y) { return x < y; });
    addBinary<BinRule::Compare>(r, {"aten.le(Tensor self, Tensor other) -> Tensor", "le"},
              [](auto x, auto y) { return x <= y; });
    addBinary<BinRule::Compare>(r, {"aten.gt(Tensor self, Tensor other) -> Tensor", "gt"},
              [](auto x, auto y) { return x > y; });
    addBinary<BinRule::Compare>(r, {"aten.ge(Tensor self, Tensor other) -> Tensor", "ge"},
              [](auto x, auto y) { return x >= y; });
    addBinary<BinRule::Logical>(r, {"aten.logical_and(Tensor self, Tensor other) -> Tensor", "logical_and"},
              [](auto x, auto y) { return sm::logical_and(x, y); });
    addBinary<BinRule::Logical>(r, {"aten.logical_or(Tensor self, Tensor other) -> Tensor", "logical_or"},
              [](auto x, auto y) { return sm::logical_or(x, y); });
}

// --- ternary, casts, copies ------------------------------------------------------

void whereKernel(const Tensor &cond, const Tensor &a, const Tensor &b, const Tensor &out)
{
    const Tensor c = asDType(cond, DType::Bool);
    const Tensor ac = asDType(a, out.dtype()), bc = asDType(b, out.dtype());
    visitDType(out.dtype(), [&](auto tag) {
        using T = decltype(tag);
        // Select through bytes: cond is bool, so treat it as T-typed 0/1 via a 3-input loop.
        const Tensor cT = asDType(c, out.dtype());
        using C = compute_t<T>;
        std::array<Tensor, 3> ins{cT, ac, bc};
        Tensor o = out;
        loops::pointwise<T, T, 3>(o, ins, [](C s, C x, C y) { return s != C(0) ? x : y; });
    });
}

void registerTernary(OpRegistry &r)
{
    OpDef where;
    where.kind = OpKind::Pointwise;
    where.scalarFn = "where";
    where.shape = [](const Args &a) {
        const Shape shape = loops::broadcastAll("aten.where", {arg(a, 0).sizes(), arg(a, 1).sizes(), arg(a, 2).sizes()});
        return std::vector<TensorSpec>{{shape, ops::resultType(arg(a, 1), arg(a, 2))}};
    };
    where.cpu = [](const Args &a, std::span<Tensor> outs) { whereKernel(arg(a, 0), arg(a, 1), arg(a, 2), outs[0]); };
    r.add("aten.where(Tensor condition, Tensor self, Tensor other) -> Tensor", std::move(where));

    OpDef clamp;
    clamp.kind = OpKind::Pointwise;
    clamp.scalarFn = "clamp";
    clamp.scalarCall = [](const Args &a) {
        if (a[1].isNone() && a[2].isNone())
            return ScalarCall{"identity", {}};
        if (a[1].isNone())
            return ScalarCall{"clamp_max", {a[2].toDouble()}};
        if (a[2].isNone())
            return ScalarCall{"clamp_min", {a[1].toDouble()}};
        return ScalarCall{"clamp", {a[1].toDouble(), a[2].toDouble()}};
    };
    clamp.shape = [](const Args &a) {
        const DType t = arg(a, 0).dtype();
        if (t == DType::Bool)
            throw Error("aten.clamp: not supported for bool tensors");
        // PyTorch's promotion: a float bound lifts integers to the default
        // float, where casting it to the integer moved the bound.
        const bool floatBound = a[1].isDouble() || a[2].isDouble();
        return std::vector<TensorSpec>{{arg(a, 0).sizes(), isIntegral(t) && floatBound ? DType::F32 : t}};
    };
    clamp.cpu = [](const Args &a, std::span<Tensor> outs) {
        const bool hasLo = !a[1].isNone(), hasHi = !a[2].isNone();
        const double lo = hasLo ? a[1].toDouble() : 0, hi = hasHi ? a[2].toDouble() : 0;
        runUnary<Rule::Numeric>(arg(a, 0), outs[0], [=](auto x) {
            using T = decltype(x);
            // Selects rather than early returns, so that the loop vectorizes
            // (the branches ran 4.6x slower than relu); an absent bound is
            // the type's infinity or extreme, which clamps nothing.
            using L = std::numeric_limits<T>;
            const T l = hasLo ? static_cast<T>(lo) : (L::has_infinity ? -L::infinity() : L::lowest());
            const T h = hasHi ? static_cast<T>(hi) : (L::has_infinity ? L::infinity() : L::max());
            T y = x < l ? l : x;
            y = y > h ? h : y;
            return x != x ? x : y;
        });
    };
    r.add("aten.clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", std::move(clamp));

    OpDef masked;
    masked.kind = OpKind::Pointwise;
    masked.scalarFn = "masked_fill";
    masked.scalarCall = [](const Args &a) { return ScalarCall{"masked_fill", {a[2].toDouble()}}; };
    masked.shape = [](const Args &a) {
        const Shape shape = loops::broadcastShapes("aten.masked_fill", arg(a, 0).sizes(), arg(a, 1).sizes());
        if (shape != arg(a, 0).sizes())
            throw Error("aten.masked_fill: mask of shape " + shapeStr(arg(a, 1).sizes())
                        + " does not broadcast to the input's shape " + shapeStr(arg(a, 0).sizes()));
        if (arg(a, 1).dtype() != DType::Bool)
            throw Error(std::string("aten.masked_fill: mask must be bool, got ") + dtypeName(arg(a, 1).dtype()));
        return std::vector<TensorSpec>{{shape, arg(a, 0).dtype()}};
    };
    masked.cpu = [](const Args &a, std::span<Tensor> outs) {
        const Tensor &x = arg(a, 0);
        whereKernel(arg(a, 1), Tensor::wrapScalar(a[2].toDouble(), x.dtype()), x, outs[0]);
    };
    r.add("aten.masked_fill(Tensor self, Tensor mask, Scalar value) -> Tensor", std::move(masked));
}

void registerCopies(OpRegistry &r)
{
    OpDef cast;
    cast.kind = OpKind::Pointwise;
    cast.scalarFn = "cast";
    cast.flopsPerElement = 0;
    cast.shape = [](const Args &a) { return std::vector<TensorSpec>{{arg(a, 0).sizes(), a[1].toDType()}}; };
    cast.cpu = [](const Args &a, std::span<Tensor> outs) { loops::copyInto(outs[0], arg(a, 0)); };
    r.add("aten.cast(Tensor self, ScalarType dtype) -> Tensor", std::move(cast));

    OpDef clone;
    clone.kind = OpKind::Pointwise;
    clone.scalarFn = "identity";
    clone.flopsPerElement = 0;
    clone.shape = [](const Args &a) { return std::vector<TensorSpec>{{arg(a, 0).sizes(), arg(a, 0).dtype()}}; };
    clone.cpu = [](const Args &a, std::span<Tensor> outs) { loops::copyInto(outs[0], arg(a, 0)); };
    r.add("aten.clone(Tensor self) -> Tensor", std::move(clone));
}

} // namespace

void registerPointwiseOps(OpRegistry &r)
{
    registerUnary(r);
    registerUnaryWithArgs(r);
    registerArithmetic(r);
    registerDivision(r);
    registerComparisons(r);
    registerTernary(r);
    registerCopies(r);
}

namespace ops {

DType resultType(const Tensor &a, const Tensor &b)
{
    const bool wa = a.isWrappedNumber(), wb = b.isWrappedNumber();
    if (wa == wb)
        return promoteTypes(a.dtype(), b.dtype());
    const Tensor &t = wa ? b : a;
    const Tensor &w = wa ? a : b;
    if (category(w.dtype()) <= category(t.dtype()))
        return t.dtype();
    return category(w.dtype()) == 2 ? DType::F32 : DType::I64;
}

#define FS_UNARY(fn, opname) \
    Tensor fn(const Tensor &x) { return callOp1(opname, {x}); }
FS_UNARY(neg, "aten.neg")
FS_UNARY(abs, "aten.abs")
FS_UNARY(exp, "aten.exp")
FS_UNARY(exp2, "aten.exp2")
FS_UNARY(log, "aten.log")
FS_UNARY(log1p, "aten.log1p")
FS_UNARY(sqrt, "aten.sqrt")
FS_UNARY(rsqrt, "aten.rsqrt")
FS_UNARY(reciprocal, "aten.reciprocal")
FS_UNARY(sin, "aten.sin")
FS_UNARY(cos, "aten.cos")
FS_UNARY(tanh, "aten.tanh")
FS_UNARY(sigmoid, "aten.sigmoid")
FS_UNARY(relu, "aten.relu")
FS_UNARY(relu6, "aten.relu6")
FS_UNARY(hardsigmoid, "aten.hardsigmoid")
FS_UNARY(hardswish, "aten.hardswish")
FS_UNARY(silu, "aten.silu")
FS_UNARY(mish, "aten.mish")
FS_UNARY(erf, "aten.erf")
FS_UNARY(normalCdf, "fusescope.normal_cdf")
FS_UNARY(sign, "aten.sign")
FS_UNARY(floor, "aten.floor")
FS_UNARY(ceil, "aten.ceil")
FS_UNARY(round, "aten.round")
FS_UNARY(trunc, "aten.trunc")
FS_UNARY(isnan, "aten.isnan")
FS_UNARY(logicalNot, "aten.logical_not")
FS_UNARY(bitwiseNot, "aten.bitwise_not")
FS_UNARY(clone, "aten.clone")
#undef FS_UNARY

Tensor leakyRelu(const Tensor &x, double slope) { return callOp1("aten.leaky_relu", {x, slope}); }
Tensor gelu(const Tensor &x, const std::string &approximate) { return callOp1("aten.gelu", {x, approximate}); }

Tensor add(const Value &a, const Value &b, double alpha) { return callOp1("aten.add", {a, b, alpha}); }
Tensor sub(const Value &a, const Value &b, double alpha) { return callOp1("aten.sub", {a, b, alpha}); }
Tensor mul(const Value &a, const Value &b) { return callOp1("aten.mul", {a, b}); }
Tensor div(const Value &a, const Value &b, const std::string &mode)
{
    return callOp1("aten.div", {a, b, mode.empty() ? Value() : Value(mode)});
}
Tensor pow(const Value &a, const Value &b) { return callOp1("aten.pow", {a, b}); }
Tensor maximum(const Tensor &a, const Tensor &b) { return callOp1("aten.maximum", {a, b}); }
Tensor minimum(const Tensor &a, const Tensor &b) { return callOp1("aten.minimum", {a, b}); }
Tensor fmod(const Value &a, const Value &b) { return callOp1("aten.fmod", {a, b}); }
Tensor remainder(const Value &a, const Value &b) { return callOp1("aten.remainder", {a, b}); }
Tensor eq(const Value &a, const Value &b) { return callOp1("aten.eq", {a, b}); }
Tensor ne(const Value &a, const Value &b) { return callOp1("aten.ne", {a, b}); }
Tensor lt(const Value &a, const Value &b) { return callOp1("aten.lt", {a, b}); }
Tensor le(const Value &a, const Value &b) { return callOp1("aten.le", {a, b}); }
Tensor gt(const Value &a, const Value &b) { return callOp1("aten.gt", {a, b}); }
Tensor ge(const Value &a, const Value &b) { return callOp1("aten.ge", {a, b}); }
Tensor logicalAnd(const Tensor &a, const Tensor &b) { return callOp1("aten.logical_and", {a, b}); }
Tensor logicalOr(const Tensor &a, const Tensor &b) { return callOp1("aten.logical_or", {a, b}); }
Tensor where(const Tensor &c, const Value &a, const Value &b) { return callOp1("aten.where", {c, a, b}); }
Tensor clamp(const Tensor &x, const Value &lo, const Value &hi)
{
    return callOp1("aten.clamp", {x, lo, hi});
}
Tensor maskedFill(const Tensor &x, const Tensor &mask, double value)
{
    return callOp1("aten.masked_fill", {x, mask, value});
}
Tensor cast(const Tensor &x, DType dtype) { return callOp1("aten.cast", {x, dtype}); }

void copy_(const Tensor &dst, const Tensor &src)
{
    loops::broadcastShapes("aten.copy_", src.sizes(), dst.sizes());
    const Tensor expanded = src.dim() == dst.dim() && src.sizes() == dst.sizes() ? src : src.expand(dst.sizes());
    loops::copyInto(dst, expanded);
}

} // namespace ops
} // namespace fusescope
