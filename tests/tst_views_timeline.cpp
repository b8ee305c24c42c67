// The timeline: the model's binary search and level-of-detail folding against
// brute force on seeded random traces, lanes, ruler ticks and range
// statistics on hand-made fixtures; then the widget — zoom keys, click,
// Shift-drag, search, collapse, pin, a rendered frame — on a synthetic run
// and on a real imported Kineto trace.
#include "profiler/importer.h"
#include "views/timelinemodel.h"
#include "views/rangestatsview.h"
#include "views/timelinerangestats.h"
#include "views/timelineview.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace fusescope;
using profiler::Event;
using profiler::EventId;
using profiler::EventKind;
using profiler::TrackKind;

Q_DECLARE_METATYPE(profiler::EventId)

namespace {

// Builds runs by hand: tracks, then events in (track, start) order.
struct TraceBuilder {
    std::shared_ptr<profiler::Trace> trace = std::make_shared<profiler::Trace>();
    profiler::Run &run()
    {
        if (trace->runs.empty())
            trace->runs.emplace_back();
        return trace->runs.back();
    }
    profiler::TrackId track(TrackKind kind, const std::string &name, int64_t pid = 1)
    {
        profiler::Track t;
        t.id = profiler::TrackId(uint16_t(run().tracks.size()));
        t.kind = kind;
        t.name = trace->strings.intern(name);
        t.pid = pid;
        t.tid = int64_t(run().tracks.size());
        run().tracks.push_back(t);
        return t.id;
    }
    EventId event(profiler::TrackId track, const std::string &name, int64_t start, int64_t duration, int depth = 0,
                  EventKind kind = EventKind::Op)
    {
        Event e;
        e.start = start;
        e.duration = duration;
        e.name = trace->strings.intern(name);
        e.track = track;
        e.kind = kind;
        e.depth = uint8_t(depth);
        run().events.push_back(e);
        return EventId(uint32_t(run().events.size() - 1));
    }
};

// Log-uniform durations from 1 ns to 1 ms, so every zoom level has both
// events that fold and events that draw alone.
int64_t logUniform(std::mt19937_64 &rng, double lo, double hi)
{
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    return int64_t(std::exp(u(rng)));
}

void nested(TraceBuilder &b, std::mt19937_64 &rng, profiler::TrackId track, int64_t start, int64_t end, int depth)
{
    int64_t t = start;
    while (depth < 4) {
        t += logUniform(rng, 1, std::max<double>(2, double(end - start) / 4));
        const int64_t duration = logUniform(rng, 1, std::max<double>(2, double(end - t)));
        if (t + duration > end)
            break;
        b.event(track, "op" + std::to_string(rng() % 23), t, duration, depth);
        if (duration > 50)
            nested(b, rng, track, t, t + duration, depth + 1);
        t += duration;
    }
}

// CPU threads of nested ops and a GPU stream of back-to-back kernels.
std::shared_ptr<profiler::Trace> randomTrace(uint64_t seed, int threads = 3)
{
    std::mt19937_64 rng(seed);
    TraceBuilder b;
    for (int i = 0; i < threads; ++i) {
        const profiler::TrackId t = b.track(TrackKind::CpuThread, "thread " + std::to_string(i));
        nested(b, rng, t, 0, 50'000'000, 0);
    }
    const profiler::TrackId gpu = b.track(TrackKind::GpuStream, "stream 7", 2);
    int64_t t = 0;
    for (int i = 0; i < 20000; ++i) {
        t += logUniform(rng, 1, 20000);
        const int64_t duration = logUniform(rng, 1, 100000);
        b.event(gpu, "kernel" + std::to_string(rng() % 11), t, duration, 0, EventKind::Kernel);
        t += duration;
    }
    return b.trace;
}

std::vector<EventId> bruteForce(const TimelineModel &m, int lane, int64_t t0, int64_t t1)
{
    std::vector<EventId> out;
    for (EventId id : m.lanes()[size_t(lane)].events)
        if (m.event(id).start <= t1 && m.event(id).end() >= t0)
            out.push_back(id);
    return out;
}

QString testdata(const QString &relative)
{
    return QDir(QStringLiteral(FUSESCOPE_TESTDATA_DIR)).filePath(relative);
}

void sendMouse(QWidget *w, QEvent::Type type, QPoint pos, Qt::MouseButtons buttons, Qt::KeyboardModifiers mods = {})
{
    const Qt::MouseButton button = type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton;
    QMouseEvent e(type, QPointF(pos), w->mapToGlobal(QPointF(pos)), button, buttons, mods);
    QApplication::sendEvent(w, &e);
}

int distinctColours(const QImage &image)
{
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3)
            colours.insert(image.pixel(x, y));
    return int(colours.size());
}

// A wide event (at the given zoom) of `lane` in the middle of the view, or invalid.
EventId wideEventInView(const TimelineView &view, int lane)
{
    const auto [t0, t1] = view.visibleRange();
    const TimelineModel &m = view.model();
    for (EventId id : bruteForce(m, lane, t0, t1)) {
        const Event &e = m.event(id);
        if (view.xForTime(e.start) > 20 && view.xForTime(e.end()) < view.viewport()->width() - 20 &&
            view.xForTime(e.end()) - view.xForTime(e.start) > 12)
            return id;
    }
    return {};
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private slots:
    void visibleRangeMatchesBruteForce_data();
    void visibleRangeMatchesBruteForce();
    void packedIndexEdgeCases();
    void foldingKeepsEveryEvent_data();
    void foldingKeepsEveryEvent();
    void lanesByDepth();
    void overlappingEventsGetTheirOwnLane();
    void counterSteps();
    void memoryCountersFromAllocations();
    void ticks_data();
    void ticks();
    void rangeStatistics();
    void rangeStatisticsTable();

    void zoomKeys();
    void clickSelects();
    void shiftDragSelectsRange();
    void search();
    void collapseHidesLanes();
    void pinMovesTrackToTop();
    void frameHasColour();
    void realTrace_data();
    void realTrace();
};

void TestTimeline::visibleRangeMatchesBruteForce_data()
{
    QTest::addColumn<uint64_t>("seed");
    for (uint64_t seed : {1u, 2u, 3u, 42u})
        QTest::newRow(qPrintable(QStringLiteral("seed %1").arg(seed))) << seed;
}

void TestTimeline::visibleRangeMatchesBruteForce()
{
    QFETCH(uint64_t, seed);
    TimelineModel m;
    m.setRun(randomTrace(seed), 0);
    std::mt19937_64 rng(seed * 7 + 1);
    for (int query = 0; query < 200; ++query) {
        int64_t t0 = int64_t(rng() % uint64_t(m.end() + 1000)) - 500, t1 = t0 + logUniform(rng, 1, double(m.end()));
        for (size_t lane = 0; lane < m.lanes().size(); ++lane) {
            const auto [first, last] = m.visibleRange(int(lane), t0, t1);
            const std::vector<EventId> &ids = m.lanes()[lane].events;
            QCOMPARE(std::vector<EventId>(ids.begin() + long(first), ids.begin() + long(last)),
                     bruteForce(m, int(lane), t0, t1));
        }
    }
}

// The lane index packs ids and ends into blocks; the paths it keeps whole
// must read back the same: ids that jump by more than 16 bits inside a block
// (another track's events in between) and ends too sparse for 32-bit offsets.
void TestTimeline::packedIndexEdgeCases()
{
    TraceBuilder b;
    const auto dense = b.track(TrackKind::GpuStream, "dense");
    const auto filler = b.track(TrackKind::GpuStream, "filler");
    const auto sparse = b.track(TrackKind::GpuStream, "sparse");
    const auto mixed = b.track(TrackKind::GpuStream, "mixed");
    int64_t t = 0;
    for (int i = 0; i < 300; ++i) {
        b.event(dense, "d", t, 5);
        t += 10;
        if (i % 100 == 99) { // 70,000 other ids: the dense lane's next id is 70,001 further on
            for (int f = 0; f < 70'000; ++f)
                b.event(filler, "f", t + 2 * f, 1);
            t += 140'000;
        }
    }
    for (int i = 0; i < 200; ++i)
        b.event(sparse, "s", int64_t(i) * 1'000'000'000, 1000); // 64 events span 64 s
    for (int i = 0; i < 5000; ++i) // a dense run, then sparse ones
        b.event(mixed, "m", i < 4000 ? int64_t(i) * 100 : int64_t(i - 3999) * 2'000'000'000, 50);
    TimelineModel m;
    m.setRun(b.trace, 0);
    const profiler::Run &run = b.trace->runs[0];
    std::mt19937_64 rng(9);
    for (size_t lane = 0; lane < m.lanes().size(); ++lane) {
        const TimelineLane &l = m.lanes()[lane];
        std::vector<EventId> expected; // the track's events by start, from the run itself
        for (uint32_t i = 0; i < run.events.size(); ++i)
            if (m.trackIndex(run.events[i].track) == l.track)
                expected.push_back(EventId(i));
        std::stable_sort(expected.begin(), expected.end(),
                         [&](EventId x, EventId y) { return run.event(x).start < run.event(y).start; });
        QCOMPARE(m.lanes().size(), size_t(4)); // one lane a track: nothing overlaps
        QCOMPARE(std::vector<EventId>(l.events), expected);
        for (size_t i = 0; i < expected.size(); ++i)
            QCOMPARE(l.events.endAt(i), run.event(expected[i]).end());
        for (int query = 0; query < 300; ++query) {
            const int64_t t0 = int64_t(rng() % uint64_t(m.end() + 1)), t1 = t0 + logUniform(rng, 1, double(m.end()));
            const auto [first, last] = m.visibleRange(int(lane), t0, t1);
            std::vector<EventId> inside;
            for (EventId id : expected)
                if (run.event(id).start <= t1 && run.event(id).end() >= t0)
                    inside.push_back(id);
            QCOMPARE(std::vector<EventId>(expected.begin() + long(first), expected.begin() + long(last)), inside);
        }
    }
}

void TestTimeline::foldingKeepsEveryEvent_data()
{
    QTest::addColumn<double>("nsPerPixel");
    for (double ns : {0.25, 3.0, 100.0, 5e3, 1e5, 5e7})
        QTest::newRow(qPrintable(QStringLiteral("%1 ns/px").arg(ns))) << ns;
}

// Each item covers its events in order; singles are wide; a narrow item is
// alone: the next item is wide or at least the fold width away.
void TestTimeline::foldingKeepsEveryEvent()
{
    QFETCH(double, nsPerPixel);
    TimelineModel m;
    m.setRun(randomTrace(5), 0);
    const int64_t minNs = std::max<int64_t>(1, int64_t(std::ceil(kTimelineFoldPixels * nsPerPixel)));
    const int64_t t0 = m.end() / 3, t1 = t0 + int64_t(1500 * nsPerPixel);
    for (size_t lane = 0; lane < m.lanes().size(); ++lane) {
        std::vector<TimelineDrawItem> items;
        m.drawItems(int(lane), t0, t1, nsPerPixel, items);
        const std::vector<EventId> expected = bruteForce(m, int(lane), t0, t1);
        size_t next = 0;
        for (size_t i = 0; i < items.size(); ++i) {
            const TimelineDrawItem &item = items[i];
            QVERIFY(item.count >= 1 && next + item.count <= expected.size());
            for (size_t k = next; k < next + item.count; ++k)
                QVERIFY(m.event(expected[k]).start >= item.start && m.event(expected[k]).end() <= item.end);
            next += item.count;
            if (!item.folded() && m.event(item.event).duration >= minNs)
                continue;
            if (i + 1 < items.size()) {
                const TimelineDrawItem &after = items[i + 1];
                const bool wide = !after.folded() && after.end - after.start >= minNs;
                QVERIFY2(wide || after.start >= item.end + minNs, "two narrow items share pixels");
            }
        }
        QCOMPARE(next, expected.size());
    }
}

void TestTimeline::lanesByDepth()
{
    TraceBuilder b;
    const auto cpu = b.track(TrackKind::CpuThread, "main");
    b.event(cpu, "step", 0, 1000, 0, EventKind::Step);
    b.event(cpu, "forward", 10, 500, 1);
    b.event(cpu, "aten::mm", 20, 100, 2);
    b.event(cpu, "aten::add", 200, 100, 2);
    b.event(cpu, "backward", 600, 300, 1);
    TimelineModel m;
    m.setRun(b.trace, 0);
    QCOMPARE(m.tracks().size(), size_t(1));
    QCOMPARE(m.tracks()[0].laneCount, 3);
    for (int l = 0; l < 3; ++l) {
        QCOMPARE(m.lanes()[size_t(l)].depth, l);
        for (EventId id : m.lanes()[size_t(l)].events)
            QCOMPARE(int(m.event(id).depth), l);
    }
    QCOMPARE(m.lanes()[2].events.size(), size_t(2));
    QCOMPARE(m.laneOf(EventId(3)), 2);
}

// A GPU stream whose records overlap must not hide one under the other.
void TestTimeline::overlappingEventsGetTheirOwnLane()
{
    TraceBuilder b;
    const auto gpu = b.track(TrackKind::GpuStream, "stream 0");
    b.event(gpu, "k1", 0, 100, 0, EventKind::Kernel);
    b.event(gpu, "k2", 50, 100, 0, EventKind::Kernel);
    b.event(gpu, "k3", 200, 10, 0, EventKind::Kernel);
    TimelineModel m;
    m.setRun(b.trace, 0);
    QCOMPARE(m.tracks()[0].laneCount, 2);
    QCOMPARE(m.lanes()[0].events.size(), size_t(2));
    QCOMPARE(m.laneOf(EventId(1)), 1);
}

void TestTimeline::counterSteps()
{
    TraceBuilder b;
    const auto counter = b.track(TrackKind::Counter, "memory allocated · GPU 0");
    for (int i = 0; i < 100; ++i)
        b.run().counters.push_back({i * 10, double(i % 7), counter});
    TimelineModel m;
    m.setRun(b.trace, 0);
    std::vector<CounterStep> steps;
    m.counterSteps(0, 105, 500, 50, steps);
    QCOMPARE(steps.front().time, int64_t(100)); // the value in effect at t0
    QVERIFY(steps.size() <= 10);
    QCOMPARE(m.tracks()[0].counterMax, 6.0);
}

// A recording has its memory only as allocations: allocated and reserved
// become counters; an import's own "memory allocated" track is not doubled.
void TestTimeline::memoryCountersFromAllocations()
{
    TraceBuilder b;
    const auto cpu = b.track(TrackKind::CpuThread, "main", 5);
    for (int i = 0; i < 4; ++i) {
        profiler::Allocation a;
        a.time = i * 100;
        a.bytes = 1024;
        a.allocatedAfter = 1024 * (i + 1);
        a.reservedAfter = 4096;
        a.track = cpu;
        a.device = 0;
        b.run().allocations.push_back(a);
    }
    TimelineModel m;
    m.setRun(b.trace, 0);
    QCOMPARE(m.tracks().size(), size_t(3));
    QCOMPARE(QString::fromStdString(m.tracks()[1].name), QStringLiteral("memory allocated · GPU 0"));
    QCOMPARE(m.tracks()[1].counterMax, 4096.0);
    QCOMPARE(m.tracks()[1].pid, int64_t(5));
    QCOMPARE(QString::fromStdString(m.tracks()[2].name), QStringLiteral("memory reserved · GPU 0"));
    b.track(TrackKind::Counter, "rank 0 · memory allocated · GPU 0", 5);
    m.setRun(b.trace, 0);
    QCOMPARE(m.tracks().size(), size_t(3));
}

void TestTimeline::ticks_data()
{
    QTest::addColumn<int64_t>("span");
    QTest::addColumn<double>("pixels");
    QTest::addColumn<int64_t>("step");
    QTest::addColumn<QString>("unit");
    QTest::addColumn<QString>("label");
    QTest::newRow("ns") << int64_t(1000) << 1000.0 << int64_t(100) << "ns" << "300 ns";
    QTest::newRow("µs") << int64_t(1'000'000) << 1000.0 << int64_t(100'000) << "µs" << "300 µs";
    QTest::newRow("half ms") << int64_t(5'000'000) << 1000.0 << int64_t(500'000) << "ms" << "1.5 ms";
    QTest::newRow("ms") << int64_t(20'000'000) << 1000.0 << int64_t(2'000'000) << "ms" << "6 ms";
    QTest::newRow("s") << int64_t(10'000'000'000) << 1000.0 << int64_t(1'000'000'000) << "s" << "3 s";
    QTest::newRow("minutes") << int64_t(600'000'000'000) << 800.0 << int64_t(100'000'000'000) << "s" << "300 s";
}

void TestTimeline::ticks()
{
    QFETCH(int64_t, span);
    QFETCH(double, pixels);
    QFETCH(int64_t, step);
    QFETCH(QString, unit);
    QFETCH(QString, label);
    const TimeTicks t = timeTicks(1, 1 + span, pixels);
    QCOMPARE(t.stepNs, step);
    QCOMPARE(QString::fromUtf8(t.unit), unit);
    QCOMPARE(t.firstNs, step);
    QCOMPARE(QString::fromStdString(formatTick(3 * step, t)), label);
    QVERIFY(step / (double(span) / pixels) >= 90);
}

// A [0, 100] outer range, B [50, 150] inside another thread, C instant at 120,
// D [130, 200] touching the range's end; range [60, 130].
void TestTimeline::rangeStatistics()
{
    TraceBuilder b;
    const auto t1 = b.track(TrackKind::CpuThread, "t1");
    const auto t2 = b.track(TrackKind::CpuThread, "t2");
    b.event(t1, "A", 0, 100);
    b.event(t1, "A", 70, 5, 1);
    b.event(t1, "D", 130, 70);
    b.event(t2, "B", 50, 100);
    b.event(t2, "C", 120, 0, 1, EventKind::Instant);
    b.event(t2, "E", 10, 20);
    TimelineModel m;
    m.setRun(b.trace, 0);
    const std::vector<RangeStatRow> rows = timelineRangeStats(m, 60, 130);
    QCOMPARE(rows.size(), size_t(3));
    QCOMPARE(QString::fromStdString(rows[0].name), "B");
    QCOMPARE(rows[0].totalNs, int64_t(70));
    QCOMPARE(rows[0].count, int64_t(1));
    QCOMPARE(rows[0].percent, 100.0);
    QCOMPARE(QString::fromStdString(rows[1].name), "A");
    QCOMPARE(rows[1].count, int64_t(2));
    QCOMPARE(rows[1].totalNs, int64_t(45));
    QCOMPARE(QString::fromStdString(rows[2].name), "C");
    QCOMPARE(rows[2].totalNs, int64_t(0));
    QCOMPARE(rows[2].kind, EventKind::Instant);
    QCOMPARE(timelineRangeStats(m, 60, 130, {1}).size(), size_t(2));
}

// The Range table holds the rows of timelineRangeStats, sorts by raw
// numbers and asks for a row's events on a double-click.
void TestTimeline::rangeStatisticsTable()
{
    TraceBuilder b;
    const auto t1 = b.track(TrackKind::CpuThread, "t1");
    b.event(t1, "long", 0, 1000);
    for (int i = 0; i < 12; ++i)
        b.event(t1, "short", 1000 + i * 10, 9); // 108 ns in all: as text, "108 ns" sorts above "1.000 µs"
    TimelineModel m;
    m.setRun(b.trace, 0);
    RangeStatsView view;
    QVERIFY(view.isEmptyStateShown());
    QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.showRange(m, 0, 1200);
    QVERIFY(!view.isEmptyStateShown());
    const std::vector<RangeStatRow> expected = timelineRangeStats(m, 0, 1200);
    QCOMPARE(view.model()->rowCount(), int(expected.size()));
    QSortFilterProxyModel *proxy = view.proxy();
    QCOMPARE(proxy->index(0, RangeStatsModel::NameColumn).data().toString(), QStringLiteral("long"));
    QCOMPARE(proxy->index(0, RangeStatsModel::TotalColumn).data(RangeStatsModel::SortRole).toLongLong(), 1000);
    QCOMPARE(proxy->index(1, RangeStatsModel::CountColumn).data().toString(), QStringLiteral("12"));
    QCOMPARE(proxy->index(1, RangeStatsModel::TotalColumn).data(RangeStatsModel::SortRole).toLongLong(), 108);
    QVERIFY(view.summaryText().contains(QLatin1String("2 name(s)")));
    QSignalSpy asked(&view, &RangeStatsView::eventsRequested);
    emit view.table()->doubleClicked(proxy->index(1, RangeStatsModel::KindColumn));
    QCOMPARE(asked.count(), 1);
    QCOMPARE(asked.at(0).at(0).toString(), QStringLiteral("short"));
    view.clear();
    QVERIFY(view.isEmptyStateShown());
    QCOMPARE(view.model()->rowCount(), 0);
}

// ---- the widget ----

namespace {

struct ViewFixture {
    TimelineView view;
    explicit ViewFixture(std::shared_ptr<const profiler::Trace> trace, QSize size = {1000, 700})
    {
        view.resize(size);
        view.show();
        view.setTrace(std::move(trace), 0);
        view.resetZoom();
    }
};

} // namespace

void TestTimeline::zoomKeys()
{
    ViewFixture f(randomTrace(9));
    const auto [b0, b1] = f.view.visibleRange();
    QVERIFY(std::abs(b0 - f.view.model().begin()) <= 1);
    QVERIFY(std::abs(b1 - f.view.model().end()) <= (b1 - b0) / 500);
    QTest::keyClick(&f.view, Qt::Key_W);
    const auto [z0, z1] = f.view.visibleRange();
    QVERIFY(std::abs((z1 - z0) - (b1 - b0) / 2) <= (b1 - b0) / 500);
    QVERIFY(std::abs((z0 + z1) / 2 - (b0 + b1) / 2) <= (b1 - b0) / 500);
    QTest::keyClick(&f.view, Qt::Key_W);
    QTest::keyClick(&f.view, Qt::Key_D);
    QVERIFY(f.view.visibleRange().first > z0);
    QTest::keyClick(&f.view, Qt::Key_S);
    QTest::keyClick(&f.view, Qt::Key_0);
    QCOMPARE(f.view.visibleRange(), std::make_pair(b0, b1));
}

void TestTimeline::clickSelects()
{
    ViewFixture f(randomTrace(11));
    const TimelineModel &m = f.view.model();
    const int gpuTrack = int(m.tracks().size()) - 1;
    const int lane = m.tracks()[size_t(gpuTrack)].firstLane;
    f.view.zoomToRange(m.end() / 2, m.end() / 2 + 2'000'000);
    f.view.viewport()->grab(); // computes the frame, as a shown view would
    const EventId id = wideEventInView(f.view, lane);
    QVERIFY(id.valid());
    const QRect laneRect = f.view.laneRect(lane);
    QVERIFY(!laneRect.isNull());
    const int x = int((f.view.xForTime(m.event(id).start) + f.view.xForTime(m.event(id).end())) / 2);
    QSignalSpy spy(&f.view, &TimelineView::eventSelected);
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, QPoint(x, laneRect.center().y()));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(1).value<EventId>(), id);
    QCOMPARE(f.view.selectedEvent(), id);
}

void TestTimeline::shiftDragSelectsRange()
{
    ViewFixture f(randomTrace(12));
    QSignalSpy spy(&f.view, &TimelineView::rangeSelected);
    QWidget *vp = f.view.viewport();
    const int y = f.view.laneRect(0).center().y();
    sendMouse(vp, QEvent::MouseButtonPress, {100, y}, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(vp, QEvent::MouseMove, {250, y}, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(vp, QEvent::MouseMove, {400, y}, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(vp, QEvent::MouseButtonRelease, {400, y}, Qt::NoButton, Qt::ShiftModifier);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<int64_t>(), f.view.timeAt(100));
    QCOMPARE(spy.at(0).at(1).value<int64_t>(), f.view.timeAt(400));
    QVERIFY(f.view.selectedRange().has_value());
    const auto before = f.view.visibleRange();
    QTest::keyClick(&f.view, Qt::Key_F);
    QVERIFY(f.view.visibleRange().second - f.view.visibleRange().first < before.second - before.first);
}

void TestTimeline::search()
{
    ViewFixture f(randomTrace(13));
    const TimelineModel &m = f.view.model();
    std::vector<EventId> expected;
    for (uint32_t i = 0; i < m.run()->events.size(); ++i)
        if (m.name(EventId(i)).find("kernel3") != std::string::npos)
            expected.push_back(EventId(i));
    QSignalSpy spy(&f.view, &TimelineView::eventSelected);
    QCOMPARE(f.view.find(QStringLiteral("KERNEL3")), int(expected.size()));
    QVERIFY(expected.size() > 2);
    const EventId first = f.view.selectedEvent();
    QCOMPARE(first, f.view.matches().front());
    f.view.findNext();
    QCOMPARE(f.view.selectedEvent(), f.view.matches()[1]);
    QVERIFY(m.event(f.view.selectedEvent()).start >= m.event(first).start);
    f.view.findPrevious();
    f.view.findPrevious();
    QCOMPARE(f.view.selectedEvent(), f.view.matches().back());
    QCOMPARE(spy.count(), 4);
    QCOMPARE(f.view.find(QStringLiteral("no such name")), 0);
}

void TestTimeline::collapseHidesLanes()
{
    ViewFixture f(randomTrace(14));
    const TimelineTrack &track = f.view.model().tracks()[0];
    QVERIFY(track.laneCount > 1);
    QVERIFY(!f.view.laneRect(track.firstLane).isNull());
    const QRect header = f.view.trackHeaderRect(0);
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, QPoint(8, header.center().y()));
    QVERIFY(f.view.isTrackCollapsed(0));
    for (int l = track.firstLane; l < track.firstLane + track.laneCount; ++l)
        QVERIFY(f.view.laneRect(l).isNull());
    QVERIFY(f.view.trackHeaderRect(1).top() < header.top() + 40);
}

void TestTimeline::pinMovesTrackToTop()
{
    ViewFixture f(randomTrace(15));
    const int last = int(f.view.model().tracks().size()) - 1;
    QVERIFY(f.view.trackHeaderRect(last).top() > f.view.trackHeaderRect(0).top());
    const QRect header = f.view.trackHeaderRect(last);
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, QPoint(23, header.center().y()));
    QVERIFY(f.view.isTrackPinned(last));
    QCOMPARE(f.view.trackHeaderRect(last).top(), TimelineView::kRulerHeight);
    QVERIFY(f.view.trackHeaderRect(0).top() > f.view.trackHeaderRect(last).top());
}

void TestTimeline::frameHasColour()
{
    ViewFixture f(randomTrace(16));
    QVERIFY(distinctColours(f.view.viewport()->grab().toImage()) > 12);
    QTest::keyClick(&f.view, Qt::Key_W);
    QTest::keyClick(&f.view, Qt::Key_W);
    QVERIFY(distinctColours(f.view.viewport()->grab().toImage()) > 12);
}

void TestTimeline::realTrace_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("memory");
    QTest::newRow("V100") << "kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" << false;
    QTest::newRow("ResNet-50 memory") << "kineto/kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
                                      << true;
}

void TestTimeline::realTrace()
{
    QFETCH(QString, path);
    QFETCH(bool, memory);
    if (!QFileInfo::exists(testdata(path)))
        QSKIP("the shared test data is not there");
    std::optional<profiler::Trace> imported = profiler::importTraces({testdata(path).toStdString()});
    QVERIFY(imported);
    auto trace = std::make_shared<const profiler::Trace>(std::move(*imported));
    ViewFixture f(trace, {1400, 900});
    const TimelineModel &m = f.view.model();
    size_t indexed = 0;
    for (const TimelineLane &lane : m.lanes())
        indexed += lane.events.size();
    QCOMPARE(indexed, trace->runs[0].events.size());
    const bool hasGpu = std::any_of(m.tracks().begin(), m.tracks().end(), [](const TimelineTrack &t) { return t.kind == TrackKind::GpuStream; });
    QVERIFY(hasGpu);
    const bool hasCounter = std::any_of(m.tracks().begin(), m.tracks().end(), [](const TimelineTrack &t) { return !t.counter.empty(); });
    if (memory)
        QVERIFY(hasCounter);
    QVERIFY(distinctColours(f.view.viewport()->grab().toImage()) > 12);
    QVERIFY(f.view.find(QStringLiteral("aten::")) > 0);
    QVERIFY(distinctColours(f.view.viewport()->grab().toImage()) > 12);
}

QTEST_MAIN(TestTimeline)
#include "tst_views_timeline.moc"
