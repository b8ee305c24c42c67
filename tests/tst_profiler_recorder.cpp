// The recorder and the CPU backend: schedule semantics (which steps are
// recorded), nesting, self-consistent depths, op → kernel, flows across
// threads, allocation accounting against the allocator's own statistics,
// compile stages, recompiles and graph breaks, and streaming drains.
#include "profiler/profiler.h"
#include "profiler/recorder.h"
#include "profiler/tracereader.h"

#include "core/compiler/compile.h"
#include "core/ops/functional.h"
#include "core/tensor/allocator.h"
#include "core/tensor/factory.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>

using namespace fusescope;
using namespace fusescope::profiler;

Q_DECLARE_METATYPE(fusescope::profiler::ProfilerAction)

namespace {

const std::string &nameOf(const Trace &t, const Event &e)
{
    return t.strings[e.name];
}

std::vector<const Event *> named(const Trace &t, const Run &r, const std::string &name)
{
    std::vector<const Event *> out;
    for (const Event &e : r.events) {
        if (nameOf(t, e) == name)
            out.push_back(&e);
    }
    return out;
}

bool contains(const Event &outer, const Event &inner)
{
    return outer.track == inner.track && outer.start <= inner.start && inner.end() <= outer.end();
}

// Counts batches, keeps them in memory like the collector.
class CountingSink final : public TraceSink
{
public:
    void beginRun(const RunInfo &info) override { collector.beginRun(info); }
    void write(EventBatch &&batch) override
    {
        ++writes;
        if (!batch.events.empty())
            ++nonEmpty;
        firstIds.push_back(batch.firstEvent);
        collector.write(std::move(batch));
    }
    void endRun(const RunSummary &s) override { collector.endRun(s); }
    TraceCollector collector;
    int writes = 0;
    int nonEmpty = 0;
    std::vector<uint32_t> firstIds;
};

std::string join(const std::vector<std::string> &v)
{
    std::string s;
    for (const std::string &x : v)
        s += x + " ";
    return s;
}

void useTestCache()
{
    setenv("XDG_CACHE_HOME", FUSESCOPE_TEST_CACHE_DIR, 1);
}

} // namespace

class TestProfilerRecorder : public QObject
{
    Q_OBJECT

private slots:
    void scheduleActions_data()
    {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<QString>("actions"); // N none, W warmup, R record, S record and save
        QTest::newRow("active only") << "active=2" << "RSRSRSRS";
        QTest::newRow("wait warmup active") << "wait=1,warmup=1,active=2" << "NWRSNWRS";
        QTest::newRow("repeat") << "wait=1,warmup=1,active=2,repeat=1" << "NWRSNNNN";
        QTest::newRow("skip first") << "skip_first=2,active=1,repeat=2" << "NNSSNNNN";
        QTest::newRow("single active") << "warmup=2,active=1,repeat=3" << "WWSWWSWWSN";
    }
    void scheduleActions()
    {
        QFETCH(QString, schedule);
        QFETCH(QString, actions);
        const Schedule s = Schedule::parse(schedule.toStdString());
        QString got;
        for (int step = 0; step < actions.size(); ++step)
            got += "NWRS"[static_cast<int>(s.at(step))];
        QCOMPARE(got, actions);
    }

    void scheduleRejectsMalformedText()
    {
        QVERIFY_THROWS_EXCEPTION(Error, Schedule::parse("wait=x"));
        QVERIFY_THROWS_EXCEPTION(Error, Schedule::parse("sleep=1"));
        QVERIFY_THROWS_EXCEPTION(Error, Schedule::parse("active=0"));
        QVERIFY_THROWS_EXCEPTION(Error, Schedule::parse("active=2x"));
    }

    // wait=1 warmup=1 active=2 repeat=2 over 10 steps: steps 2-3 and 6-7 are
    // recorded, each window a run; nothing of the other steps leaks in.
    void scheduleRecordsOnlyActiveSteps()
    {
        std::vector<int> ready;
        Profiler prof({.schedule = Schedule{1, 1, 2, 2, 0}, .onTraceReady = [&](int w) { ready.push_back(w); }});
        prof.start();
        for (int step = 0; step < 10; ++step) {
            { RecordScope scope("work " + std::to_string(step)); }
            prof.step();
        }
        prof.stop();
        QCOMPARE(ready, (std::vector<int>{0, 1}));
        const Trace &t = prof.trace();
        QCOMPARE(t.runs.size(), size_t(2));
        QCOMPARE(t.runs[0].info.name, std::string("run"));
        QCOMPARE(t.runs[1].info.name, std::string("run #2"));
        const std::vector<std::set<std::string>> expected{{"work 2", "work 3", "ProfilerStep#2", "ProfilerStep#3"},
                                                          {"work 6", "work 7", "ProfilerStep#6", "ProfilerStep#7"}};
        for (size_t r = 0; r < 2; ++r) {
            std::set<std::string> names;
            for (const Event &e : t.runs[r].events)
                names.insert(nameOf(t, e));
            QCOMPARE(names, expected[r]);
            QCOMPARE(t.runs[r].summary.steps, int64_t(2));
            QVERIFY(t.runs[r].summary.complete);
        }
    }

    void nestingDepthsAndOpKernels()
    {
        Profiler prof({.recordShapes = true, .withFlops = true});
        Generator gen(1);
        const Tensor a = randn({64, 32}, gen), b = randn({32, 16}, gen);
        prof.start();
        {
            RecordScope outer("outer");
            {
                RecordScope inner("inner");
                ops::add(a, a);
            }
            ops::matmul(a, b);
        }
        prof.stop();
        const Trace &t = prof.trace();
        const Run &r = t.runs.at(0);
        const Event &outer = *named(t, r, "outer").at(0);
        const Event &inner = *named(t, r, "inner").at(0);
        const Event &add = *named(t, r, "aten.add").at(0);
        QCOMPARE(int(outer.depth), 1); // under ProfilerStep#0
        QCOMPARE(int(inner.depth), 2);
        QCOMPARE(int(add.depth), 3);
        QVERIFY(contains(outer, inner) && contains(inner, add));
        QCOMPARE(t.strings[add.detail], std::string("[64,32] f32, [64,32] f32"));
        // The eager op's own kernel sits inside it, one level deeper.
        const std::vector<const Event *> addKernels = [&] {
            std::vector<const Event *> k;
            for (const Event *e : named(t, r, "aten.add"))
                if (e->kind == EventKind::Kernel)
                    k.push_back(e);
            return k;
        }();
        QCOMPARE(addKernels.size(), size_t(1));
        QCOMPARE(int(addKernels[0]->depth), int(add.depth) + 1);
        QVERIFY(contains(add, *addKernels[0]));
        // A GEMM reports its BLAS call; the op-level kernel is not doubled.
        const std::vector<const Event *> sgemm = named(t, r, "cblas_sgemm");
        QCOMPARE(sgemm.size(), size_t(1));
        QCOMPARE(sgemm[0]->kind, EventKind::Kernel);
        QCOMPARE(sgemm[0]->flops, float(2.0 * 64 * 16 * 32));
        QCOMPARE(sgemm[0]->bytes, float(4 * (64 * 32 + 32 * 16 + 64 * 16)));
        int kernelsUnderMatmul = 0;
        for (const Event &e : r.events) {
            if (e.kind == EventKind::Kernel && e.start >= outer.start && e.end() <= outer.end() &&
                nameOf(t, e) != "aten.add")
                ++kernelsUnderMatmul;
        }
        QCOMPARE(kernelsUnderMatmul, 1);
    }

    void everyRangeIsWellNested()
    {
        Profiler prof({});
        Generator gen(2);
        const Tensor x = randn({16, 64}, gen);
        prof.start();
        for (int i = 0; i < 3; ++i) {
            ops::layerNorm(ops::gelu(ops::add(x, 1.0)), {64});
            prof.step();
        }
        prof.stop();
        const Run &r = prof.trace().runs.at(0);
        // Per track: a range at depth d lies inside the nearest earlier range at depth d-1.
        std::map<uint16_t, std::vector<const Event *>> open;
        for (const Event &e : r.events) {
            if (e.kind == EventKind::Instant)
                continue;
            auto &stack = open[e.track.value];
            while (!stack.empty() && stack.back()->end() <= e.start && stack.back()->depth >= e.depth)
                stack.pop_back();
            while (stack.size() > e.depth)
                stack.pop_back();
            QCOMPARE(stack.size(), size_t(e.depth));
            if (!stack.empty())
                QVERIFY2(contains(*stack.back(), e), nameOf(prof.trace(), e).c_str());
            stack.push_back(&e);
        }
        QCOMPARE(named(prof.trace(), r, "ProfilerStep#2").size(), size_t(1));
    }

    void flowsJoinRangesAcrossThreads()
    {
        Profiler prof({});
        prof.start();
        {
            RecordScope producer("produce");
            flowOut(42);
        }
        std::thread consumer([] {
            RecordScope scope("consume");
            flowIn(42);
        });
        consumer.join();
        prof.stop();
        const Trace &t = prof.trace();
        const Run &r = t.runs.at(0);
        QCOMPARE(r.flows.size(), size_t(1));
        const Flow &f = r.flows[0];
        QCOMPARE(f.id, uint64_t(42));
        QCOMPARE(nameOf(t, r.event(f.from)), std::string("produce"));
        QCOMPARE(nameOf(t, r.event(f.to)), std::string("consume"));
        QVERIFY(r.event(f.from).track != r.event(f.to).track);
        QCOMPARE(r.tracks.at(r.event(f.to).track.value).kind, TrackKind::CpuThread);
    }

    void allocationsMatchTheAllocator()
    {
        Generator gen(3);
        const Tensor x = randn({256, 256}, gen);
        Profiler prof({.profileMemory = true});
        prof.start();
        const AllocatorStats before = hostAllocator().stats();
        int64_t expectedBytes = 0;
        {
            const Tensor y = ops::exp(x);
            const Tensor z = ops::add(y, x);
            expectedBytes = static_cast<int64_t>(CachingHostAllocator::sizeClass(y.nbytes()) * 2);
        }
        const AllocatorStats after = hostAllocator().stats();
        prof.stop();
        const Trace &t = prof.trace();
        const Run &r = t.runs.at(0);
        QCOMPARE(int64_t(r.allocations.size()), (after.allocations - before.allocations) + (after.frees - before.frees));
        int64_t allocated = 0, freed = 0;
        for (const Allocation &a : r.allocations)
            (a.bytes > 0 ? allocated : freed) += a.bytes;
        QCOMPARE(allocated, expectedBytes);
        QCOMPARE(freed, -expectedBytes);
        QCOMPARE(r.allocations.back().allocatedAfter, after.allocatedBytes);
        QCOMPARE(r.allocations.back().reservedAfter, after.reservedBytes);
        // The output of exp was allocated inside aten.exp.
        QVERIFY(r.allocations.front().op.valid());
        QCOMPARE(nameOf(t, r.event(r.allocations.front().op)), std::string("aten.exp"));
        QCOMPARE(r.allocations.front().bytes, int64_t(CachingHostAllocator::sizeClass(x.nbytes())));
    }

    void memoryIsOnlyRecordedWhenAsked()
    {
        Profiler prof({});
        prof.start();
        ops::exp(ones({128, 128}));
        prof.stop();
        QVERIFY(prof.trace().runs.at(0).allocations.empty());
        QVERIFY(!named(prof.trace(), prof.trace().runs.at(0), "aten.exp").empty());
    }

    void compileStagesRecompilesAndFusedKernels()
    {
        useTestCache();
        compiler::CompiledFunction fn = compiler::compile([](const TensorList &in) {
            return TensorList{ops::gelu(ops::add(in[0], 1.0))};
        });
        Generator gen(4);
        Profiler prof({.withFlops = true});
        prof.start();
        fn({randn({8, 32}, gen)});
        fn({randn({4, 32}, gen)});
        prof.stop();
        const Trace &t = prof.trace();
        const Run &r = t.runs.at(0);
        std::vector<std::string> stages;
        for (const Event &e : r.events) {
            if (e.kind == EventKind::CompileStage && stages.size() < compiler::stageNames().size())
                stages.push_back(nameOf(t, e));
        }
        QCOMPARE(QString::fromStdString(join(stages)), QString::fromStdString(join(compiler::stageNames())));
        const Event &capture = *named(t, r, "capture").at(0);
        QCOMPARE(r.tracks.at(capture.track.value).kind, TrackKind::CompileStages);
        const std::vector<const Event *> recompiles = named(t, r, "recompile");
        QCOMPARE(recompiles.size(), size_t(1));
        QCOMPARE(t.strings[recompiles[0]->detail], std::string("input 0: shape [8,32] -> [4,32]"));
        int fused = 0;
        for (const Event &e : r.events) {
            if (e.kind == EventKind::Kernel && !t.strings[e.detail].empty()) {
                ++fused;
                QVERIFY2(t.strings[e.detail].find_first_not_of("0123456789,") == std::string::npos,
                         t.strings[e.detail].c_str());
                QVERIFY(e.flops >= 4 * 32 * 2); // at least add and gelu per element of the smaller call
                QVERIFY(e.bytes > 0);
            }
        }
        QCOMPARE(fused, 2); // one fused kernel per call
    }

    void graphBreaksAreInstants()
    {
        useTestCache();
        compiler::CompiledFunction fn = compiler::compile([](const TensorList &in) {
            const Tensor idx = ops::cast(ops::nonzero(ops::gt(in[0], 0.0)), DType::F32);
            return TensorList{ops::mul(idx, 2.0)};
        });
        Profiler prof({});
        prof.start();
        fn({ones({3, 2})});
        prof.stop();
        const std::vector<const Event *> breaks = named(prof.trace(), prof.trace().runs.at(0), "graph break");
        QCOMPARE(breaks.size(), size_t(1));
        QCOMPARE(breaks[0]->kind, EventKind::Instant);
        QVERIFY(prof.trace().strings[breaks[0]->detail].find("aten.nonzero") != std::string::npos);
    }

    // The drain thread hands batches to the sink while recording runs, with
    // event ids continuing from batch to batch.
    void drainsStreamDuringCapture()
    {
        CountingSink sink;
        Profiler prof({.sink = &sink, .drainIntervalMs = 10});
        prof.start();
        for (int i = 0; i < 20; ++i) {
            RecordScope scope("tick");
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        prof.stop();
        QVERIFY2(sink.nonEmpty >= 3, qPrintable(QString::number(sink.nonEmpty)));
        const Run &r = sink.collector.trace().runs.at(0);
        QCOMPARE(named(sink.collector.trace(), r, "tick").size(), size_t(20));
        QCOMPARE(r.summary.events, int64_t(r.events.size()));
        for (size_t i = 1; i < sink.firstIds.size(); ++i)
            QVERIFY(sink.firstIds[i] >= sink.firstIds[i - 1]);
        QCOMPARE(sink.firstIds.front(), 0u);
    }

    // A capture killed with SIGKILL leaves a file that opens, with its run
    // marked incomplete and at most the last drain interval or two missing.
    void killedCaptureLosesOnlyTheLastBatch()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("killed.fstrace"));
        QProcess child;
        child.start(QStringLiteral(FUSESCOPE_BINARY),
                    {"profile", "mlp", "--steps", "1000000", "--profile-memory", "-o", path});
        QVERIFY(child.waitForStarted());
        QElapsedTimer waited;
        waited.start();
        int64_t events = 0;
        while (events < 2000 && waited.elapsed() < 60000) {
            QTest::qWait(200);
            try {
                TraceReader reader(path.toStdString());
                if (!reader.runs().empty())
                    events = reader.runs().front().summary.events;
            } catch (const Error &) {
                // not created yet
            }
        }
        QVERIFY2(events >= 2000, "the child recorded nothing in a minute");
        QTest::qWait(300);
        child.kill(); // SIGKILL
        const int64_t killedAt = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch()).count();
        QVERIFY(child.waitForFinished());
        TraceReader reader(path.toStdString());
        QCOMPARE(reader.runs().size(), size_t(1));
        QVERIFY(!reader.runs().front().summary.complete);
        std::optional<Trace> trace = reader.load();
        QVERIFY(trace);
        const Run &run = trace->runs.front();
        QVERIFY(!run.events.empty() && !run.allocations.empty());
        int64_t lastEnd = 0;
        for (const Event &e : run.events)
            lastEnd = std::max(lastEnd, e.end());
        const double lostMs = double(killedAt - (run.info.wallStartUnixNs + lastEnd)) / 1e6;
        qInfo("events kept: %zu; the last ended %.0f ms before the kill", run.events.size(), lostMs);
        // Batches commit every 100 ms; a loaded machine may delay one.
        QVERIFY2(lostMs < 400, qPrintable(QString::number(lostMs)));
    }

    void oneProfilerAtATime()
    {
        Profiler first({});
        first.start();
        Profiler second({});
        QVERIFY_THROWS_EXCEPTION(Error, second.start());
        first.stop();
        second.start(); // free again
        { RecordScope scope("after"); }
        second.stop();
        QCOMPARE(named(second.trace(), second.trace().runs.at(0), "after").size(), size_t(1));
        Profiler cuda({.activities = {Activity::Cpu, Activity::Cuda}});
        QVERIFY_THROWS_EXCEPTION(Error, cuda.start());
        QVERIFY(!record::on());
    }

    void recordingIsOffOutsideStartStop()
    {
        { RecordScope before("before"); }
        Profiler prof({});
        prof.start();
        { RecordScope during("during"); }
        prof.stop();
        { RecordScope after("after"); }
        const Run &r = prof.trace().runs.at(0);
        QCOMPARE(named(prof.trace(), r, "before").size(), size_t(0));
        QCOMPARE(named(prof.trace(), r, "during").size(), size_t(1));
        QCOMPARE(named(prof.trace(), r, "after").size(), size_t(0));
        QVERIFY(!record::on());
    }
};

QTEST_GUILESS_MAIN(TestProfilerRecorder)
#include "tst_profiler_recorder.moc"
