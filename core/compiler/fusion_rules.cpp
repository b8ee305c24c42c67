#include "core/compiler/fusion_rules.h"

#include "core/ops/registry.h"

#include <algorithm>
#include <set>

namespace fusescope::compiler {

bool codegenDType(DType t)
{
    return t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::I64 || t == DType::Bool;
}

bool isAliasView(const Node &n)
{
    if (n.kind != NodeKind::CallFunction)
        return false;
    const OpDef *op = OpRegistry::instance().find(n.target);
    if (!op || op->kind != OpKind::View)
        return false;
    return std::all_of(n.outputs.begin(), n.outputs.end(), [](const TensorMeta &m) { return m.aliasOf >= 0; });
}

NodeRef storageRoot(NodeRef r)
{
    while (isAliasView(*r.node)) {
        const int arg = r.node->meta(r.index).aliasOf;
        r = r.node->args()[static_cast<size_t>(arg)].ref();
    }
    return r;
}

std::vector<Node *> readersOf(Node *n)
{
    std::vector<Node *> out;
    for (Node *u : n->users()) {
        if (isAliasView(*u)) {
            for (Node *r : readersOf(u))
                out.push_back(r);
        } else {
            out.push_back(u);
        }
    }
    return out;
}

std::vector<int64_t> reductionDims(const Node &n)
{
    const auto rank = static_cast<int64_t>(n.args()[0].ref().node->meta(n.args()[0].ref().index).sizes.size());
    const Value &dims = n.args()[1].constant;
    std::vector<int64_t> out;
    if (dims.isNone() || (dims.isIntList() && dims.toIntList().empty())) {
        for (int64_t d = 0; d < rank; ++d)
            out.push_back(d);
        return out;
    }
    for (int64_t d : dims.toIntList())
        out.push_back(d < 0 ? d + rank : d);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

namespace {

bool isReduced(int64_t d, const std::vector<int64_t> &r)
{
    return std::find(r.begin(), r.end(), d) != r.end();
}

Shape keptShape(const Shape &s, const std::vector<int64_t> &r)
{
    Shape out = s;
    for (int64_t d : r)
        out[static_cast<size_t>(d)] = 1;
    return out;
}

Shape droppedShape(const Shape &s, const std::vector<int64_t> &r)
{
    Shape out;
    for (size_t d = 0; d < s.size(); ++d) {
        if (!isReduced(static_cast<int64_t>(d), r))
            out.push_back(s[d]);
    }
    return out;
}

} // namespace

Level levelOf(const Shape &sizes, const Shape &domain, const std::vector<int64_t> &reduceDims)
{
    if (sizes == domain)
        return Level::Full;
    if (!reduceDims.empty() && (sizes == keptShape(domain, reduceDims) || sizes == droppedShape(domain, reduceDims)))
        return Level::Reduced;
    return Level::Other;
}

bool broadcastFollows(const Shape &v, const Shape &domain, const std::vector<int64_t> &reduceDims)
{
    if (v.size() > domain.size())
        return false;
    const size_t lead = domain.size() - v.size();
    for (size_t d = 0; d < domain.size(); ++d) {
        const int64_t vd = d < lead ? 1 : v[d - lead];
        const int64_t want = isReduced(static_cast<int64_t>(d), reduceDims) ? 1 : domain[d];
        if (vd != want)
            return false;
    }
    return true;
}

// --- initial groups --------------------------------------------------------------------

namespace {

bool allDTypesSupported(const Node &n)
{
    for (const NodeRef &r : n.inputs()) {
        if (!codegenDType(r.node->meta(r.index).dtype))
            return false;
    }
    return std::all_of(n.outputs.begin(), n.outputs.end(), [](const TensorMeta &m) { return codegenDType(m.dtype); });
}

// An integer division (div with a rounding mode, fmod, remainder): its eager
// kernel refuses zero divisors with an error naming the op, where generated
// code would trap.
bool dividesIntegers(const Node &n, const OpDef &op)
{
    return op.checksIntDivisor && !isFloating(n.meta().dtype);
}

bool isGemmAnchor(const Node &n, const OpDef &op)
{
    const bool f32 = n.outputs.size() == 1 && n.meta().dtype == DType::F32;
    const bool gemm = (op.kind == OpKind::Matmul
                       && (n.target == "aten.mm" || n.target == "aten.bmm" || n.target == "fusescope.mm_bf16x6"))
        || n.target == "aten.matmul" || op.kind == OpKind::Convolution;
    return f32 && gemm;
}

} // namespace

bool isFusableCat(const Node &n)
{
    constexpr size_t kMaxInputs = 4; // a chain of selects per element beyond that
    if (n.target != "aten.cat" || n.outputs.size() != 1 || n.args().size() < 2
        || n.args()[0].kind != Arg::Kind::RefList || !n.args()[1].constant.isInt())
        return false;
    const TensorMeta &out = n.meta();
    const auto rank = static_cast<int64_t>(out.sizes.size());
    const std::vector<NodeRef> &ins = n.args()[0].refs;
    if (rank < 2 || ins.size() < 2 || ins.size() > kMaxInputs || !codegenDType(out.dtype)
        || wrapDim(n.args()[1].constant.toInt(), rank, "aten.cat") != rank - 1)
        return false;
    // Leading dims all 1: the plan-memory stage lays the inputs end to end in
    // the output instead, which copies nothing at all.
    if (std::all_of(out.sizes.begin(), out.sizes.end() - 1, [](int64_t s) { return s == 1; }))
        return false;
    return std::all_of(ins.begin(), ins.end(), [&](const NodeRef &r) {
        const TensorMeta &m = r.node->meta(r.index);
        return m.dtype == out.dtype && static_cast<int64_t>(m.sizes.size()) == rank && m.sizes.back() > 0;
    });
}

bool feedsCatOnly(const Node &n)
{
    if (n.users().size() != 1 || !isFusableCat(*n.users().front()))
        return false;
    const OpDef *op = OpRegistry::instance().find(n.target);
    if (!op || op->kind != OpKind::Pointwise || op->scalarFn.empty() || n.outputs.size() != 1)
        return false;
    const std::vector<NodeRef> &ins = n.users().front()->args()[0].refs;
    return std::count_if(ins.begin(), ins.end(), [&](const NodeRef &r) { return r.node == &n; }) == 1;
}

std::optional<Group> initialGroup(const Node &n)
{
    if (n.kind != NodeKind::CallFunction || isAliasView(n))
        return std::nullopt;
    Node *self = const_cast<Node *>(&n);
    Group g;
    g.nodes = {self};
    const OpDef *op = OpRegistry::instance().find(n.target);
    const bool supported = op && n.outputs.size() == 1 && allDTypesSupported(n) && !dividesIntegers(n, *op);
    // Creation ops (full, arange) have a scalarFn but no operand: their value
    // depends on the index, which the loops do not expose.
    const bool pointwise = op && op->kind == OpKind::Pointwise && !op->scalarFn.empty() && !n.inputs().empty();
    if ((supported && pointwise) || isFusableCat(n)) {
        g.kind = KernelKind::Pointwise;
        g.domain = n.meta().sizes;
    } else if (supported && !op->reduceFn.empty() && !n.args()[0].ref().node->meta().sizes.empty()) {
        g.kind = KernelKind::Reduction;
        g.domain = n.args()[0].ref().node->meta(n.args()[0].ref().index).sizes;
        g.reduceDims = reductionDims(n);
    } else if (op && isGemmAnchor(n, *op)) {
        g.kind = KernelKind::Gemm;
        g.anchor = self;
        g.hasDomain = false;
    } else {
        g.kind = KernelKind::Extern;
        g.anchor = self;
    }
    return g;
}

// --- merging -------------------------------------------------------------------------

namespace {

bool isReduction(const Node &n)
{
    const OpDef *op = OpRegistry::instance().find(n.target);
    return op && !op->reduceFn.empty();
}

bool contiguousAlias(const TensorMeta &m)
{
    return m.offset == 0 && m.strides == contiguousStrides(m.sizes);
}

// Checks one internal edge producer -> node of a merged group.
std::optional<std::string> checkInternalEdge(const Group &g, const Node &n, Level level, const NodeRef &ref)
{
    const NodeRef root = storageRoot(ref);
    Node *producer = root.node;
    if (producer == g.anchor) {
        if (ref.node != producer && !contiguousAlias(ref.node->meta(ref.index)))
            return n.name + " reads the output of " + producer->name + " through a strided view ("
                + ref.node->target + ")";
        return std::nullopt;
    }
    if (ref.node != producer)
        return n.name + " reads " + producer->name + " through a view (" + ref.node->target + ")";
    const Level lp = isReduction(*producer) ? Level::Reduced : levelOf(producer->meta().sizes, g.domain, g.reduceDims);
    if (level == Level::Reduced && lp != Level::Reduced)
        return n.name + " has the reduced shape but reads " + producer->name + " of the full shape";
    if (level == Level::Full && lp == Level::Reduced && !broadcastFollows(producer->meta().sizes, g.domain, g.reduceDims))
        return producer->name + " " + shapeStr(producer->meta().sizes) + " does not broadcast along the reduction of "
            + shapeStr(g.domain);
    return std::nullopt;
}

std::optional<std::string> checkNode(const Group &g, const Node &n, const std::set<const Node *> &members)
{
    if (&n == g.anchor) {
        for (const NodeRef &ref : n.inputs()) {
            if (members.count(storageRoot(ref).node))
                return n.target + " reads its operands from memory, " + storageRoot(ref).node->name
                    + " cannot be computed in its kernel";
        }
        return std::nullopt;
    }
    if (isReduction(n)) {
        const NodeRef in = n.args()[0].ref();
        if (in.node->meta(in.index).sizes != g.domain || reductionDims(n) != g.reduceDims)
            return n.name + " reduces another iteration space than " + shapeStr(g.domain);
        return std::nullopt;
    }
    if (isFusableCat(n)) {
        if (g.kind != KernelKind::Pointwise)
            return n.name + " (aten.cat) joins pointwise kernels only";
        for (const NodeRef &ref : n.inputs()) {
            const Node *root = storageRoot(ref).node;
            if (members.count(root) && !(ref.node == root && feedsCatOnly(*root)))
                return n.name + " (aten.cat) would read " + root->name + " computed in the same kernel; a fused cat"
                    + " reads its inputs from memory or from ops only it reads";
        }
    }
    if (feedsCatOnly(n) && members.count(n.users().front())) {
        for (const NodeRef &ref : n.inputs()) {
            if (members.count(storageRoot(ref).node))
                return n.name + " feeds a cat and so runs at its own index; it reads its inputs from memory";
        }
        return std::nullopt;
    }
    const Level level = levelOf(n.meta().sizes, g.domain, g.reduceDims);
    if (level == Level::Other)
        return n.name + " " + shapeStr(n.meta().sizes) + " is outside the iteration space " + shapeStr(g.domain);
    for (const NodeRef &ref : n.inputs()) {
        if (!members.count(storageRoot(ref).node))
            continue;
        if (auto why = checkInternalEdge(g, n, level, ref))
            return why;
    }
    return std::nullopt;
}

std::optional<std::string> validate(const Group &g)
{
    const std::set<const Node *> members(g.nodes.begin(), g.nodes.end());
    for (const Node *n : g.nodes) {
        if (auto why = checkNode(g, *n, members))
            return why;
    }
    return std::nullopt;
}

std::string ownKernel(const Node &n)
{
    const OpDef *op = OpRegistry::instance().find(n.target);
    const bool divides = op && !n.outputs.empty() && dividesIntegers(n, *op);
    return n.target + " runs as its own kernel ("
        + (divides ? "an integer division: its eager kernel checks for zero divisors" : "no codegen for it") + ")";
}

std::optional<std::string> kindConflict(const Group &p, const Group &q, const Node *from, const Node *to)
{
    if (p.kind == KernelKind::Extern)
        return ownKernel(*from);
    if (q.kind == KernelKind::Extern)
        return ownKernel(*to);
    if (p.anchor && q.anchor)
        return "one kernel holds at most one GEMM or convolution";
    const bool reduction = p.kind == KernelKind::Reduction || q.kind == KernelKind::Reduction;
    if ((p.anchor || q.anchor) && reduction)
        return "a GEMM epilogue holds pointwise ops only";
    return std::nullopt;
}

// The edge itself: a view between two fused ops would need its own indexing
// inside the loop; only a GEMM's output may be read through a reshape.
std::optional<std::string> checkEdge(const Node *from, const Node *to, const Group &p)
{
    std::optional<std::string> why;
    for (const NodeRef &ref : to->inputs()) {
        if (storageRoot(ref).node != from)
            continue;
        if (ref.node == from)
            return std::nullopt;
        if (from != p.anchor)
            why = to->name + " reads " + from->name + " through a view (" + ref.node->target + ")";
    }
    return why;
}

std::string mergeReason(const Group &p, const Group &q)
{
    if (p.anchor)
        return "epilogue of " + p.anchor->target;
    if (q.anchor)
        return "pointwise input of the epilogue of " + q.anchor->target;
    if (p.kind == KernelKind::Reduction && q.kind == KernelKind::Reduction)
        return "reductions over the same rows";
    if (p.kind == KernelKind::Reduction)
        return "epilogue of a reduction";
    if (q.kind == KernelKind::Reduction)
        return "prologue of a reduction";
    return "pointwise chain";
}

// Domain and reduction dims of the merged group, or the reason they clash.
std::optional<std::string> mergeDomain(const Group &p, const Group &q, Group &m)
{
    const bool pr = p.kind == KernelKind::Reduction, qr = q.kind == KernelKind::Reduction;
    if (pr && qr && (p.domain != q.domain || p.reduceDims != q.reduceDims))
        return "reductions over different iteration spaces " + shapeStr(p.domain) + " and " + shapeStr(q.domain);
    if (pr || qr) {
        const Group &r = pr ? p : q;
        m.domain = r.domain;
        m.reduceDims = r.reduceDims;
        return std::nullopt;
    }
    if (p.hasDomain && q.hasDomain && p.domain != q.domain)
        return "different iteration spaces " + shapeStr(p.domain) + " and " + shapeStr(q.domain);
    m.hasDomain = p.hasDomain || q.hasDomain;
    m.domain = p.hasDomain ? p.domain : q.domain;
    return std::nullopt;
}

} // namespace

void settleLoneCats(std::vector<Group> &groups)
{
    for (Group &g : groups) {
        if (g.kind == KernelKind::Pointwise && g.nodes.size() == 1 && g.nodes.front()->target == "aten.cat") {
            g.kind = KernelKind::Extern;
            g.anchor = g.nodes.front();
        }
    }
}

std::optional<Group> mergeGroups(const Group &p, const Group &q, const Node *from, const Node *to,
                                 const std::unordered_map<const Node *, int> &position, std::string &why)
{
    if (auto conflict = kindConflict(p, q, from, to)) {
        why = *conflict;
        return std::nullopt;
    }
    if (auto view = checkEdge(from, to, p)) {
        why = *view;
        return std::nullopt;
    }
    Group m;
    m.anchor = p.anchor ? p.anchor : q.anchor;
    m.kind = m.anchor ? KernelKind::Gemm
        : (p.kind == KernelKind::Reduction || q.kind == KernelKind::Reduction) ? KernelKind::Reduction
                                                                              : KernelKind::Pointwise;
    // An op whose only reader is a cat runs inside the cat's kernel over its own, narrower shape.
    const bool intoCat = p.nodes.size() == 1 && p.kind == KernelKind::Pointwise && q.kind == KernelKind::Pointwise
        && feedsCatOnly(*from);
    if (intoCat) {
        m.domain = q.domain;
    } else if (auto clash = mergeDomain(p, q, m)) {
        why = *clash;
        return std::nullopt;
    }
    m.nodes = p.nodes;
    m.nodes.insert(m.nodes.end(), q.nodes.begin(), q.nodes.end());
    std::sort(m.nodes.begin(), m.nodes.end(), [&](Node *a, Node *b) { return position.at(a) < position.at(b); });
    if (auto invalid = validate(m)) {
        why = *invalid;
        return std::nullopt;
    }
    m.reasonOfMerge = mergeReason(p, q);
    return m;
}

} // namespace fusescope::compiler
