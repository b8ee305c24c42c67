#include "hintfixture.h"

#include "profiler/hintrules.h"
#include "profiler/hints.h"
#include "profiler/importer.h"

#include <QTest>

#include <algorithm>
#include <filesystem>
#include <string>

using namespace fusescope::profiler;
using fixture::eventNames;
using fixture::fixtureTrace;

namespace {

const std::string kTestData = FUSESCOPE_TESTDATA_DIR;

// Every device rule on the fixture's run, in rule order, with the framework
// its source claims (what computeHints would pass).
std::vector<Hint> deviceHints(const Trace &trace, const std::string &framework = "pytorch")
{
    const Run &run = trace.runs.front();
    const RunStatistics stats = computeStatistics(trace, run);
    const HintContext ctx{trace, run, stats, nullptr, framework, nullptr};
    std::vector<Hint> hints;
    for (const HintRule &rule : deviceHintRules()) {
        for (Hint &hint : rule.check(ctx))
            hints.push_back(std::move(hint));
    }
    return hints;
}

std::string ruleIds(const std::vector<Hint> &hints)
{
    std::string ids;
    for (const Hint &h : hints)
        ids += (ids.empty() ? "" : ",") + h.rule;
    return ids;
}

// The device rules' findings among all of `hints`, in their rank order.
std::string deviceRuleIds(const std::vector<Hint> &hints)
{
    std::vector<Hint> device;
    for (const Hint &h : hints) {
        for (const HintRule &rule : deviceHintRules()) {
            if (rule.id == h.rule)
                device.push_back(h);
        }
    }
    return ruleIds(device);
}

const Hint *findHint(const std::vector<Hint> &hints, const std::string &rule)
{
    auto it = std::find_if(hints.begin(), hints.end(), [&](const Hint &h) { return h.rule == rule; });
    return it == hints.end() ? nullptr : &*it;
}

// The first `count` evidence names, joined.
std::string evidenceHead(const Trace &trace, const Hint &hint, size_t count)
{
    std::vector<EventId> head(hint.events.begin(), hint.events.begin() + std::min(count, hint.events.size()));
    return eventNames(trace, trace.runs.front(), head);
}

std::vector<Hint> importedHints(const Trace &trace)
{
    const Run &run = trace.runs.front();
    return computeHints(trace, run, computeStatistics(trace, run));
}

Trace importOrSkip(const std::string &relative, bool nsys = false)
{
    const std::string path = kTestData + "/" + relative;
    if (!std::filesystem::exists(path))
        return {};
    return nsys ? *importNsys(path) : *importKineto({path});
}

void printHints(const char *what, const std::vector<Hint> &hints)
{
    for (const Hint &h : hints)
        qInfo("%s: %s %s %.0f µs, %zu events: %s", what, h.rule.c_str(), hintSeverityName(h.severity), h.savingUs,
              h.events.size(), h.message.c_str());
}

// ---- fixtures: a positive and a negative per rule ----

// 25 kernels of 4 µs with 16 µs idle before each (but the first).
const char *kLaunchBound = R"(
step 0 500
repeat 25 every 20 kernel tiny{i} 10 4
)";
// The same kernels back to back (1 µs apart): the GPU is not starved.
const char *kDenseKernels = R"(
step 0 130
repeat 25 every 5 kernel tiny{i} 0 4
)";
// Starved, but only 10 tiny kernels: normal in any program.
const char *kFewTinyKernels = R"(
step 0 200
repeat 10 every 20 kernel tiny{i} 0 4
)";

const char *kPageable = R"(
step 0 1000
memcpy HtoD 0 200 pageable bytes=4000000
memcpy DtoH 200 100 pageable bytes=1000000
kernel k 300 700
)";
// 16 µs of pageable copies: pinning saves 8 µs, under the rule's 10.
const char *kPageableTiny = R"(
step 0 1000
memcpy HtoD 0 10 pageable bytes=64
memcpy DtoH 10 6 pageable bytes=8
kernel k 20 900
)";
const char *kPinned = R"(
step 0 1000
memcpy HtoD 0 200 pinned bytes=4000000
memcpy DtoD 200 100 bytes=1000000
kernel k 300 700
)";

// loss.item(): an op that copies and waits for the stream.
const char *kSyncInStep = R"(
step 0 1000
kernel k 0 1000
op aten::item 500 120
op aten::_local_scalar_dense 502 115
runtime cudaMemcpyAsync 505 10
runtime cudaStreamSynchronize 515 100
)";
const char *kSyncAfterSteps = R"(
step 0 400
kernel k 0 1000
runtime cudaDeviceSynchronize 500 100
)";
const char *kAsyncOnly = R"(
step 0 1000
kernel k 0 1000
runtime cudaMemcpyAsync 505 10
runtime cudaStreamWaitEvent 515 100
)";

// A 290 µs hole in a 1 ms step.
const char *kGpuIdle = R"(
step 0 1000
runtime cudaLaunchKernel 0 5
kernel a 10 300
kernel b 600 400
)";
// A 50 µs hole: launch latency's size, not idle time.
const char *kShortGap = R"(
step 0 1000
runtime cudaLaunchKernel 0 5
kernel a 10 300
kernel b 360 640
)";
// The 290 µs hole is the profiler's own overhead.
const char *kOverheadGap = R"(
step 0 1000
runtime cudaLaunchKernel 0 5
kernel a 10 300
kernel b 600 400
range "CUPTI Overhead" 310 290 thread=9
)";
// No gap over 10 % of the step, but the span's 30 chunks of 100 µs are
// busy, idle, idle, busy …: every gap lies in idle chunks.
const char *kLowUtilization = R"(
step 0 3000
runtime cudaLaunchKernel 0 5
repeat 10 every 300 kernel k{i} 0 100
kernel last 2900 100
)";

// Each step loads its batch for 400 µs before its first CUDA call.
const char *kInputStall = R"(
step 0 1000
range "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" 0 400
runtime cudaLaunchKernel 400 5
kernel a 410 580
step 1000 1000
range "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" 1000 400
runtime cudaLaunchKernel 1400 5
kernel b 1410 580
)";
// 300 µs of CPU work between two steps while the GPU has nothing.
const char *kStallBetweenSteps = R"(
step 0 500
runtime cudaLaunchKernel 0 5
kernel a 5 490
range "load batch" 500 300
step 800 500
runtime cudaLaunchKernel 800 5
kernel b 805 490
)";
const char *kFastLoader = R"(
step 0 1000
range "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" 0 20
runtime cudaLaunchKernel 20 5
kernel a 30 960
step 1000 1000
range "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" 1000 20
runtime cudaLaunchKernel 1020 5
kernel b 1030 960
)";

const char *kLowOccupancy = R"(
step 0 1000
kernel conv 0 600 grid=8,1,1 block=128,1,1 occupancy=10
kernel gemm 600 400 grid=512,1,1 block=256,1,1 occupancy=60
)";
// 255 registers × 128 threads: 2 blocks of 4 warps per SM = 12.5 %.
const char *kLowOccupancyNsys = R"(
source nsys
kernel big 0 600 grid=8,1,1 block=128,1,1 regs=255 smem=0
kernel small 600 400 grid=512,1,1 block=256,1,1 regs=32 smem=0
)";
const char *kShortLowOccupancy = R"(
step 0 100
kernel conv 0 40 occupancy=10
kernel failed 40 60 occupancy=0
)";

// Our own CPU recording: CPU kernels, no GPU stream.
const char *kCpuOnly = R"(
source fusescope
step 0 1000
op aten::add 0 500
kernel add_kernel 10 5 thread=1
repeat 30 every 20 kernel tiny{i} 20 4 thread=1
runtime cudaDeviceSynchronize 600 300
)";

// gpu-idle 290 µs, then pageable-memcpy and sync-in-step at 100 µs each:
// the tie keeps the rules' order.
const char *kRanking = R"(
step 0 1000
runtime cudaLaunchKernel 0 5
memcpy HtoD 10 200 pageable
kernel a 210 100
kernel b 600 400
runtime cudaDeviceSynchronize 650 100
)";

} // namespace

class TestProfilerHints : public QObject
{
    Q_OBJECT

private slots:
    void rules_data();
    void rules();
    void thresholdsDocumented();
    void fixtureDsl();
    void ranking();
    void frameworkWords_data();
    void frameworkWords();
    void alexNet();
    void v100();
    void cpuOnlyTrace();
    void nsightExports();
};

void TestProfilerHints::rules_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("fired");    // every device rule that fires, in rule order
    QTest::addColumn<QString>("rule");     // the one looked at
    QTest::addColumn<QString>("evidence"); // its first evidence names
    QTest::addColumn<int>("evidenceCount");
    QTest::addColumn<double>("savingMin"); // µs
    QTest::addColumn<double>("savingMax");
    QTest::addColumn<QString>("messagePart");

    auto row = [](const char *name, const char *fixture, const char *fired, const char *rule, const char *evidence,
                  int count, double savingMin, double savingMax, const char *messagePart) {
        QTest::newRow(name) << fixture << fired << rule << evidence << count << savingMin << savingMax << messagePart;
    };
    // launch-bound: saving = the 24 gaps of 16 µs
    row("launch-bound", kLaunchBound, "launch-bound", "launch-bound", "tiny1,tiny2,tiny3", 24, 384, 384,
        "25 kernels shorter than 10 µs");
    row("launch-bound: dense", kDenseKernels, "", "launch-bound", "", 0, 0, 0, "");
    row("launch-bound: few", kFewTinyKernels, "", "launch-bound", "", 0, 0, 0, "");
    // pageable-memcpy: saving = half of 300 µs of copies
    row("pageable", kPageable, "pageable-memcpy", "pageable-memcpy",
        "Memcpy HtoD (Pageable -> Device),Memcpy DtoH (Device -> Pageable)", 2, 150, 150,
        "1 host-to-device and 1 device-to-host copies from pageable host memory, 5.0 MB in 300 µs");
    row("pageable: pinned and device", kPinned, "", "pageable-memcpy", "", 0, 0, 0, "");
    row("pageable: too little to save", kPageableTiny, "", "pageable-memcpy", "", 0, 0, 0, "");
    // sync-in-step: the 100 µs wait, caused by aten::item
    row("sync", kSyncInStep, "sync-in-step", "sync-in-step", "cudaStreamSynchronize", 1, 100, 100, "aten::item ×1");
    row("sync: after the steps", kSyncAfterSteps, "", "sync-in-step", "", 0, 0, 0, "");
    row("sync: async calls", kAsyncOnly, "", "sync-in-step", "", 0, 0, 0, "");
    // gpu-idle: the 290 µs hole, ended by kernel b
    row("gpu-idle", kGpuIdle, "gpu-idle", "gpu-idle", "b", 1, 290, 290,
        "sat idle 290 µs (29% of the steps) in 1 gap longer than 10% of its step");
    row("gpu-idle: short gap", kShortGap, "", "gpu-idle", "", 0, 0, 0, "");
    row("gpu-idle: profiler overhead", kOverheadGap, "", "gpu-idle", "", 0, 0, 0, "");
    // 9 gaps of 200 µs and one of 100 µs, all inside chunks under 50 % busy
    row("gpu-idle: low utilization", kLowUtilization, "gpu-idle", "gpu-idle", "k1,k2,k3", 10, 1900, 1900,
        "in 10 gaps of at least 100 µs in chunks under 50% busy (19 of 30 chunks)"); // no "0 gaps longer …"
    // input-stall: 2 × 400 µs before the first CUDA call
    row("input-stall", kInputStall, "input-stall", "input-stall", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        2, 800, 800, "40% of the steps");
    row("input-stall: between steps", kStallBetweenSteps, "input-stall", "input-stall", "load batch", 1, 300, 300,
        "mostly during load batch");
    row("input-stall: fast loader", kFastLoader, "", "input-stall", "", 0, 0, 0, "");
    // low-occupancy: 600 µs × (1 − 10/25) / 2
    row("low-occupancy", kLowOccupancy, "low-occupancy", "low-occupancy", "conv", 1, 180, 180, "the lowest, conv, at 10%");
    // 600 µs × (1 − 12.5/25) / 2
    row("low-occupancy: nsys", kLowOccupancyNsys, "low-occupancy", "low-occupancy", "big", 1, 150, 150,
        "the lowest, big, at 12%");
    row("low-occupancy: short or unknown", kShortLowOccupancy, "", "low-occupancy", "", 0, 0, 0, "");
    // no GPU stream: no device hint at all
    row("cpu only", kCpuOnly, "", "launch-bound", "", 0, 0, 0, "");
}

void TestProfilerHints::rules()
{
    QFETCH(QString, fixture);
    QFETCH(QString, fired);
    QFETCH(QString, rule);
    QFETCH(QString, evidence);
    QFETCH(int, evidenceCount);
    QFETCH(double, savingMin);
    QFETCH(double, savingMax);
    QFETCH(QString, messagePart);

    const Trace trace = fixtureTrace(fixture.toStdString());
    const std::vector<Hint> hints = deviceHints(trace);
    QCOMPARE(QString::fromStdString(ruleIds(hints)), fired);
    const Hint *hint = findHint(hints, rule.toStdString());
    if (evidenceCount == 0) {
        QVERIFY(!hint);
        return;
    }
    QVERIFY(hint);
    QCOMPARE(QString::fromStdString(evidenceHead(trace, *hint, size_t(evidence.count(',') + 1))), evidence);
    QCOMPARE(int(hint->events.size()), evidenceCount);
    QVERIFY2(hint->savingUs >= savingMin - 1e-6 && hint->savingUs <= savingMax + 1e-6,
             qPrintable(QString::number(hint->savingUs)));
    QVERIFY2(hint->message.find(messagePart.toStdString()) != std::string::npos, hint->message.c_str());
    QVERIFY(!hint->fix.empty());
}

void TestProfilerHints::thresholdsDocumented()
{
    const std::vector<std::string> expected
        = {"launch-bound", "pageable-memcpy", "sync-in-step", "gpu-idle", "input-stall", "low-occupancy"};
    const std::vector<HintRule> rules = deviceHintRules();
    QCOMPARE(rules.size(), expected.size());
    for (size_t i = 0; i < rules.size(); ++i) {
        QCOMPARE(rules[i].id, expected[i]);
        QVERIFY(!rules[i].title.empty());
        QVERIFY2(rules[i].thresholds.find("Saving") != std::string::npos, rules[i].id.c_str());
        QCOMPARE(hintRules()[i].id, expected[i]); // the device rules come first
    }
}

void TestProfilerHints::fixtureDsl()
{
    const Trace trace = fixtureTrace(R"(
step 0 100 name=train
op "aten::add" 10 50   # a comment
op aten::mul 20 10
runtime cudaLaunchKernel 22 2 corr=3
kernel k1 40 4 stream=9 grid=2,1,1 block=128,1,1 corr=3 occupancy=19
flow 3
alloc 5 4096 device=0
)");
    const Run &run = trace.runs.front();
    QCOMPARE(run.tracks.size(), size_t(2));
    QCOMPARE(run.info.mode, std::string("imported"));
    QCOMPARE(eventNames(trace, run, {EventId(0), EventId(1), EventId(2), EventId(3)}),
             std::string("train,aten::add,aten::mul,cudaLaunchKernel"));
    QCOMPARE(int(run.events[3].depth), 3); // step > add > mul > launch
    const Event &kernel = run.events[4];
    QCOMPARE(kernel.start, int64_t(40'000));
    QCOMPARE(run.tracks[kernel.track.value].kind, TrackKind::GpuStream);
    const EventArgs *args = argsOf(run, kernel);
    QVERIFY(args);
    QCOMPARE(args->grid[0], 2);
    QCOMPARE(args->stream, 9);
    QCOMPARE(trace.strings[args->extra], std::string(R"({"est. achieved occupancy %":19})"));
    QCOMPARE(run.flows.size(), size_t(1));
    QCOMPARE(run.flows[0].from, EventId(3));
    QCOMPARE(run.flows[0].to, EventId(4));
    QCOMPARE(run.allocations[0].allocatedAfter, int64_t(4096));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, fixtureTrace("kernel k1 forty 4"));
}

void TestProfilerHints::ranking()
{
    const Trace trace = fixtureTrace(kRanking);
    const std::vector<Hint> hints = importedHints(trace);
    for (size_t i = 1; i < hints.size(); ++i)
        QVERIFY(hints[i - 1].savingUs >= hints[i].savingUs);
    std::vector<Hint> device;
    for (const Hint &h : hints) {
        if (h.rule == "gpu-idle" || h.rule == "pageable-memcpy" || h.rule == "sync-in-step")
            device.push_back(h);
    }
    QCOMPARE(QString::fromStdString(ruleIds(device)), QString("gpu-idle,pageable-memcpy,sync-in-step"));
    QCOMPARE(device[1].savingUs, device[2].savingUs);
    QCOMPARE(hintSeverityName(device[0].severity), "critical"); // 290 µs of a 1 ms step
}

void TestProfilerHints::frameworkWords_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("word");
    QTest::newRow("kineto") << "kineto" << "pin_memory=True";
    QTest::newRow("nsys") << "nsys" << "cudaMallocHost";
    QTest::newRow("fusescope") << "fusescope" << "pinned host memory";
}

void TestProfilerHints::frameworkWords()
{
    QFETCH(QString, source);
    QFETCH(QString, word);
    const Trace trace = fixtureTrace("source " + source.toStdString() + "\n" + kPageable);
    const std::vector<Hint> hints = importedHints(trace);
    const Hint *hint = findHint(hints, "pageable-memcpy");
    QVERIFY(hint);
    QVERIFY2(hint->fix.find(word.toStdString()) != std::string::npos, hint->fix.c_str());
}

// AlexNet on an A100, no ProfilerStep: a 12.7 s warm-up with the GPU nearly
// idle, 16 pageable HtoD copies (each .to(device) waits for its stream: 16
// cudaStreamSynchronize) plus 5 cudaDeviceSynchronize, and two cuDNN
// convolutions of ~1 ms at 19 % occupancy.
void TestProfilerHints::alexNet()
{
    const Trace trace = importOrSkip("kineto/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");
    if (trace.runs.empty())
        QSKIP("the shared test data is not here");
    const std::vector<Hint> hints = importedHints(trace);
    printHints("alexnet", hints);
    QCOMPARE(QString::fromStdString(deviceRuleIds(hints)),
             QString("gpu-idle,pageable-memcpy,sync-in-step,low-occupancy"));
    const Hint *idle = findHint(hints, "gpu-idle");
    QCOMPARE(idle->severity, HintSeverity::Critical);
    QVERIFY(idle->savingUs > 12e6 && idle->savingUs < 12.92e6); // of a 12.92 s GPU span, 66 ms busy
    const Hint *pageable = findHint(hints, "pageable-memcpy");
    QCOMPARE(pageable->events.size(), size_t(16));
    QVERIFY(pageable->message.find("16 host-to-device and 0 device-to-host") != std::string::npos);
    QVERIFY(pageable->fix.find("pin_memory=True") != std::string::npos);
    const Hint *sync = findHint(hints, "sync-in-step");
    QCOMPARE(sync->events.size(), size_t(21));
    QVERIFY2(sync->message.find("(it has no steps)") != std::string::npos, sync->message.c_str());
    QVERIFY(sync->message.find("aten::to ×16, cudaDeviceSynchronize ×5") != std::string::npos);
    const Hint *occupancy = findHint(hints, "low-occupancy");
    QCOMPARE(occupancy->events.size(), size_t(2));
    QVERIFY(occupancy->message.find("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1, at 19%") != std::string::npos);
}

// The V100 training trace: 5 steps at 83–99 % GPU busy, 1600 device-to-device
// copies (no host side), and many long cuDNN/cuBLAS kernels under 25 %.
void TestProfilerHints::v100()
{
    const Trace trace = importOrSkip("kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    if (trace.runs.empty())
        QSKIP("the shared test data is not here");
    const std::vector<Hint> hints = importedHints(trace);
    printHints("v100", hints);
    QCOMPARE(QString::fromStdString(deviceRuleIds(hints)), QString("low-occupancy"));
    const Hint *occupancy = findHint(hints, "low-occupancy");
    QCOMPARE(occupancy->events.size(), size_t(50)); // capped
    QVERIFY(occupancy->message.find("345 kernel launches") != std::string::npos);
}

void TestProfilerHints::cpuOnlyTrace()
{
    const Trace trace = importOrSkip("kineto/hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    if (trace.runs.empty())
        QSKIP("the shared test data is not here");
    const std::vector<Hint> hints = importedHints(trace);
    printHints("cpu_only", hints);
    QCOMPARE(QString::fromStdString(deviceRuleIds(hints)), QString());
}

// saxpy: 15 synchronous cudaMemcpy from pageable memory around 5 kernels;
// CloverLeaf: 1312 kernels each followed by cudaDeviceSynchronize, 968 of
// them under 10 µs.
void TestProfilerHints::nsightExports()
{
    const Trace saxpy = importOrSkip("nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", true);
    if (saxpy.runs.empty())
        QSKIP("the shared test data is not here");
    const std::vector<Hint> saxpyHints = importedHints(saxpy);
    printHints("saxpy", saxpyHints);
    QCOMPARE(QString::fromStdString(deviceRuleIds(saxpyHints)), QString("gpu-idle,sync-in-step,pageable-memcpy"));
    QVERIFY(findHint(saxpyHints, "sync-in-step")->message.find("cudaMemcpy ×15") != std::string::npos);
    const Hint *pageable = findHint(saxpyHints, "pageable-memcpy");
    QVERIFY(pageable->message.find("10 host-to-device and 5 device-to-host") != std::string::npos);
    QVERIFY(pageable->fix.find("cudaMallocHost") != std::string::npos);

    const Trace clover = importOrSkip("nsys/pipit/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite", true);
    const std::vector<Hint> cloverHints = importedHints(clover);
    printHints("cloverleaf", cloverHints);
    QCOMPARE(QString::fromStdString(deviceRuleIds(cloverHints)),
             QString("sync-in-step,launch-bound,pageable-memcpy"));
    const Hint *sync = findHint(cloverHints, "sync-in-step");
    QVERIFY(sync->message.find("cudaDeviceSynchronize ×1312, cudaMemcpy ×279") != std::string::npos);
    QCOMPARE(sync->events.size(), size_t(50));
    QVERIFY(findHint(cloverHints, "launch-bound")->message.find("968 kernels shorter than 10 µs") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestProfilerHints)
#include "tst_profiler_hints.moc"
