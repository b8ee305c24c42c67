// Data-movement ops against plain f64 reference loops. Shapes in the data
// rows are written as "2,3" ("" is 0-d) and lists of shapes as "2,3|4,3".
#include "optest.h"

#include "core/ops/registry.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cmath>

using namespace fusescope;
using namespace fusescope::test;

namespace {

std::vector<Shape> parseShapes(const QString &text)
{
    std::vector<Shape> shapes;
    for (const QString &part : text.split(QLatin1Char('|')))
        shapes.push_back(parseShape(part));
    return shapes;
}

// Small multiples of 1/4 (integers for integer dtypes, 0/1 for bool): every
// dtype holds them exactly, and repeats make ties likely.
Tensor sample(const Shape &shape, DType dtype, uint64_t seed)
{
    Generator gen(seed);
    std::vector<double> values(static_cast<size_t>(numelOf(shape)));
    for (double &v : values) {
        const auto r = static_cast<int64_t>(gen.next() % 41) - 20;
        v = dtype == DType::Bool ? static_cast<double>(r & 1) : isFloating(dtype) ? r / 4.0 : static_cast<double>(r);
    }
    return fromVector(values, shape, dtype);
}

// Random indices in [0, bound).
Tensor indexTensor(const Shape &shape, int64_t bound, DType dtype, uint64_t seed)
{
    Generator gen(seed);
    std::vector<double> values(static_cast<size_t>(numelOf(shape)));
    for (double &v : values)
        v = bound > 0 ? static_cast<double>(gen.next() % static_cast<uint64_t>(bound)) : 0;
    return fromVector(values, shape, dtype);
}

Shape unravel(int64_t flat, const Shape &shape)
{
    Shape idx(shape.size(), 0);
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = flat % shape[d];
        flat /= shape[d];
    }
    return idx;
}

int64_t ravel(const Shape &idx, const Shape &shape)
{
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d)
        flat = flat * shape[d] + idx[d];
    return flat;
}

int64_t wrap(int64_t dim, int64_t rank)
{
    return dim < 0 ? dim + rank : dim;
}

void compareExactly(const Tensor &got, const Tensor &expected)
{
    FS_COMPARE_VALUES(got, expected.sizes(), expected.toDoubleVector(), 0, 0);
    QCOMPARE(got.dtype(), expected.dtype());
}

} // namespace

class TestCoreMovement : public QObject
{
    Q_OBJECT

private slots:
    void cat_data();
    void cat();
    void catErrors();
    void stack_data();
    void stack();
    void stackDecomposition();
    void split_data();
    void split();
    void splitErrors();
    void chunkDecomposition();
    void pad_data();
    void pad();
    void padErrors();
    void gather_data();
    void gather();
    void gatherErrors();
    void scatterAdd_data();
    void scatterAdd();
    void scatterAddErrors();
    void indexSelect_data();
    void indexSelect();
    void indexSelectErrors();
    void embedding_data();
    void embedding();
    void embeddingErrors();
    void embeddingDecomposition();
    void triangle_data();
    void triangle();
    void repeat_data();
    void repeat();
    void repeatDecomposition();
    void flip_data();
    void flip();
    void nonzero_data();
    void nonzero();
    void topk_data();
    void topk();
    void topkNaN();
    void topkErrors();
    void metaShapes();
    void opKinds();
};

// --- cat / stack -------------------------------------------------------------------

void TestCoreMovement::cat_data()
{
    QTest::addColumn<QString>("shapes");
    QTest::addColumn<QString>("dtypes");
    QTest::addColumn<int>("dim");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<QString>("expectedDtype");

    QTest::newRow("dim 0") << "2,3|4,3" << "f32|f32" << 0 << "contiguous" << "f32";
    QTest::newRow("last dim, negative") << "2,3|2,1|2,5" << "f32|f32|f32" << -1 << "contiguous" << "f32";
    QTest::newRow("middle dim") << "2,3,4|2,1,4|2,2,4" << "f64|f64|f64" << 1 << "contiguous" << "f64";
    QTest::newRow("middle dim transposed") << "2,3,4|2,1,4" << "f32|f32" << 1 << "transposed" << "f32";
    QTest::newRow("sliced") << "3,2|3,5" << "i64|i64" << 1 << "sliced" << "i64";
    QTest::newRow("offset") << "3,2|1,2" << "f32|f32" << 0 << "offset" << "f32";
    QTest::newRow("promote i32 f64") << "2,2|2,3" << "i32|f64" << 1 << "contiguous" << "f64";
    QTest::newRow("promote bool i64") << "2|3" << "bool|i64" << 0 << "contiguous" << "i64";
    QTest::newRow("promote f16 bf16") << "2,2|2,2" << "f16|bf16" << 0 << "contiguous" << "f32";
    QTest::newRow("bool") << "2,3|2,1" << "bool|bool" << 1 << "contiguous" << "bool";
    QTest::newRow("f16") << "4,3|1,3" << "f16|f16" << -2 << "transposed" << "f16";
    QTest::newRow("bf16") << "2,3|2,3" << "bf16|bf16" << 1 << "contiguous" << "bf16";
    QTest::newRow("1-D empty skipped") << "2,3|0|1,3" << "f32|f32|f32" << 0 << "contiguous" << "f32";
    QTest::newRow("1-D empty skipped, dim 1") << "0|2,3|2,2" << "f32|f32|f32" << 1 << "contiguous" << "f32";
    QTest::newRow("1-D empty promotes") << "2,3|0" << "f32|f64" << 0 << "contiguous" << "f64";
    QTest::newRow("all 1-D empty") << "0|0" << "f32|f32" << 0 << "contiguous" << "f32";
    QTest::newRow("zero-size rows") << "0,3|2,3" << "f32|f32" << 0 << "contiguous" << "f32";
    QTest::newRow("zero-size cols") << "2,0|2,3" << "f32|f32" << 1 << "sliced" << "f32";
    // Few output rows: blocks copied in pieces of 1 MiB on the pool.
    QTest::newRow("dim 0, pieces") << "300000|500000|70000" << "f32|f32|f32" << 0 << "contiguous" << "f32";
    QTest::newRow("two rows, pieces") << "2,300000|2,200000" << "f32|f32" << 1 << "contiguous" << "f32";
    QTest::newRow("zero-size result") << "0,3|0,2" << "f32|f32" << 1 << "contiguous" << "f32";
    QTest::newRow("single") << "3,2" << "i32" << 0 << "transposed" << "i32";
    QTest::newRow("large parallel") << "300,200|300,57|300,1" << "f32|f32|f32" << 1 << "contiguous" << "f32";
    QTest::newRow("large mixed") << "300,200|300,57" << "f32|f64" << 1 << "transposed" << "f64";
}

void TestCoreMovement::cat()
{
    QFETCH(QString, shapes);
    QFETCH(QString, dtypes);
    QFETCH(int, dim);
    QFETCH(QString, layout);
    QFETCH(QString, expectedDtype);
    const std::vector<Shape> sh = parseShapes(shapes);
    const QStringList dt = dtypes.split(QLatin1Char('|'));
    TensorList inputs;
    for (size_t i = 0; i < sh.size(); ++i)
        inputs.push_back(withLayout(sample(sh[i], parseDt(dt[static_cast<int>(i)]), 10 + i), layout));

    // Reference: walk the inputs along dim for every output element.
    auto skipped = [](const Tensor &t) { return t.dim() == 1 && t.size(0) == 0; };
    const auto ref = std::find_if(inputs.begin(), inputs.end(), [&](const Tensor &t) { return !skipped(t); });
    Shape outShape{0};
    int64_t d = 0;
    if (ref != inputs.end()) {
        d = wrap(dim, ref->dim());
        outShape = ref->sizes();
        outShape[static_cast<size_t>(d)] = 0;
        for (const Tensor &t : inputs)
            outShape[static_cast<size_t>(d)] += skipped(t) ? 0 : t.size(d);
    }
    std::vector<std::vector<double>> values;
    for (const Tensor &t : inputs)
        values.push_back(t.toDoubleVector());
    std::vector<double> expected(static_cast<size_t>(numelOf(outShape)));
    for (int64_t flat = 0; flat < numelOf(outShape); ++flat) {
        Shape idx = unravel(flat, outShape);
        int64_t c = idx[static_cast<size_t>(d)];
        for (size_t i = 0; i < inputs.size(); ++i) {
            const Tensor &t = inputs[i];
            if (skipped(t))
                continue;
            if (c < t.size(d)) {
                idx[static_cast<size_t>(d)] = c;
                expected[static_cast<size_t>(flat)] = values[i][static_cast<size_t>(ravel(idx, t.sizes()))];
                break;
            }
            c -= t.size(d);
        }
    }
    const Tensor out = ops::cat(inputs, dim);
    QCOMPARE(out.dtype(), parseDt(expectedDtype));
    FS_COMPARE_VALUES(out, outShape, expected, 0, 0);
}

void TestCoreMovement::catErrors()
{
    FS_EXPECT_ERROR(ops::cat({}), "aten.cat: expected a non-empty list");
    FS_EXPECT_ERROR(ops::cat({zeros({2, 3}), zeros({3, 3})}, 1),
                    "aten.cat: sizes of tensors must match except in dimension 1: tensor 0 has shape [2,3] and "
                    "tensor 1 has shape [3,3]");
    FS_EXPECT_ERROR(ops::cat({zeros({2, 3}), zeros({2, 3, 1})}), "aten.cat: tensors must have the same rank");
    FS_EXPECT_ERROR(ops::cat({zeros({2}), zeros({})}), "aten.cat: zero-dimensional tensor (at position 1)");
    FS_EXPECT_ERROR(ops::cat({zeros({2, 3})}, 2), "aten.cat: dimension 2 is out of range for a tensor of rank 2");
    FS_EXPECT_ERROR(ops::cat({zeros({2, 3})}, -3), "aten.cat: dimension -3 is out of range");
}

void TestCoreMovement::stack_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("dtypes");
    QTest::addColumn<int>("dim");
    QTest::addColumn<QString>("layout");

    QTest::newRow("dim 0") << "2,3" << "f32|f32|f32" << 0 << "contiguous";
    QTest::newRow("dim 1") << "2,3" << "f32|f32" << 1 << "transposed";
    QTest::newRow("dim 2 = new last") << "2,3" << "f64|f64" << 2 << "sliced";
    QTest::newRow("dim -1") << "2,3" << "i64|i64|i64" << -1 << "offset";
    QTest::newRow("dim -3") << "2,3" << "f32|f32" << -3 << "contiguous";
    QTest::newRow("0-d") << "" << "f32|f32|f32" << 0 << "contiguous";
    QTest::newRow("promote") << "3" << "i32|f16" << 0 << "contiguous";
    QTest::newRow("bool") << "2,2" << "bool|bool" << 1 << "contiguous";
    QTest::newRow("zero-size") << "0,3" << "f32|f32" << 1 << "contiguous";
}

void TestCoreMovement::stack()
{
    QFETCH(QString, shape);
    QFETCH(QString, dtypes);
    QFETCH(int, dim);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape);
    const QStringList dt = dtypes.split(QLatin1Char('|'));
    TensorList inputs;
    DType promoted = parseDt(dt[0]);
    for (int i = 0; i < dt.size(); ++i) {
        inputs.push_back(withLayout(sample(s, parseDt(dt[i]), 20 + static_cast<uint64_t>(i)), layout));
        promoted = promoteTypes(promoted, parseDt(dt[i]));
    }
    const int64_t d = wrap(dim, static_cast<int64_t>(s.size()) + 1);
    Shape outShape = s;
    outShape.insert(outShape.begin() + d, static_cast<int64_t>(inputs.size()));
    std::vector<std::vector<double>> values;
    for (const Tensor &t : inputs)
        values.push_back(t.toDoubleVector());
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(outShape); ++flat) {
        Shape idx = unravel(flat, outShape);
        const int64_t which = idx[static_cast<size_t>(d)];
        idx.erase(idx.begin() + d);
        expected.push_back(values[static_cast<size_t>(which)][static_cast<size_t>(ravel(idx, s))]);
    }
    const Tensor out = ops::stack(inputs, dim);
    QCOMPARE(out.dtype(), promoted);
    FS_COMPARE_VALUES(out, outShape, expected, 0, 0);

    FS_EXPECT_ERROR(ops::stack({zeros({2, 3}), zeros({3, 2})}),
                    "aten.stack: all tensors must have the same shape: tensor 0 has shape [2,3] and tensor 1 has "
                    "shape [3,2]");
    FS_EXPECT_ERROR(ops::stack({}), "aten.stack: expected a non-empty list");
    FS_EXPECT_ERROR(ops::stack({zeros({2})}, 2), "aten.stack: dimension 2 is out of range");
}

void TestCoreMovement::stackDecomposition()
{
    FS_REQUIRE_OPS("aten.unsqueeze", "aten.cat");
    const OpDef &op = OpRegistry::instance().get("aten.stack");
    QVERIFY(op.decompose);
    for (int64_t dim : {0, 1, 2, -1}) {
        const TensorList inputs{withLayout(sample({2, 3}, DType::F32, 1), "transposed"), sample({2, 3}, DType::F64, 2)};
        const TensorList decomposed = op.decompose({inputs, dim});
        QCOMPARE(decomposed.size(), size_t(1));
        compareExactly(decomposed[0], ops::stack(inputs, dim));
    }
}

// --- split / chunk -----------------------------------------------------------------

void TestCoreMovement::split_data()
{
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("arg"); // split size, sizes, or chunk count
    QTest::addColumn<int>("dim");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<QString>("expectedLengths");

    QTest::newRow("split even") << "split" << "6,2" << "2" << 0 << "contiguous" << "2,2,2";
    QTest::newRow("split uneven") << "split" << "7,2" << "3" << 0 << "transposed" << "3,3,1";
    QTest::newRow("split larger than dim") << "split" << "2,5" << "9" << 1 << "contiguous" << "5";
    QTest::newRow("split negative dim") << "split" << "2,5" << "2" << -1 << "sliced" << "2,2,1";
    QTest::newRow("split empty dim") << "split" << "0,3" << "2" << 0 << "contiguous" << "0";
    QTest::newRow("sizes") << "split_with_sizes" << "2,7" << "2,0,5" << 1 << "offset" << "2,0,5";
    QTest::newRow("sizes 3-D") << "split_with_sizes" << "2,4,3" << "1,3" << -2 << "transposed" << "1,3";
    QTest::newRow("chunk even") << "chunk" << "6" << "3" << 0 << "contiguous" << "2,2,2";
    QTest::newRow("chunk uneven") << "chunk" << "7,2" << "3" << 0 << "contiguous" << "3,3,1";
    QTest::newRow("chunk gives fewer") << "chunk" << "6" << "4" << 0 << "sliced" << "2,2,2";
    QTest::newRow("chunk more than size") << "chunk" << "2,3" << "5" << 1 << "contiguous" << "1,1,1";
    QTest::newRow("chunk empty dim") << "chunk" << "2,0" << "3" << 1 << "contiguous" << "0,0,0";
}

void TestCoreMovement::split()
{
    QFETCH(QString, op);
    QFETCH(QString, shape);
    QFETCH(QString, arg);
    QFETCH(int, dim);
    QFETCH(QString, layout);
    QFETCH(QString, expectedLengths);
    const Shape s = parseShape(shape);
    const Tensor x = withLayout(sample(s, DType::F32, 3), layout);
    TensorList pieces;
    if (op == QLatin1String("split"))
        pieces = ops::split(x, arg.toLongLong(), dim);
    else if (op == QLatin1String("split_with_sizes"))
        pieces = ops::splitWithSizes(x, parseShape(arg), dim);
    else
        pieces = ops::chunk(x, arg.toLongLong(), dim);
    const Shape lengths = parseShape(expectedLengths);
    QCOMPARE(pieces.size(), lengths.size());
    const int64_t d = wrap(dim, x.dim());
    const std::vector<double> all = x.toDoubleVector();
    int64_t start = 0;
    for (size_t p = 0; p < pieces.size(); ++p) {
        Shape pieceShape = s;
        pieceShape[static_cast<size_t>(d)] = lengths[p];
        std::vector<double> expected;
        for (int64_t flat = 0; flat < numelOf(pieceShape); ++flat) {
            Shape idx = unravel(flat, pieceShape);
            idx[static_cast<size_t>(d)] += start;
            expected.push_back(all[static_cast<size_t>(ravel(idx, s))]);
        }
        FS_COMPARE_VALUES(pieces[p], pieceShape, expected, 0, 0);
        QVERIFY(pieces[p].sharesStorageWith(x) || x.numel() == 0);
        start += lengths[p];
    }
}

void TestCoreMovement::splitErrors()
{
    FS_EXPECT_ERROR(ops::splitWithSizes(zeros({2, 5}), {2, 2}, 1),
                    "aten.split_with_sizes: split sizes [2,2] do not add up to 5, the size of dimension 1");
    FS_EXPECT_ERROR(ops::splitWithSizes(zeros({5}), {6, -1}),
                    "aten.split_with_sizes: split sizes [6,-1] contain a negative");
    FS_EXPECT_ERROR(ops::split(zeros({}), 1), "aten.split: cannot split a 0-d tensor");
    FS_EXPECT_ERROR(ops::split(zeros({4}), 0), "aten.split: split_size 0 cannot split dimension 0 of size 4");
    FS_EXPECT_ERROR(ops::split(zeros({4}), -2), "aten.split: split_size -2");
    FS_EXPECT_ERROR(ops::chunk(zeros({4}), 0), "aten.chunk: chunks must be positive, got 0");
    FS_EXPECT_ERROR(ops::chunk(zeros({4}), 2, 1), "aten.chunk: dimension 1 is out of range");
}

void TestCoreMovement::chunkDecomposition()
{
    FS_REQUIRE_OPS("aten.split", "aten.split_with_sizes");
    const OpDef &op = OpRegistry::instance().get("aten.chunk");
    QVERIFY(op.decompose);
    const Tensor x = withLayout(sample({7, 4}, DType::F32, 4), "transposed");
    for (auto [chunks, dim] : {std::pair<int64_t, int64_t>{3, 0}, {2, 1}, {4, -1}}) {
        const TensorList eager = ops::chunk(x, chunks, dim);
        const TensorList decomposed = op.decompose({x, chunks, dim});
        QCOMPARE(decomposed.size(), eager.size());
        for (size_t i = 0; i < eager.size(); ++i)
            compareExactly(decomposed[i], eager[i]);
    }
    const TensorList empty = op.decompose({zeros({0, 2}), int64_t(3), int64_t(0)});
    QCOMPARE(empty.size(), size_t(3));
}

// --- pad ---------------------------------------------------------------------------

void TestCoreMovement::pad_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("pad");
    QTest::addColumn<QString>("mode");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    QTest::newRow("constant last dim") << "2,3" << "1,2" << "constant" << 0.0 << "f32" << "contiguous";
    QTest::newRow("constant value 2-D") << "2,3" << "1,0,2,1" << "constant" << 1.5 << "f64" << "transposed";
    QTest::newRow("constant 3 dims") << "2,2,3" << "0,1,1,1,1,0" << "constant" << -2.0 << "f32" << "sliced";
    QTest::newRow("constant negative crops") << "3,5" << "-1,-2,1,-1" << "constant" << 7.0 << "f32" << "offset";
    QTest::newRow("constant crop to empty") << "3,2" << "-1,-1" << "constant" << 0.0 << "f32" << "contiguous";
    QTest::newRow("constant i64") << "2,3" << "2,2" << "constant" << 9.0 << "i64" << "contiguous";
    QTest::newRow("constant bool") << "2,3" << "1,1,1,1" << "constant" << 1.0 << "bool" << "contiguous";
    QTest::newRow("constant f16") << "2,3" << "1,1" << "constant" << 0.25 << "f16" << "transposed";
    QTest::newRow("constant bf16") << "2,3" << "1,1" << "constant" << -0.5 << "bf16" << "contiguous";
    QTest::newRow("constant empty input") << "0" << "2,1" << "constant" << 3.0 << "f32" << "contiguous";
    QTest::newRow("constant empty batch") << "0,3" << "1,1" << "constant" << 3.0 << "f32" << "contiguous";
    QTest::newRow("constant nothing") << "2,3" << "" << "constant" << 3.0 << "f32" << "transposed";
    QTest::newRow("constant 0-d") << "" << "" << "constant" << 3.0 << "f32" << "contiguous";
    QTest::newRow("reflect 1") << "1,5" << "2,1" << "reflect" << 0.0 << "f32" << "contiguous";
    QTest::newRow("reflect max pad") << "2,4" << "3,3" << "reflect" << 0.0 << "f32" << "sliced";
    QTest::newRow("reflect 2-D") << "2,3,4" << "1,2,2,1" << "reflect" << 0.0 << "f64" << "transposed";
    QTest::newRow("reflect 3-D") << "1,3,3,3" << "1,1,2,2,1,1" << "reflect" << 0.0 << "f32" << "offset";
    QTest::newRow("reflect one side") << "2,4" << "0,2" << "reflect" << 0.0 << "i32" << "contiguous";
    QTest::newRow("reflect f16") << "2,4" << "2,2" << "reflect" << 0.0 << "f16" << "contiguous";
    QTest::newRow("reflect large") << "4,64,257" << "3,5,2,7" << "reflect" << 0.0 << "f32" << "contiguous";
    QTest::newRow("reflect zero pad on empty") << "0,3" << "1,1" << "reflect" << 0.0 << "f32" << "contiguous";
}

void TestCoreMovement::pad()
{
    QFETCH(QString, shape);
    QFETCH(QString, pad);
    QFETCH(QString, mode);
    QFETCH(double, value);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape);
    const IntList p = parseShape(pad);
    const DType dt = parseDt(dtype);
    const Tensor x = withLayout(sample(s, dt, 5), layout);
    const bool reflect = mode == QLatin1String("reflect");
    const auto rank = static_cast<int64_t>(s.size());
    Shape before(s.size(), 0), outShape = s;
    for (size_t i = 0; i < p.size() / 2; ++i) {
        const auto d = static_cast<size_t>(rank - 1 - static_cast<int64_t>(i));
        before[d] = p[2 * i];
        outShape[d] += p[2 * i] + p[2 * i + 1];
    }
    const std::vector<double> in = x.toDoubleVector();
    const double fill = dt == DType::Bool ? (value != 0) : value;
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(outShape); ++flat) {
        Shape idx = unravel(flat, outShape);
        bool inside = true;
        for (size_t d = 0; d < idx.size(); ++d) {
            int64_t j = idx[d] - before[d];
            if (reflect) {
                if (j < 0)
                    j = -j;
                if (j > s[d] - 1)
                    j = 2 * (s[d] - 1) - j;
            }
            inside = inside && j >= 0 && j < s[d];
            idx[d] = j;
        }
        expected.push_back(inside ? in[static_cast<size_t>(ravel(idx, s))] : fill);
    }
    const Tensor out = ops::pad(x, p, mode.toStdString(), value);
    QCOMPARE(out.dtype(), dt);
    FS_COMPARE_VALUES(out, outShape, expected, 0, 0);
}

void TestCoreMovement::padErrors()
{
    FS_EXPECT_ERROR(ops::pad(zeros({2, 3}), {1, 3}, "reflect"),
                    "aten.pad: reflect padding (1, 3) of dimension 1 must be smaller than its size 3");
    FS_EXPECT_ERROR(ops::pad(zeros({2, 3}), {3, 0}, "reflect"), "must be smaller than its size 3");
    FS_EXPECT_ERROR(ops::pad(zeros({2, 3}), {0, 0, 2, 0}, "reflect"),
                    "aten.pad: reflect padding (2, 0) of dimension 0 must be smaller than its size 2");
    FS_EXPECT_ERROR(ops::pad(zeros({2, 3}), {-1, 0}, "reflect"),
                    "aten.pad: reflect padding (-1, 0) of dimension 1 must not be negative");
    FS_EXPECT_ERROR(ops::pad(zeros({2, 3}), {1}), "aten.pad: padding [1] must hold (left, right) pairs");
    FS_EXPECT_ERROR(ops::pad(zeros({3}), {1, 1, 1, 1}), "for at most the 1 dims of shape [3]");
    FS_EXPECT_ERROR(ops::pad(zeros({2, 3}), {-2, -2}),
                    "aten.pad: padding (-2, -2) makes dimension 1 of shape [2,3] negative");
    FS_EXPECT_ERROR(ops::pad(zeros({2, 3}), {1, 1}, "circular"),
                    "aten.pad: mode must be 'constant' or 'reflect', got 'circular'");
}

// --- gather / scatter_add / index_select / embedding --------------------------------

void TestCoreMovement::gather_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("dim");
    QTest::addColumn<QString>("indexShape");
    QTest::addColumn<QString>("indexDtype");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<QString>("indexLayout");

    QTest::newRow("dim 1") << "3,4" << 1 << "3,6" << "i64" << "f32" << "contiguous" << "contiguous";
    QTest::newRow("dim 0") << "3,4" << 0 << "5,4" << "i64" << "f64" << "transposed" << "contiguous";
    QTest::newRow("dim -1, smaller index") << "3,4" << -1 << "2,2" << "i32" << "f32" << "sliced" << "transposed";
    QTest::newRow("3-D middle") << "2,5,3" << 1 << "2,4,2" << "i64" << "i64" << "offset" << "sliced";
    QTest::newRow("bool") << "3,4" << 1 << "3,2" << "i32" << "bool" << "contiguous" << "offset";
    QTest::newRow("f16") << "3,4" << 0 << "2,4" << "i64" << "f16" << "transposed" << "transposed";
    QTest::newRow("0-d") << "" << 0 << "" << "i64" << "f32" << "contiguous" << "contiguous";
    QTest::newRow("1-D") << "6" << 0 << "9" << "i32" << "f32" << "sliced" << "contiguous";
    QTest::newRow("empty index") << "3,4" << 1 << "3,0" << "i64" << "f32" << "contiguous" << "contiguous";
    QTest::newRow("large") << "200,300" << 1 << "200,150" << "i64" << "f32" << "contiguous" << "contiguous";
}

void TestCoreMovement::gather()
{
    QFETCH(QString, shape);
    QFETCH(int, dim);
    QFETCH(QString, indexShape);
    QFETCH(QString, indexDtype);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    QFETCH(QString, indexLayout);
    const Shape s = parseShape(shape), is = parseShape(indexShape);
    const Tensor x = withLayout(sample(s, parseDt(dtype), 6), layout);
    const int64_t d = s.empty() ? 0 : wrap(dim, static_cast<int64_t>(s.size()));
    const int64_t bound = s.empty() ? 1 : s[static_cast<size_t>(d)];
    const Tensor index = withLayout(indexTensor(is, bound, parseDt(indexDtype), 7), indexLayout);
    const std::vector<double> xv = x.toDoubleVector(), iv = index.toDoubleVector();
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(is); ++flat) {
        Shape idx = unravel(flat, is);
        if (!idx.empty())
            idx[static_cast<size_t>(d)] = static_cast<int64_t>(iv[static_cast<size_t>(flat)]);
        expected.push_back(xv[static_cast<size_t>(ravel(idx, s))]);
    }
    const Tensor out = ops::gather(x, dim, index);
    QCOMPARE(out.dtype(), x.dtype());
    FS_COMPARE_VALUES(out, is, expected, 0, 0);
}

void TestCoreMovement::gatherErrors()
{
    const Tensor x = zeros({3, 4});
    FS_EXPECT_ERROR(ops::gather(x, 1, fromVector({0, 4}, {1, 2}, DType::I64)),
                    "aten.gather: index 4 is out of range for dimension 1 of size 4");
    FS_EXPECT_ERROR(ops::gather(x, 0, fromVector({-1}, {1, 1}, DType::I32)),
                    "aten.gather: index -1 is out of range for dimension 0 of size 3");
    FS_EXPECT_ERROR(ops::gather(x, 1, zeros({1, 2})), "aten.gather: index must be i32 or i64, got f32");
    FS_EXPECT_ERROR(ops::gather(x, 1, zeros({2}, DType::I64)),
                    "aten.gather: index of shape [2] must have the same rank as the input of shape [3,4]");
    FS_EXPECT_ERROR(ops::gather(x, 1, zeros({4, 1}, DType::I64)),
                    "aten.gather: index of shape [4,1] is larger than the input of shape [3,4] in dimension 0");
    FS_EXPECT_ERROR(ops::gather(x, 2, zeros({3, 4}, DType::I64)), "aten.gather: dimension 2 is out of range");
}

void TestCoreMovement::scatterAdd_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("dim");
    QTest::addColumn<QString>("indexShape");
    QTest::addColumn<QString>("srcShape");
    QTest::addColumn<QString>("indexDtype");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    QTest::newRow("dim 0 duplicates") << "3,4" << 0 << "6,4" << "6,4" << "i64" << "f32" << "contiguous";
    QTest::newRow("dim 1") << "3,4" << 1 << "3,5" << "3,6" << "i32" << "f64" << "transposed";
    QTest::newRow("dim -1 small") << "3,4" << -1 << "2,2" << "3,3" << "i64" << "i64" << "sliced";
    QTest::newRow("3-D") << "2,3,4" << 1 << "2,5,3" << "2,5,4" << "i64" << "f32" << "offset";
    QTest::newRow("i32 values") << "4" << 0 << "7" << "7" << "i32" << "i32" << "contiguous";
    QTest::newRow("f16") << "3,4" << 0 << "4,4" << "4,4" << "i64" << "f16" << "transposed";
    QTest::newRow("bf16") << "3,4" << 1 << "3,4" << "3,4" << "i64" << "bf16" << "contiguous";
    QTest::newRow("0-d") << "" << 0 << "" << "" << "i64" << "f64" << "contiguous";
    QTest::newRow("empty index") << "3,4" << 0 << "0,4" << "2,4" << "i64" << "f32" << "contiguous";
    QTest::newRow("large dim 0") << "100,300" << 0 << "400,300" << "400,300" << "i64" << "f64" << "contiguous";
}

void TestCoreMovement::scatterAdd()
{
    QFETCH(QString, shape);
    QFETCH(int, dim);
    QFETCH(QString, indexShape);
    QFETCH(QString, srcShape);
    QFETCH(QString, indexDtype);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape), is = parseShape(indexShape), ss = parseShape(srcShape);
    const DType dt = parseDt(dtype);
    const Tensor x = withLayout(sample(s, dt, 8), layout);
    const Tensor src = withLayout(sample(ss, dt, 9), layout);
    const int64_t d = s.empty() ? 0 : wrap(dim, static_cast<int64_t>(s.size()));
    const int64_t bound = s.empty() ? 1 : s[static_cast<size_t>(d)];
    const Tensor index = indexTensor(is, bound, parseDt(indexDtype), 10);
    const std::vector<double> before = x.toDoubleVector(), sv = src.toDoubleVector(), iv = index.toDoubleVector();
    std::vector<double> expected = before;
    for (int64_t flat = 0; flat < numelOf(is); ++flat) {
        const Shape idx = unravel(flat, is);
        Shape target = idx;
        if (!target.empty())
            target[static_cast<size_t>(d)] = static_cast<int64_t>(iv[static_cast<size_t>(flat)]);
        expected[static_cast<size_t>(ravel(target, s))] += sv[static_cast<size_t>(ravel(idx, ss))];
    }
    const Tensor out = ops::scatterAdd(x, dim, index, src);
    QCOMPARE(out.dtype(), dt);
    // 16-bit floats round after every addition.
    const double tol = dt == DType::F16 || dt == DType::BF16 ? 4 * test::rtolFor(dt) : 1e-12;
    FS_COMPARE_VALUES(out, s, expected, tol, tol);
    FS_COMPARE_VALUES(x, s, before, 0, 0); // out of place
}

void TestCoreMovement::scatterAddErrors()
{
    const Tensor x = zeros({3, 4});
    FS_EXPECT_ERROR(ops::scatterAdd(x, 0, fromVector({3}, {1, 1}, DType::I64), ones({1, 1})),
                    "aten.scatter_add: index 3 is out of range for dimension 0 of size 3");
    FS_EXPECT_ERROR(ops::scatterAdd(x, 1, fromVector({-5}, {1, 1}, DType::I64), ones({1, 1})),
                    "aten.scatter_add: index -5 is out of range for dimension 1 of size 4");
    FS_EXPECT_ERROR(ops::scatterAdd(x, 0, zeros({1, 1}, DType::I64), ones({1, 1}, DType::F64)),
                    "aten.scatter_add: src dtype f64 differs from the input dtype f32");
    FS_EXPECT_ERROR(ops::scatterAdd(x, 0, zeros({2, 2}, DType::I64), ones({1, 2})),
                    "aten.scatter_add: index of shape [2,2] is larger than src of shape [1,2] in dimension 0");
    FS_EXPECT_ERROR(ops::scatterAdd(x, 0, zeros({2, 5}, DType::I64), ones({2, 5})),
                    "aten.scatter_add: index of shape [2,5] is larger than the input of shape [3,4] in dimension 1");
    FS_EXPECT_ERROR(ops::scatterAdd(x, 0, zeros({1, 1}), ones({1, 1})), "aten.scatter_add: index must be i32 or i64");
    FS_EXPECT_ERROR(ops::scatterAdd(zeros({2}, DType::Bool), 0, zeros({1}, DType::I64), zeros({1}, DType::Bool)),
                    "aten.scatter_add: not supported for bool tensors");
}

void TestCoreMovement::indexSelect_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("dim");
    QTest::addColumn<QString>("indexShape");
    QTest::addColumn<QString>("indexDtype");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    QTest::newRow("dim 0") << "4,3" << 0 << "6" << "i64" << "f32" << "contiguous";
    QTest::newRow("dim 1") << "4,3" << 1 << "5" << "i32" << "f64" << "transposed";
    QTest::newRow("dim -1 (inner 1)") << "2,3,5" << -1 << "7" << "i64" << "i64" << "sliced";
    QTest::newRow("middle") << "2,3,5" << 1 << "4" << "i64" << "f16" << "offset";
    QTest::newRow("bool") << "4,3" << 0 << "2" << "i32" << "bool" << "contiguous";
    QTest::newRow("0-d index") << "4,3" << 0 << "" << "i64" << "f32" << "contiguous";
    QTest::newRow("0-d input") << "" << 0 << "1" << "i64" << "f32" << "contiguous";
    QTest::newRow("empty index") << "4,3" << 1 << "0" << "i64" << "f32" << "contiguous";
    QTest::newRow("large") << "500,64" << 0 << "1000" << "i64" << "f32" << "contiguous";
    // Contiguous inputs: a gather along each row, and rows of two elements
    // whose parallel chunks start inside a row of the output.
    QTest::newRow("last dim, contiguous") << "300,70" << 1 << "200"
                                          << "i64"
                                          << "f32"
                                          << "contiguous";
    QTest::newRow("rows of two, chunks mid-row") << "301,40,2" << 1 << "120"
                                                 << "i32"
                                                 << "f64"
                                                 << "contiguous";
}

void TestCoreMovement::indexSelect()
{
    QFETCH(QString, shape);
    QFETCH(int, dim);
    QFETCH(QString, indexShape);
    QFETCH(QString, indexDtype);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape), is = parseShape(indexShape);
    const Tensor x = withLayout(sample(s, parseDt(dtype), 11), layout);
    const int64_t d = s.empty() ? 0 : wrap(dim, static_cast<int64_t>(s.size()));
    const int64_t bound = s.empty() ? 1 : s[static_cast<size_t>(d)];
    const Tensor index = indexTensor(is, bound, parseDt(indexDtype), 12);
    const std::vector<double> xv = x.toDoubleVector(), iv = index.toDoubleVector();
    Shape outShape = s;
    if (!s.empty())
        outShape[static_cast<size_t>(d)] = static_cast<int64_t>(iv.size());
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(outShape); ++flat) {
        Shape idx = unravel(flat, outShape);
        if (!idx.empty())
            idx[static_cast<size_t>(d)] = static_cast<int64_t>(iv[static_cast<size_t>(idx[static_cast<size_t>(d)])]);
        expected.push_back(xv[static_cast<size_t>(ravel(idx, s))]);
    }
    FS_COMPARE_VALUES(ops::indexSelect(x, dim, index), outShape, expected, 0, 0);
}

void TestCoreMovement::indexSelectErrors()
{
    const Tensor x = zeros({4, 3});
    FS_EXPECT_ERROR(ops::indexSelect(x, 1, fromVector({0, 3}, {2}, DType::I64)),
                    "aten.index_select: index 3 is out of range for dimension 1 of size 3");
    FS_EXPECT_ERROR(ops::indexSelect(x, -2, fromVector({-1}, {1}, DType::I32)),
                    "aten.index_select: index -1 is out of range for dimension 0 of size 4");
    FS_EXPECT_ERROR(ops::indexSelect(x, 0, zeros({2, 1}, DType::I64)),
                    "aten.index_select: index must be 0-d or 1-D, got shape [2,1]");
    FS_EXPECT_ERROR(ops::indexSelect(x, 0, zeros({2}, DType::F64)),
                    "aten.index_select: index must be i32 or i64, got f64");
    FS_EXPECT_ERROR(ops::indexSelect(zeros({}), 0, zeros({2}, DType::I64)),
                    "aten.index_select: a 0-d input takes exactly one index");
}

void TestCoreMovement::embedding_data()
{
    QTest::addColumn<QString>("weightShape");
    QTest::addColumn<QString>("indexShape");
    QTest::addColumn<QString>("indexDtype");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    QTest::newRow("1-D indices") << "10,4" << "6" << "i64" << "f32" << "contiguous";
    QTest::newRow("2-D indices") << "10,4" << "2,3" << "i64" << "f32" << "contiguous";
    QTest::newRow("i32 indices") << "7,5" << "3,2" << "i32" << "f64" << "contiguous";
    QTest::newRow("transposed weight") << "6,3" << "2,4" << "i64" << "f32" << "transposed";
    QTest::newRow("sliced weight") << "6,3" << "5" << "i64" << "f16" << "sliced";
    QTest::newRow("bf16") << "6,8" << "4" << "i64" << "bf16" << "offset";
    QTest::newRow("0-d index") << "6,3" << "" << "i64" << "f32" << "contiguous";
    QTest::newRow("3-D indices") << "9,2" << "2,2,3" << "i32" << "i64" << "contiguous";
    QTest::newRow("empty indices") << "6,3" << "2,0" << "i64" << "f32" << "contiguous";
    QTest::newRow("dim 1") << "6,1" << "4" << "i64" << "f32" << "contiguous";
    QTest::newRow("large") << "1000,256" << "64,50" << "i64" << "f32" << "contiguous";
}

void TestCoreMovement::embedding()
{
    QFETCH(QString, weightShape);
    QFETCH(QString, indexShape);
    QFETCH(QString, indexDtype);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape ws = parseShape(weightShape), is = parseShape(indexShape);
    const Tensor weight = withLayout(sample(ws, parseDt(dtype), 13), layout);
    const Tensor indices = indexTensor(is, ws[0], parseDt(indexDtype), 14);
    const std::vector<double> wv = weight.toDoubleVector(), iv = indices.toDoubleVector();
    std::vector<double> expected;
    for (double i : iv) {
        for (int64_t j = 0; j < ws[1]; ++j)
            expected.push_back(wv[static_cast<size_t>(static_cast<int64_t>(i) * ws[1] + j)]);
    }
    Shape outShape = is;
    outShape.push_back(ws[1]);
    const Tensor out = ops::embedding(weight, indices);
    QCOMPARE(out.dtype(), weight.dtype());
    FS_COMPARE_VALUES(out, outShape, expected, 0, 0);
}

void TestCoreMovement::embeddingErrors()
{
    const Tensor weight = zeros({5, 3});
    FS_EXPECT_ERROR(ops::embedding(weight, fromVector({1, 7, 2}, {3}, DType::I64)),
                    "aten.embedding: index 7 is out of range for a table of 5 entries");
    FS_EXPECT_ERROR(ops::embedding(weight, fromVector({0, -1}, {1, 2}, DType::I32)),
                    "aten.embedding: index -1 is out of range for a table of 5 entries");
    FS_EXPECT_ERROR(ops::embedding(weight, fromVector({5}, {1}, DType::I64)),
                    "index 5 is out of range for a table of 5");
    FS_EXPECT_ERROR(ops::embedding(zeros({0, 3}), fromVector({0}, {1}, DType::I64)),
                    "aten.embedding: index 0 is out of range for a table of 0 entries");
    FS_EXPECT_ERROR(ops::embedding(weight, zeros({2})), "aten.embedding: index must be i32 or i64, got f32");
    FS_EXPECT_ERROR(ops::embedding(zeros({5}), zeros({2}, DType::I64)),
                    "aten.embedding: weight must be 2-D [num, dim], got shape [5]");
}

void TestCoreMovement::embeddingDecomposition()
{
    FS_REQUIRE_OPS("aten.index_select", "aten.reshape");
    const OpDef &op = OpRegistry::instance().get("aten.embedding");
    QVERIFY(op.decompose);
    const Tensor weight = withLayout(sample({9, 4}, DType::F32, 15), "transposed");
    for (const Shape &is : {Shape{5}, Shape{2, 3}, Shape{}}) {
        const Tensor indices = indexTensor(is, 9, DType::I64, 16);
        const TensorList decomposed = op.decompose({weight, indices});
        compareExactly(decomposed.at(0), ops::embedding(weight, indices));
    }
}

// --- triu / tril / repeat / flip ---------------------------------------------------

void TestCoreMovement::triangle_data()
{
    QTest::addColumn<bool>("upper");
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("diagonal");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    for (bool upper : {true, false}) {
        const char *name = upper ? "triu" : "tril";
        for (int diag : {0, 1, -1, 2, -3, 10, -10})
            QTest::addRow("%s 4x5 diag %d", name, diag) << upper << "4,5" << diag << "f32" << "contiguous";
        QTest::addRow("%s batched", name) << upper << "2,3,4,3" << 1 << "f64" << "transposed";
        QTest::addRow("%s tall", name) << upper << "6,2" << -1 << "i64" << "sliced";
        QTest::addRow("%s bool", name) << upper << "3,3" << 0 << "bool" << "offset";
        QTest::addRow("%s f16", name) << upper << "3,5" << 2 << "f16" << "transposed";
        QTest::addRow("%s zero-size", name) << upper << "0,3" << 0 << "f32" << "contiguous";
        QTest::addRow("%s large", name) << upper << "8,200,300" << 5 << "f32" << "contiguous";
    }
}

void TestCoreMovement::triangle()
{
    QFETCH(bool, upper);
    QFETCH(QString, shape);
    QFETCH(int, diagonal);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape);
    const Tensor x = withLayout(sample(s, parseDt(dtype), 17), layout);
    const std::vector<double> xv = x.toDoubleVector();
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(s); ++flat) {
        const Shape idx = unravel(flat, s);
        const int64_t i = idx[idx.size() - 2], j = idx.back();
        const bool keep = upper ? j - i >= diagonal : j - i <= diagonal;
        expected.push_back(keep ? xv[static_cast<size_t>(flat)] : 0);
    }
    const Tensor out = upper ? ops::triu(x, diagonal) : ops::tril(x, diagonal);
    QCOMPARE(out.dtype(), x.dtype());
    FS_COMPARE_VALUES(out, s, expected, 0, 0);
    FS_EXPECT_ERROR(ops::triu(zeros({3})), "aten.triu: input must have at least 2 dimensions, got shape [3]");
    FS_EXPECT_ERROR(ops::tril(zeros({})), "aten.tril: input must have at least 2 dimensions, got shape []");
}

void TestCoreMovement::repeat_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("repeats");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    QTest::newRow("2x2") << "2,3" << "2,2" << "f32" << "contiguous";
    QTest::newRow("ones") << "2,3" << "1,1" << "f32" << "transposed";
    QTest::newRow("extra leading") << "2,3" << "3,1,2" << "i64" << "sliced";
    QTest::newRow("last only") << "4" << "5" << "f64" << "offset";
    QTest::newRow("0-d") << "" << "3" << "f32" << "contiguous";
    QTest::newRow("0-d no repeats") << "" << "" << "f32" << "contiguous";
    QTest::newRow("zero repeats") << "2,3" << "0,2" << "f32" << "contiguous";
    QTest::newRow("bool") << "2,2" << "2,1,3" << "bool" << "contiguous";
    QTest::newRow("f16") << "3,2" << "2,2" << "f16" << "transposed";
    QTest::newRow("large") << "64,128" << "4,3" << "f32" << "contiguous";
}

void TestCoreMovement::repeat()
{
    QFETCH(QString, shape);
    QFETCH(QString, repeats);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape), r = parseShape(repeats);
    const Tensor x = withLayout(sample(s, parseDt(dtype), 18), layout);
    const size_t lead = r.size() - s.size();
    Shape outShape(r.size());
    for (size_t d = 0; d < r.size(); ++d)
        outShape[d] = r[d] * (d < lead ? 1 : s[d - lead]);
    const std::vector<double> xv = x.toDoubleVector();
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(outShape); ++flat) {
        const Shape idx = unravel(flat, outShape);
        Shape src(s.size());
        for (size_t d = 0; d < s.size(); ++d)
            src[d] = idx[d + lead] % s[d];
        expected.push_back(xv[static_cast<size_t>(ravel(src, s))]);
    }
    const Tensor out = ops::repeat(x, r);
    QCOMPARE(out.dtype(), x.dtype());
    FS_COMPARE_VALUES(out, outShape, expected, 0, 0);
    FS_EXPECT_ERROR(ops::repeat(zeros({2, 3}), {2}),
                    "aten.repeat: 1 repeat counts [2] given for a tensor of shape [2,3]");
    FS_EXPECT_ERROR(ops::repeat(zeros({2}), {-1}), "aten.repeat: repeat counts [-1] must not be negative");
}

void TestCoreMovement::repeatDecomposition()
{
    FS_REQUIRE_OPS("aten.reshape", "aten.expand", "aten.clone");
    const OpDef &op = OpRegistry::instance().get("aten.repeat");
    QVERIFY(op.decompose);
    const Tensor x = withLayout(sample({2, 3}, DType::F32, 19), "transposed");
    for (const IntList &r : {IntList{2, 2}, IntList{3, 1, 2}, IntList{1, 0}}) {
        const TensorList decomposed = op.decompose({x, r});
        compareExactly(decomposed.at(0), ops::repeat(x, r));
    }
}

void TestCoreMovement::flip_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("dims");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    QTest::newRow("dim 0") << "3,4" << "0" << "f32" << "contiguous";
    QTest::newRow("dim -1") << "3,4" << "-1" << "f32" << "transposed";
    QTest::newRow("both") << "3,4" << "0,1" << "f64" << "sliced";
    QTest::newRow("none") << "3,4" << "" << "i64" << "offset";
    QTest::newRow("3-D outer and inner") << "2,3,4" << "2,0" << "i32" << "transposed";
    QTest::newRow("bool") << "5" << "0" << "bool" << "contiguous";
    QTest::newRow("f16") << "2,5" << "1" << "f16" << "contiguous";
    QTest::newRow("0-d") << "" << "0" << "f32" << "contiguous";
    QTest::newRow("zero-size") << "0,4" << "0,1" << "f32" << "contiguous";
    QTest::newRow("large") << "256,300" << "-1" << "f32" << "contiguous";
    // Rows read backwards a vector at a time, with a remainder: each item size.
    QTest::newRow("last dim i64") << "9,37" << "1" << "i64" << "contiguous";
    QTest::newRow("last dim f16") << "7,70" << "-1" << "f16" << "offset";
    QTest::newRow("last dim bool") << "3,100" << "1" << "bool" << "contiguous";
    QTest::newRow("last dim i32") << "5,33" << "1" << "i32" << "transposed";
    QTest::newRow("last dim f64 sliced") << "6,50" << "1" << "f64" << "sliced";
}

void TestCoreMovement::flip()
{
    QFETCH(QString, shape);
    QFETCH(QString, dims);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape);
    const IntList fd = parseShape(dims);
    const Tensor x = withLayout(sample(s, parseDt(dtype), 20), layout);
    const std::vector<double> xv = x.toDoubleVector();
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(s); ++flat) {
        Shape idx = unravel(flat, s);
        for (int64_t d : fd) {
            if (!s.empty()) {
                const auto w = static_cast<size_t>(wrap(d, static_cast<int64_t>(s.size())));
                idx[w] = s[w] - 1 - idx[w];
            }
        }
        expected.push_back(xv[static_cast<size_t>(ravel(idx, s))]);
    }
    FS_COMPARE_VALUES(ops::flip(x, fd), s, expected, 0, 0);
    FS_EXPECT_ERROR(ops::flip(zeros({2, 3}), {1, -1}), "aten.flip: dim -1 appears more than once in [1,-1]");
    FS_EXPECT_ERROR(ops::flip(zeros({2, 3}), {2}), "aten.flip: dimension 2 is out of range");
}

// --- nonzero ------------------------------------------------------------------------

// Values that are zero with probability 1 - density; the nonzero ones mix
// sample()'s with a float dtype's edge cases: -0 (zero), NaN, infinity and a
// subnormal (nonzero).
Tensor sparseSample(const Shape &shape, DType dtype, int density, uint64_t seed)
{
    const std::vector<double> base = sample(shape, dtype, seed).toDoubleVector();
    const double tiny = dtype == DType::F64 ? 1e-310 : dtype == DType::F16 ? 6e-8 : 1e-40;
    const std::vector<double> edges = {-0.0, std::nan(""), -INFINITY, tiny};
    Generator gen(seed + 1);
    std::vector<double> values(base.size());
    for (size_t i = 0; i < values.size(); ++i) {
        const uint64_t r = gen.next() % 100;
        if (isFloating(dtype) && r % 17 == 0)
            values[i] = edges[r % edges.size()];
        else
            values[i] = static_cast<int>(r) < density ? (base[i] == 0 ? 1 : base[i]) : 0;
    }
    return fromVector(values, shape, dtype);
}

void TestCoreMovement::nonzero_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("density");
    QTest::addColumn<QString>("layout");

    // Runs of 64 items and blocks of 4096 end mid-row in the wider shapes.
    QTest::newRow("bool") << "37,130" << "bool" << 50 << "contiguous";
    QTest::newRow("f32 rows across blocks") << "3,5000" << "f32" << 30 << "contiguous";
    QTest::newRow("f64 3-D transposed") << "4,33,70" << "f64" << 10 << "transposed";
    QTest::newRow("i32 sliced") << "65,65" << "i32" << 60 << "sliced";
    QTest::newRow("i64 1-D") << "10000" << "i64" << 5 << "contiguous";
    QTest::newRow("f16") << "7,300" << "f16" << 40 << "offset";
    QTest::newRow("bf16") << "129" << "bf16" << 50 << "contiguous";
    QTest::newRow("all zero") << "100,100" << "f32" << 0 << "contiguous";
    QTest::newRow("all nonzero") << "50,64" << "i64" << 100 << "contiguous";
    QTest::newRow("0-d nonzero") << "" << "f32" << 100 << "contiguous";
    QTest::newRow("0-d zero") << "" << "i32" << 0 << "contiguous";
    QTest::newRow("zero-size") << "0,5" << "f32" << 50 << "contiguous";
}

void TestCoreMovement::nonzero()
{
    QFETCH(QString, shape);
    QFETCH(QString, dtype);
    QFETCH(int, density);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape);
    const Tensor x = withLayout(sparseSample(s, parseDt(dtype), density, 40), layout);
    const std::vector<double> xv = x.toDoubleVector();
    std::vector<double> expected;
    for (int64_t flat = 0; flat < numelOf(s); ++flat) {
        const double v = xv[static_cast<size_t>(flat)];
        if (v != 0) { // NaN too
            for (int64_t i : unravel(flat, s))
                expected.push_back(static_cast<double>(i));
        }
    }
    const auto rows = static_cast<int64_t>(expected.size()) / std::max<int64_t>(x.dim(), 1);
    const Shape outShape = {s.empty() ? (xv[0] != 0 ? 1 : 0) : rows, x.dim()};
    const Tensor out = ops::nonzero(x);
    QCOMPARE(out.dtype(), DType::I64);
    FS_COMPARE_VALUES(out, outShape, expected, 0, 0);
}

// --- topk --------------------------------------------------------------------------

void TestCoreMovement::topk_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("dim");
    QTest::addColumn<bool>("largest");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("layout");

    QTest::newRow("largest last dim") << "4,10" << 3 << -1 << true << "f32" << "contiguous";
    QTest::newRow("smallest last dim") << "4,10" << 3 << -1 << false << "f32" << "contiguous";
    QTest::newRow("dim 0") << "10,4" << 4 << 0 << true << "f64" << "transposed";
    QTest::newRow("middle dim smallest") << "2,9,3" << 5 << 1 << false << "f32" << "sliced";
    QTest::newRow("k = n (full sort)") << "3,7" << 7 << 1 << true << "i64" << "offset";
    QTest::newRow("k = n smallest") << "3,7" << 7 << 1 << false << "i32" << "contiguous";
    QTest::newRow("k = 0") << "3,7" << 0 << 1 << true << "f32" << "contiguous";
    QTest::newRow("f16") << "5,12" << 4 << 1 << true << "f16" << "transposed";
    QTest::newRow("bf16 smallest") << "5,12" << 4 << 1 << false << "bf16" << "contiguous";
    QTest::newRow("many ties") << "6,40" << 15 << 1 << true << "f32" << "contiguous";
    QTest::newRow("many ties smallest") << "6,40" << 30 << 1 << false << "f32" << "contiguous";
    QTest::newRow("0-d") << "" << 1 << 0 << true << "f32" << "contiguous";
    QTest::newRow("1-D") << "17" << 5 << 0 << true << "f32" << "contiguous";
    QTest::newRow("zero rows") << "0,5" << 2 << 1 << true << "f32" << "contiguous";
    QTest::newRow("large") << "512,300" << 10 << 1 << true << "f32" << "contiguous";
    // k under an eighth of the row: the streamed heap, ties throughout.
    QTest::newRow("streamed f64 smallest") << "9,120" << 4 << 1 << false << "f64"
                                           << "transposed";
    QTest::newRow("streamed i64 dim 0") << "100,3" << 2 << 0 << true << "i64"
                                        << "sliced";
    QTest::newRow("streamed f16") << "4,90" << 3 << 1 << true << "f16"
                                  << "contiguous";
}

void TestCoreMovement::topk()
{
    QFETCH(QString, shape);
    QFETCH(int, k);
    QFETCH(int, dim);
    QFETCH(bool, largest);
    QFETCH(QString, dtype);
    QFETCH(QString, layout);
    const Shape s = parseShape(shape);
    const Tensor x = withLayout(sample(s, parseDt(dtype), 21), layout);
    const std::vector<double> xv = x.toDoubleVector();
    const auto d = static_cast<size_t>(s.empty() ? 0 : wrap(dim, static_cast<int64_t>(s.size())));
    const Shape rowShape = s.empty() ? Shape{1} : s;
    Shape outShape = s;
    if (!s.empty())
        outShape[d] = k;
    std::vector<double> expValues(static_cast<size_t>(numelOf(outShape))), expIndices(expValues.size());
    // Reference: a stable sort of each row, so ties keep the lower index first.
    Shape outer = rowShape;
    outer[d] = 1;
    const Shape outRow = s.empty() ? Shape{1} : outShape;
    for (int64_t flat = 0; flat < numelOf(outer); ++flat) {
        Shape idx = unravel(flat, outer);
        std::vector<std::pair<double, int64_t>> row;
        for (int64_t i = 0; i < rowShape[d]; ++i) {
            idx[d] = i;
            row.push_back({xv[static_cast<size_t>(ravel(idx, rowShape))], i});
        }
        std::stable_sort(row.begin(), row.end(), [&](const auto &a, const auto &b) {
            return largest ? a.first > b.first : a.first < b.first;
        });
        for (int64_t j = 0; j < k; ++j) {
            idx[d] = j;
            const auto at = static_cast<size_t>(ravel(idx, outRow));
            expValues[at] = row[static_cast<size_t>(j)].first;
            expIndices[at] = static_cast<double>(row[static_cast<size_t>(j)].second);
        }
    }
    const auto [values, indices] = ops::topk(x, k, dim, largest);
    QCOMPARE(values.dtype(), x.dtype());
    QCOMPARE(indices.dtype(), DType::I64);
    FS_COMPARE_VALUES(values, outShape, expValues, 0, 0);
    FS_COMPARE_VALUES(indices, outShape, expIndices, 0, 0);

    // Unsorted results hold the same elements.
    const auto [uv, ui] = ops::topk(x, k, dim, largest, false);
    std::vector<double> a = ui.toDoubleVector(), b = expIndices;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    QCOMPARE(a, b);
}

void TestCoreMovement::topkNaN()
{
    const Tensor x = fromVector({1, NAN, 3, -2, NAN, 0}, {6});
    const auto [v, i] = ops::topk(x, 3);
    FS_COMPARE_VALUES(v, Shape{3}, (std::vector<double>{NAN, NAN, 3}), 0, 0);
    FS_COMPARE_VALUES(i, Shape{3}, (std::vector<double>{1, 4, 2}), 0, 0);
    const auto [sv, si] = ops::topk(x, 5, 0, false);
    FS_COMPARE_VALUES(sv, Shape{5}, (std::vector<double>{-2, 0, 1, 3, NAN}), 0, 0);
    FS_COMPARE_VALUES(si, Shape{5}, (std::vector<double>{3, 5, 0, 2, 1}), 0, 0);
    // The same in a row long enough to stream: NaN above all, -0 equal to +0.
    std::vector<double> row(64);
    for (size_t j = 0; j < row.size(); ++j)
        row[j] = -1 - 0.5 * static_cast<double>(j);
    row[40] = row[60] = NAN;
    row[5] = -0.0;
    row[10] = 0.0;
    const auto [lv, li] = ops::topk(fromVector(row, {64}), 4);
    FS_COMPARE_VALUES(lv, Shape {4}, (std::vector<double> {NAN, NAN, 0, 0}), 0, 0);
    FS_COMPARE_VALUES(li, Shape {4}, (std::vector<double> {40, 60, 5, 10}), 0, 0);
    const auto [mv, mi] = ops::topk(fromVector(row, {64}, DType::F64), 2, 0, false);
    FS_COMPARE_VALUES(mv, Shape {2}, (std::vector<double> {-32.5, -32}), 0, 0);
    FS_COMPARE_VALUES(mi, Shape {2}, (std::vector<double> {63, 62}), 0, 0);
}

void TestCoreMovement::topkErrors()
{
    FS_EXPECT_ERROR(ops::topk(zeros({3, 4}), 5), "aten.topk: k (5) is out of range for dimension 1 of size 4");
    FS_EXPECT_ERROR(ops::topk(zeros({3, 4}), -1, 0), "aten.topk: k (-1) is out of range for dimension 0 of size 3");
    FS_EXPECT_ERROR(ops::topk(zeros({3}, DType::Bool), 1), "aten.topk: not supported for bool tensors");
    FS_EXPECT_ERROR(ops::topk(zeros({3}), 1, 1), "aten.topk: dimension 1 is out of range");
}

// --- meta tensors and registration ---------------------------------------------------

void TestCoreMovement::metaShapes()
{
    auto check = [](const Tensor &t, const Shape &shape, DType dtype) {
        QVERIFY(t.isMeta());
        QCOMPARE(QString::fromStdString(shapeStr(t.sizes())), QString::fromStdString(shapeStr(shape)));
        QCOMPARE(t.dtype(), dtype);
    };
    check(ops::cat({meta({2, 3}), meta({2, 5}, DType::F64)}, 1), {2, 8}, DType::F64);
    check(ops::cat({meta({2, 3}), zeros({4, 3})}), {6, 3}, DType::F32);
    check(ops::stack({meta({2, 3}), meta({2, 3})}, -1), {2, 3, 2}, DType::F32);
    const TensorList pieces = ops::split(meta({7, 2}), 3);
    QCOMPARE(pieces.size(), size_t(3));
    check(pieces[2], {1, 2}, DType::F32);
    check(ops::chunk(meta({2, 6}), 4, 1)[0], {2, 2}, DType::F32);
    check(ops::pad(meta({2, 3, 4}), {1, 2, 2, 1}, "reflect"), {2, 6, 7}, DType::F32);
    check(ops::gather(meta({3, 4}), 1, meta({3, 9}, DType::I64)), {3, 9}, DType::F32);
    check(ops::scatterAdd(meta({3, 4}, DType::F16), 0, meta({5, 4}, DType::I64), meta({5, 4}, DType::F16)), {3, 4},
          DType::F16);
    check(ops::indexSelect(meta({3, 4}), 0, meta({7}, DType::I32)), {7, 4}, DType::F32);
    check(ops::embedding(meta({100, 16}, DType::BF16), meta({4, 5}, DType::I64)), {4, 5, 16}, DType::BF16);
    check(ops::triu(meta({2, 3, 3}), 1), {2, 3, 3}, DType::F32);
    check(ops::repeat(meta({2, 3}), {2, 1, 4}), {2, 2, 12}, DType::F32);
    check(ops::flip(meta({2, 3}), {0}), {2, 3}, DType::F32);
    const auto [v, i] = ops::topk(meta({4, 10}), 3);
    check(v, {4, 3}, DType::F32);
    check(i, {4, 3}, DType::I64);
    // Shape rules run on meta tensors too.
    FS_EXPECT_ERROR(ops::pad(meta({2, 3}), {3, 3}, "reflect"), "must be smaller than its size 3");
    FS_EXPECT_ERROR(ops::cat({meta({2, 3}), meta({3, 3})}, 1), "sizes of tensors must match");
    FS_EXPECT_ERROR(ops::topk(meta({2, 3}), 4), "aten.topk: k (4) is out of range");
}

void TestCoreMovement::opKinds()
{
    const OpRegistry &r = OpRegistry::instance();
    for (const char *name : {"aten.split", "aten.split_with_sizes", "aten.chunk"}) {
        QCOMPARE(r.get(name).kind, OpKind::View);
        QCOMPARE(r.get(name).schema.returns.at(0), ArgType::TensorList);
    }
    QCOMPARE(r.get("aten.topk").schema.returns.size(), size_t(2));
    for (const char *name : {"aten.cat", "aten.stack", "aten.pad", "aten.gather", "aten.scatter_add",
                             "aten.index_select", "aten.embedding", "aten.triu", "aten.tril", "aten.repeat",
                             "aten.flip", "aten.topk"})
        QVERIFY2(r.get(name).cpu, name);
    // cat reads every listed tensor, which the default cost cannot see.
    const Tensor a = zeros({4, 8}), b = zeros({4, 2});
    const Tensor out = ops::cat({a, b}, 1);
    const OpCost cost
        = r.get("aten.cat").estimateCost({TensorList {a, b}, int64_t(1)}, std::span<const Tensor>(&out, 1));
    QCOMPARE(cost.bytesRead, 40.0 * 4);
    QCOMPARE(cost.bytesWritten, 40.0 * 4);
}

QTEST_GUILESS_MAIN(TestCoreMovement)
#include "tst_core_movement.moc"
