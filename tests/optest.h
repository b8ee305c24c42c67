#pragma once
// Shared helpers of the tensor-core tests: layouts that hold the same values
// with different strides, seeded inputs, data-row parsing, f64 references used
// by more than one test, and comparison against references computed in f64.

#include "core/ops/functional.h"
#include "core/ops/registry.h"
#include "core/runtime/observer.h"
#include "core/tensor/factory.h"

#include <QString>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
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

// --- data rows ---------------------------------------------------------------------

// A shape written as "2,3" ("" is 0-d).
inline Shape parseShape(const QString &text)
{
    Shape shape;
    for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        shape.push_back(part.toLongLong());
    return shape;
}

// A dtype by its name ("f32", "i64", ...); an unknown name is a broken data row.
inline DType parseDt(const QString &name)
{
    DType t = DType::F32;
    if (!parseDType(name.toStdString(), t))
        qFatal("unknown dtype %s", qPrintable(name));
    return t;
}

// --- tensors -----------------------------------------------------------------------

// A tensor with no data, as the compiler's captured graphs hold.
inline Tensor meta(const Shape &shape, DType dtype = DType::F32)
{
    return Tensor::empty(shape, dtype, kMeta);
}

// randn * scale + shift computed in f64, then rounded to `dtype`, so the
// reference sees what the kernel sees.
inline Tensor normalInput(const Shape &shape, DType dtype, uint64_t seed, double scale = 1, double shift = 0)
{
    Generator gen(seed);
    std::vector<double> values(static_cast<size_t>(numelOf(shape)));
    for (double &v : values)
        v = gen.normal() * scale + shift;
    return fromVector(values, shape, dtype);
}

// randn in `dtype` for floating dtypes; integers in [intLow, intHigh) for
// integral ones. Every value is exactly representable in `dtype`.
inline Tensor randomInput(const Shape &shape, DType dtype, uint64_t seed, int64_t intLow, int64_t intHigh)
{
    Generator gen(seed);
    if (isIntegral(dtype))
        return randint(intLow, intHigh, shape, gen, dtype);
    return randn(shape, gen, dtype);
}

// An f32 randn tensor scaled by `scale` (in f32), as module parameters are filled.
inline Tensor randomTensor(const Shape &shape, uint64_t seed, double scale = 1)
{
    Generator g(seed);
    Tensor t = randn(shape, g);
    float *p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
        p[i] = static_cast<float>(p[i] * scale);
    return t;
}

// The names of a module's parameters, buffers or state dict, in order.
inline QStringList names(const std::vector<std::pair<std::string, Tensor>> &list)
{
    QStringList out;
    for (const auto &[name, t] : list)
        out << QString::fromStdString(name);
    return out;
}

// --- ops ---------------------------------------------------------------------------

// Empty if every op in `names` is registered, else the name of the first one missing.
inline QString missingOp(const QStringList &names)
{
    for (const QString &n : names) {
        if (!OpRegistry::instance().find(n.toStdString()))
            return n;
    }
    return {};
}

// Names of the finer kernels (BLAS calls, conv algorithms) reported while fn runs.
inline std::vector<std::string> kernelsDuring(const std::function<void()> &fn)
{
    struct Names : Observer {
        std::vector<std::string> names;
        void kernelBegin(const KernelEvent &e) override
        {
            if (!e.opKernel) // every eager op reports its own; these tests ask which finer one ran
                names.emplace_back(e.name);
        }
    } observer;
    observers::add(&observer);
    fn();
    observers::remove(&observer);
    return observer.names;
}

// --- f64 references ----------------------------------------------------------------

// y[r, o] = sum_i x[r, i] w[o, i] + b[o], for rows of `in` values and w [out, in].
inline std::vector<double> linearRef(const std::vector<double> &x, int64_t in, const std::vector<double> &w,
                                     const std::vector<double> &b = {})
{
    const int64_t rows = in == 0 ? 0 : static_cast<int64_t>(x.size()) / in;
    const int64_t out = b.empty() ? (in == 0 ? 0 : static_cast<int64_t>(w.size()) / in) : int64_t(b.size());
    std::vector<double> y(static_cast<size_t>(rows * out));
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t o = 0; o < out; ++o) {
            double acc = b.empty() ? 0 : b[size_t(o)];
            for (int64_t i = 0; i < in; ++i)
                acc += x[size_t(r * in + i)] * w[size_t(o * in + i)];
            y[size_t(r * out + o)] = acc;
        }
    }
    return y;
}

// Normalizes each run of `width` values: (x - mean) / sqrt(var + eps) * w + b
// (w, b empty: 1 and 0).
inline std::vector<double> layerNormRef(const std::vector<double> &x, int64_t width, const std::vector<double> &w,
                                        const std::vector<double> &b, double eps)
{
    std::vector<double> y(x.size());
    for (size_t r = 0; width > 0 && r < x.size() / size_t(width); ++r) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < width; ++i)
            mean += x[r * size_t(width) + size_t(i)];
        mean /= double(width);
        for (int64_t i = 0; i < width; ++i)
            var += std::pow(x[r * size_t(width) + size_t(i)] - mean, 2);
        var /= double(width);
        for (int64_t i = 0; i < width; ++i) {
            const size_t k = r * size_t(width) + size_t(i);
            y[k] = (x[k] - mean) / std::sqrt(var + eps) * (w.empty() ? 1 : w[size_t(i)])
                + (b.empty() ? 0 : b[size_t(i)]);
        }
    }
    return y;
}

// Softmax attention per batch and head over projected q [B,L,E] and k, v
// [B,S,E], heads interleaved along E as h*D + j. mask: additive [L, S] values
// (empty: none); causal: position l sees positions s <= l only.
inline std::vector<double> attentionRef(const std::vector<double> &q, const std::vector<double> &k,
                                        const std::vector<double> &v, int64_t batch, int64_t len, int64_t srcLen,
                                        int64_t embed, int64_t heads, const std::vector<double> &mask, bool causal)
{
    const int64_t d = embed / heads;
    std::vector<double> out(size_t(batch * len * embed));
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t l = 0; l < len; ++l) {
                const int64_t visible = causal ? std::min(l + 1, srcLen) : srcLen;
                std::vector<double> p(static_cast<size_t>(visible));
                double top = -INFINITY, total = 0;
                for (int64_t s = 0; s < visible; ++s) {
                    double dot = 0;
                    for (int64_t j = 0; j < d; ++j)
                        dot += q[size_t((b * len + l) * embed + h * d + j)]
                            * k[size_t((b * srcLen + s) * embed + h * d + j)];
                    p[size_t(s)] = dot / std::sqrt(double(d)) + (mask.empty() ? 0 : mask[size_t(l * srcLen + s)]);
                    top = std::max(top, p[size_t(s)]);
                }
                for (double &e : p)
                    total += (e = std::exp(e - top));
                for (int64_t j = 0; j < d; ++j) {
                    double acc = 0;
                    for (int64_t s = 0; s < visible; ++s)
                        acc += p[size_t(s)] / total * v[size_t((b * srcLen + s) * embed + h * d + j)];
                    out[size_t((b * len + l) * embed + h * d + j)] = acc;
                }
            }
    return out;
}

// An NCHW convolution: input [n, c, h, w], weight [o, c / groups, kh, kw].
struct ConvGeometry {
    int64_t n, c, h, w, o, kh, kw, stride, pad, dil, groups;
    int64_t outH() const { return (h + 2 * pad - dil * (kh - 1) - 1) / stride + 1; }
    int64_t outW() const { return (w + 2 * pad - dil * (kw - 1) - 1) / stride + 1; }
};

// Convolution by its definition, row-major values in and out; b empty: no bias.
inline std::vector<double> conv2dRef(const std::vector<double> &x, const std::vector<double> &wt,
                                     const std::vector<double> &b, const ConvGeometry &g)
{
    const int64_t oh = g.outH(), ow = g.outW(), cg = g.c / g.groups, og = g.o / g.groups;
    std::vector<double> y;
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t o = 0; o < g.o; ++o)
            for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                    double acc = b.empty() ? 0 : b[size_t(o)];
                    const int64_t group = o / og;
                    for (int64_t c = 0; c < cg; ++c)
                        for (int64_t ki = 0; ki < g.kh; ++ki)
                            for (int64_t kj = 0; kj < g.kw; ++kj) {
                                const int64_t yi = i * g.stride - g.pad + ki * g.dil;
                                const int64_t xj = j * g.stride - g.pad + kj * g.dil;
                                if (yi < 0 || yi >= g.h || xj < 0 || xj >= g.w)
                                    continue;
                                const int64_t ci = group * cg + c;
                                acc += x[size_t(((n * g.c + ci) * g.h + yi) * g.w + xj)]
                                    * wt[size_t(((o * cg + c) * g.kh + ki) * g.kw + kj)];
                            }
                    y.push_back(acc);
                }
    return y;
}

// --- tolerances --------------------------------------------------------------------

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

// rtolFor, but 0 for integral dtypes: integer results must be exact.
inline double rtolOrExact(DType t)
{
    return isIntegral(t) ? 0 : rtolFor(t);
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

// Fails the test, naming the op, unless every op named is registered: the ops
// are all registered, so a missing one is a regression, never a reason to skip.
#define FS_REQUIRE_OPS(...)                                                                                 \
    do {                                                                                                    \
        const QString fsMissing_ = ::fusescope::test::missingOp(QStringList{__VA_ARGS__});                 \
        QVERIFY2(fsMissing_.isEmpty(),                                                                      \
                 qPrintable(fsMissing_ + QStringLiteral(" is not registered; the decomposition needs it"))); \
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
