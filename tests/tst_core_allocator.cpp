// The caching host allocator: alignment, size classes, reuse, statistics and
// the allocation events observers see.
#include "optest.h"

#include "core/runtime/observer.h"
#include "core/tensor/allocator.h"

using namespace fusescope;

namespace {

struct AllocLog : Observer {
    std::vector<AllocationEvent> events;
    void allocation(const AllocationEvent &e) override { events.push_back(e); }
};

} // namespace

class TestAllocator : public QObject
{
    Q_OBJECT
private slots:
    void sizeClasses_data()
    {
        QTest::addColumn<qulonglong>("bytes");
        QTest::addColumn<qulonglong>("klass");
        QTest::newRow("1") << 1ull << 64ull;
        QTest::newRow("64") << 64ull << 64ull;
        QTest::newRow("65") << 65ull << 128ull;
        QTest::newRow("257") << 257ull << 320ull;   // 256 / 4 = 64 step
        QTest::newRow("1000") << 1000ull << 1024ull;
        QTest::newRow("1025") << 1025ull << 1280ull;
        QTest::newRow("1M+1") << (1ull << 20) + 1 << (1ull << 20) + (1ull << 18);
    }
    void sizeClasses()
    {
        QFETCH(qulonglong, bytes);
        QFETCH(qulonglong, klass);
        QCOMPARE(qulonglong(CachingHostAllocator::sizeClass(bytes)), klass);
        QVERIFY(klass - bytes <= bytes / 4 + 64); // at most 25% lost to rounding
    }

    void alignedReusedAndCounted()
    {
        CachingHostAllocator alloc;
        void *a = alloc.allocate(1000);
        QCOMPARE(reinterpret_cast<uintptr_t>(a) % CachingHostAllocator::kAlignment, uintptr_t(0));
        AllocatorStats s = alloc.stats();
        QCOMPARE(s.allocatedBytes, int64_t(1024));
        QCOMPARE(s.reservedBytes, int64_t(1024));
        alloc.deallocate(a, 1000);
        s = alloc.stats();
        QCOMPARE(s.allocatedBytes, int64_t(0));
        QCOMPARE(s.reservedBytes, int64_t(1024)); // cached, still held
        void *b = alloc.allocate(1010);           // same class: served from the cache
        QCOMPARE(b, a);
        s = alloc.stats();
        QCOMPARE(s.cacheHits, int64_t(1));
        QCOMPARE(s.systemAllocations, int64_t(1));
        void *c = alloc.allocate(5000);
        s = alloc.stats();
        QCOMPARE(s.peakAllocatedBytes, int64_t(1024 + 5120));
        alloc.deallocate(b, 1010);
        alloc.deallocate(c, 5000);
        alloc.emptyCache();
        s = alloc.stats();
        QCOMPARE(s.reservedBytes, int64_t(0));
        QCOMPARE(s.allocations, int64_t(3));
        QCOMPARE(s.frees, int64_t(3));
        alloc.resetPeakStats();
        QCOMPARE(alloc.stats().peakAllocatedBytes, int64_t(0));
        QCOMPARE(alloc.allocate(0), nullptr);
    }

    void tensorsReportToObservers()
    {
        AllocLog log;
        const int64_t before = hostAllocator().stats().allocatedBytes;
        observers::add(&log);
        {
            Tensor t = Tensor::empty({1000}, DType::F32);
            QCOMPARE(hostAllocator().stats().allocatedBytes, before + 4096);
        }
        observers::remove(&log);
        QCOMPARE(int(log.events.size()), 2);
        const AllocationEvent &alloc = log.events[0], &free = log.events[1];
        QCOMPARE(alloc.bytes, int64_t(4096));
        QCOMPARE(free.bytes, int64_t(-4096));
        QCOMPARE(alloc.address, free.address);
        QCOMPARE(alloc.allocatedAfter, before + 4096);
        QCOMPARE(free.allocatedAfter, before);
        QVERIFY(alloc.reservedAfter >= alloc.allocatedAfter);
        QVERIFY(alloc.device == kCPU);
    }

    void viewsDoNotAllocateAndKeepStorageAlive()
    {
        const int64_t before = hostAllocator().stats().allocatedBytes;
        Tensor view;
        {
            const Tensor t = Tensor::empty({64, 64});
            view = t.t().slice(0, 1, 3);
        }
        QCOMPARE(hostAllocator().stats().allocatedBytes, before + 64 * 64 * 4);
        view = Tensor();
        QCOMPARE(hostAllocator().stats().allocatedBytes, before);
    }
};

QTEST_GUILESS_MAIN(TestAllocator)
#include "tst_core_allocator.moc"
