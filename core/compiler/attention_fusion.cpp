// A decomposed attention as one op. After decompose, attention is two
// matmuls around a softmax over scores [..., L, S], maybe scaled and masked
// on the way: the first GEMM wrote every score, a softmax kernel read them
// and wrote the weights, the second GEMM read those. fusescope.attention
// (core/ops/attention.cpp) runs it a block of query rows at a time with the
// scores in the cache. The pattern is matched backwards from the second
// matmul; every node in it must have no reader outside it.
#include "core/compiler/passes.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace fusescope::compiler {
namespace {

bool isCall(const Node *n, const char *target)
{
    return n->kind == NodeKind::CallFunction && n->target == target;
}

// The node behind argument i, if it is one node's only output.
Node *refArg(const Node *n, size_t i)
{
    if (i >= n->args().size() || !n->args()[i].isRef() || n->args()[i].ref().index != 0)
        return nullptr;
    return n->args()[i].ref().node;
}

// Whether every reader of n is among `readers`.
bool readOnlyBy(const Node *n, std::initializer_list<const Node *> readers)
{
    for (const Node *u : n->users()) {
        if (std::find(readers.begin(), readers.end(), u) == readers.end())
            return false;
    }
    return !n->users().empty();
}

// Reduces over the last dim only, keeping it: amax(x, [-1], True), sum(x, [-1], True).
bool lastDimKept(const Node *n, const char *target, const Node *input)
{
    const std::vector<Arg> &a = n->args();
    if (!isCall(n, target) || refArg(n, 0) != input || a.size() < 3 || a[1].isRef() || a[2].isRef()
        || !a[1].constant.isIntList() || !a[2].constant.isBool() || !a[2].constant.toBool())
        return false;
    if (a.size() > 3 && !(!a[3].isRef() && a[3].constant.isNone()))
        return false; // sum's dtype
    const IntList dims = a[1].constant.toIntList();
    const int64_t rank = static_cast<int64_t>(input->meta().sizes.size());
    return dims.size() == 1 && (dims[0] == -1 || dims[0] == rank - 1);
}

struct Attention {
    Node *first = nullptr, *second = nullptr; // the two matmuls
    NodeRef query, keyT, value;
    double scale = 1;
    std::optional<NodeRef> masked;
    bool maskedWhereFalse = false; // where(cond, scores, fill): cond holds where the score stays
    double fill = 0;
    std::vector<const Node *> nodes; // everything replaced, for origins
};

// softmax(x, -1) as decomposed: div(exp(sub(x, amax(x))), sum(exp)). Returns x.
Node *softmaxInput(Node *div, Attention &m)
{
    Node *e = refArg(div, 0), *sum = refArg(div, 1);
    if (!isCall(div, "aten.div") || !e || !sum || (div->args().size() > 2 && !div->args()[2].constant.isNone()))
        return nullptr;
    if (!isCall(e, "aten.exp") || !lastDimKept(sum, "aten.sum", e) || !readOnlyBy(e, {sum, div})
        || !readOnlyBy(sum, {div}) || !readOnlyBy(div, {m.second}))
        return nullptr;
    Node *sub = refArg(e, 0);
    if (!sub || !isCall(sub, "aten.sub") || sub->args().size() != 3 || sub->args()[2].isRef()
        || sub->args()[2].constant.toDouble() != 1.0 || !readOnlyBy(sub, {e}))
        return nullptr;
    Node *x = refArg(sub, 0), *amax = refArg(sub, 1);
    if (!x || !amax || !lastDimKept(amax, "aten.amax", x) || !readOnlyBy(amax, {sub}) || !readOnlyBy(x, {amax, sub}))
        return nullptr;
    m.nodes.insert(m.nodes.end(), {div, e, sum, sub, amax});
    return x;
}

// masked_fill(s, mask, fill), where(mask, fill, s) or where(keep, s, fill). Returns s, or x itself.
Node *unmasked(const Graph &graph, Node *x, Attention &m)
{
    const std::vector<Arg> &a = x->args();
    const bool fillOp = isCall(x, "aten.masked_fill"), whereOp = isCall(x, "aten.where");
    if ((!fillOp && !whereOp) || a.size() != 3)
        return x;
    Node *scores = nullptr;
    std::optional<double> fill;
    NodeRef mask;
    bool keepWhereTrue = false;
    if (fillOp && a[1].isRef()) {
        scores = refArg(x, 0), mask = a[1].ref(), fill = scalarOf(graph, a[2]);
    } else if (whereOp && a[0].isRef()) {
        keepWhereTrue = !scalarOf(graph, a[1]).has_value();
        scores = refArg(x, keepWhereTrue ? 1 : 2), mask = a[0].ref(), fill = scalarOf(graph, a[keepWhereTrue ? 2 : 1]);
    }
    // A mask with more dims than the scores would broadcast them up.
    if (!scores || !fill || mask.node->meta(mask.index).dtype != DType::Bool || !readOnlyBy(scores, {x})
        || x->meta().sizes != scores->meta().sizes)
        return x;
    m.maskedWhereFalse = keepWhereTrue;
    m.masked = mask;
    m.fill = *fill;
    m.nodes.push_back(x);
    return scores;
}

// mul(s, c), mul(c, s) or div(s, c) by a constant. Returns s, or x itself.
Node *unscaled(const Graph &graph, Node *x, Attention &m)
{
    const bool mul = isCall(x, "aten.mul"), div = isCall(x, "aten.div");
    if ((!mul && !div) || x->args().size() < 2 || (div && x->args().size() > 2 && !x->args()[2].constant.isNone()))
        return x;
    const bool constantFirst = mul && scalarOf(graph, x->args()[0]).has_value();
    const std::optional<double> c = scalarOf(graph, x->args()[constantFirst ? 0 : 1]);
    Node *s = refArg(x, constantFirst ? 1 : 0);
    if (!c || !s || !readOnlyBy(s, {x}) || (div && *c == 0) || x->meta().sizes != s->meta().sizes)
        return x;
    m.scale *= div ? 1.0 / *c : *c;
    m.nodes.push_back(x);
    return s;
}

bool sameBatch(const Shape &a, const Shape &b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin());
}

// The shapes fusescope.attention takes: f32 [..., L, E] x [..., E, S], weights x [..., S, Ev], equal batch dims.
bool shapesFit(const Attention &m)
{
    const TensorMeta &q = m.query.node->meta(m.query.index), &k = m.keyT.node->meta(m.keyT.index),
                     &v = m.value.node->meta(m.value.index);
    for (const TensorMeta *t : {&q, &k, &v}) {
        if (t->dtype != DType::F32 || t->sizes.size() < 3)
            return false;
    }
    return sameBatch(q.sizes, k.sizes) && sameBatch(q.sizes, v.sizes);
}

std::optional<Attention> attentionAt(const Graph &graph, Node *second)
{
    Attention m;
    m.second = second;
    Node *weights = refArg(second, 0);
    if (!isCall(second, "aten.matmul") || !weights || !second->args()[1].isRef())
        return std::nullopt;
    m.value = second->args()[1].ref();
    Node *x = softmaxInput(weights, m);
    if (!x)
        return std::nullopt;
    Node *first = unscaled(graph, unmasked(graph, x, m), m);
    if (!isCall(first, "aten.matmul") || !first->args()[0].isRef() || !first->args()[1].isRef())
        return std::nullopt;
    m.first = first;
    m.nodes.push_back(first);
    m.keyT = first->args()[1].ref();
    Node *q = refArg(first, 0);
    if (q && readOnlyBy(q, {first}))
        q = unscaled(graph, q, m); // attention's decomposition scales the query
    m.query = q ? q->out() : first->args()[0].ref();
    if (!shapesFit(m))
        return std::nullopt;
    return m;
}

// transpose(result, -3, -2), as a transpose or a permute, where the heads
// are merged next: the node to take over from with a transposed result.
Node *headsTransposeOf(const Node *result)
{
    if (result->users().size() != 1)
        return nullptr;
    Node *u = result->users().front();
    const int64_t rank = static_cast<int64_t>(result->meta().sizes.size());
    if (rank < 3 || refArg(u, 0) != result || u->args().size() < 2 || u->args()[1].isRef())
        return nullptr;
    auto dim = [rank, u](int64_t d) { return wrapDim(d, rank, u->target.c_str()); };
    if (isCall(u, "aten.transpose") && u->args().size() == 3 && !u->args()[2].isRef()) {
        const int64_t a = dim(u->args()[1].constant.toInt()), b = dim(u->args()[2].constant.toInt());
        return std::min(a, b) == rank - 3 && std::max(a, b) == rank - 2 ? u : nullptr;
    }
    if (!isCall(u, "aten.permute") || !u->args()[1].constant.isIntList())
        return nullptr;
    const IntList dims = u->args()[1].constant.toIntList();
    if (static_cast<int64_t>(dims.size()) != rank)
        return nullptr;
    for (int64_t i = 0; i < rank; ++i) {
        const int64_t want = i == rank - 3 ? rank - 2 : i == rank - 2 ? rank - 3 : i;
        if (dim(dims[static_cast<size_t>(i)]) != want)
            return nullptr;
    }
    return u;
}

// The key that keyT is the transpose of: the input of keyT itself where that
// is a transpose of the last two dims (k.transpose(-2, -1), as attention is
// written), else a new transpose, which a transpose of a transpose would be.
NodeRef keyOf(Graph &graph, const Attention &m)
{
    const Node *t = m.keyT.node;
    const int64_t rank = static_cast<int64_t>(t->meta(m.keyT.index).sizes.size());
    if (isCall(t, "aten.transpose") && t->args().size() == 3 && t->args()[0].isRef() && !t->args()[1].isRef()
        && !t->args()[2].isRef()) {
        const int64_t a = wrapDim(t->args()[1].constant.toInt(), rank, t->target.c_str());
        const int64_t b = wrapDim(t->args()[2].constant.toInt(), rank, t->target.c_str());
        if (std::min(a, b) == rank - 2 && std::max(a, b) == rank - 1)
            return t->args()[0].ref();
    }
    return computedNode(graph, *m.second, "aten.transpose",
                        {Arg::of(m.keyT), Arg::of(Value(rank - 2)), Arg::of(Value(rank - 1))}, "key")
        ->out();
}

Node *replace(Graph &graph, const Attention &m)
{
    const NodeRef key = keyOf(graph, m);
    Arg masked = Arg::of(Value());
    if (m.masked && m.maskedWhereFalse)
        masked = Arg::of(computedNode(graph, *m.second, "aten.logical_not", {Arg::of(*m.masked)}, "masked")->out());
    else if (m.masked)
        masked = Arg::of(*m.masked);
    Node *heads = headsTransposeOf(m.second);
    Node *n = computedNode(graph, *m.second, "fusescope.attention",
                           {Arg::of(m.query), Arg::of(key), Arg::of(m.value), masked, Arg::of(Value(m.fill)),
                            Arg::of(Value(m.scale)), Arg::of(Value(heads != nullptr))},
                           "attention");
    for (const Node *part : m.nodes)
        addOrigins(*n, *part);
    if (heads)
        addOrigins(*n, *heads);
    graph.replaceUses((heads ? heads : m.second)->out(), n->out());
    return n;
}

} // namespace

int fuseAttention(Graph &graph, PassLog &log)
{
    int fused = 0;
    for (Node *n : graph.nodes()) {
        if (n->users().empty())
            continue;
        const std::optional<Attention> m = attentionAt(graph, n);
        if (!m)
            continue;
        const bool transposed = replace(graph, *m)->args()[6].constant.toBool();
        log.push_back("attention: " + m->first->name + " … " + m->second->name + (m->masked ? ", masked" : "")
                      + " run as one fusescope.attention: the scores stay in the cache, row block by row block"
                      + (transposed ? "; written with the heads transposed, as they are merged" : ""));
        ++fused;
    }
    return fused;
}

} // namespace fusescope::compiler
