#include "core/runtime/threadpool.h"

#include <QTest>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace fusescope;

class TestThreadPool : public QObject
{
    Q_OBJECT
private slots:
    void coversEveryIndexOnce_data()
    {
        QTest::addColumn<qlonglong>("n");
        QTest::addColumn<qlonglong>("grain");
        QTest::newRow("empty") << 0ll << 1ll;
        QTest::newRow("one") << 1ll << 1ll;
        QTest::newRow("below grain") << 100ll << 1000ll;
        QTest::newRow("many chunks") << 100003ll << 7ll;
    }
    void coversEveryIndexOnce()
    {
        QFETCH(qlonglong, n);
        QFETCH(qlonglong, grain);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        parallelFor(0, n, grain, [&](int64_t b, int64_t e) {
            QVERIFY(b < e);
            for (int64_t i = b; i < e; ++i)
                hits[static_cast<size_t>(i)]++;
        });
        for (auto &h : hits)
            QCOMPARE(h.load(), 1);
    }

    void nestedCallsRunSerially()
    {
        std::atomic<int64_t> total{0};
        parallelFor(0, 64, 1, [&](int64_t b, int64_t e) {
            QVERIFY(inParallelRegion());
            for (int64_t i = b; i < e; ++i)
                parallelFor(0, 1000, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
        });
        QCOMPARE(total.load(), int64_t(64 * 1000));
        QVERIFY(!inParallelRegion());
    }

    void exceptionsReachTheCaller()
    {
        bool caught = false;
        try {
            parallelFor(0, 1000, 1, [](int64_t b, int64_t) {
                if (b == 0)
                    throw std::runtime_error("chunk failed");
            });
        } catch (const std::runtime_error &e) {
            caught = QByteArray(e.what()) == "chunk failed";
        }
        QVERIFY(caught);
        // The pool still works afterwards.
        std::atomic<int> n{0};
        parallelFor(0, 10, 1, [&](int64_t b, int64_t e) { n += int(e - b); });
        QCOMPARE(n.load(), 10);
    }

    void manyJobsInARow()
    {
        for (int round = 0; round < 2000; ++round) {
            std::atomic<int64_t> sum{0};
            parallelFor(0, 256, 1, [&](int64_t b, int64_t e) {
                int64_t s = 0;
                for (int64_t i = b; i < e; ++i)
                    s += i;
                sum += s;
            });
            QCOMPARE(sum.load(), int64_t(255 * 256 / 2));
        }
    }

    void resizing()
    {
        const int original = numThreads();
        setNumThreads(3);
        QCOMPARE(numThreads(), 3);
        std::atomic<int> n{0};
        parallelFor(0, 99, 1, [&](int64_t b, int64_t e) { n += int(e - b); });
        QCOMPARE(n.load(), 99);
        setNumThreads(original);
        QCOMPARE(numThreads(), original);
    }

    void cAbiEntryPoint()
    {
        std::atomic<int64_t> sum{0};
        fusescope_parallel_for(0, 1000, 10, [](void *ctx, int64_t b, int64_t e) {
            *static_cast<std::atomic<int64_t> *>(ctx) += e - b;
        }, &sum);
        QCOMPARE(sum.load(), int64_t(1000));
    }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "tst_core_threadpool.moc"
