// View ops share storage and compute the same geometry as PyTorch.
#include "optest.h"

using namespace fusescope;
using namespace fusescope::test;

namespace {

Tensor iota(const Shape &shape)
{
    return arange(0.0, double(numelOf(shape))).reshape(shape);
}

// Reference: element [i0, i1, ...] of a permutation of iota(shape).
std::vector<double> permutedRef(const Shape &shape, const Shape &perm)
{
    Shape outShape(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
        outShape[i] = shape[static_cast<size_t>(perm[i])];
    const Shape inStrides = contiguousStrides(shape);
    std::vector<double> out;
    Shape idx(perm.size(), 0);
    for (int64_t n = 0; n < numelOf(outShape); ++n) {
        int64_t off = 0;
        for (size_t d = 0; d < perm.size(); ++d)
            off += idx[d] * inStrides[static_cast<size_t>(perm[d])];
        out.push_back(double(off));
        for (size_t d = perm.size(); d-- > 0;) {
            if (++idx[d] < outShape[d])
                break;
            idx[d] = 0;
        }
    }
    return out;
}

} // namespace

class TestViews : public QObject
{
    Q_OBJECT
private slots:
    void viewSharesStorage()
    {
        const Tensor x = iota({2, 3, 4});
        const Tensor v = x.view({6, -1});
        QCOMPARE(v.sizes(), (Shape{6, 4}));
        QVERIFY(v.sharesStorageWith(x));
        fill_(v.select(0, 0), 100);
        QCOMPARE(x.toDoubleVector()[0], 100.0);
        FS_EXPECT_ERROR(x.view({5, -1}), "aten.view: shape [5,-1] is invalid for input of size 24");
        FS_EXPECT_ERROR(x.view({-1, -1}), "only one dimension can be -1");
        FS_EXPECT_ERROR(x.transpose(0, 2).view({24}), "cannot be viewed as [24]; use reshape");
    }

    void viewOfNonContiguousWherePossible()
    {
        // Splitting a dim of a transposed tensor is a view; merging across the transpose is not.
        const Tensor x = iota({4, 6}).t(); // [6,4] strides [1,6]
        const Tensor v = x.view({2, 3, 4});
        QVERIFY(v.sharesStorageWith(x));
        QCOMPARE(v.strides(), (Shape{3, 1, 6}));
        FS_COMPARE_VALUES(v, (Shape{2, 3, 4}), x.toDoubleVector(), 0, 0);
    }

    void reshapeCopiesOnlyWhenNeeded()
    {
        const Tensor x = iota({3, 4});
        QVERIFY(x.reshape({4, 3}).sharesStorageWith(x));
        const Tensor r = x.t().reshape({12});
        QVERIFY(!r.sharesStorageWith(x));
        FS_COMPARE_VALUES(r, Shape{12}, permutedRef({3, 4}, {1, 0}), 0, 0);
        FS_COMPARE_VALUES(iota({}).reshape({1, 1}), (Shape{1, 1}), std::vector<double>{0}, 0, 0);
        FS_COMPARE_VALUES(iota({2, 0}).reshape({0, 5}), (Shape{0, 5}), std::vector<double>{}, 0, 0);
    }

    void permute_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<Shape>("perm");
        QTest::newRow("2d") << Shape{3, 5} << Shape{1, 0};
        QTest::newRow("3d") << Shape{2, 3, 4} << Shape{2, 0, 1};
        QTest::newRow("4d nchw->nhwc") << Shape{2, 3, 4, 5} << Shape{0, 2, 3, 1};
        QTest::newRow("negative dims") << Shape{2, 3, 4} << Shape{-1, -3, -2};
    }
    void permute()
    {
        QFETCH(Shape, shape);
        QFETCH(Shape, perm);
        Shape wrapped = perm;
        for (int64_t &d : wrapped)
            d = d < 0 ? d + int64_t(shape.size()) : d;
        const Tensor y = iota(shape).permute(perm);
        Shape outShape;
        for (int64_t d : wrapped)
            outShape.push_back(shape[static_cast<size_t>(d)]);
        FS_COMPARE_VALUES(y, outShape, permutedRef(shape, wrapped), 0, 0);
        FS_COMPARE_VALUES(y.contiguous(), outShape, permutedRef(shape, wrapped), 0, 0);
        QVERIFY(y.contiguous().isContiguous());
    }

    void permuteErrors()
    {
        FS_EXPECT_ERROR(iota({2, 3}).permute({0}), "aten.permute: 1 dims given for a tensor of rank 2");
        FS_EXPECT_ERROR(iota({2, 3}).permute({0, 0}), "aten.permute: dimension 0 repeats");
        FS_EXPECT_ERROR(iota({2, 3}).permute({0, 2}), "aten.permute: dimension 2 is out of range");
    }

    void sliceNarrowSelect()
    {
        const Tensor x = iota({4, 5});
        FS_COMPARE_VALUES(x.slice(1, 1, 5, 2), (Shape{4, 2}), (std::vector<double>{1, 3, 6, 8, 11, 13, 16, 18}), 0, 0);
        FS_COMPARE_VALUES(x.slice(0, -2, 100), (Shape{2, 5}), (std::vector<double>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}), 0, 0);
        FS_COMPARE_VALUES(x.slice(0, 3, 1), (Shape{0, 5}), std::vector<double>{}, 0, 0);
        FS_COMPARE_VALUES(x.narrow(1, 3, 2), (Shape{4, 2}), (std::vector<double>{3, 4, 8, 9, 13, 14, 18, 19}), 0, 0);
        FS_COMPARE_VALUES(x.select(1, -1), Shape{4}, (std::vector<double>{4, 9, 14, 19}), 0, 0);
        FS_EXPECT_ERROR(x.narrow(1, 3, 3), "aten.narrow: start 3 and length 3 exceed dimension 1 of size 5");
        FS_EXPECT_ERROR(x.select(0, 4), "aten.select: index 4 is out of range for dimension 0 of size 4");
        FS_EXPECT_ERROR(x.slice(0, 0, 2, 0), "aten.slice: step must be positive");
    }

    void expandSqueezeUnsqueezeFlatten()
    {
        const Tensor x = iota({3, 1});
        const Tensor e = x.expand({2, 3, 4});
        QCOMPARE(e.strides(), (Shape{0, 1, 0}));
        std::vector<double> ref;
        for (int b = 0; b < 2; ++b)
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 4; ++j)
                    ref.push_back(i);
        FS_COMPARE_VALUES(e, (Shape{2, 3, 4}), ref, 0, 0);
        QCOMPARE(x.expand({-1, 5}).sizes(), (Shape{3, 5}));
        FS_EXPECT_ERROR(x.expand({4, 4}), "aten.expand: shape [3,1] cannot be expanded to [4,4]");
        QCOMPARE(iota({1, 3, 1}).squeeze().sizes(), Shape{3});
        QCOMPARE(iota({1, 3, 1}).squeeze(-1).sizes(), (Shape{1, 3}));
        QCOMPARE(iota({1, 3, 1}).squeeze(1).sizes(), (Shape{1, 3, 1}));
        QCOMPARE(iota({3}).unsqueeze(0).sizes(), (Shape{1, 3}));
        QCOMPARE(iota({3}).unsqueeze(-1).sizes(), (Shape{3, 1}));
        QCOMPARE(iota({}).unsqueeze(0).sizes(), Shape{1});
        QCOMPARE(iota({2, 3, 4, 5}).flatten(1, 2).sizes(), (Shape{2, 12, 5}));
        QCOMPARE(iota({2, 3}).flatten().sizes(), Shape{6});
        QCOMPARE(iota({}).flatten().sizes(), Shape{1});
        FS_EXPECT_ERROR(iota({2, 3}).flatten(1, 0), "aten.flatten: start_dim 1 comes after end_dim 0");
    }

    void asStridedChecksBounds()
    {
        const Tensor x = iota({10});
        FS_COMPARE_VALUES(ops::asStrided(x, {3, 2}, {3, 1}, 1), (Shape{3, 2}), (std::vector<double>{1, 2, 4, 5, 7, 8}), 0, 0);
        FS_EXPECT_ERROR(ops::asStrided(x, {3, 2}, {4, 1}, 1), "aten.as_strided: size [3,2] with stride [4,1] reaches outside");
    }

    void viewsWorkOnMetaTensors()
    {
        const Tensor m = Tensor::empty({2, 3, 4}, DType::F32, kMeta);
        const Tensor v = m.permute({2, 0, 1}).reshape({4, 6}).slice(0, 1, 3).unsqueeze(0).expand({5, 2, 6});
        QVERIFY(v.isMeta());
        QCOMPARE(v.sizes(), (Shape{5, 2, 6}));
    }
};

QTEST_GUILESS_MAIN(TestViews)
#include "tst_core_views.moc"
