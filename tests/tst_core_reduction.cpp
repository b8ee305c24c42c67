// Every reduction op against plain f64 loops over the same values, across
// dims, keepdim, layouts, dtypes, 0-d and zero-size tensors, NaN, ties,
// meta tensors and error messages.
#include "optest.h"

#include "core/ops/registry.h"

#include <cmath>
#include <limits>

using namespace fusescope;
using namespace fusescope::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kNoDim = std::numeric_limits<int64_t>::min(); // dim=None in data rows

using Groups = std::vector<std::vector<double>>;

// Which dims a dims list reduces (an empty list: all of them).
std::vector<bool> reducedMask(const Shape &shape, const Shape &dims)
{
    std::vector<bool> mask(shape.size(), dims.empty());
    const auto rank = static_cast<int64_t>(shape.size());
    for (int64_t d : dims) {
        if (rank > 0)
            mask[static_cast<size_t>(d < 0 ? d + rank : d)] = true;
    }
    return mask;
}

Shape reducedShape(const Shape &shape, const std::vector<bool> &mask, bool keepdim)
{
    Shape out;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (!mask[d])
            out.push_back(shape[d]);
        else if (keepdim)
            out.push_back(1);
    }
    return out;
}

// The values that reduce into each output, each group in row-major order
// (so a position in a group is the index argmax reports).
Groups groupsOf(const Tensor &x, const std::vector<bool> &mask)
{
    const std::vector<double> v = x.toDoubleVector();
    const Shape &shape = x.sizes();
    int64_t numOut = 1;
    for (size_t d = 0; d < shape.size(); ++d)
        numOut *= mask[d] ? 1 : shape[d];
    Groups groups(static_cast<size_t>(numOut));
    Shape index(shape.size(), 0);
    for (double value : v) {
        int64_t out = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
            if (!mask[d])
                out = out * shape[d] + index[d];
        }
        groups[static_cast<size_t>(out)].push_back(value);
        for (size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < shape[d])
                break;
            index[d] = 0;
        }
    }
    return groups;
}

double refMax(const std::vector<double> &g, bool isMax)
{
    double m = isMax ? -kInf : kInf;
    for (double v : g) {
        if (std::isnan(v))
            return kNaN;
        m = isMax ? std::max(m, v) : std::min(m, v);
    }
    return m;
}

// First index of the max (min); the first NaN wins.
int64_t refArg(const std::vector<double> &g, bool isMax)
{
    int64_t best = 0;
    for (size_t i = 0; i < g.size(); ++i) {
        if (std::isnan(g[i]))
            return static_cast<int64_t>(i);
        if (isMax ? g[i] > g[static_cast<size_t>(best)] : g[i] < g[static_cast<size_t>(best)])
            best = static_cast<int64_t>(i);
    }
    return best;
}

double refVar(const std::vector<double> &g, double correction)
{
    double mean = 0;
    for (double v : g)
        mean += v;
    mean /= static_cast<double>(g.size());
    double ss = 0;
    for (double v : g)
        ss += (v - mean) * (v - mean);
    return ss / std::max(0.0, static_cast<double>(g.size()) - correction);
}

double refLogsumexp(const std::vector<double> &g)
{
    const double m = refMax(g, true);
    if (g.empty() || std::isinf(m) || std::isnan(m))
        return m;
    double s = 0;
    for (double v : g)
        s += std::exp(v - m);
    return m + std::log(s);
}

double refReduce(const QString &op, const std::vector<double> &g)
{
    double sum = 0, prod = 1;
    bool all = true, any = false;
    for (double v : g) {
        sum += v;
        prod *= v;
        all = all && v != 0;
        any = any || v != 0;
    }
    if (op == QLatin1String("sum"))
        return sum;
    if (op == QLatin1String("prod"))
        return prod;
    if (op == QLatin1String("mean"))
        return sum / static_cast<double>(g.size());
    if (op == QLatin1String("amax") || op == QLatin1String("max"))
        return refMax(g, true);
    if (op == QLatin1String("amin") || op == QLatin1String("min"))
        return refMax(g, false);
    if (op == QLatin1String("var"))
        return refVar(g, 1);
    if (op == QLatin1String("std"))
        return std::sqrt(refVar(g, 1));
    if (op == QLatin1String("logsumexp"))
        return refLogsumexp(g);
    if (op == QLatin1String("all"))
        return all;
    if (op == QLatin1String("any"))
        return any;
    qFatal("no reference for %s", qPrintable(op));
}

Tensor callReduce(const QString &op, const Tensor &x, const Shape &dims, bool keepdim)
{
    if (op == QLatin1String("sum"))
        return ops::sum(x, dims, keepdim);
    if (op == QLatin1String("prod"))
        return ops::prod(x, dims, keepdim);
    if (op == QLatin1String("mean"))
        return ops::mean(x, dims, keepdim);
    if (op == QLatin1String("amax"))
        return ops::amax(x, dims, keepdim);
    if (op == QLatin1String("amin"))
        return ops::amin(x, dims, keepdim);
    if (op == QLatin1String("max"))
        return ops::max(x);
    if (op == QLatin1String("min"))
        return ops::min(x);
    if (op == QLatin1String("var"))
        return ops::var(x, dims, 1, keepdim);
    if (op == QLatin1String("std"))
        return ops::stdDev(x, dims, 1, keepdim);
    if (op == QLatin1String("logsumexp"))
        return ops::logsumexp(x, dims, keepdim);
    if (op == QLatin1String("all"))
        return ops::all(x, dims, keepdim);
    return ops::any(x, dims, keepdim);
}

DType expectedDType(const QString &op, DType in)
{
    if (op == QLatin1String("sum") || op == QLatin1String("prod"))
        return isFloating(in) ? in : DType::I64;
    if (op == QLatin1String("logsumexp"))
        return toFloating(in);
    if (op == QLatin1String("all") || op == QLatin1String("any"))
        return DType::Bool;
    return in;
}

bool floatOnly(const QString &op)
{
    return op == QLatin1String("mean") || op == QLatin1String("var") || op == QLatin1String("std");
}

// Values suited to the op, exactly representable in dtype: products stay
// near 1, all/any see mostly true/mostly false, arg ops see many ties.
Tensor inputFor(const QString &op, const Shape &shape, DType dtype, uint64_t seed)
{
    Generator gen(seed);
    std::vector<double> v(static_cast<size_t>(numelOf(shape)));
    const bool ints = !isFloating(dtype);
    for (double &e : v) {
        const double u = gen.uniform();
        if (dtype == DType::Bool || op == QLatin1String("all") || op == QLatin1String("any")) {
            const double pTrue = op == QLatin1String("all") ? 0.97 : op == QLatin1String("any") ? 0.03 : 0.5;
            e = u < pTrue ? (ints ? 1 : 0.5 + u) : 0;
        } else if (op == QLatin1String("prod")) {
            e = ints ? (u < 0.5 ? -1 : 1) : 0.9 + 0.2 * u;
        } else if (op.startsWith(QLatin1String("arg")) || op.endsWith(QLatin1String(".dim"))) {
            e = std::floor(u * 5) - 2;
        } else {
            e = ints ? std::floor(u * 7) - 3 : gen.normal();
        }
    }
    return fromVector(v, shape, dtype);
}

// Errors of a long f32 sum grow with the count; a wrong element is off by O(1).
double atolFor(DType t, int64_t count)
{
    return isFloating(t) ? 4 * rtolFor(t) * (1 + std::sqrt(static_cast<double>(count))) : 0;
}

// max/min without a dim reduce everything, whatever `dims` says.
void checkReduction(const QString &op, const Tensor &x, const Shape &dims, bool keepdim)
{
    const bool global = op == QLatin1String("max") || op == QLatin1String("min");
    const std::vector<bool> mask = reducedMask(x.sizes(), global ? Shape{} : dims);
    const Groups groups = groupsOf(x, mask);
    std::vector<double> expected;
    for (const auto &g : groups)
        expected.push_back(refReduce(op, g));
    const int64_t count = x.numel() / std::max<int64_t>(1, static_cast<int64_t>(groups.size()));
    const Tensor y = callReduce(op, x, dims, keepdim);
    QCOMPARE(dtypeName(y.dtype()), dtypeName(expectedDType(op, x.dtype())));
    const DType t = y.dtype();
    const double rtol = isFloating(t) ? rtolFor(t) : 0;
    const Shape shape = global ? Shape{} : reducedShape(x.sizes(), mask, keepdim);
    FS_COMPARE_VALUES(y, shape, expected, rtol, atolFor(t, count));
}

struct ShapeCase {
    const char *name;
    Shape shape;
    Shape dims;
    bool big; // skipped for the less common dtypes to keep the test quick
};

const std::vector<ShapeCase> &shapeCases()
{
    static const std::vector<ShapeCase> cases = {
        {"all dims", {3, 4, 5}, {}, false},
        {"dim 1", {3, 4, 5}, {1}, false},
        {"dim -1", {3, 4, 5}, {-1}, false},
        {"dim 0", {3, 4, 5}, {0}, false},
        {"dims 0,2", {3, 4, 5}, {0, 2}, false},
        {"dims -1,-2", {3, 4, 5}, {-1, -2}, false},
        {"size-1 dim", {4, 1, 3}, {1}, false},
        {"0-d", {}, {}, false},
        {"0-d dim 0", {}, {0}, false},
        {"long rows", {7, 1100}, {1}, false},
        {"long columns", {300, 1100}, {0}, true},
        {"split reduction", {70000}, {}, true},
        {"split rows", {5000, 8}, {0}, true},
    };
    return cases;
}

const QStringList &reduceOps()
{
    static const QStringList list = {QStringLiteral("sum"), QStringLiteral("prod"), QStringLiteral("mean"),
                                     QStringLiteral("amax"), QStringLiteral("amin"), QStringLiteral("var"),
                                     QStringLiteral("std"), QStringLiteral("logsumexp"), QStringLiteral("all"),
                                     QStringLiteral("any")};
    return list;
}

const QStringList &layouts()
{
    static const QStringList list = {QStringLiteral("transposed"), QStringLiteral("sliced"), QStringLiteral("offset")};
    return list;
}

} // namespace

class TestReduction : public QObject
{
    Q_OBJECT

private slots:
    void reduce_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<Shape>("dims");
        QTest::addColumn<bool>("keepdim");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("layout");
        const QString contiguous = QStringLiteral("contiguous");
        for (const QString &op : reduceOps()) {
            for (const ShapeCase &c : shapeCases()) {
                const QString base = op + QLatin1Char(' ') + QLatin1String(c.name);
                for (bool keep : {false, true})
                    QTest::newRow(qPrintable(base + (keep ? " keepdim" : "")))
                        << op << c.shape << c.dims << keep << int(DType::F32) << contiguous;
                for (const QString &layout : layouts())
                    QTest::newRow(qPrintable(base + QLatin1Char(' ') + layout))
                        << op << c.shape << c.dims << false << int(DType::F32) << layout;
                for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool}) {
                    if ((c.big && t != DType::F64 && t != DType::I32) || (floatOnly(op) && !isFloating(t)))
                        continue;
                    QTest::newRow(qPrintable(base + QLatin1Char(' ') + QLatin1String(dtypeName(t))))
                        << op << c.shape << c.dims << false << int(t) << QStringLiteral("transposed");
                }
            }
        }
    }

    void reduce()
    {
        QFETCH(QString, op);
        QFETCH(Shape, shape);
        QFETCH(Shape, dims);
        QFETCH(bool, keepdim);
        QFETCH(int, dtype);
        QFETCH(QString, layout);
        const Tensor x = withLayout(inputFor(op, shape, DType(dtype), 7), layout);
        checkReduction(op, x, dims, keepdim);
    }

    // NaN propagates; infinities follow IEEE arithmetic (logsumexp of all
    // -inf is -inf, not NaN).
    void specialValues_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<Shape>("dims");
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("dtype");
        const QStringList ops = {QStringLiteral("sum"),  QStringLiteral("mean"), QStringLiteral("amax"),
                                 QStringLiteral("amin"), QStringLiteral("max"),  QStringLiteral("min"),
                                 QStringLiteral("var"),  QStringLiteral("logsumexp"), QStringLiteral("any")};
        for (const QString &op : ops) {
            for (const auto &[name, dims] : {std::pair{"inner", Shape{1}}, std::pair{"outer", Shape{0}},
                                             std::pair{"all", Shape{}}}) {
                for (const QString &layout : {QStringLiteral("contiguous"), QStringLiteral("transposed")}) {
                    for (DType t : {DType::F32, DType::F16}) {
                        QTest::newRow(qPrintable(QStringLiteral("%1 %2 %3 %4").arg(op, QLatin1String(name), layout,
                                                                                  QLatin1String(dtypeName(t)))))
                            << op << dims << layout << int(t);
                    }
                }
            }
        }
    }

    void specialValues()
    {
        QFETCH(QString, op);
        QFETCH(Shape, dims);
        QFETCH(QString, layout);
        QFETCH(int, dtype);
        // Row 1: a NaN; row 3: all -inf; row 4: +inf; row 5: -inf and a NaN.
        Generator gen(3);
        std::vector<double> v = randn({6, 40}, gen, DType::F64).toDoubleVector();
        v[1 * 40 + 7] = kNaN;
        for (int i = 0; i < 40; ++i)
            v[static_cast<size_t>(3 * 40 + i)] = -kInf;
        v[4 * 40 + 33] = kInf;
        v[5 * 40 + 2] = -kInf;
        v[5 * 40 + 39] = kNaN;
        const Tensor x = withLayout(fromVector(v, {6, 40}, DType(dtype)), layout);
        checkReduction(op, x, dims, false);
    }

    void argReduce_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<qint64>("dim");
        QTest::addColumn<bool>("keepdim");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("layout");
        const std::vector<std::tuple<const char *, Shape, int64_t>> cases = {
            {"dim 1", {3, 4, 5}, 1},         {"dim -1", {3, 4, 5}, -1},       {"dim 0", {3, 4, 5}, 0},
            {"flattened", {3, 4, 5}, kNoDim}, {"0-d", {}, kNoDim},             {"0-d dim 0", {}, 0},
            {"long rows", {7, 1100}, 1},      {"long columns", {300, 1100}, 0}, {"split", {70000}, kNoDim},
            {"split rows", {5000, 8}, 0},
        };
        for (const char *op : {"argmax", "argmin", "max.dim", "min.dim"}) {
            for (const auto &[name, shape, dim] : cases) {
                if (dim == kNoDim && QLatin1String(op).endsWith(QLatin1String(".dim")))
                    continue;
                const QString base = QStringLiteral("%1 %2").arg(QLatin1String(op), QLatin1String(name));
                for (bool keep : {false, true})
                    QTest::newRow(qPrintable(base + (keep ? " keepdim" : "")))
                        << QString::fromLatin1(op) << shape << qint64(dim) << keep << int(DType::F32)
                        << QStringLiteral("contiguous");
                for (const QString &layout : layouts())
                    QTest::newRow(qPrintable(base + QLatin1Char(' ') + layout))
                        << QString::fromLatin1(op) << shape << qint64(dim) << false << int(DType::F32) << layout;
                for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool})
                    QTest::newRow(qPrintable(base + QLatin1Char(' ') + QLatin1String(dtypeName(t))))
                        << QString::fromLatin1(op) << shape << qint64(dim) << false << int(t)
                        << QStringLiteral("transposed");
            }
        }
    }

    // The inputs are small integers: many ties, and the first index must win.
    void argReduce()
    {
        QFETCH(QString, op);
        QFETCH(Shape, shape);
        QFETCH(qint64, dim);
        QFETCH(bool, keepdim);
        QFETCH(int, dtype);
        QFETCH(QString, layout);
        const Tensor x = withLayout(inputFor(op, shape, DType(dtype), 11), layout);
        const bool isMax = op.contains(QLatin1String("max"));
        const Shape dims = dim == kNoDim ? Shape{} : Shape{dim};
        const std::vector<bool> mask = reducedMask(shape, dims);
        const Groups groups = groupsOf(x, mask);
        std::vector<double> indices, values;
        for (const auto &g : groups) {
            const int64_t i = refArg(g, isMax);
            indices.push_back(static_cast<double>(i));
            values.push_back(g[static_cast<size_t>(i)]);
        }
        const Shape outShape = reducedShape(shape, mask, keepdim);
        if (op.startsWith(QLatin1String("arg"))) {
            const std::optional<int64_t> d = dim == kNoDim ? std::nullopt : std::optional<int64_t>(dim);
            const Tensor y = isMax ? ops::argmax(x, d, keepdim) : ops::argmin(x, d, keepdim);
            QCOMPARE(y.dtype(), DType::I64);
            FS_COMPARE_VALUES(y, outShape, indices, 0, 0);
            return;
        }
        const auto [v, i] = isMax ? ops::max(x, dim, keepdim) : ops::min(x, dim, keepdim);
        QCOMPARE(v.dtype(), x.dtype());
        QCOMPARE(i.dtype(), DType::I64);
        FS_COMPARE_VALUES(v, outShape, values, 0, 0);
        FS_COMPARE_VALUES(i, outShape, indices, 0, 0);
    }

    void argNaN_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::newRow("contiguous") << QStringLiteral("contiguous");
        QTest::newRow("transposed") << QStringLiteral("transposed");
    }

    // NaN counts as the max and as the min; the first NaN wins.
    void argNaN()
    {
        QFETCH(QString, layout);
        const Tensor x = withLayout(fromVector({1, kNaN, 5, kNaN, 9, -kInf, 2, 3}, {2, 4}), layout);
        FS_COMPARE_VALUES(ops::argmax(x, 1), Shape{2}, (std::vector<double>{1, 0}), 0, 0);
        FS_COMPARE_VALUES(ops::argmin(x, 1), Shape{2}, (std::vector<double>{1, 1}), 0, 0);
        FS_COMPARE_VALUES(ops::argmax(x, 0), Shape{4}, (std::vector<double>{1, 0, 0, 0}), 0, 0);
        FS_COMPARE_VALUES(ops::argmax(x), Shape{}, std::vector<double>{1}, 0, 0);
        const auto [v, i] = ops::max(x, 1);
        FS_COMPARE_VALUES(v, Shape{2}, (std::vector<double>{kNaN, 9}), 0, 0);
        FS_COMPARE_VALUES(i, Shape{2}, (std::vector<double>{1, 0}), 0, 0);
        const auto [mv, mi] = ops::min(x, 0);
        FS_COMPARE_VALUES(mv, Shape{4}, (std::vector<double>{1, kNaN, 2, kNaN}), 0, 0);
        FS_COMPARE_VALUES(mi, Shape{4}, (std::vector<double>{0, 0, 1, 0}), 0, 0);
        // All -inf: the max is -inf at index 0, not a stand-in for "nothing seen".
        const Tensor low = withLayout(full({3, 40}, -kInf), layout);
        FS_COMPARE_VALUES(ops::amax(low, {1}), Shape{3}, (std::vector<double>(3, -kInf)), 0, 0);
        FS_COMPARE_VALUES(ops::argmax(low, 1), Shape{3}, (std::vector<double>(3, 0)), 0, 0);
        FS_COMPARE_VALUES(ops::argmin(ops::neg(low), 0), Shape{40}, (std::vector<double>(40, 0)), 0, 0);
    }

    // Expanded (stride-0) inputs reduce like the materialized tensor.
    void broadcastInput()
    {
        const Tensor row = fromVector({1, 2, 3, 4, 5}, {1, 5});
        const Tensor x = row.expand({4, 5});
        FS_COMPARE_VALUES(ops::sum(x, {0}), Shape{5}, (std::vector<double>{4, 8, 12, 16, 20}), 0, 0);
        FS_COMPARE_VALUES(ops::sum(x), Shape{}, std::vector<double>{60}, 0, 0);
        FS_COMPARE_VALUES(ops::amax(x, {1}), Shape{4}, (std::vector<double>{5, 5, 5, 5}), 0, 0);
        FS_COMPARE_VALUES(ops::argmax(x, 0), Shape{5}, (std::vector<double>{0, 0, 0, 0, 0}), 0, 0);
        FS_COMPARE_VALUES(ops::var(x, {0}), Shape{5}, (std::vector<double>{0, 0, 0, 0, 0}), 0, 0);
        FS_COMPARE_VALUES(ops::cumsum(x, 0), (Shape{4, 5}),
                          (std::vector<double>{1, 2, 3, 4, 5, 2, 4, 6, 8, 10, 3, 6, 9, 12, 15, 4, 8, 12, 16, 20}), 0,
                          0);
    }

    // Reductions over nothing give the identity; ops without one refuse.
    void zeroSize()
    {
        const Tensor x = zeros({0, 3});
        const std::vector<double> z3{0, 0, 0};
        FS_COMPARE_VALUES(ops::sum(x, {0}), Shape{3}, z3, 0, 0);
        FS_COMPARE_VALUES(ops::sum(zeros({0, 3}, DType::I32), {0}), Shape{3}, z3, 0, 0);
        FS_COMPARE_VALUES(ops::sum(x), Shape{}, std::vector<double>{0}, 0, 0);
        FS_COMPARE_VALUES(ops::prod(x, {0}), Shape{3}, (std::vector<double>{1, 1, 1}), 0, 0);
        FS_COMPARE_VALUES(ops::mean(x, {0}, true), (Shape{1, 3}), (std::vector<double>{kNaN, kNaN, kNaN}), 0, 0);
        FS_COMPARE_VALUES(ops::var(x, {0}), Shape{3}, (std::vector<double>{kNaN, kNaN, kNaN}), 0, 0);
        FS_COMPARE_VALUES(ops::logsumexp(x, {0}), Shape{3}, (std::vector<double>{-kInf, -kInf, -kInf}), 0, 0);
        FS_COMPARE_VALUES(ops::all(x, {0}), Shape{3}, (std::vector<double>{1, 1, 1}), 0, 0);
        FS_COMPARE_VALUES(ops::any(x, {0}), Shape{3}, z3, 0, 0);
        FS_COMPARE_VALUES(ops::cumsum(x, 0), (Shape{0, 3}), std::vector<double>{}, 0, 0);
        // Reducing the non-empty dim gives an empty result, even without an identity.
        FS_COMPARE_VALUES(ops::amax(x, {1}), Shape{0}, std::vector<double>{}, 0, 0);
        FS_COMPARE_VALUES(ops::argmax(x, 1), Shape{0}, std::vector<double>{}, 0, 0);
        FS_COMPARE_VALUES(ops::sum(x, {1}), Shape{0}, std::vector<double>{}, 0, 0);
        FS_EXPECT_ERROR(ops::amax(x, {0}),
                        "aten.amax: cannot reduce over a zero-size dimension of a tensor of shape [0,3]");
        FS_EXPECT_ERROR(ops::amin(x), "aten.amin: cannot reduce over a zero-size dimension");
        FS_EXPECT_ERROR(ops::max(x), "aten.max: cannot reduce over a zero-size dimension");
        FS_EXPECT_ERROR(ops::min(x, 0), "aten.min.dim: cannot reduce over a zero-size dimension");
        FS_EXPECT_ERROR(ops::argmax(x), "aten.argmax: cannot reduce over a zero-size dimension");
        FS_EXPECT_ERROR(ops::argmin(x, 0), "aten.argmin: cannot reduce over a zero-size dimension");
    }

    // The kernels widen f16 with their own inline conversion: every bit
    // pattern (subnormals, infinities, NaN) must read as the reference
    // conversion of Half reads it.
    void halfBitPatterns()
    {
        const Tensor x = Tensor::empty({65536, 1}, DType::F16);
        Half *h = x.data<Half>();
        for (int i = 0; i < 65536; ++i)
            h[i].bits = static_cast<uint16_t>(i);
        const std::vector<double> expected = x.toDoubleVector();
        FS_COMPARE_VALUES(ops::amax(x, {1}), Shape{65536}, expected, 0, 0);
        FS_COMPARE_VALUES(ops::sum(x, {1}), Shape{65536}, expected, 0, 0);
        FS_COMPARE_VALUES(ops::amin(x.view({1, 65536}), {0}), Shape{65536}, expected, 0, 0); // row path
    }

    void dtypes()
    {
        const Tensor i = fromVector({1, 2, 3, 4}, {2, 2}, DType::I32);
        QCOMPARE(ops::sum(i).dtype(), DType::I64);
        QCOMPARE(ops::prod(i).dtype(), DType::I64);
        QCOMPARE(ops::sum(fromVector({1, 0, 1}, {3}, DType::Bool)).dtype(), DType::I64);
        FS_COMPARE_VALUES(ops::sum(fromVector({1, 0, 1}, {3}, DType::Bool)), Shape{}, std::vector<double>{2}, 0, 0);
        QCOMPARE(ops::sum(i, {}, false, DType::F64).dtype(), DType::F64);
        QCOMPARE(ops::sum(i, {}, false, DType::I32).dtype(), DType::I32);
        FS_COMPARE_VALUES(ops::sum(i, {0}, false, DType::I32), Shape{2}, (std::vector<double>{4, 6}), 0, 0);
        // dtype= converts before summing: 0.75 + 0.75 in i64 is 0.
        const Tensor quarters = fromVector({0.75, 0.75}, {2});
        FS_COMPARE_VALUES(ops::sum(quarters, {}, false, DType::I64), Shape{}, std::vector<double>{0}, 0, 0);
        QCOMPARE(callOp1("aten.mean", {i, IntList{}, false, DType::F64}).dtype(), DType::F64);
        FS_COMPARE_VALUES(callOp1("aten.mean", {i, IntList{}, false, DType::F32}), Shape{}, std::vector<double>{2.5}, 0,
                          0);
        QCOMPARE(ops::logsumexp(i, {1}).dtype(), DType::F32);
        QCOMPARE(ops::amax(i).dtype(), DType::I32);
        QCOMPARE(ops::all(fromVector({0.5, 2}, {2})).dtype(), DType::Bool);
        QCOMPARE(ops::cumsum(i, 0).dtype(), DType::I64);
        QCOMPARE(ops::cumsum(fromVector({1, 2}, {2}, DType::F16), 0).dtype(), DType::F16);
        QCOMPARE(ops::cumsum(i, 0, DType::F32).dtype(), DType::F32);
        // Integer sums wrap instead of overflowing into undefined behaviour.
        const Tensor big = full({2}, 4611686018427387904.0, DType::I64); // 2^62
        QCOMPARE(ops::sum(big).item<double>(), -9223372036854775808.0);
    }

    void cumsum_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<qint64>("dim");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("layout");
        const std::vector<std::tuple<const char *, Shape, int64_t>> cases = {
            {"last", {3, 4, 5}, 2},  {"middle", {3, 4, 5}, 1},  {"first", {3, 4, 5}, 0},    {"negative", {3, 4, 5}, -2},
            {"0-d", {}, 0},          {"zero-size", {0, 4}, 1}, {"long", {2, 3000}, 1},      {"wide", {50, 1100}, 0},
        };
        for (const auto &[name, shape, dim] : cases) {
            for (const QString &layout : {QStringLiteral("contiguous"), QStringLiteral("transposed"),
                                          QStringLiteral("sliced"), QStringLiteral("offset")})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(name), layout)))
                    << shape << qint64(dim) << int(DType::F32) << layout;
            for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(name), QLatin1String(dtypeName(t)))))
                    << shape << qint64(dim) << int(t) << QStringLiteral("contiguous");
        }
    }

    void cumsum()
    {
        QFETCH(Shape, shape);
        QFETCH(qint64, dim);
        QFETCH(int, dtype);
        QFETCH(QString, layout);
        const Tensor x = withLayout(inputFor(QStringLiteral("sum"), shape, DType(dtype), 5), layout);
        const std::vector<double> v = x.toDoubleVector();
        const auto rank = static_cast<int64_t>(shape.size());
        const int64_t d = dim < 0 ? dim + rank : dim;
        int64_t n = rank == 0 ? 1 : shape[static_cast<size_t>(d)], inner = 1;
        for (int64_t k = d + 1; k < rank; ++k)
            inner *= shape[static_cast<size_t>(k)];
        std::vector<double> expected(v.size());
        for (size_t e = 0; e < v.size(); ++e) {
            const auto pos = static_cast<int64_t>(e) / inner % n;
            expected[e] = v[e] + (pos > 0 ? expected[e - static_cast<size_t>(inner)] : 0);
        }
        const Tensor y = ops::cumsum(x, dim);
        const DType t = isFloating(DType(dtype)) ? DType(dtype) : DType::I64;
        QCOMPARE(y.dtype(), t);
        FS_COMPARE_VALUES(y, shape, expected, isFloating(t) ? rtolFor(t) : 0, atolFor(t, n));
    }

    // Long f32 reductions keep partial sums: a naive running f32 sum of
    // 2^22 copies of 0.1 is off by about 1 %.
    void accuracy()
    {
        const Tensor x = full({4096, 1024}, 0.1);
        const double expectedAll = 4096.0 * 1024.0 * static_cast<double>(0.1f);
        QVERIFY(closeTo(ops::sum(x).item<double>(), expectedAll, 1e-5, 0));
        const std::vector<double> cols = ops::sum(x, {0}).toDoubleVector();
        const std::vector<double> rows = ops::mean(x, {1}).toDoubleVector();
        for (double c : cols)
            QVERIFY2(closeTo(c, 4096 * static_cast<double>(0.1f), 1e-6, 0), qPrintable(QString::number(c, 'g', 10)));
        for (double r : rows)
            QVERIFY2(closeTo(r, static_cast<double>(0.1f), 1e-6, 0), qPrintable(QString::number(r, 'g', 10)));
        const Tensor h = full({100000}, 0.1, DType::F16);
        QVERIFY(closeTo(ops::sum(h, {}, false, DType::F32).item<double>(), 1e5 * 0.0999755859375, 1e-5, 0));
        // Variance of values with a large mean: a one-pass formula cancels.
        Generator gen(1);
        const Tensor shifted = ops::add(rand({50000}, gen), 1000.0);
        const Groups g = groupsOf(shifted, {true});
        QVERIFY(closeTo(ops::var(shifted).item<double>(), refVar(g[0], 1), 1e-3, 0));
    }

    // The benchmark shapes: the fast paths give the same numbers as f64 loops.
    void benchmarkShapes_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<Shape>("dims");
        for (const char *op : {"sum", "mean", "amax"}) {
            QTest::newRow(qPrintable(QStringLiteral("%1 [8192,512] dim -1").arg(QLatin1String(op))))
                << QString::fromLatin1(op) << Shape{8192, 512} << Shape{-1};
            QTest::newRow(qPrintable(QStringLiteral("%1 [4096,1024] dim 0").arg(QLatin1String(op))))
                << QString::fromLatin1(op) << Shape{4096, 1024} << Shape{0};
        }
    }

    void benchmarkShapes()
    {
        QFETCH(QString, op);
        QFETCH(Shape, shape);
        QFETCH(Shape, dims);
        Generator gen(2);
        checkReduction(op, randn(shape, gen), dims, false);
    }

    void meta_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<Shape>("dims");
        QTest::addColumn<bool>("keepdim");
        QTest::addColumn<Shape>("expectedShape");
        for (const QString &op : reduceOps()) {
            QTest::newRow(qPrintable(op + " dims 0,2")) << op << Shape{0, 2} << false << Shape{4};
            QTest::newRow(qPrintable(op + " keepdim")) << op << Shape{-1} << true << Shape{2, 4, 1};
            QTest::newRow(qPrintable(op + " all")) << op << Shape{} << false << Shape{};
        }
    }

    // Meta tensors run only the shape rules: shape and dtype, no data.
    void meta()
    {
        QFETCH(QString, op);
        QFETCH(Shape, dims);
        QFETCH(bool, keepdim);
        QFETCH(Shape, expectedShape);
        for (DType t : {DType::F32, DType::F16, DType::I32}) {
            if (floatOnly(op) && !isFloating(t))
                continue;
            const Tensor y = callReduce(op, test::meta({2, 4, 3}, t), dims, keepdim);
            QVERIFY(y.isMeta());
            QCOMPARE(y.sizes(), expectedShape);
            QCOMPARE(dtypeName(y.dtype()), dtypeName(expectedDType(op, t)));
        }
    }

    void metaOthers()
    {
        const Tensor x = test::meta({2, 4, 3}, DType::BF16);
        const auto [v, i] = ops::max(x, 1, true);
        QVERIFY(v.isMeta() && i.isMeta());
        QCOMPARE(v.sizes(), (Shape{2, 1, 3}));
        QCOMPARE(v.dtype(), DType::BF16);
        QCOMPARE(i.dtype(), DType::I64);
        QCOMPARE(ops::argmin(x).sizes(), Shape{});
        QCOMPARE(ops::argmax(x, std::nullopt, true).sizes(), (Shape{1, 1, 1}));
        QCOMPARE(ops::argmax(x, -1).sizes(), (Shape{2, 4}));
        QCOMPARE(ops::max(x).sizes(), Shape{});
        QCOMPARE(ops::cumsum(test::meta({2, 4}, DType::Bool), 1).dtype(), DType::I64);
        QCOMPARE(ops::cumsum(test::meta({2, 4}), 1).sizes(), (Shape{2, 4}));
        QCOMPARE(ops::sum(test::meta({0, 5}), {0}).sizes(), Shape{5});
        FS_EXPECT_ERROR(ops::amax(test::meta({0, 5}), {0}), "aten.amax: cannot reduce over a zero-size dimension");
        FS_EXPECT_ERROR(ops::mean(test::meta({2}, DType::I64)), "aten.mean: expected a floating-point");
    }

    void errors()
    {
        const Tensor x = zeros({2, 3});
        FS_EXPECT_ERROR(ops::sum(x, {1, -1}),
                        "aten.sum: dim 1 appears multiple times in the list of dims [1,-1] "
                        "for a tensor of shape [2,3]");
        FS_EXPECT_ERROR(ops::amax(x, {0, 0}), "aten.amax: dim 0 appears multiple times");
        FS_EXPECT_ERROR(ops::sum(x, {2}), "aten.sum: dimension 2 is out of range for a tensor of rank 2");
        FS_EXPECT_ERROR(ops::mean(x, {-3}), "aten.mean: dimension -3 is out of range");
        FS_EXPECT_ERROR(ops::argmax(x, 5), "aten.argmax: dimension 5 is out of range");
        FS_EXPECT_ERROR(ops::max(x, 2), "aten.max.dim: dimension 2 is out of range");
        FS_EXPECT_ERROR(ops::cumsum(x, 3), "aten.cumsum: dimension 3 is out of range");
        FS_EXPECT_ERROR(ops::mean(zeros({2, 3}, DType::I32)),
                        "aten.mean: expected a floating-point input or dtype, got i32 for a tensor of shape [2,3]");
        FS_EXPECT_ERROR(ops::var(zeros({2}, DType::I64)),
                        "aten.var: expected a floating-point input or dtype, got i64");
        FS_EXPECT_ERROR(ops::stdDev(zeros({2}, DType::Bool)), "aten.std: expected a floating-point");
        FS_EXPECT_ERROR(ops::sum(x, {}, false, DType::Bool), "aten.sum: dtype bool is not supported");
        FS_EXPECT_ERROR(ops::cumsum(x, 0, DType::Bool), "aten.cumsum: dtype bool is not supported");
        FS_EXPECT_ERROR(ops::sum(zeros({}), {1}), "aten.sum: dimension 1 is out of range for a tensor of rank 0");
        FS_EXPECT_ERROR(callOp1("aten.sum", {x, 1.5}), "aten.sum: argument 'dim' expects int[]?");
    }

    void correction()
    {
        const Tensor x = fromVector({1, 2, 3, 4, 10, 20, 30, 40}, {2, 4});
        const Groups g = groupsOf(x, {false, true});
        for (double c : {0.0, 1.0, 2.5, 4.0, 5.0}) {
            std::vector<double> var, sd;
            for (const auto &row : g) {
                var.push_back(refVar(row, c));
                sd.push_back(std::sqrt(refVar(row, c)));
            }
            FS_COMPARE_VALUES(ops::var(x, {1}, c), Shape{2}, var, 1e-6, 0);
            FS_COMPARE_VALUES(ops::stdDev(x, {1}, c, true), (Shape{2, 1}), sd, 1e-6, 0);
        }
        // One element with correction 1: 0/0.
        FS_COMPARE_VALUES(ops::var(fromVector({3}, {1})), Shape{}, std::vector<double>{kNaN}, 0, 0);
    }

    void decompositions_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<Shape>("dims");
        QTest::addColumn<bool>("keepdim");
        for (const char *op : {"mean", "var", "std", "logsumexp"}) {
            QTest::newRow(qPrintable(QStringLiteral("%1 dim 1").arg(QLatin1String(op))))
                << QString::fromLatin1(op) << Shape{1} << false;
            QTest::newRow(qPrintable(QStringLiteral("%1 dims 0,2 keepdim").arg(QLatin1String(op))))
                << QString::fromLatin1(op) << Shape{0, 2} << true;
            QTest::newRow(qPrintable(QStringLiteral("%1 all").arg(QLatin1String(op))))
                << QString::fromLatin1(op) << Shape{} << false;
        }
    }

    // The compiler's decompose stage gets the same numbers as the kernels,
    // on data and on meta tensors.
    void decompositions()
    {
        QFETCH(QString, op);
        QFETCH(Shape, dims);
        QFETCH(bool, keepdim);
        const OpDef &def = OpRegistry::instance().get("aten." + op.toStdString());
        QVERIFY(def.decompose);
        auto argsFor = [&](const Tensor &x) {
            if (op == QLatin1String("mean"))
                return Args{x, dims, keepdim, Value()};
            if (op == QLatin1String("logsumexp"))
                return Args{x, dims, keepdim};
            return Args{x, dims, 1.0, keepdim};
        };
        Generator gen(9);
        Tensor x = randn({3, 4, 5}, gen);
        x = ops::mul(x, 3.0);
        const Groups groups = groupsOf(x, reducedMask(x.sizes(), dims));
        std::vector<double> expected;
        for (const auto &g : groups)
            expected.push_back(refReduce(op, g));
        const TensorList out = def.decompose(argsFor(x));
        QCOMPARE(out.size(), size_t(1));
        FS_COMPARE_VALUES(out[0], reducedShape(x.sizes(), reducedMask(x.sizes(), dims), keepdim), expected, 1e-5, 1e-5);
        const TensorList meta = def.decompose(argsFor(test::meta({3, 4, 5})));
        QVERIFY(meta[0].isMeta());
        QCOMPARE(meta[0].sizes(), out[0].sizes());
        QCOMPARE(meta[0].dtype(), DType::F32);
    }

    void decompositionEdgeCases()
    {
        const OpDef &lse = OpRegistry::instance().get("aten.logsumexp");
        const Tensor x = fromVector({-kInf, -kInf, 1, kInf}, {2, 2});
        FS_COMPARE_VALUES(lse.decompose({x, IntList{1}, false})[0], Shape{2}, (std::vector<double>{-kInf, kInf}), 0, 0);
        FS_COMPARE_VALUES(lse.decompose({zeros({0, 2}), IntList{0}, false})[0], Shape{2},
                          (std::vector<double>{-kInf, -kInf}), 0, 0);
        FS_COMPARE_VALUES(lse.decompose({fromVector({1, 2}, {2}, DType::I32), IntList{0}, false})[0], Shape{},
                          std::vector<double>{std::log(std::exp(1.0) + std::exp(2.0))}, 1e-6, 0);
        const OpDef &mean = OpRegistry::instance().get("aten.mean");
        FS_EXPECT_ERROR(mean.decompose({zeros({2}, DType::I32), IntList{}, false, Value()}),
                        "aten.mean: expected a floating-point");
        const OpDef &max = OpRegistry::instance().get("aten.max");
        FS_COMPARE_VALUES(max.decompose({fromVector({3, 9, 1}, {3})})[0], Shape{}, std::vector<double>{9}, 0, 0);
    }

    void registration()
    {
        const OpRegistry &r = OpRegistry::instance();
        for (const char *name : {"aten.sum", "aten.mean", "aten.prod", "aten.amax", "aten.amin", "aten.max",
                                 "aten.min", "aten.max.dim", "aten.min.dim", "aten.argmax", "aten.argmin",
                                 "aten.all", "aten.any"})
            QCOMPARE(r.get(name).kind, OpKind::Reduction);
        for (const char *name : {"aten.var", "aten.std", "aten.logsumexp"})
            QCOMPARE(r.get(name).kind, OpKind::Composite);
        QCOMPARE(r.get("aten.max.dim").schema.numTensorReturns(), 2);
        QCOMPARE(r.get("aten.min.dim").schema.numTensorReturns(), 2);
        QVERIFY(r.get("aten.cumsum").cpu);
    }

    // A reduction reads its input once and does about one flop per element.
    void cost()
    {
        const Tensor x = zeros({8, 16});
        const OpDef &sum = OpRegistry::instance().get("aten.sum");
        const Tensor y = ops::sum(x, {1});
        const OpCost c = sum.estimateCost({x, IntList{1}, false, Value()}, std::span<const Tensor>(&y, 1));
        QCOMPARE(c.flops, 128.0);
        QCOMPARE(c.bytesRead, 512.0);
        QCOMPARE(c.bytesWritten, 32.0);
        const OpDef &var = OpRegistry::instance().get("aten.var");
        const OpCost v = var.estimateCost({x, IntList{1}, 1.0, false}, std::span<const Tensor>(&y, 1));
        QVERIFY(v.flops >= 128.0);
        QCOMPARE(v.bytesRead, 1024.0);
    }
};

QTEST_GUILESS_MAIN(TestReduction)
#include "tst_core_reduction.moc"
