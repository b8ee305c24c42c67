// relu(conv) as one op. A convolution followed by relu wrote its whole output,
// then a generated epilogue read it back and wrote it again; the convolution
// kernels can apply the relu as they store each block instead
// (fusescope.conv2d_relu, and conv2d_winograd's `relu`). Only where the relu
// is the convolution's one user: another reader needs the value before it.
#include "core/compiler/passes.h"
#include "core/compiler/tracer.h"

#include <algorithm>

namespace fusescope::compiler {
namespace {

// The convolution `relu` reads, if it can take the relu in.
Node *convolutionUnder(const Node &relu)
{
    if (relu.kind != NodeKind::CallFunction || relu.target != "aten.relu" || relu.users().empty()
        || relu.args().empty() || !relu.args()[0].isRef())
        return nullptr;
    Node *conv = relu.args()[0].ref().node;
    if (conv->kind != NodeKind::CallFunction || conv->users().size() != 1 || conv->outputs.size() != 1)
        return nullptr;
    const std::vector<Arg> &a = conv->args();
    if (conv->target == "aten.conv2d")
        return a.size() == 7 ? conv : nullptr;
    const bool hasRelu = a.size() > 4 && (a[4].isRef() || (a[4].constant.isBool() && a[4].constant.toBool()));
    return conv->target == "fusescope.conv2d_winograd" && a.size() >= 4 && !hasRelu ? conv : nullptr;
}

Node *withRelu(Graph &graph, const Node &conv, const Node &relu)
{
    std::vector<Arg> args = conv.args();
    const bool winograd = conv.target == "fusescope.conv2d_winograd";
    if (winograd) {
        args.resize(4);
        args.push_back(Arg::of(Value(true)));
    }
    Node *n = graph.add(NodeKind::CallFunction, winograd ? conv.target : "fusescope.conv2d_relu", std::move(args),
                        relu.outputs, conv.name + "_relu", const_cast<Node *>(&relu));
    n->modulePath = conv.modulePath;
    n->origins = conv.origins;
    for (int o : relu.origins) {
        if (std::find(n->origins.begin(), n->origins.end(), o) == n->origins.end())
            n->origins.push_back(o);
    }
    return n;
}

} // namespace

int fuseConvolutionRelus(Graph &graph, PassLog &log)
{
    int fused = 0;
    for (Node *n : graph.nodes()) {
        Node *conv = convolutionUnder(*n);
        if (!conv)
            continue;
        Node *merged = withRelu(graph, *conv, *n);
        graph.replaceUses(n->out(), merged->out());
        log.push_back("relu into its convolution: " + n->name + " applied as " + conv->name
                      + " stores its output (" + merged->target + ")");
        ++fused;
    }
    return fused;
}

} // namespace fusescope::compiler
