// Opening a big recorded trace into the timeline, as the GUI does it (GUI II
// issue): a synthetic run of 10 M events over 64 tracks written to a
// `.fstrace`, then loadDocument (read the run, statistics, hints),
// TimelineView::setTrace and the first frame; resident bytes per event that
// the open added; and frames at full zoom-out, 1/100 and 1/100,000 of the run.
// Targets: open ready to pan <= 5 s, <= 48 B per event resident, frames
// <= 16 ms median (p95 <= 25 ms).
//
// Usage: bench_timeline_open [events]   (default 10,000,000)

#include "app/documentopener.h"
#include "profiler/hints.h"
#include "profiler/statistics.h"
#include "profiler/tracereader.h"
#include "profiler/tracewriter.h"
#include "views/timelinemodel.h"
#include "views/timelineview.h"

#include <QApplication>
#include <QImage>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace fusescope;
using namespace fusescope::profiler;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kThreads = 16, kStreams = 48; // 64 tracks
constexpr uint32_t kNames = 200;
constexpr int64_t kGroupPeriodNs = 175'000;  // a CPU thread's top-level op every 150-200 µs
constexpr int64_t kBatchEvents = 100'000;    // about what one drain of the recorder hands over

double seconds(Clock::time_point since)
{
    return std::chrono::duration<double>(Clock::now() - since).count();
}

size_t residentBytes()
{
    malloc_trim(0); // freed memory back to the system first, so RSS is what is live
    long pages = 0, resident = 0;
    if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return size_t(resident) * size_t(sysconf(_SC_PAGESIZE));
}

// One track's events, made on demand in start order. A CPU thread: a 100 µs
// op with two 40 µs children of one 20 µs grandchild each (3 depths, 5
// events) every 150-200 µs. A GPU stream: kernels of 0.2-20 µs with gaps of
// 0-120 µs, so both kinds cover about the same time.
struct TrackGen {
    TrackId id;
    bool cpu = true;
    int64_t quota = 0; // events still to make
    int64_t clock = 0;

    void emitUntil(int64_t limit, std::mt19937_64 &rng, std::vector<Event> &out)
    {
        while (quota > 0 && clock < limit) {
            if (cpu)
                emitGroup(rng, out);
            else
                emitKernel(rng, out);
        }
    }
    void emitGroup(std::mt19937_64 &rng, std::vector<Event> &out)
    {
        add(out, rng, clock, 100'000, 0, EventKind::Op);
        for (int c = 0; c < 2; ++c) {
            add(out, rng, clock + 2000 + c * 48'000, 40'000, 1, EventKind::Op);
            add(out, rng, clock + 6000 + c * 48'000, 20'000, 2, EventKind::Kernel);
        }
        quota -= 5;
        clock += 150'000 + int64_t(rng() % 50'000);
    }
    void emitKernel(std::mt19937_64 &rng, std::vector<Event> &out)
    {
        const int64_t duration = 200 + int64_t(rng() % 20'000);
        add(out, rng, clock, duration, 0, quota % 50 == 0 ? EventKind::Memcpy : EventKind::Kernel);
        --quota;
        clock += duration + int64_t(rng() % 120'000);
    }
    void add(std::vector<Event> &out, std::mt19937_64 &rng, int64_t start, int64_t duration, int depth, EventKind kind)
    {
        Event e;
        e.start = start;
        e.duration = duration;
        e.name = StringId(1 + uint32_t(rng() % kNames));
        e.track = id;
        e.depth = uint8_t(depth);
        e.kind = kind;
        e.flops = float(rng() % 100'000'000);
        e.bytes = float(rng() % 10'000'000);
        out.push_back(e);
    }
};

// 40 % of the events on the CPU threads (whole groups of 5), the rest on the streams.
std::vector<TrackGen> makeTracks(int64_t events)
{
    std::vector<TrackGen> tracks;
    const int64_t perThread = events * 4 / 10 / kThreads / 5 * 5;
    const int64_t onStreams = events - perThread * kThreads;
    for (int t = 0; t < kThreads + kStreams; ++t) {
        const bool cpu = t < kThreads;
        const int s = t - kThreads;
        const int64_t quota = cpu ? perThread : onStreams / kStreams + (s < onStreams % kStreams ? 1 : 0);
        tracks.push_back({TrackId(uint16_t(t)), cpu, quota, 0});
    }
    return tracks;
}

void addNamesAndTracks(EventBatch &b)
{
    b.firstString = 1;
    for (uint32_t i = 0; i < kNames; ++i)
        b.newStrings.push_back("aten::op_" + std::to_string(i));
    b.newStrings.push_back("thread");
    b.newStrings.push_back("stream");
    for (int t = 0; t < kThreads + kStreams; ++t) {
        const bool cpu = t < kThreads;
        b.newTracks.push_back({TrackId(uint16_t(t)), cpu ? TrackKind::CpuThread : TrackKind::GpuStream,
                               StringId(kNames + (cpu ? 1 : 2)), cpu ? 1 : 2, t, cpu ? -1 : 0, t});
    }
}

// Writes the run in batches of time windows, each sorted by (track, start)
// as EventBatch asks. Returns the run's events and its end.
std::pair<int64_t, int64_t> writeTrace(const std::string &path, int64_t events)
{
    std::vector<TrackGen> tracks = makeTracks(events);
    const int64_t span = tracks[0].quota / 5 * kGroupPeriodNs;
    const int64_t window = std::max<int64_t>(1'000'000, span * kBatchEvents / std::max<int64_t>(1, events));
    std::mt19937_64 rng(7);
    TraceWriter writer(path);
    writer.beginRun({"bench", "synthetic 64 tracks", "eager", 0, 0, ""});
    int64_t written = 0, end = 0;
    for (int64_t limit = window; written < events; limit += window) {
        EventBatch batch;
        batch.firstEvent = uint32_t(written);
        if (written == 0)
            addNamesAndTracks(batch);
        for (TrackGen &t : tracks)
            t.emitUntil(limit, rng, batch.events);
        for (const Event &e : batch.events)
            end = std::max(end, e.end());
        written += int64_t(batch.events.size());
        writer.write(std::move(batch));
    }
    writer.endRun({end, written, 0, 0, true});
    writer.close();
    return {written, end};
}

struct Frames {
    double median = 0, p95 = 0;
    size_t samples = 0;
};

// 31 frames after a warm-up, each after a one-pixel pan so its draw items are
// recomputed as while dragging.
Frames measureFrames(TimelineView &view, QImage &image)
{
    std::vector<double> ms;
    int direction = 1;
    for (int i = 0; i < 32; ++i) {
        const auto t0 = Clock::now();
        view.panPixels(direction = -direction);
        view.viewport()->render(&image);
        if (i > 0)
            ms.push_back(seconds(t0) * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms[(ms.size() * 95 + 99) / 100 - 1], ms.size()};
}

size_t statisticsBytes(const RunStatistics &s)
{
    return s.ops.capacity() * sizeof(RangeStats) + s.userRanges.capacity() * sizeof(RangeStats) +
           s.kernels.capacity() * sizeof(KernelStats) + s.copies.capacity() * sizeof(CopyStats) +
           s.nodes.capacity() * sizeof(NodeStats) + s.memory.capacity() * sizeof(MemoryStats);
}

struct Open {
    double load = 0, setTrace = 0, firstFrame = 0;
    size_t before = 0, afterLoad = 0, afterView = 0;
};

void printBreakdown(const Document &doc, const TimelineModel &model, int64_t events, const Open &o)
{
    const Run &run = doc.trace->runs[0];
    const double n = double(events);
    std::printf("resident, by part (B/event):\n");
    std::printf("  %-46s %8.1f\n", "RSS growth: loadDocument", double(o.afterLoad - o.before) / n);
    std::printf("  %-46s %8.1f\n", "RSS growth: setTrace + first frame", double(o.afterView - o.afterLoad) / n);
    std::printf("  %-46s %8.1f\n", "events vector capacity (Event is 40 B)", double(run.events.capacity() * sizeof(Event)) / n);
    std::printf("  %-46s %8.1f\n", "args vector capacity", double(run.args.capacity() * sizeof(EventArgs)) / n);
    std::printf("  %-46s %8.1f\n", "timeline model index", double(model.indexBytes()) / n);
    std::printf("  %-46s %8.3f  (%zu ops, %zu kernels, %zu hints)\n", "statistics vectors (flat part)",
                doc.stats ? double(statisticsBytes(*doc.stats)) / n : 0.0, doc.stats ? doc.stats->ops.size() : 0,
                doc.stats ? doc.stats->kernels.size() : 0, doc.hints.size());
    std::printf("  %-46s %8zu lanes\n", "timeline lanes", model.lanes().size());
}

Open openInView(const std::string &path, TimelineView &view, QImage &image, std::shared_ptr<const Document> &doc)
{
    Open o;
    o.before = residentBytes();
    auto t0 = Clock::now();
    doc = loadDocument(QString::fromStdString(path));
    o.load = seconds(t0);
    if (!doc || !doc->trace)
        return o;
    o.afterLoad = residentBytes();
    t0 = Clock::now();
    view.setTrace(doc->trace, 0);
    o.setTrace = seconds(t0);
    t0 = Clock::now();
    view.viewport()->render(&image);
    o.firstFrame = seconds(t0);
    o.afterView = residentBytes();
    return o;
}

void printFrames(TimelineView &view, QImage &image)
{
    const TimelineModel &m = view.model();
    const int64_t span = m.end() - m.begin(), centre = m.begin() + span / 2;
    std::printf("%-22s %12s %10s %10s %8s\n", "frames (1600x1000)", "window", "median ms", "p95 ms", "frames");
    for (int64_t divisor : {1, 100, 100'000}) {
        const int64_t half = span / divisor / 2;
        view.zoomToRange(centre - half, centre + half);
        const auto range = view.visibleRange();
        const Frames f = measureFrames(view, image);
        const char *what = divisor == 1 ? "full zoom-out" : divisor == 100 ? "mid zoom, 1/100" : "deep zoom, 1/100,000";
        std::printf("%-22s %12s %10.2f %10.2f %8zu\n", what, formatDuration(range.second - range.first).c_str(),
                    f.median, f.p95, f.samples);
    }
}

// Where loadDocument's time goes: its three parts again, each alone, after
// the measured open (so they change neither its time nor its memory).
void printLoadParts(const std::string &path, const Document &doc)
{
    auto t0 = Clock::now();
    {
        TraceReader reader(path);
        Trace trace;
        reader.loadRun(0, trace);
    }
    const double read = seconds(t0);
    const Run &run = doc.trace->runs[0];
    t0 = Clock::now();
    const RunStatistics stats = computeStatistics(*doc.trace, run);
    const double statistics = seconds(t0);
    t0 = Clock::now();
    const size_t hints = computeHints(*doc.trace, run, stats).size();
    const double hinting = seconds(t0);
    std::printf("loadDocument's parts, each again alone:\n");
    std::printf("  %-44s %8.3f s\n", "TraceReader + loadRun", read);
    std::printf("  %-44s %8.3f s\n", "computeStatistics", statistics);
    std::printf("  %-44s %8.3f s   (%zu hints)\n", "computeHints", hinting, hints);
}

int runBench(int64_t events, const std::string &path)
{
    auto t0 = Clock::now();
    const auto [written, end] = writeTrace(path, events);
    std::printf("bench_timeline_open: %lld events over %d tracks, %s; file %.1f MB, written in %.2f s (setup)\n",
                static_cast<long long>(written), kThreads + kStreams, formatDuration(end).c_str(),
                double(std::filesystem::file_size(path)) / 1e6, seconds(t0));
    TimelineView view;
    view.resize(1600, 1000);
    view.show();
    QImage image(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    view.viewport()->render(&image); // the empty view's first paint: fonts and styles, before the baseline
    std::shared_ptr<const Document> doc;
    const Open o = openInView(path, view, image, doc);
    if (!doc || !doc->trace || doc->trace->runs.empty() || int64_t(doc->trace->runs[0].events.size()) != written) {
        std::fprintf(stderr, "bench_timeline_open: the trace did not load\n");
        return 1;
    }
    const double total = o.load + o.setTrace + o.firstFrame;
    const double perEvent = double(o.afterView - o.before) / double(written);
    std::printf("%-46s %8.3f s\n", "open: loadDocument (read, statistics, hints)", o.load);
    std::printf("%-46s %8.3f s\n", "open: TimelineView::setTrace", o.setTrace);
    std::printf("%-46s %8.3f s\n", "open: first frame", o.firstFrame);
    std::printf("%-46s %8.3f s   target <= 5 s: %s\n", "open ready to pan, total", total, total <= 5 ? "met" : "NOT met");
    std::printf("%-46s %8.1f B   target <= 48 B: %s\n", "resident bytes per event (RSS growth / N)", perEvent,
                perEvent <= 48 ? "met" : "NOT met");
    printBreakdown(*doc, view.model(), written, o);
    printFrames(view, image);
    printLoadParts(path, *doc);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int64_t events = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
    if (events < 1000 || events > int64_t(UINT32_MAX) - 1) {
        std::fprintf(stderr, "usage: bench_timeline_open [events >= 1000]\n");
        return 2;
    }
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("bench_timeline_open-" + std::to_string(getpid()) + ".fstrace")).string();
    int rc = 1;
    try {
        rc = runBench(events, path);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_timeline_open: %s\n", e.what());
    }
    for (const char *suffix : {"", "-wal", "-shm"})
        std::filesystem::remove(path + suffix);
    return rc;
}
