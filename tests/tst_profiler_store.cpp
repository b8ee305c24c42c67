// The trace store: TraceWriter → file → TraceReader gives back exactly what
// an in-memory TraceCollector got from the same batches, and every kind of
// bad file is refused with a sentence instead of a crash.

// tracewriter.h first, in a block of its own: moc (run with C++17
// predefines) fails on <concepts> when events.h is the first header it reads.
#include "profiler/tracewriter.h"

#include "profiler/lod.h"
#include "profiler/tracereader.h"
#include "tests/qteststring.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

#include <bit>
#include <csignal>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fusescope;
using namespace fusescope::profiler;

namespace {

// ---- describing records field by field, so a mismatch shows which one ----

std::string str(const Event &e)
{
    std::ostringstream s;
    s << e.start << ' ' << e.duration << " name=" << e.name.value << " detail=" << e.detail.value
      << " args=" << e.args.value << " flops=" << std::bit_cast<uint32_t>(e.flops)
      << " bytes=" << std::bit_cast<uint32_t>(e.bytes) << " track=" << e.track.value << " kind=" << int(e.kind)
      << " depth=" << int(e.depth);
    return s.str();
}

std::string str(const EventArgs &a)
{
    std::ostringstream s;
    s << a.correlation << ' ' << a.externalId << ' ' << a.device << ' ' << a.stream << " grid=" << a.grid[0] << ','
      << a.grid[1] << ',' << a.grid[2] << " block=" << a.block[0] << ',' << a.block[1] << ',' << a.block[2]
      << " copy=" << int(a.copyKind) << " pinned=" << a.pinned << " extra=" << a.extra.value;
    return s.str();
}

std::string str(const Allocation &a)
{
    std::ostringstream s;
    s << a.time << ' ' << a.address << ' ' << a.bytes << ' ' << a.allocatedAfter << ' ' << a.reservedAfter
      << " op=" << a.op.value << " track=" << a.track.value << " device=" << a.device;
    return s.str();
}

std::string str(const Flow &f)
{
    std::ostringstream s;
    s << f.id << ' ' << f.from.value << "->" << f.to.value << " kind=" << int(f.kind);
    return s.str();
}

std::string str(const CounterSample &c)
{
    std::ostringstream s;
    s << c.time << ' ' << std::bit_cast<uint64_t>(c.value) << " track=" << c.track.value;
    return s.str();
}

std::string str(const Track &t)
{
    std::ostringstream s;
    s << t.id.value << " kind=" << int(t.kind) << " name=" << t.name.value << ' ' << t.pid << ' ' << t.tid << ' '
      << t.device << ' ' << t.sortIndex;
    return s.str();
}

std::string str(const compiler::CompileStage &st)
{
    std::ostringstream s;
    s << st.name << '|' << st.segment << '|' << st.graphJson << '|' << st.detailsJson << '|' << st.code << '|'
      << std::bit_cast<uint64_t>(st.durationMs) << '|' << st.stats.nodes << ',' << st.stats.kernels << ','
      << std::bit_cast<uint64_t>(st.stats.bytesMoved) << ',' << st.stats.plannedPeak << ',' << st.stats.unplannedPeak
      << '|' << st.log.size();
    for (const auto &line : st.log)
        s << '|' << line;
    return s.str();
}

std::string str(const RunInfo &i)
{
    return i.name + '|' + i.model + '|' + i.mode + '|' + std::to_string(i.originNs) + '|'
        + std::to_string(i.wallStartUnixNs) + '|' + i.options;
}

std::string str(const RunSummary &s)
{
    return std::to_string(s.durationNs) + ' ' + std::to_string(s.events) + ' ' + std::to_string(s.steps) + ' '
        + std::to_string(s.droppedEvents) + (s.complete ? " complete" : " incomplete");
}

std::string str(const LodBucket &b)
{
    return std::to_string(b.index) + ": count=" + std::to_string(b.count) + " busy=" + std::to_string(b.busyNs)
        + " depth=" + std::to_string(b.maxDepth);
}

template <typename T> std::vector<std::string> strs(const std::vector<T> &items)
{
    std::vector<std::string> out;
    for (const T &item : items)
        out.push_back(str(item));
    return out;
}

// Item by item, so a failure names the first item that differs.
void compareLists(const std::vector<std::string> &got, const std::vector<std::string> &want)
{
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        if (got[i] != want[i])
            QFAIL(qPrintable(QStringLiteral("item %1: got \"%2\", want \"%3\"")
                                 .arg(i)
                                 .arg(QString::fromStdString(got[i]), QString::fromStdString(want[i]))));
    }
    QCOMPARE(got.size(), want.size());
}

void compareRuns(const Run &got, const Run &want)
{
    QCOMPARE(str(got.info), str(want.info));
    QCOMPARE(str(got.summary), str(want.summary));
    compareLists(strs(got.tracks), strs(want.tracks));
    compareLists(strs(got.events), strs(want.events));
    compareLists(strs(got.args), strs(want.args));
    compareLists(strs(got.allocations), strs(want.allocations));
    compareLists(strs(got.flows), strs(want.flows));
    compareLists(strs(got.counters), strs(want.counters));
    compareLists(strs(got.stages), strs(want.stages));
}

void compareTraces(const Trace &got, const Trace &want)
{
    QCOMPARE(got.strings.size(), want.strings.size());
    for (uint32_t i = 0; i < want.strings.size(); ++i)
        QCOMPARE(got.strings[StringId(i)], want.strings[StringId(i)]);
    QCOMPARE(got.runs.size(), want.runs.size());
    for (size_t r = 0; r < want.runs.size(); ++r) {
        compareRuns(got.runs[r], want.runs[r]);
        if (QTest::currentTestFailed())
            qWarning("in run %zu", r);
    }
}

// ---- a recording: batches fed both to the writer and to a collector ----

// Sends every call to two sinks: what the collector keeps is what the file must give back.
class Tee final : public TraceSink
{
public:
    Tee(TraceSink &a, TraceSink &b)
        : m_a(a)
        , m_b(b)
    { }
    void beginRun(const RunInfo &info) override
    {
        m_a.beginRun(info);
        m_b.beginRun(info);
    }
    void write(EventBatch &&batch) override
    {
        m_a.write(EventBatch(batch));
        m_b.write(std::move(batch));
    }
    void endRun(const RunSummary &summary) override
    {
        m_a.endRun(summary);
        m_b.endRun(summary);
    }

private:
    TraceSink &m_a;
    TraceSink &m_b;
};

Event ev(EventKind kind, TrackId track, int64_t start, int64_t duration, uint32_t name, uint8_t depth = 0)
{
    Event e;
    e.kind = kind;
    e.track = track;
    e.start = start;
    e.duration = duration;
    e.name = StringId(name);
    e.depth = depth;
    return e;
}

EventArgs kernelArgs(int64_t correlation, int32_t stream)
{
    EventArgs a;
    a.correlation = correlation;
    a.device = 0;
    a.stream = stream;
    a.grid[0] = 128;
    a.grid[1] = 2;
    a.grid[2] = 1;
    a.block[0] = 256;
    a.block[1] = 1;
    a.block[2] = 1;
    return a;
}

const TrackId kCpu(0), kGpu(1), kMemory(2), kStages(3);

// The first batch of the eager run: every event kind, every optional field.
EventBatch eagerBatch1()
{
    EventBatch b;
    b.firstString = 1;
    b.newStrings = {"aten::add",
                    "[8,256],[8,256]",
                    "3,5,9",
                    "cudaLaunchKernel",
                    "sgemm_128x64",
                    "ProfilerStep#0",
                    "recompile: input 0 shape [8] -> [9]",
                    "{\"cache\":\"hit\"}",
                    "thread 1",
                    "stream 7",
                    "memory",
                    "compile",
                    "ünïcode ✓",
                    std::string("nul\0inside", 10)};
    b.newTracks = {{kCpu, TrackKind::CpuThread, StringId(9), 100, 101, -1, 0},
                   {kGpu, TrackKind::GpuStream, StringId(10), 100, 7, 0, 2},
                   {kMemory, TrackKind::Counter, StringId(11), 100, 0, 0, 3},
                   {kStages, TrackKind::CompileStages, StringId(12), 100, 101, -1, 1}};
    Event add = ev(EventKind::Op, kCpu, 100, 500, 1, 1);
    add.detail = StringId(2);
    add.flops = 1024.5f;
    add.bytes = 8192;
    Event cpuKernel = ev(EventKind::Kernel, kCpu, 150, 300, 5, 2);
    cpuKernel.detail = StringId(3);
    cpuKernel.args = ArgsId(0);
    cpuKernel.flops = -0.0f; // bit-exact, not "zero"
    Event launch = ev(EventKind::Runtime, kCpu, 700, 50, 4, 1);
    launch.args = ArgsId(1);
    Event instant = ev(EventKind::Instant, kCpu, 900, 0, 7, 1);
    instant.detail = StringId(7);
    Event gemm = ev(EventKind::Kernel, kGpu, 2000, 5000, 5);
    gemm.args = ArgsId(2);
    gemm.flops = 3.5e12f;
    gemm.bytes = 1.25e9f;
    gemm.detail = StringId(0); // "" as a detail is not "no detail"
    Event copy = ev(EventKind::Memcpy, kGpu, 8000, 1000, 13);
    copy.args = ArgsId(3);
    copy.bytes = 1 << 20;
    Event set = ev(EventKind::Memset, kGpu, 9500, 200, 14);
    set.args = ArgsId(4);
    b.events = {ev(EventKind::Step, kCpu, 0, 1'000'000, 6),     add,  cpuKernel, launch, instant,
                ev(EventKind::UserRange, kCpu, 950, 10, 13, 1), gemm, copy,      set};
    EventArgs a0;
    a0.externalId = 77;
    a0.extra = StringId(8);
    EventArgs a3 = kernelArgs(13, 7);
    a3.copyKind = CopyKind::HostToDevice;
    a3.pinned = true;
    EventArgs a4 = kernelArgs(int64_t(1) << 40, -1);
    a4.copyKind = CopyKind::PeerToPeer;
    a4.externalId = -5;
    b.args = {a0, kernelArgs(12, -1), kernelArgs(12, 7), a3, a4};
    b.allocations = {{120, 0xffff800000001000ull, 4096, 4096, 2 << 20, EventId(1), kCpu, -1},
                     {600, 0xffff800000001000ull, -4096, 0, 2 << 20, EventId(), TrackId(), 0}};
    b.flows = {{12, EventId(3), EventId(6), FlowKind::Launch},
               {0xfffffffffffffff0ull, EventId(), EventId(0), FlowKind::ForwardBackward}};
    b.counters = {{100, 4096.0, kMemory}, {600, 0.1, kMemory}};
    return b;
}

// The second batch: strings partly sent before, an unnamed event, a negative
// start, a track out of start order, events whose ids continue the first batch's.
EventBatch eagerBatch2()
{
    EventBatch b;
    b.firstEvent = 9;
    b.firstArgs = 5;
    b.firstString = 14;
    b.newStrings = {std::string("nul\0inside", 10), "with\nnewline", "aten::mm"};
    Event unnamed = ev(EventKind::Op, kCpu, 1'100'000, 40, 0);
    unnamed.name = StringId();
    Event mm = ev(EventKind::Op, kCpu, 1'200'000, 400'000, 16);
    mm.detail = StringId(15);
    mm.args = ArgsId(5);
    b.events = {ev(EventKind::Instant, kCpu, -250, 0, 15), unnamed, mm, ev(EventKind::Kernel, kGpu, 2'000'000, 7, 5, 3),
                ev(EventKind::Kernel, kGpu, 1'500'000, 1, 5)};
    b.args = {kernelArgs(-1, 3)};
    b.counters = {{1'200'000, -3.25, kMemory}};
    return b;
}

compiler::CompileStage stage(const std::string &name, int segment)
{
    compiler::CompileStage s;
    s.name = name;
    s.segment = segment;
    s.graphJson = R"({"version":1,"nodes":[{"id":0,"op":"placeholder"}]})";
    s.detailsJson = name == "fuse" ? R"({"kernels":[],"decisions":["cannot fuse 3 with 5: cycle"]})" : "";
    s.code = name == "codegen" ? "extern \"C\" void k0(float *out)\n{\n    out[0] = 1;\n}\n" : "";
    s.durationMs = 0.1 + segment;
    s.log = {"line one", "with\nnewline", "ünïcode"};
    s.stats = {12, 3, 4096.5, name == "fuse" ? -1 : 1 << 20, -1};
    return s;
}

CompileStages someStages()
{
    return {stage("capture", 0), stage("fuse", 0), stage("codegen", 1)};
}

RunInfo info(const std::string &name)
{
    return {name,
            "mlp",
            name == "compiled" ? "compiled" : "eager",
            123456789,
            1'700'000'000'000'000'000,
            "record_shapes=1 profile_memory=1"};
}

TraceMeta givenMeta()
{
    TraceMeta meta;
    meta.producer = "fusescope test";
    meta.host = "testhost";
    meta.cpuModel = "Test CPU";
    meta.gpu = "Test GPU 80GB";
    meta.createdUtc = "2026-11-30T12:00:00Z";
    meta.commandLine = "fusescope profile --model mlp";
    return meta;
}

// Two runs: eager (two batches, one of them empty but for a counter) and
// compiled (its summary says it was cut short, it has compile stages).
Trace recordTwoRuns(TraceWriter &writer)
{
    TraceCollector collector;
    Tee tee(writer, collector);
    tee.beginRun(info("eager"));
    tee.write(eagerBatch1());
    tee.write(eagerBatch2());
    EventBatch countersOnly;
    countersOnly.firstEvent = 14;
    countersOnly.firstArgs = 6;
    countersOnly.counters = {{1'700'000, 1e300, kMemory}};
    tee.write(std::move(countersOnly));
    tee.endRun({2'000'007, 14, 1, 7, true});
    tee.beginRun(info("compiled"));
    EventBatch b;
    b.firstString = 17;
    b.newStrings = {"fused_add_relu_0"};
    b.newTracks = {{TrackId(0), TrackKind::CpuThread, StringId(9), 100, 101, -1, 0}};
    b.events = {ev(EventKind::Kernel, TrackId(0), 10, 20, 17), ev(EventKind::Kernel, TrackId(0), 40, 20, 17)};
    tee.write(std::move(b));
    tee.endRun({60, 2, 0, 0, false});
    writer.writeCompileStages(1, someStages());
    collector.trace().runs[1].stages = someStages();
    writer.setRunValue(1, "hints", "3");
    writer.setRunValue(1, "hints", "4");
    return std::move(collector.trace());
}

// ---- the time-range and LOD workload: many chunks, a range over all of them ----

constexpr int kBatches = 5;
constexpr int kPerBatch = 5000; // two chunks of the busy track per batch
constexpr int64_t kPeriod = 1500;
constexpr int64_t kTotalNs = kBatches * kPerBatch * kPeriod;
constexpr int kOpsPerBatch = 2, kKernelsPerOp = 20;
constexpr int kEventsPerBatch = kPerBatch + kOpsPerBatch * (1 + kKernelsPerOp);

// Track 0: kernels (depth 1) every 1.5 µs, and in the last batch the step
// (depth 0) that spans all of them, as a recorder sends a range when it ends.
// Track 1: 3 ms ops (depth 0) 3.5 ms apart, each with 20 kernels of 50 µs.
std::vector<EventBatch> rangeBatches()
{
    std::vector<EventBatch> batches;
    uint32_t next = 0;
    for (int b = 0; b < kBatches; ++b) {
        EventBatch batch;
        batch.firstEvent = next;
        if (b == 0) {
            batch.firstString = 1;
            batch.newStrings = {"kernel", "step"};
            batch.newTracks = {{TrackId(0), TrackKind::CpuThread, StringId(1), 1, 1, -1, 0},
                               {TrackId(1), TrackKind::GpuStream, StringId(1), 1, 2, 0, 1}};
        }
        if (b == kBatches - 1)
            batch.events.push_back(ev(EventKind::Step, TrackId(0), 0, kTotalNs, 2, 0));
        for (int i = b * kPerBatch; i < (b + 1) * kPerBatch; ++i)
            batch.events.push_back(ev(EventKind::Kernel, TrackId(0), i * kPeriod, 1000, 1, 1));
        for (int i = kOpsPerBatch * b; i < kOpsPerBatch * (b + 1); ++i) {
            const int64_t start = i * 3'500'000 + 17;
            batch.events.push_back(ev(EventKind::Op, TrackId(1), start, 3'000'000, 1, 0));
            for (int k = 0; k < kKernelsPerOp; ++k)
                batch.events.push_back(ev(EventKind::Kernel, TrackId(1), start + 1000 + k * 100'000, 50'000, 1, 1));
        }
        next += static_cast<uint32_t>(batch.events.size());
        batches.push_back(std::move(batch));
    }
    return batches;
}

// Writes the workload; without endRun when `end` is false (a writer that died).
Trace recordRanges(const QString &path, bool end)
{
    TraceWriter writer(path.toStdString());
    TraceCollector collector;
    Tee tee(writer, collector);
    tee.beginRun(info("ranges"));
    for (EventBatch &b : rangeBatches())
        tee.write(std::move(b));
    if (end)
        tee.endRun({kTotalNs, int64_t(collector.trace().runs[0].events.size()), 1, 0, true});
    return std::move(collector.trace());
}

// The level as the definition says, bucket by bucket, without lod.cpp.
std::vector<LodBucket> bruteForceLod(const std::vector<Event> &events, TrackId track, int level)
{
    const int64_t width = lodBucketNs(level);
    std::map<int64_t, LodBucket> buckets;
    const auto at = [&](int64_t index) -> LodBucket & {
        LodBucket &b = buckets[index];
        b.index = index;
        return b;
    };
    for (const Event &e : events) {
        if (e.track != track)
            continue;
        LodBucket &b = at(e.start / width); // starts are not negative here
        ++b.count;
        b.maxDepth = std::max(b.maxDepth, e.depth);
        if (e.depth != 0)
            continue;
        for (int64_t i = e.start / width; i * width < e.end(); ++i)
            at(i).busyNs += std::min(e.end(), (i + 1) * width) - std::max(e.start, i * width);
    }
    std::vector<LodBucket> out;
    for (const auto &entry : buckets)
        out.push_back(entry.second);
    return out;
}

// ---- bad files ----

QString writeBytes(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

void execSql(const QString &path, const char *sql)
{
    sqlite3 *db = nullptr;
    sqlite3_open(path.toLocal8Bit().constData(), &db);
    char *message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK)
        qFatal("%s: %s", sql, message);
    sqlite3_close(db);
}

// The message of the error opening `path`, or "" when it opened.
QString openError(const QString &path)
{
    try {
        TraceReader reader(path.toStdString());
        return {};
    } catch (const Error &e) {
        return QString::fromStdString(e.what());
    }
}

QString writeSmallTrace(const QTemporaryDir &dir, const QString &name)
{
    const QString path = dir.filePath(name);
    TraceWriter writer(path.toStdString(), givenMeta());
    recordTwoRuns(writer);
    return path;
}

} // namespace

class TestTraceStore : public QObject
{
    Q_OBJECT
private slots:
    void roundTripIsExact()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("t.fstrace");
        Trace want;
        {
            TraceWriter writer(path.toStdString(), givenMeta());
            want = recordTwoRuns(writer);
        }
        TraceReader reader(path.toStdString());
        const std::optional<Trace> got = reader.load();
        QVERIFY(got);
        compareTraces(*got, want);
        const TraceMeta &meta = got->meta;
        QCOMPARE(meta.schemaVersion, 1);
        QCOMPARE(meta.producer, givenMeta().producer);
        QCOMPARE(meta.host, givenMeta().host);
        QCOMPARE(meta.cpuModel, givenMeta().cpuModel);
        QCOMPARE(meta.gpu, givenMeta().gpu);
        QCOMPARE(meta.createdUtc, givenMeta().createdUtc);
        QCOMPARE(meta.commandLine, givenMeta().commandLine);
    }

    // Open addressing over ids: equal strings share an id through the index's
    // growth, a copy's index finds the copy's strings, and the first intern
    // indexes what push() appended.
    void stringTableInterns()
    {
        StringTable table;
        QCOMPARE(table.intern("").value, 0u);
        std::vector<StringId> ids;
        for (int i = 0; i < 5000; ++i)
            ids.push_back(table.intern("kernel_" + std::to_string(i)));
        QCOMPARE(table.size(), size_t(5001));
        for (int i = 0; i < 5000; ++i) {
            QCOMPARE(table.intern("kernel_" + std::to_string(i)).value, ids[size_t(i)].value);
            QCOMPARE(table[ids[size_t(i)]], "kernel_" + std::to_string(i));
        }
        StringTable copy = table;
        table = StringTable();
        QCOMPARE(copy.intern("kernel_4999").value, ids.back().value);
        QCOMPARE(copy.intern("new").value, 5001u);

        StringTable read;
        read.push("a");
        read.push("b");
        QCOMPARE(read.intern("b").value, 2u);
        QCOMPARE(read.intern("c").value, 3u);
        QCOMPARE(read.intern("a").value, 1u);
    }

    void runsAreListedWithoutLoading()
    {
        QTemporaryDir dir;
        TraceReader reader(writeSmallTrace(dir, "t.fstrace").toStdString());
        const auto &runs = reader.runs();
        QCOMPARE(runs.size(), size_t(2));
        QCOMPARE(str(runs[0].info), str(info("eager")));
        QCOMPARE(str(runs[0].summary), str(RunSummary {2'000'007, 14, 1, 7, true}));
        // endRun() was called, but the summary said the capture was cut short.
        QCOMPARE(str(runs[1].summary), str(RunSummary {60, 2, 0, 0, false}));
        QCOMPARE(runs[1].values.at("hints"), std::string("4"));
        QVERIFY(runs[0].values.empty());
        QCOMPARE(reader.strings()[StringId(15)], std::string("with\nnewline"));
    }

    void loadRunAppendsOneRun()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("t.fstrace");
        TraceWriter writer(path.toStdString());
        const Trace want = recordTwoRuns(writer);
        writer.close();
        TraceReader reader(path.toStdString());
        Trace got;
        QVERIFY(reader.loadRun(1, got));
        QCOMPARE(got.runs.size(), size_t(1));
        compareRuns(got.runs[0], want.runs[1]);
        QCOMPARE(got.strings.size(), want.strings.size());
        QVERIFY_THROWS_EXCEPTION(Error, reader.loadRun(2, got));
    }

    void argsAndTracksOneByOne()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("t.fstrace");
        TraceWriter writer(path.toStdString());
        const Trace want = recordTwoRuns(writer);
        writer.close();
        TraceReader reader(path.toStdString());
        for (uint32_t i = 0; i < want.runs[0].args.size(); ++i)
            QCOMPARE(str(reader.args(0, ArgsId(i))), str(want.runs[0].args[i]));
        QVERIFY_THROWS_EXCEPTION(Error, reader.args(0, ArgsId(6)));
        QVERIFY_THROWS_EXCEPTION(Error, reader.args(1, ArgsId(0)));
        compareLists(strs(reader.tracks(0)), strs(want.runs[0].tracks));
        compareLists(strs(reader.compileStages(1)), strs(someStages()));
        QVERIFY(reader.compileStages(0).empty());
    }

    void metaIsFilledIn()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("t.fstrace");
        TraceMeta partial;
        partial.gpu = "H200";
        TraceWriter(path.toStdString(), partial).close();
        TraceReader reader(path.toStdString());
        const TraceMeta &meta = reader.meta();
        QVERIFY2(meta.producer.rfind("fusescope ", 0) == 0, meta.producer.c_str());
        QVERIFY(!meta.host.empty());
        QVERIFY(!meta.cpuModel.empty());
        QCOMPARE(meta.gpu, std::string("H200"));
        QVERIFY(!meta.commandLine.empty());
        QVERIFY2(QRegularExpression(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$)")
                     .match(QString::fromStdString(meta.createdUtc))
                     .hasMatch(),
                 meta.createdUtc.c_str());
        QCOMPARE(reader.schemaVersion().major, 1);
        QCOMPARE(reader.schemaVersion().minor, 0);
        QVERIFY(reader.runs().empty());
    }

    void compileStagesAreReplaced()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("t.fstrace");
        {
            TraceWriter writer(path.toStdString());
            writer.beginRun(info("compiled"));
            writer.writeCompileStages(0, someStages());
            writer.writeCompileStages(0, {stage("plan-memory", 2)});
            writer.endRun({});
            QVERIFY_THROWS_EXCEPTION(Error, writer.writeCompileStages(1, {}));
        }
        TraceReader reader(path.toStdString());
        compareLists(strs(reader.compileStages(0)), strs(CompileStages {stage("plan-memory", 2)}));
    }

    void anExistingFileIsReplaced()
    {
        QTemporaryDir dir;
        const QString path = writeSmallTrace(dir, "t.fstrace");
        {
            TraceWriter writer(path.toStdString());
            writer.beginRun(info("again"));
            writer.endRun({});
        }
        TraceReader reader(path.toStdString());
        QCOMPARE(reader.runs().size(), size_t(1));
        QCOMPARE(reader.runs()[0].info.name, std::string("again"));
        QCOMPARE(reader.strings().size(), size_t(1));
    }

    void timeRange_data()
    {
        QTest::addColumn<qint64>("t0");
        QTest::addColumn<qint64>("t1");
        QTest::addColumn<int>("track");
        QTest::newRow("before everything") << qint64(-1000) << qint64(-1) << 0;
        QTest::newRow("time zero") << qint64(0) << qint64(0) << 0;
        QTest::newRow("middle") << qint64(7'000'000) << qint64(7'010'000) << 0;
        QTest::newRow("across a chunk boundary") << qint64(4090 * kPeriod) << qint64(4100 * kPeriod) << 0;
        QTest::newRow("across a batch boundary") << qint64(4999 * kPeriod) << qint64(5001 * kPeriod) << 0;
        QTest::newRow("an end is inclusive") << qint64(17 * kPeriod + 1000) << qint64(17 * kPeriod + 1000) << 0;
        QTest::newRow("in a gap") << qint64(17 * kPeriod + 1001) << qint64(18 * kPeriod - 1) << 0;
        QTest::newRow("after everything") << qint64(kTotalNs + 1) << qint64(kTotalNs + 10) << 0;
        QTest::newRow("everything") << std::numeric_limits<qint64>::min() << std::numeric_limits<qint64>::max() << 0;
        QTest::newRow("long ops, inside one") << qint64(3'560'000) << qint64(3'600'000) << 1;
        QTest::newRow("long ops, between") << qint64(3'000'018) << qint64(3'500'016) << 1;
    }
    void timeRange()
    {
        QFETCH(qint64, t0);
        QFETCH(qint64, t1);
        QFETCH(int, track);
        QTemporaryDir dir;
        const QString path = dir.filePath("r.fstrace");
        const Trace want = recordRanges(path, true);
        const std::vector<Event> &all = want.runs[0].events;
        std::vector<std::pair<int64_t, uint32_t>> expected; // (start, id)
        for (uint32_t id = 0; id < all.size(); ++id) {
            const Event &e = all[id];
            if (e.track == TrackId(uint16_t(track)) && e.start <= t1 && e.end() >= t0)
                expected.emplace_back(e.start, id);
        }
        std::sort(expected.begin(), expected.end());
        TraceReader reader(path.toStdString());
        std::vector<EventId> ids;
        const std::vector<Event> got = reader.events(0, TrackId(uint16_t(track)), t0, t1, &ids);
        QCOMPARE(got.size(), expected.size());
        QCOMPARE(ids.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i) {
            QCOMPARE(ids[i].value, expected[i].second);
            QCOMPARE(str(got[i]), str(all[ids[i].value]));
        }
    }

    void lodAddsUpToTheEvents()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("r.fstrace");
        const Trace want = recordRanges(path, true);
        const std::vector<Event> &events = want.runs[0].events;
        TraceReader reader(path.toStdString());
        const int top = lodTopLevel(kTotalNs);
        QCOMPARE(top, 3); // 100 µs × 8³ = 51.2 ms ≥ 37.5 ms
        int stored = 0;
        for (uint16_t track = 0; track < 2; ++track) {
            for (int level = 0; level <= top; ++level) {
                const auto lod = reader.lod(0, TrackId(track), level);
                if (!lod)
                    continue;
                ++stored;
                QCOMPARE(lod->level, level);
                compareLists(strs(lod->buckets), strs(bruteForceLod(events, TrackId(track), level)));
                if (QTest::currentTestFailed())
                    return;
            }
        }
        // Track 0 at every level; track 1 (210 events over 34.5 ms) only at
        // levels 2 and 3 (6 buckets and 1): below, a bucket would hold fewer than 16.
        QCOMPARE(stored, 4 + 2);
        QVERIFY(!reader.lod(0, TrackId(1), 1));
        QVERIFY(!reader.lod(0, TrackId(0), top + 1));
        const auto coarse = reader.lod(0, TrackId(0), 2);
        QVERIFY(coarse);
        int64_t count = 0, busy = 0;
        for (const LodBucket &b : coarse->buckets) {
            count += b.count;
            busy += b.busyNs;
            QVERIFY(b.busyNs <= coarse->bucketNs());
        }
        QCOMPARE(count, int64_t(kBatches * kPerBatch + 1));
        QCOMPARE(busy, kTotalNs); // the step, the only depth-0 event
    }

    void lodOfAnUnfinishedRunIsComputedTheSameWay()
    {
        QTemporaryDir dir;
        const QString ended = dir.filePath("ended.fstrace"), cut = dir.filePath("cut.fstrace");
        recordRanges(ended, true);
        recordRanges(cut, false);
        TraceReader a(ended.toStdString()), b(cut.toStdString());
        QVERIFY(!b.runs()[0].summary.complete);
        for (uint16_t track = 0; track < 2; ++track) {
            for (int level = 0; level <= lodTopLevel(kTotalNs) + 1; ++level) {
                const auto stored = a.lod(0, TrackId(track), level), computed = b.lod(0, TrackId(track), level);
                QCOMPARE(bool(computed), bool(stored));
                if (stored)
                    compareLists(strs(computed->buckets), strs(stored->buckets));
            }
        }
    }

    void lodBuilderIgnoresOrder()
    {
        std::vector<Event> events = rangeBatches().back().events;
        LodBuilder forward, backward;
        forward.add(events);
        std::reverse(events.begin(), events.end());
        for (const Event &e : events)
            backward.add(std::span(&e, 1));
        const auto a = forward.levels(kTotalNs), b = backward.levels(kTotalNs);
        QCOMPARE(a.size(), b.size());
        QVERIFY(!a.empty());
        for (size_t i = 0; i < a.size(); ++i)
            compareLists(strs(a[i].buckets), strs(b[i].buckets));
    }

    void killedWriterLeavesAReadableFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("killed.fstrace");
        std::vector<EventBatch> batches = rangeBatches();
        int ready[2];
        QCOMPARE(pipe(ready), 0);
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            // The child writes three batches, says so, and waits to be killed.
            try {
                TraceWriter writer(path.toStdString());
                writer.beginRun(info("killed"));
                for (int b = 0; b < 3; ++b)
                    writer.write(std::move(batches[size_t(b)]));
                const char done = 1;
                if (::write(ready[1], &done, 1) != 1)
                    _exit(2);
                for (;;)
                    pause();
            } catch (...) {
                _exit(1);
            }
        }
        char done = 0;
        QCOMPARE(::read(ready[0], &done, 1), ssize_t(1));
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        ::close(ready[0]);
        ::close(ready[1]);
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        QVERIFY(QFile::exists(path + "-wal"));

        TraceReader reader(path.toStdString());
        QCOMPARE(reader.runs().size(), size_t(1));
        const RunSummary &summary = reader.runs()[0].summary;
        QVERIFY(!summary.complete);
        QCOMPARE(summary.events, int64_t(3 * kEventsPerBatch));
        QCOMPARE(summary.durationNs, (3 * kPerBatch - 1) * kPeriod + 1000); // the last end written
        const std::optional<Trace> trace = reader.load();
        QVERIFY(trace);
        const std::vector<Event> &events = trace->runs[0].events;
        QCOMPARE(events.size(), size_t(3 * kEventsPerBatch));
        const std::vector<EventBatch> sent = rangeBatches();
        for (int b = 0; b < 3; ++b) {
            for (size_t i = 0; i < sent[size_t(b)].events.size(); ++i)
                QCOMPARE(str(events[sent[size_t(b)].firstEvent + i]), str(sent[size_t(b)].events[i]));
        }
        QVERIFY(reader.lod(0, TrackId(0), 0));
    }

    // A full disk, made by a file-size limit in a child process: the batch
    // that does not fit throws an Error naming the file and SQLite's reason,
    // and every batch before it is in the file.
    void aFullDiskIsAnError()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("full.fstrace");
        int report[2];
        QCOMPARE(pipe(report), 0);
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            signal(SIGXFSZ, SIG_IGN); // write() then fails with EFBIG instead of killing
            const rlimit limit {512 * 1024, 512 * 1024};
            setrlimit(RLIMIT_FSIZE, &limit);
            int written = 0;
            std::string message = "no error";
            try {
                TraceWriter writer(path.toStdString());
                writer.beginRun(info("full"));
                for (; written < 1000; ++written) {
                    EventBatch b;
                    b.firstEvent = uint32_t(written * kPerBatch);
                    for (int i = 0; i < kPerBatch; ++i)
                        b.events.push_back(
                            ev(EventKind::Kernel, TrackId(0), (written * kPerBatch + i) * kPeriod, 1000, 0));
                    writer.write(std::move(b));
                }
            } catch (const Error &e) {
                message = e.what();
            }
            message = std::to_string(written) + "\n" + message;
            _exit(::write(report[1], message.data(), message.size()) == ssize_t(message.size()) ? 0 : 1);
        }
        ::close(report[1]);
        QByteArray received;
        char buffer[4096];
        for (ssize_t n; (n = ::read(report[0], buffer, sizeof buffer)) > 0;)
            received.append(buffer, n);
        ::close(report[0]);
        int status = 0;
        waitpid(child, &status, 0);
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        const int written = received.left(received.indexOf('\n')).toInt();
        const QString message = QString::fromUtf8(received.mid(received.indexOf('\n') + 1));
        QVERIFY2(written > 0 && written < 1000, qPrintable(message));
        QVERIFY2(message.startsWith(path + ": "), qPrintable(message));
        QVERIFY2(message.contains("disk"), qPrintable(message)); // "disk I/O error" or "database or disk is full"

        TraceReader reader(path.toStdString());
        QVERIFY(!reader.runs()[0].summary.complete);
        QCOMPARE(reader.runs()[0].summary.events, int64_t(written) * kPerBatch);
        const auto trace = reader.load();
        QVERIFY(trace);
        QCOMPARE(trace->runs[0].events.size(), size_t(written) * kPerBatch);
    }

    void progressAndCancel()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("r.fstrace");
        recordRanges(path, true);
        TraceReader reader(path.toStdString());
        std::vector<double> reported;
        LoadControl control;
        control.progress = [&](double f) { reported.push_back(f); };
        QVERIFY(reader.load(control));
        QVERIFY(reported.size() >= 2);
        QVERIFY(std::is_sorted(reported.begin(), reported.end()));
        QCOMPARE(reported.back(), 1.0);
        std::atomic<bool> cancel = false;
        control.progress = [&](double) { cancel = true; };
        control.cancel = &cancel;
        QVERIFY(!reader.load(control));
        Trace partial;
        QVERIFY(!reader.loadRun(0, partial, control));
        QVERIFY(partial.runs.empty());
    }

    void schemaVersions_data()
    {
        QTest::addColumn<QString>("version");
        QTest::addColumn<QString>("error");
        QTest::newRow("newer major") << "2.0"
                                     << ": trace schema version 2.0 is newer than this Fusescope reads (1.x); "
                                        "update Fusescope";
        QTest::newRow("older major") << "0.9"
                                     << ": trace schema version 0.9 is older than this Fusescope reads (1.x)";
        QTest::newRow("unreadable") << "one"
                                    << ": has an unreadable trace schema version 'one'";
        QTest::newRow("newer minor") << "1.7"
                                     << "";
    }
    void schemaVersions()
    {
        QFETCH(QString, version);
        QFETCH(QString, error);
        QTemporaryDir dir;
        const QString path = writeSmallTrace(dir, "t.fstrace");
        // What a later minor version may do: add tables and columns.
        const QByteArray sql = "UPDATE meta SET value = '" + version.toUtf8()
            + "' WHERE key = 'schema_version'; ALTER TABLE event_chunks ADD COLUMN checksum INTEGER; "
              "ALTER TABLE runs ADD COLUMN gpu_clock TEXT; CREATE TABLE hints(run, text);";
        execSql(path, sql.constData());
        QCOMPARE(openError(path), error.isEmpty() ? QString() : path + error);
        if (!error.isEmpty())
            return;
        TraceReader reader(path.toStdString());
        QCOMPARE(reader.schemaVersion().minor, 7);
        const auto trace = reader.load();
        QVERIFY(trace);
        QCOMPARE(trace->runs.size(), size_t(2));
        QCOMPARE(trace->runs[0].events.size(), size_t(14));
    }

    void badFiles_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("reason");
        QTest::newRow("missing") << "missing"
                                 << ": no such file";
        QTest::newRow("directory") << "directory"
                                   << ": is a directory";
        QTest::newRow("empty") << "empty"
                               << ": is empty, not a Fusescope trace";
        QTest::newRow("garbage") << "garbage"
                                 << ": is not a Fusescope trace (not an SQLite database)";
        QTest::newRow("other sqlite") << "other"
                                      << ": is an SQLite database but not a Fusescope trace";
        QTest::newRow("meta without our columns") << "lookalike"
                                                  << ": is an SQLite database but not a Fusescope trace";
        QTest::newRow("no schema version") << "noversion"
                                           << "no schema_version in meta";
        QTest::newRow("truncated") << "truncated"
                                   << ": is truncated (";
        QTest::newRow("truncated header") << "stub"
                                          << ": is a damaged or truncated SQLite database";
    }
    void badFiles()
    {
        QFETCH(QString, name);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        QString path = dir.filePath(name);
        if (name == "directory") {
            path = dir.path();
        } else if (name == "empty") {
            writeBytes(dir, name, {});
        } else if (name == "garbage") {
            writeBytes(dir, name, QByteArray(8192, '\x5a'));
        } else if (name == "other") {
            execSql(path, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
        } else if (name == "lookalike") {
            execSql(path, "CREATE TABLE meta(k, v); CREATE TABLE runs(id);");
        } else if (name == "noversion") {
            writeSmallTrace(dir, name);
            execSql(path, "DELETE FROM meta WHERE key = 'schema_version'");
        } else if (name == "truncated") {
            writeSmallTrace(dir, name);
            QFile f(path);
            QVERIFY(f.resize(f.size() / 2));
        } else if (name == "stub") {
            writeBytes(dir, name, QByteArray("SQLite format 3\0\x10\x00", 18));
        }
        const QString error = openError(path);
        QVERIFY2(error.startsWith(path + ":"), qPrintable(error));
        QVERIFY2(error.contains(reason), qPrintable(error));
    }

    void corruptChunksAreReported_data()
    {
        QTest::addColumn<QByteArray>("sql");
        QTest::newRow("garbage bytes") << QByteArray(
            "UPDATE event_chunks SET data = x'ffffffff' WHERE first_event = 0");
        QTest::newRow("cut short") << QByteArray("UPDATE event_chunks SET data = substr(data, 1, length(data) - 3) "
                                                 "WHERE first_event = 0");
        QTest::newRow("a chunk missing") << QByteArray("DELETE FROM event_chunks WHERE first_event = 0");
        QTest::newRow("a string missing") << QByteArray("DELETE FROM strings WHERE id = 3");
        QTest::newRow("args cut short") << QByteArray("UPDATE args_chunks SET data = x'02'");
    }
    void corruptChunksAreReported()
    {
        QFETCH(QByteArray, sql);
        QTemporaryDir dir;
        const QString path = writeSmallTrace(dir, "t.fstrace");
        execSql(path, sql.constData());
        TraceReader reader(path.toStdString());
        QString error;
        try {
            reader.load();
        } catch (const Error &e) {
            error = e.what();
        }
        QVERIFY2(error.startsWith(path + ": the trace is corrupt ("), qPrintable(error));
    }

    void writerErrors()
    {
        QTemporaryDir dir;
        const QString nowhere = dir.filePath("no/such/dir/t.fstrace");
        try {
            TraceWriter writer(nowhere.toStdString());
            QFAIL("a file in a missing directory was created");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).startsWith(nowhere + ": cannot create the trace file: "), e.what());
        }
        const QString path = dir.filePath("t.fstrace");
        TraceWriter writer(path.toStdString());
        QVERIFY_THROWS_EXCEPTION(Error, writer.write({}));
        QVERIFY_THROWS_EXCEPTION(Error, writer.endRun({}));
        writer.beginRun(info("eager"));
        QCOMPARE(writer.currentRun(), 0);
        QVERIFY_THROWS_EXCEPTION(Error, writer.beginRun(info("again")));
        EventBatch gap;
        gap.firstString = 5; // strings 1-4 never came
        gap.newStrings = {"x"};
        QVERIFY_THROWS_EXCEPTION(Error, writer.write(std::move(gap)));
        writer.endRun({});
        QCOMPARE(writer.currentRun(), -1);
        writer.close();
        QVERIFY_THROWS_EXCEPTION(Error, writer.beginRun(info("closed")));
        // The failed batch left nothing behind, and a closed file is one file.
        QVERIFY(!QFile::exists(path + "-wal"));
        TraceReader reader(path.toStdString());
        QCOMPARE(reader.strings().size(), size_t(1));
        QCOMPARE(reader.runs().size(), size_t(1));
        QVERIFY(reader.runs()[0].summary.complete);
    }
};

QTEST_GUILESS_MAIN(TestTraceStore)
#include "tst_profiler_store.moc"
