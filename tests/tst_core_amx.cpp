// The AMX GEMM (core/ops/amx_gemm.h) and its two ops: the three-part split
// is exact, the product is as accurate as OpenBLAS's against a double
// reference (a split that kept fewer partial products would be about a
// hundred times worse), values the split cannot carry fall back to BLAS, and
// the ops check their operands. Tile-unit cases skip where the CPU has none.
#include "optest.h"

#include "core/ops/amx_gemm.h"
#include "core/ops/linalg.h"
#include "core/ops/registry.h"

#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace fusescope;
using namespace fusescope::test;

namespace {

// Normal values with exponents from 2^-40 to 2^40, some zeros.
std::vector<float> wideValues(size_t n, uint32_t seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> mant(1.0f, 2.0f);
    std::uniform_int_distribution<int> expo(-40, 40), sign(0, 1), zero(0, 15);
    std::vector<float> v(n);
    for (float &x : v)
        x = zero(gen) == 0 ? 0.0f : std::ldexp(mant(gen), expo(gen)) * (sign(gen) ? -1.0f : 1.0f);
    return v;
}

Tensor matrix(int64_t rows, int64_t cols, uint32_t seed)
{
    std::mt19937 gen(seed);
    std::normal_distribution<float> d;
    Tensor t = zeros({rows, cols}, DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i)
        t.data<float>()[i] = d(gen);
    return t;
}

// max |c - a @ b| against a double-precision product.
double maxError(const Tensor &a, const Tensor &b, const Tensor &c)
{
    const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    double worst = 0;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double ref = 0;
            for (int64_t l = 0; l < k; ++l)
                ref += double(a.data<float>()[i * k + l]) * double(b.data<float>()[l * n + j]);
            worst = std::max(worst, std::abs(double(c.data<float>()[i * n + j]) - ref));
        }
    }
    return worst;
}

bool throwsWith(const std::function<void()> &fn, const char *text)
{
    try {
        fn();
    } catch (const Error &e) {
        return std::string(e.what()).find(text) != std::string::npos;
    }
    return false;
}

Tensor tileProduct(const Tensor &x, const Tensor &w)
{
    const Tensor packed = callOp1("fusescope.pack_bf16x6", {w});
    return callOp1("fusescope.mm_bf16x6", {x, packed, w.size(1)});
}

} // namespace

class TestAmx : public QObject
{
    Q_OBJECT

private slots:
    // Packed and unpacked again, every value comes back bit for bit: the
    // three bf16 parts hold all 24 bits. Odd sizes leave partial panels.
    void splitIsExact()
    {
        const int64_t k = 70, n = 45;
        const std::vector<float> b = wideValues(size_t(k * n), 3);
        QVERIFY(amx::splittable(b.data(), k, n, n, 1));
        std::vector<uint16_t> packed(size_t(amx::packedElements(k, n)));
        QVERIFY(amx::packRight(b.data(), k, n, n, 1, packed.data()));
        const std::vector<float> back = amx::unpackRight(packed.data(), k, n);
        for (size_t i = 0; i < b.size(); ++i)
            QCOMPARE(back[i], b[i]);
        // Transposed input (column stride k) packs the same matrix.
        std::vector<float> bt(b.size());
        for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < n; ++j)
                bt[size_t(j * k + i)] = b[size_t(i * n + j)];
        std::vector<uint16_t> packedT(packed.size());
        QVERIFY(amx::packRight(bt.data(), k, n, 1, k, packedT.data()));
        QVERIFY(packedT == packed);
        // One value that does not split, in a partial panel and block, is
        // found by both walks, whichever stride is the smaller.
        bt[size_t(44 * k + 69)] = std::numeric_limits<float>::quiet_NaN();
        QVERIFY(!amx::splittable(bt.data(), k, n, 1, k));
        QVERIFY(!amx::splittable(bt.data(), n, k, k, 1));
        QVERIFY(!amx::packRight(bt.data(), k, n, 1, k, packedT.data()));
        std::vector<float> bad = b;
        bad[size_t(69 * n + 44)] = 0x1p121f;
        QVERIFY(!amx::packRight(bad.data(), k, n, n, 1, packed.data()));
    }

    void splittableBounds()
    {
        const float ok[] = {0.0f, -0.0f, 1.0f, 0x1p120f, -0x1p-100f};
        for (float x : ok)
            QVERIFY2(amx::splittable(&x, 1, 1, 0, 0), qPrintable(QString::number(x)));
        const float bad[] = {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 0x1p121f,
                             0x1p-101f, std::numeric_limits<float>::denorm_min()};
        for (float x : bad)
            QVERIFY2(!amx::splittable(&x, 1, 1, 0, 0), qPrintable(QString::number(x)));
    }

    void productIsAsAccurateAsBlas_data()
    {
        QTest::addColumn<int64_t>("m");
        QTest::addColumn<int64_t>("k");
        QTest::addColumn<int64_t>("n");
        QTest::newRow("whole blocks") << int64_t(64) << int64_t(256) << int64_t(96);
        QTest::newRow("ragged edges") << int64_t(37) << int64_t(70) << int64_t(45);
        QTest::newRow("one row") << int64_t(1) << int64_t(33) << int64_t(17);
        QTest::newRow("deep, past one K chunk") << int64_t(40) << int64_t(1100) << int64_t(64);
        QTest::newRow("many panels") << int64_t(96) << int64_t(64) << int64_t(640);
    }

    void productIsAsAccurateAsBlas()
    {
        QFETCH(int64_t, m);
        QFETCH(int64_t, k);
        QFETCH(int64_t, n);
        const Tensor x = matrix(m, k, 11), w = matrix(k, n, 12);
        const Tensor blas = ops::mm(x, w);
        const Tensor tiles = tileProduct(x, w);
        const double blasErr = maxError(x, w, blas), tileErr = maxError(x, w, tiles);
        // OpenBLAS's own error, with a floor for products it happens to get exact.
        const double bound = 4 * std::max(blasErr, 1e-6 * std::sqrt(double(k)));
        QVERIFY2(tileErr <= bound, qPrintable(QString("tiles %1 against BLAS %2").arg(tileErr).arg(blasErr)));
        if (!amx::available())
            QSKIP("no AMX tiles on this CPU (or FUSESCOPE_NO_AMX): the op ran its BLAS fallback");
        Tensor direct = zeros({m, n}, DType::F32);
        std::vector<uint16_t> packed(size_t(amx::packedElements(k, n)));
        amx::packRight(w.data<float>(), k, n, n, 1, packed.data());
        QVERIFY(amx::gemm(x.data<float>(), m, k, k, packed.data(), n, direct.data<float>(), n));
        QVERIFY(maxError(x, w, direct) <= bound);
    }

    // Infinity and NaN in the activations: the tiles decline and BLAS on the
    // exact weight gives what aten.mm gives, infinities and NaNs in place.
    void specialValuesFallBackToBlas()
    {
        Tensor x = matrix(40, 64, 21);
        const Tensor w = matrix(64, 48, 22);
        x.data<float>()[5 * 64 + 3] = std::numeric_limits<float>::infinity();
        x.data<float>()[9 * 64 + 60] = std::numeric_limits<float>::quiet_NaN();
        x.data<float>()[20 * 64 + 1] = 1e-39f; // subnormal: the tiles would flush it
        if (amx::available()) {
            std::vector<uint16_t> packed(size_t(amx::packedElements(64, 48)));
            amx::packRight(w.data<float>(), 64, 48, 48, 1, packed.data());
            std::vector<float> c(40 * 48, 7.0f);
            QVERIFY(!amx::gemm(x.data<float>(), 40, 64, 64, packed.data(), 48, c.data(), 48));
            QVERIFY2(std::all_of(c.begin(), c.end(), [](float v) { return v == 7.0f; }), "declined but wrote C");
        }
        const Tensor want = ops::mm(x, w), got = tileProduct(x, w);
        for (int64_t i = 0; i < want.numel(); ++i) {
            const float a = got.data<float>()[i], b = want.data<float>()[i];
            QVERIFY2((std::isnan(a) && std::isnan(b)) || a == b,
                     qPrintable(QString("element %1: %2 against %3").arg(i).arg(a).arg(b)));
        }
    }

    // A linear layer's [N, K] weight packs in place with transposed=True, as
    // the compiler passes it: the same bits as its [K, N] transpose packed.
    void packReadsTransposedWeights()
    {
        const Tensor w = matrix(70, 45, 31);
        const Tensor wt = w.transpose(0, 1).contiguous();
        const Tensor a = callOp1("fusescope.pack_bf16x6", {w});
        const Tensor b = callOp1("fusescope.pack_bf16x6", {wt, true});
        QCOMPARE(a.numel(), amx::packedElements(70, 45));
        QCOMPARE(b.numel(), a.numel());
        QVERIFY(std::equal(a.data<uint16_t>(), a.data<uint16_t>() + a.numel(), b.data<uint16_t>()));
    }

    // The input a column slice of a wider matrix, the output a slice of a
    // wider buffer (as a concatenation written in place gives it) or a
    // transposed view: the rows' strides are honoured and nothing outside the
    // output view is written.
    void stridedOperandsAndOutputs()
    {
        const Tensor wide = matrix(40, 100, 41), w = matrix(64, 48, 42);
        const Tensor x = wide.narrow(1, 3, 64);
        const Tensor want = ops::mm(x.contiguous(), w);
        const double bound = 4 * std::max(maxError(x.contiguous(), w, want), 1e-6 * 8.0);
        const Tensor packed = callOp1("fusescope.pack_bf16x6", {w});
        const OpDef &mm = OpRegistry::instance().get("fusescope.mm_bf16x6");
        const Tensor buffer = zeros({40, 100}, DType::F32), bufferT = zeros({48, 40}, DType::F32);
        Tensor outs[2] = {buffer.narrow(1, 10, 48), bufferT.transpose(0, 1)};
        for (Tensor &out : outs) {
            mm.cpu({x, packed, int64_t(48)}, std::span<Tensor>(&out, 1));
            QVERIFY(maxError(x.contiguous(), w, out.contiguous()) <= bound);
        }
        for (int64_t i = 0; i < 40; ++i) {
            for (int64_t j = 0; j < 100; ++j) {
                if (j < 10 || j >= 58)
                    QCOMPARE(buffer.data<float>()[i * 100 + j], 0.0f);
            }
        }
    }

    void opsCheckTheirOperands()
    {
        Tensor w = matrix(8, 4, 1);
        w.data<float>()[2 * 4 + 1] = std::numeric_limits<float>::infinity();
        QVERIFY(throwsWith([&] { callOp1("fusescope.pack_bf16x6", {w}); }, "at [2,1] does not split exactly"));
        const Tensor packed = callOp1("fusescope.pack_bf16x6", {matrix(8, 4, 2)});
        // The packed size tells K and n to the 32 the panels are padded to.
        QVERIFY(throwsWith(
            [&] {
                callOp1("fusescope.mm_bf16x6", {matrix(3, 40, 3), packed, int64_t(4)});
            },
            "is not a packed [40,4] matrix"));
        QVERIFY(throwsWith(
            [&] {
                callOp1("fusescope.mm_bf16x6", {matrix(3, 8, 3), packed, int64_t(33)});
            },
            "is not a packed [8,33] matrix"));
        QVERIFY(throwsWith([&] { callOp1("fusescope.pack_bf16x6", {zeros({8}, DType::F32)}); },
                           "expected a 2-D f32 matrix"));
    }
};

QTEST_GUILESS_MAIN(TestAmx)
#include "tst_core_amx.moc"
