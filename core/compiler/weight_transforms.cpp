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
#include "core/ops/amx_gemm.h"
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

// The parameter a matrix operand is, directly or through a transpose (as
// linear decomposes: mm(x, transpose(weight, 0, 1))); `values` is null for
// anything else.
struct ConstantMatrix {
    const Tensor *values = nullptr;
    Arg node;            // the parameter's node
    bool transposed = false;
};

ConstantMatrix constantMatrix(const Graph &graph, const Arg &a)
{
    if (!a.isRef())
        return {};
    Arg source = a;
    const Node *n = a.ref().node;
    const bool transposed = n->kind == NodeKind::CallFunction && n->target == "aten.transpose"
        && n->args()[0].isRef() && n->args()[0].ref().node->kind == NodeKind::GetAttr
        && n->args().size() == 3 && !n->args()[1].isRef() && !n->args()[2].isRef()
        && (n->args()[1].constant.toInt() - n->args()[2].constant.toInt()) % 2 != 0; // dims 0 and 1 of a matrix
    if (transposed) {
        source = n->args()[0];
        n = source.ref().node;
    }
    if (n->kind != NodeKind::GetAttr)
        return {};
    const Tensor &t = graph.attrs.at(n->target);
    if (t.device() != kCPU || t.dtype() != DType::F32 || t.dim() != 2)
        return {};
    return {&t, source, transposed};
}

// Products big enough for the tiles to pay for splitting the activations on
// every call: every layer of the standard workloads measured, from 256 x 512
// x 2048 to 1024 x 256 x 256, ran faster than OpenBLAS (bench_amx_gemm);
// smaller ones were not measured.
bool worthTiles(const TensorMeta &x, const TensorMeta &out)
{
    constexpr int64_t kMinRows = 128, kMinDepth = 256, kMinCols = 256;
    return x.sizes.size() == 2 && x.sizes[0] >= kMinRows && x.sizes[1] >= kMinDepth && out.sizes[1] >= kMinCols;
}

} // namespace

int packWeightsForTiles(Graph &graph, PassLog &log)
{
    if (!amx::available())
        return 0;
    int packed = 0;
    for (Node *n : graph.nodes()) {
        if (n->kind != NodeKind::CallFunction || n->target != "aten.mm" || n->users().empty()
            || n->meta().dtype != DType::F32 || !n->args()[0].isRef())
            continue;
        const ConstantMatrix w = constantMatrix(graph, n->args()[1]);
        const TensorMeta &x = n->args()[0].ref().node->meta(n->args()[0].ref().index);
        if (!w.values || x.dtype != DType::F32 || !worthTiles(x, n->meta()))
            continue;
        const Tensor &v = *w.values;
        if (!amx::splittable(v.data<float>(), v.size(0), v.size(1), v.stride(0), v.stride(1))) {
            const std::string why = "bf16x6: " + n->name
                + " stays on BLAS: its weight holds values three bf16 parts cannot carry exactly";
            if (std::find(log.begin(), log.end(), why) == log.end()) // simplify runs this pass every round
                log.push_back(why);
            continue;
        }
        Node *pack = computedNode(graph, *n, "fusescope.pack_bf16x6", {w.node, Arg::of(Value(w.transposed))},
                                  "pack_bf16x6");
        const int64_t cols = n->meta().sizes[1];
        Node *mm = computedNode(graph, *n, "fusescope.mm_bf16x6",
                                {n->args()[0], Arg::of(pack->out()), Arg::of(Value(cols))}, "mm_bf16x6");
        graph.replaceUses(n->out(), mm->out());
        log.push_back("bf16x6: " + n->name + " (" + shapeStr(x.sizes) + " by the constant " + shapeStr(v.sizes())
                      + ") runs on the AMX tiles, its weight split into three bf16 parts once, not on every call");
        ++packed;
    }
    return packed;
}

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
