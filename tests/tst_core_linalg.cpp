// Matrix products against a plain f64 triple loop written here: NumPy matmul
// semantics, strided and broadcast operands, every dtype, empty dims, meta
// tensors, decompositions and error messages.
#include "optest.h"

#include "core/ops/linalg.h"
#include "core/ops/registry.h"
#include "core/tensor/allocator.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace fusescope;
using namespace fusescope::test;

namespace {

// Values exactly representable in `dtype`, so the reference sees what the kernel sees.
Tensor input(const Shape &shape, DType dtype, uint64_t seed)
{
    return randomInput(shape, dtype, seed, -4, 5);
}

// The matrices of a (promoted) operand, right-aligned against `batch`.
struct RefOperand {
    std::vector<double> values;
    Shape batch;
    int64_t rows, cols;
};

// Element (i, j) of the matrix at batch index `flat` of out's batch, with
// size-1 batch dims of the operand broadcast.
double refAt(const RefOperand &o, const Shape &batch, int64_t flat, int64_t i, int64_t j)
{
    int64_t offset = 0, stride = o.rows * o.cols;
    const size_t lead = batch.size() - o.batch.size();
    for (size_t d = batch.size(); d-- > 0;) {
        const int64_t index = flat % batch[d];
        flat /= batch[d];
        if (d < lead)
            continue;
        const int64_t size = o.batch[d - lead];
        offset += (size == 1 ? 0 : index) * stride;
        stride *= size;
    }
    return o.values[static_cast<size_t>(offset + i * o.cols + j)];
}

RefOperand refOperand(const Tensor &t, bool left)
{
    Shape s = t.sizes();
    if (s.size() == 1)
        s.insert(left ? s.begin() : s.end(), 1);
    return {t.toDoubleVector(), Shape(s.begin(), s.end() - 2), s[s.size() - 2], s.back()};
}

// NumPy matmul, straight from the definition; sets the expected shape.
std::vector<double> refMatmul(const Tensor &a, const Tensor &b, Shape &shape)
{
    const RefOperand ra = refOperand(a, true), rb = refOperand(b, false);
    const size_t nb = std::max(ra.batch.size(), rb.batch.size());
    Shape batch(nb, 1);
    for (size_t i = 0; i < nb; ++i) {
        for (const RefOperand *o : {&ra, &rb}) {
            const size_t lead = nb - o->batch.size();
            if (i >= lead && o->batch[i - lead] != 1)
                batch[i] = o->batch[i - lead];
        }
    }
    shape = batch;
    if (a.dim() > 1)
        shape.push_back(ra.rows);
    if (b.dim() > 1)
        shape.push_back(rb.cols);
    std::vector<double> out;
    for (int64_t flat = 0; flat < numelOf(batch); ++flat) {
        for (int64_t i = 0; i < ra.rows; ++i) {
            for (int64_t j = 0; j < rb.cols; ++j) {
                double sum = 0;
                for (int64_t k = 0; k < ra.cols; ++k)
                    sum += refAt(ra, batch, flat, i, k) * refAt(rb, batch, flat, k, j);
                out.push_back(sum);
            }
        }
    }
    return out;
}

double atolFor(DType t)
{
    switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 2e-2;
    case DType::F32: return 1e-4;
    default: return 1e-12;
    }
}

// A [rows, cols] matrix whose rows all alias one row (row stride 0).
Tensor rowBroadcast(const Tensor &row, int64_t rows)
{
    return row.expand({rows, row.size(-1)});
}

int64_t allocationsDuring(const std::function<void()> &fn)
{
    const int64_t before = hostAllocator().stats().allocations;
    fn();
    return hostAllocator().stats().allocations - before;
}

} // namespace

class TestLinalg : public QObject
{
    Q_OBJECT
private slots:
    void matmul_data()
    {
        QTest::addColumn<Shape>("shapeA");
        QTest::addColumn<Shape>("shapeB");
        QTest::addColumn<QString>("layoutA");
        QTest::addColumn<QString>("layoutB");
        QTest::addColumn<int>("dtype");
        const std::vector<std::pair<Shape, Shape>> shapes = {
            {{3, 4}, {4, 5}},       {{4}, {4}},          {{3, 4}, {4}},          {{4}, {4, 5}},
            {{2, 3, 4}, {4}},       {{4}, {2, 4, 5}},    {{2, 3, 4}, {4, 5}},    {{3, 4}, {2, 4, 5}},
            {{2, 1, 3, 4}, {5, 4, 6}}, {{1, 3, 4}, {2, 4, 5}}, {{64, 7, 9}, {64, 9, 5}}, {{2, 3, 0}, {2, 0, 5}},
            {{0, 3}, {3, 4}},       {{3, 4}, {4, 0}},    {{0, 2, 3}, {3, 2}},    {{37, 70}, {70, 300}},
        };
        for (const auto &[a, b] : shapes) {
            const QString name = QString::fromStdString(shapeStr(a) + "x" + shapeStr(b));
            for (const char *la : {"contiguous", "transposed", "sliced", "offset"}) {
                for (const char *lb : {"contiguous", "transposed", "sliced"})
                    QTest::newRow(qPrintable(name + " " + la + "/" + lb + " f32"))
                        << a << b << la << lb << int(DType::F32);
            }
            for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32})
                QTest::newRow(qPrintable(name + " " + dtypeName(t)))
                    << a << b << "transposed" << "contiguous" << int(t);
        }
    }
    void matmul()
    {
        QFETCH(Shape, shapeA);
        QFETCH(Shape, shapeB);
        QFETCH(QString, layoutA);
        QFETCH(QString, layoutB);
        QFETCH(int, dtype);
        const auto t = static_cast<DType>(dtype);
        const Tensor a = withLayout(input(shapeA, t, 1), layoutA);
        const Tensor b = withLayout(input(shapeB, t, 2), layoutB);
        Shape expectedShape;
        const std::vector<double> expected = refMatmul(a, b, expectedShape);
        const Tensor y = ops::matmul(a, b);
        QCOMPARE(int(y.dtype()), dtype);
        FS_COMPARE_VALUES(y, expectedShape, expected, rtolOrExact(t), atolFor(t));
        // The compiler's decomposition (mm / bmm / reshape / expand) agrees.
        const TensorList d = OpRegistry::instance().get("aten.matmul").decompose({a, b});
        FS_COMPARE_VALUES(d[0], expectedShape, expected, rtolOrExact(t), atolFor(t));
        const Tensor m = ops::matmul(meta(shapeA, t), meta(shapeB, t));
        QVERIFY(m.isMeta());
        QCOMPARE(m.sizes(), expectedShape);
        const TensorList dm = OpRegistry::instance().get("aten.matmul").decompose({meta(shapeA, t), meta(shapeB, t)});
        QVERIFY(dm[0].isMeta());
        QCOMPARE(dm[0].sizes(), expectedShape);
    }

    void mm_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("layoutA");
        QTest::addColumn<QString>("layoutB");
        for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32}) {
            for (const char *la : {"contiguous", "transposed", "sliced", "offset", "broadcast"}) {
                for (const char *lb : {"contiguous", "transposed", "sliced", "broadcast"})
                    QTest::newRow(qPrintable(QStringLiteral("%1 %2/%3").arg(dtypeName(t), la, lb)))
                        << int(t) << la << lb;
            }
        }
    }
    void mm()
    {
        QFETCH(int, dtype);
        QFETCH(QString, layoutA);
        QFETCH(QString, layoutB);
        const auto t = static_cast<DType>(dtype);
        auto operand = [&](const Shape &shape, const QString &layout, uint64_t seed) {
            if (layout == QLatin1String("broadcast"))
                return rowBroadcast(input({1, shape[1]}, t, seed), shape[0]);
            return withLayout(input(shape, t, seed), layout);
        };
        const Tensor a = operand({13, 21}, layoutA, 3), b = operand({21, 17}, layoutB, 4);
        Shape shape;
        const std::vector<double> expected = refMatmul(a, b, shape);
        FS_COMPARE_VALUES(ops::mm(a, b), shape, expected, rtolOrExact(t), atolFor(t));
    }

    // Contiguous and simply transposed operands go to BLAS in place: the
    // output is the only allocation.
    void mmReadsOperandsInPlace_data()
    {
        QTest::addColumn<QString>("layoutA");
        QTest::addColumn<QString>("layoutB");
        for (const char *la : {"contiguous", "transposed", "offset"}) {
            for (const char *lb : {"contiguous", "transposed"})
                QTest::newRow(qPrintable(QStringLiteral("%1/%2").arg(la, lb))) << la << lb;
        }
    }
    void mmReadsOperandsInPlace()
    {
        QFETCH(QString, layoutA);
        QFETCH(QString, layoutB);
        const Tensor a = withLayout(input({64, 32}, DType::F32, 5), layoutA);
        const Tensor b = withLayout(input({32, 48}, DType::F32, 6), layoutB);
        QCOMPARE(allocationsDuring([&] { ops::mm(a, b); }), int64_t(1));
        const Tensor x = withLayout(input({4, 16, 32}, DType::F32, 7), layoutA);
        QCOMPARE(allocationsDuring([&] { ops::matmul(x, b); }), int64_t(1));
        QCOMPARE(allocationsDuring([&] { ops::linear(x, b.t(), std::nullopt); }), int64_t(1));
    }

    void bmm_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<Shape>("shapeA");
        QTest::addColumn<Shape>("shapeB");
        for (const char *layout : {"contiguous", "transposed", "sliced", "offset"})
            QTest::newRow(layout) << layout << int(DType::F32) << Shape{5, 3, 4} << Shape{5, 4, 2};
        for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I64})
            QTest::newRow(dtypeName(t)) << "contiguous" << int(t) << Shape{5, 3, 4} << Shape{5, 4, 2};
        QTest::newRow("many small") << "contiguous" << int(DType::F32) << Shape{300, 4, 8} << Shape{300, 8, 3};
        QTest::newRow("large") << "transposed" << int(DType::F32) << Shape{2, 80, 90} << Shape{2, 90, 70};
        QTest::newRow("empty batch") << "contiguous" << int(DType::F32) << Shape{0, 3, 4} << Shape{0, 4, 2};
        QTest::newRow("K=0") << "contiguous" << int(DType::F64) << Shape{2, 3, 0} << Shape{2, 0, 2};
    }
    void bmm()
    {
        QFETCH(QString, layout);
        QFETCH(int, dtype);
        QFETCH(Shape, shapeA);
        QFETCH(Shape, shapeB);
        const auto t = static_cast<DType>(dtype);
        const Tensor a = withLayout(input(shapeA, t, 8), layout), b = withLayout(input(shapeB, t, 9), layout);
        Shape shape;
        const std::vector<double> expected = refMatmul(a, b, shape);
        FS_COMPARE_VALUES(ops::bmm(a, b), shape, expected, rtolOrExact(t), atolFor(t));
    }

    void addmm_data()
    {
        QTest::addColumn<Shape>("selfShape");
        QTest::addColumn<double>("beta");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("layout");
        QTest::newRow("row bias") << Shape{5} << 1.0 << 1.0 << int(DType::F32) << "contiguous";
        QTest::newRow("full self") << Shape{3, 5} << 0.5 << 2.0 << int(DType::F32) << "transposed";
        QTest::newRow("column self") << Shape{3, 1} << -1.0 << 0.25 << int(DType::F32) << "sliced";
        QTest::newRow("0-d self") << Shape{} << 2.0 << 1.0 << int(DType::F64) << "contiguous";
        QTest::newRow("beta 0") << Shape{3, 5} << 0.0 << 3.0 << int(DType::F32) << "contiguous";
        QTest::newRow("f16") << Shape{5} << 0.5 << 2.0 << int(DType::F16) << "contiguous";
        QTest::newRow("bf16") << Shape{3, 5} << 1.0 << 1.0 << int(DType::BF16) << "transposed";
        QTest::newRow("i64") << Shape{3, 5} << 2.0 << -3.0 << int(DType::I64) << "transposed";
        QTest::newRow("i32 beta 0") << Shape{5} << 0.0 << 2.0 << int(DType::I32) << "contiguous";
    }
    void addmm()
    {
        QFETCH(Shape, selfShape);
        QFETCH(double, beta);
        QFETCH(double, alpha);
        QFETCH(int, dtype);
        QFETCH(QString, layout);
        const auto t = static_cast<DType>(dtype);
        Tensor self = input(selfShape, t, 10);
        if (beta == 0 && !isIntegral(t)) // PyTorch ignores self when beta is 0, NaNs included
            self = full(selfShape, std::numeric_limits<double>::quiet_NaN(), t);
        const Tensor a = withLayout(input({3, 7}, t, 11), layout), b = withLayout(input({7, 5}, t, 12), layout);
        Shape shape;
        std::vector<double> expected = refMatmul(a, b, shape);
        const std::vector<double> s = self.toDoubleVector();
        for (size_t i = 0; i < expected.size(); ++i) {
            const size_t row = i / 5, col = i % 5;
            const double selfValue = selfShape.empty() ? s[0]
                : selfShape.size() == 1                ? s[col]
                : selfShape[1] == 1                    ? s[row]
                                                       : s[i];
            expected[i] = alpha * expected[i] + (beta == 0 ? 0 : beta * selfValue);
        }
        const double atol = atolFor(t) * 4;
        FS_COMPARE_VALUES(ops::addmm(self, a, b, beta, alpha), shape, expected, rtolOrExact(t), atol);
        const TensorList d = OpRegistry::instance().get("aten.addmm").decompose({self, a, b, beta, alpha});
        FS_COMPARE_VALUES(d[0], shape, expected, rtolOrExact(t), atol);
        QCOMPARE(ops::addmm(meta(selfShape, t), meta({3, 7}, t), meta({7, 5}, t), beta, alpha).sizes(), shape);
    }

    void linear_data()
    {
        QTest::addColumn<Shape>("xShape");
        QTest::addColumn<bool>("withBias");
        QTest::addColumn<QString>("layoutX");
        QTest::addColumn<QString>("layoutW");
        QTest::addColumn<int>("dtype");
        for (const char *lx : {"contiguous", "transposed", "sliced", "offset"}) {
            for (const char *lw : {"contiguous", "transposed"}) {
                for (bool bias : {true, false})
                    QTest::newRow(qPrintable(QStringLiteral("%1/%2%3").arg(lx, lw, bias ? " bias" : "")))
                        << Shape{2, 3, 8} << bias << lx << lw << int(DType::F32);
            }
        }
        QTest::newRow("1-D input") << Shape{8} << true << "contiguous" << "contiguous" << int(DType::F32);
        QTest::newRow("2-D input") << Shape{6, 8} << true << "sliced" << "transposed" << int(DType::F32);
        QTest::newRow("no rows") << Shape{0, 8} << true << "contiguous" << "contiguous" << int(DType::F32);
        for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I64})
            QTest::newRow(dtypeName(t)) << Shape{2, 3, 8} << true << "contiguous" << "transposed" << int(t);
    }
    void linear()
    {
        QFETCH(Shape, xShape);
        QFETCH(bool, withBias);
        QFETCH(QString, layoutX);
        QFETCH(QString, layoutW);
        QFETCH(int, dtype);
        const auto t = static_cast<DType>(dtype);
        const Tensor x = withLayout(input(xShape, t, 13), layoutX);
        const Tensor w = withLayout(input({5, 8}, t, 14), layoutW);
        const std::optional<Tensor> bias = withBias ? std::optional(input({5}, t, 15)) : std::nullopt;
        Shape shape;
        std::vector<double> expected = refMatmul(x, w.t(), shape);
        if (bias) {
            const std::vector<double> bv = bias->toDoubleVector();
            for (size_t i = 0; i < expected.size(); ++i)
                expected[i] += bv[i % 5];
        }
        FS_COMPARE_VALUES(ops::linear(x, w, bias), shape, expected, rtolOrExact(t), atolFor(t) * 4);
        const TensorList d = OpRegistry::instance().get("aten.linear").decompose({x, w, Value(bias)});
        FS_COMPARE_VALUES(d[0], shape, expected, rtolOrExact(t), atolFor(t) * 4);
        QCOMPARE(ops::linear(meta(xShape, t), meta({5, 8}, t), std::nullopt).sizes(), shape);
        const TensorList dm = OpRegistry::instance().get("aten.linear").decompose({meta(xShape, t), meta({5, 8}, t),
                                                                                   Value(meta({5}, t))});
        QCOMPARE(dm[0].sizes(), shape);
    }

    // blas::gemm: one-row and one-column products go to gemv, the rest to
    // GEMM; every transpose, leading dims wider than the matrix, alpha, and
    // beta 0 (c's NaNs never read, its padding columns never written) or not.
    void blasProducts_data()
    {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<bool>("transA");
        QTest::addColumn<bool>("transB");
        QTest::addColumn<double>("beta");
        for (const auto &[m, n] : {std::pair{1, 23}, std::pair{19, 1}, std::pair{1, 1}, std::pair{7, 23}}) {
            for (bool ta : {false, true}) {
                for (bool tb : {false, true}) {
                    for (double beta : {0.0, 0.5})
                        QTest::newRow(qPrintable(QStringLiteral("%1x%2 %3%4 beta %5")
                                                     .arg(m)
                                                     .arg(n)
                                                     .arg(ta ? "T" : "N", tb ? "T" : "N")
                                                     .arg(beta)))
                            << m << n << ta << tb << beta;
                }
            }
        }
    }
    void blasProducts()
    {
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(bool, transA);
        QFETCH(bool, transB);
        QFETCH(double, beta);
        const int64_t k = 37, pad = 3, alpha = 2;
        // Stored shapes: op(A) = A or A^T; leading dims `pad` wider than needed.
        const int64_t lda = (transA ? m : k) + pad, ldb = (transB ? k : n) + pad, ldc = n + pad;
        const std::vector<double> a = input({(transA ? k : m) * lda}, DType::F64, 21).toDoubleVector();
        const std::vector<double> b = input({(transB ? n : k) * ldb}, DType::F64, 22).toDoubleVector();
        const std::vector<double> c0 = input({m * ldc}, DType::F64, 23).toDoubleVector();
        const double nan = std::numeric_limits<double>::quiet_NaN();
        auto ref = [&](int64_t i, int64_t j) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p)
                sum += (transA ? a[p * lda + i] : a[i * lda + p]) * (transB ? b[j * ldb + p] : b[p * ldb + j]);
            return alpha * sum + (beta == 0 ? 0 : beta * c0[i * ldc + j]);
        };
        std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), cf(c0.begin(), c0.end());
        std::vector<double> cd = c0;
        if (beta == 0) {
            std::fill(cf.begin(), cf.end(), float(nan));
            std::fill(cd.begin(), cd.end(), nan);
        }
        blas::gemm(transA, transB, m, n, k, float(alpha), af.data(), lda, bf.data(), ldb, float(beta), cf.data(), ldc);
        blas::gemm(transA, transB, m, n, k, double(alpha), a.data(), lda, b.data(), ldb, beta, cd.data(), ldc);
        for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
                const double want = ref(i, j);
                QVERIFY2(std::abs(cd[size_t(i * ldc + j)] - want) <= 1e-9 * (1 + std::abs(want)),
                         qPrintable(QStringLiteral("f64 (%1,%2): %3 vs %4").arg(i).arg(j).arg(cd[size_t(i * ldc + j)]).arg(want)));
                QVERIFY2(std::abs(cf[size_t(i * ldc + j)] - want) <= 1e-4 * (1 + std::abs(want)),
                         qPrintable(QStringLiteral("f32 (%1,%2): %3 vs %4").arg(i).arg(j).arg(cf[size_t(i * ldc + j)]).arg(want)));
            }
            // Padding columns of c stay untouched.
            for (int64_t j = n; j < ldc; ++j)
                QCOMPARE(cd[size_t(i * ldc + j)], beta == 0 ? nan : c0[size_t(i * ldc + j)]);
        }
    }

    void emptyReductionDimGivesBias()
    {
        const Tensor x = zeros({3, 0}), w = zeros({4, 0}), bias = fromVector({1, 2, 3, 4}, {4});
        FS_COMPARE_VALUES(ops::linear(x, w, bias), Shape({3, 4}),
                          std::vector<double>({1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}), 0, 0);
        FS_COMPARE_VALUES(ops::mm(zeros({2, 0}, DType::I64), zeros({0, 2}, DType::I64)), Shape({2, 2}),
                          std::vector<double>(4, 0.0), 0, 0);
    }

    void integerOverflowWraps()
    {
        const int64_t big = int64_t(1) << 62;
        const Tensor a = fromVector({double(big), double(big)}, {1, 2}, DType::I64);
        const Tensor b = fromVector({4, 1}, {2, 1}, DType::I64);
        // 4 * 2^62 wraps to 0 in 64-bit arithmetic, leaving 2^62.
        FS_COMPARE_VALUES(ops::mm(a, b), Shape({1, 1}), std::vector<double>({double(big)}), 0, 0);
    }

    void cost()
    {
        const OpDef &mm = OpRegistry::instance().get("aten.mm");
        const Tensor a = zeros({8, 16}), b = zeros({16, 4});
        const Tensor out = ops::mm(a, b);
        const OpCost c = mm.estimateCost({a, b}, std::span<const Tensor>(&out, 1));
        QCOMPARE(c.flops, 2.0 * 8 * 4 * 16);
        QCOMPARE(c.bytesRead, double((8 * 16 + 16 * 4) * 4));
        QCOMPARE(c.bytesWritten, double(8 * 4 * 4));
        const Tensor x = zeros({3, 5, 16});
        const Tensor y = ops::matmul(x, b);
        QCOMPARE(OpRegistry::instance().get("aten.matmul").estimateCost({x, b}, std::span<const Tensor>(&y, 1)).flops,
                 2.0 * 15 * 4 * 16);
        QCOMPARE(int(OpRegistry::instance().get("aten.linear").kind), int(OpKind::Composite));
        QCOMPARE(int(OpRegistry::instance().get("aten.bmm").kind), int(OpKind::Matmul));
    }

    void kernelEvents()
    {
        const std::vector<std::string> names = kernelsDuring([] {
            ops::mm(zeros({2, 3}), zeros({3, 4}));
            ops::bmm(zeros({2, 2, 3}, DType::F64), zeros({2, 3, 4}, DType::F64));
            ops::linear(zeros({2, 3}, DType::F16), zeros({4, 3}, DType::F16));
            ops::mm(zeros({2, 3}, DType::I64), zeros({3, 4}, DType::I64));
            ops::mm(zeros({1, 3}), zeros({3, 4}));                   // one row: gemv
            ops::matmul(zeros({2, 5, 3}, DType::F64), zeros({3}, DType::F64)); // one column: gemv
            ops::matmul(zeros({2, 1, 3}), zeros({3, 4}));            // rows folded into one GEMM of 2
        });
        QCOMPARE(names, (std::vector<std::string>{"cblas_sgemm", "cblas_dgemm", "cblas_sgemm", "gemm_integer_loop",
                                                  "cblas_sgemv", "cblas_dgemv", "cblas_sgemm"}));
    }

    void errors()
    {
        FS_EXPECT_ERROR(ops::matmul(zeros({8, 256}), zeros({128, 64})),
                        "aten.matmul: shapes [8,256] and [128,64] cannot be multiplied");
        FS_EXPECT_ERROR(ops::matmul(zeros({2, 3, 4}), zeros({3, 4, 5})),
                        "aten.matmul: shapes [2,3,4] and [3,4,5] cannot be multiplied");
        FS_EXPECT_ERROR(ops::matmul(zeros({}), zeros({3})), "aten.matmul: both operands need at least one dimension");
        FS_EXPECT_ERROR(ops::matmul(zeros({3}), zeros({4})), "aten.matmul: shapes [3] and [4] cannot be multiplied");
        FS_EXPECT_ERROR(ops::matmul(meta({8, 256}), meta({128, 64})), "cannot be multiplied");
        FS_EXPECT_ERROR(ops::mm(zeros({2, 3, 4}), zeros({4, 5})), "aten.mm: expected 2-D operands, got [2,3,4] and [4,5]");
        FS_EXPECT_ERROR(ops::mm(zeros({2, 3}), zeros({4, 5})), "aten.mm: shapes [2,3] and [4,5] cannot be multiplied");
        FS_EXPECT_ERROR(ops::mm(zeros({2, 3}), zeros({3, 5}, DType::F64)),
                        "aten.mm: expected operands of one dtype, got f32 [2,3] and f64 [3,5]");
        FS_EXPECT_ERROR(ops::mm(zeros({2, 3}, DType::Bool), zeros({3, 5}, DType::Bool)),
                        "aten.mm: not supported for bool tensors");
        FS_EXPECT_ERROR(ops::bmm(zeros({2, 3, 4}), zeros({3, 4, 5})),
                        "aten.bmm: batch sizes of [2,3,4] and [3,4,5] differ");
        FS_EXPECT_ERROR(ops::bmm(zeros({3, 4}), zeros({4, 5})), "aten.bmm: expected 3-D operands");
        FS_EXPECT_ERROR(ops::addmm(zeros({4, 5}), zeros({3, 4}), zeros({4, 5})),
                        "aten.addmm: self of shape [4,5] does not broadcast to the product's [3,5]");
        FS_EXPECT_ERROR(ops::addmm(zeros({5}, DType::I64), zeros({3, 4}, DType::I64), zeros({4, 5}, DType::I64), 0.5),
                        "aten.addmm: i64 operands need integral alpha and beta");
        FS_EXPECT_ERROR(ops::linear(zeros({2, 3}), zeros({5, 4})),
                        "aten.linear: input [2,3] and weight [5,4] cannot be multiplied");
        FS_EXPECT_ERROR(ops::linear(zeros({2, 4}), zeros({5, 4}), zeros({4})),
                        "aten.linear: bias [4] does not match weight [5,4]");
    }
};

QTEST_GUILESS_MAIN(TestLinalg)
#include "tst_core_linalg.moc"
