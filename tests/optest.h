#pragma once
// Shared helpers of the tensor-core tests: layouts that hold the same values
// with different strides, and comparison against references computed in f64.

#include "core/ops/functional.h"
#include "core/tensor/factory.h"

#include <QString>
#include <QTest>

#include <cmath>
#include <functional>
#include <vector>

namespace fusescope::test {

// The same logical values as x, stored with other strides:
// "contiguous", "transposed" (last two dims stored swapped), "sliced" (every
// other element of a larger buffer along the last dim), "offset" (a view that
// starts inside its storage).
inline Tensor withLayout(const Tensor &x, const QString &layout)
{
    if (layout == QLatin1String("transposed") && x.dim() >= 2)
        return x.transpose(-1, -2).contiguous().transpose(-1, -2);
    if (layout == QLatin1String("sliced") && x.dim() >= 1) {
        Shape big = x.sizes();
        big.back() *= 2;
        Tensor buffer = zeros(big, x.dtype());
        Tensor view = buffer.slice(-1, 0, big.back(), 2);
        ops::copy_(view, x);
        return view;
    }
    if (layout == QLatin1String("offset") && x.dim() >= 1) {
        Shape big = x.sizes();
        big[0] += 1;
        Tensor buffer = zeros(big, x.dtype());
        Tensor view = buffer.narrow(0, 1, x.size(0));
        ops::copy_(view, x);
        return view;
    }
    return x.contiguous();
}

inline std::vector<double> values(const Tensor &t)
{
    return t.toDoubleVector();
}

// Applies f elementwise to the values of x (row-major), in f64.
inline std::vector<double> mapRef(const Tensor &x, const std::function<double(double)> &f)
{
    std::vector<double> out = x.toDoubleVector();
    for (double &v : out)
        v = f(v);
    return out;
}

// |a - e| <= atol + rtol * |e|, NaN matches NaN, inf matches inf of the same sign.
inline bool closeTo(double a, double e, double rtol, double atol)
{
    if (std::isnan(e))
        return std::isnan(a);
    if (std::isinf(e))
        return a == e;
    return std::fabs(a - e) <= atol + rtol * std::fabs(e);
}

inline QString describeMismatch(const Tensor &actual, const std::vector<double> &expected, double rtol, double atol)
{
    const std::vector<double> got = actual.toDoubleVector();
    if (got.size() != expected.size())
        return QStringLiteral("size %1, expected %2").arg(got.size()).arg(expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        if (!closeTo(got[i], expected[i], rtol, atol))
            return QStringLiteral("element %1: got %2, expected %3 (rtol %4, atol %5)")
                .arg(i)
                .arg(got[i], 0, 'g', 10)
                .arg(expected[i], 0, 'g', 10)
                .arg(rtol)
                .arg(atol);
    }
    return {};
}

// Default tolerances per dtype for results computed through that dtype.
inline double rtolFor(DType t)
{
    switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 1.6e-2;
    case DType::F32: return 2e-5;
    default: return 1e-12;
    }
}

} // namespace fusescope::test

// Compares a tensor with expected f64 values (row-major) and its shape.
#define FS_COMPARE_VALUES(actual, expectedShape, expected, rtol, atol)                                     \
    do {                                                                                                    \
        const ::fusescope::Tensor fsActual_ = (actual);                                                    \
        QCOMPARE(QString::fromStdString(::fusescope::shapeStr(fsActual_.sizes())),                          \
                 QString::fromStdString(::fusescope::shapeStr(expectedShape)));                             \
        const QString fsWhy_ = ::fusescope::test::describeMismatch(fsActual_, (expected), (rtol), (atol)); \
        QVERIFY2(fsWhy_.isEmpty(), qPrintable(fsWhy_));                                                     \
    } while (false)

// Expects `expr` to throw fusescope::Error whose message contains `fragment`.
#define FS_EXPECT_ERROR(expr, fragment)                                                              \
    do {                                                                                            \
        bool fsThrown_ = false;                                                                     \
        try {                                                                                       \
            (void)(expr);                                                                           \
        } catch (const ::fusescope::Error &e) {                                                     \
            fsThrown_ = true;                                                                       \
            QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String(fragment)), e.what());      \
        }                                                                                           \
        QVERIFY2(fsThrown_, "expected fusescope::Error containing: " fragment);                     \
    } while (false)
