// Normalization and attention ops against references written here as plain
// f64 loops: reduced dims, layouts, dtypes, affine parameters, masks,
// zero-size and meta tensors, error messages, and each decomposition
// against its op's kernel.
#include "optest.h"

#include "core/ops/registry.h"

#include <cmath>
#include <limits>

using namespace fusescope;
using namespace fusescope::test;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

// Positive values in [0.5, 1.5): variances.
Tensor positive(const Shape &shape, DType dtype, uint64_t seed)
{
    Generator gen(seed);
    std::vector<double> v = rand(shape, gen, DType::F64).toDoubleVector();
    for (double &e : v)
        e += 0.5;
    return fromVector(v, shape, dtype);
}

double atolFor(DType t)
{
    switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 2e-2;
    case DType::F32: return 2e-5;
    default: return 1e-12;
    }
}

// Results of 16-bit ops are rounded once more than the reference: a little slack.
double rtolOf(DType t)
{
    return rtolFor(t) * 2;
}

int64_t product(const Shape &s, size_t from, size_t to)
{
    int64_t p = 1;
    for (size_t i = from; i < to; ++i)
        p *= s[i];
    return p;
}

std::optional<Tensor> maybe(bool present, const Tensor &t)
{
    return present ? std::optional<Tensor>(t) : std::nullopt;
}

// --- references --------------------------------------------------------------------

std::vector<double> refSoftmax(const Tensor &x, int64_t dim, bool log)
{
    const std::vector<double> v = x.toDoubleVector();
    const Shape &s = x.sizes();
    const size_t d = s.empty() ? 0 : static_cast<size_t>(dim < 0 ? dim + x.dim() : dim);
    const int64_t n = s.empty() ? 1 : s[d];
    const int64_t inner = s.empty() ? 1 : product(s, d + 1, s.size());
    const int64_t outer = s.empty() ? 1 : product(s, 0, d);
    std::vector<double> out(v.size());
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
            auto at = [&](int64_t r) { return static_cast<size_t>((o * n + r) * inner + j); };
            double m = -kInf;
            for (int64_t r = 0; r < n; ++r)
                m = std::max(m, v[at(r)]);
            double sum = 0;
            for (int64_t r = 0; r < n; ++r)
                sum += std::exp(v[at(r)] - m);
            for (int64_t r = 0; r < n; ++r)
                out[at(r)] = log ? v[at(r)] - m - std::log(sum) : std::exp(v[at(r)] - m) / sum;
        }
    }
    return out;
}

// Rows of m elements; rms: x / sqrt(mean(x^2) + eps), else (x - mean) / sqrt(var + eps).
std::vector<double> refRowNorm(const Tensor &x, int64_t m, const std::vector<double> &w, const std::vector<double> &b,
                               double eps, bool rms)
{
    const std::vector<double> v = x.toDoubleVector();
    std::vector<double> out(v.size());
    for (size_t row = 0; m > 0 && row < v.size() / static_cast<size_t>(m); ++row) {
        const double *xr = v.data() + row * static_cast<size_t>(m);
        double mean = 0, var = 0;
        for (int64_t i = 0; i < m; ++i)
            mean += xr[i];
        mean /= static_cast<double>(m);
        for (int64_t i = 0; i < m; ++i)
            var += rms ? xr[i] * xr[i] : (xr[i] - mean) * (xr[i] - mean);
        var /= static_cast<double>(m);
        for (int64_t i = 0; i < m; ++i) {
            const size_t k = static_cast<size_t>(i);
            double y = (xr[i] - (rms ? 0 : mean)) / std::sqrt(var + eps);
            y = y * (w.empty() ? 1 : w[k]) + (b.empty() ? 0 : b[k]);
            out[row * static_cast<size_t>(m) + k] = y;
        }
    }
    return out;
}

std::vector<double> valuesOr(const std::optional<Tensor> &t)
{
    return t ? t->toDoubleVector() : std::vector<double>();
}

std::vector<double> refGroupNorm(const Tensor &x, int64_t groups, const std::vector<double> &w,
                                 const std::vector<double> &b, double eps)
{
    const std::vector<double> v = x.toDoubleVector();
    const int64_t n = x.size(0), c = x.size(1), hw = product(x.sizes(), 2, x.sizes().size());
    const int64_t per = c / groups;
    std::vector<double> out(v.size());
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t begin = (i * c + g * per) * hw, count = per * hw;
            double mean = 0, var = 0;
            for (int64_t e = 0; e < count; ++e)
                mean += v[static_cast<size_t>(begin + e)];
            mean /= static_cast<double>(count);
            for (int64_t e = 0; e < count; ++e)
                var += std::pow(v[static_cast<size_t>(begin + e)] - mean, 2);
            var /= static_cast<double>(count);
            for (int64_t e = 0; e < count; ++e) {
                const size_t ch = static_cast<size_t>(g * per + e / hw), k = static_cast<size_t>(begin + e);
                out[k] = (v[k] - mean) / std::sqrt(var + eps) * (w.empty() ? 1 : w[ch]) + (b.empty() ? 0 : b[ch]);
            }
        }
    }
    return out;
}

std::vector<double> refBatchNorm(const Tensor &x, const Tensor &mean, const Tensor &var, const std::vector<double> &w,
                                 const std::vector<double> &b, double eps)
{
    const std::vector<double> v = x.toDoubleVector(), mu = mean.toDoubleVector(), sigma2 = var.toDoubleVector();
    const int64_t c = x.size(1), hw = product(x.sizes(), 2, x.sizes().size());
    std::vector<double> out(v.size());
    for (size_t k = 0; k < v.size(); ++k) {
        const size_t ch = static_cast<size_t>((static_cast<int64_t>(k) / hw) % c);
        out[k] = (v[k] - mu[ch]) / std::sqrt(sigma2[ch] + eps) * (w.empty() ? 1 : w[ch]) + (b.empty() ? 0 : b[ch]);
    }
    return out;
}

// Broadcast of shapes, right-aligned (the test's own, not the core's).
Shape broadcast(const std::vector<Shape> &shapes)
{
    Shape out;
    for (const Shape &s : shapes) {
        if (s.size() > out.size())
            out.insert(out.begin(), s.size() - out.size(), 1);
        const size_t lead = out.size() - s.size();
        for (size_t i = 0; i < s.size(); ++i)
            out[lead + i] = out[lead + i] == 1 ? s[i] : out[lead + i];
    }
    return out;
}

Shape withInner(Shape batch, int64_t rows, int64_t cols)
{
    batch.push_back(rows);
    batch.push_back(cols);
    return batch;
}

struct AttnCase {
    Tensor q, k, v;
    std::optional<Tensor> mask;
    bool causal = false;
    std::optional<double> scale;
};

// Straight from the definition, on operands expanded to the full batch:
// softmax(q k^T * scale + mask) v, rows with every score -inf giving 0.
std::vector<double> refAttention(const AttnCase &c, Shape &shape)
{
    const Shape batch = broadcast({Shape(c.q.sizes().begin(), c.q.sizes().end() - 2),
                                   Shape(c.k.sizes().begin(), c.k.sizes().end() - 2),
                                   Shape(c.v.sizes().begin(), c.v.sizes().end() - 2)});
    const int64_t L = c.q.size(-2), S = c.k.size(-2), E = c.q.size(-1), Ev = c.v.size(-1);
    const int64_t blocks = product(batch, 0, batch.size());
    const std::vector<double> q = c.q.expand(withInner(batch, L, E)).toDoubleVector();
    const std::vector<double> k = c.k.expand(withInner(batch, S, E)).toDoubleVector();
    const std::vector<double> v = c.v.expand(withInner(batch, S, Ev)).toDoubleVector();
    std::vector<double> mask;
    if (c.mask)
        mask = c.mask->expand(withInner(batch, L, S)).toDoubleVector();
    const bool boolMask = c.mask && c.mask->dtype() == DType::Bool;
    const double scale = c.scale ? *c.scale : 1 / std::sqrt(static_cast<double>(E));
    shape = withInner(batch, L, Ev);
    std::vector<double> out(static_cast<size_t>(blocks * L * Ev), 0.0);
    std::vector<double> p(static_cast<size_t>(S));
    for (int64_t b = 0; b < blocks; ++b) {
        for (int64_t i = 0; i < L; ++i) {
            double m = -kInf;
            for (int64_t j = 0; j < S; ++j) {
                double score = 0;
                for (int64_t e = 0; e < E; ++e)
                    score += q[static_cast<size_t>((b * L + i) * E + e)] * k[static_cast<size_t>((b * S + j) * E + e)];
                if (E > 0) // PyTorch scales q and k before the product: an empty one stays 0
                    score *= scale;
                const double mv = mask.empty() ? 0 : mask[static_cast<size_t>((b * L + i) * S + j)];
                if (boolMask)
                    score = mv != 0 ? score : -kInf;
                else
                    score += mv;
                if (c.causal && j > i)
                    score = -kInf;
                p[static_cast<size_t>(j)] = score;
                m = std::max(m, score);
            }
            if (m == -kInf)
                continue; // nothing to attend to: zeros
            double sum = 0;
            for (double &e : p)
                sum += (e = std::exp(e - m));
            for (int64_t j = 0; j < S; ++j) {
                for (int64_t e = 0; e < Ev; ++e)
                    out[static_cast<size_t>((b * L + i) * Ev + e)]
                        += p[static_cast<size_t>(j)] / sum * v[static_cast<size_t>((b * S + j) * Ev + e)];
            }
        }
    }
    return out;
}

Tensor boolMask(const Shape &shape, uint64_t seed)
{
    Generator gen(seed);
    std::vector<double> v = rand(shape, gen, DType::F64).toDoubleVector();
    for (double &e : v)
        e = e < 0.7 ? 1 : 0;
    return fromVector(v, shape, DType::Bool);
}

// Additive mask: normal values and some -inf.
Tensor floatMask(const Shape &shape, DType dtype, uint64_t seed)
{
    Generator gen(seed);
    std::vector<double> v = randn(shape, gen, DType::F64).toDoubleVector();
    for (double &e : v)
        e = e < -1.0 ? -kInf : e;
    return fromVector(v, shape, dtype);
}

using Thunk = std::function<Tensor()>;

} // namespace

Q_DECLARE_METATYPE(Thunk)
Q_DECLARE_METATYPE(fusescope::Value)

class TestCoreNorm : public QObject
{
    Q_OBJECT

private slots:
    void softmax_data();
    void softmax();
    void softmaxExtremeValues();
    void layerNorm_data();
    void layerNorm();
    void rmsNorm_data();
    void rmsNorm();
    void groupNorm_data();
    void groupNorm();
    void batchNorm_data();
    void batchNorm();
    void attention_data();
    void attention();
    void attentionFullyMaskedRows();
    void fusedAttentionMatchesItsDecomposition_data();
    void fusedAttentionMatchesItsDecomposition();
    void metaShapes();
    void errors_data();
    void errors();
    void decompositions_data();
    void decompositions();
};

// --- softmax ---------------------------------------------------------------------------

void TestCoreNorm::softmax_data()
{
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<qint64>("dim");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<bool>("log");
    struct Row {
        const char *name;
        Shape shape;
        int64_t dim;
        const char *layout;
        DType dtype;
    };
    const Row rows[] = {
        {"last dim", {4, 37}, -1, "contiguous", DType::F32},
        {"long rows", {3, 1000}, 1, "contiguous", DType::F32},
        {"many rows in parallel", {300, 257}, -1, "contiguous", DType::F32},
        {"first dim", {7, 5, 3}, 0, "contiguous", DType::F32},
        {"middle dim, inner over a tile", {3, 6, 70}, 1, "contiguous", DType::F32},
        {"middle dim in parallel", {64, 40, 70}, 1, "contiguous", DType::F32},
        {"size-1 dim", {4, 1, 3}, 1, "contiguous", DType::F32},
        {"transposed", {5, 8}, -1, "transposed", DType::F32},
        {"transposed, dim 0", {5, 8}, 0, "transposed", DType::F32},
        {"sliced", {4, 9}, 0, "sliced", DType::F32},
        {"offset", {3, 4, 5}, 2, "offset", DType::F32},
        {"f64", {6, 33}, -1, "contiguous", DType::F64},
        {"f64 non-last dim", {6, 33, 2}, 1, "transposed", DType::F64},
        {"f16", {6, 33}, -1, "contiguous", DType::F16},
        {"f16 non-last dim", {5, 6, 7}, 0, "sliced", DType::F16},
        {"bf16", {6, 33}, -1, "contiguous", DType::BF16},
        {"bf16 non-last dim", {5, 6, 7}, 1, "contiguous", DType::BF16},
        {"0-d", {}, 0, "contiguous", DType::F32},
        {"zero rows", {0, 5}, 1, "contiguous", DType::F32},
        {"zero-length dim", {3, 0}, 1, "contiguous", DType::F32},
    };
    for (const Row &r : rows) {
        for (bool log : {false, true}) {
            QTest::newRow(qPrintable(QString::fromLatin1(r.name) + (log ? " (log)" : "")))
                << r.shape << qint64(r.dim) << QString::fromLatin1(r.layout) << int(r.dtype) << log;
        }
    }
}

void TestCoreNorm::softmax()
{
    QFETCH(Shape, shape);
    QFETCH(qint64, dim);
    QFETCH(QString, layout);
    QFETCH(int, dtype);
    QFETCH(bool, log);
    const DType t = DType(dtype);
    const Tensor x = normalInput(shape, t, 11, 3);
    const Tensor y = log ? ops::logSoftmax(withLayout(x, layout), dim) : ops::softmax(withLayout(x, layout), dim);
    QCOMPARE(int(y.dtype()), dtype);
    FS_COMPARE_VALUES(y, shape, refSoftmax(x, dim, log), rtolOf(t), atolFor(t));
}

void TestCoreNorm::softmaxExtremeValues()
{
    // Large values must not overflow; -inf entries get 0; a row of -inf is NaN (as PyTorch).
    const Tensor x = fromVector({1000, 1001, 1002, -kInf, 0, 1, -kInf, -kInf, -kInf, 88, 89, -100}, {4, 3});
    FS_COMPARE_VALUES(ops::softmax(x, 1), Shape({4, 3}), refSoftmax(x, 1, false), 2e-5, 1e-7);
    FS_COMPARE_VALUES(ops::logSoftmax(x, 1), Shape({4, 3}), refSoftmax(x, 1, true), 2e-5, 1e-6);
    QVERIFY(std::isnan(ops::softmax(x, 1).toDoubleVector()[6]));
    FS_COMPARE_VALUES(ops::softmax(x, 0), Shape({4, 3}), refSoftmax(x, 0, false), 2e-5, 1e-7);
}

// --- layer_norm and rms_norm ---------------------------------------------------------------

void TestCoreNorm::layerNorm_data()
{
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("normalizedDims");
    QTest::addColumn<bool>("withWeight");
    QTest::addColumn<bool>("withBias");
    QTest::addColumn<double>("eps");
    QTest::addColumn<double>("shift");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("dtype");
    const auto f32 = int(DType::F32);
    QTest::newRow("weight and bias") << Shape{4, 10} << 1 << true << true << 1e-5 << 0.0 << "contiguous" << f32;
    QTest::newRow("two dims, no affine") << Shape{2, 3, 8} << 2 << false << false << 1e-5 << 0.0 << "contiguous" << f32;
    QTest::newRow("weight only") << Shape{2, 3, 8} << 1 << true << false << 1e-5 << 0.0 << "contiguous" << f32;
    QTest::newRow("bias only") << Shape{5, 33} << 1 << false << true << 1e-5 << 0.0 << "contiguous" << f32;
    QTest::newRow("large eps") << Shape{5, 6} << 1 << true << true << 0.5 << 0.0 << "contiguous" << f32;
    QTest::newRow("rows in parallel") << Shape{512, 130} << 1 << true << true << 1e-5 << 0.0 << "contiguous" << f32;
    QTest::newRow("whole tensor") << Shape{3, 4, 5} << 3 << true << true << 1e-5 << 0.0 << "contiguous" << f32;
    QTest::newRow("transposed") << Shape{6, 20} << 1 << true << true << 1e-5 << 0.0 << "transposed" << f32;
    QTest::newRow("sliced") << Shape{6, 20} << 1 << true << false << 1e-5 << 0.0 << "sliced" << f32;
    QTest::newRow("offset") << Shape{3, 2, 7} << 2 << false << true << 1e-5 << 0.0 << "offset" << f32;
    QTest::newRow("f64, large mean") << Shape{4, 50} << 1 << true << true << 1e-5 << 1e4 << "contiguous"
                                     << int(DType::F64);
    QTest::newRow("f16") << Shape{4, 40} << 1 << true << true << 1e-5 << 0.0 << "transposed" << int(DType::F16);
    QTest::newRow("bf16") << Shape{4, 40} << 1 << true << true << 1e-5 << 0.0 << "contiguous" << int(DType::BF16);
    QTest::newRow("zero batch") << Shape{0, 8} << 1 << true << true << 1e-5 << 0.0 << "contiguous" << f32;
}

void TestCoreNorm::layerNorm()
{
    QFETCH(Shape, shape);
    QFETCH(int, normalizedDims);
    QFETCH(bool, withWeight);
    QFETCH(bool, withBias);
    QFETCH(double, eps);
    QFETCH(double, shift);
    QFETCH(QString, layout);
    QFETCH(int, dtype);
    const DType t = DType(dtype);
    const Shape normalized(shape.end() - normalizedDims, shape.end());
    const Tensor x = normalInput(shape, t, 21, 2, shift);
    const auto w = maybe(withWeight, normalInput(normalized, t, 22));
    const auto b = maybe(withBias, normalInput(normalized, t, 23));
    const Tensor y = ops::layerNorm(withLayout(x, layout), normalized, w, b, eps);
    QCOMPARE(int(y.dtype()), dtype);
    const auto expected = refRowNorm(x, product(normalized, 0, normalized.size()), valuesOr(w), valuesOr(b), eps, false);
    // Centering loses the digits the mean takes: the error grows with it.
    FS_COMPARE_VALUES(y, shape, expected, rtolOf(t), atolFor(t) * (1 + std::fabs(shift)));
}

void TestCoreNorm::rmsNorm_data()
{
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("normalizedDims");
    QTest::addColumn<bool>("withWeight");
    QTest::addColumn<double>("eps"); // NaN: None
    QTest::addColumn<double>("scale");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("dtype");
    const double none = std::nan("");
    const auto f32 = int(DType::F32);
    QTest::newRow("weight") << Shape{4, 10} << 1 << true << 1e-6 << 1.0 << "contiguous" << f32;
    QTest::newRow("no weight, two dims") << Shape{2, 3, 8} << 2 << false << 1e-6 << 1.0 << "contiguous" << f32;
    QTest::newRow("rows in parallel") << Shape{300, 257} << 1 << true << 1e-6 << 1.0 << "contiguous" << f32;
    QTest::newRow("transposed") << Shape{6, 20} << 1 << true << 1e-6 << 1.0 << "transposed" << f32;
    QTest::newRow("sliced") << Shape{6, 20} << 1 << false << 1e-6 << 1.0 << "sliced" << f32;
    QTest::newRow("offset") << Shape{3, 2, 7} << 1 << true << 1e-6 << 1.0 << "offset" << f32;
    // Tiny inputs make eps count: None is f32's machine epsilon.
    QTest::newRow("default eps, f32") << Shape{4, 16} << 1 << true << none << 1e-4 << "contiguous" << f32;
    QTest::newRow("default eps, f64") << Shape{4, 16} << 1 << true << none << 1e-8 << "contiguous"
                                      << int(DType::F64);
    // PyTorch's kernel computes f16 in f32 and takes f32's epsilon there too.
    QTest::newRow("default eps, f16") << Shape{4, 16} << 1 << true << none << 1e-3 << "contiguous"
                                      << int(DType::F16);
    QTest::newRow("f64") << Shape{5, 9} << 1 << true << 1e-6 << 1.0 << "transposed" << int(DType::F64);
    QTest::newRow("f16") << Shape{5, 40} << 1 << true << 1e-6 << 1.0 << "contiguous" << int(DType::F16);
    QTest::newRow("bf16") << Shape{5, 40} << 1 << false << 1e-6 << 1.0 << "sliced" << int(DType::BF16);
    QTest::newRow("zero batch") << Shape{0, 3, 8} << 1 << true << 1e-6 << 1.0 << "contiguous" << f32;
}

void TestCoreNorm::rmsNorm()
{
    QFETCH(Shape, shape);
    QFETCH(int, normalizedDims);
    QFETCH(bool, withWeight);
    QFETCH(double, eps);
    QFETCH(double, scale);
    QFETCH(QString, layout);
    QFETCH(int, dtype);
    const DType t = DType(dtype);
    const Shape normalized(shape.end() - normalizedDims, shape.end());
    const Tensor x = normalInput(shape, t, 31, scale);
    const auto w = maybe(withWeight, normalInput(normalized, t, 32));
    const std::optional<double> epsArg = std::isnan(eps) ? std::nullopt : std::optional<double>(eps);
    const double refEps = epsArg ? eps
        : t == DType::F64        ? std::numeric_limits<double>::epsilon()
                                 : double(std::numeric_limits<float>::epsilon());
    const Tensor y = ops::rmsNorm(withLayout(x, layout), normalized, w, epsArg);
    QCOMPARE(int(y.dtype()), dtype);
    const auto expected = refRowNorm(x, product(normalized, 0, normalized.size()), valuesOr(w), {}, refEps, true);
    FS_COMPARE_VALUES(y, shape, expected, rtolOf(t), atolFor(t));
}

// --- group_norm and batch_norm ---------------------------------------------------------------

void TestCoreNorm::groupNorm_data()
{
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("groups");
    QTest::addColumn<bool>("withWeight");
    QTest::addColumn<bool>("withBias");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("dtype");
    const auto f32 = int(DType::F32);
    QTest::newRow("3 groups") << Shape{2, 6, 5} << 3 << true << true << "contiguous" << f32;
    QTest::newRow("images") << Shape{2, 4, 3, 3} << 2 << true << true << "contiguous" << f32;
    QTest::newRow("no spatial dims") << Shape{3, 4} << 2 << true << false << "contiguous" << f32;
    QTest::newRow("one group") << Shape{2, 4, 6} << 1 << false << true << "contiguous" << f32;
    QTest::newRow("group per channel") << Shape{2, 4, 6} << 4 << false << false << "contiguous" << f32;
    QTest::newRow("groups in parallel") << Shape{16, 32, 20, 20} << 8 << true << true << "contiguous" << f32;
    QTest::newRow("transposed") << Shape{2, 4, 3, 5} << 2 << true << true << "transposed" << f32;
    QTest::newRow("sliced") << Shape{2, 4, 5} << 2 << true << true << "sliced" << f32;
    QTest::newRow("offset") << Shape{2, 4, 5} << 2 << true << true << "offset" << f32;
    QTest::newRow("f64") << Shape{2, 6, 7} << 3 << true << true << "transposed" << int(DType::F64);
    QTest::newRow("f16") << Shape{2, 6, 7} << 3 << true << true << "contiguous" << int(DType::F16);
    QTest::newRow("bf16") << Shape{2, 6, 7} << 2 << true << true << "sliced" << int(DType::BF16);
    QTest::newRow("zero batch") << Shape{0, 4, 3} << 2 << true << true << "contiguous" << f32;
}

void TestCoreNorm::groupNorm()
{
    QFETCH(Shape, shape);
    QFETCH(int, groups);
    QFETCH(bool, withWeight);
    QFETCH(bool, withBias);
    QFETCH(QString, layout);
    QFETCH(int, dtype);
    const DType t = DType(dtype);
    const Tensor x = normalInput(shape, t, 41, 2, 0.5);
    const auto w = maybe(withWeight, normalInput({shape[1]}, t, 42));
    const auto b = maybe(withBias, normalInput({shape[1]}, t, 43));
    const Tensor y = ops::groupNorm(withLayout(x, layout), groups, w, b, 1e-5);
    QCOMPARE(int(y.dtype()), dtype);
    FS_COMPARE_VALUES(y, shape, refGroupNorm(x, groups, valuesOr(w), valuesOr(b), 1e-5), rtolOf(t), atolFor(t));
}

void TestCoreNorm::batchNorm_data()
{
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<bool>("withWeight");
    QTest::addColumn<bool>("withBias");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("dtype");
    const auto f32 = int(DType::F32);
    QTest::newRow("[N, C]") << Shape{4, 3} << true << true << "contiguous" << f32;
    QTest::newRow("[N, C, L]") << Shape{2, 3, 5} << true << false << "contiguous" << f32;
    QTest::newRow("images") << Shape{2, 3, 4, 4} << false << true << "contiguous" << f32;
    QTest::newRow("no affine") << Shape{2, 3, 4} << false << false << "contiguous" << f32;
    QTest::newRow("planes in parallel") << Shape{8, 16, 32, 32} << true << true << "contiguous" << f32;
    QTest::newRow("transposed") << Shape{2, 3, 4, 5} << true << true << "transposed" << f32;
    QTest::newRow("transposed [N, C]") << Shape{5, 3} << true << true << "transposed" << f32;
    QTest::newRow("sliced") << Shape{2, 3, 6} << true << true << "sliced" << f32;
    QTest::newRow("offset") << Shape{2, 3, 6} << true << true << "offset" << f32;
    QTest::newRow("f64") << Shape{2, 3, 6} << true << true << "contiguous" << int(DType::F64);
    QTest::newRow("f16") << Shape{2, 3, 6} << true << true << "sliced" << int(DType::F16);
    QTest::newRow("bf16") << Shape{2, 3, 6} << true << true << "contiguous" << int(DType::BF16);
    QTest::newRow("zero batch") << Shape{0, 3, 6} << true << true << "contiguous" << f32;
}

void TestCoreNorm::batchNorm()
{
    QFETCH(Shape, shape);
    QFETCH(bool, withWeight);
    QFETCH(bool, withBias);
    QFETCH(QString, layout);
    QFETCH(int, dtype);
    const DType t = DType(dtype);
    const Tensor x = normalInput(shape, t, 51, 2);
    const Tensor mean = normalInput({shape[1]}, t, 52), var = positive({shape[1]}, t, 53);
    const auto w = maybe(withWeight, normalInput({shape[1]}, t, 54));
    const auto b = maybe(withBias, normalInput({shape[1]}, t, 55));
    const Tensor y = ops::batchNorm(withLayout(x, layout), mean, var, w, b, 1e-5);
    QCOMPARE(int(y.dtype()), dtype);
    FS_COMPARE_VALUES(y, shape, refBatchNorm(x, mean, var, valuesOr(w), valuesOr(b), 1e-5), rtolOf(t), atolFor(t));
}

// --- scaled_dot_product_attention --------------------------------------------------------------

void TestCoreNorm::attention_data()
{
    QTest::addColumn<Shape>("qShape");
    QTest::addColumn<Shape>("kShape");
    QTest::addColumn<Shape>("vShape");
    QTest::addColumn<QString>("mask"); // none, bool or float
    QTest::addColumn<Shape>("maskShape");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<double>("scale"); // NaN: None
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("dtype");
    const double none = std::nan("");
    const auto f32 = int(DType::F32);
    const QString c = QStringLiteral("contiguous");
    QTest::newRow("3-d") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "none" << Shape{} << false << none
                         << c << f32;
    QTest::newRow("heads") << Shape{2, 3, 6, 16} << Shape{2, 3, 6, 16} << Shape{2, 3, 6, 16} << "none" << Shape{}
                           << false << none << c << f32;
    QTest::newRow("2-d, no batch") << Shape{4, 8} << Shape{6, 8} << Shape{6, 3} << "none" << Shape{} << false << none
                                   << c << f32;
    QTest::newRow("causal, L < S") << Shape{1, 2, 4, 8} << Shape{1, 2, 6, 8} << Shape{1, 2, 6, 8} << "none"
                                   << Shape{} << true << none << c << f32;
    QTest::newRow("causal, L > S") << Shape{2, 7, 4} << Shape{2, 3, 4} << Shape{2, 3, 5} << "none" << Shape{} << true
                                   << none << c << f32;
    QTest::newRow("bool mask [L, S]") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 8} << "bool" << Shape{5, 7}
                                      << false << none << c << f32;
    QTest::newRow("bool mask over heads") << Shape{2, 3, 4, 8} << Shape{2, 3, 6, 8} << Shape{2, 3, 6, 8} << "bool"
                                          << Shape{2, 1, 4, 6} << false << none << c << f32;
    QTest::newRow("float mask") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 4} << "float" << Shape{2, 5, 7}
                                << false << none << c << f32;
    QTest::newRow("float mask, one row") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 4} << "float" << Shape{7}
                                         << false << none << c << f32;
    QTest::newRow("explicit scale") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 4} << "none" << Shape{} << false
                                    << 0.3 << c << f32;
    QTest::newRow("broadcast batch") << Shape{2, 3, 4, 8} << Shape{1, 3, 5, 8} << Shape{3, 5, 2} << "none" << Shape{}
                                     << false << none << c << f32;
    QTest::newRow("large blocks") << Shape{2, 2, 80, 64} << Shape{2, 2, 90, 64} << Shape{2, 2, 90, 32} << "bool"
                                  << Shape{80, 90} << false << none << c << f32;
    QTest::newRow("large blocks, causal") << Shape{1, 100, 48} << Shape{1, 120, 48} << Shape{1, 120, 48} << "none"
                                          << Shape{} << true << none << c << f32;
    QTest::newRow("long keys, blocks in turn") << Shape{1, 200, 64} << Shape{1, 300, 64} << Shape{1, 300, 8} << "bool"
                                               << Shape{200, 300} << false << none << c << f32;
    // Products of at least 32 columns run in conv1x1's register blocks (on CPUs with AVX-512): heads read as
    // views of a wider projection, k alone column-major, row chunks of a causal block whose first keys are
    // fewer than 32 (those go through BLAS).
    QTest::newRow("register blocks, padded rows") << Shape{2, 2, 40, 32} << Shape{2, 2, 50, 32} << Shape{2, 2, 50, 48}
                                                  << "bool" << Shape{40, 50} << false << none << "padded rows" << f32;
    QTest::newRow("register blocks, keys transposed") << Shape{1, 4, 64, 16} << Shape{1, 4, 70, 16}
                                                      << Shape{1, 4, 70, 32} << "float" << Shape{64, 70} << false
                                                      << 0.2 << "keys transposed" << f32;
    QTest::newRow("register blocks, causal chunks") << Shape{1, 160, 64} << Shape{1, 160, 64} << Shape{1, 160, 64}
                                                    << "none" << Shape{} << true << none << "padded rows" << f32;
    QTest::newRow("row chunks, transposed") << Shape{2, 70, 64} << Shape{2, 90, 64} << Shape{2, 90, 16} << "none"
                                            << Shape{} << true << none << "transposed" << f32;
    QTest::newRow("transposed") << Shape{2, 3, 5, 8} << Shape{2, 3, 7, 8} << Shape{2, 3, 7, 6} << "float"
                                << Shape{2, 3, 5, 7} << false << none << "transposed" << f32;
    QTest::newRow("transposed, causal") << Shape{2, 6, 8} << Shape{2, 4, 8} << Shape{2, 4, 6} << "none" << Shape{}
                                        << true << none << "transposed" << f32;
    QTest::newRow("sliced") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "bool" << Shape{2, 5, 7} << false
                            << none << "sliced" << f32;
    QTest::newRow("offset") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "float" << Shape{2, 5, 7}
                            << false << none << "offset" << f32;
    QTest::newRow("f64") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "float" << Shape{5, 7} << false
                         << none << "transposed" << int(DType::F64);
    QTest::newRow("f16") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "bool" << Shape{5, 7} << false
                         << none << c << int(DType::F16);
    QTest::newRow("f16 float mask") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "float" << Shape{5, 7}
                                    << false << none << "sliced" << int(DType::F16);
    QTest::newRow("bf16, causal") << Shape{2, 5, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "none" << Shape{} << true
                                  << none << c << int(DType::BF16);
    QTest::newRow("zero batch") << Shape{0, 5, 8} << Shape{0, 7, 8} << Shape{0, 7, 6} << "none" << Shape{} << false
                                << none << c << f32;
    QTest::newRow("zero queries") << Shape{2, 0, 8} << Shape{2, 7, 8} << Shape{2, 7, 6} << "none" << Shape{} << false
                                  << none << c << f32;
    QTest::newRow("empty embedding") << Shape{2, 3, 0} << Shape{2, 4, 0} << Shape{2, 4, 5} << "none" << Shape{}
                                     << false << none << c << f32;
    QTest::newRow("zero keys") << Shape{2, 3, 8} << Shape{2, 0, 8} << Shape{2, 0, 6} << "none" << Shape{} << false
                               << none << c << f32;
}

// Attention's operand layouts beyond optest's withLayout: "keys transposed" makes k alone column-major,
// "padded rows" reads every operand as a row-major view whose rows are longer than its columns (as heads
// sliced out of a packed projection).
Tensor attentionOperand(const Tensor &x, const QString &layout, bool key)
{
    if (layout == QLatin1String("keys transposed"))
        return withLayout(x, key ? QStringLiteral("transposed") : QStringLiteral("contiguous"));
    if (layout == QLatin1String("padded rows") && x.dim() >= 1) {
        Shape big = x.sizes();
        big.back() *= 3;
        Tensor view = zeros(big, x.dtype()).narrow(-1, x.size(-1), x.size(-1));
        ops::copy_(view, x);
        return view;
    }
    return withLayout(x, layout);
}

void TestCoreNorm::attention()
{
    QFETCH(Shape, qShape);
    QFETCH(Shape, kShape);
    QFETCH(Shape, vShape);
    QFETCH(QString, mask);
    QFETCH(Shape, maskShape);
    QFETCH(bool, causal);
    QFETCH(double, scale);
    QFETCH(QString, layout);
    QFETCH(int, dtype);
    const DType t = DType(dtype);
    AttnCase c{normalInput(qShape, t, 61), normalInput(kShape, t, 62), normalInput(vShape, t, 63), std::nullopt,
               causal, std::nullopt};
    if (mask == QLatin1String("bool"))
        c.mask = boolMask(maskShape, 64);
    else if (mask == QLatin1String("float"))
        c.mask = floatMask(maskShape, t, 65);
    if (!std::isnan(scale))
        c.scale = scale;
    Shape shape;
    const std::vector<double> expected = refAttention(c, shape);
    const auto maskArg = c.mask ? std::optional<Tensor>(attentionOperand(*c.mask, layout, false)) : std::nullopt;
    const Tensor y = ops::scaledDotProductAttention(attentionOperand(c.q, layout, false),
                                                    attentionOperand(c.k, layout, true),
                                                    attentionOperand(c.v, layout, false), maskArg, causal, c.scale);
    QCOMPARE(int(y.dtype()), dtype);
    FS_COMPARE_VALUES(y, shape, expected, rtolOf(t), atolFor(t));
}

void TestCoreNorm::attentionFullyMaskedRows()
{
    // Rows with nothing to attend to give 0, as PyTorch's _safe_softmax; the others are unaffected.
    AttnCase c{normalInput({2, 3, 4}, DType::F32, 71), normalInput({2, 5, 4}, DType::F32, 72),
               normalInput({2, 5, 3}, DType::F32, 73), std::nullopt, false, std::nullopt};
    std::vector<double> keep(2 * 3 * 5, 1);
    for (size_t j = 0; j < 5; ++j)
        keep[5 + j] = 0; // batch 0, row 1
    c.mask = fromVector(keep, {2, 3, 5}, DType::Bool);
    Shape shape;
    const std::vector<double> expected = refAttention(c, shape);
    QCOMPARE(expected[3], 0.0);
    FS_COMPARE_VALUES(ops::scaledDotProductAttention(c.q, c.k, c.v, c.mask), shape, expected, 2e-5, 1e-6);

    std::vector<double> additive(3 * 5, 0.5);
    for (size_t j = 0; j < 5; ++j)
        additive[10 + j] = -kInf; // row 2 of every batch
    c.mask = fromVector(additive, {3, 5});
    const std::vector<double> expectedFloat = refAttention(c, shape);
    FS_COMPARE_VALUES(ops::scaledDotProductAttention(c.q, c.k, c.v, c.mask), shape, expectedFloat, 2e-5, 1e-6);
}

// fusescope.attention, which the compiler forms from a decomposed attention,
// against those ops run one by one: masks read with a column stride (a
// transposed tensor) and broadcast along the columns, a -inf fill (whose
// trailing hidden keys are skipped; a row with nothing left is NaN in both)
// and a finite one.
void TestCoreNorm::fusedAttentionMatchesItsDecomposition_data()
{
    QTest::addColumn<QString>("layout");
    QTest::addColumn<double>("fill");
    QTest::addColumn<Shape>("qkv"); // L, S, E, Ev
    for (const char *layout : {"transposed", "per row"}) {
        QTest::newRow((std::string(layout) + ", -inf").c_str()) << QString(layout) << -kInf << Shape{6, 7, 5, 4};
        QTest::newRow((std::string(layout) + ", -3").c_str()) << QString(layout) << -3.0 << Shape{6, 7, 5, 4};
    }
    // Register blocks (products of 32 columns or more), the masked keys skipped or not.
    QTest::newRow("transposed, -inf, register blocks") << QString("transposed") << -kInf << Shape{42, 48, 32, 40};
    QTest::newRow("per row, -3, register blocks") << QString("per row") << -3.0 << Shape{36, 40, 16, 64};
}

void TestCoreNorm::fusedAttentionMatchesItsDecomposition()
{
    QFETCH(QString, layout);
    QFETCH(double, fill);
    QFETCH(Shape, qkv);
    const int64_t L = qkv[0], S = qkv[1], E = qkv[2], Ev = qkv[3];
    const Tensor q = normalInput({2, 3, L, E}, DType::F32, 81), k = normalInput({2, 3, S, E}, DType::F32, 82),
                 v = normalInput({2, 3, S, Ev}, DType::F32, 83);
    std::vector<double> hidden(static_cast<size_t>(L * S));
    for (size_t i = 0; i < hidden.size(); ++i)
        hidden[i] = (i * 7 + 3) % 5 < 2;
    Tensor mask = ops::transpose(fromVector(hidden, {S, L}, DType::Bool), 0, 1);
    if (layout == "per row") {
        std::vector<double> rows(static_cast<size_t>(L), 0);
        rows[1] = rows[4] = 1; // rows 1 and 4 see nothing
        mask = ops::expand(fromVector(rows, {L, 1}, DType::Bool), {L, S});
    }
    const Tensor got = callOp1("fusescope.attention", {q, k, v, Value(mask), fill, 0.3});
    const Tensor scores = ops::where(mask, fill, ops::mul(ops::matmul(q, ops::transpose(k, -2, -1)), 0.3));
    const std::vector<double> want = ops::matmul(ops::softmax(scores, -1), v).toDoubleVector();
    const std::vector<double> y = got.toDoubleVector();
    QCOMPARE(y.size(), want.size());
    int nan = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        nan += std::isnan(want[i]);
        QVERIFY2(std::isnan(y[i]) == std::isnan(want[i]) && (std::isnan(y[i]) || std::abs(y[i] - want[i]) <= 2e-5),
                 qPrintable(QString("element %1: %2 vs %3").arg(i).arg(y[i]).arg(want[i])));
    }
    QCOMPARE(nan > 0, layout == "per row" && std::isinf(fill));
    // transposed: the same values with the heads after the rows, [2, L, 3, Ev], laid out contiguously.
    const Tensor heads = callOp1("fusescope.attention", {q, k, v, Value(mask), fill, 0.3, true});
    QCOMPARE(shapeStr(heads.sizes()), shapeStr({2, L, 3, Ev}));
    QVERIFY(heads.isContiguous());
    const std::vector<double> moved = ops::transpose(got, 1, 2).contiguous().toDoubleVector(),
                              t = heads.toDoubleVector();
    for (size_t i = 0; i < t.size(); ++i)
        QVERIFY2(t[i] == moved[i] || (std::isnan(t[i]) && std::isnan(moved[i])), qPrintable(QString::number(i)));
}

// --- meta tensors: shapes and dtypes only -------------------------------------------------------

void TestCoreNorm::metaShapes()
{
    auto check = [](const Tensor &y, const Shape &shape, DType dtype) {
        QVERIFY(y.isMeta());
        QCOMPARE(shapeStr(y.sizes()), shapeStr(shape));
        QCOMPARE(int(y.dtype()), int(dtype));
    };
    check(ops::softmax(meta({2, 3}, DType::F16), 0), {2, 3}, DType::F16);
    check(ops::logSoftmax(meta({2, 3}), -1), {2, 3}, DType::F32);
    check(ops::layerNorm(meta({4, 5, 6}, DType::BF16), {5, 6}, meta({5, 6}), meta({5, 6})), {4, 5, 6}, DType::BF16);
    check(ops::rmsNorm(meta({4, 6}, DType::F64), {6}, meta({6})), {4, 6}, DType::F64);
    check(ops::groupNorm(meta({2, 6, 7}), 3, meta({6}), meta({6})), {2, 6, 7}, DType::F32);
    check(ops::batchNorm(meta({2, 6, 7}), meta({6}), meta({6}), meta({6}), meta({6})), {2, 6, 7}, DType::F32);
    check(ops::scaledDotProductAttention(meta({2, 4, 5, 8}), meta({1, 4, 7, 8}), meta({4, 7, 3}),
                                         meta({5, 7}, DType::Bool)),
          {2, 4, 5, 3}, DType::F32);
    check(ops::scaledDotProductAttention(meta({3, 4}), meta({6, 4}), meta({6, 2}), std::nullopt, true), {3, 2},
          DType::F32);
    // A mask with data next to meta q/k/v still gives a meta result.
    check(ops::scaledDotProductAttention(meta({3, 4}), meta({6, 4}), meta({6, 2}), zeros({3, 6}, DType::Bool)), {3, 2},
          DType::F32);
}

// --- errors ------------------------------------------------------------------------------------

void TestCoreNorm::errors_data()
{
    QTest::addColumn<Thunk>("call");
    QTest::addColumn<QString>("message");
    const Tensor x = zeros({2, 3, 4});
    auto row = [](const char *name, Thunk f, const char *message) {
        QTest::newRow(name) << f << QString::fromLatin1(message);
    };
    row("softmax dim", [=] { return ops::softmax(x, 3); }, "aten.softmax: dimension 3 is out of range");
    row("softmax integer", [] { return ops::softmax(zeros({2}, DType::I64), 0); },
        "aten.softmax: input must be a floating-point tensor, got i64 of shape [2]");
    row("log_softmax dim", [=] { return ops::logSoftmax(x, -4); }, "aten.log_softmax: dimension -4 is out of range");
    row("layer_norm shape", [=] { return ops::layerNorm(x, {5}); },
        "aten.layer_norm: normalized_shape [5] does not match the trailing dims of input of shape [2,3,4]");
    row("layer_norm rank", [] { return ops::layerNorm(zeros({4}), {2, 4}); },
        "aten.layer_norm: normalized_shape [2,4] does not match the trailing dims of input of shape [4]");
    row("layer_norm empty", [=] { return ops::layerNorm(x, {}); },
        "aten.layer_norm: normalized_shape must not be empty (input of shape [2,3,4])");
    row("layer_norm weight", [=] { return ops::layerNorm(x, {4}, zeros({3})); },
        "aten.layer_norm: weight of shape [3] does not match normalized_shape [4]");
    row("layer_norm bias", [=] { return ops::layerNorm(x, {3, 4}, zeros({3, 4}), zeros({4})); },
        "aten.layer_norm: bias of shape [4] does not match normalized_shape [3,4]");
    row("layer_norm integer", [] { return ops::layerNorm(zeros({2, 3}, DType::I32), {3}); },
        "aten.layer_norm: input must be a floating-point tensor, got i32 of shape [2,3]");
    row("layer_norm on meta", [] { return ops::layerNorm(meta({2, 3}), {2}); },
        "aten.layer_norm: normalized_shape [2] does not match the trailing dims of input of shape [2,3]");
    row("rms_norm shape", [=] { return ops::rmsNorm(x, {3}); },
        "aten.rms_norm: normalized_shape [3] does not match the trailing dims of input of shape [2,3,4]");
    row("rms_norm weight", [=] { return ops::rmsNorm(x, {4}, zeros({2, 4})); },
        "aten.rms_norm: weight of shape [2,4] does not match normalized_shape [4]");
    row("group_norm groups", [] { return ops::groupNorm(zeros({2, 4, 5}), 3); },
        "aten.group_norm: num_groups 3 does not divide the 4 channels of input of shape [2,4,5]");
    row("group_norm zero groups", [] { return ops::groupNorm(zeros({2, 4, 5}), 0); },
        "aten.group_norm: num_groups 0 does not divide the 4 channels");
    row("group_norm weight", [] { return ops::groupNorm(zeros({2, 4, 5}), 2, zeros({5})); },
        "aten.group_norm: weight of shape [5] does not match the 4 channels of input of shape [2,4,5]");
    row("group_norm rank", [] { return ops::groupNorm(zeros({4}), 2); },
        "aten.group_norm: expected an input of shape [N, C, *], got [4]");
    row("batch_norm stats", [] { return ops::batchNorm(zeros({2, 3, 4}), zeros({4}), ones({3})); },
        "aten.batch_norm: running_mean of shape [4] does not match the 3 channels of input of shape [2,3,4]");
    row("batch_norm var", [] { return ops::batchNorm(zeros({2, 3, 4}), zeros({3}), ones({1, 3})); },
        "aten.batch_norm: running_var of shape [1,3] does not match the 3 channels");
    row("batch_norm bias", [] { return ops::batchNorm(zeros({2, 3}), zeros({3}), ones({3}), ones({3}), ones({2})); },
        "aten.batch_norm: bias of shape [2] does not match the 3 channels of input of shape [2,3]");
    row("batch_norm rank", [] { return ops::batchNorm(zeros({3}), zeros({3}), ones({3})); },
        "aten.batch_norm: expected an input of shape [N, C, *], got [3]");
    row("sdpa embedding", [] { return ops::scaledDotProductAttention(zeros({2, 4, 8}), zeros({2, 5, 7}), zeros({2, 5, 8})); },
        "aten.scaled_dot_product_attention: query and key must have the same embedding size, got query [2,4,8], "
        "key [2,5,7] and value [2,5,8]");
    row("sdpa sequence", [] { return ops::scaledDotProductAttention(zeros({2, 4, 8}), zeros({2, 5, 8}), zeros({2, 6, 8})); },
        "aten.scaled_dot_product_attention: key and value must have the same sequence length, got query [2,4,8], "
        "key [2,5,8] and value [2,6,8]");
    row("sdpa batch", [] { return ops::scaledDotProductAttention(zeros({2, 4, 8}), zeros({3, 5, 8}), zeros({3, 5, 8})); },
        "aten.scaled_dot_product_attention: the batch dims of query [2,4,8], key [3,5,8] and value [3,5,8] cannot be "
        "broadcast together");
    row("sdpa rank", [] { return ops::scaledDotProductAttention(zeros({8}), zeros({5, 8}), zeros({5, 8})); },
        "aten.scaled_dot_product_attention: need at least 2 dims each, got query [8], key [5,8] and value [5,8]");
    row("sdpa dtype", [] {
        return ops::scaledDotProductAttention(zeros({4, 8}), zeros({5, 8}, DType::F16), zeros({5, 8}));
    }, "aten.scaled_dot_product_attention: query, key and value must have the same dtype, got f32, f16 and f32");
    row("sdpa integer", [] {
        return ops::scaledDotProductAttention(zeros({4, 8}, DType::I64), zeros({5, 8}, DType::I64), zeros({5, 8}, DType::I64));
    }, "aten.scaled_dot_product_attention: query must be a floating-point tensor, got i64 of shape [4,8]");
    row("sdpa mask shape", [] {
        return ops::scaledDotProductAttention(zeros({2, 4, 8}), zeros({2, 5, 8}), zeros({2, 5, 8}),
                                              zeros({4, 4}, DType::Bool));
    }, "aten.scaled_dot_product_attention: attn_mask of shape [4,4] does not broadcast to the scores' shape [2,4,5]");
    row("sdpa mask rank", [] {
        return ops::scaledDotProductAttention(zeros({4, 8}), zeros({5, 8}), zeros({5, 8}), zeros({2, 4, 5}));
    }, "aten.scaled_dot_product_attention: attn_mask of shape [2,4,5] does not broadcast to the scores' shape [4,5]");
    row("sdpa mask dtype", [] {
        return ops::scaledDotProductAttention(zeros({4, 8}), zeros({5, 8}), zeros({5, 8}), zeros({4, 5}, DType::I32));
    }, "aten.scaled_dot_product_attention: attn_mask must be bool or floating-point, got i32");
    row("sdpa mask and causal", [] {
        return ops::scaledDotProductAttention(zeros({4, 8}), zeros({5, 8}), zeros({5, 8}), zeros({4, 5}), true);
    }, "aten.scaled_dot_product_attention: attn_mask and is_causal cannot both be set");
    row("sdpa on meta", [] { return ops::scaledDotProductAttention(meta({4, 8}), meta({5, 7}), meta({5, 8})); },
        "aten.scaled_dot_product_attention: query and key must have the same embedding size");
    row("fused attention transposed without heads", [] {
        return callOp1("fusescope.attention", {zeros({4, 8}), zeros({5, 8}), zeros({5, 6}), Value(), 0.0, 1.0, true});
    }, "fusescope.attention: a transposed result needs a batch dim to move after the rows, got the 2-d query [4,8], "
       "key [5,8] and value [5,6]");
}

void TestCoreNorm::errors()
{
    QFETCH(Thunk, call);
    QFETCH(QString, message);
    bool thrown = false;
    try {
        call();
    } catch (const Error &e) {
        thrown = true;
        QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
    }
    QVERIFY2(thrown, qPrintable(QStringLiteral("expected an error containing: ") + message));
}

// --- decompositions: the compiler's form against the kernel -----------------------------------

void TestCoreNorm::decompositions_data()
{
    QTest::addColumn<QString>("op");
    QTest::addColumn<Args>("args");
    QTest::addColumn<QStringList>("needs");
    QTest::addColumn<double>("rtol");
    QTest::addColumn<double>("atol");
    const QStringList softmaxOps{"aten.amax", "aten.sub", "aten.exp", "aten.sum", "aten.div", "aten.log",
                                 "aten.cast"};
    const QStringList normOps{"aten.mean", "aten.sub", "aten.mul", "aten.add", "aten.rsqrt", "aten.reshape",
                              "aten.cast"};
    const QStringList attnOps{"aten.matmul", "aten.transpose", "aten.mul", "aten.add", "aten.masked_fill",
                              "aten.arange", "aten.view", "aten.lt", "aten.logical_not", "aten.all", "aten.eq",
                              "aten.where", "aten.expand", "aten.cast", "aten.amax", "aten.sum", "aten.exp",
                              "aten.div", "aten.sub"};
    const DType f32 = DType::F32, f16 = DType::F16, bf16 = DType::BF16;
    auto row = [](const char *name, const char *op, const Args &args, const QStringList &needs, double rtol,
                  double atol) { QTest::newRow(name) << QString::fromLatin1(op) << args << needs << rtol << atol; };
    row("softmax last dim", "aten.softmax", {normalInput({6, 33}, f32, 81, 3), int64_t(-1)}, softmaxOps, 1e-5, 1e-7);
    row("softmax dim 0, transposed", "aten.softmax",
        {withLayout(normalInput({6, 33}, f32, 82), "transposed"), int64_t(0)}, softmaxOps, 1e-5, 1e-7);
    row("log_softmax", "aten.log_softmax", {normalInput({4, 5, 6}, f32, 83, 3), int64_t(1)}, softmaxOps, 1e-5, 1e-6);
    row("softmax f16", "aten.softmax", {normalInput({4, 30}, f16, 84), int64_t(-1)}, softmaxOps, 2e-3, 1e-3);
    row("layer_norm affine", "aten.layer_norm",
        {normalInput({4, 5, 6}, f32, 85), IntList{5, 6}, normalInput({5, 6}, f32, 86), normalInput({5, 6}, f32, 87),
         1e-5},
        normOps, 1e-4, 1e-5);
    row("layer_norm plain", "aten.layer_norm", {normalInput({4, 10}, f32, 88), IntList{10}, Value(), Value(), 1e-3},
        normOps, 1e-4, 1e-5);
    row("layer_norm bf16", "aten.layer_norm",
        {normalInput({4, 10}, bf16, 89), IntList{10}, normalInput({10}, bf16, 90), normalInput({10}, bf16, 91), 1e-5},
        normOps, 1.6e-2, 2e-2);
    row("rms_norm default eps", "aten.rms_norm",
        {normalInput({4, 16}, f32, 92, 1e-3), IntList{16}, normalInput({16}, f32, 93), Value()}, normOps, 1e-4, 1e-5);
    row("rms_norm f16", "aten.rms_norm",
        {normalInput({4, 16}, f16, 94), IntList{16}, normalInput({16}, f16, 95), 1e-6}, normOps, 2e-3, 2e-3);
    row("group_norm affine", "aten.group_norm",
        {normalInput({2, 6, 3, 3}, f32, 96), int64_t(3), normalInput({6}, f32, 97), normalInput({6}, f32, 98), 1e-5},
        normOps, 1e-4, 1e-5);
    row("group_norm plain", "aten.group_norm", {normalInput({3, 4}, f32, 99), int64_t(2), Value(), Value(), 1e-5},
        normOps, 1e-4, 1e-5);
    row("batch_norm affine", "aten.batch_norm",
        {normalInput({2, 3, 4, 4}, f32, 100), normalInput({3}, f32, 101), positive({3}, f32, 102),
         normalInput({3}, f32, 103), normalInput({3}, f32, 104), 1e-5},
        normOps, 1e-5, 1e-6);
    row("batch_norm [N, C]", "aten.batch_norm",
        {normalInput({5, 3}, f32, 105), normalInput({3}, f32, 106), positive({3}, f32, 107), Value(), Value(), 1e-5},
        normOps, 1e-5, 1e-6);
    row("sdpa plain", "aten.scaled_dot_product_attention",
        {normalInput({2, 3, 5, 8}, f32, 108), normalInput({2, 3, 7, 8}, f32, 109), normalInput({2, 3, 7, 4}, f32, 110),
         Value(), false, Value()},
        attnOps, 1e-4, 1e-6);
    row("sdpa causal, L != S", "aten.scaled_dot_product_attention",
        {normalInput({2, 6, 8}, f32, 111), normalInput({2, 4, 8}, f32, 112), normalInput({2, 4, 4}, f32, 113), Value(),
         true, 0.5},
        attnOps, 1e-4, 1e-6);
    Tensor keep = boolMask({2, 5, 7}, 114);
    ops::copy_(keep.select(0, 1).select(0, 2), zeros({7}, DType::Bool)); // a fully masked row
    row("sdpa bool mask", "aten.scaled_dot_product_attention",
        {normalInput({2, 5, 8}, f32, 115), normalInput({2, 7, 8}, f32, 116), normalInput({2, 7, 4}, f32, 117), keep,
         false, Value()},
        attnOps, 1e-4, 1e-6);
    row("sdpa float mask", "aten.scaled_dot_product_attention",
        {normalInput({2, 5, 8}, f32, 118), normalInput({2, 7, 8}, f32, 119), normalInput({2, 7, 4}, f32, 120),
         floatMask({5, 7}, f32, 121), false, Value()},
        attnOps, 1e-4, 1e-6);
    row("sdpa mask over v's batch", "aten.scaled_dot_product_attention",
        {normalInput({5, 8}, f32, 122), normalInput({7, 8}, f32, 123), normalInput({3, 7, 4}, f32, 124),
         boolMask({3, 5, 7}, 125), false, Value()},
        attnOps, 1e-4, 1e-6);
    row("sdpa empty embedding", "aten.scaled_dot_product_attention",
        {zeros({2, 3, 0}), zeros({2, 4, 0}), normalInput({2, 4, 5}, f32, 129), Value(), false, Value()}, attnOps, 1e-5,
        1e-6);
    row("sdpa f16", "aten.scaled_dot_product_attention",
        {normalInput({2, 5, 8}, f16, 126), normalInput({2, 7, 8}, f16, 127), normalInput({2, 7, 4}, f16, 128), Value(),
         true, Value()},
        attnOps, 2e-3, 2e-3);
}

void TestCoreNorm::decompositions()
{
    QFETCH(QString, op);
    QFETCH(Args, args);
    QFETCH(QStringList, needs);
    QFETCH(double, rtol);
    QFETCH(double, atol);
    const QString missing = missingOp(needs);
    QVERIFY2(missing.isEmpty(), qPrintable(missing + QStringLiteral(" is not registered; the decomposition of ") + op
                                           + QStringLiteral(" needs it")));
    const OpDef &def = OpRegistry::instance().get(op.toStdString());
    QVERIFY(def.decompose);
    QVERIFY(def.kind == OpKind::Composite);
    const Tensor kernel = callOp(def, args).front();
    const Tensor decomposed = def.decompose(args).front();
    QCOMPARE(int(decomposed.dtype()), int(kernel.dtype()));
    FS_COMPARE_VALUES(decomposed, kernel.sizes(), kernel.toDoubleVector(), rtol, atol);

    // The compiler decomposes captured (meta) graphs: shapes must agree there too.
    Args metaArgs = args;
    for (Value &v : metaArgs) {
        if (v.isTensor())
            v = Value(meta(v.toTensor().sizes(), v.toTensor().dtype()));
    }
    const Tensor metaOut = def.decompose(metaArgs).front();
    QVERIFY(metaOut.isMeta());
    QCOMPARE(shapeStr(metaOut.sizes()), shapeStr(kernel.sizes()));
    QCOMPARE(int(metaOut.dtype()), int(kernel.dtype()));
}

QTEST_GUILESS_MAIN(TestCoreNorm)
#include "tst_core_norm.moc"
