// Tensor basics: dtypes, factories, seeded generators, item, printing.
#include "optest.h"

#include <cstring>
#include <set>

using namespace fusescope;
using namespace fusescope::test;

class TestTensor : public QObject
{
    Q_OBJECT
private slots:
    void dtypeTable()
    {
        QCOMPARE(itemSize(DType::BF16), size_t(2));
        QCOMPARE(itemSize(DType::I64), size_t(8));
        QCOMPARE(std::string(dtypeName(DType::BF16)), std::string("bf16"));
        DType parsed;
        QVERIFY(parseDType("f16", parsed) && parsed == DType::F16);
        QVERIFY(!parseDType("float", parsed));
        QCOMPARE(promoteTypes(DType::Bool, DType::I32), DType::I32);
        QCOMPARE(promoteTypes(DType::I64, DType::BF16), DType::BF16);
        QCOMPARE(promoteTypes(DType::BF16, DType::F16), DType::F32);
        QCOMPARE(toFloating(DType::I32), DType::F32);
        QCOMPARE(toFloating(DType::F64), DType::F64);
    }

    // normals() gives normal()'s values bit for bit and in order, the spare
    // of an odd count included, across its blocks and the pool's threads, and
    // leaves the generator where normal() would.
    void normalsAreNormalsInOrder()
    {
        Generator bulk(11), one(11);
        for (int64_t n : {0, 1, 2, 3, 16383, 32768, 32769, 100001, 4}) {
            std::vector<double> got(static_cast<size_t>(n));
            bulk.normals(got.data(), n);
            for (int64_t i = 0; i < n; ++i) {
                const double want = one.normal();
                QVERIFY2(std::memcmp(&got[static_cast<size_t>(i)], &want, sizeof want) == 0,
                         qPrintable(QStringLiteral("n %1, value %2").arg(n).arg(i)));
            }
        }
        QCOMPARE(bulk.normal(), one.normal());
        QCOMPARE(bulk.next(), one.next());
    }

    // The portable conversions agree with the hardware ones (F16C) on every
    // half value and on floats around every rounding boundary.
    void halfConversionsAgree()
    {
        for (uint32_t b = 0; b < 65536; ++b) {
            Half h;
            h.bits = static_cast<uint16_t>(b);
            const float viaOperator = h;
            const float slow = Half::toFloatSlow(h.bits);
            if (std::isnan(slow)) {
                QVERIFY(std::isnan(viaOperator));
                continue;
            }
            QCOMPARE(slow, viaOperator);
            // Halfway between this value and the next: ties go to even.
            const float next = Half::toFloatSlow(static_cast<uint16_t>(b + 1));
            if (!std::isfinite(next) || (b & 0x7fff) == 0x7bff)
                continue;
            const float mid = slow + (next - slow) / 2;
            QCOMPARE(Half::fromFloatSlow(mid), Half(mid).bits);
            QCOMPARE(Half::fromFloatSlow(slow), h.bits);
        }
    }

    void factories()
    {
        FS_COMPARE_VALUES(zeros({2, 2}), (Shape{2, 2}), std::vector<double>(4, 0), 0, 0);
        FS_COMPARE_VALUES(full({3}, 2.5, DType::F64), Shape{3}, std::vector<double>(3, 2.5), 0, 0);
        QCOMPARE(full({3}, 7, DType::I32).dtype(), DType::I32);
        FS_COMPARE_VALUES(arange(1.0, 2.0, 0.25), Shape{4}, (std::vector<double>{1, 1.25, 1.5, 1.75}), 0, 0);
        const Tensor ints = arange(5);
        QCOMPARE(ints.dtype(), DType::I64);
        FS_COMPARE_VALUES(arange(5.0, 0.0, -2.0), Shape{3}, (std::vector<double>{5, 3, 1}), 0, 0);
        FS_COMPARE_VALUES(arange(3.0, 3.0), Shape{0}, std::vector<double>{}, 0, 0);
        FS_COMPARE_VALUES(eye(2, 3), (Shape{2, 3}), (std::vector<double>{1, 0, 0, 0, 1, 0}), 0, 0);
        FS_EXPECT_ERROR(arange(0.0, 1.0, 0.0), "aten.arange: step must be nonzero");
        FS_EXPECT_ERROR(zeros({2, -1}), "aten.full: negative size in shape [2,-1]");
        FS_EXPECT_ERROR(fromVector({1, 2}, {3}), "fromVector: 2 values do not fill shape [3]");
    }

    void generatorsAreSeededAndDistributed()
    {
        Generator g1(42), g2(42), g3(43);
        const Tensor a = randn({10000}, g1), b = randn({10000}, g2), c = randn({10000}, g3);
        QCOMPARE(a.toDoubleVector(), b.toDoubleVector());
        QVERIFY(a.toDoubleVector() != c.toDoubleVector());
        double mean = 0, sq = 0;
        for (double v : a.toDoubleVector()) {
            mean += v;
            sq += v * v;
        }
        mean /= 10000;
        const double var = sq / 10000 - mean * mean;
        QVERIFY2(std::fabs(mean) < 0.05 && std::fabs(var - 1) < 0.05, qPrintable(QString::number(var)));
        Generator g(1);
        const std::vector<double> u = rand({10000}, g).toDoubleVector();
        QVERIFY(*std::min_element(u.begin(), u.end()) >= 0 && *std::max_element(u.begin(), u.end()) < 1);
        const std::vector<double> r = randint(-3, 4, {5000}, g).toDoubleVector();
        const std::set<double> seen(r.begin(), r.end());
        QCOMPARE(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3}));
        FS_EXPECT_ERROR(randint(5, 5, {1}, g), "randint: empty range [5, 5)");
    }

    void itemAndPrinting()
    {
        QCOMPARE(full({}, 3.5).item<double>(), 3.5);
        QCOMPARE(full({1, 1}, 7, DType::I64).item<int64_t>(), int64_t(7));
        FS_EXPECT_ERROR(zeros({2}).itemDouble(), "item: a tensor with 2 elements cannot be converted to a number");
        QCOMPARE(QString::fromStdString(arange(3).toString()), QStringLiteral("Tensor([3], i64, [0, 1, 2])"));
        QCOMPARE(QString::fromStdString(full({2}, 1, DType::Bool).toString()),
                 QStringLiteral("Tensor([2], bool, [true, true])"));
        QVERIFY(QString::fromStdString(arange(100).toString(4)).endsWith(QLatin1String("[0, 1, 2, 3, ...])")));
        QCOMPARE(QString::fromStdString(Tensor::empty({2}, DType::F16, kMeta).toString()),
                 QStringLiteral("Tensor([2], f16, meta)"));
        FS_EXPECT_ERROR(Tensor::empty({2}, DType::F32, kMeta).rawData(), "data: a meta tensor has no data");
    }

    void fromBlobWrapsWithoutCopy()
    {
        float buffer[6] = {1, 2, 3, 4, 5, 6};
        const Tensor t = Tensor::fromBlob(buffer, {2, 3}, DType::F32);
        QCOMPARE(t.data<float>(), buffer);
        FS_COMPARE_VALUES(t.t(), (Shape{3, 2}), (std::vector<double>{1, 4, 2, 5, 3, 6}), 0, 0);
    }

    void zeroSizeAndZeroDim()
    {
        const Tensor e = zeros({3, 0});
        QCOMPARE(e.numel(), int64_t(0));
        QVERIFY(e.isContiguous());
        QCOMPARE(ops::exp(e).sizes(), (Shape{3, 0}));
        const Tensor s = full({}, 2);
        QCOMPARE(s.dim(), int64_t(0));
        QCOMPARE(ops::mul(s, s).item<double>(), 4.0);
        QCOMPARE(ops::add(s, ones({2, 2})).sizes(), (Shape{2, 2}));
    }

    void contiguityFlags()
    {
        const Tensor x = zeros({4, 5});
        QVERIFY(x.isContiguous());
        QVERIFY(!x.t().isContiguous());
        QVERIFY(x.slice(0, 1, 3).isContiguous());
        QVERIFY(!x.slice(1, 1, 3).isContiguous());
        QVERIFY(x.unsqueeze(1).isContiguous());
        QVERIFY(computeContiguous({1, 5}, {99, 1})); // size-1 dims have any stride
    }
};

QTEST_GUILESS_MAIN(TestTensor)
#include "tst_core_tensor.moc"
