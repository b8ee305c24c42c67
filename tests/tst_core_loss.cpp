// Loss ops against plain f64 reference loops. Shapes in the data rows are
// written as "2,3" ("" is 0-d).
#include "optest.h"

#include "core/ops/registry.h"

#include <QObject>
#include <QStringList>

#include <cmath>

using namespace fusescope;
using namespace fusescope::test;

namespace {

// Class indices in [0, classes); every `ignoreEvery`-th position (if > 0)
// holds ignoreIndex instead (1: all of them).
Tensor classTargets(const Shape &shape, int64_t classes, int ignoreEvery, int64_t ignoreIndex, DType dtype,
                    uint64_t seed)
{
    Generator gen(seed);
    std::vector<double> values(static_cast<size_t>(numelOf(shape)));
    for (size_t i = 0; i < values.size(); ++i) {
        const bool ignored
            = ignoreEvery > 0 && i % static_cast<size_t>(ignoreEvery) == static_cast<size_t>(ignoreEvery - 1);
        values[i] = ignored ? static_cast<double>(ignoreIndex)
                            : static_cast<double>(gen.next() % static_cast<uint64_t>(classes));
    }
    return fromVector(values, shape, dtype);
}

// Tolerances for a loss computed from inputs of dtype t and returned in t.
double lossTol(DType t)
{
    return t == DType::F64 ? 1e-10 : t == DType::F32 ? 2e-5 : 2 * rtolFor(t);
}

struct ClassLossCase {
    Shape inputShape;
    std::vector<double> input;  // row-major
    std::vector<double> target; // row-major, [N, d...]
    std::vector<double> weight; // empty: none
    int64_t ignoreIndex = -100;
    double smoothing = 0;
    bool logits = false; // cross_entropy: input are logits, not log-probabilities
};

// Per-position losses and weights of nll_loss / cross_entropy, in f64.
void classLossRef(const ClassLossCase &c, std::vector<double> &losses, std::vector<double> &weights)
{
    const bool oneD = c.inputShape.size() == 1;
    const int64_t n = oneD ? 1 : c.inputShape[0], classes = oneD ? c.inputShape[0] : c.inputShape[1];
    int64_t s = 1;
    for (size_t d = 2; d < c.inputShape.size(); ++d)
        s *= c.inputShape[d];
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < s; ++j) {
            const auto t = static_cast<int64_t>(c.target[static_cast<size_t>(i * s + j)]);
            std::vector<double> logp(static_cast<size_t>(classes));
            double maxv = -INFINITY, sum = 0;
            for (int64_t k = 0; k < classes; ++k) {
                logp[static_cast<size_t>(k)] = c.input[static_cast<size_t>((i * classes + k) * s + j)];
                maxv = std::max(maxv, logp[static_cast<size_t>(k)]);
            }
            for (double v : logp)
                sum += std::exp(v - maxv);
            if (c.logits) {
                for (double &v : logp)
                    v -= maxv + std::log(sum);
            }
            auto w = [&](int64_t k) { return c.weight.empty() ? 1.0 : c.weight[static_cast<size_t>(k)]; };
            if (t == c.ignoreIndex) {
                losses.push_back(0);
                weights.push_back(0);
                continue;
            }
            double smooth = 0;
            for (int64_t k = 0; k < classes; ++k)
                smooth -= w(k) * logp[static_cast<size_t>(k)];
            const double nll = -w(t) * logp[static_cast<size_t>(t)];
            losses.push_back((1 - c.smoothing) * nll + c.smoothing / static_cast<double>(classes) * smooth);
            weights.push_back(w(t));
        }
    }
}

std::vector<double> reduceRef(const std::vector<double> &losses, const std::vector<double> &weights,
                              const QString &reduction)
{
    if (reduction == QLatin1String("none"))
        return losses;
    double sum = 0, wsum = 0;
    for (size_t i = 0; i < losses.size(); ++i) {
        sum += losses[i];
        wsum += weights[i];
    }
    return {reduction == QLatin1String("sum") ? sum : sum / wsum};
}

} // namespace

class TestCoreLoss : public QObject
{
    Q_OBJECT

private slots:
    void mse_data();
    void mse();
    void mseErrors();
    void mseDecomposition();
    void classLoss_data();
    void classLoss();
    void crossEntropyLargeLogits();
    void classLossErrors();
    void crossEntropyDecomposition_data();
    void crossEntropyDecomposition();
    void metaShapes();
    void opKinds();
};

// --- mse_loss ----------------------------------------------------------------------

void TestCoreLoss::mse_data()
{
    QTest::addColumn<QString>("inputShape");
    QTest::addColumn<QString>("targetShape");
    QTest::addColumn<QString>("reduction");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("targetDtype");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<QString>("expectedDtype");

    for (const char *red : {"mean", "sum", "none"}) {
        QTest::addRow("%s f32", red) << "4,5" << "4,5" << red << "f32" << "f32" << "contiguous" << "f32";
        QTest::addRow("%s f64 transposed", red) << "3,4" << "3,4" << red << "f64" << "f64" << "transposed" << "f64";
        QTest::addRow("%s sliced", red) << "3,4" << "3,4" << red << "f32" << "f32" << "sliced" << "f32";
        QTest::addRow("%s broadcast target", red) << "2,3" << "3" << red << "f32" << "f32" << "offset" << "f32";
        QTest::addRow("%s broadcast both", red) << "2,1" << "1,3" << red << "f64" << "f64" << "contiguous" << "f64";
        QTest::addRow("%s f16", red) << "3,5" << "3,5" << red << "f16" << "f16" << "transposed" << "f16";
        QTest::addRow("%s bf16", red) << "3,5" << "3,5" << red << "bf16" << "bf16" << "contiguous" << "bf16";
        QTest::addRow("%s promote f16 f32", red) << "3,5" << "3,5" << red << "f16" << "f32" << "contiguous" << "f32";
        QTest::addRow("%s integer input", red) << "2,3" << "2,3" << red << "i64" << "f64" << "contiguous" << "f64";
        QTest::addRow("%s integers", red) << "2,3" << "2,3" << red << "i32" << "i32" << "contiguous" << "f32";
        QTest::addRow("%s 0-d", red) << "" << "" << red << "f32" << "f32" << "contiguous" << "f32";
        QTest::addRow("%s empty", red) << "0,3" << "0,3" << red << "f32" << "f32" << "contiguous" << "f32";
        QTest::addRow("%s large", red) << "1000,100" << "1000,100" << red << "f32" << "f32" << "contiguous" << "f32";
    }
}

void TestCoreLoss::mse()
{
    QFETCH(QString, inputShape);
    QFETCH(QString, targetShape);
    QFETCH(QString, reduction);
    QFETCH(QString, dtype);
    QFETCH(QString, targetDtype);
    QFETCH(QString, layout);
    QFETCH(QString, expectedDtype);
    const Shape xs = parseShape(inputShape), ts = parseShape(targetShape);
    const Tensor x = withLayout(normalInput(xs, parseDt(dtype), 1, 3), layout);
    const Tensor t = withLayout(normalInput(ts, parseDt(targetDtype), 2, 3), layout);
    Shape shape(std::max(xs.size(), ts.size()), 1);
    for (size_t i = 0; i < shape.size(); ++i) {
        const size_t fromEnd = shape.size() - i;
        const int64_t a = fromEnd <= xs.size() ? xs[xs.size() - fromEnd] : 1;
        const int64_t b = fromEnd <= ts.size() ? ts[ts.size() - fromEnd] : 1;
        shape[i] = a == 1 ? b : a;
    }
    const std::vector<double> xv = x.toDoubleVector(), tv = t.toDoubleVector();
    // Broadcast by hand: a size-1 (or missing) dim repeats its element.
    auto at = [&](const std::vector<double> &v, const Shape &s, const Shape &idx) {
        int64_t flat = 0;
        const size_t lead = idx.size() - s.size();
        for (size_t d = 0; d < s.size(); ++d)
            flat = flat * s[d] + (s[d] == 1 ? 0 : idx[d + lead]);
        return v[static_cast<size_t>(flat)];
    };
    std::vector<double> losses;
    for (int64_t flat = 0; flat < numelOf(shape); ++flat) {
        Shape idx(shape.size());
        int64_t rest = flat;
        for (size_t d = shape.size(); d-- > 0;) {
            idx[d] = rest % shape[d];
            rest /= shape[d];
        }
        const double diff = at(xv, xs, idx) - at(tv, ts, idx);
        losses.push_back(diff * diff);
    }
    std::vector<double> expected = losses;
    if (reduction != QLatin1String("none")) {
        double sum = 0;
        for (double l : losses)
            sum += l;
        expected = {reduction == QLatin1String("sum") ? sum : sum / static_cast<double>(losses.size())};
    }
    const Tensor out = ops::mseLoss(x, t, reduction.toStdString());
    const DType outDt = parseDt(expectedDtype);
    QCOMPARE(out.dtype(), outDt);
    const Shape outShape = reduction == QLatin1String("none") ? shape : Shape{};
    FS_COMPARE_VALUES(out, outShape, expected, lossTol(outDt), lossTol(outDt));
}

void TestCoreLoss::mseErrors()
{
    FS_EXPECT_ERROR(ops::mseLoss(zeros({2, 3}), zeros({4})), "aten.mse_loss: shapes [2,3] and [4] cannot be broadcast");
    FS_EXPECT_ERROR(ops::mseLoss(zeros({2}), zeros({2}), "avg"),
                    "aten.mse_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'");
}

void TestCoreLoss::mseDecomposition()
{
    FS_REQUIRE_OPS("aten.sub", "aten.mul", "aten.mean", "aten.sum", "aten.cast");
    const OpDef &op = OpRegistry::instance().get("aten.mse_loss");
    QVERIFY(op.decompose);
    const Tensor x = withLayout(normalInput({4, 6}, DType::F32, 3), "transposed");
    const Tensor t = normalInput({6}, DType::F32, 4);
    const Tensor xi = fromVector({1, -2, 3, 4, 0, 7}, {2, 3}, DType::I64);
    for (const char *red : {"mean", "sum", "none"}) {
        for (const auto &[input, target] : {std::pair{x, t}, std::pair{xi, ops::flip(xi, {0})}}) {
            const Tensor eager = ops::mseLoss(input, target, red);
            const TensorList decomposed = op.decompose({input, target, std::string(red)});
            FS_COMPARE_VALUES(decomposed.at(0), eager.sizes(), eager.toDoubleVector(), 1e-5, 1e-6);
            QCOMPARE(decomposed.at(0).dtype(), eager.dtype());
        }
    }
}

// --- nll_loss / cross_entropy ------------------------------------------------------

void TestCoreLoss::classLoss_data()
{
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("inputShape");
    QTest::addColumn<QString>("reduction");
    QTest::addColumn<bool>("weighted");
    QTest::addColumn<int>("ignoreEvery");
    QTest::addColumn<int>("ignoreIndex");
    QTest::addColumn<double>("smoothing");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("targetDtype");
    QTest::addColumn<QString>("layout");

    for (const char *op : {"nll_loss", "cross_entropy"}) {
        for (const char *red : {"mean", "sum", "none"}) {
            QTest::addRow("%s %s [N,C]", op, red) << op << "6,5" << red << false << 0 << -100 << 0.0 << "f32" << "i64"
                                                  << "contiguous";
            QTest::addRow("%s %s weighted", op, red) << op << "6,5" << red << true << 0 << -100 << 0.0 << "f64"
                                                     << "i64" << "transposed";
            QTest::addRow("%s %s ignored", op, red) << op << "7,4" << red << false << 3 << -100 << 0.0 << "f32"
                                                    << "i64" << "sliced";
            QTest::addRow("%s %s weighted ignored custom index", op, red)
                << op << "7,4" << red << true << 2 << 2 << 0.0 << "f64" << "i32" << "offset";
            QTest::addRow("%s %s spatial", op, red) << op << "2,3,4,5" << red << true << 4 << -100 << 0.0 << "f32"
                                                    << "i64" << "transposed";
            QTest::addRow("%s %s 1-D input", op, red) << op << "5" << red << false << 0 << -100 << 0.0 << "f64"
                                                      << "i64" << "contiguous";
            QTest::addRow("%s %s f16", op, red) << op << "4,6" << red << true << 3 << -100 << 0.0 << "f16" << "i64"
                                                << "transposed";
            QTest::addRow("%s %s bf16", op, red) << op << "4,6" << red << false << 0 << -100 << 0.0 << "bf16"
                                                 << "i64" << "contiguous";
            QTest::addRow("%s %s all ignored", op, red) << op << "3,4" << red << false << 1 << 1 << 0.0 << "f32"
                                                        << "i64" << "contiguous";
            QTest::addRow("%s %s empty batch", op, red) << op << "0,4" << red << false << 0 << -100 << 0.0 << "f32"
                                                        << "i64" << "contiguous";
            QTest::addRow("%s %s large", op, red) << op << "300,10,20" << red << true << 5 << -100 << 0.0 << "f32"
                                                  << "i64" << "contiguous";
        }
    }
    for (const char *red : {"mean", "sum", "none"}) {
        for (double eps : {0.1, 1.0}) {
            QTest::addRow("smoothing %g %s", eps, red) << "cross_entropy" << "6,5" << red << false << 0 << -100
                                                       << eps << "f32" << "i64" << "contiguous";
            QTest::addRow("smoothing %g %s weighted ignored", eps, red)
                << "cross_entropy" << "7,5" << red << true << 3 << -100 << eps << "f64" << "i64" << "transposed";
            QTest::addRow("smoothing %g %s spatial", eps, red)
                << "cross_entropy" << "2,4,3,2" << red << true << 5 << 0 << eps << "f32" << "i64" << "sliced";
            QTest::addRow("smoothing %g %s f16", eps, red)
                << "cross_entropy" << "3,6" << red << true << 0 << -100 << eps << "f16" << "i64" << "contiguous";
        }
    }
}

void TestCoreLoss::classLoss()
{
    QFETCH(QString, op);
    QFETCH(QString, inputShape);
    QFETCH(QString, reduction);
    QFETCH(bool, weighted);
    QFETCH(int, ignoreEvery);
    QFETCH(int, ignoreIndex);
    QFETCH(double, smoothing);
    QFETCH(QString, dtype);
    QFETCH(QString, targetDtype);
    QFETCH(QString, layout);
    const bool ce = op == QLatin1String("cross_entropy");
    const Shape xs = parseShape(inputShape);
    const DType dt = parseDt(dtype);
    const int64_t classes = xs.size() == 1 ? xs[0] : xs[1];
    Shape ts;
    if (xs.size() >= 2) {
        ts = xs;
        ts.erase(ts.begin() + 1);
    }
    const Tensor x = withLayout(normalInput(xs, dt, 5, ce ? 3 : 1), layout);
    const Tensor target = classTargets(ts, classes, ignoreEvery, ignoreIndex, parseDt(targetDtype), 6);
    std::optional<Tensor> weight;
    if (weighted)
        weight = withLayout(ops::abs(normalInput({classes}, dt, 7)), "sliced");

    ClassLossCase c{xs, x.toDoubleVector(), target.toDoubleVector(), {}, ignoreIndex, smoothing, ce};
    if (weight)
        c.weight = weight->toDoubleVector();
    std::vector<double> losses, weights;
    classLossRef(c, losses, weights);
    const std::vector<double> expected = reduceRef(losses, weights, reduction);

    const std::string red = reduction.toStdString();
    const Tensor out = ce ? ops::crossEntropy(x, target, weight, red, ignoreIndex, smoothing)
                          : ops::nllLoss(x, target, weight, red, ignoreIndex);
    QCOMPARE(out.dtype(), dt);
    const Shape outShape = reduction == QLatin1String("none") ? ts : Shape{};
    FS_COMPARE_VALUES(out, outShape, expected, lossTol(dt), lossTol(dt));
}

void TestCoreLoss::crossEntropyLargeLogits()
{
    // exp(1000) overflows: the kernel must subtract the row maximum first.
    const Tensor x = fromVector({1000, 999, 998, -1000, 0, 1000}, {2, 3});
    const Tensor target = fromVector({1, 2}, {2}, DType::I64);
    const double lse0 = 1000 + std::log(1 + std::exp(-1.0) + std::exp(-2.0));
    const double lse1 = 1000 + std::log(1 + std::exp(-1000.0) + std::exp(-2000.0));
    FS_COMPARE_VALUES(ops::crossEntropy(x, target, std::nullopt, "none"), Shape{2},
                      (std::vector<double>{lse0 - 999, lse1 - 1000}), 1e-5, 1e-4);
}

void TestCoreLoss::classLossErrors()
{
    const Tensor x = zeros({4, 5});
    FS_EXPECT_ERROR(ops::nllLoss(x, fromVector({0, 1, 5, 2}, {4}, DType::I64)),
                    "aten.nll_loss: target 5 is out of bounds for 5 classes");
    FS_EXPECT_ERROR(ops::crossEntropy(x, fromVector({0, -1, 1, 2}, {4}, DType::I64)),
                    "aten.cross_entropy: target -1 is out of bounds for 5 classes");
    FS_EXPECT_ERROR(ops::crossEntropy(x, fromVector({0, 7, 1, 2}, {4}, DType::I64), std::nullopt, "none"),
                    "aten.cross_entropy: target 7 is out of bounds for 5 classes");
    FS_EXPECT_ERROR(ops::nllLoss(x, zeros({4})), "aten.nll_loss: target must hold class indices (i64), got f32");
    FS_EXPECT_ERROR(ops::nllLoss(x, zeros({3}, DType::I64)),
                    "aten.nll_loss: target of shape [3] does not match input of shape [4,5] (expected [4])");
    FS_EXPECT_ERROR(ops::crossEntropy(zeros({2, 3, 4}), zeros({2, 3}, DType::I64)),
                    "aten.cross_entropy: target of shape [2,3] does not match input of shape [2,3,4] (expected [2,4])");
    FS_EXPECT_ERROR(ops::nllLoss(x, zeros({4}, DType::I64), ones({4})),
                    "aten.nll_loss: weight of shape [4] must have one entry per class [5]");
    FS_EXPECT_ERROR(ops::nllLoss(x, zeros({4}, DType::I64), ones({5}, DType::I64)),
                    "aten.nll_loss: weight must be floating point, got i64");
    FS_EXPECT_ERROR(ops::nllLoss(x, zeros({4}, DType::I64), std::nullopt, "avg"),
                    "aten.nll_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'");
    FS_EXPECT_ERROR(ops::crossEntropy(zeros({4, 5}, DType::I64), zeros({4}, DType::I64)),
                    "aten.cross_entropy: input must be floating point, got i64");
    FS_EXPECT_ERROR(ops::crossEntropy(zeros({}), zeros({}, DType::I64)),
                    "aten.cross_entropy: input must be [C], [N,C] or [N,C,d...], got shape []");
    FS_EXPECT_ERROR(ops::crossEntropy(zeros({2, 0}), zeros({2}, DType::I64)),
                    "aten.cross_entropy: target 0 is out of bounds for 0 classes");
    FS_EXPECT_ERROR(ops::nllLoss(zeros({2, 0, 3}), zeros({2, 3}, DType::I64)),
                    "aten.nll_loss: target 0 is out of bounds for 0 classes");
    FS_COMPARE_VALUES(ops::crossEntropy(zeros({2, 0, 3}), full({2, 3}, -100, DType::I64), std::nullopt, "sum"), Shape{},
                      std::vector<double>{0}, 0, 0);
    FS_EXPECT_ERROR(ops::crossEntropy(x, zeros({4}, DType::I64), std::nullopt, "mean", -100, 1.5),
                    "aten.cross_entropy: label_smoothing must be in [0, 1], got 1.5");
}

void TestCoreLoss::crossEntropyDecomposition_data()
{
    QTest::addColumn<QString>("inputShape");
    QTest::addColumn<QString>("reduction");
    QTest::addColumn<bool>("weighted");
    QTest::addColumn<int>("ignoreEvery");
    QTest::addColumn<double>("smoothing");

    for (const char *red : {"mean", "sum", "none"}) {
        QTest::addRow("%s plain", red) << "6,5" << red << false << 0 << 0.0;
        QTest::addRow("%s weighted ignored", red) << "7,4" << red << true << 3 << 0.0;
        QTest::addRow("%s smoothing", red) << "6,5" << red << false << 0 << 0.2;
        QTest::addRow("%s smoothing weighted ignored", red) << "7,4" << red << true << 3 << 0.3;
        QTest::addRow("%s spatial smoothing", red) << "2,3,4" << red << true << 2 << 0.1;
        QTest::addRow("%s 1-D", red) << "5" << red << true << 0 << 0.1;
    }
}

void TestCoreLoss::crossEntropyDecomposition()
{
    FS_REQUIRE_OPS("aten.log_softmax", "aten.nll_loss", "aten.mul", "aten.reshape", "aten.eq", "aten.sum",
                   "aten.neg", "aten.masked_fill", "aten.logical_not", "aten.where", "aten.index_select", "aten.div",
                   "aten.add");
    QFETCH(QString, inputShape);
    QFETCH(QString, reduction);
    QFETCH(bool, weighted);
    QFETCH(int, ignoreEvery);
    QFETCH(double, smoothing);
    const Shape xs = parseShape(inputShape);
    const int64_t classes = xs.size() == 1 ? xs[0] : xs[1];
    Shape ts;
    if (xs.size() >= 2) {
        ts = xs;
        ts.erase(ts.begin() + 1);
    }
    const Tensor x = normalInput(xs, DType::F32, 8, 2);
    const Tensor target = classTargets(ts, classes, ignoreEvery, -100, DType::I64, 9);
    std::optional<Tensor> weight;
    if (weighted)
        weight = ops::abs(normalInput({classes}, DType::F32, 10));
    const std::string red = reduction.toStdString();
    const Tensor eager = ops::crossEntropy(x, target, weight, red, -100, smoothing);
    const OpDef &op = OpRegistry::instance().get("aten.cross_entropy");
    QVERIFY(op.decompose);
    const TensorList decomposed = op.decompose({x, target, Value(weight), red, int64_t(-100), smoothing});
    QCOMPARE(decomposed.at(0).dtype(), eager.dtype());
    FS_COMPARE_VALUES(decomposed.at(0), eager.sizes(), eager.toDoubleVector(), 2e-5, 2e-5);
}

// --- meta tensors and registration ---------------------------------------------------

void TestCoreLoss::metaShapes()
{
    auto check = [](const Tensor &t, const Shape &shape, DType dtype) {
        QVERIFY(t.isMeta());
        QCOMPARE(QString::fromStdString(shapeStr(t.sizes())), QString::fromStdString(shapeStr(shape)));
        QCOMPARE(t.dtype(), dtype);
    };
    check(ops::mseLoss(meta({2, 3}), meta({3}), "none"), {2, 3}, DType::F32);
    check(ops::mseLoss(meta({2, 3}, DType::F16), meta({2, 3}, DType::F16)), {}, DType::F16);
    check(ops::nllLoss(meta({8, 5, 3}), meta({8, 3}, DType::I64), std::nullopt, "none"), {8, 3}, DType::F32);
    check(ops::crossEntropy(meta({8, 5}, DType::BF16), meta({8}, DType::I64)), {}, DType::BF16);
    check(ops::crossEntropy(meta({8, 5}), meta({8}, DType::I64), meta({5}), "sum", 0, 0.1), {}, DType::F32);
    FS_EXPECT_ERROR(ops::crossEntropy(meta({8, 5}), meta({7}, DType::I64)), "does not match input of shape [8,5]");
}

void TestCoreLoss::opKinds()
{
    const OpRegistry &r = OpRegistry::instance();
    QCOMPARE(r.get("aten.cross_entropy").kind, OpKind::Composite);
    QVERIFY(r.get("aten.cross_entropy").cpu);
    QVERIFY(r.get("aten.cross_entropy").decompose);
    QCOMPARE(r.get("aten.mse_loss").kind, OpKind::Composite);
    QVERIFY(r.get("aten.mse_loss").decompose);
    QVERIFY(r.get("aten.nll_loss").cpu);
    const Tensor x = zeros({4, 10}), t = zeros({4}, DType::I64);
    const Tensor out = ops::crossEntropy(x, t);
    const OpCost cost = r.get("aten.cross_entropy")
                            .estimateCost({x, t, Value(), std::string("mean"), int64_t(-100), 0.0},
                                          std::span<const Tensor>(&out, 1));
    QVERIFY(cost.flops >= 40);
}

QTEST_GUILESS_MAIN(TestCoreLoss)
#include "tst_core_loss.moc"
