// The Memory view on a real recording (the mlp, compiled, with
// --profile-memory, made by the fusescope binary) and on hand-made runs with
// known allocations: live allocations against a brute-force recount (frees,
// reused addresses, several devices), largest first, age, the size
// histogram, the planned peak, the chart's click-to-time mapping, the keys,
// the device selector, the signals, Ctrl+C and the empty states.
#include "profiler/memoryanalysis.h"
#include "profiler/tracereader.h"
#include "views/memorychart.h"
#include "views/memoryhistogram.h"
#include "views/memorymodel.h"
#include "views/memoryview.h"
#include "views/timelinemodel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <tuple>

using namespace fusescope;

Q_DECLARE_METATYPE(std::shared_ptr<const Document>)

namespace {

std::shared_ptr<const Document> documentOf(profiler::Trace trace)
{
    auto doc = std::make_shared<Document>();
    setRecordedRun(*doc, std::make_shared<const profiler::Trace>(std::move(trace)));
    return doc;
}

// Records the compiled mlp with every allocation; null (with `why`) when it cannot.
std::shared_ptr<const Document> recordMlp(const QString &dir, QString *why)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    const QString path = dir + QStringLiteral("/m.fstrace");
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FUSESCOPE_BINARY),
            {QStringLiteral("profile"), QStringLiteral("mlp"), QStringLiteral("--compile"), QStringLiteral("--steps"),
             QStringLiteral("2"), QStringLiteral("--profile-memory"), QStringLiteral("-o"), path});
    if (!p.waitForFinished(300000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *why = QString::fromUtf8(p.readAllStandardError()) + p.errorString();
        return nullptr;
    }
    std::optional<profiler::Trace> trace = profiler::TraceReader(path.toStdString()).load();
    return trace ? documentOf(std::move(*trace)) : nullptr;
}

struct Alloc {
    int64_t time;
    uint64_t address;
    int64_t bytes; // < 0: free
    int device;
    int op; // index into kOps, -1: none
};

const char *const kOps[] = {"aten.mm", "aten.gelu", "fused_kernel_0"};

// A run with three ops and `allocs`, totals after each event kept per device
// as an allocator would.
profiler::Trace handMade(const std::vector<Alloc> &allocs, std::vector<int64_t> plannedPeaks = {})
{
    profiler::Trace trace;
    profiler::Run &run = trace.runs.emplace_back();
    for (int i = 0; i < 3; ++i) {
        profiler::Event e;
        e.name = trace.strings.intern(kOps[i]);
        e.start = i * 100;
        e.duration = 100;
        run.events.push_back(e);
    }
    std::map<int, int64_t> allocated, reserved;
    for (const Alloc &a : allocs) {
        profiler::Allocation r;
        r.time = a.time;
        r.address = a.address;
        r.bytes = a.bytes;
        r.device = int16_t(a.device);
        r.op = a.op < 0 ? profiler::EventId() : profiler::EventId(uint32_t(a.op));
        allocated[a.device] += a.bytes;
        reserved[a.device] = std::max(reserved[a.device], (allocated[a.device] + 1023) / 1024 * 1024);
        r.allocatedAfter = allocated[a.device];
        r.reservedAfter = reserved[a.device];
        run.allocations.push_back(r);
    }
    for (int64_t peak : plannedPeaks) {
        compiler::CompileStage s;
        s.name = "stage";
        s.stats.plannedPeak = peak;
        run.stages.push_back(s);
    }
    run.summary.durationNs = allocs.empty() ? 0 : allocs.back().time + 10;
    return trace;
}

// Frees, a reused address (freed and without a free), other devices, a
// free with no allocation before it, two events at one time.
std::vector<Alloc> tricky()
{
    return {{10, 0x10, 100, -1, 0}, {12, 0x999, -64, -1, -1}, {20, 0x20, 300, -1, 1},  {20, 0x30, 3, -1, -1},
            {25, 0x10, 1000, 0, 2}, {30, 0x10, -100, -1, 0},  {40, 0x10, 200, -1, 1},  {45, 0x20, 7, -1, 2},
            {50, 0x40, 1, -1, 0},   {50, 0x30, -3, -1, 0},    {55, 0x10, -1000, 0, 2}, {60, 0x50, 2, 1, -1},
            {70, 0x40, -1, -1, -1}, {80, 0x60, 300, -1, 0}};
}

using LiveKey = std::tuple<uint64_t, int64_t, int64_t, uint32_t>; // address, bytes, allocTime, op

// The definition, counted the slow way: an allocation is live at t when no
// later event (a free or a new allocation) at its address and device has
// happened by t.
std::vector<LiveKey> bruteLive(const profiler::Run &run, int device, int64_t t)
{
    std::vector<LiveKey> live;
    const auto &all = run.allocations;
    for (size_t i = 0; i < all.size(); ++i) {
        const profiler::Allocation &a = all[i];
        if (a.bytes <= 0 || a.device != device || a.time > t)
            continue;
        bool ended = false;
        for (size_t k = i + 1; k < all.size(); ++k)
            ended = ended || (all[k].device == device && all[k].address == a.address && all[k].time <= t);
        if (!ended)
            live.emplace_back(a.address, a.bytes, a.time, a.op.value);
    }
    std::sort(live.begin(), live.end(), [](const LiveKey &x, const LiveKey &y) {
        return std::make_tuple(-std::get<1>(x), std::get<2>(x), std::get<0>(x))
            < std::make_tuple(-std::get<1>(y), std::get<2>(y), std::get<0>(y));
    });
    return live;
}

std::vector<LiveKey> keysOf(const std::vector<profiler::LiveAllocation> &live)
{
    std::vector<LiveKey> keys;
    for (const profiler::LiveAllocation &a : live)
        keys.emplace_back(a.address, a.bytes, a.allocTime, a.op.value);
    return keys;
}

const profiler::MemoryStats *memoryOf(const Document &doc, int device)
{
    for (const profiler::MemoryStats &m : doc.stats->memory)
        if (m.device == device)
            return &m;
    return nullptr;
}

int64_t lastPlannedPeak(const profiler::Run &run)
{
    int64_t peak = -1;
    for (const compiler::CompileStage &s : run.stages)
        peak = s.stats.plannedPeak >= 0 ? s.stats.plannedPeak : peak;
    return peak;
}

struct ViewFixture {
    MemoryView view;
    explicit ViewFixture(std::shared_ptr<const Document> doc)
    {
        view.resize(1000, 700);
        view.setDocument(std::move(doc));
        view.show();
    }
};

} // namespace

class TestMemory : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void liveMatchesBruteForce_data();
    void liveMatchesBruteForce();
    void liveOnRecording();
    void largestFirstAndAge();
    void histogram();
    void histogramOnRecording();
    void plannedPeak_data();
    void plannedPeak();
    void plannedPeakOnRecording();
    void clickSelectsTime_data();
    void clickSelectsTime();
    void keys();
    void devices();
    void signals_();
    void copyTsv();
    void models();
    void emptyState_data();
    void emptyState();
    void millionSamples();

private:
    QTemporaryDir m_dir;
    std::shared_ptr<const Document> m_recording;
};

void TestMemory::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QString why;
    m_recording = recordMlp(m_dir.path(), &why);
    QVERIFY2(m_recording, qPrintable(why));
    QVERIFY(m_recording->stats);
    QVERIFY2(memoryOf(*m_recording, -1), "the recording holds no CPU memory");
}

void TestMemory::liveMatchesBruteForce_data()
{
    QTest::addColumn<int>("device");
    QTest::addColumn<qint64>("time");
    for (int device : {-1, 0, 1})
        for (qint64 t : {0, 10, 11, 12, 20, 25, 30, 35, 40, 45, 50, 55, 60, 70, 80, 1000})
            QTest::addRow("device %d at %lld", device, t) << device << t;
}

void TestMemory::liveMatchesBruteForce()
{
    QFETCH(int, device);
    QFETCH(qint64, time);
    const profiler::Trace trace = handMade(tricky());
    const profiler::Run &run = trace.runs[0];
    const auto live = profiler::liveAllocationsAt(trace, run, device, time);
    QCOMPARE(keysOf(live), bruteLive(run, device, time));
    for (const profiler::LiveAllocation &a : live)
        QCOMPARE(QString::fromStdString(a.opName), a.op.valid() ? QString::fromLatin1(kOps[a.op.value]) : QString());
}

void TestMemory::liveOnRecording()
{
    const profiler::Run &run = m_recording->trace->runs[0];
    const profiler::MemoryStats &m = *memoryOf(*m_recording, -1);
    std::vector<int64_t> times {0, m.peakAllocatedTime, m.timeline.front().time, m.timeline.back().time};
    for (int i = 1; i < 8; ++i)
        times.push_back(m.timeline[m.timeline.size() * size_t(i) / 8].time);
    for (int64_t t : times) {
        const auto live = profiler::liveAllocationsAt(*m_recording->trace, run, -1, t);
        QCOMPARE(keysOf(live), bruteLive(run, -1, t));
    }
    // Something is live at the peak, and no more than the allocator handed out.
    const auto atPeak = profiler::liveAllocationsAt(*m_recording->trace, run, -1, m.peakAllocatedTime);
    QVERIFY(!atPeak.empty());
    int64_t sum = 0;
    for (const auto &a : atPeak)
        sum += a.bytes;
    QVERIFY(sum <= m.peakAllocated);
}

void TestMemory::largestFirstAndAge()
{
    ViewFixture f(documentOf(handMade(tricky())));
    f.view.setDevice(-1);
    f.view.selectTime(48);
    QAbstractItemModel *table = f.view.liveTable()->model();
    // Live at 48: 0x10 (200 @40), 0x20 (7 @45, reused without a free), 0x30 (3 @20).
    QCOMPARE(table->rowCount(), 3);
    const qint64 sizes[] = {200, 7, 3};
    const qint64 ages[] = {8, 3, 28};
    for (int r = 0; r < 3; ++r) {
        QCOMPARE(table->index(r, LiveAllocationModel::SizeColumn).data(LiveAllocationModel::SortRole).toLongLong(),
                 sizes[r]);
        QCOMPARE(table->index(r, LiveAllocationModel::AgeColumn).data(LiveAllocationModel::SortRole).toLongLong(),
                 ages[r]);
        QCOMPARE(table->index(r, LiveAllocationModel::AgeColumn).data().toString(),
                 QString::fromStdString(formatDuration(ages[r])));
    }
    QCOMPARE(table->index(0, LiveAllocationModel::MadeByColumn).data().toString(), QStringLiteral("aten.gelu"));
    QCOMPARE(table->index(0, LiveAllocationModel::AddressColumn).data().toString(), QStringLiteral("0x10"));
    QCOMPARE(table->index(0, LiveAllocationModel::SizeColumn).data().toString(), QStringLiteral("200 B"));
    // The user's sort holds across a new time, and back.
    f.view.liveTable()->sortByColumn(LiveAllocationModel::AgeColumn, Qt::DescendingOrder);
    QCOMPARE(table->index(0, LiveAllocationModel::AgeColumn).data(LiveAllocationModel::SortRole).toLongLong(), 28LL);
    f.view.liveTable()->sortByColumn(LiveAllocationModel::SizeColumn, Qt::DescendingOrder);
    QCOMPARE(table->index(0, LiveAllocationModel::SizeColumn).data(LiveAllocationModel::SortRole).toLongLong(), 200LL);
}

void TestMemory::histogram()
{
    const profiler::Trace trace = handMade(tricky());
    const profiler::SizeHistogram h = profiler::sizeHistogram(trace.runs[0], -1);
    // CPU sizes: 100, 300, 3, 200, 7, 1, 300 -> buckets 1 .. 256.
    QCOMPARE(h.allocations, int64_t(7));
    QCOMPARE(h.buckets.size(), size_t(9));
    const int64_t counts[] = {1, 1, 1, 0, 0, 0, 1, 1, 2};
    int64_t sum = 0;
    for (size_t k = 0; k < h.buckets.size(); ++k) {
        QCOMPARE(h.buckets[k].lowerBytes, int64_t(1) << k);
        QCOMPARE(h.buckets[k].count, counts[k]);
        sum += h.buckets[k].count;
    }
    QCOMPARE(sum, h.allocations);
    QCOMPARE(h.buckets[8].totalBytes, int64_t(600));
    QCOMPARE(profiler::sizeHistogram(trace.runs[0], 1).buckets.size(), size_t(1));
    QVERIFY(profiler::sizeHistogram(trace.runs[0], 7).buckets.empty());
    ViewFixture f(documentOf(handMade(tricky())));
    f.view.setDevice(-1);
    QCOMPARE(f.view.histogram()->histogram().allocations, int64_t(7));
    QVERIFY(f.view.histogram()->describeBucket(8).startsWith(QStringLiteral("256 B – 512 B: 2 allocations")));
}

void TestMemory::histogramOnRecording()
{
    const profiler::Run &run = m_recording->trace->runs[0];
    for (int device : profiler::allocationDevices(run)) {
        const profiler::SizeHistogram h = profiler::sizeHistogram(run, device);
        const auto count
            = std::count_if(run.allocations.begin(), run.allocations.end(),
                            [&](const profiler::Allocation &a) { return a.device == device && a.bytes > 0; });
        int64_t sum = 0;
        for (const profiler::SizeBucket &b : h.buckets) {
            sum += b.count;
            QVERIFY(b.totalBytes >= b.count * b.lowerBytes
                    && b.totalBytes < std::max<int64_t>(1, b.count * b.upperBytes()));
        }
        QCOMPARE(sum, int64_t(count));
        QCOMPARE(h.allocations, int64_t(count));
    }
}

void TestMemory::plannedPeak_data()
{
    QTest::addColumn<QList<qint64>>("peaks");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("eager") << QList<qint64> {} << qint64(-1);
    QTest::newRow("before plan-memory") << QList<qint64> {-1, -1} << qint64(-1);
    QTest::newRow("the last that has one") << QList<qint64> {-1, 5000, 7000, -1} << qint64(7000);
    QTest::newRow("zero") << QList<qint64> {0} << qint64(0);
}

void TestMemory::plannedPeak()
{
    QFETCH(QList<qint64>, peaks);
    QFETCH(qint64, expected);
    const profiler::Trace trace = handMade(tricky(), std::vector<int64_t>(peaks.begin(), peaks.end()));
    QCOMPARE(qint64(profiler::plannedPeak(trace.runs[0])), expected);
    ViewFixture f(documentOf(trace));
    QCOMPARE(qint64(f.view.chart()->plannedPeak()), expected);
    QCOMPARE(f.view.chart()->plannedPeakLabel().isEmpty(), expected < 0);
    QCOMPARE(f.view.summaryText().contains(QStringLiteral("planned")), expected >= 0);
}

void TestMemory::plannedPeakOnRecording()
{
    const int64_t expected = lastPlannedPeak(m_recording->trace->runs[0]);
    QVERIFY2(expected > 0, "the compiled mlp has no memory plan");
    ViewFixture f(m_recording);
    QCOMPARE(f.view.chart()->plannedPeak(), expected);
    QVERIFY(f.view.chart()->plannedPeakLabel().contains(formatBytes(double(expected))));
    QVERIFY(f.view.summaryText().contains(formatBytes(double(expected))));
    // The peak marked is the statistics' peak.
    const profiler::MemoryStats &m = *memoryOf(*m_recording, f.view.device());
    // Set against the plan: the peak above what was live when the run began.
    int64_t atStart = -1;
    for (const profiler::Allocation &a : m_recording->trace->runs[0].allocations) {
        if (a.device == f.view.device() && atStart < 0)
            atStart = a.allocatedAfter - a.bytes;
    }
    QVERIFY(atStart > 0); // the parameters and inputs
    QVERIFY2(f.view.summaryText().contains(formatBytes(double(m.peakAllocated - atStart))),
             qPrintable(f.view.summaryText()));
    QVERIFY(f.view.chart()->peakLabel().contains(formatBytes(double(m.peakAllocated))));
    QCOMPARE(f.view.chart()->cursorTime(), m.peakAllocatedTime);
}

void TestMemory::clickSelectsTime_data()
{
    QTest::addColumn<std::shared_ptr<const Document>>("document");
    QTest::addColumn<double>("fraction");
    const auto small = documentOf(handMade(tricky()));
    for (double fr : {0.0, 0.37, 0.81, 1.0}) {
        QTest::addRow("hand-made %.2f", fr) << small << fr;
        QTest::addRow("recording %.2f", fr) << m_recording << fr;
    }
}

void TestMemory::clickSelectsTime()
{
    QFETCH(std::shared_ptr<const Document>, document);
    QFETCH(double, fraction);
    ViewFixture f(document);
    QVERIFY(QTest::qWaitForWindowExposed(&f.view));
    MemoryChart *chart = f.view.chart();
    const profiler::Run &run = document->trace->runs[0];
    const profiler::MemoryStats &m = *memoryOf(*document, f.view.device());
    const int64_t end = std::max(run.summary.durationNs, m.timeline.back().time);
    QCOMPARE(chart->endNs(), end);
    const QRectF plot = chart->plotArea();
    QVERIFY(plot.width() > 100);
    const int x = int(std::lround(plot.left() + fraction * plot.width()));
    const int64_t expected = std::clamp<int64_t>(std::llround((x - plot.left()) / plot.width() * double(end)), 0, end);
    QTest::mouseClick(chart, Qt::LeftButton, {}, QPoint(x, int(plot.center().y())));
    QCOMPARE(chart->cursorTime(), expected);
    auto *model = static_cast<LiveAllocationModel *>(f.view.liveModel());
    QCOMPARE(model->timeNs(), expected);
    QCOMPARE(size_t(model->rowCount()), bruteLive(run, f.view.device(), expected).size());
}

void TestMemory::keys()
{
    const auto doc = documentOf(handMade(tricky()));
    ViewFixture f(doc);
    MemoryChart *chart = f.view.chart();
    f.view.setDevice(-1);
    f.view.selectTime(20);
    chart->setFocus();
    auto *model = static_cast<LiveAllocationModel *>(f.view.liveModel());
    QTest::keyClick(chart, Qt::Key_Right);
    QCOMPARE(chart->cursorTime(), int64_t(30)); // the next allocation or free
    QCOMPARE(model->timeNs(), int64_t(30));
    QTest::keyClick(chart, Qt::Key_Left);
    QTest::keyClick(chart, Qt::Key_Left);
    QCOMPARE(chart->cursorTime(), int64_t(12));
    QTest::keyClick(chart, Qt::Key_End);
    QCOMPARE(model->timeNs(), chart->endNs());
    QTest::keyClick(chart, Qt::Key_P);
    QCOMPARE(model->timeNs(), memoryOf(*doc, -1)->peakAllocatedTime);
    QSignalSpy frames(&f.view, &MemoryView::timeRangeRequested);
    QTest::keyClick(chart, Qt::Key_Return);
    QCOMPARE(frames.size(), 1);
    QVERIFY(frames[0][0].toLongLong() <= model->timeNs() && model->timeNs() <= frames[0][1].toLongLong());
}

void TestMemory::devices()
{
    const profiler::Trace trace = handMade(tricky());
    ViewFixture f(documentOf(trace));
    QComboBox *box = f.view.deviceSelector();
    QCOMPARE(box->count(), 3);
    QVERIFY(box->isVisible());
    QCOMPARE(f.view.device(), 0); // a GPU first
    f.view.selectTime(30);
    QCOMPARE(f.view.liveModel()->rowCount(), 1);
    box->setCurrentIndex(box->findData(1));
    QCOMPARE(f.view.device(), 1);
    f.view.setDevice(5); // not in the run
    QCOMPARE(f.view.device(), 1);
    f.view.setDevice(-1);
    QCOMPARE(box->currentData().toInt(), -1);
    f.view.selectTime(30);
    QCOMPARE(size_t(f.view.liveModel()->rowCount()), bruteLive(trace.runs[0], -1, 30).size());
    // One device: no selector.
    ViewFixture one(documentOf(handMade({{1, 0x1, 8, -1, -1}})));
    QVERIFY(!one.view.deviceSelector()->isVisible());
    QCOMPARE(one.view.device(), -1);
}

void TestMemory::signals_()
{
    ViewFixture f(documentOf(handMade(tricky())));
    QVERIFY(QTest::qWaitForWindowExposed(&f.view));
    f.view.setDevice(-1);
    f.view.selectTime(48);
    QSignalSpy events(&f.view, &MemoryView::eventRequested);
    QTableView *table = f.view.liveTable();
    const QModelIndex first = table->model()->index(0, 0);
    const QPoint centre = table->visualRect(first).center();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, centre);
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, centre);
    QCOMPARE(events.size(), 1);
    QCOMPARE(events[0][0].toUInt(), 1u); // 0x10 at 40, made by aten.gelu
    QSignalSpy frames(&f.view, &MemoryView::timeRangeRequested);
    MemoryChart *chart = f.view.chart();
    const QRectF plot = chart->plotArea();
    const int x = int(plot.left() + plot.width() / 2);
    QTest::mouseDClick(chart, Qt::LeftButton, {}, QPoint(x, int(plot.center().y())));
    QCOMPARE(frames.size(), 1);
    const int64_t t = chart->timeAt(x);
    QVERIFY(frames[0][0].toLongLong() <= t && t <= frames[0][1].toLongLong());
    QVERIFY(frames[0][0].toLongLong() < frames[0][1].toLongLong());
}

void TestMemory::copyTsv()
{
    ViewFixture f(documentOf(handMade(tricky())));
    f.view.setDevice(-1);
    f.view.selectTime(48);
    QTableView *table = f.view.liveTable();
    QApplication::clipboard()->clear();
    table->setFocus();
    table->selectRow(0);
    table->selectionModel()->select(table->model()->index(1, 0),
                                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QTest::keyClick(table, Qt::Key_C, Qt::ControlModifier);
    const QStringList lines = QApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines[0], QStringLiteral("Size\tAddress\tMade by\tAge\tAllocated at"));
    QVERIFY(lines[1].startsWith(QStringLiteral("200 B\t0x10\taten.gelu\t")));
}

void TestMemory::models()
{
    LiveAllocationModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const profiler::Trace trace = handMade(tricky());
    for (int64_t t : {0, 20, 48, 80})
        model.setAllocations(profiler::liveAllocationsAt(trace, trace.runs[0], -1, t), t);
    QCOMPARE(model.rowCount(), int(bruteLive(trace.runs[0], -1, 80).size()));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    // The view's own model and proxy, through a recording's clicks.
    ViewFixture f(m_recording);
    QAbstractItemModelTester sourceTester(f.view.liveModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(f.view.liveTable()->model(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    const profiler::MemoryStats &m = *memoryOf(*m_recording, f.view.device());
    for (size_t i = 0; i < m.timeline.size(); i += std::max<size_t>(1, m.timeline.size() / 5))
        f.view.selectTime(m.timeline[i].time);
    f.view.filterEdit()->setText(QStringLiteral("mm"));
    f.view.filterEdit()->clear();
    f.view.setDocument(nullptr);
    QCOMPARE(f.view.liveModel()->rowCount(), 0);
}

void TestMemory::emptyState_data()
{
    QTest::addColumn<std::shared_ptr<const Document>>("document");
    QTest::addColumn<QString>("message");
    auto noTrace = std::make_shared<Document>();
    auto noRun = std::make_shared<Document>();
    noRun->trace = std::make_shared<const profiler::Trace>();
    auto noStats = std::make_shared<Document>();
    noStats->trace = std::make_shared<const profiler::Trace>(handMade(tricky()));
    const QString noRecording = QStringLiteral("This file holds no recorded run");
    QTest::newRow("no document") << std::shared_ptr<const Document>() << noRecording;
    QTest::newRow("no trace") << std::shared_ptr<const Document>(noTrace) << noRecording;
    QTest::newRow("no run") << std::shared_ptr<const Document>(noRun) << noRecording;
    QTest::newRow("no allocations") << documentOf(handMade({}))
                                    << QStringLiteral("This run recorded no memory: profile with --profile-memory");
    QTest::newRow("no statistics") << std::shared_ptr<const Document>(noStats)
                                   << QStringLiteral("The statistics of this run are not available");
    QTest::newRow("memory") << documentOf(handMade(tricky())) << QString();
}

void TestMemory::emptyState()
{
    QFETCH(std::shared_ptr<const Document>, document);
    QFETCH(QString, message);
    ViewFixture f(document);
    QCOMPARE(f.view.isEmptyStateShown(), !message.isEmpty());
    QCOMPARE(f.view.emptyStateText(), message);
    QCOMPARE(f.view.liveTable()->isVisible(), message.isEmpty());
    // Nothing to act on must not crash.
    f.view.selectTime(42);
    f.view.setDevice(-1);
    f.view.setDevice(3);
    QCOMPARE(f.view.liveModel()->rowCount() > 0, message.isEmpty());
    // Going back to nothing clears everything.
    f.view.setDocument(nullptr);
    QVERIFY(f.view.isEmptyStateShown());
    QCOMPARE(f.view.liveModel()->rowCount(), 0);
}

// Drawing folds samples per pixel column, and a click costs one pass.
void TestMemory::millionSamples()
{
    std::vector<Alloc> allocs;
    const int n = 1'000'000;
    allocs.reserve(n);
    for (int i = 0; i < n; ++i) {
        const uint64_t address = 0x1000 + uint64_t(i / 2 % 4096) * 64;
        allocs.push_back({int64_t(i) * 10, address, i % 2 ? -64 : 64 + i % 4000, -1, -1});
    }
    QElapsedTimer timer;
    timer.start();
    ViewFixture f(documentOf(handMade(allocs)));
    const qint64 loadMs = timer.restart();
    QVERIFY(QTest::qWaitForWindowExposed(&f.view));
    f.view.chart()->grab();
    const qint64 paintMs = timer.restart();
    f.view.selectTime(5'000'000);
    const qint64 selectMs = timer.elapsed();
    qInfo("statistics %lld ms, first paint %lld ms, a click %lld ms", loadMs, paintMs, selectMs);
    // Each block is freed 10 ns after it was made: one live at most.
    QCOMPARE(f.view.liveModel()->rowCount(), 1);
    QCOMPARE(f.view.liveModel()->index(0, 0).data(LiveAllocationModel::SortRole).toLongLong(), 64LL + 500'000 % 4000);
    QVERIFY(f.view.chart()->foldedPointCount() <= 8 * int(f.view.chart()->plotArea().width()) + 8);
    f.view.selectTime(5'000'010);
    QCOMPARE(f.view.liveModel()->rowCount(), 0);
    f.view.selectTime(5'000'000 - 10);
    QCOMPARE(f.view.liveModel()->rowCount(), 0);
}

QTEST_MAIN(TestMemory)
#include "tst_views_memory.moc"
