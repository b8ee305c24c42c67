// A per-channel affine op after a convolution folds into the convolution's
// weights and bias. Batch norm in eval mode decomposes into
// ((conv - mean) * rsqrt(var + eps)) * gamma + beta over [C,1,1] constants:
// four passes over the output in the epilogue, each of which is
//   conv(x, W, b) * s = conv(x, W * s[:,None,None,None], b * s)
//   conv(x, W, b) / s = conv(x, W / s[:,None,None,None], b / s)
//   conv(x, W, b) + t = conv(x, W, b + t)
//   conv(x, W, b) - t = conv(x, W, b - t)
// with W, b, s and t constants, so constant folding computes the new weights
// once (PyTorch's freezing does the same). Only where the convolution's one
// reader is the affine op; the rounding differs from the unfolded form by a
// few ulps.
#include "core/compiler/passes.h"
#include "core/compiler/tracer.h"

#include <algorithm>
#include <optional>

namespace fusescope::compiler {
namespace {

// A parameter, or ops on parameters only (what constant folding will compute).
bool constantExpression(const Graph &graph, const Node *n, int depth = 0)
{
    if (n->kind == NodeKind::GetAttr)
        return !graph.attrs.at(n->target).isMeta();
    const std::vector<NodeRef> inputs = n->kind == NodeKind::CallFunction ? n->inputs() : std::vector<NodeRef>();
    if (depth > 8 || inputs.empty())
        return false;
    return std::all_of(inputs.begin(), inputs.end(),
                       [&](const NodeRef &r) { return constantExpression(graph, r.node, depth + 1); });
}

// One value per output channel of an [N, C, H, W] output: [C, 1, 1] or [1, C, 1, 1].
bool perChannel(const Graph &graph, const NodeRef &r, int64_t channels)
{
    const Shape &s = r.node->meta(r.index).sizes;
    const bool shaped = (s.size() == 3 && s[0] == channels && s[1] == 1 && s[2] == 1)
        || (s.size() == 4 && s[0] == 1 && s[1] == channels && s[2] == 1 && s[3] == 1);
    return shaped && r.node->meta(r.index).dtype == DType::F32 && constantExpression(graph, r.node);
}

struct Affine {
    Node *conv = nullptr;
    NodeRef constant;
    int64_t channels = 0;
    char op = 0; // '*', '/', '+', '-'
};

bool alphaIsOne(const Node &n)
{
    return n.args().size() < 3 || (!n.args()[2].isRef() && n.args()[2].constant.isNumber()
                                   && n.args()[2].constant.toDouble() == 1.0);
}

// `n` as conv (op) constant, if it is one that folds.
std::optional<Affine> affineOf(const Graph &graph, const Node &n)
{
    static const std::pair<const char *, char> kOps[] = {
        {"aten.mul", '*'}, {"aten.div", '/'}, {"aten.add", '+'}, {"aten.sub", '-'}};
    const auto op = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto &o) { return n.target == o.first; });
    if (n.kind != NodeKind::CallFunction || op == std::end(kOps) || n.args().size() < 2 || !n.args()[0].isRef()
        || !n.args()[1].isRef())
        return std::nullopt;
    if ((op->second == '+' || op->second == '-') && !alphaIsOne(n))
        return std::nullopt;
    if (op->second == '/' && n.args().size() > 2 && !(!n.args()[2].isRef() && n.args()[2].constant.isNone()))
        return std::nullopt; // a rounding mode
    Node *conv = n.args()[0].ref().node;
    const bool isConv = conv->kind == NodeKind::CallFunction && conv->target == "aten.conv2d"
        && conv->args().size() == 7 && conv->users().size() == 1 && conv->outputs.size() == 1
        && conv->outputs[0].dtype == DType::F32 && conv->outputs[0].sizes.size() == 4 && conv->args()[1].isRef()
        && constantExpression(graph, conv->args()[1].ref().node)
        && (!conv->args()[2].isRef() || constantExpression(graph, conv->args()[2].ref().node));
    const int64_t channels = isConv ? conv->outputs[0].sizes.at(1) : 0;
    if (!isConv || n.outputs[0].sizes != conv->outputs[0].sizes || !perChannel(graph, n.args()[1].ref(), channels))
        return std::nullopt;
    return Affine{conv, n.args()[1].ref(), channels, op->second};
}

// The weight as base * factor, a factor per output channel, where an earlier
// fold made it so: a batch norm scales a weight twice (by 1 / sqrt(var + eps)
// and by its own weight), and the factors multiply first, so constant folding
// writes the whole weight once, not once per scale (ResNet-50's 212 products
// took 110 ms of a warm compile, most of it faulting in fresh pages).
const Node *scaledWeight(const Arg &weight, int64_t channels)
{
    if (!weight.isRef())
        return nullptr;
    const Node *m = weight.ref().node;
    const bool product = m->kind == NodeKind::CallFunction && m->target == "aten.mul" && m->users().size() == 1
        && m->args().size() == 2 && m->args()[0].isRef() && m->args()[1].isRef();
    if (!product)
        return nullptr;
    const TensorMeta &factor = m->args()[1].ref().node->meta(m->args()[1].ref().index);
    const TensorMeta &base = m->args()[0].ref().node->meta(m->args()[0].ref().index);
    const bool perChannel = factor.sizes == Shape{channels, 1, 1, 1} && factor.dtype == DType::F32;
    return perChannel && base.sizes == m->meta().sizes && base.dtype == DType::F32 ? m : nullptr;
}

} // namespace

int foldAffineIntoConvolutions(Graph &graph, PassLog &log)
{
    int folded = 0;
    for (Node *n : graph.nodes()) {
        const std::optional<Affine> a = affineOf(graph, *n);
        if (!a)
            continue;
        const std::vector<Arg> &c = a->conv->args();
        const int64_t channels = a->channels;
        // Named after the convolution, so the folded constants say whose they are.
        auto call = [&](const char *target, std::vector<Arg> args, const std::string &role) {
            return computedNode(graph, *n, target, std::move(args), (a->conv->name + "_" + role).c_str());
        };
        const Arg vector = Arg::of(call("aten.reshape", {Arg::of(a->constant), Arg::of(Value(IntList{channels}))},
                                        "affine_vector")->out());
        Arg weight = c[1], bias = c[2];
        const bool scales = a->op == '*' || a->op == '/';
        const char *target = a->op == '*' ? "aten.mul" : a->op == '/' ? "aten.div" : a->op == '+' ? "aten.add" : "aten.sub";
        if (scales) {
            Arg factor = Arg::of(
                call("aten.reshape", {Arg::of(a->constant), Arg::of(Value(IntList{channels, 1, 1, 1}))}, "affine_filter")
                    ->out());
            if (a->op == '/')
                factor = Arg::of(call("aten.reciprocal", {factor}, "weight_factor")->out());
            Arg base = weight;
            if (const Node *scaled = scaledWeight(weight, channels)) {
                base = scaled->args()[0];
                factor = Arg::of(call("aten.mul", {scaled->args()[1], factor}, "weight_factor")->out());
            }
            weight = Arg::of(call("aten.mul", {base, factor}, "weight")->out());
            if (bias.isRef())
                bias = Arg::of(call(target, {bias, vector}, "bias")->out());
        } else if (bias.isRef()) {
            bias = Arg::of(call(target, {bias, vector}, "bias")->out());
        } else {
            bias = a->op == '+' ? vector : Arg::of(call("aten.neg", {vector}, "bias")->out());
        }
        Node *conv = computedNode(graph, *n, "aten.conv2d", {c[0], weight, bias, c[3], c[4], c[5], c[6]},
                                  a->conv->name.c_str());
        conv->modulePath = a->conv->modulePath;
        conv->origins = a->conv->origins;
        addOrigins(*conv, *n);
        graph.replaceUses(n->out(), conv->out());
        log.push_back("affine into its convolution: " + n->name + " (" + n->target + " by a per-channel constant) folded into "
                      + a->conv->name + "'s weights and bias");
        // The convolution keeps its name through every fold: a batch norm's
        // six ops named it conv2d_3_1_1_1_1_1 in the graph and its kernel.
        const std::string name = a->conv->name;
        graph.erase(n);
        graph.erase(a->conv);
        graph.rename(conv, name);
        ++folded;
    }
    return folded;
}

} // namespace fusescope::compiler
