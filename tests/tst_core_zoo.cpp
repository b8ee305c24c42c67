// The model zoo: PyTorch's / torchvision's / Hugging Face's parameter names and
// counts, output shapes on real and meta inputs, seeded determinism, and the
// maths of every block against plain f64 references on small shapes.
#include "optest.h"

#include "core/nn/nn.h"
#include "core/ops/registry.h"
#include "core/zoo/encoder.h"
#include "core/zoo/llama.h"
#include "core/zoo/resnet.h"
#include "core/zoo/workloads.h"
#include "core/zoo/zoo.h"

#include <cmath>

using namespace fusescope;
using namespace fusescope::test;

namespace {

using Values = std::vector<double>;

Values vals(const nn::Module &m, const std::string &name)
{
    for (const auto &[n, t] : m.stateDict()) {
        if (n == name)
            return t.toDoubleVector();
    }
    return {};
}

// Gives every parameter of m random values, so biases and norm weights matter.
void randomizeParameters(nn::Module &m, uint64_t seed, double scale)
{
    for (const auto &[name, t] : m.namedParameters())
        m.setTensor(name, randomTensor(t.sizes(), seed++, scale));
}

// --- f64 references ------------------------------------------------------------

Values rmsNormRef(const Values &x, int64_t width, const Values &w, double eps)
{
    Values y(x.size());
    for (size_t r = 0; r < x.size() / size_t(width); ++r) {
        double sq = 0;
        for (int64_t i = 0; i < width; ++i)
            sq += std::pow(x[r * size_t(width) + size_t(i)], 2) / double(width);
        for (int64_t i = 0; i < width; ++i) {
            const size_t k = r * size_t(width) + size_t(i);
            y[k] = x[k] / std::sqrt(sq + eps) * w[size_t(i)];
        }
    }
    return y;
}

Values map(Values x, double (*f)(double))
{
    for (double &v : x)
        v = f(v);
    return x;
}

Values plus(Values a, const Values &b)
{
    for (size_t i = 0; i < a.size(); ++i)
        a[i] += b[i];
    return a;
}

double gelu(double v)
{
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
}

double silu(double v)
{
    return v / (1 + std::exp(-v));
}

// Rotate-half rotary embedding of x [B,S,E] per head, positions 0..S-1.
Values rotaryRef(Values x, int64_t batch, int64_t len, int64_t embed, int64_t heads, double theta)
{
    const int64_t d = embed / heads, half = d / 2;
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < len; ++s)
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t i = 0; i < half; ++i) {
                    const double angle = double(s) * std::pow(theta, -2.0 * double(i) / double(d));
                    double &lo = x[size_t((b * len + s) * embed + h * d + i)];
                    double &hi = x[size_t((b * len + s) * embed + h * d + half + i)];
                    const double a = lo, c = hi;
                    lo = a * std::cos(angle) - c * std::sin(angle);
                    hi = c * std::cos(angle) + a * std::sin(angle);
                }
    return x;
}

// Inference batch norm over [N, C, H*W] laid out row-major.
Values batchNormRef(const Values &x, int64_t channels, int64_t plane, const nn::Module &bn)
{
    const Values m = vals(bn, "running_mean"), v = vals(bn, "running_var"), w = vals(bn, "weight"),
                 b = vals(bn, "bias");
    Values y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const size_t c = (i / size_t(plane)) % size_t(channels);
        y[i] = (x[i] - m[c]) / std::sqrt(v[c] + 1e-5) * w[c] + b[c];
    }
    return y;
}

// --- architecture bookkeeping ------------------------------------------------

// torchvision's resnet18 state_dict parameter names, and their element count.
QStringList resnet18ParameterNames(int64_t &count)
{
    QStringList names{"conv1.weight", "bn1.weight", "bn1.bias"};
    count = 3 * 64 * 7 * 7 + 2 * 64;
    int64_t in = 64;
    const int64_t planes[4] = {64, 128, 256, 512};
    for (int layer = 0; layer < 4; ++layer) {
        for (int block = 0; block < 2; ++block) {
            const QString p = QString("layer%1.%2.").arg(layer + 1).arg(block);
            const int64_t out = planes[layer];
            const bool down = block == 0 && in != out;
            names << p + "conv1.weight" << p + "bn1.weight" << p + "bn1.bias" << p + "conv2.weight" << p + "bn2.weight"
                  << p + "bn2.bias";
            count += in * out * 9 + 2 * out + out * out * 9 + 2 * out;
            if (down) {
                names << p + "downsample.0.weight" << p + "downsample.1.weight" << p + "downsample.1.bias";
                count += in * out + 2 * out;
            }
            in = out;
        }
    }
    names << "fc.weight" << "fc.bias";
    count += 512 * 1000 + 1000;
    return names;
}

class PathTracer : public DispatchTracer
{
public:
    void record(const OpDef &op, const Args &, const TensorList &) override
    {
        ops.push_back(op.name());
        paths.push_back(nn::currentModulePath());
    }
    std::vector<std::string> ops;
    std::vector<std::string> paths;
};

bool allFinite(const Tensor &t)
{
    for (double v : t.toDoubleVector()) {
        if (!std::isfinite(v))
            return false;
    }
    return true;
}

} // namespace

class TestZoo : public QObject
{
    Q_OBJECT
private slots:
    void namesAndInfo()
    {
        QCOMPARE(zoo::modelNames(), (std::vector<std::string>{"pointwise", "softmax_ln", "mlp", "encoder", "resnet18",
                                                              "llama_block"}));
        const zoo::ModelInfo info = zoo::info("resnet18");
        QCOMPARE(info.name, std::string("resnet18"));
        QVERIFY(!info.description.empty());
        QCOMPARE(info.inputs.size(), size_t(1));
        QCOMPARE(info.inputs[0].shape, (Shape{4, 3, 224, 224}));
        QCOMPARE(info.inputs[0].dtype, DType::F32);
        QCOMPARE(zoo::info("pointwise").inputs[0].shape, (Shape{4096, 1024}));
        QCOMPARE(zoo::info("softmax_ln").inputs[0].shape, (Shape{8192, 512}));
        QCOMPARE(zoo::info("mlp").inputs[0].shape, (Shape{256, 512}));
        QCOMPARE(zoo::info("encoder").inputs[0].shape, (Shape{8, 128, 256}));
        QCOMPARE(zoo::info("llama_block").inputs[0].shape, (Shape{2, 256, 512}));
        FS_EXPECT_ERROR(zoo::info("vgg16"), "zoo: unknown model 'vgg16'; known models: pointwise, softmax_ln, mlp, "
                                            "encoder, resnet18, llama_block");
        FS_EXPECT_ERROR(zoo::create("", 0), "zoo: unknown model ''");
    }

    void resnet18MatchesTorchvision()
    {
        const zoo::Instance r = zoo::create("resnet18", 0);
        int64_t computed = 0;
        const QStringList expected = resnet18ParameterNames(computed);
        QCOMPARE(names(r.model->namedParameters()), expected);
        QCOMPARE(computed, int64_t(11689512)); // torchvision's published count
        QCOMPARE(r.model->numParameters(), computed);
        // Every batch norm adds running_mean, running_var and num_batches_tracked.
        QCOMPARE(r.model->stateDict().size(), size_t(62 + 20 * 3));
        QCOMPARE(r.model->stateDict()[3].first, std::string("bn1.running_mean"));
        const nn::Module &down = r.model->child("layer2").child("0").child("downsample");
        QCOMPARE(down.child("0").parameter("weight").sizes(), (Shape{128, 64, 1, 1}));
        QCOMPARE(r.model->child("fc").parameter("weight").sizes(), (Shape{1000, 512}));
        QCOMPARE(r.model->child("layer4").child("1").child("conv2").modulePath(), std::string("layer4.1.conv2"));
        QVERIFY(!r.model->isTraining());
        QVERIFY(!r.model->child("layer1").child("0").child("bn1").isTraining());
    }

    void resnetConvInitIsKaimingNormalFanOut()
    {
        const zoo::Instance r = zoo::create("resnet18", 1);
        const Values w = r.model->child("layer3").child("0").child("conv1").parameter("weight").toDoubleVector();
        double sq = 0;
        for (double v : w)
            sq += v * v / double(w.size());
        const double expectedVar = 2.0 / (256 * 9); // fan_out = out channels * kernel area
        QVERIFY2(std::fabs(sq / expectedVar - 1) < 0.05, qPrintable(QString::number(sq / expectedVar)));
    }

    void encoderMatchesPyTorchNames()
    {
        const zoo::Instance e = zoo::create("encoder", 0);
        QCOMPARE(names(e.model->namedParameters()),
                 QStringList({"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                              "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                              "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}));
        QStringList modules;
        for (const auto &[path, m] : e.model->namedModules())
            modules << QString::fromStdString(path);
        QCOMPARE(modules, QStringList({"", "self_attn", "self_attn.out_proj", "linear1", "dropout", "linear2", "norm1",
                                       "norm2", "dropout1", "dropout2"}));
        // d=256, ffn=1024: attention 4*E*E + 4*E, feed-forward 2*E*F + F + E, norms 4*E.
        const int64_t E = 256, F = 1024;
        const int64_t computed = 4 * E * E + 4 * E + 2 * E * F + F + E + 4 * E;
        QCOMPARE(computed, int64_t(789760));
        QCOMPARE(e.model->numParameters(), computed);
    }

    void llamaMatchesHuggingFaceNames()
    {
        const zoo::Instance l = zoo::create("llama_block", 0);
        QCOMPARE(names(l.model->namedParameters()),
                 QStringList({"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                              "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
                              "mlp.down_proj.weight", "input_layernorm.weight", "post_attention_layernorm.weight"}));
        const int64_t E = 512, I = 1376;
        QCOMPARE(l.model->numParameters(), 4 * E * E + 3 * E * I + 2 * E);
        // The rotary tables are buffers, but not part of the state_dict (as Hugging Face's).
        QCOMPARE(names(l.model->namedBuffers()),
                 QStringList({"self_attn.rotary_emb.cos_cached", "self_attn.rotary_emb.sin_cached"}));
        QCOMPARE(l.model->stateDict().size(), size_t(9));
    }

    void mlpIsSequential()
    {
        const zoo::Instance m = zoo::create("mlp", 0);
        QCOMPARE(names(m.model->namedParameters()), QStringList({"0.weight", "0.bias", "2.weight", "2.bias",
                                                                 "4.weight", "4.bias"}));
        QCOMPARE(m.model->numParameters(), int64_t(512 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 512 + 512));
        QCOMPARE(names(zoo::create("pointwise", 0).model->namedParameters()), QStringList({"weight", "bias"}));
        QCOMPARE(zoo::create("softmax_ln", 0).model->numParameters(), int64_t(0));
    }

    void sameSeedSameModel_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name : {"pointwise", "mlp", "encoder", "llama_block"})
            QTest::newRow(name) << name;
    }

    void sameSeedSameModel()
    {
        QFETCH(QString, name);
        auto flatten = [](const zoo::Instance &inst) {
            Values all;
            for (const auto &[n, t] : inst.model->stateDict()) {
                const Values v = t.toDoubleVector();
                all.insert(all.end(), v.begin(), v.end());
            }
            for (const Tensor &t : inst.inputs) {
                const Values v = t.toDoubleVector();
                all.insert(all.end(), v.begin(), v.end());
            }
            return all;
        };
        const Values a = flatten(zoo::create(name.toStdString(), 42));
        const Values b = flatten(zoo::create(name.toStdString(), 42));
        const Values c = flatten(zoo::create(name.toStdString(), 43));
        QVERIFY(a == b);
        QCOMPARE(a.size(), c.size());
        QVERIFY(a != c);
    }

    void forwardShapesAndFiniteOutputs_data()
    {
        QTest::addColumn<QString>("name");
        for (const std::string &name : zoo::modelNames())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }

    void forwardShapesAndFiniteOutputs()
    {
        QFETCH(QString, name);
        const zoo::Instance inst = zoo::create(name.toStdString(), 7);
        const zoo::ModelInfo info = zoo::info(name.toStdString());
        QCOMPARE(inst.inputs.size(), info.inputs.size());
        for (size_t i = 0; i < inst.inputs.size(); ++i)
            QCOMPARE(inst.inputs[i].sizes(), info.inputs[i].shape);
        const Tensor y = (*inst.model)(inst.inputs);
        QCOMPARE(y.sizes(), info.outputShape);
        QCOMPARE(y.dtype(), DType::F32);
        QVERIFY(allFinite(y));
    }

    void metaCapture_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("somePath");
        QTest::newRow("pointwise") << "pointwise" << "";
        QTest::newRow("softmax_ln") << "softmax_ln" << "";
        QTest::newRow("mlp") << "mlp" << "2";
        QTest::newRow("encoder") << "encoder" << "self_attn.out_proj";
        QTest::newRow("resnet18") << "resnet18" << "layer2.0.downsample.1";
        QTest::newRow("llama_block") << "llama_block" << "self_attn.rotary_emb";
    }

    void metaCapture()
    {
        QFETCH(QString, name);
        QFETCH(QString, somePath);
        const zoo::Instance inst = zoo::create(name.toStdString(), 0);
        const std::vector<Tensor> inputs = zoo::metaInputs(name.toStdString());
        PathTracer tracer;
        DispatchTracer *previous = setDispatchTracer(&tracer);
        Tensor y;
        try {
            y = (*inst.model)(inputs);
        } catch (...) {
            setDispatchTracer(previous);
            throw;
        }
        setDispatchTracer(previous);
        QVERIFY(y.isMeta());
        QCOMPARE(y.sizes(), zoo::info(name.toStdString()).outputShape);
        QVERIFY(!tracer.ops.empty());
        QVERIFY2(std::find(tracer.paths.begin(), tracer.paths.end(), somePath.toStdString()) != tracer.paths.end(),
                 qPrintable("no op recorded under " + somePath));
    }

    void pointwiseMatchesReference()
    {
        Generator gen(1);
        zoo::PointwiseChain model(16, gen);
        const Tensor x = randomTensor({5, 16}, 2, 2);
        const Values xs = x.toDoubleVector(), w = vals(model, "weight"), b = vals(model, "bias");
        Values expected(xs.size());
        for (size_t i = 0; i < xs.size(); ++i) {
            const double v = xs[i];
            expected[i] = gelu(v * w[i % 16] + b[i % 16]) / (1 + std::exp(-v)) + v;
        }
        FS_COMPARE_VALUES(model(x), (Shape{5, 16}), expected, 1e-5, 1e-5);
    }

    void softmaxLayerNormMatchesReference()
    {
        zoo::SoftmaxLayerNorm model;
        const Tensor x = randomTensor({6, 32}, 3, 3);
        const Values xs = x.toDoubleVector();
        Values soft(xs.size());
        for (size_t r = 0; r < 6; ++r) {
            double top = -INFINITY, total = 0;
            for (size_t i = 0; i < 32; ++i)
                top = std::max(top, xs[r * 32 + i]);
            for (size_t i = 0; i < 32; ++i)
                total += std::exp(xs[r * 32 + i] - top);
            for (size_t i = 0; i < 32; ++i)
                soft[r * 32 + i] = std::exp(xs[r * 32 + i] - top) / total;
        }
        // Softmax values are small, so eps 1e-5 is not negligible: the reference keeps it.
        FS_COMPARE_VALUES(model(x), (Shape{6, 32}), layerNormRef(soft, 32, {}, {}, 1e-5), 1e-4, 1e-4);
    }

    void mlpMatchesReference()
    {
        Generator gen(4);
        const auto mlp = zoo::makeMlp(6, 10, 4, gen);
        const Tensor x = randomTensor({3, 6}, 5);
        Values h = map(linearRef(x.toDoubleVector(), 6, vals(*mlp, "0.weight"), vals(*mlp, "0.bias")), gelu);
        h = map(linearRef(h, 10, vals(*mlp, "2.weight"), vals(*mlp, "2.bias")), gelu);
        FS_COMPARE_VALUES((*mlp)(x), (Shape{3, 4}), linearRef(h, 10, vals(*mlp, "4.weight"), vals(*mlp, "4.bias")),
                          1e-5, 1e-5);
    }

    void encoderMatchesReference()
    {
        Generator gen(6);
        const int64_t B = 2, L = 5, E = 8, H = 2, F = 16;
        zoo::TransformerEncoderLayer layer(E, H, F, gen);
        layer.eval();
        randomizeParameters(layer, 100, 0.5);
        const Tensor x = randomTensor({B, L, E}, 7);
        const Values xs = x.toDoubleVector();
        const Values w = vals(layer, "self_attn.in_proj_weight"), b = vals(layer, "self_attn.in_proj_bias");
        auto rows = [](const Values &all, int64_t i, int64_t n) {
            return Values(all.begin() + i * n, all.begin() + (i + 1) * n);
        };
        const Values q = linearRef(xs, E, rows(w, 0, E * E), rows(b, 0, E));
        const Values k = linearRef(xs, E, rows(w, 1, E * E), rows(b, 1, E));
        const Values v = linearRef(xs, E, rows(w, 2, E * E), rows(b, 2, E));
        const Values attn = linearRef(attentionRef(q, k, v, B, L, L, E, H, {}, false), E,
                                      vals(layer, "self_attn.out_proj.weight"), vals(layer, "self_attn.out_proj.bias"));
        const Values h = layerNormRef(plus(xs, attn), E, vals(layer, "norm1.weight"), vals(layer, "norm1.bias"), 1e-5);
        const Values ff = linearRef(map(linearRef(h, E, vals(layer, "linear1.weight"), vals(layer, "linear1.bias")), gelu),
                                    F, vals(layer, "linear2.weight"), vals(layer, "linear2.bias"));
        const Values expected = layerNormRef(plus(h, ff), E, vals(layer, "norm2.weight"), vals(layer, "norm2.bias"), 1e-5);
        FS_COMPARE_VALUES(layer(x), (Shape{B, L, E}), expected, 1e-4, 1e-4);
    }

    void llamaMatchesReference()
    {
        Generator gen(8);
        const int64_t B = 2, S = 5, E = 8, H = 2, I = 12;
        const zoo::LlamaConfig config{.hiddenSize = E, .numHeads = H, .intermediateSize = I, .maxPositions = 16};
        zoo::LlamaDecoderLayer layer(config, gen);
        randomizeParameters(layer, 200, 0.5);
        const Tensor x = randomTensor({B, S, E}, 9);
        const Values xs = x.toDoubleVector();
        const Values n1 = rmsNormRef(xs, E, vals(layer, "input_layernorm.weight"), 1e-6);
        const Values q = rotaryRef(linearRef(n1, E, vals(layer, "self_attn.q_proj.weight")), B, S, E, H, 10000);
        const Values k = rotaryRef(linearRef(n1, E, vals(layer, "self_attn.k_proj.weight")), B, S, E, H, 10000);
        const Values v = linearRef(n1, E, vals(layer, "self_attn.v_proj.weight"));
        const Values h = plus(xs, linearRef(attentionRef(q, k, v, B, S, S, E, H, {}, true), E,
                                            vals(layer, "self_attn.o_proj.weight")));
        const Values n2 = rmsNormRef(h, E, vals(layer, "post_attention_layernorm.weight"), 1e-6);
        Values act = map(linearRef(n2, E, vals(layer, "mlp.gate_proj.weight")), silu);
        const Values up = linearRef(n2, E, vals(layer, "mlp.up_proj.weight"));
        for (size_t i = 0; i < act.size(); ++i)
            act[i] *= up[i];
        const Values expected = plus(h, linearRef(act, I, vals(layer, "mlp.down_proj.weight")));
        FS_COMPARE_VALUES(layer(x), (Shape{B, S, E}), expected, 1e-4, 1e-4);
        FS_EXPECT_ERROR(layer(zeros({1, 17, E})), "zoo.LlamaRotaryEmbedding: expected [..., S, 4] with S <= 16");
    }

    void basicBlockMatchesReference()
    {
        Generator gen(10);
        zoo::BasicBlock block(4, 6, 2, gen);
        block.eval();
        // Running statistics away from 0/1, so the block's use of them is checked.
        for (const auto &[name, t] : block.namedBuffers()) {
            if (name.find("running_mean") != std::string::npos)
                block.setTensor(name, randomTensor(t.sizes(), 300 + name.size(), 0.3));
            else if (name.find("running_var") != std::string::npos)
                block.setTensor(name, ops::add(ops::abs(randomTensor(t.sizes(), 400 + name.size())), 0.5));
        }
        randomizeParameters(block, 500, 0.5);
        const Tensor x = randomTensor({2, 4, 7, 7}, 11);
        const Values xs = x.toDoubleVector();
        // n, c, h, w, o, kh, kw, stride, pad, dilation, groups
        const ConvGeometry g1{2, 4, 7, 7, 6, 3, 3, 2, 1, 1, 1}, g2{2, 6, 4, 4, 6, 3, 3, 1, 1, 1, 1},
            gd{2, 4, 7, 7, 6, 1, 1, 2, 0, 1, 1};
        const int64_t plane = 16;
        Values h = map(batchNormRef(conv2dRef(xs, vals(block, "conv1.weight"), {}, g1), 6, plane, block.child("bn1")),
                       [](double v) { return v > 0 ? v : 0.0; });
        h = batchNormRef(conv2dRef(h, vals(block, "conv2.weight"), {}, g2), 6, plane, block.child("bn2"));
        const Values identity = batchNormRef(conv2dRef(xs, vals(block, "downsample.0.weight"), {}, gd), 6, plane,
                                             block.child("downsample").child("1"));
        const Values expected = map(plus(h, identity), [](double v) { return v > 0 ? v : 0.0; });
        FS_COMPARE_VALUES(block(x), (Shape{2, 6, 4, 4}), expected, 1e-4, 1e-4);
    }
};

QTEST_GUILESS_MAIN(TestZoo)
#include "tst_core_zoo.moc"
