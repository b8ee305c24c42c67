#include "core/compiler/graph_json.h"
#include "profiler/chromeexport.h"
#include "profiler/statistics.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>
#include <QtCore/qfloat16.h> // complete, so QCOMPARE's qfloat16 overload can be ruled out for JSON values

#include <fstream>
#include <sstream>
#include <tuple>

using namespace fusescope;
using namespace fusescope::profiler;
using nlohmann::json;

// How QCOMPARE prints a JSON value (found by argument-dependent lookup).
namespace nlohmann {
char *toString(const json &value)
{
    return qstrdup(value.dump().c_str());
}
} // namespace nlohmann

namespace {

// Hand-built traces: strings are interned, everything else is appended as a
// recorder's batches would append it.
TrackId addTrack(Trace &trace, Run &run, const std::string &name, TrackKind kind = TrackKind::CpuThread,
                 int64_t tid = 0)
{
    const TrackId id(static_cast<uint16_t>(run.tracks.size()));
    run.tracks.push_back(Track{id, kind, trace.strings.intern(name), 0, tid, -1, 0});
    return id;
}

Event &addEvent(Trace &trace, Run &run, EventKind kind, const std::string &name, int64_t start, int64_t duration,
                TrackId track, int depth = 0, const std::string &detail = {})
{
    Event e;
    e.kind = kind;
    e.name = trace.strings.intern(name);
    e.start = start;
    e.duration = duration;
    e.track = track;
    e.depth = static_cast<uint8_t>(depth);
    e.detail = trace.strings.intern(detail);
    run.events.push_back(e);
    return run.events.back();
}

ArgsId addArgs(Run &run, const EventArgs &args)
{
    run.args.push_back(args);
    return ArgsId(static_cast<uint32_t>(run.args.size() - 1));
}

EventArgs deviceArgs(int device, CopyKind copyKind = CopyKind::Unknown)
{
    EventArgs a;
    a.device = device;
    a.copyKind = copyKind;
    return a;
}

void addAllocation(Run &run, int64_t time, int64_t bytes, int64_t allocated, int64_t reserved, int device)
{
    Allocation a;
    a.time = time;
    a.bytes = bytes;
    a.allocatedAfter = allocated;
    a.reservedAfter = reserved;
    a.device = static_cast<int16_t>(device);
    run.allocations.push_back(a);
}

template <typename Row>
const Row *findRow(const std::vector<Row> &rows, const std::string &name)
{
    for (const Row &row : rows) {
        if (row.name == name)
            return &row;
    }
    return nullptr;
}

// The nesting fixture: three levels of ops, siblings, a user range between
// two ops, a kernel inside an op, a child that starts with its parent, and an
// op inside an outermost user range.
struct RangeSpec {
    EventKind kind;
    const char *name;
    int64_t start;
    int64_t duration;
    int track;
    int depth;
};

const RangeSpec kNesting[] = {
    {EventKind::Op, "A", 0, 100, 0, 0},         // 0
    {EventKind::Op, "B", 10, 40, 0, 1},         // 1
    {EventKind::Op, "C", 20, 10, 0, 2},         // 2
    {EventKind::Op, "B", 60, 20, 0, 1},         // 3
    {EventKind::UserRange, "U", 85, 10, 0, 1},  // 4
    {EventKind::Op, "C", 86, 4, 0, 2},          // 5
    {EventKind::Op, "D", 0, 50, 1, 0},          // 6
    {EventKind::Kernel, "K", 22, 6, 0, 3},      // 7: inside C, stays in C's self time
    {EventKind::Op, "E", 200, 10, 1, 0},        // 8
    {EventKind::Op, "F", 200, 5, 1, 1},         // 9: starts with its parent
    {EventKind::UserRange, "V", 300, 20, 1, 0}, // 10
    {EventKind::Op, "G", 305, 8, 1, 1},         // 11: no op above it, though nested
};

Trace nestingTrace(const QList<int> &order)
{
    Trace trace;
    Run &run = trace.runs.emplace_back();
    addTrack(trace, run, "main");
    addTrack(trace, run, "worker");
    for (int i : order) {
        const RangeSpec &s = kNesting[i];
        addEvent(trace, run, s.kind, s.name, s.start, s.duration, TrackId(uint16_t(s.track)), s.depth);
    }
    return trace;
}

compiler::TensorMeta vectorMeta()
{
    return compiler::TensorMeta{{4}, {1}, 0, DType::F32, -1};
}

// x -> relu -> add(relu, x) -> output: ids 0, 1, 2, 3.
std::string capturedGraphJson()
{
    compiler::Graph g;
    using compiler::Arg;
    using compiler::NodeKind;
    compiler::Node *x = g.add(NodeKind::Placeholder, "x", {}, {vectorMeta()}, "x");
    compiler::Node *relu = g.add(NodeKind::CallFunction, "aten.relu", {Arg::of(x->out())}, {vectorMeta()}, "relu");
    compiler::Node *add = g.add(NodeKind::CallFunction, "aten.add", {Arg::of(relu->out()), Arg::of(x->out())},
                                {vectorMeta()}, "add");
    g.add(NodeKind::Output, "output", {Arg::list({add->out()})}, {}, "output");
    g.lint();
    return compiler::graphToJsonText(g);
}

compiler::CompileStage stage(const std::string &name, const std::string &graphJson)
{
    compiler::CompileStage s;
    s.name = name;
    s.graphJson = graphJson;
    return s;
}

// Kernels over the captured graph: "1,2" splits 50/50, "2" adds to add, "7"
// is no captured node, the eager kernel has no origins, "relu+add" is no list.
Trace nodeTrace(const std::vector<compiler::CompileStage> &stages)
{
    Trace trace;
    Run &run = trace.runs.emplace_back();
    run.stages = stages;
    const TrackId t = addTrack(trace, run, "main");
    addEvent(trace, run, EventKind::Kernel, "fused_relu_add", 0, 100, t, 0, "1,2").flops = 10;
    addEvent(trace, run, EventKind::Kernel, "add_kernel", 100, 30, t, 0, "2");
    addEvent(trace, run, EventKind::Kernel, "k7", 130, 20, t, 0, "7");
    addEvent(trace, run, EventKind::Kernel, "eager_mul", 150, 5, t);
    addEvent(trace, run, EventKind::Kernel, "odd", 155, 5, t, 0, "relu+add");
    return trace;
}

// Two runs covering every phase the exporter writes.
Trace exportTrace()
{
    Trace trace;
    trace.meta.producer = "fusescope test";
    trace.meta.host = "box";
    Run &eager = trace.runs.emplace_back();
    eager.info.name = "eager";
    const TrackId cpu = addTrack(trace, eager, "main thread", TrackKind::CpuThread, 100);
    const TrackId stream = addTrack(trace, eager, "stream 7", TrackKind::GpuStream, 7);
    const TrackId power = addTrack(trace, eager, "power", TrackKind::Counter, 0);
    addEvent(trace, eager, EventKind::Op, "aten.mm", 1000, 5000, cpu, 0, "[[2,3],[3,4]]");
    EventArgs launch;
    launch.correlation = 42;
    addEvent(trace, eager, EventKind::Runtime, "cudaLaunchKernel", 2000, 1000, cpu, 1).args = addArgs(eager, launch);
    addEvent(trace, eager, EventKind::Instant, "recompile", 3000, 0, cpu, 0, "shape changed");
    EventArgs kernel = deviceArgs(0);
    kernel.stream = 7;
    kernel.correlation = 42;
    kernel.grid[0] = 4;
    kernel.block[0] = 128;
    Event &gemm = addEvent(trace, eager, EventKind::Kernel, "gemm", 4000, 2000, stream, 0, "1,2");
    gemm.flops = 1e6f;
    gemm.args = addArgs(eager, kernel);
    EventArgs copy = deviceArgs(0, CopyKind::HostToDevice);
    copy.pinned = true;
    addEvent(trace, eager, EventKind::Memcpy, "memcpy", 7000, 500, stream).args = addArgs(eager, copy);
    eager.flows.push_back({42, EventId(1), EventId(3), FlowKind::Launch});
    eager.flows.push_back({43, EventId(1), EventId(999), FlowKind::Launch}); // dangling: left out
    addAllocation(eager, 1500, 256, 256, 1024, 0);
    addAllocation(eager, 6500, -256, 0, 1024, 0);
    addAllocation(eager, 1200, 64, 64, 64, -1);
    eager.counters.push_back({1000, 3.5, power});
    eager.counters.push_back({2000, 4.25, power});

    Run &compiled = trace.runs.emplace_back();
    compiled.info.name = "compiled";
    compiled.summary.complete = false;
    const TrackId main = addTrack(trace, compiled, "main thread", TrackKind::CpuThread, 100);
    addEvent(trace, compiled, EventKind::Op, "forward", 0, 900, main);
    addEvent(trace, compiled, EventKind::Kernel, "fused", 100, 700, main, 1);
    compiled.flows.push_back({42, EventId(0), EventId(1), FlowKind::User});
    return trace;
}

std::string exportText(const Trace &trace)
{
    std::ostringstream out;
    exportChromeTrace(trace, out);
    return out.str();
}

// nlohmann rejects invalid JSON and invalid UTF-8, so parsing is the validity check.
json exportJson(const Trace &trace)
{
    const std::string text = exportText(trace);
    try {
        return json::parse(text);
    } catch (const json::exception &e) {
        qWarning("the export is not valid JSON: %s\n%s", e.what(), text.c_str());
        throw;
    }
}

std::vector<json> eventsWhere(const json &doc, const std::string &phase, const std::string &name = {})
{
    std::vector<json> found;
    for (const json &e : doc.at("traceEvents")) {
        if (e.at("ph") == phase && (name.empty() || e.at("name") == name))
            found.push_back(e);
    }
    return found;
}

// The one event of that phase and name; fails the test (by throwing) otherwise.
json onlyEvent(const json &doc, const std::string &phase, const std::string &name)
{
    const std::vector<json> found = eventsWhere(doc, phase, name);
    if (found.size() != 1) {
        qWarning("%zu '%s' events named %s, expected one", found.size(), phase.c_str(), name.c_str());
        throw std::runtime_error("not exactly one event");
    }
    return found.front();
}

json metadata(const json &doc, const std::string &name, int64_t pid, int64_t tid = -1)
{
    for (const json &e : eventsWhere(doc, "M", name)) {
        if (e.at("pid") == pid && (tid < 0 || e.at("tid") == tid))
            return e.at("args");
    }
    return nullptr;
}

} // namespace

class TestProfilerStats : public QObject
{
    Q_OBJECT
private slots:
    // --- statistics ----------------------------------------------------------------

    void selfTime_data()
    {
        QTest::addColumn<QList<int>>("order");
        QTest::newRow("one batch") << QList<int>{0, 1, 2, 7, 3, 4, 5, 6, 8, 9, 10, 11};
        QTest::newRow("outer ranges in a later batch") << QList<int>{1, 2, 7, 3, 6, 9, 11, 0, 4, 5, 8, 10};
        QTest::newRow("second track first") << QList<int>{6, 8, 9, 10, 11, 0, 1, 2, 7, 3, 4, 5};
    }
    void selfTime()
    {
        QFETCH(QList<int>, order);
        const Trace trace = nestingTrace(order);
        const RunStatistics stats = computeStatistics(trace, trace.runs[0]);
        struct Expected {
            const char *name;
            int64_t calls, total, self;
        };
        const Expected expected[] = {
            {"A", 1, 100, 30}, // 100 - B 40 - B 20 - U 10
            {"B", 2, 60, 50},  // 60 - C 10
            {"D", 1, 50, 50},
            {"C", 2, 14, 14},  // the kernel inside C is C's own work
            {"E", 1, 10, 5},
            {"G", 1, 8, 8},
            {"F", 1, 5, 5},
        };
        QCOMPARE(stats.ops.size(), std::size(expected));
        for (size_t i = 0; i < std::size(expected); ++i) {
            QCOMPARE(stats.ops[i].name, std::string(expected[i].name));
            QCOMPARE(stats.ops[i].time.calls, expected[i].calls);
            QCOMPARE(stats.ops[i].time.totalNs, expected[i].total);
            QCOMPARE(stats.ops[i].selfNs, expected[i].self);
        }
        QCOMPARE(stats.opTimeNs, int64_t(168)); // A + D + E + G: ops under ops are not counted again
        QCOMPARE(stats.ops[0].percent, 100.0 * 100 / 168);
        QCOMPARE(stats.ops[3].percent, 100.0 * 14 / 168);
        QCOMPARE(stats.userRanges.size(), size_t(2));
        QCOMPARE(stats.userRanges[0].name, std::string("V"));
        QCOMPARE(stats.userRanges[0].selfNs, int64_t(12));
        QCOMPARE(stats.userRanges[1].time.totalNs, int64_t(10));
        QCOMPARE(stats.userRanges[1].selfNs, int64_t(6));
        QCOMPARE(stats.userRanges[1].percent, 0.0);
    }

    void opTimes_data()
    {
        QTest::addColumn<QList<qint64>>("durations");
        QTest::addColumn<qint64>("total");
        QTest::addColumn<qint64>("min");
        QTest::addColumn<qint64>("max");
        QTest::addColumn<double>("avg");
        QTest::newRow("one call") << QList<qint64>{7} << qint64(7) << qint64(7) << qint64(7) << 7.0;
        QTest::newRow("three calls") << QList<qint64>{5, 1, 9} << qint64(15) << qint64(1) << qint64(9) << 5.0;
        QTest::newRow("zero length") << QList<qint64>{0, 3} << qint64(3) << qint64(0) << qint64(3) << 1.5;
    }
    void opTimes()
    {
        QFETCH(QList<qint64>, durations);
        QFETCH(qint64, total);
        QFETCH(qint64, min);
        QFETCH(qint64, max);
        QFETCH(double, avg);
        Trace trace;
        Run &run = trace.runs.emplace_back();
        const TrackId t = addTrack(trace, run, "main");
        int64_t start = 0;
        for (qint64 d : durations) {
            Event &e = addEvent(trace, run, EventKind::Op, "aten.add", start, d, t);
            e.flops = 2;
            e.bytes = 12;
            start += d + 1;
        }
        const RunStatistics stats = computeStatistics(trace, run);
        QCOMPARE(stats.ops.size(), size_t(1));
        const TimeStats &time = stats.ops[0].time;
        QCOMPARE(time.calls, int64_t(durations.size()));
        QCOMPARE(time.totalNs, total);
        QCOMPARE(time.minNs, min);
        QCOMPARE(time.maxNs, max);
        QCOMPARE(time.avgNs(), avg);
        QCOMPARE(time.flops, 2.0 * double(durations.size()));
        QCOMPARE(time.bytes, 12.0 * double(durations.size()));
    }

    void kernelsPerDevice()
    {
        Trace trace;
        Run &run = trace.runs.emplace_back();
        const TrackId s0 = addTrack(trace, run, "gpu 0", TrackKind::GpuStream);
        const TrackId s1 = addTrack(trace, run, "gpu 1", TrackKind::GpuStream);
        const TrackId cpu = addTrack(trace, run, "main");
        const ArgsId dev0 = addArgs(run, deviceArgs(0));
        const ArgsId dev1 = addArgs(run, deviceArgs(1));
        for (auto [start, duration, track, args] : {std::tuple{0, 100, s0, dev0}, std::tuple{200, 300, s0, dev0},
                                                    std::tuple{0, 250, s1, dev1}}) {
            Event &e = addEvent(trace, run, EventKind::Kernel, "gemm", start, duration, track);
            e.args = args;
            e.flops = 1000;
            e.bytes = 400;
        }
        addEvent(trace, run, EventKind::Kernel, "cpu_add", 0, 50, cpu);
        const RunStatistics stats = computeStatistics(trace, run);
        QCOMPARE(stats.kernels.size(), size_t(3));
        const KernelStats &gemm0 = stats.kernels[0];
        QCOMPARE(gemm0.name, std::string("gemm"));
        QCOMPARE(gemm0.device, 0);
        QCOMPARE(gemm0.time.calls, int64_t(2));
        QCOMPARE(gemm0.time.totalNs, int64_t(400));
        QCOMPARE(gemm0.time.minNs, int64_t(100));
        QCOMPARE(gemm0.time.maxNs, int64_t(300));
        QCOMPARE(gemm0.time.avgNs(), 200.0);
        QCOMPARE(gemm0.gflopsPerSecond(), 5.0);    // 2000 flops in 400 ns
        QCOMPARE(gemm0.gigabytesPerSecond(), 2.0); // 800 bytes in 400 ns
        QCOMPARE(stats.kernels[1].device, 1);
        QCOMPARE(stats.kernels[1].time.totalNs, int64_t(250));
        QCOMPARE(stats.kernels[2].name, std::string("cpu_add"));
        QCOMPARE(stats.kernels[2].device, -1);
        QCOMPARE(stats.kernels[2].gflopsPerSecond(), 0.0);
    }

    // A compiled GEMM kernel holds its BLAS call: the kernels' self times add
    // up without overlap; an op run inside an extern kernel takes nothing from it.
    void kernelSelfTime()
    {
        Trace trace;
        Run &run = trace.runs.emplace_back();
        const TrackId t = addTrack(trace, run, "main");
        addEvent(trace, run, EventKind::Op, "aten.reshape", 0, 120, t, 0);
        addEvent(trace, run, EventKind::Kernel, "gemm_mm_add_0", 5, 100, t, 1);
        addEvent(trace, run, EventKind::Kernel, "cblas_sgemm", 10, 80, t, 2);
        addEvent(trace, run, EventKind::Kernel, "extern_reshape_1", 200, 60, t, 0);
        addEvent(trace, run, EventKind::Op, "aten.clone", 210, 40, t, 1);
        addEvent(trace, run, EventKind::Kernel, "aten.clone", 215, 30, t, 2);
        const RunStatistics stats = computeStatistics(trace, run);
        QCOMPARE(findRow(stats.kernels, "gemm_mm_add_0")->selfNs, int64_t(20));
        QCOMPARE(findRow(stats.kernels, "gemm_mm_add_0")->time.totalNs, int64_t(100));
        QCOMPARE(findRow(stats.kernels, "cblas_sgemm")->selfNs, int64_t(80));
        QCOMPARE(findRow(stats.kernels, "extern_reshape_1")->selfNs, int64_t(60));
        QCOMPARE(findRow(stats.kernels, "aten.clone")->selfNs, int64_t(30));
        QCOMPARE(findRow(stats.ops, "aten.reshape")->selfNs, int64_t(120)); // kernels are an op's own work
        QCOMPARE(findRow(stats.ops, "aten.clone")->selfNs, int64_t(40));
    }

    void copiesPerKind()
    {
        Trace trace;
        Run &run = trace.runs.emplace_back();
        const TrackId s = addTrack(trace, run, "stream", TrackKind::GpuStream);
        const ArgsId h2d = addArgs(run, deviceArgs(0, CopyKind::HostToDevice));
        const ArgsId d2h = addArgs(run, deviceArgs(0, CopyKind::DeviceToHost));
        auto copy = [&](EventKind kind, int64_t start, int64_t duration, float bytes, ArgsId args) {
            Event &e = addEvent(trace, run, kind, "copy", start, duration, s);
            e.bytes = bytes;
            e.args = args;
        };
        copy(EventKind::Memcpy, 0, 10, 1000, h2d);
        copy(EventKind::Memcpy, 20, 30, 3000, h2d);
        copy(EventKind::Memcpy, 60, 5, 500, d2h);
        copy(EventKind::Memcpy, 70, 2, 8, ArgsId());
        copy(EventKind::Memset, 80, 3, 64, ArgsId());
        const RunStatistics stats = computeStatistics(trace, run);
        QCOMPARE(stats.copies.size(), size_t(3));
        QCOMPARE(stats.copies[0].kind, CopyKind::Unknown);
        QCOMPARE(stats.copies[1].kind, CopyKind::HostToDevice);
        QCOMPARE(stats.copies[1].transfer.calls, int64_t(2));
        QCOMPARE(stats.copies[1].transfer.bytes, 4000.0);
        QCOMPARE(stats.copies[1].transfer.totalNs, int64_t(40));
        QCOMPARE(stats.copies[1].transfer.gigabytesPerSecond(), 100.0);
        QCOMPARE(stats.copies[2].kind, CopyKind::DeviceToHost);
        QCOMPARE(stats.copies[2].transfer.bytes, 500.0);
        QCOMPARE(stats.memsets.calls, int64_t(1));
        QCOMPARE(stats.memsets.bytes, 64.0);
        QCOMPARE(stats.memsets.totalNs, int64_t(3));
    }

    void nodeAttribution_data()
    {
        QTest::addColumn<bool>("withCapture");
        QTest::addColumn<bool>("broken");
        QTest::addColumn<QString>("node1");
        QTest::addColumn<QString>("node2");
        QTest::newRow("names from the capture stage") << true << false << "relu" << "add";
        QTest::newRow("no compile stages") << false << false << "node 1" << "node 2";
        QTest::newRow("unreadable capture graph") << true << true << "node 1" << "node 2";
    }
    void nodeAttribution()
    {
        QFETCH(bool, withCapture);
        QFETCH(bool, broken);
        QFETCH(QString, node1);
        QFETCH(QString, node2);
        std::vector<compiler::CompileStage> stages;
        if (withCapture)
            stages.push_back(stage("capture", broken ? std::string("{\"nodes\": [") : capturedGraphJson()));
        // A later stage's graph must not name the captured nodes.
        stages.push_back(stage("fuse", "{}"));
        const Trace trace = nodeTrace(stages);
        const RunStatistics stats = computeStatistics(trace, trace.runs[0]);
        QCOMPARE(stats.nodes.size(), size_t(3));
        QCOMPARE(stats.nodes[0].id, 2);
        QCOMPARE(QString::fromStdString(stats.nodes[0].name), node2);
        QCOMPARE(stats.nodes[0].timeNs, 80.0); // half of 100, plus 30
        QCOMPARE(stats.nodes[0].kernels, int64_t(2));
        QCOMPARE(stats.nodes[0].flops, 5.0);
        QCOMPARE(stats.nodes[1].id, 1);
        QCOMPARE(QString::fromStdString(stats.nodes[1].name), node1);
        QCOMPARE(stats.nodes[1].timeNs, 50.0);
        QCOMPARE(stats.nodes[2].name, std::string("node 7"));
        QCOMPARE(stats.nodes[2].timeNs, 20.0);
        QCOMPARE(stats.warnings.size(), size_t(broken ? 2 : 1));
        QVERIFY(stats.warnings.back().find("1 kernel launches") != std::string::npos);
        if (broken)
            QVERIFY(stats.warnings.front().find("capture graph of segment 0") != std::string::npos);
    }

    void memoryPeak()
    {
        Trace trace;
        Run &run = trace.runs.emplace_back();
        addAllocation(run, 10, 100, 100, 200, 0);
        addAllocation(run, 15, 32, 32, 32, -1);
        addAllocation(run, 20, 50, 150, 200, 0);
        addAllocation(run, 30, -100, 50, 200, 0);
        addAllocation(run, 40, 300, 350, 400, 0);
        addAllocation(run, 45, -32, 0, 32, -1);
        addAllocation(run, 50, -300, 50, 400, 0);
        addAllocation(run, 60, 300, 350, 400, 0); // the same peak again: the first time counts
        const RunStatistics stats = computeStatistics(trace, run);
        QCOMPARE(stats.memory.size(), size_t(2));
        const MemoryStats &cpu = stats.memory[0];
        QCOMPARE(cpu.device, -1);
        QCOMPARE(cpu.peakAllocated, int64_t(32));
        QCOMPARE(cpu.timeline.size(), size_t(2));
        const MemoryStats &gpu = stats.memory[1];
        QCOMPARE(gpu.device, 0);
        QCOMPARE(gpu.peakAllocated, int64_t(350));
        QCOMPARE(gpu.peakAllocatedTime, int64_t(40));
        QCOMPARE(gpu.peakReserved, int64_t(400));
        QCOMPARE(gpu.peakReservedTime, int64_t(40));
        QCOMPARE(gpu.timeline.size(), size_t(6));
        QCOMPARE(gpu.timeline[2].time, int64_t(30));
        QCOMPARE(gpu.timeline[2].allocated, int64_t(50));
        QCOMPARE(gpu.timeline[2].reserved, int64_t(200));
    }

    void stepsAndUserRanges()
    {
        Trace trace;
        Run &run = trace.runs.emplace_back();
        const TrackId t = addTrack(trace, run, "main");
        addEvent(trace, run, EventKind::Step, "ProfilerStep#0", 0, 100, t);
        addEvent(trace, run, EventKind::UserRange, "forward", 10, 40, t, 1);
        addEvent(trace, run, EventKind::Step, "ProfilerStep#1", 100, 300, t);
        addEvent(trace, run, EventKind::UserRange, "forward", 110, 60, t, 1);
        addEvent(trace, run, EventKind::UserRange, "backward", 180, 200, t, 1);
        const RunStatistics stats = computeStatistics(trace, run);
        QCOMPARE(stats.steps.calls, int64_t(2));
        QCOMPARE(stats.steps.totalNs, int64_t(400));
        QCOMPARE(stats.steps.maxNs, int64_t(300));
        QCOMPARE(stats.userRanges.size(), size_t(2));
        QCOMPARE(stats.userRanges[0].name, std::string("backward"));
        QCOMPARE(findRow(stats.userRanges, "forward")->time.calls, int64_t(2));
        QCOMPARE(findRow(stats.userRanges, "forward")->selfNs, int64_t(100));
        QVERIFY(stats.ops.empty());
        QCOMPARE(stats.opTimeNs, int64_t(0));
    }

    // --- Chrome trace export ---------------------------------------------------------

    void exportPhases_data()
    {
        QTest::addColumn<QString>("phase");
        QTest::addColumn<int>("count");
        QTest::newRow("metadata") << "M" << 10; // 2 processes x 2, 3 threads x 2; no thread for the counter track
        QTest::newRow("slices") << "X" << 6;
        QTest::newRow("instants") << "i" << 1;
        QTest::newRow("flow starts") << "s" << 2; // the dangling flow is left out
        QTest::newRow("flow ends") << "f" << 2;
        QTest::newRow("counters") << "C" << 5;    // 3 allocations, 2 counter samples
    }
    void exportPhases()
    {
        QFETCH(QString, phase);
        QFETCH(int, count);
        const json doc = exportJson(exportTrace());
        QCOMPARE(int(eventsWhere(doc, phase.toStdString()).size()), count);
        QCOMPARE(doc.at("displayTimeUnit"), "ns");
        QCOMPARE(doc.at("otherData").at("producer"), "fusescope test");
    }

    void exportMicroseconds_data()
    {
        QTest::addColumn<qint64>("start");
        QTest::addColumn<qint64>("duration");
        QTest::addColumn<QString>("ts");
        QTest::addColumn<QString>("dur");
        QTest::newRow("zero") << qint64(0) << qint64(1) << "0.000" << "0.001";
        QTest::newRow("below 1 us") << qint64(999) << qint64(1000) << "0.999" << "1.000";
        QTest::newRow("ns kept") << qint64(1234567) << qint64(1001) << "1234.567" << "1.001";
        QTest::newRow("before the origin") << qint64(-1500) << qint64(2500) << "-1.500" << "2.500";
        QTest::newRow("past 2^53 ns") << qint64(9007199254740993) << qint64(7) << "9007199254740.993" << "0.007";
    }
    void exportMicroseconds()
    {
        QFETCH(qint64, start);
        QFETCH(qint64, duration);
        QFETCH(QString, ts);
        QFETCH(QString, dur);
        Trace trace;
        Run &run = trace.runs.emplace_back();
        addEvent(trace, run, EventKind::Op, "op", start, duration, addTrack(trace, run, "main"));
        const std::string text = exportText(trace);
        const std::string expected = "\"ts\":" + ts.toStdString() + ",\"dur\":" + dur.toStdString();
        QVERIFY2(text.find(expected) != std::string::npos, text.c_str());
        const json slice = onlyEvent(json::parse(text), "X", "op");
        QCOMPARE(slice.at("ts").get<double>(), ts.toDouble());
    }

    void exportFlows()
    {
        const json doc = exportJson(exportTrace());
        const std::vector<json> starts = eventsWhere(doc, "s");
        const std::vector<json> ends = eventsWhere(doc, "f");
        QCOMPARE(starts.size(), size_t(2));
        QCOMPARE(ends.size(), size_t(2));
        for (size_t i = 0; i < starts.size(); ++i) {
            QCOMPARE(starts[i].at("id"), ends[i].at("id"));
            QCOMPARE(starts[i].at("cat"), ends[i].at("cat"));
            QCOMPARE(ends[i].at("bp"), "e");
            QVERIFY(!starts[i].contains("bp"));
        }
        // Both runs used flow id 42; the file must not join them.
        QVERIFY(starts[0].at("id") != starts[1].at("id"));
        QCOMPARE(starts[0].at("cat"), "launch");
        QCOMPARE(starts[0].at("pid"), 1);
        QCOMPARE(starts[0].at("tid"), 100);
        QCOMPARE(starts[0].at("ts").get<double>(), 2.0); // the launch's start
        QCOMPARE(ends[0].at("tid"), 7);
        QCOMPARE(ends[0].at("ts").get<double>(), 4.0);   // the kernel's start
        QCOMPARE(starts[1].at("pid"), 2);
        QCOMPARE(starts[1].at("cat"), "user");
    }

    void exportCounters()
    {
        const json doc = exportJson(exportTrace());
        const std::vector<json> gpu = eventsWhere(doc, "C", "GPU 0 memory");
        QCOMPARE(gpu.size(), size_t(2));
        QCOMPARE(gpu[0].at("ts").get<double>(), 1.5);
        QCOMPARE(gpu[0].at("args").at("allocated"), 256);
        QCOMPARE(gpu[0].at("args").at("reserved"), 1024);
        QCOMPARE(gpu[1].at("args").at("allocated"), 0);
        QCOMPARE(onlyEvent(doc, "C", "CPU memory").at("args").at("allocated"), 64);
        const std::vector<json> power = eventsWhere(doc, "C", "power");
        QCOMPARE(power.size(), size_t(2));
        QCOMPARE(power[1].at("args").at("value").get<double>(), 4.25);
        QCOMPARE(power[1].at("pid"), 1);
    }

    void exportNames()
    {
        const json doc = exportJson(exportTrace());
        QCOMPARE(metadata(doc, "process_name", 1).at("name"), "eager");
        QCOMPARE(metadata(doc, "process_name", 2).at("name"), "compiled (incomplete)");
        QCOMPARE(metadata(doc, "process_sort_index", 2).at("sort_index"), 1);
        QCOMPARE(metadata(doc, "thread_name", 1, 100).at("name"), "main thread");
        QCOMPARE(metadata(doc, "thread_name", 1, 7).at("name"), "stream 7");
        QCOMPARE(metadata(doc, "thread_name", 2, 100).at("name"), "main thread");
        QVERIFY(metadata(doc, "thread_sort_index", 1, 100).at("sort_index")
                < metadata(doc, "thread_sort_index", 1, 7).at("sort_index"));
        const json mm = onlyEvent(doc, "X", "aten.mm");
        QCOMPARE(mm.at("cat"), "op");
        QCOMPARE(mm.at("pid"), 1);
        QCOMPARE(mm.at("tid"), 100);
        QCOMPARE(onlyEvent(doc, "X", "forward").at("pid"), 2);
        const json instant = onlyEvent(doc, "i", "recompile");
        QCOMPARE(instant.at("s"), "t");
        QCOMPARE(instant.at("args").at("text"), "shape changed");
    }

    void exportArgs()
    {
        const json doc = exportJson(exportTrace());
        const json gemm = onlyEvent(doc, "X", "gemm").at("args");
        QCOMPARE(gemm.at("origins"), "1,2");
        QCOMPARE(gemm.at("flops").get<double>(), 1e6);
        QCOMPARE(gemm.at("device"), 0);
        QCOMPARE(gemm.at("stream"), 7);
        QCOMPARE(gemm.at("correlation"), 42);
        QCOMPARE(gemm.at("grid"), json::array({4, 0, 0}));
        QCOMPARE(gemm.at("block"), json::array({128, 0, 0}));
        QVERIFY(!gemm.contains("bytes"));
        const json copy = onlyEvent(doc, "X", "memcpy").at("args");
        QCOMPARE(copy.at("copy kind"), "HtoD");
        QCOMPARE(copy.at("pinned"), true);
        QCOMPARE(onlyEvent(doc, "X", "aten.mm").at("args").at("shapes"), "[[2,3],[3,4]]");
        QCOMPARE(onlyEvent(doc, "X", "cudaLaunchKernel").at("args").at("correlation"), 42);
        QVERIFY(!onlyEvent(doc, "X", "cudaLaunchKernel").at("args").contains("device"));
    }

    void exportExtraArgs_data()
    {
        QTest::addColumn<QString>("extra");
        QTest::addColumn<QString>("expected"); // the extra member, as compact JSON
        QTest::newRow("object") << "{\"queued\": 3}" << "{\"queued\":3}";
        QTest::newRow("malformed") << "{queued" << "\"{queued\"";
    }
    void exportExtraArgs()
    {
        QFETCH(QString, extra);
        QFETCH(QString, expected);
        Trace trace;
        Run &run = trace.runs.emplace_back();
        EventArgs args;
        args.extra = trace.strings.intern(extra.toStdString());
        addEvent(trace, run, EventKind::Runtime, "call", 0, 1, addTrack(trace, run, "main")).args = addArgs(run, args);
        const json doc = exportJson(trace);
        QCOMPARE(onlyEvent(doc, "X", "call").at("args").at("extra").dump(), expected.toStdString());
    }

    void exportTrackLanes()
    {
        Trace trace;
        Run &run = trace.runs.emplace_back();
        addTrack(trace, run, "first");
        addTrack(trace, run, "second"); // the same tid 0: must stay a thread of its own
        const TrackId rank = addTrack(trace, run, "rank 3");
        run.tracks[rank.value].pid = 4242;
        for (uint16_t t = 0; t < 3; ++t)
            addEvent(trace, run, EventKind::Op, "op" + std::to_string(t), 0, 10, TrackId(t));
        const json doc = exportJson(trace);
        QCOMPARE(onlyEvent(doc, "X", "op0").at("tid"), 0);
        const int64_t secondTid = onlyEvent(doc, "X", "op1").at("tid").get<int64_t>();
        QVERIFY(secondTid != 0);
        QCOMPARE(metadata(doc, "thread_name", 1, secondTid).at("name"), "second");
        QCOMPARE(onlyEvent(doc, "X", "op2").at("pid"), 4242);
        QCOMPARE(metadata(doc, "process_name", 4242).at("name"), "run 1 pid 4242");
    }

    void exportEscapes_data()
    {
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<QByteArray>("expected"); // UTF-8 after parsing the export back
        const QByteArray fffd("\xef\xbf\xbd");
        QTest::newRow("quote") << QByteArray("say \"hi\"") << QByteArray("say \"hi\"");
        QTest::newRow("backslash") << QByteArray("a\\b") << QByteArray("a\\b");
        QTest::newRow("newline and tab") << QByteArray("a\nb\tc") << QByteArray("a\nb\tc");
        QTest::newRow("control") << QByteArray("a\x01z") << QByteArray("a\x01z");
        QTest::newRow("valid multibyte") << QByteArray("\xc2\xb5s \xf0\x9f\x99\x82")
                                         << QByteArray("\xc2\xb5s \xf0\x9f\x99\x82");
        QTest::newRow("invalid byte") << QByteArray("a\xff" "b") << "a" + fffd + "b";
        QTest::newRow("truncated at the end") << QByteArray("a\xe2\x82") << "a" + fffd + fffd;
        QTest::newRow("overlong") << QByteArray("\xc0\xaf") << fffd + fffd;
        QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80") << fffd + fffd + fffd;
        QTest::newRow("past U+10FFFF") << QByteArray("\xf4\x90\x80\x80") << fffd + fffd + fffd + fffd;
    }
    void exportEscapes()
    {
        QFETCH(QByteArray, name);
        QFETCH(QByteArray, expected);
        Trace trace;
        Run &run = trace.runs.emplace_back();
        run.info.name = name.toStdString();
        const TrackId t = addTrack(trace, run, name.toStdString());
        addEvent(trace, run, EventKind::Instant, name.toStdString(), 0, 0, t, 0, name.toStdString());
        const json doc = exportJson(trace);
        const json instant = eventsWhere(doc, "i").at(0);
        QCOMPARE(QByteArray::fromStdString(instant.at("name").get<std::string>()), expected);
        QCOMPARE(QByteArray::fromStdString(instant.at("args").at("text").get<std::string>()), expected);
        QCOMPARE(QByteArray::fromStdString(metadata(doc, "thread_name", 1, 0).at("name").get<std::string>()),
                 expected);
        QCOMPARE(QByteArray::fromStdString(metadata(doc, "process_name", 1).at("name").get<std::string>()),
                 expected);
    }

    void exportToFile()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("trace.json").toStdString();
        exportChromeTrace(exportTrace(), path);
        std::ifstream in(path);
        QCOMPARE(eventsWhere(json::parse(in), "X").size(), size_t(6));
        const std::string bad = dir.filePath("missing/trace.json").toStdString();
        try {
            exportChromeTrace(exportTrace(), bad);
            QFAIL("exporting into a missing directory did not throw");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find(bad) != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestProfilerStats)
#include "tst_profiler_stats.moc"
