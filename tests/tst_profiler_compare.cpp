// Run comparison: on real eager and compiled runs recorded by the binary (the
// graph nodes of both sides, the totals and the speedup against a direct
// computation from the events) and on small fixtures (matching by name and
// device, per-step scaling, runs whose ops do not follow the graph).
#include "hintfixture.h"
#include "profiler/compare.h"
#include "profiler/tracereader.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <optional>

using namespace fusescope;
using namespace fusescope::profiler;

namespace {

// A trace with its runs' statistics, kept together so CompareSide's pointers stay valid.
struct Analysed {
    Trace trace;
    std::vector<RunStatistics> stats;

    explicit Analysed(Trace t) : trace(std::move(t))
    {
        for (const Run &run : trace.runs)
            stats.push_back(computeStatistics(trace, run));
    }
    CompareSide side(size_t run, const std::string &label) const
    {
        return {&trace, &trace.runs[run], &stats[run], label};
    }
};

const DeltaRow *findRow(const std::vector<DeltaRow> &rows, const std::string &name, const std::string &detail = {})
{
    for (const DeltaRow &r : rows) {
        if (r.name == name && (detail.empty() || r.detail == detail))
            return &r;
    }
    return nullptr;
}

// The summed durations of the ops that lie inside no other op of their track.
double outermostOpNs(const Run &run)
{
    double ns = 0;
    for (const Event &e : run.events) {
        if (e.kind != EventKind::Op)
            continue;
        bool inside = false;
        for (const Event &p : run.events) {
            inside = inside || (&p != &e && p.kind == EventKind::Op && p.track == e.track && p.start <= e.start &&
                                e.end() <= p.end() && p.depth < e.depth);
        }
        if (!inside)
            ns += double(e.duration);
    }
    return ns;
}

// Whether one of the comparison's notes holds `text`.
bool notes(const RunComparison &c, const std::string &text)
{
    return std::any_of(c.notes.begin(), c.notes.end(),
                       [&](const std::string &n) { return n.find(text) != std::string::npos; });
}

// The median step duration, computed from the events directly.
double medianStepNs(const Run &run)
{
    std::vector<double> steps;
    for (const Event &e : run.events)
        if (e.kind == EventKind::Step)
            steps.push_back(double(e.duration));
    std::sort(steps.begin(), steps.end());
    const size_t n = steps.size();
    return n == 0 ? 0.0 : n % 2 ? steps[n / 2] : (steps[n / 2 - 1] + steps[n / 2]) / 2;
}

std::optional<Trace> recordCompare(const QString &model, int steps, QString *why)
{
    static QTemporaryDir dir;
    const QString file = dir.filePath(model + QStringLiteral(".fstrace"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FUSESCOPE_BINARY), {QStringLiteral("profile"), model, QStringLiteral("--compare"),
                                               QStringLiteral("--steps"), QString::number(steps), QStringLiteral("-o"),
                                               file});
    if (!p.waitForFinished(300'000) || p.exitCode() != 0) {
        *why = QString::fromUtf8(p.readAllStandardError());
        return std::nullopt;
    }
    return TraceReader(file.toStdString()).load();
}

} // namespace

class TestCompare : public QObject
{
    Q_OBJECT

private slots:
    void eagerAgainstCompiled_data()
    {
        QTest::addColumn<QString>("model");
        QTest::newRow("mlp") << QStringLiteral("mlp");
        QTest::newRow("encoder") << QStringLiteral("encoder");
    }

    // Every captured node appears on both sides; the eager side's node times
    // add up to its outermost ops, the compiled side's to its node statistics.
    void eagerAgainstCompiled()
    {
        QFETCH(QString, model);
        QString why;
        std::optional<Trace> trace = recordCompare(model, 2, &why);
        QVERIFY2(trace && trace->runs.size() == 2, qPrintable(why));
        const Analysed a(std::move(*trace));
        const RunComparison c = compareRuns(a.side(0, "eager"), a.side(1, "compiled"));

        const std::vector<CapturedCall> calls = capturedCalls(a.trace.runs[1]);
        QVERIFY(!calls.empty());
        QCOMPARE(c.nodes.size(), calls.size());
        double eagerNs = 0, compiledNs = 0;
        for (const DeltaRow &row : c.nodes) {
            QVERIFY2(row.inBase && row.inOther, row.name.c_str());
            QCOMPARE(row.baseCalls, 2.0); // once per step
            QVERIFY(row.nodeId >= 0 && !row.detail.empty());
            eagerNs += row.baseNs;
            compiledNs += row.otherNs;
        }
        QCOMPARE(eagerNs, outermostOpNs(a.trace.runs[0]));
        double nodeStatsNs = 0;
        for (const NodeStats &n : a.stats[1].nodes)
            nodeStatsNs += n.timeNs;
        QVERIFY(std::abs(compiledNs - nodeStatsNs) <= 1e-6 * nodeStatsNs);

        QVERIFY(!c.perStep);
        QCOMPARE(c.baseStepNs, medianStepNs(a.trace.runs[0]));
        QCOMPARE(c.otherStepNs, medianStepNs(a.trace.runs[1]));
        QCOMPARE(c.speedup, c.baseStepNs / c.otherStepNs);
        // Ops by name: the eager run's only, with its calls and time.
        for (const RangeStats &op : a.stats[0].ops) {
            const DeltaRow *row = findRow(c.ops, op.name);
            QVERIFY2(row && row->inBase, op.name.c_str());
            QCOMPARE(row->baseCalls, double(op.time.calls));
            QCOMPARE(row->baseNs, double(op.time.totalNs));
        }
        // Sorted by the size of the change.
        for (size_t i = 1; i < c.kernels.size(); ++i)
            QVERIFY(std::abs(c.kernels[i - 1].deltaNs()) >= std::abs(c.kernels[i].deltaNs()));
    }

    void kernelsMatchByNameAndDevice()
    {
        const Analysed a(fixture::TraceFixture(
                             "kernel gemm 0 10\n"
                             "kernel gemm 20 10 device=1\n"
                             "kernel relu 40 4\n"
                             "op aten::mm 0 50\n")
                             .take());
        const Analysed b(fixture::TraceFixture(
                             "kernel gemm 0 6\n"
                             "kernel gemm 10 6\n"
                             "kernel fused 20 3\n"
                             "op aten::mm 0 30\n")
                             .take());
        const RunComparison c = compareRuns(a.side(0, "a"), b.side(0, "b"));
        const DeltaRow *gemm0 = findRow(c.kernels, "gemm", "GPU 0");
        const DeltaRow *gemm1 = findRow(c.kernels, "gemm", "GPU 1");
        QVERIFY(gemm0 && gemm1);
        QCOMPARE(gemm0->baseNs, 10'000.0);
        QCOMPARE(gemm0->otherNs, 12'000.0);
        QCOMPARE(gemm0->otherCalls, 2.0);
        QVERIFY(gemm1->inBase && !gemm1->inOther);
        QCOMPARE(gemm1->speedup(), 0.0);
        const DeltaRow *fused = findRow(c.kernels, "fused");
        QVERIFY(fused && !fused->inBase && fused->inOther);
        const DeltaRow *mm = findRow(c.ops, "aten::mm");
        QVERIFY(mm);
        QCOMPARE(mm->speedup(), 50.0 / 30.0);
        QVERIFY(c.nodes.empty()); // no captured graph on either side
        QCOMPARE(c.baseKernelNs, 24'000.0);
        QCOMPARE(c.otherKernelNs, 15'000.0);
    }

    // A first step that also compiles does not make the run look slow.
    void speedupFromTheMedianStep()
    {
        const Analysed a(fixture::TraceFixture("step 0 100\nstep 100 100\nstep 200 100\n").take());
        const Analysed b(fixture::TraceFixture("step 0 1000\nstep 1000 50\nstep 1050 50\n").take());
        const RunComparison c = compareRuns(a.side(0, "eager"), b.side(0, "compiled"));
        QCOMPARE(c.baseStepNs, 100'000.0);
        QCOMPARE(c.otherStepNs, 50'000.0);
        QCOMPARE(c.speedup, 2.0);
    }

    // Runs with unequal step counts compare per step, and say so.
    void perStepWhenStepCountsDiffer()
    {
        const Analysed a(fixture::TraceFixture(
                             "step 0 100\nstep 100 100\nstep 200 100\nstep 300 100\n"
                             "repeat 4 every 100 kernel k 10 20\n")
                             .take());
        const Analysed b(fixture::TraceFixture("step 0 50\nstep 50 50\nrepeat 2 every 50 kernel k 10 5\n").take());
        const RunComparison c = compareRuns(a.side(0, "four"), b.side(0, "two"));
        QVERIFY(c.perStep);
        QCOMPARE(c.baseSteps, int64_t(4));
        QCOMPARE(c.otherSteps, int64_t(2));
        const DeltaRow *k = findRow(c.kernels, "k");
        QVERIFY(k);
        QCOMPARE(k->baseCalls, 1.0);
        QCOMPARE(k->otherCalls, 1.0);
        QCOMPARE(k->baseNs, 20'000.0);
        QCOMPARE(k->otherNs, 5'000.0);
        QCOMPARE(c.speedup, 2.0); // 100 µs steps against 50 µs
        QVERIFY(!c.notes.empty() && c.notes.front().find("per step") != std::string::npos);
    }

    // An eager run whose ops do not replay the captured graph: nodes are left
    // out with a note rather than matched wrongly.
    void eagerOpsThatDoNotFollowTheGraph()
    {
        QString why;
        // One step of two that calls something else: no node is compared, not half of them.
        std::optional<Trace> two = recordCompare(QStringLiteral("mlp"), 2, &why);
        QVERIFY2(two && two->runs.size() == 2, qPrintable(why));
        Run &eagerRun = two->runs[0];
        const StringId other = two->strings.intern("aten.other");
        Event *outer = nullptr; // the last outermost op: in the last step that has ops
        for (Event &e : eagerRun.events) {
            if (e.kind == EventKind::Op &&
                (!outer || e.depth < outer->depth || (e.depth == outer->depth && e.start > outer->start)))
                outer = &e;
        }
        QVERIFY(outer);
        outer->name = other;
        const Analysed half(std::move(*two));
        const RunComparison partial = compareRuns(half.side(0, "eager"), half.side(1, "compiled"));
        QVERIFY(partial.nodes.empty());
        QVERIFY(notes(partial, "the ops of 1 of 2 steps follow the captured graph"));

        std::optional<Trace> trace = recordCompare(QStringLiteral("mlp"), 1, &why);
        QVERIFY2(trace && trace->runs.size() == 2, qPrintable(why));
        Trace eager = fixture::TraceFixture("step 0 100\nop aten::other 0 10 thread=1\n").take();
        Analysed a(std::move(eager));
        const Analysed b(std::move(*trace));
        const RunComparison c = compareRuns(a.side(0, "odd"), b.side(1, "compiled"));
        QVERIFY(c.nodes.empty());
        QVERIFY(notes(c, "the ops of 0 of 1 step follow the captured graph"));
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_profiler_compare.moc"
