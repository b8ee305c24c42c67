// The trace store (profiler/tracewriter, tracereader): (a) sustained ingest of
// kernel-like events through TraceWriter::write in recorder-sized batches,
// side by side with plain one-row-per-event INSERTs; (b) bytes per event on
// disk, indexes included; (c) opening a 10 M-event file and loading its run:
// seconds and resident bytes per event. Then what a timeline asks of the
// file: a 1 ms window of one track, and a zoomed-out LOD level.
//
// bench_tracestore [events]   (default 10 000 000; the row-per-event side writes a fifth of them)

#include "benchutil.h"

#include "profiler/tracereader.h"
#include "profiler/tracestore.h"
#include "profiler/tracewriter.h"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

using namespace fusescope;
using namespace fusescope::profiler;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTracks = 4;
constexpr uint32_t kBatchEvents = 100'000; // ~100 ms of a 1 M events/s recording
constexpr uint32_t kNames = 200, kDetails = 1000;

double seconds(Clock::time_point since)
{
    return std::chrono::duration<double>(Clock::now() - since).count();
}

size_t residentBytes()
{
    long pages = 0, resident = 0;
    if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return size_t(resident) * size_t(sysconf(_SC_PAGESIZE));
}

// What a CPU backend records for eager kernels: four threads, each a
// sequence of 1-20 µs kernels with sub-µs to µs gaps, a name from a few
// hundred, graph-node origins from a thousand, estimated flops and bytes.
class KernelStream
{
public:
    EventBatch next(uint32_t count)
    {
        EventBatch b;
        b.firstEvent = m_next;
        if (m_next == 0)
            addNamesAndTracks(b);
        b.events.reserve(count);
        for (int t = 0; t < kTracks; ++t) {
            for (uint32_t i = 0; i < count / kTracks; ++i)
                b.events.push_back(kernel(TrackId(uint16_t(t))));
        }
        m_next += uint32_t(b.events.size());
        return b;
    }
    int64_t end() const { return *std::max_element(m_clock, m_clock + kTracks); }

private:
    void addNamesAndTracks(EventBatch &b)
    {
        b.firstString = 1;
        for (uint32_t i = 0; i < kNames; ++i)
            b.newStrings.push_back("aten::op_" + std::to_string(i));
        for (uint32_t i = 0; i < kDetails; ++i)
            b.newStrings.push_back(std::to_string(i) + "," + std::to_string(i + 3) + "," + std::to_string(i + 9));
        for (int t = 0; t < kTracks; ++t)
            b.newTracks.push_back({TrackId(uint16_t(t)), TrackKind::CpuThread, StringId(1), 1, 100 + t, -1, t});
    }
    Event kernel(TrackId track)
    {
        Event e;
        e.kind = EventKind::Kernel;
        e.track = track;
        int64_t &clock = m_clock[track.value];
        clock += 300 + int64_t(m_rng() % 2700);
        e.start = clock;
        e.duration = 1000 + int64_t(m_rng() % 19000);
        clock += e.duration;
        e.name = StringId(1 + uint32_t(m_rng() % kNames));
        e.detail = StringId(1 + kNames + uint32_t(m_rng() % kDetails));
        e.flops = float(m_rng() % 100'000'000);
        e.bytes = float(m_rng() % 10'000'000);
        return e;
    }

    std::mt19937_64 m_rng {42};
    int64_t m_clock[kTracks] = {};
    uint32_t m_next = 0;
};

struct Ingest {
    double writeSeconds = 0; // inside write() only
    double totalSeconds = 0; // from creating the file to closing it, LOD included
    double fileBytes = 0;
};

Ingest writeStore(const std::string &path, uint32_t events)
{
    Ingest r;
    const auto start = Clock::now();
    TraceWriter writer(path);
    writer.beginRun({"bench", "synthetic", "eager", 0, 0, ""});
    KernelStream stream;
    for (uint32_t done = 0; done < events; done += kBatchEvents) {
        EventBatch batch = stream.next(std::min(kBatchEvents, events - done));
        const auto t0 = Clock::now();
        writer.write(std::move(batch));
        r.writeSeconds += seconds(t0);
    }
    writer.endRun({stream.end(), int64_t(events), 0, 0, true});
    writer.close();
    r.totalSeconds = seconds(start);
    r.fileBytes = double(std::filesystem::file_size(path));
    return r;
}

// The obvious alternative layout: a row per event with the columns of Event,
// indexed for time-range queries; same pragmas, a transaction per batch.
Ingest writeRows(const std::string &path, uint32_t events)
{
    Ingest r;
    const auto start = Clock::now();
    {
        store::Database db(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "cannot create");
        db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384;"
                "CREATE TABLE events(run INTEGER, track INTEGER, start INTEGER, duration INTEGER, name INTEGER,"
                " detail INTEGER, args INTEGER, flops REAL, bytes REAL, kind INTEGER, depth INTEGER);"
                "CREATE INDEX events_by_time ON events(run, track, start);");
        store::Statement insert(db, "INSERT INTO events VALUES(0, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)");
        KernelStream stream;
        for (uint32_t done = 0; done < events; done += kBatchEvents) {
            const EventBatch batch = stream.next(std::min(kBatchEvents, events - done));
            const auto t0 = Clock::now();
            store::Transaction transaction(db);
            for (const Event &e : batch.events) {
                insert.bind(1, int64_t(e.track.value)).bind(2, e.start).bind(3, e.duration);
                insert.bind(4, int64_t(e.name.value)).bind(5, int64_t(e.detail.value)).bind(6, double(e.flops));
                insert.bind(7, double(e.bytes)).bind(8, int64_t(e.kind)).bind(9, int64_t(e.depth)).run();
            }
            transaction.commit();
            r.writeSeconds += seconds(t0);
        }
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    r.totalSeconds = seconds(start);
    r.fileBytes = double(std::filesystem::file_size(path));
    return r;
}

void printIngest(const char *what, const Ingest &r, uint32_t events)
{
    std::printf("%-22s %9u events  %6.2f M events/s in write()  %6.2f M events/s overall  %6.1f B/event\n", what,
                events, events / r.writeSeconds / 1e6, events / r.totalSeconds / 1e6, r.fileBytes / events);
}

// (c) and what a view asks: load the run, a 1 ms window, a zoomed-out level.
void readStore(const std::string &path, uint32_t events)
{
    malloc_trim(0); // give the writer's freed memory back, so the growth below is the trace's
    const size_t before = residentBytes();
    const auto start = Clock::now();
    TraceReader reader(path);
    Trace trace;
    reader.loadRun(0, trace);
    const double loadSeconds = seconds(start);
    const size_t after = residentBytes();
    std::printf("open + load run:       %9zu events  %6.2f s  %6.1f resident B/event (Event is %zu B)\n",
                trace.runs[0].events.size(), loadSeconds, double(after - before) / events, sizeof(Event));

    const int64_t middle = reader.runs()[0].summary.durationNs / 2;
    std::vector<Event> window;
    const double windowSeconds
        = bench::medianSeconds(21, [&] { window = reader.events(0, TrackId(1), middle, middle + 1'000'000); });
    std::printf("1 ms window, 1 track:  %9zu events  %6.3f ms\n", window.size(), windowSeconds * 1e3);
    // The level a 1000-pixel timeline of the whole run would use: about a bucket per pixel.
    int level = 0;
    while (lodBucketNs(level) * 1000 < reader.runs()[0].summary.durationNs)
        ++level;
    std::optional<LodLevel> lod;
    const double lodSeconds = bench::medianSeconds(21, [&] { lod = reader.lod(0, TrackId(1), level); });
    std::printf("whole run, LOD level %d: %8zu buckets %6.3f ms\n", level, lod ? lod->buckets.size() : 0,
                lodSeconds * 1e3);
}

} // namespace

int main(int argc, char **argv)
{
    const uint32_t events = argc > 1 ? uint32_t(std::strtoul(argv[1], nullptr, 10)) : 10'000'000;
    const auto dir = std::filesystem::temp_directory_path() / ("bench_tracestore." + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string store = (dir / "store.fstrace").string(), rows = (dir / "rows.sqlite").string();
    try {
        const Ingest s = writeStore(store, events);
        const Ingest r = writeRows(rows, events / 5);
        std::filesystem::remove(rows);
        std::printf("kernel-like events, batches of %u on %d tracks, SQLite %s\n", kBatchEvents, kTracks,
                    sqlite3_libversion());
        printIngest("trace store (chunks)", s, events);
        printIngest("row per event", r, events / 5);
        std::printf("ratio chunks / rows:   %.1fx events/s in write(), %.2fx bytes\n",
                    (events / s.writeSeconds) / (events / 5 / r.writeSeconds),
                    (s.fileBytes / events) / (r.fileBytes / (events / 5)));
        readStore(store, events);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_tracestore: %s\n", e.what());
        std::filesystem::remove_all(dir);
        return 1;
    }
    std::filesystem::remove_all(dir);
    return 0;
}
