// The nn module system: names, paths and flags as PyTorch's, seeded init, and
// each layer's forward against a plain f64 reference computed here.
#include "optest.h"

#include "core/nn/nn.h"
#include "core/ops/registry.h"

#include <cmath>

using namespace fusescope;
using namespace fusescope::test;

namespace {

using Values = std::vector<double>;

// torch.nn.MultiheadAttention, batch first, with explicit loops. mask: [L, S]
// additive values (empty: none).
Values mhaRef(const Values &q, const Values &k, const Values &v, int64_t batch, int64_t len, int64_t srcLen,
              int64_t embed, int64_t heads, const Values &inW, const Values &inB, const Values &outW,
              const Values &outB, const Values &mask)
{
    auto chunk = [](const Values &all, int64_t i, int64_t n) {
        return Values(all.begin() + i * n, all.begin() + (i + 1) * n);
    };
    const int64_t ee = embed * embed;
    const Values qp = linearRef(q, embed, chunk(inW, 0, ee), chunk(inB, 0, embed));
    const Values kp = linearRef(k, embed, chunk(inW, 1, ee), chunk(inB, 1, embed));
    const Values vp = linearRef(v, embed, chunk(inW, 2, ee), chunk(inB, 2, embed));
    const Values attn = attentionRef(qp, kp, vp, batch, len, srcLen, embed, heads, mask, false);
    return linearRef(attn, embed, outW, outB);
}

// Records where each op ran, as the compiler's capture does.
class PathTracer : public DispatchTracer
{
public:
    void record(const OpDef &op, const Args &, const TensorList &) override
    {
        calls.push_back(op.name() + "@" + nn::currentModulePath());
    }
    std::vector<std::string> calls;
};

// Sees the module stack from inside a forward.
class PathProbe : public nn::Module
{
public:
    PathProbe() : Module("PathProbe") {}
    using Module::forward;
    Tensor forward(const Tensor &x) override
    {
        seen = nn::currentModulePath();
        depth = nn::moduleStack().size();
        return x;
    }
    std::string seen;
    size_t depth = 0;
};

// A parent with named children, as a user-defined block.
class Block : public nn::Module
{
public:
    Block() : Module("Block")
    {
        conv1 = registerModule("conv1", std::make_shared<PathProbe>());
        bn1 = registerModule("bn1", std::make_shared<nn::BatchNorm2d>(2));
    }
    using Module::forward;
    Tensor forward(const Tensor &x) override { return (*conv1)(x); }
    void adopt(const std::string &name, std::shared_ptr<nn::Module> m) { registerModule(name, std::move(m)); }
    void addParameter(const std::string &name, Tensor t) { registerParameter(name, std::move(t)); }
    std::shared_ptr<PathProbe> conv1;
    std::shared_ptr<nn::BatchNorm2d> bn1;
};

} // namespace

class TestNn : public QObject
{
    Q_OBJECT
private slots:
    void parameterNamesFollowPyTorch()
    {
        Generator gen(1);
        nn::Sequential net{std::make_shared<nn::Linear>(4, 8, gen), std::make_shared<nn::ReLU>(),
                           std::make_shared<nn::Linear>(8, 3, gen, false), std::make_shared<nn::LayerNorm>(Shape{3})};
        QCOMPARE(names(net.namedParameters()),
                 QStringList({"0.weight", "0.bias", "2.weight", "3.weight", "3.bias"}));
        QCOMPARE(net.numParameters(), int64_t(4 * 8 + 8 + 8 * 3 + 3 + 3));
        QCOMPARE(net.namedParameters()[2].second.sizes(), (Shape{3, 8}));
        QCOMPARE(net.size(), size_t(4));
        QCOMPARE(net.at(1)->typeName(), std::string("ReLU"));
    }

    void multiheadAttentionOwnParametersComeFirst()
    {
        Generator gen(2);
        nn::MultiheadAttention mha(8, 2, gen);
        QCOMPARE(names(mha.namedParameters()),
                 QStringList({"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
        QCOMPARE(mha.numParameters(), int64_t(3 * 8 * 8 + 3 * 8 + 8 * 8 + 8));
        // PyTorch zeroes both biases.
        for (const char *name : {"in_proj_bias", "out_proj.bias"}) {
            for (const auto &[n, t] : mha.namedParameters()) {
                if (n == name)
                    FS_COMPARE_VALUES(t, t.sizes(), Values(size_t(t.numel()), 0.0), 0, 0);
            }
        }
    }

    void stateDictHasBuffersInPyTorchOrder()
    {
        Block block;
        QCOMPARE(names(block.namedParameters()), QStringList({"bn1.weight", "bn1.bias"}));
        QCOMPARE(names(block.namedBuffers()),
                 QStringList({"bn1.running_mean", "bn1.running_var", "bn1.num_batches_tracked"}));
        QCOMPARE(names(block.stateDict()), QStringList({"bn1.weight", "bn1.bias", "bn1.running_mean",
                                                        "bn1.running_var", "bn1.num_batches_tracked"}));
        FS_COMPARE_VALUES(block.bn1->buffer("running_var"), Shape{2}, (Values{1, 1}), 0, 0);
        FS_COMPARE_VALUES(block.bn1->buffer("running_mean"), Shape{2}, (Values{0, 0}), 0, 0);
        QCOMPARE(block.bn1->buffer("num_batches_tracked").dtype(), DType::I64);
        std::vector<std::string> modules;
        for (const auto &[path, m] : block.namedModules())
            modules.push_back(path + ":" + m->typeName());
        QCOMPARE(modules, (std::vector<std::string>{":Block", "conv1:PathProbe", "bn1:BatchNorm2d"}));
    }

    void modulePathsAreDotted()
    {
        auto layer = std::make_shared<nn::Sequential>();
        auto first = std::make_shared<Block>();
        layer->append(first);
        layer->append(std::make_shared<Block>());
        Block root;
        QCOMPARE(first->conv1->modulePath(), std::string("0.conv1")); // before the layer has a parent
        root.adopt("layer1", layer);
        QCOMPARE(first->conv1->modulePath(), std::string("layer1.0.conv1"));
        QCOMPARE(first->modulePath(), std::string("layer1.0"));
        QCOMPARE(first->name(), std::string("0"));
        QCOMPARE(root.modulePath(), std::string());
        QVERIFY(root.namedParameters().size() == 6);
        QCOMPARE(names(root.namedParameters())[2], QString("layer1.0.bn1.weight"));
    }

    void moduleStackDuringForward()
    {
        auto inner = std::make_shared<nn::Sequential>();
        auto probe = std::make_shared<PathProbe>();
        inner->append(probe);
        nn::Sequential root{std::make_shared<nn::Identity>(), inner};
        QCOMPARE(nn::currentModulePath(), std::string());
        root(zeros({2}));
        QCOMPARE(probe->seen, std::string("1.0"));
        QCOMPARE(probe->depth, size_t(3)); // root, "1", "1.0"
        QVERIFY(nn::moduleStack().empty());
        {
            nn::ModuleScope scope("custom.path", "Custom");
            QCOMPARE(nn::currentModulePath(), std::string("custom.path"));
            QCOMPARE(nn::moduleStack().back().typeName, std::string("Custom"));
        }
        QVERIFY(nn::moduleStack().empty());
    }

    void tracerSeesModulePaths()
    {
        Generator gen(3);
        nn::Sequential net{std::make_shared<nn::Linear>(4, 8, gen), std::make_shared<nn::ReLU>(),
                           std::make_shared<nn::Linear>(8, 2, gen)};
        PathTracer tracer;
        DispatchTracer *previous = setDispatchTracer(&tracer);
        const Tensor y = net(Tensor::empty({5, 4}, DType::F32, kMeta));
        setDispatchTracer(previous);
        QVERIFY(y.isMeta());
        QCOMPARE(y.sizes(), (Shape{5, 2}));
        QCOMPARE(tracer.calls, (std::vector<std::string>{"aten.linear@0", "aten.relu@1", "aten.linear@2"}));
    }

    void stackUnwindsOnError()
    {
        Generator gen(4);
        nn::Sequential net{std::make_shared<nn::Linear>(4, 8, gen)};
        bool thrown = false;
        try {
            net(Tensor::empty({5, 3}, DType::F32, kMeta));
        } catch (const Error &) {
            thrown = true;
        }
        QVERIFY(thrown);
        QVERIFY(nn::moduleStack().empty());
    }

    void linearForward_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<int>("out");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<QString>("layout");
        QTest::addColumn<bool>("f64");
        QTest::newRow("2d") << Shape{5, 7} << 3 << true << "contiguous" << false;
        QTest::newRow("3d-batch") << Shape{2, 4, 6} << 5 << true << "contiguous" << false;
        QTest::newRow("no-bias") << Shape{3, 8} << 4 << false << "contiguous" << false;
        QTest::newRow("transposed-input") << Shape{6, 9} << 4 << true << "transposed" << false;
        QTest::newRow("sliced-input") << Shape{4, 5} << 2 << true << "sliced" << false;
        QTest::newRow("1d-input") << Shape{6} << 3 << true << "contiguous" << false;
        QTest::newRow("empty-batch") << Shape{0, 6} << 3 << true << "contiguous" << false;
        QTest::newRow("f64") << Shape{3, 5} << 4 << true << "contiguous" << true;
    }

    void linearForward()
    {
        QFETCH(Shape, shape);
        QFETCH(int, out);
        QFETCH(bool, bias);
        QFETCH(QString, layout);
        QFETCH(bool, f64);
        Generator gen(10);
        nn::Linear linear(shape.back(), out, gen, bias);
        Tensor x = withLayout(randomTensor(shape, 11), layout);
        if (f64) {
            linear.to(DType::F64);
            x = x.to(DType::F64);
        }
        const Values expected = linearRef(x.toDoubleVector(), shape.back(), linear.parameter("weight").toDoubleVector(),
                                          bias ? linear.parameter("bias").toDoubleVector() : Values{});
        Shape outShape = shape;
        outShape.back() = out;
        const Tensor y = linear(x);
        QCOMPARE(y.dtype(), f64 ? DType::F64 : DType::F32);
        FS_COMPARE_VALUES(y, outShape, expected, f64 ? 1e-12 : 1e-5, f64 ? 1e-12 : 1e-5);
    }

    void conv2dForward_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("c");
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("w");
        QTest::addColumn<int>("o");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("pad");
        QTest::addColumn<int>("dil");
        QTest::addColumn<int>("groups");
        QTest::addColumn<bool>("bias");
        QTest::newRow("3x3") << 2 << 3 << 7 << 6 << 4 << 3 << 1 << 0 << 1 << 1 << true;
        QTest::newRow("3x3-pad-stride") << 1 << 3 << 9 << 9 << 5 << 3 << 2 << 1 << 1 << 1 << false;
        QTest::newRow("7x7-resnet-stem") << 1 << 3 << 16 << 16 << 4 << 7 << 2 << 3 << 1 << 1 << false;
        QTest::newRow("1x1-downsample") << 2 << 4 << 6 << 6 << 8 << 1 << 2 << 0 << 1 << 1 << false;
        QTest::newRow("dilated") << 1 << 2 << 9 << 8 << 3 << 3 << 1 << 2 << 2 << 1 << true;
        QTest::newRow("groups") << 2 << 4 << 5 << 5 << 6 << 3 << 1 << 1 << 1 << 2 << true;
        QTest::newRow("depthwise") << 1 << 3 << 5 << 5 << 3 << 3 << 1 << 1 << 1 << 3 << true;
    }

    void conv2dForward()
    {
        QFETCH(int, n);
        QFETCH(int, c);
        QFETCH(int, h);
        QFETCH(int, w);
        QFETCH(int, o);
        QFETCH(int, k);
        QFETCH(int, stride);
        QFETCH(int, pad);
        QFETCH(int, dil);
        QFETCH(int, groups);
        QFETCH(bool, bias);
        const ConvGeometry g{n, c, h, w, o, k, k, stride, pad, dil, groups};
        Generator gen(20);
        nn::Conv2d conv(c, o, {k}, gen,
                        {.stride = {stride}, .padding = {pad}, .dilation = {dil}, .groups = groups, .bias = bias});
        QCOMPARE(conv.parameter("weight").sizes(), (Shape{o, c / groups, k, k}));
        const Tensor x = randomTensor({n, c, h, w}, 21);
        const Values expected = conv2dRef(x.toDoubleVector(), conv.parameter("weight").toDoubleVector(),
                                          bias ? conv.parameter("bias").toDoubleVector() : Values{}, g);
        FS_COMPARE_VALUES(conv(x), (Shape{n, o, g.outH(), g.outW()}), expected, 1e-4, 1e-5);
    }

    void layerNormForward_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<Shape>("normalized");
        QTest::addColumn<bool>("affine");
        QTest::addColumn<double>("eps");
        QTest::addColumn<QString>("layout");
        QTest::newRow("last-dim") << Shape{4, 16} << Shape{16} << true << 1e-5 << "contiguous";
        QTest::newRow("two-dims") << Shape{3, 4, 5} << Shape{4, 5} << true << 1e-5 << "contiguous";
        QTest::newRow("no-affine") << Shape{6, 8} << Shape{8} << false << 1e-5 << "contiguous";
        QTest::newRow("large-eps") << Shape{2, 3, 8} << Shape{8} << true << 0.5 << "contiguous";
        QTest::newRow("transposed") << Shape{7, 6} << Shape{6} << true << 1e-5 << "transposed";
        QTest::newRow("empty-batch") << Shape{0, 6} << Shape{6} << true << 1e-5 << "contiguous";
    }

    void layerNormForward()
    {
        QFETCH(Shape, shape);
        QFETCH(Shape, normalized);
        QFETCH(bool, affine);
        QFETCH(double, eps);
        QFETCH(QString, layout);
        nn::LayerNorm norm(normalized, eps, affine);
        QCOMPARE(norm.ownParameters().size(), size_t(affine ? 2 : 0));
        if (affine) {
            norm.setTensor("weight", randomTensor(normalized, 30));
            norm.setTensor("bias", randomTensor(normalized, 31));
        }
        const Tensor x = withLayout(randomTensor(shape, 32, 3), layout);
        const Values expected = layerNormRef(x.toDoubleVector(), numelOf(normalized),
                                             affine ? norm.parameter("weight").toDoubleVector() : Values{},
                                             affine ? norm.parameter("bias").toDoubleVector() : Values{}, eps);
        FS_COMPARE_VALUES(norm(x), shape, expected, 1e-4, 1e-5);
    }

    void rmsNormForward()
    {
        nn::RMSNorm norm({8}, 1e-6);
        norm.setTensor("weight", randomTensor({8}, 40));
        const Tensor x = randomTensor({3, 5, 8}, 41);
        const Values xs = x.toDoubleVector(), w = norm.parameter("weight").toDoubleVector();
        Values expected(xs.size());
        for (size_t r = 0; r < xs.size() / 8; ++r) {
            double sq = 0;
            for (size_t i = 0; i < 8; ++i)
                sq += xs[r * 8 + i] * xs[r * 8 + i];
            for (size_t i = 0; i < 8; ++i)
                expected[r * 8 + i] = xs[r * 8 + i] / std::sqrt(sq / 8 + 1e-6) * w[i];
        }
        FS_COMPARE_VALUES(norm(x), (Shape{3, 5, 8}), expected, 1e-5, 1e-6);
        QCOMPARE(names(norm.namedParameters()), QStringList({"weight"}));
    }

    void batchNormEvalUsesRunningStats()
    {
        nn::BatchNorm2d bn(3, 1e-3);
        bn.eval();
        const Tensor mean = randomTensor({3}, 50), var = ops::abs(randomTensor({3}, 51));
        bn.setTensor("running_mean", mean);
        bn.setTensor("running_var", var);
        bn.setTensor("weight", randomTensor({3}, 52));
        bn.setTensor("bias", randomTensor({3}, 53));
        const Tensor x = randomTensor({2, 3, 4, 5}, 54);
        const Values xs = x.toDoubleVector(), m = mean.toDoubleVector(), v = var.toDoubleVector(),
                     w = bn.parameter("weight").toDoubleVector(), b = bn.parameter("bias").toDoubleVector();
        Values expected(xs.size());
        for (size_t i = 0; i < xs.size(); ++i) {
            const size_t c = (i / 20) % 3;
            expected[i] = (xs[i] - m[c]) / std::sqrt(v[c] + 1e-3) * w[c] + b[c];
        }
        FS_COMPARE_VALUES(bn(x), (Shape{2, 3, 4, 5}), expected, 1e-5, 1e-5);
        FS_EXPECT_ERROR(bn(zeros({3, 4})), "nn.BatchNorm2d: expected a 4-D input [N,C,H,W], got [3,4]");
    }

    void batchNormTrainUsesBatchStats()
    {
        nn::BatchNorm2d bn(2);
        QVERIFY(bn.isTraining());
        const Tensor x = randomTensor({3, 2, 2, 3}, 60, 2);
        const Values xs = x.toDoubleVector();
        Values expected(xs.size());
        for (size_t c = 0; c < 2; ++c) {
            Values vals;
            for (size_t i = 0; i < xs.size(); ++i) {
                if ((i / 6) % 2 == c)
                    vals.push_back(xs[i]);
            }
            double mean = 0, var = 0;
            for (double v : vals)
                mean += v / double(vals.size());
            for (double v : vals)
                var += (v - mean) * (v - mean) / double(vals.size());
            for (size_t i = 0; i < xs.size(); ++i) {
                if ((i / 6) % 2 == c)
                    expected[i] = (xs[i] - mean) / std::sqrt(var + 1e-5);
            }
        }
        FS_COMPARE_VALUES(bn(x), (Shape{3, 2, 2, 3}), expected, 1e-4, 1e-5);
        // Running statistics stay as they were: nothing here trains.
        FS_COMPARE_VALUES(bn.buffer("running_mean"), Shape{2}, (Values{0, 0}), 0, 0);
    }

    void embeddingForward()
    {
        Generator gen(70);
        nn::Embedding emb(10, 4, gen);
        const Tensor idx = fromVector({3, 0, 9, 3, 7, 1}, {2, 3}, DType::I64);
        const Values w = emb.parameter("weight").toDoubleVector();
        Values expected;
        for (double i : idx.toDoubleVector())
            expected.insert(expected.end(), w.begin() + int64_t(i) * 4, w.begin() + int64_t(i) * 4 + 4);
        FS_COMPARE_VALUES(emb(idx), (Shape{2, 3, 4}), expected, 0, 0);
    }

    void activations()
    {
        const Tensor x = randomTensor({4, 6}, 80, 3);
        auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
        nn::ReLU relu;
        nn::GELU gelu, geluTanh("tanh");
        nn::SiLU silu;
        FS_COMPARE_VALUES(relu(x), (Shape{4, 6}), mapRef(x, [](double v) { return v > 0 ? v : 0; }), 0, 0);
        FS_COMPARE_VALUES(gelu(x), (Shape{4, 6}),
                          mapRef(x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }), 1e-5,
                          1e-6);
        FS_COMPARE_VALUES(geluTanh(x), (Shape{4, 6}), mapRef(x, [](double v) {
                              return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
                          }),
                          1e-5, 1e-6);
        FS_COMPARE_VALUES(silu(x), (Shape{4, 6}), mapRef(x, [&](double v) { return v * sigmoid(v); }), 1e-5, 1e-6);
        QCOMPARE(gelu.extraRepr(), std::string("approximate='none'"));
        FS_EXPECT_ERROR(nn::GELU("fast"), "nn.GELU: approximate must be 'none' or 'tanh', got 'fast'");
    }

    void dropoutIsIdentity()
    {
        nn::Dropout dropout(0.5);
        const Tensor x = randomTensor({3, 4}, 90);
        QVERIFY(dropout.isTraining());
        FS_COMPARE_VALUES(dropout(x), (Shape{3, 4}), x.toDoubleVector(), 0, 0);
        dropout.eval();
        FS_COMPARE_VALUES(dropout(x), (Shape{3, 4}), x.toDoubleVector(), 0, 0);
        FS_EXPECT_ERROR(nn::Dropout(1.5), "nn.Dropout: probability must be in [0, 1]");
    }

    void multiheadAttentionForward_data()
    {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("len");
        QTest::addColumn<int>("srcLen");
        QTest::addColumn<int>("embed");
        QTest::addColumn<int>("heads");
        QTest::addColumn<QString>("mode");
        QTest::newRow("self") << 2 << 5 << 5 << 8 << 2 << "self";
        QTest::newRow("self-one-head") << 1 << 4 << 4 << 6 << 1 << "self";
        QTest::newRow("cross") << 2 << 3 << 6 << 8 << 4 << "cross";
        QTest::newRow("self-bool-mask") << 2 << 4 << 4 << 8 << 2 << "bool-mask";
        QTest::newRow("cross-float-mask") << 1 << 3 << 5 << 8 << 2 << "float-mask";
        QTest::newRow("sequence-first") << 2 << 4 << 4 << 8 << 2 << "seq-first";
        QTest::newRow("unbatched") << 1 << 4 << 4 << 8 << 2 << "unbatched";
    }

    void multiheadAttentionForward()
    {
        QFETCH(int, batch);
        QFETCH(int, len);
        QFETCH(int, srcLen);
        QFETCH(int, embed);
        QFETCH(int, heads);
        QFETCH(QString, mode);
        Generator gen(100);
        const bool seqFirst = mode == "seq-first";
        nn::MultiheadAttention mha(embed, heads, gen, {.batchFirst = !seqFirst});
        // Non-zero biases, so the reference checks where they go.
        mha.setTensor("in_proj_bias", randomTensor({3 * embed}, 101, 0.5));
        mha.setTensor("out_proj.bias", randomTensor({embed}, 102, 0.5));
        const Tensor q = randomTensor({batch, len, embed}, 103);
        const Tensor kv = randomTensor({batch, srcLen, embed}, 104);
        const Tensor v = randomTensor({batch, srcLen, embed}, 105);
        const bool self = mode == "self" || mode.contains("bool") || seqFirst || mode == "unbatched";
        Values mask;
        std::vector<Tensor> inputs;
        if (self) {
            inputs = {q};
        } else {
            inputs = {q, kv, v};
        }
        if (mode == "bool-mask") {
            // true = blocked (PyTorch's MHA convention): a causal mask.
            Values blocked;
            for (int i = 0; i < len; ++i)
                for (int j = 0; j < len; ++j) {
                    blocked.push_back(j > i);
                    mask.push_back(j > i ? -INFINITY : 0);
                }
            inputs = {q, q, q, fromVector(blocked, {len, len}, DType::Bool)};
        } else if (mode == "float-mask") {
            const Tensor m = randomTensor({len, srcLen}, 106);
            mask = m.toDoubleVector();
            inputs.push_back(m);
        }
        const Values expected = mhaRef(q.toDoubleVector(), self ? q.toDoubleVector() : kv.toDoubleVector(),
                                       self ? q.toDoubleVector() : v.toDoubleVector(), batch, len, self ? len : srcLen,
                                       embed, heads, mha.parameter("in_proj_weight").toDoubleVector(),
                                       mha.parameter("in_proj_bias").toDoubleVector(),
                                       mha.child("out_proj").parameter("weight").toDoubleVector(),
                                       mha.child("out_proj").parameter("bias").toDoubleVector(), mask);
        if (seqFirst) {
            const Tensor y = mha(q.transpose(0, 1));
            FS_COMPARE_VALUES(y.transpose(0, 1), (Shape{batch, len, embed}), expected, 1e-4, 1e-5);
            QCOMPARE(y.sizes(), (Shape{len, batch, embed}));
        } else if (mode == "unbatched") {
            FS_COMPARE_VALUES(mha(q.squeeze(0)), (Shape{len, embed}), expected, 1e-4, 1e-5);
        } else {
            FS_COMPARE_VALUES(mha(inputs), (Shape{batch, len, embed}), expected, 1e-4, 1e-5);
        }
    }

    void multiheadAttentionSeparateProjectionsMatchPacked()
    {
        // The same tensor passed as three distinct handles takes the unpacked path.
        Generator gen(110);
        nn::MultiheadAttention mha(8, 2, gen);
        const Tensor x = randomTensor({2, 3, 8}, 111);
        const Tensor y1 = mha(x);
        const Tensor y2 = mha(std::vector<Tensor>{x, x.view({2, 3, 8}), x.view({2, 3, 8})});
        FS_COMPARE_VALUES(y2, (Shape{2, 3, 8}), y1.toDoubleVector(), 1e-5, 1e-6);
    }

    void multiheadAttentionErrors()
    {
        Generator gen(120);
        FS_EXPECT_ERROR(nn::MultiheadAttention(10, 3, gen), "embed_dim 10 must be positive and divisible by num_heads 3");
        nn::MultiheadAttention mha(8, 2, gen);
        FS_EXPECT_ERROR(mha(zeros({2, 3, 6})), "nn.MultiheadAttention: query, key, value must be [B,T,8]");
        FS_EXPECT_ERROR(mha(std::vector<Tensor>{zeros({2, 3, 8}), zeros({1, 3, 8}), zeros({1, 3, 8})}),
                        "batch sizes or key/value lengths differ in [2,3,8], [1,3,8], [1,3,8]");
        FS_EXPECT_ERROR(mha(std::vector<Tensor>{zeros({2, 3, 8}), zeros({2, 3, 8})}), "got 2 inputs");
        const Tensor x = zeros({2, 3, 8});
        FS_EXPECT_ERROR(mha(std::vector<Tensor>{x, x, x, zeros({5, 3, 3})}), "attn_mask must be [L,S] or [4,L,S]");
    }

    void seededInitIsDeterministic()
    {
        auto weights = [](uint64_t seed) {
            Generator gen(seed);
            nn::Sequential net{std::make_shared<nn::Linear>(64, 32, gen),
                               std::make_shared<nn::Conv2d>(4, 8, IntList{3}, gen),
                               std::make_shared<nn::MultiheadAttention>(16, 2, gen),
                               std::make_shared<nn::Embedding>(5, 3, gen)};
            Values all;
            for (const auto &[name, t] : net.namedParameters()) {
                const Values v = t.toDoubleVector();
                all.insert(all.end(), v.begin(), v.end());
            }
            return all;
        };
        const Values a = weights(7), b = weights(7), c = weights(8);
        QCOMPARE(a.size(), b.size());
        QVERIFY(a == b);
        QVERIFY(a != c);
    }

    void initBoundsMatchPyTorch_data()
    {
        QTest::addColumn<QString>("module");
        QTest::addColumn<QString>("tensor");
        QTest::addColumn<double>("bound");
        QTest::newRow("linear-weight") << "linear" << "weight" << 1 / std::sqrt(64.0);
        QTest::newRow("linear-bias") << "linear" << "bias" << 1 / std::sqrt(64.0);
        QTest::newRow("conv-weight") << "conv" << "weight" << 1 / std::sqrt(4.0 * 9);
        QTest::newRow("conv-bias") << "conv" << "bias" << 1 / std::sqrt(4.0 * 9);
        QTest::newRow("mha-in-proj") << "mha" << "in_proj_weight" << std::sqrt(6.0 / (16 + 48));
    }

    void initBoundsMatchPyTorch()
    {
        QFETCH(QString, module);
        QFETCH(QString, tensor);
        QFETCH(double, bound);
        Generator gen(130);
        std::shared_ptr<nn::Module> m;
        if (module == "linear")
            m = std::make_shared<nn::Linear>(64, 512, gen);
        else if (module == "conv")
            m = std::make_shared<nn::Conv2d>(4, 512, IntList{3, 3}, gen);
        else
            m = std::make_shared<nn::MultiheadAttention>(16, 2, gen);
        const Values v = m->parameter(tensor.toStdString()).toDoubleVector();
        double top = 0, mean = 0;
        for (double x : v) {
            top = std::max(top, std::fabs(x));
            mean += x / double(v.size());
        }
        QVERIFY2(top <= bound && top > 0.95 * bound, qPrintable(QString("max |w| %1, bound %2").arg(top).arg(bound)));
        QVERIFY(std::fabs(mean) < 0.1 * bound);
    }

    void trainEvalIsRecursive()
    {
        auto child = std::make_shared<Block>();
        nn::Sequential root{child};
        QVERIFY(root.isTraining() && child->bn1->isTraining());
        root.eval();
        QVERIFY(!root.isTraining() && !child->isTraining() && !child->bn1->isTraining());
        auto late = std::make_shared<nn::ReLU>();
        root.append(late);
        QVERIFY(!late->isTraining()); // a new child takes its parent's mode
        root.train();
        QVERIFY(root.isTraining() && child->bn1->isTraining() && late->isTraining());
    }

    void metaInputsGiveMetaOutputs()
    {
        Generator gen(140);
        nn::Sequential net{std::make_shared<nn::Conv2d>(3, 8, IntList{3}, gen, nn::Conv2dOptions{.padding = {1}}),
                           std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>(),
                           std::make_shared<nn::AdaptiveAvgPool2d>(IntList{1}), std::make_shared<nn::Flatten>(),
                           std::make_shared<nn::Linear>(8, 4, gen)};
        net.eval();
        const Tensor y = net(Tensor::empty({2, 3, 10, 10}, DType::F32, kMeta));
        QVERIFY(y.isMeta());
        QCOMPARE(y.sizes(), (Shape{2, 4}));
    }

    void toConvertsFloatingTensorsOnly()
    {
        Block block;
        block.to(DType::F16);
        QCOMPARE(block.bn1->parameter("weight").dtype(), DType::F16);
        QCOMPARE(block.bn1->buffer("running_var").dtype(), DType::F16);
        QCOMPARE(block.bn1->buffer("num_batches_tracked").dtype(), DType::I64);
    }

    void reprLooksLikePyTorch()
    {
        Generator gen(150);
        nn::Sequential net{std::make_shared<nn::Linear>(4, 8, gen), std::make_shared<nn::GELU>("tanh")};
        QCOMPARE(net.repr(), std::string("Sequential(\n"
                                         "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
                                         "  (1): GELU(approximate='tanh')\n"
                                         ")"));
    }

    void registrationErrors()
    {
        Block block;
        FS_EXPECT_ERROR(block.adopt("conv1", std::make_shared<nn::ReLU>()), "nn.Block: attribute 'conv1' already exists");
        FS_EXPECT_ERROR(block.addParameter("a.b", zeros({1})), "invalid attribute name 'a.b'");
        FS_EXPECT_ERROR(block.adopt("again", block.bn1), "nn.Block: module 'again' already belongs to '' (Block)");
        FS_EXPECT_ERROR(block.setTensor("bn1.weight", zeros({3})),
                        "nn.BatchNorm2d: 'weight' has shape [2], cannot set a tensor of shape [3]");
        FS_EXPECT_ERROR(block.setTensor("bn2.weight", zeros({2})), "nn.Block: no submodule 'bn2'");
        FS_EXPECT_ERROR(block.setTensor("bn1.gamma", zeros({2})), "nn.BatchNorm2d: no parameter or buffer 'gamma'");
        FS_EXPECT_ERROR(block.parameter("weight"), "nn.Block: no parameter 'weight'");
        nn::Sequential seq;
        FS_EXPECT_ERROR(seq.at(0), "nn.Sequential: index 0 is out of range for 0 modules");
        nn::ModuleList list{std::make_shared<nn::ReLU>()};
        FS_EXPECT_ERROR(list(zeros({1})), "nn.ModuleList: is a container without forward");
        Generator gen(160);
        FS_EXPECT_ERROR(nn::Conv2d(3, 4, {3}, gen, {.groups = 2}), "nn.Conv2d: channels 3 -> 4 must be positive and divisible by groups 2");
        FS_EXPECT_ERROR(nn::Conv2d(3, 4, {3, 3, 3}, gen), "nn.Conv2d: kernel_size needs 1 or 2 values, got [3,3,3]");
        nn::ReLU relu;
        FS_EXPECT_ERROR(relu(std::vector<Tensor>{zeros({1}), zeros({1})}), "nn.ReLU: forward takes 1 input, got 2");
    }
};

QTEST_GUILESS_MAIN(TestNn)
#include "tst_core_nn.moc"
