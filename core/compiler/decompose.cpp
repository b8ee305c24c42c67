// The `decompose` stage: composite ops into the primitives that fuse.
#include "core/compiler/passes.h"
#include "core/compiler/tracer.h"

namespace fusescope::compiler {
namespace {

// Meta tensors for a node's arguments, each bound to the node output it stands for.
Args bindArgs(Graph &graph, const Node &node, GraphTracer &tracer)
{
    Args args = nodeArgs(graph, node);
    for (size_t i = 0; i < args.size(); ++i) {
        const Arg &a = node.args()[i];
        if (a.kind == Arg::Kind::Ref) {
            tracer.bind(args[i].toTensor(), a.ref());
        } else if (a.kind == Arg::Kind::RefList) {
            const TensorList &list = args[i].toTensorList();
            for (size_t j = 0; j < list.size(); ++j)
                tracer.bind(list[j], a.refs[j]);
        }
    }
    return args;
}

std::string describe(const std::vector<Node *> &added)
{
    std::string s;
    for (const Node *n : added)
        s += (s.empty() ? "" : ", ") + n->target;
    return s;
}

// Replaces one node by its decomposition; returns the nodes added.
std::vector<Node *> decomposeNode(Graph &graph, Node *node, const OpDef &op)
{
    const int firstNew = graph.nextId();
    GraphTracer tracer(graph);
    tracer.insertBefore(node, node);
    const Args args = bindArgs(graph, *node, tracer);
    TensorList outs;
    {
        TracerScope scope(&tracer);
        outs = op.decompose(args);
    }
    if (outs.size() != node->outputs.size())
        throw Error(op.name() + ": its decomposition returns " + std::to_string(outs.size()) + " tensors, expected "
                    + std::to_string(node->outputs.size()));
    for (size_t i = 0; i < outs.size(); ++i)
        graph.replaceUses(node->out(static_cast<int>(i)), tracer.refOf(outs[i]));
    std::vector<Node *> added;
    for (Node *n : graph.nodes()) {
        if (n->id >= firstNew)
            added.push_back(n);
    }
    graph.erase(node);
    return added;
}

} // namespace

void decompose(Graph &graph, PassLog &log)
{
    // Decompositions may produce other composites: repeat until none is left.
    for (int round = 0; round < 16; ++round) {
        int changed = 0;
        for (Node *n : graph.nodes()) {
            if (n->kind != NodeKind::CallFunction)
                continue;
            const OpDef *op = OpRegistry::instance().find(n->target);
            if (!op || !op->decompose || (op->keepWhole && op->keepWhole(nodeArgs(graph, *n))))
                continue;
            const std::string name = n->name, target = n->target;
            const std::vector<Node *> added = decomposeNode(graph, n, *op);
            log.push_back(name + " (" + target + ") -> " + describe(added));
            ++changed;
        }
        if (!changed)
            break;
        propagateMeta(graph);
    }
    graph.lint();
}

} // namespace fusescope::compiler
