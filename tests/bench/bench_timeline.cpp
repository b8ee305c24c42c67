// What a timeline frame costs at several zoom levels (median and slowest of
// 21), on the real 68k-event V100 and 75k-event ResNet-50 Kineto traces and
// on a synthetic 5,000,000-event run; and how long
// setTrace (the per-track index) takes. Target (issue 10): a frame costs a
// few ms at any zoom — it follows the pixels, not the events.
// Usage: bench_timeline [events [snapshot-dir]] (default 5,000,000 events);
// with a directory, each measured frame is also written there as a PNG.
#include "benchutil.h"
#include "profiler/importer.h"
#include "views/timelinemodel.h"
#include "views/timelineview.h"

#include <QApplication>
#include <QFileInfo>
#include <QImage>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

using namespace fusescope;
using profiler::EventKind;
using profiler::TrackKind;

namespace {

profiler::TrackId addTrack(profiler::Trace &trace, TrackKind kind, const std::string &name, int64_t pid)
{
    profiler::Run &run = trace.runs.back();
    profiler::Track t;
    t.id = profiler::TrackId(uint16_t(run.tracks.size()));
    t.kind = kind;
    t.name = trace.strings.intern(name);
    t.pid = pid;
    t.tid = int64_t(run.tracks.size());
    run.tracks.push_back(t);
    return t.id;
}

void addEvent(profiler::Trace &trace, profiler::TrackId track, profiler::StringId name, int64_t start, int64_t duration,
              int depth, EventKind kind)
{
    profiler::Event e;
    e.start = start;
    e.duration = duration;
    e.name = name;
    e.track = track;
    e.depth = uint8_t(depth);
    e.kind = kind;
    trace.runs.back().events.push_back(e);
}

// Per CPU thread, ops of three nesting levels (a 100 µs op, 2 children, 1
// grandchild each) every 150–200 µs; per GPU stream, kernels of 0.2–20 µs
// with gaps of 0–3 µs. 40 % of the events on CPU threads, 60 % on streams,
// both over about 9 s.
std::shared_ptr<const profiler::Trace> syntheticTrace(int64_t events)
{
    auto trace = std::make_shared<profiler::Trace>();
    trace->runs.emplace_back();
    std::mt19937_64 rng(7);
    std::vector<profiler::StringId> names;
    for (int i = 0; i < 64; ++i)
        names.push_back(trace->strings.intern("aten::op_" + std::to_string(i)));
    auto name = [&] { return names[rng() % names.size()]; };
    const int threads = 8, streams = 4;
    const int64_t perThread = events * 4 / 10 / threads, perStream = events * 6 / 10 / streams;
    for (int t = 0; t < threads; ++t) {
        const auto track = addTrack(*trace, TrackKind::CpuThread, "thread " + std::to_string(t), 1);
        for (int64_t i = 0, time = 0; i + 5 <= perThread; i += 5, time += 150'000 + int64_t(rng() % 50'000)) {
            addEvent(*trace, track, name(), time, 100'000, 0, EventKind::Op);
            for (int c = 0; c < 2; ++c) {
                addEvent(*trace, track, name(), time + 2000 + c * 48'000, 40'000, 1, EventKind::Op);
                addEvent(*trace, track, name(), time + 6000 + c * 48'000, 20'000, 2, EventKind::Kernel);
            }
        }
    }
    for (int s = 0; s < streams; ++s) {
        const auto track = addTrack(*trace, TrackKind::GpuStream, "stream " + std::to_string(s), 2);
        for (int64_t i = 0, time = 0; i < perStream; ++i) {
            const int64_t duration = 200 + int64_t(rng() % 20'000);
            addEvent(*trace, track, name(), time, duration, 0, i % 50 == 0 ? EventKind::Memcpy : EventKind::Kernel);
            time += duration + int64_t(rng() % 3000);
        }
    }
    return trace;
}

// The draw items of every lane for the window: the level-of-detail work alone.
size_t drawItemCount(const TimelineModel &m, int64_t t0, int64_t t1, double nsPerPixel)
{
    std::vector<TimelineDrawItem> items;
    for (size_t l = 0; l < m.lanes().size(); ++l)
        m.drawItems(int(l), t0, t1, nsPerPixel, items);
    return items.size();
}

void measure(const char *what, std::shared_ptr<const profiler::Trace> trace, const QString &snapshots)
{
    size_t events = trace->runs[0].events.size();
    TimelineView view;
    view.resize(1600, 1000);
    view.show();
    const double index = bench::medianSeconds(3, [&] { view.setTrace(trace, 0); });
    std::printf("%s: %zu events, %zu lanes; setTrace %.1f ms\n", what, events, view.model().lanes().size(), index * 1e3);
    std::printf("  %-10s %12s %10s %10s %10s %10s\n", "window", "span", "items", "LOD ms", "frame ms", "max ms");
    const TimelineModel &m = view.model();
    const int64_t span = m.end() - m.begin(), centre = m.begin() + span / 2;
    for (int64_t divisor : {1, 10, 100, 1000, 100'000}) {
        const int64_t half = span / divisor / 2;
        view.zoomToRange(centre - half, centre + half);
        const int64_t t0 = view.visibleRange().first, t1 = view.visibleRange().second;
        const double nsPerPixel = double(t1 - t0) / view.viewport()->width();
        size_t items = 0;
        const double lod = bench::medianSeconds(11, [&] { items = drawItemCount(m, t0, t1, nsPerPixel); });
        // A one-pixel pan each time, so every frame recomputes its items as a moving view does.
        int direction = 1;
        QImage image(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        std::vector<double> frames;
        const double frame = bench::medianSeconds(21, [&] {
            const auto start = std::chrono::steady_clock::now();
            view.panPixels(direction = -direction);
            view.viewport()->render(&image);
            frames.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        });
        frames.erase(frames.begin()); // the warm-up
        const double slowest = *std::max_element(frames.begin(), frames.end());
        if (!snapshots.isEmpty())
            image.save(QStringLiteral("%1/%2-%3.png").arg(snapshots, QString::fromLatin1(what).section(' ', 0, 0)).arg(divisor));
        std::printf("  1/%-8lld %12s %10zu %10.2f %10.2f %10.2f\n", static_cast<long long>(divisor),
                    formatDuration(t1 - t0).c_str(), items, lod * 1e3, frame * 1e3, slowest * 1e3);
    }
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int64_t events = argc > 1 ? std::atoll(argv[1]) : 5'000'000;
    const QString snapshots = argc > 2 ? QString::fromLocal8Bit(argv[2]) : QString();
    const std::pair<const char *, const char *> real[] = {
        {"V100 Kineto trace", "/kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"},
        {"ResNet-50 Kineto trace", "/kineto/kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"},
    };
    for (const auto &[what, relative] : real) {
        const QString path = QStringLiteral(FUSESCOPE_TESTDATA_DIR) + QString::fromLatin1(relative);
        if (!QFileInfo::exists(path)) {
            std::printf("%s not found (%s), skipped\n", what, qPrintable(path));
            continue;
        }
        auto imported = profiler::importTraces({path.toStdString()});
        measure(what, std::make_shared<const profiler::Trace>(std::move(*imported)), snapshots);
    }
    measure("synthetic", syntheticTrace(events), snapshots);
    return 0;
}
