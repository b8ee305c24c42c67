#include "core/compiler/row_max.h"
#include "core/ops/registry.h"

#include <algorithm>
#include <map>
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

} // namespace

bool rowNaNReachesOutputs(const Kernel &k, const Node *r)
{
    if (k.kind != KernelKind::Reduction || r->inputs().empty())
        return false;
    const NodeRef x = r->inputs().front();
    const std::set<const Node *> members(k.nodes.begin(), k.nodes.end());
    std::map<const Node *, Nan> nan;
    std::set<const Node *> dependsOnR = {r};
    for (const Node *n : k.nodes) { // graph order: inputs come first
        std::vector<NodeRef> in = n->inputs();
        for (NodeRef &i : in)
            i = storageRoot(i); // views of members are index arithmetic, not members
        const bool readsR
            = std::any_of(in.begin(), in.end(), [&](const NodeRef &i) { return dependsOnR.count(i.node); });
        if (n == r || !readsR)
            continue;
        dependsOnR.insert(n);
        Nan worst = Nan::None;
        for (const NodeRef &i : in)
            worst = std::max(worst, nan.count(i.node) ? nan[i.node] : Nan::None);
        if (n->target == "aten.sub" && in.size() >= 2 && n->inputs()[0] == x && in[1].node == r)
            nan[n] = Nan::Element; // x - r is NaN where x is
        else if (sumsRows(n->target) && worst != Nan::None)
            nan[n] = Nan::Row;
        else if (propagatesNaN(n->target))
            nan[n] = worst;
        else
            return false; // r flows through an op that may hide a NaN
    }
    for (const NodeRef &o : k.outputs) {
        if (o.node == r || (dependsOnR.count(o.node) && nan[o.node] != Nan::Row))
            return false;
    }
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
