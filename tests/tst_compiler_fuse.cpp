// The fuse stage: exact kernel counts for the shapes the issue names,
// refusals with their reasons, and a schedule that respects dependencies.
#include "core/compiler/capture.h"
#include "core/compiler/passes.h"
#include "core/compiler/schedule.h"
#include "core/nn/linear.h"
#include "core/ops/amx_gemm.h"
#include "core/ops/functional.h"
#include "core/ops/registry.h"
#include "core/tensor/factory.h"
#include "core/zoo/zoo.h"

#include <QTest>

#include <set>

using namespace fusescope;
using namespace fusescope::compiler;

namespace {

struct Fused {
    Graph graph;
    Schedule schedule;
    PassLog log;
};

Fused fuseGraph(Graph g)
{
    Fused f;
    decompose(g, f.log);
    simplify(g, f.log);
    f.graph = std::move(g);
    f.schedule = fuse(f.graph, f.log);
    f.graph.lint();
    return f;
}

Fused fuseZoo(const std::string &name)
{
    zoo::Instance inst = zoo::create(name, 0);
    return fuseGraph(captureModule(*inst.model, zooInputs(name)));
}

Fused fuseFn(const TensorFn &fn, const std::vector<Shape> &shapes, const NamedTensors &params = {})
{
    std::vector<CaptureInput> inputs;
    for (size_t i = 0; i < shapes.size(); ++i)
        inputs.push_back({"x" + std::to_string(i), shapes[i], {}, DType::F32});
    return fuseGraph(capture(fn, inputs, params));
}

int countKind(const Schedule &s, KernelKind kind)
{
    return static_cast<int>(std::count_if(s.kernels.begin(), s.kernels.end(),
                                          [&](const Kernel &k) { return k.kind == kind; }));
}

std::string joined(const PassLog &log)
{
    std::string s;
    for (const auto &l : log)
        s += l + "\n";
    return s;
}

bool hasRefusal(const Schedule &s, const std::string &fragment)
{
    return std::any_of(s.decisions.begin(), s.decisions.end(), [&](const FusionDecision &d) {
        return !d.fused && d.text().find(fragment) != std::string::npos;
    });
}

} // namespace

class TestCompilerFuse : public QObject
{
    Q_OBJECT

private slots:
    void pointwiseChainIsOneKernel()
    {
        const Fused f = fuseZoo("pointwise");
        QCOMPARE(f.schedule.kernels.size(), size_t(1));
        const Kernel &k = f.schedule.kernels[0];
        QCOMPARE(k.kind, KernelKind::Pointwise);
        QCOMPARE(k.nodes.size(), size_t(7)); // gelu decomposes into normal_cdf and mul
        QVERIFY(std::any_of(k.nodes.begin(), k.nodes.end(),
                            [](const Node *n) { return n->target == "fusescope.normal_cdf"; }));
        QCOMPARE(k.inputs.size(), size_t(3)); // x, weight, bias
        QCOMPARE(k.outputs.size(), size_t(1));
        QCOMPARE(k.bytesWritten, 4096.0 * 1024 * 4);
        for (const Node *n : k.nodes)
            QCOMPARE(n->kernel, k.name);
    }

    void softmaxLayerNormIsAtMostTwoKernels()
    {
        const Fused f = fuseZoo("softmax_ln");
        QVERIFY2(f.schedule.kernels.size() <= 2, joined(f.log).c_str());
        QCOMPARE(countKind(f.schedule, KernelKind::Reduction), int(f.schedule.kernels.size()));
    }

    void linearBiasGeluIsOneGemmWithEpilogue()
    {
        Generator gen(1);
        nn::Linear linear(64, 32, gen);
        const Fused f = fuseFn([&](const TensorList &in) { return TensorList{ops::gelu(linear(in[0]))}; }, {{8, 16, 64}},
                               linear.namedParameters());
        QCOMPARE(f.schedule.kernels.size(), size_t(1));
        const Kernel &k = f.schedule.kernels[0];
        QCOMPARE(k.kind, KernelKind::Gemm);
        QCOMPARE(k.anchor->target, std::string("aten.mm"));
        std::set<std::string> ops;
        for (const Node *n : k.nodes)
            ops.insert(n->target);
        QVERIFY(ops.count("aten.add") && ops.count("fusescope.normal_cdf")); // bias, and gelu in primitives
        QCOMPARE(k.domain, (Shape{8, 16, 32}));
    }

    void residualAddJoinsTheEpilogue()
    {
        Generator gen(2);
        nn::Linear linear(32, 32, gen);
        const Fused f = fuseFn([&](const TensorList &in) { return TensorList{ops::add(ops::relu(linear(in[0])), in[0])}; },
                               {{16, 32}}, linear.namedParameters());
        QCOMPARE(f.schedule.kernels.size(), size_t(1));
        QCOMPARE(f.schedule.kernels[0].nodes.size(), size_t(4)); // mm, add bias, relu, add residual
    }

    // relu straight after a convolution is applied as the convolution stores
    // its output (no epilogue pass over it); when something else also reads
    // the convolution, the relu stays in the epilogue.
    void reluJoinsItsConvolution()
    {
        Generator gen(4);
        const Tensor w1 = randn({16, 8, 1, 1}, gen), w3 = randn({16, 16, 3, 3}, gen);
        const Fused f = fuseFn(
            [&](const TensorList &in) {
                const Tensor a = ops::relu(ops::conv2d(in[0], w1));
                return TensorList{ops::relu(ops::conv2d(a, w3, std::nullopt, {1, 1}, {1, 1}))};
            },
            {{2, 8, 24, 24}}, {{"c1.weight", w1}, {"c3.weight", w3}});
        QCOMPARE(f.schedule.kernels.size(), size_t(2));
        const Kernel &k0 = f.schedule.kernels[0], &k1 = f.schedule.kernels[1];
        QCOMPARE(k0.anchor->target, std::string("fusescope.conv2d_relu"));
        QCOMPARE(k0.nodes.size(), size_t(1));
        QCOMPARE(k1.anchor->target, std::string("fusescope.conv2d_winograd"));
        QCOMPARE(k1.nodes.size(), size_t(1));
        QVERIFY(k1.anchor->args().at(4).constant.toBool());
        QCOMPARE(k0.anchor->origins.size(), size_t(2)); // the conv2d and the relu it took in
        QVERIFY2(joined(f.log).find("relu into its convolution: relu applied as conv2d stores its output")
                     != std::string::npos,
                 joined(f.log).c_str());

        // relu6 as ONNX's Clip writes it.
        const Fused clip = fuseFn(
            [&](const TensorList &in) { return TensorList{ops::clamp(ops::conv2d(in[0], w1), 0.0, 6.0)}; },
            {{2, 8, 24, 24}}, {{"c1.weight", w1}});
        QCOMPARE(clip.schedule.kernels.size(), size_t(1));
        QCOMPARE(clip.schedule.kernels[0].anchor->target, std::string("fusescope.conv2d_clamp"));
        QCOMPARE(clip.schedule.kernels[0].nodes.size(), size_t(1));
        QCOMPARE(clip.schedule.kernels[0].anchor->args().at(8).constant.toDouble(), 6.0);

        const Fused kept = fuseFn(
            [&](const TensorList &in) {
                const Tensor c = ops::conv2d(in[0], w1);
                return TensorList{ops::add(ops::relu(c), c)};
            },
            {{2, 8, 24, 24}}, {{"c1.weight", w1}});
        QCOMPARE(kept.schedule.kernels.size(), size_t(1));
        QCOMPARE(kept.schedule.kernels[0].anchor->target, std::string("aten.conv2d"));
        QCOMPARE(kept.schedule.kernels[0].nodes.size(), size_t(3)); // conv2d, relu, add
    }

    // Batch norm after a convolution (decomposed: sub, mul, mul, add by
    // [C,1,1] constants) folds into the convolution's weights and bias, and
    // the relu after it is then taken in too: one kernel with nothing after
    // its convolution. With an input as the weight nothing folds.
    void batchNormFoldsIntoItsConvolution()
    {
        Generator gen(6);
        const Tensor w = randn({16, 8, 1, 1}, gen), mean = randn({16}, gen), var = ops::abs(randn({16}, gen));
        const Tensor gamma = randn({16}, gen), beta = randn({16}, gen);
        const auto bn = [&](const Tensor &x, const Tensor &weight) {
            const Tensor y = ops::conv2d(x, weight);
            return ops::relu(ops::batchNorm(y, mean, var, gamma, beta, 1e-5));
        };
        const NamedTensors params{{"w", w}, {"bn.mean", mean}, {"bn.var", var}, {"bn.weight", gamma}, {"bn.bias", beta}};
        const Fused f = fuseFn([&](const TensorList &in) { return TensorList{bn(in[0], w)}; }, {{2, 8, 12, 12}}, params);
        QCOMPARE(f.schedule.kernels.size(), size_t(1));
        QCOMPARE(f.schedule.kernels[0].anchor->target, std::string("fusescope.conv2d_relu"));
        QCOMPARE(f.schedule.kernels[0].nodes.size(), size_t(1));
        QVERIFY2(joined(f.log).find("affine into its convolution") != std::string::npos, joined(f.log).c_str());
        // The convolution keeps its name through the four folds, and its
        // folded weight is named after it. Its two scales multiply first:
        // constant folding writes the whole weight once.
        QCOMPARE(f.schedule.kernels[0].anchor->name, std::string("conv2d_relu"));
        const Node *weight = f.schedule.kernels[0].anchor->args()[1].ref().node;
        QVERIFY2(weight->name.rfind("_folded_conv2d_weight", 0) == 0, weight->name.c_str());
        const auto folds = [&](const char *what) {
            return std::count_if(f.log.begin(), f.log.end(), [&](const std::string &l) {
                return l.rfind(std::string("constant folding: ") + what, 0) == 0;
            });
        };
        QCOMPARE(folds("conv2d_weight_factor "), 1);
        QCOMPARE(folds("conv2d_weight"), 2); // the factor and the weight

        const Fused input = fuseFn([&](const TensorList &in) { return TensorList{bn(in[0], in[1])}; },
                                   {{2, 8, 12, 12}, {16, 8, 1, 1}}, params);
        QCOMPARE(input.schedule.kernels.size(), size_t(1));
        QCOMPARE(input.schedule.kernels[0].anchor->target, std::string("aten.conv2d"));
        QVERIFY(input.schedule.kernels[0].nodes.size() > 1); // batch norm and relu in the epilogue
    }

    // Where the CPU has AMX tiles, a product by a parameter big enough to pay
    // for splitting the activations runs as fusescope.mm_bf16x6 on the weight
    // packed at compile time, and keeps its bias and GELU epilogue; a small
    // product, one by an input, and a weight the three bf16 parts cannot carry
    // stay on BLAS.
    void constantWeightProductsRunOnTheTiles()
    {
        if (!amx::available())
            QSKIP("no AMX tiles on this CPU (or FUSESCOPE_NO_AMX): products stay on BLAS");
        Generator gen(5);
        const Tensor w = randn({256, 512}, gen), b = randn({256}, gen);
        const auto linearGelu = [&](const Tensor &weight) {
            return [&, weight](const TensorList &in) { return TensorList{ops::gelu(ops::linear(in[0], weight, b))}; };
        };
        const Fused f = fuseFn(linearGelu(w), {{128, 512}}, {{"fc.weight", w}, {"fc.bias", b}});
        QCOMPARE(f.schedule.kernels.size(), size_t(1));
        const Kernel &k = f.schedule.kernels[0];
        QCOMPARE(k.kind, KernelKind::Gemm);
        QCOMPARE(k.anchor->target, std::string("fusescope.mm_bf16x6"));
        QVERIFY(k.nodes.size() > 3); // the product, the bias add and GELU's ops
        const Node *packed = k.anchor->args()[1].ref().node;
        QCOMPARE(packed->kind, NodeKind::GetAttr);
        QCOMPARE(f.graph.attrs.at(packed->target).sizes(), (Shape{amx::packedElements(512, 256)}));
        const std::string log = joined(f.log);
        const char *line = "bf16x6: mm ([128,512] by the constant [256,512]) runs on the AMX tiles";
        QVERIFY2(log.find(line) != std::string::npos, log.c_str());

        const Fused small = fuseFn(linearGelu(w), {{16, 512}}, {{"fc.weight", w}, {"fc.bias", b}});
        QCOMPARE(small.schedule.kernels[0].anchor->target, std::string("aten.mm"));
        const Fused input = fuseFn([](const TensorList &in) { return TensorList{ops::mm(in[0], in[1])}; },
                                   {{128, 512}, {512, 256}});
        QCOMPARE(input.schedule.kernels[0].anchor->target, std::string("aten.mm"));
        Tensor tiny = w.clone();
        tiny.data<float>()[7] = 1e-39f;
        const Fused flushed = fuseFn(linearGelu(tiny), {{128, 512}}, {{"fc.weight", tiny}, {"fc.bias", b}});
        QCOMPARE(flushed.schedule.kernels[0].anchor->target, std::string("aten.mm"));
        const std::string flushedLog = joined(flushed.log);
        const std::string stays = "stays on BLAS: its weight holds values three bf16 parts cannot carry";
        const size_t first = flushedLog.find(stays);
        QVERIFY2(first != std::string::npos, flushedLog.c_str());
        QVERIFY2(flushedLog.find(stays, first + 1) == std::string::npos, flushedLog.c_str()); // once, not per round
    }

    // A Winograd convolution of a parameter reads weights transformed at
    // compile time and still takes its epilogue; one of an input does not.
    void winogradWeightsAreTransformedAtCompileTime()
    {
        Generator gen(3);
        const Tensor w = randn({32, 32, 3, 3}, gen);
        const Fused f = fuseFn(
            [&](const TensorList &in) {
                return TensorList{ops::relu(ops::add(ops::conv2d(in[0], w, std::nullopt, {1, 1}, {1, 1}), in[0]))};
            },
            {{2, 32, 24, 24}}, {{"conv.weight", w}});
        QCOMPARE(f.schedule.kernels.size(), size_t(1));
        const Kernel &k = f.schedule.kernels[0];
        QCOMPARE(k.kind, KernelKind::Gemm);
        QCOMPARE(k.anchor->target, std::string("fusescope.conv2d_winograd"));
        QCOMPARE(k.nodes.size(), size_t(3)); // the convolution, the residual add, relu
        const Node *u = k.anchor->args()[1].ref().node;
        QCOMPARE(u->kind, NodeKind::GetAttr);
        QCOMPARE(f.graph.attrs.at(u->target).sizes(), (Shape{16, 32, 32}));
        const std::string log = joined(f.log);
        QVERIFY2(log.find("winograd: conv2d (3x3 convolution of conv.weight) runs as F(2x2, 3x3)") != std::string::npos,
                 log.c_str());
        QVERIFY2(log.find("(fusescope.winograd_weights) computed at compile time") != std::string::npos, log.c_str());

        const Fused input = fuseFn(
            [](const TensorList &in) { return TensorList{ops::conv2d(in[0], in[1], std::nullopt, {1, 1}, {1, 1})}; },
            {{2, 32, 24, 24}, {32, 32, 3, 3}});
        QCOMPARE(input.schedule.kernels.size(), size_t(1));
        QCOMPARE(input.schedule.kernels[0].anchor->target, std::string("aten.conv2d"));

        // 7x7 tiles: too few for eager mode's Winograd, enough with the transform paid once.
        const Fused small = fuseFn(
            [&](const TensorList &in) { return TensorList{ops::conv2d(in[0], w, std::nullopt, {1, 1}, {1, 1})}; },
            {{1, 32, 14, 14}}, {{"conv.weight", w}});
        QCOMPARE(small.schedule.kernels[0].anchor->target, std::string("fusescope.conv2d_winograd"));

        // 12x12 tiles of 4x4 per image: F(4x4, 3x3), 36 points.
        const Fused large = fuseFn(
            [&](const TensorList &in) { return TensorList{ops::conv2d(in[0], w, std::nullopt, {1, 1}, {1, 1})}; },
            {{2, 32, 48, 48}}, {{"conv.weight", w}});
        const Node *u4 = large.schedule.kernels[0].anchor->args()[1].ref().node;
        QCOMPARE(large.graph.attrs.at(u4->target).sizes(), (Shape{36, 32, 32}));
        QVERIFY(joined(large.log).find("runs as F(4x4, 3x3) on weights transformed once") != std::string::npos);
        // The new nodes keep the module path, so the drawn graph still reads as the model.
        const Fused resnet = fuseZoo("resnet18");
        const auto conv = std::find_if(resnet.schedule.kernels.begin(), resnet.schedule.kernels.end(), [](const Kernel &k) {
            return k.anchor && k.anchor->modulePath == "layer1.0.conv1";
        });
        QVERIFY(conv != resnet.schedule.kernels.end());
        QCOMPARE(conv->anchor->target, std::string("fusescope.conv2d_winograd"));
        QCOMPARE(conv->anchor->args()[1].ref().node->modulePath, std::string("layer1.0.conv1"));
    }

    void transposeFeedsAKernelAsIndexArithmetic()
    {
        const Fused f = fuseFn([](const TensorList &in) { return TensorList{ops::exp(ops::add(in[0].t(), in[1]))}; },
                               {{8, 4}, {4, 8}});
        QCOMPARE(f.schedule.kernels.size(), size_t(1));
        const Kernel &k = f.schedule.kernels[0];
        QCOMPARE(k.inputs.size(), size_t(2));
        QCOMPARE(k.inputs[0].node->kind, NodeKind::Placeholder); // the transpose's storage, not a copy
    }

    // rotate_half: one kernel. The cat joins the kernel that multiplies it,
    // and the neg that only the cat reads runs inside it over its own half.
    void catAlongTheLastDimJoinsItsReader()
    {
        const Fused f = fuseFn(
            [](const TensorList &in) {
                const Tensor &x = in[0];
                const Tensor rotated = ops::cat({ops::neg(x.narrow(-1, 4, 4)), x.narrow(-1, 0, 4)}, -1);
                return TensorList{ops::add(ops::mul(x, in[1]), ops::mul(rotated, in[1]))};
            },
            {{2, 3, 5, 8}, {5, 8}});
        QVERIFY2(f.schedule.kernels.size() == 1, joined(f.log).c_str());
        const Kernel &k = f.schedule.kernels[0];
        QCOMPARE(k.kind, KernelKind::Pointwise);
        QCOMPARE(k.domain, (Shape{2, 3, 5, 8}));
        QCOMPARE(k.nodes.size(), size_t(5)); // neg, cat, mul, mul, add
        QCOMPARE(k.inputs.size(), size_t(2)); // x and the factor: the halves are views of x
    }

    // The cat fuses into the add first; exp, which the add also reads, then
    // cannot join them, as the cat would read it from inside the kernel.
    void catReadsItsInputsFromMemory()
    {
        const Fused f = fuseFn(
            [](const TensorList &in) {
                const Tensor y = ops::exp(in[0]);
                return TensorList{ops::add(ops::cat({y.narrow(-1, 4, 4), y.narrow(-1, 0, 4)}, -1), y)};
            },
            {{6, 8}});
        QCOMPARE(f.schedule.kernels.size(), size_t(2));
        QCOMPARE(countKind(f.schedule, KernelKind::Pointwise), 2); // exp; the cat in the add's kernel
        QVERIFY2(hasRefusal(f.schedule, "cat (aten.cat) would read exp computed in the same kernel; a fused cat reads "
                                        "its inputs from memory"),
                 joined(f.log).c_str());
    }

    void viewBetweenPointwiseOpsIsRefused()
    {
        const Fused f = fuseFn(
            [](const TensorList &in) { return TensorList{ops::sigmoid(ops::exp(in[0]).t())}; }, {{8, 4}});
        QCOMPARE(f.schedule.kernels.size(), size_t(2));
        QVERIFY2(hasRefusal(f.schedule, "through a view (aten.transpose)"), joined(f.log).c_str());
    }

    void differentIterationSpacesAreRefused()
    {
        const Fused f = fuseFn(
            [](const TensorList &in) { return TensorList{ops::add(in[0], ops::exp(in[1]))}; }, {{8, 4}, {4}});
        QCOMPARE(f.schedule.kernels.size(), size_t(2));
        QVERIFY2(hasRefusal(f.schedule, "different iteration spaces [4] and [8,4]"), joined(f.log).c_str());
    }

    void cyclesAreRefused()
    {
        // a = exp(x); c = cumsum(a); y = a * c: fusing exp with the mul
        // would have to run both before and after the cumsum.
        const Fused f = fuseFn(
            [](const TensorList &in) {
                const Tensor a = ops::exp(in[0]);
                return TensorList{ops::mul(a, ops::cumsum(a, 0))};
            },
            {{16, 16}});
        QCOMPARE(f.schedule.kernels.size(), size_t(3));
        QVERIFY2(hasRefusal(f.schedule, "cannot fuse exp with mul: fusing would create a cycle through cumsum"),
                 joined(f.log).c_str());
    }

    void gemmOperandsStayInMemory()
    {
        const Fused f = fuseFn(
            [](const TensorList &in) {
                const Tensor a = ops::exp(in[0]);
                return TensorList{ops::add(a, ops::mm(a, a))};
            },
            {{16, 16}});
        QCOMPARE(f.schedule.kernels.size(), size_t(2)); // exp; mm with the add as epilogue
        QVERIFY2(hasRefusal(f.schedule, "aten.mm reads its operands from memory"), joined(f.log).c_str());
    }

    void attentionHeadsReachOneAttentionKernelAsStridedViews()
    {
        // encoder: q k^T, the softmax and weights v run as one
        // fusescope.attention on the heads' views of the projection (no
        // matmul kernels, no copies of the heads, the query's scale taken
        // in), which writes its result with the heads transposed, so that
        // merging them is a view: no copy left.
        const Fused f = fuseZoo("encoder");
        int matmuls = 0, reshapes = 0, attention = 0;
        for (const Kernel &k : f.schedule.kernels) {
            matmuls += k.kind == KernelKind::Gemm && k.anchor->target == "aten.matmul";
            reshapes += k.kind == KernelKind::Extern && k.anchor->target == "aten.reshape";
            attention += k.kind == KernelKind::Extern && k.anchor->target == "fusescope.attention";
        }
        QCOMPARE(matmuls, 0);
        QCOMPARE(reshapes, 0);
        QCOMPARE(attention, 1);
        const std::vector<Node *> nodes = f.graph.nodes(); // a copy: both iterators from one vector
        QVERIFY(std::none_of(nodes.begin(), nodes.end(), [](const Node *n) { return n->target == "aten.bmm"; }));
        const auto op = std::find_if(nodes.begin(), nodes.end(), [](const Node *n) { return n->target == "fusescope.attention"; });
        QVERIFY(op != nodes.end());
        QCOMPARE((*op)->args()[5].constant.toDouble(), 0.125);
        QVERIFY((*op)->args()[6].constant.toBool());
        QCOMPARE(shapeStr((*op)->meta().sizes), shapeStr({8, 128, 4, 64}));
        for (int i = 0; i < 3; ++i) // q, k, v: views, never computed copies
            QCOMPARE(OpRegistry::instance().get((*op)->args()[i].ref().node->target).kind, OpKind::View);
        // The key is the heads' view itself: k.transpose(-2, -1) is not
        // transposed back.
        const Node *key = (*op)->args()[1].ref().node;
        QCOMPARE(key->target, std::string("aten.transpose"));
        QVERIFY(key->args()[0].ref().node->target != "aten.transpose");
        QCOMPARE(shapeStr(key->meta().sizes), shapeStr({8, 4, 128, 64}));
        QVERIFY2(joined(f.log).find("attention: ") != std::string::npos, joined(f.log).c_str());
    }

    void scheduleRespectsDependencies_data()
    {
        QTest::addColumn<QString>("model");
        for (const std::string &name : zoo::modelNames())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void scheduleRespectsDependencies()
    {
        QFETCH(QString, model);
        const Fused f = fuseZoo(model.toStdString());
        std::set<const Node *> done;
        for (const Node *n : f.graph.nodes()) {
            if (n->kind != NodeKind::CallFunction)
                done.insert(n); // placeholders and attributes exist up front
        }
        for (const Kernel &k : f.schedule.kernels) {
            for (const NodeRef &in : k.inputs)
                QVERIFY2(done.count(in.node), (k.name + " reads " + in.node->name + " before it is computed").c_str());
            for (const NodeRef &out : k.outputs)
                done.insert(out.node);
        }
        QVERIFY(f.schedule.kernels.size() < f.graph.size());
        qInfo("%s: %zu nodes, %zu kernels", qPrintable(model), f.graph.size(), f.schedule.kernels.size());
    }
};

QTEST_GUILESS_MAIN(TestCompilerFuse)
#include "tst_compiler_fuse.moc"
