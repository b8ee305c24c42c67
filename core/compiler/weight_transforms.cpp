// Weight transforms moved to compile time. A 3x3 convolution that runs as
// Winograd F(2x2, 3x3) transforms its weights on every call in eager mode;
// where the weights are parameters of the compiled graph, the transform
// becomes a node of its own (fusescope.winograd_weights), which constant
// folding computes once, and the convolution reads the result
// (fusescope.conv2d_winograd). The arithmetic is the eager kernel's, so
// where eager mode also picks Winograd the outputs are unchanged bit for
// bit; with the transform paid once, Winograd also pays for convolutions
// with fewer output tiles, which eager mode runs through im2col, and large
// planes take F(4x4, 3x3), whose bigger weight transform eager mode never pays.
#include "core/compiler/passes.h"
#include "core/compiler/tracer.h"
#include "core/ops/conv.h"

#include <algorithm>

namespace fusescope::compiler {
namespace {

// The weights are a parameter whose values the compiler holds on the CPU,
// where folding can transform them.
bool hasConstantWeight(const Graph &graph, const Node &n)
{
    if (n.args().size() != 7 || !n.args()[1].isRef() || n.args()[1].ref().node->kind != NodeKind::GetAttr)
        return false;
    return graph.attrs.at(n.args()[1].ref().node->target).device() == kCPU;
}

// Output geometry of a node whose arguments are already in place.
TensorMeta inferMeta(const Graph &graph, const Node &n)
{
    TracerScope noTracer(nullptr);
    const Args args = nodeArgs(graph, n);
    return outputMeta(args, callOp(OpRegistry::instance().get(n.target), args).at(0));
}

} // namespace

Node *computedNode(Graph &graph, const Node &like, const char *target, std::vector<Arg> args, const char *name)
{
    Node *n = graph.add(NodeKind::CallFunction, target, std::move(args), {TensorMeta{}}, name,
                        const_cast<Node *>(&like));
    n->outputs = {inferMeta(graph, *n)};
    n->modulePath = like.modulePath;
    n->origins = like.origins;
    return n;
}

void addOrigins(Node &to, const Node &from)
{
    for (int o : from.origins) {
        if (std::find(to.origins.begin(), to.origins.end(), o) == to.origins.end())
            to.origins.push_back(o);
    }
}

int splitWinogradConvolutions(Graph &graph, PassLog &log)
{
    int split = 0;
    for (Node *n : graph.nodes()) {
        if (n->kind != NodeKind::CallFunction || n->target != "aten.conv2d" || n->users().empty()
            || !hasConstantWeight(graph, *n))
            continue;
        const int tile = ops::conv2dWinogradTile(nodeArgs(graph, *n), true);
        if (!tile)
            continue;
        const std::vector<Arg> &a = n->args();
        Node *u = computedNode(graph, *n, "fusescope.winograd_weights", {a[1], Arg::of(Value(int64_t(tile)))},
                          "winograd_weights");
        Node *conv = computedNode(graph, *n, "fusescope.conv2d_winograd", {a[0], Arg::of(u->out()), a[2], a[4]},
                             "conv2d_winograd");
        graph.replaceUses(n->out(), conv->out());
        const std::string f = tile == 4 ? "F(4x4, 3x3)" : "F(2x2, 3x3)";
        log.push_back("winograd: " + n->name + " (3x3 convolution of " + a[1].ref().node->target + ") runs as " + f
                      + " on weights transformed once, not on every call");
        ++split;
    }
    return split;
}

} // namespace fusescope::compiler
