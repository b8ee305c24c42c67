#include "core/compiler/row_max.h"
#include "core/ops/registry.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace fusescope::compiler {
namespace {

// Ops whose result is NaN wherever one of their inputs is.
bool propagatesNaN(const std::string &target)
{
    static const std::set<std::string> ops = {"aten.add", "aten.sub", "aten.mul",  "aten.div",   "aten.neg",
                                              "aten.exp", "aten.log", "aten.sqrt", "aten.rsqrt", "aten.reciprocal"};
    return ops.count(target) > 0;
}

bool sumsRows(const std::string &target)
{
    return target == "aten.sum" || target == "aten.mean";
}

// What a NaN in r's input row makes of a node, with r computed without the count.
enum class Nan { None, Element, Row };

std::vector<NodeRef> storageInputs(const Node *n)
{
    std::vector<NodeRef> in = n->inputs();
    for (NodeRef &i : in)
        i = storageRoot(i); // views of members are index arithmetic, not members
    return in;
}

// Node n of the kernel (inputs `in`, as storageInputs gives them), which
// reads r or a node that does: what a NaN in the row x of r = max(x) makes of
// it, or nothing when n may hide the NaN.
std::optional<Nan> nanOf(const Node *n, const std::vector<NodeRef> &in, const Node *r,
                         const std::map<const Node *, Nan> &nan)
{
    Nan worst = Nan::None;
    for (const NodeRef &i : in) {
        const auto it = nan.find(i.node);
        worst = std::max(worst, it == nan.end() ? Nan::None : it->second);
    }
    if (n->target == "aten.sub" && in.size() >= 2 && n->inputs()[0] == r->inputs().front() && in[1].node == r)
        return Nan::Element; // x - r is NaN where x is
    if (sumsRows(n->target) && worst != Nan::None)
        return Nan::Row;
    if (propagatesNaN(n->target))
        return worst;
    return std::nullopt;
}

} // namespace

bool rowNaNReachesOutputs(const Kernel &k, const Node *r)
{
    if (k.kind != KernelKind::Reduction || r->inputs().empty())
        return false;
    std::map<const Node *, Nan> nan;
    std::set<const Node *> dependsOnR = {r};
    for (const Node *n : k.nodes) { // graph order: inputs come first
        const std::vector<NodeRef> in = storageInputs(n);
        if (n == r || std::none_of(in.begin(), in.end(), [&](const NodeRef &i) { return dependsOnR.count(i.node); }))
            continue;
        dependsOnR.insert(n);
        const std::optional<Nan> v = nanOf(n, in, r, nan);
        if (!v)
            return false; // r flows through an op that may hide a NaN
        nan[n] = *v;
    }
    for (const NodeRef &o : k.outputs) {
        if (o.node == r || (dependsOnR.count(o.node) && nan[o.node] != Nan::Row))
            return false;
    }
    const std::set<const Node *> members(k.nodes.begin(), k.nodes.end());
    return std::all_of(r->users().begin(), r->users().end(), [&](const Node *u) { return members.count(u) > 0; });
}

bool shiftedByRowMax(const Kernel &k, const Node *n)
{
    if (n->inputs().empty())
        return false;
    const Node *sub = storageRoot(n->inputs().front()).node;
    const std::vector<NodeRef> in = sub->inputs();
    if (sub->target != "aten.sub" || in.size() != 2 || std::find(k.nodes.begin(), k.nodes.end(), sub) == k.nodes.end())
        return false;
    const std::vector<Arg> &args = sub->args();
    if (args.size() > 2 && !(args[2].kind == Arg::Kind::Const && args[2].constant.toDouble() == 1.0))
        return false; // x - alpha * m
    const Node *m = storageRoot(in[1]).node;
    const bool member = std::find(k.nodes.begin(), k.nodes.end(), m) != k.nodes.end();
    const OpDef *op = OpRegistry::instance().find(m->target);
    return member && op && op->reduceFn == "max" && !m->inputs().empty() && m->inputs().front() == in[0];
}

} // namespace fusescope::compiler
