// The `simplify` stage: dead code, common subexpressions, constant folding,
// algebraic identities and view canonicalization. Every op is pure, so a node
// nobody reads can go and two nodes with equal inputs are one.
#include "core/compiler/graph_json.h"
#include "core/compiler/passes.h"
#include "core/compiler/tracer.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace fusescope::compiler {

void propagateMeta(Graph &graph)
{
    TracerScope noTracer(nullptr);
    for (Node *n : graph.nodes()) {
        if (n->kind != NodeKind::CallFunction)
            continue;
        const Args args = nodeArgs(graph, *n);
        const TensorList outs = callOp(OpRegistry::instance().get(n->target), args);
        if (outs.size() != n->outputs.size())
            throw Error("compiler: " + n->name + " (" + n->target + ") changed its number of outputs");
        for (size_t i = 0; i < outs.size(); ++i) {
            TensorMeta m = outputMeta(args, outs[i]);
            if (m.sizes != n->outputs[i].sizes || m.dtype != n->outputs[i].dtype)
                throw Error("compiler: " + n->name + " (" + n->target + ") changed from " + shapeStr(n->outputs[i].sizes)
                            + " " + dtypeName(n->outputs[i].dtype) + " to " + shapeStr(m.sizes) + " "
                            + dtypeName(m.dtype));
            n->outputs[i] = m;
        }
    }
}

// --- dead code -------------------------------------------------------------------

int removeDeadCode(Graph &graph, PassLog &log)
{
    int removed = 0;
    const std::vector<Node *> nodes = graph.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        Node *n = *it;
        const bool removable = n->kind == NodeKind::CallFunction || n->kind == NodeKind::GetAttr;
        if (!removable || !n->users().empty())
            continue;
        if (n->kind == NodeKind::GetAttr)
            graph.attrs.erase(n->target);
        graph.erase(n);
        ++removed;
    }
    if (removed)
        log.push_back("dead code: removed " + std::to_string(removed) + " nodes");
    return removed;
}

// --- common subexpressions -------------------------------------------------------

namespace {

std::string cseKey(const Node &n)
{
    std::string key = std::string(nodeKindName(n.kind)) + "|" + n.target;
    for (const Arg &a : n.args()) {
        key += "|";
        if (a.kind == Arg::Kind::Const) {
            key += valueToJson(a.constant).dump();
            continue;
        }
        key += a.kind == Arg::Kind::RefList ? "L" : "R";
        for (const NodeRef &r : a.refs)
            key += std::to_string(r.node->id) + ":" + std::to_string(r.index) + ",";
    }
    return key;
}

} // namespace

int eliminateCommonSubexpressions(Graph &graph, PassLog &log)
{
    std::unordered_map<std::string, Node *> seen;
    int merged = 0;
    for (Node *n : graph.nodes()) {
        if (n->kind != NodeKind::CallFunction && n->kind != NodeKind::GetAttr)
            continue;
        auto [it, inserted] = seen.emplace(cseKey(*n), n);
        if (inserted)
            continue;
        for (size_t i = 0; i < n->outputs.size(); ++i)
            graph.replaceUses(n->out(static_cast<int>(i)), it->second->out(static_cast<int>(i)));
        log.push_back("common subexpression: " + n->name + " = " + it->second->name);
        ++merged;
    }
    return merged;
}

// --- constant folding ------------------------------------------------------------

namespace {

bool isConstant(const Graph &graph, const NodeRef &r)
{
    return r.node->kind == NodeKind::GetAttr && !graph.attrs.at(r.node->target).isMeta();
}

bool isViewOfConstants(const Graph &graph, const Node &n)
{
    if (n.kind != NodeKind::CallFunction || OpRegistry::instance().get(n.target).kind != OpKind::View)
        return false;
    const std::vector<NodeRef> inputs = n.inputs();
    return !inputs.empty()
        && std::all_of(inputs.begin(), inputs.end(), [&](const NodeRef &r) { return isConstant(graph, r); });
}

// Folding runs the op once at compile time on parameter values; the result
// must not be much bigger than what it reads (an outer product of two
// vectors would trade a cheap kernel for a big constant) unless the op
// exists to prepare a constant (a weight transform). With `viewsCount`, an
// input that is a view of parameters counts as a parameter.
bool foldsOnConstants(const Graph &graph, const Node &n, bool viewsCount = false)
{
    if (n.kind != NodeKind::CallFunction || n.users().empty())
        return false;
    const OpDef &op = OpRegistry::instance().get(n.target);
    if (op.kind == OpKind::View)
        return false;
    int64_t inBytes = 0, outBytes = 0;
    for (const NodeRef &r : n.inputs()) {
        if (!isConstant(graph, r) && !(viewsCount && isViewOfConstants(graph, *r.node)))
            return false;
        inBytes += r.node->meta(r.index).nbytes();
    }
    for (const TensorMeta &m : n.outputs)
        outBytes += m.nbytes();
    return !n.inputs().empty() && (outBytes <= inBytes + 4096 || op.foldWhenConstant);
}

// A view of a parameter costs nothing and is left alone, unless every user
// folds with it (and with any other such view it reads): then it folds
// first, so what follows it folds too (batch norm's rsqrt(running_var + eps)
// behind a reshape ran as a kernel every call, twenty of them per compiled
// resnet18 step; a convolution's weight factors are two reshaped vectors).
bool foldableView(const Graph &graph, const Node &n)
{
    if (n.users().empty() || !isViewOfConstants(graph, n))
        return false;
    const std::vector<Node *> &users = n.users();
    return std::all_of(users.begin(), users.end(), [&](const Node *u) { return foldsOnConstants(graph, *u, true); });
}

bool foldable(const Graph &graph, const Node &n)
{
    return foldsOnConstants(graph, n) || foldableView(graph, n);
}

} // namespace

int foldConstants(Graph &graph, PassLog &log)
{
    int folded = 0;
    for (Node *n : graph.nodes()) {
        if (!foldable(graph, *n))
            continue;
        TensorList values;
        {
            TracerScope noTracer(nullptr);
            values = callOp(OpRegistry::instance().get(n->target), nodeArgs(graph, *n, true));
        }
        for (size_t i = 0; i < values.size(); ++i) {
            const std::string target = "_folded_" + n->name + (i ? "_" + std::to_string(i) : "");
            graph.attrs[target] = values[i].contiguous();
            Node *c = graph.add(NodeKind::GetAttr, target, {}, {metaOf(graph.attrs[target])}, target, n);
            c->modulePath = n->modulePath;
            c->origins = n->origins;
            graph.replaceUses(n->out(static_cast<int>(i)), c->out());
        }
        log.push_back("constant folding: " + n->name + " (" + n->target + ") computed at compile time");
        ++folded;
    }
    return folded;
}

// --- algebraic identities and view canonicalization ---------------------------------

namespace {

bool isConst(const Arg &a, double value)
{
    return a.kind == Arg::Kind::Const && a.constant.isNumber() && a.constant.toDouble() == value;
}

bool isOp(const NodeRef &r, const char *target)
{
    return r.node->kind == NodeKind::CallFunction && r.node->target == target;
}

std::optional<NodeRef> refArg(const Node &n, size_t i)
{
    if (i < n.args().size() && n.args()[i].isRef())
        return n.args()[i].ref();
    return std::nullopt;
}

using Rewrite = std::function<std::optional<NodeRef>(Graph &, Node &)>;

struct Identity {
    const char *target;
    const char *algebra;
    Rewrite rewrite;
};

// A rewrite that forwards argument `i`.
std::optional<NodeRef> forward(const Node &n, size_t i)
{
    return refArg(n, i);
}

bool identityPermutation(const IntList &p)
{
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] != static_cast<int64_t>(i) && p[i] != static_cast<int64_t>(i) - static_cast<int64_t>(p.size()))
            return false;
    }
    return true;
}

// A new node computing what n computes, in n's place (module path, origins).
Node *replacement(Graph &g, Node &n, const std::string &target, std::vector<Arg> args,
                  std::vector<TensorMeta> outputs, const std::string &name)
{
    Node *r = g.add(NodeKind::CallFunction, target, std::move(args), std::move(outputs), name, &n);
    r->modulePath = n.modulePath;
    r->origins = n.origins;
    return r;
}

// Rewrites that put a new node in place: view(view(x)) and permute(permute(x)).
std::optional<NodeRef> collapseReshape(Graph &g, Node &n)
{
    const auto in = refArg(n, 0);
    if (!in || !(isOp(*in, "aten.reshape") || isOp(*in, "aten.view")))
        return std::nullopt;
    const auto x = refArg(*in->node, 0);
    if (!x)
        return std::nullopt;
    return replacement(g, n, "aten.reshape", {Arg::of(*x), n.args()[1]}, n.outputs, "reshape")->out();
}

std::optional<NodeRef> collapsePermute(Graph &g, Node &n)
{
    const auto in = refArg(n, 0);
    if (!in || !isOp(*in, "aten.permute"))
        return std::nullopt;
    const auto x = refArg(*in->node, 0);
    if (!x)
        return std::nullopt;
    const IntList &inner = in->node->args()[1].constant.toIntList();
    const IntList &outer = n.args()[1].constant.toIntList();
    const auto rank = static_cast<int64_t>(inner.size());
    IntList combined(outer.size());
    for (size_t i = 0; i < outer.size(); ++i)
        combined[i] = inner[static_cast<size_t>((outer[i] + rank) % rank)];
    return replacement(g, n, "aten.permute", {Arg::of(*x), Arg::of(Value(combined))}, n.outputs, "permute")->out();
}

// Reduced dims as non-negative and sorted, so two reductions of one tensor
// over the same dims written differently ([-1] by softmax, [1] by
// layer_norm on a 2-D input) are one common subexpression.
// (Capture checked the dims against the rank already.)
IntList canonicalDims(const IntList &dims, int64_t rank)
{
    IntList out;
    for (int64_t d : dims)
        out.push_back(wrapDim(d, rank, "aten.sum"));
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<NodeRef> normalizeSumDims(Graph &g, Node &n)
{
    const auto x = refArg(n, 0);
    if (!x || n.args().size() < 2 || !n.args()[1].constant.isIntList())
        return std::nullopt;
    const IntList &dims = n.args()[1].constant.toIntList();
    const auto rank = static_cast<int64_t>(x->node->meta(x->index).sizes.size());
    const IntList canonical = canonicalDims(dims, rank);
    if (dims.empty() || canonical == dims)
        return std::nullopt;
    std::vector<Arg> args = n.args();
    args[1] = Arg::of(Value(canonical));
    return replacement(g, n, "aten.sum", std::move(args), n.outputs, "sum")->out();
}

// A reduction over dims of size 1 only (no dims: all of them) reduces
// nothing: x, or x reshaped where the dims are dropped. A norm over a size-1
// dim then subtracts x from itself, exactly 0 as in eager mode; computed as a
// reduction, x's product could be contracted into one use and rounded in the
// other (1e-5 where 0 was right, once divided by sqrt(var + eps)).
std::optional<NodeRef> reductionOverOnes(Graph &g, Node &n)
{
    const auto x = refArg(n, 0);
    if (!x || n.args().size() < 3 || !n.args()[1].constant.isIntList())
        return std::nullopt;
    const Shape &sizes = x->node->meta(x->index).sizes;
    const IntList &dims = n.args()[1].constant.toIntList();
    const auto one = [&](int64_t d) { return sizes[static_cast<size_t>(d)] == 1; };
    const auto rank = static_cast<int64_t>(sizes.size());
    const IntList reduced = dims.empty() || rank == 0 ? IntList() : canonicalDims(dims, rank);
    const bool nothing = reduced.empty() ? std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s == 1; })
                                         : std::all_of(reduced.begin(), reduced.end(), one);
    if (!nothing)
        return std::nullopt;
    if (n.meta().sizes == sizes)
        return x;
    const std::vector<Arg> args{Arg::of(*x), Arg::of(Value(n.meta().sizes))};
    return replacement(g, n, "aten.reshape", args, n.outputs, "reshape")->out();
}

// Whether b, broadcast to `shape`, is the same along every dim of `dims`.
bool constantAlong(const Arg &b, const Shape &shape, const IntList &dims)
{
    if (b.kind == Arg::Kind::Const)
        return b.constant.isNumber();
    if (!b.isRef())
        return false;
    const Shape &sizes = b.ref().node->meta(b.ref().index).sizes;
    const auto lead = static_cast<int64_t>(shape.size()) - static_cast<int64_t>(sizes.size());
    for (int64_t d : dims) {
        if (d >= lead && sizes[static_cast<size_t>(d - lead)] != 1)
            return false;
    }
    return true;
}

// sum(a / b) over dims where b does not vary, keepdim: each reduced value
// divided once instead of every element (layer_norm's mean of a softmax).
std::optional<NodeRef> sumOfQuotient(Graph &g, Node &n)
{
    const auto q = refArg(n, 0);
    if (!q || !isOp(*q, "aten.div") || n.args().size() != 4 || q->node->args().size() != 3)
        return std::nullopt;
    const Value &dimsArg = n.args()[1].constant, &keepdim = n.args()[2].constant;
    if (!dimsArg.isIntList() || !keepdim.isBool() || !keepdim.toBool() || !n.args()[3].constant.isNone()
        || !q->node->args()[2].constant.isNone())
        return std::nullopt;
    const auto a = refArg(*q->node, 0);
    const TensorMeta &qm = q->node->meta(q->index);
    // A 0-d quotient: its sum is itself (dim 0 or -1 of a 0-d tensor names no dim of it).
    if (!a || !isFloating(qm.dtype) || qm.sizes.empty() || a->node->meta(a->index).sizes != qm.sizes
        || a->node->meta(a->index).dtype != qm.dtype)
        return std::nullopt;
    const IntList dims = canonicalDims(dimsArg.toIntList(), int64_t(qm.sizes.size()));
    if (dims.empty() || !constantAlong(q->node->args()[1], qm.sizes, dims))
        return std::nullopt;
    Node *sum = replacement(g, n, "aten.sum", {Arg::of(*a), Arg::of(Value(dims)), n.args()[2], n.args()[3]},
                            n.outputs, "sum");
    return replacement(g, n, "aten.div", {Arg::of(sum->out()), q->node->args()[1], q->node->args()[2]}, n.outputs,
                       "div")
        ->out();
}

// Equal to `want` as an f32 or f64 constant written for it.
bool closeTo(std::optional<double> v, double want)
{
    return v && std::fabs(*v - want) <= 1e-7 * std::fabs(want);
}

// The factors of a product: the mul nodes under n that only it reads, taken apart.
void productFactors(const Node &n, std::vector<Arg> &out, int depth)
{
    for (size_t i = 0; i < 2; ++i) {
        const Arg &a = n.args()[i];
        if (depth > 0 && a.isRef() && isOp(a.ref(), "aten.mul") && a.ref().node->users().size() == 1)
            productFactors(*a.ref().node, out, depth - 1);
        else
            out.push_back(a);
    }
}

// x where z is x / sqrt(2) or x times 1 / sqrt(2).
std::optional<NodeRef> overRootTwo(const Graph &g, const Arg &z)
{
    if (!z.isRef())
        return std::nullopt;
    const Node &d = *z.ref().node;
    if (isOp(z.ref(), "aten.div") && d.args()[2].constant.isNone() && closeTo(scalarOf(g, d.args()[1]), M_SQRT2))
        return refArg(d, 0);
    for (size_t i = 0; i < 2 && isOp(z.ref(), "aten.mul"); ++i) {
        if (closeTo(scalarOf(g, d.args()[1 - i]), M_SQRT1_2))
            return refArg(d, i);
    }
    return std::nullopt;
}

// The other operand of a two-operand node when one of them is `value`.
std::optional<Arg> besideScalar(const Graph &g, const Node &n, double value)
{
    for (size_t i = 0; i < 2; ++i) {
        if (closeTo(scalarOf(g, n.args()[1 - i]), value))
            return n.args()[i];
    }
    return std::nullopt;
}

// The node y where a is 1 + y (in either order) and y is a `target` node.
const Node *onePlus(const Graph &g, const Arg &a, const char *target)
{
    if (!a.isRef() || !isOp(a.ref(), "aten.add") || !isConst(a.ref().node->args()[2], 1))
        return nullptr;
    const std::optional<Arg> y = besideScalar(g, *a.ref().node, 1);
    return y && y->isRef() && isOp(y->ref(), target) ? y->ref().node : nullptr;
}

// x where a is 1 + erf(x / sqrt(2)), in either order.
std::optional<NodeRef> onePlusErf(const Graph &g, const Arg &a)
{
    const Node *erf = onePlus(g, a, "aten.erf");
    return erf ? overRootTwo(g, erf->args()[0]) : std::nullopt;
}

using GeluFactor = std::optional<NodeRef> (*)(const Graph &, const Arg &);

// x where n is the product 0.5 x f(x), in any order, f matched by `factor`
// (which returns the x it was of), x of n's shape and floating dtype.
std::optional<NodeRef> halfXTimes(const Graph &g, const Node &n, GeluFactor factor)
{
    std::vector<Arg> f;
    productFactors(n, f, 2);
    if (f.size() != 3)
        return std::nullopt;
    for (size_t half = 0; half < 3; ++half) {
        for (size_t other = 0; other < 3; ++other) {
            const size_t x = 3 - half - other;
            if (half == other || !closeTo(scalarOf(g, f[half]), 0.5) || !f[x].isRef())
                continue;
            const NodeRef in = f[x].ref();
            const TensorMeta &m = in.node->meta(in.index);
            if (factor(g, f[other]) == in && isFloating(m.dtype) && m.sizes == n.meta().sizes
                && m.dtype == n.meta().dtype)
                return in;
        }
    }
    return std::nullopt;
}

// A node of x's geometry in n's place.
Node *like(Graph &g, Node &n, const NodeRef &x, const std::string &target, std::vector<Arg> args)
{
    const TensorMeta &m = x.node->meta(x.index);
    const TensorMeta meta{m.sizes, contiguousStrides(m.sizes), 0, m.dtype};
    return replacement(g, n, target, std::move(args), {meta}, target.substr(target.find('.') + 1));
}

// 0.5 x (1 + erf(x / sqrt 2)), exact GELU as an ONNX file before opset 20
// (which has no Gelu) or a user writes it, becomes x Phi(x) as gelu
// decomposes: one division-free function instead of erf's two forms
// (scalarmath.h), and no 1 + erf cancelling below 0.
std::optional<NodeRef> geluOfErf(Graph &g, Node &n)
{
    const std::optional<NodeRef> x = halfXTimes(g, n, onePlusErf);
    if (!x)
        return std::nullopt;
    Node *cdf = like(g, n, *x, "fusescope.normal_cdf", {Arg::of(*x)});
    return replacement(g, n, "aten.mul", {Arg::of(*x), Arg::of(cdf->out())}, n.outputs, "mul")->out();
}

// x where c is x^3: pow(x, 3) or a product of three x.
std::optional<NodeRef> cubeOf(const Graph &g, const Arg &c)
{
    if (!c.isRef())
        return std::nullopt;
    const Node &n = *c.ref().node;
    if (isOp(c.ref(), "aten.pow") && scalarOf(g, n.args()[1]) == 3.0)
        return refArg(n, 0);
    std::vector<Arg> f;
    if (isOp(c.ref(), "aten.mul"))
        productFactors(n, f, 1);
    if (f.size() != 3 || !f[0].isRef() || !f[1].isRef() || !f[2].isRef() || f[0].ref() != f[1].ref()
        || f[0].ref() != f[2].ref())
        return std::nullopt;
    return f[0].ref();
}

// x where a is 1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)), operands in any order.
std::optional<NodeRef> onePlusTanh(const Graph &g, const Arg &a)
{
    const Node *th = onePlus(g, a, "aten.tanh");
    if (!th || !th->args()[0].isRef() || !isOp(th->args()[0].ref(), "aten.mul"))
        return std::nullopt;
    const std::optional<Arg> sum = besideScalar(g, *th->args()[0].ref().node, 0.79788456080286535588);
    if (!sum || !sum->isRef() || !isOp(sum->ref(), "aten.add") || !isConst(sum->ref().node->args()[2], 1))
        return std::nullopt;
    const Node &s = *sum->ref().node;
    for (size_t i = 0; i < 2; ++i) {
        const Arg &x = s.args()[i], &t = s.args()[1 - i];
        if (!x.isRef() || !t.isRef() || !isOp(t.ref(), "aten.mul"))
            continue;
        const std::optional<Arg> cube = besideScalar(g, *t.ref().node, 0.044715);
        if (cube && cubeOf(g, *cube) == x.ref())
            return x.ref();
    }
    return std::nullopt;
}

// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), GELU's tanh form as
// ONNX exports of GPT-2 write it (x^3 a Pow, a libm call per element),
// becomes x sigmoid(2 z) as gelu(x, 'tanh') decomposes: equal in exact
// arithmetic, without 1 + tanh cancelling below 0 (scalarmath.h).
std::optional<NodeRef> geluOfTanh(Graph &g, Node &n)
{
    const std::optional<NodeRef> x = halfXTimes(g, n, onePlusTanh);
    if (!x)
        return std::nullopt;
    const Arg in = Arg::of(*x);
    Node *cube = like(g, n, *x, "aten.mul", {in, Arg::of(Value(0.044715))});
    cube = like(g, n, *x, "aten.mul", {Arg::of(cube->out()), in});
    cube = like(g, n, *x, "aten.mul", {Arg::of(cube->out()), in});
    Node *sum = like(g, n, *x, "aten.add", {in, Arg::of(cube->out()), Arg::of(Value(1.0))});
    Node *twoZ = like(g, n, *x, "aten.mul", {Arg::of(sum->out()), Arg::of(Value(1.59576912160573071176))});
    Node *sig = like(g, n, *x, "aten.sigmoid", {Arg::of(twoZ->out())});
    return replacement(g, n, "aten.mul", {in, Arg::of(sig->out())}, n.outputs, "mul")->out();
}

// x ** 2 = x * x: the square correctly rounded, as eager pow computes it too
// (pointwise.cpp), and a product stays in vector code where pow is a libm call
// per element. The exponent may be a one-element parameter, as ONNX's Pow has it.
std::optional<NodeRef> squareAsProduct(Graph &g, Node &n)
{
    const auto x = refArg(n, 0);
    const std::optional<double> e = scalarOf(g, n.args()[1]);
    if (!x || !e || *e != 2)
        return std::nullopt;
    const TensorMeta &m = x->node->meta(x->index);
    if (!isFloating(m.dtype) || m.dtype != n.meta().dtype || m.sizes != n.meta().sizes)
        return std::nullopt;
    return replacement(g, n, "aten.mul", {Arg::of(*x), Arg::of(*x)}, n.outputs, "mul")->out();
}

const std::vector<Identity> &identities()
{
    // clang-format off
    static const std::vector<Identity> rules = {
        {"aten.add",      "x + 0 = x",              [](Graph &, Node &n) { return isConst(n.args()[1], 0) ? forward(n, 0) : std::nullopt; }},
        {"aten.add",      "0 + x = x",              [](Graph &, Node &n) { return isConst(n.args()[0], 0) && isConst(n.args()[2], 1) ? forward(n, 1) : std::nullopt; }},
        {"aten.sub",      "x - 0 = x",              [](Graph &, Node &n) { return isConst(n.args()[1], 0) ? forward(n, 0) : std::nullopt; }},
        {"aten.mul",      "x * 1 = x",              [](Graph &, Node &n) { return isConst(n.args()[1], 1) ? forward(n, 0) : std::nullopt; }},
        {"aten.mul",      "1 * x = x",              [](Graph &, Node &n) { return isConst(n.args()[0], 1) ? forward(n, 1) : std::nullopt; }},
        {"aten.div",      "x / 1 = x",              [](Graph &, Node &n) { return isConst(n.args()[1], 1) && n.args()[2].constant.isNone() ? forward(n, 0) : std::nullopt; }},
        {"aten.pow",      "x ** 1 = x",             [](Graph &, Node &n) { return isConst(n.args()[1], 1) ? forward(n, 0) : std::nullopt; }},
        {"aten.neg",      "-(-x) = x",              [](Graph &, Node &n) { const auto in = refArg(n, 0); return in && isOp(*in, "aten.neg") ? refArg(*in->node, 0) : std::nullopt; }},
        {"aten.cast",     "cast(x, dtype(x)) = x",  [](Graph &, Node &n) { return forward(n, 0); }},
        {"aten.view",     "view(x, shape(x)) = x",  [](Graph &, Node &n) { return forward(n, 0); }},
        {"aten.reshape",  "reshape(x, shape(x)) = x", [](Graph &, Node &n) { return forward(n, 0); }},
        {"aten.expand",   "expand(x, shape(x)) = x", [](Graph &, Node &n) { return forward(n, 0); }},
        {"aten.cat",      "cat([x], d) = x",        [](Graph &, Node &n) { return n.args()[0].kind == Arg::Kind::RefList && n.args()[0].refs.size() == 1 ? std::optional(n.args()[0].refs[0]) : std::nullopt; }},
        {"aten.permute",  "permute(x, identity) = x", [](Graph &, Node &n) { return identityPermutation(n.args()[1].constant.toIntList()) ? forward(n, 0) : std::nullopt; }},
        {"aten.reshape",  "reshape(reshape(x, s1), s2) = reshape(x, s2)", collapseReshape},
        {"aten.view",     "view(view(x, s1), s2) = reshape(x, s2)", collapseReshape},
        {"aten.permute",  "permute(permute(x, p), q) = permute(x, p[q])", collapsePermute},
        {"aten.sum",      "sum(x, d) = x, x of size 1 along d", reductionOverOnes},
        {"aten.prod",     "prod(x, d) = x, x of size 1 along d", reductionOverOnes},
        {"aten.amax",     "amax(x, d) = x, x of size 1 along d", reductionOverOnes},
        {"aten.amin",     "amin(x, d) = x, x of size 1 along d", reductionOverOnes},
        {"aten.sum",      "sum(x, -d) = sum(x, rank - d)", normalizeSumDims},
        {"aten.sum",      "sum(a / b, d) = sum(a, d) / b, b constant along d", sumOfQuotient},
        {"aten.mul",      "0.5 x (1 + erf(x / sqrt 2)) = x Phi(x)", geluOfErf},
        {"aten.mul",      "0.5 x (1 + tanh(z)) = x sigmoid(2 z), z = sqrt(2 / pi) (x + 0.044715 x^3)", geluOfTanh},
        {"aten.pow",      "x ** 2 = x * x",         squareAsProduct},
    };
    // clang-format on
    return rules;
}

// A replacement must read as the node did: same shape and dtype.
bool sameValueShape(const Node &n, const NodeRef &r)
{
    const TensorMeta &a = n.meta(), &b = r.node->meta(r.index);
    return a.sizes == b.sizes && a.dtype == b.dtype;
}

bool applyOne(Graph &graph, Node &n, PassLog &log)
{
    for (const Identity &rule : identities()) {
        if (n.target != rule.target)
            continue;
        const std::optional<NodeRef> rep = rule.rewrite(graph, n);
        if (!rep || !sameValueShape(n, *rep))
            continue;
        graph.replaceUses(n.out(), *rep);
        log.push_back("identity " + std::string(rule.algebra) + ": " + n.name + " -> " + rep->node->name);
        return true;
    }
    return false;
}

} // namespace

int applyIdentities(Graph &graph, PassLog &log)
{
    int applied = 0;
    for (Node *n : graph.nodes()) {
        if (n->kind == NodeKind::CallFunction && n->outputs.size() == 1 && !n->users().empty())
            applied += applyOne(graph, *n, log) ? 1 : 0;
    }
    return applied;
}

void simplify(Graph &graph, PassLog &log)
{
    for (int round = 0; round < 16; ++round) {
        int changed = removeDeadCode(graph, log);
        changed += eliminateCommonSubexpressions(graph, log);
        // Before the Winograd split: the fold erases the convolutions it
        // replaces, each of which would get its weights transformed too (39
        // transforms for resnet18's 13 Winograd convolutions).
        changed += foldAffineIntoConvolutions(graph, log);
        changed += splitWinogradConvolutions(graph, log);
        changed += packWeightsForTiles(graph, log);
        changed += foldConstants(graph, log);
        changed += applyIdentities(graph, log);
        changed += removeDeadCode(graph, log);
        propagateMeta(graph);
        graph.lint();
        if (!changed)
            break;
    }
    // Last, once the weights are final (folded, split for Winograd): an
    // activation taken in earlier would hide its convolution from both. The
    // attention pattern needs its scale and mask constants folded first.
    if (fuseConvolutionActivations(graph, log) + fuseAttention(graph, log)) {
        removeDeadCode(graph, log);
        propagateMeta(graph);
        graph.lint();
    }
}

} // namespace fusescope::compiler
