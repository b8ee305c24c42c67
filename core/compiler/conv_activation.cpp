// relu(conv) and clamp(conv) as one op. A convolution followed by relu
// (or ONNX's Clip, relu6) wrote its whole output, then a generated epilogue
// read it back and wrote it again; the convolution kernels can apply the
// activation as they store each block instead (fusescope.conv2d_relu,
// fusescope.conv2d_clamp, conv2d_winograd's relu, min and max). Only where
// the activation is the convolution's one reader: another needs the value
// before it.
#include "core/compiler/passes.h"
#include "core/compiler/tracer.h"

namespace fusescope::compiler {
namespace {

bool constantScalar(const Arg &a)
{
    return !a.isRef() && (a.constant.isNone() || a.constant.isNumber());
}

// relu, or clamp with constant bounds (at least one).
bool isActivation(const Node &n)
{
    if (n.kind != NodeKind::CallFunction || n.users().empty() || n.args().empty() || !n.args()[0].isRef())
        return false;
    if (n.target == "aten.relu")
        return n.args().size() == 1;
    const std::vector<Arg> &a = n.args();
    return n.target == "aten.clamp" && a.size() == 3 && constantScalar(a[1]) && constantScalar(a[2])
        && !(a[1].constant.isNone() && a[2].constant.isNone());
}

bool hasActivation(const std::vector<Arg> &a)
{
    for (size_t i = 4; i < a.size(); ++i) {
        if (a[i].isRef() || (a[i].constant.isBool() ? a[i].constant.toBool() : !a[i].constant.isNone()))
            return true;
    }
    return false;
}

// The convolution `act` reads, if it can take the activation in.
Node *convolutionUnder(const Node &act)
{
    if (!isActivation(act))
        return nullptr;
    Node *conv = act.args()[0].ref().node;
    if (conv->kind != NodeKind::CallFunction || conv->users().size() != 1 || conv->outputs.size() != 1)
        return nullptr;
    const std::vector<Arg> &a = conv->args();
    if (conv->target == "aten.conv2d")
        return a.size() == 7 ? conv : nullptr;
    return conv->target == "fusescope.conv2d_winograd" && a.size() >= 4 && !hasActivation(a) ? conv : nullptr;
}

Node *withActivation(Graph &graph, const Node &conv, const Node &act)
{
    std::vector<Arg> args = conv.args();
    const bool relu = act.target == "aten.relu", winograd = conv.target == "fusescope.conv2d_winograd";
    std::string target = conv.target;
    if (winograd) {
        args.resize(4);
        args.push_back(Arg::of(Value(relu)));
    } else {
        target = relu ? "fusescope.conv2d_relu" : "fusescope.conv2d_clamp";
    }
    if (!relu) {
        args.push_back(act.args()[1]);
        args.push_back(act.args()[2]);
    }
    Node *n = graph.add(NodeKind::CallFunction, target, std::move(args), act.outputs,
                        conv.name + (relu ? "_relu" : "_clamp"), const_cast<Node *>(&act));
    n->modulePath = conv.modulePath;
    n->origins = conv.origins;
    addOrigins(*n, act);
    return n;
}

} // namespace

int fuseConvolutionActivations(Graph &graph, PassLog &log)
{
    int fused = 0;
    for (Node *n : graph.nodes()) {
        Node *conv = convolutionUnder(*n);
        if (!conv)
            continue;
        Node *merged = withActivation(graph, *conv, *n);
        graph.replaceUses(n->out(), merged->out());
        log.push_back(n->target.substr(n->target.find('.') + 1) + " into its convolution: " + n->name
                      + " applied as " + conv->name + " stores its output (" + merged->target + ")");
        ++fused;
    }
    return fused;
}

} // namespace fusescope::compiler
