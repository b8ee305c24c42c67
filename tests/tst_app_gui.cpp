// The main window end to end on real files: a profiled compiled encoder, the
// resnet18 zoo model and an imported ONNX model open through File > Open in
// the worker; stages step with Alt+Left/Right; a node selected in the
// captured graph lights up its fused kernel and the reverse; the Inspector
// follows; --screenshot writes pictures with real content.
#include "app/mainwindow.h"
#include "views/codeview.h"
#include "views/compareview.h"
#include "views/graphview.h"
#include "views/inspector.h"
#include "views/hintsview.h"
#include "views/memoryview.h"
#include "views/rangestatsview.h"
#include "views/sqlconsole.h"
#include "views/stagenavigator.h"
#include "views/statsview.h"
#include "views/timelinemodel.h"
#include "views/timelinerangestats.h"
#include "views/timelineview.h"
#include "fusescope_config.h"

#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <set>

using namespace fusescope;

namespace {

QProcessEnvironment cacheEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    return env;
}

int runFusescope(const QStringList &args, QString *out = nullptr, QString *err = nullptr)
{
    QProcess p;
    p.setProcessEnvironment(cacheEnvironment());
    p.start(QStringLiteral(FUSESCOPE_BINARY), args);
    if (!p.waitForFinished(300000))
        qFatal("fusescope %s did not finish", qPrintable(args.join(QLatin1Char(' '))));
    if (out)
        *out = QString::fromUtf8(p.readAllStandardOutput());
    if (err)
        *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

bool waitForLayouts(MainWindow &w)
{
    for (int i = 0; i < 1200; ++i) {
        if (!w.capturedView()->isLayoutRunning() && !w.fusedView()->isLayoutRunning() &&
            !w.stageView()->isLayoutRunning())
            return true;
        QTest::qWait(50);
    }
    return false;
}

bool openAndWait(MainWindow &w, const QString &path)
{
    QSignalSpy shown(&w, &MainWindow::documentShown);
    QSignalSpy failed(&w, &MainWindow::openFailed);
    w.openFile(path);
    for (int i = 0; i < 2400 && shown.isEmpty() && failed.isEmpty(); ++i)
        QTest::qWait(50);
    if (!failed.isEmpty())
        qWarning("%s", qPrintable(failed.at(0).at(1).toString()));
    return !shown.isEmpty() && waitForLayouts(w);
}

// How many distinct colours a sampled image has: a blank or flat render has few.
int colourVariety(const QImage &image)
{
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); y += 4) {
        for (int x = 0; x < image.width(); x += 4)
            colours.insert(image.pixel(x, y));
    }
    return int(colours.size());
}

const GraphNode *firstNodeWithTarget(const StageGraph &g, const std::string &target)
{
    for (const GraphNode &n : g.nodes) {
        if (n.target == target)
            return &n;
    }
    return nullptr;
}

} // namespace

class TestGui : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_encoderTrace;
    QString m_resnetTrace;

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("FusescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_app_gui"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        qputenv("XDG_CACHE_HOME", FUSESCOPE_TEST_CACHE_DIR);
        m_encoderTrace = m_dir.filePath(QStringLiteral("encoder.fstrace"));
        QString err;
        QCOMPARE(runFusescope({QStringLiteral("profile"), QStringLiteral("encoder"), QStringLiteral("--compile"),
                               QStringLiteral("--steps"), QStringLiteral("2"), QStringLiteral("-o"), m_encoderTrace},
                              nullptr, &err),
                 0);
        m_resnetTrace = m_dir.filePath(QStringLiteral("resnet18.fstrace"));
        QCOMPARE(runFusescope({QStringLiteral("profile"), QStringLiteral("resnet18"), QStringLiteral("--compile"),
                               QStringLiteral("--steps"), QStringLiteral("1"), QStringLiteral("-o"), m_resnetTrace},
                              nullptr, &err),
                 0);
    }

    void profiledEncoderOpensWithBothGraphs()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, m_encoderTrace));
        QVERIFY(w.document()->profiled);
        QVERIFY(w.timelineRunChooser()->parentWidget()->isHidden()); // one run: nothing to choose
        QCOMPARE(w.capturedView()->graph()->stageName, std::string("capture"));
        QCOMPARE(w.fusedView()->graph()->stageName, std::string("fuse"));
        QVERIFY(!w.capturedView()->scene()->items().isEmpty());
        QVERIFY(!w.fusedView()->scene()->items().isEmpty());
        QVERIFY(w.capturedView()->heatAvailable());
    }

    void capturedSelectionLightsTheFusedKernel()
    {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, m_encoderTrace));
        const StageGraph &captured = *w.capturedView()->graph();
        const StageGraph &fused = *w.fusedView()->graph();
        const GraphNode *linear = firstNodeWithTarget(captured, "aten.linear");
        QVERIFY(linear);
        w.capturedView()->boxItem(w.capturedView()->presented().itemFor(linear->id))->setSelected(true);
        // The fused nodes that came from it and every node of their kernels are lit.
        std::set<std::string> kernels;
        for (int id : fused.nodesWithOrigins({linear->id}))
            kernels.insert(fused.find(id)->kernel);
        kernels.erase("");
        QVERIFY(!kernels.empty());
        std::set<int> expected;
        for (const std::string &k : kernels) {
            for (int id : fused.kernel(k)->nodes)
                expected.insert(w.fusedView()->presented().itemFor(id));
        }
        const std::vector<int> lit = w.fusedView()->highlightedItems();
        for (int item : expected)
            QVERIFY(std::find(lit.begin(), lit.end(), item) != lit.end());
        QCOMPARE(w.inspector()->value(QStringLiteral("target")), QStringLiteral("aten.linear"));
        QVERIFY(w.inspector()->value(QStringLiteral("measured time")).contains(QLatin1String("s")));
    }

    // One shared selection: a kernel picked on the timeline, in the fused
    // graph or in the code reaches every other view, without echoing back.
    void selectionReachesEveryView()
    {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, m_encoderTrace));
        const StageGraph &fused = *w.fusedView()->graph();
        const profiler::Trace &trace = *w.document()->trace;
        const profiler::Run &run = trace.runs.front();
        // The last launch of a generated kernel, so "first launch" below is a different event.
        profiler::EventId last;
        std::string kernel;
        for (uint32_t i = 0; i < run.events.size(); ++i) {
            const std::string &name = trace.strings[run.events[i].name];
            if (run.events[i].kind == profiler::EventKind::Kernel && fused.kernel(name) &&
                (kernel.empty() || name == kernel)) {
                last = profiler::EventId(i);
                kernel = name;
            }
        }
        QVERIFY(last.valid());
        const QString kernelName = QString::fromStdString(kernel);

        w.timeline()->selectEvent(last); // as a click does, before it tells the window
        emit w.timeline()->eventSelected(0, last);
        QCOMPARE(w.codeView()->currentKernel(), kernelName);
        QCOMPARE(w.statsView()->selectedName(StatsView::KernelsTab), kernelName);
        std::set<int> lit;
        for (int item : w.fusedView()->highlightedItems())
            lit.insert(item);
        for (int id : fused.kernel(kernel)->nodes)
            QVERIFY(lit.count(w.fusedView()->presented().itemFor(id)));
        QVERIFY(!w.capturedView()->highlightedItems().empty()); // the kernel's origins
        QCOMPARE(w.timeline()->selectedEvent(), last); // the code view's echo did not move it
        QCOMPARE(w.graphTabs()->currentIndex(), int(MainWindow::GraphsTab)); // nothing switched tabs

        // From the fused graph: the kernel's first launch on the timeline, its statistics row.
        w.statsView()->selectRow(StatsView::KernelsTab, QString());
        emit w.fusedView()->nodeSelected(fused.kernel(kernel)->nodes.front());
        const profiler::EventId first = w.timeline()->selectedEvent();
        QVERIFY(first.valid() && first != last);
        QCOMPARE(QString::fromStdString(trace.strings[run.event(first).name]), kernelName);
        QCOMPARE(w.statsView()->selectedName(StatsView::KernelsTab), kernelName);

        // From the code: another kernel's launch.
        for (const GraphKernel &k : fused.kernels) {
            if (k.name == kernel || !w.codeView()->selectKernel(QString::fromStdString(k.name)))
                continue;
            const profiler::EventId id = w.timeline()->selectedEvent();
            QVERIFY(id.valid());
            QCOMPARE(trace.strings[run.event(id).name], k.name);
            break;
        }

        // A captured node: its statistics row in the nodes table.
        const GraphNode *linear = firstNodeWithTarget(*w.capturedView()->graph(), "aten.linear");
        QVERIFY(linear);
        emit w.capturedView()->nodeSelected(linear->id);
        QCOMPARE(w.statsView()->selectedName(StatsView::NodesTab), QString::fromStdString(linear->name));
    }

    void fusedSelectionLightsItsOrigins()
    {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, m_encoderTrace));
        const StageGraph &fused = *w.fusedView()->graph();
        // A GEMM by a weight: aten.mm, or fusescope.mm_bf16x6 where the CPU has AMX tiles.
        const GraphNode *mm = firstNodeWithTarget(fused, "aten.mm");
        mm = mm ? mm : firstNodeWithTarget(fused, "fusescope.mm_bf16x6");
        QVERIFY(mm && !mm->kernel.empty());
        w.fusedView()->boxItem(w.fusedView()->presented().itemFor(mm->id))->setSelected(true);
        const std::vector<int> lit = w.capturedView()->highlightedItems();
        QVERIFY(!lit.empty());
        for (int origin : mm->origins) {
            const int item = w.capturedView()->presented().itemFor(origin);
            QVERIFY(std::find(lit.begin(), lit.end(), item) != lit.end());
        }
        QCOMPARE(w.inspector()->value(QStringLiteral("kernel")), QString::fromStdString(mm->kernel));
    }

    void stagesStepWithAltArrows()
    {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QVERIFY(openAndWait(w, m_encoderTrace));
        StageNavigator *nav = w.stageNavigator();
        nav->selectStage(0);
        QTRY_COMPARE(w.stageView()->stage(), 0);
        QTest::keyClick(&w, Qt::Key_Right, Qt::AltModifier);
        QCOMPARE(nav->currentStage(), 1);
        QTRY_COMPARE(w.stageView()->stage(), 1);
        QVERIFY(waitForLayouts(w));
        // decompose adds nodes: they are marked on the stage's graph.
        int added = 0;
        for (size_t i = 0; i < w.stageView()->presented().items.size(); ++i)
            added += w.stageView()->boxItem(int(i))->mark() == ItemMark::Added;
        QVERIFY(added > 0);
        QTest::keyClick(&w, Qt::Key_Left, Qt::AltModifier);
        QCOMPARE(nav->currentStage(), 0);
    }

    void resnetOpensCollapsedAndExpands()
    {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, m_resnetTrace));
        GraphView *fused = w.fusedView();
        const size_t before = fused->presented().items.size();
        QSignalSpy done(fused, &GraphView::layoutFinished);
        fused->expandAll();
        QVERIFY(done.wait(60000));
        QVERIFY(fused->presented().items.size() >= before);
        QVERIFY(!fused->scene()->items().isEmpty());
    }

    void onnxModelOpens()
    {
#if !FUSESCOPE_HAVE_ONNX
        QSKIP("this build has no ONNX import (FUSESCOPE_ONNX=OFF)");
#endif
        const QString model = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/onnx-models/light/light_squeezenet.onnx");
        if (!QFileInfo::exists(model))
            QSKIP("../shared/testdata/onnx-models is absent");
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, model));
        QVERIFY(!w.document()->profiled);
        QVERIFY(w.capturedView()->presented().items.size() > 20);
        QVERIFY(w.fusedView()->graph()->kernels.size() > 5);
    }

    void codeViewFollowsTheFusedGraph()
    {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, m_encoderTrace));
        QSignalSpy selected(w.codeView(), &CodeView::kernelSelected);
        const GraphKernel &k = w.fusedView()->graph()->kernels.front();
        w.codeView()->selectKernel(QString::fromStdString(k.name));
        QVERIFY(!selected.isEmpty());
        const std::vector<int> lit = w.fusedView()->highlightedItems();
        QVERIFY(!lit.empty());
        QVERIFY(std::find(lit.begin(), lit.end(), w.fusedView()->presented().itemFor(k.nodes.front())) != lit.end());
    }

    void demoButtonRecordsAndOpens()
    {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::documentShown);
        auto *demo = w.findChild<QPushButton *>(QStringLiteral("emptyStateDemo"));
        QVERIFY(demo && demo->isEnabled());
        QTest::mouseClick(demo, Qt::LeftButton);
        QVERIFY(!demo->isEnabled()); // one recording at a time
        QVERIFY(shown.wait(300000));
        QVERIFY(QString::fromStdString(w.document()->path).endsWith(QLatin1String("demo/demo.fstrace")));
        QVERIFY(w.document()->profiled);
        QVERIFY(w.fusedView()->graph() && !w.fusedView()->graph()->kernels.empty());
    }

    void importedTraceOpensOnTheTimeline()
    {
        const QString trace = QStringLiteral(FUSESCOPE_TESTDATA_DIR
                                             "/kineto/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");
        if (!QFileInfo::exists(trace))
            QSKIP("../shared/testdata is absent");
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, trace));
        QVERIFY(!w.document()->hasGraphs());
        QCOMPARE(w.graphTabs()->currentIndex(), 2);
        QVERIFY(w.timeline()->model().tracks().size() >= 4);
        // The Inspector follows the timeline's selection.
        const profiler::EventId first{0};
        emit w.timeline()->eventSelected(0, first);
        QCOMPARE(w.inspector()->value(QStringLiteral("name")),
                 QString::fromStdString(w.document()->trace->strings[w.document()->trace->runs[0].events[0].name]));
        // A hint's evidence is framed and selected on the timeline.
        QVERIFY(!w.hintsView()->hints().empty());
        const profiler::Hint &top = w.hintsView()->hints().front();
        if (!top.events.empty()) {
            w.hintsView()->selectHint(0);
            QCOMPARE(w.timeline()->selectedEvent(), top.events.front());
            QCOMPARE(w.graphTabs()->currentIndex(), 2);
        }
        // A statistics row leads to its events on the timeline.
        emit w.statsView()->eventsRequested(QStringLiteral("aten::conv2d"), 0);
        QVERIFY(w.timeline()->selectedEvent().valid());
        QCOMPARE(QString::fromStdString(w.timeline()->model().name(w.timeline()->selectedEvent())),
                 QStringLiteral("aten::conv2d"));
        QTemporaryDir out;
        QString err;
        QCOMPARE(runFusescope({QStringLiteral("--screenshot"), out.path(), trace}, nullptr, &err), 0);
        const QImage image(out.filePath(QStringLiteral("timeline.png")));
        QVERIFY(!image.isNull());
        QVERIFY(colourVariety(image) > 40);
        for (const char *table : {"stats.png", "hints.png"})
            QVERIFY2(!QImage(out.filePath(QString::fromLatin1(table))).isNull(), table);
    }

    // A --compare recording: the Compare tab sets its eager run against the
    // compiled one, File > Compare With… another file's run, and the Memory,
    // Range and SQL views follow the document.
    void compareFileFillsTheAnalysisViews()
    {
        const QString trace = m_dir.filePath(QStringLiteral("compare.fstrace"));
        QString err;
        QCOMPARE(runFusescope({QStringLiteral("profile"), QStringLiteral("mlp"), QStringLiteral("--compare"),
                               QStringLiteral("--steps"), QStringLiteral("2"), QStringLiteral("--profile-memory"),
                               QStringLiteral("-o"), trace},
                              nullptr, &err),
                 0);
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, trace));
        QVERIFY(w.document()->baseline);
        QTRY_VERIFY(w.compareView()->comparison() != nullptr);
        const profiler::RunComparison &c = *w.compareView()->comparison();
        QCOMPARE(c.baseLabel, std::string("eager"));
        QCOMPARE(c.otherLabel, std::string("compiled"));
        QVERIFY(!c.nodes.empty());
        // A compared node is selected in the captured graph.
        emit w.compareView()->nodeRequested(c.nodes.front().nodeId);
        QCOMPARE(w.graphTabs()->currentIndex(), int(MainWindow::GraphsTab));
        QCOMPARE(w.capturedView()->selectedNode(), c.nodes.front().nodeId);

        QVERIFY(w.graphTabs()->isTabEnabled(MainWindow::MemoryTab));
        QVERIFY(!w.memoryView()->isEmptyStateShown());
        emit w.memoryView()->eventRequested(quint32(w.document()->trace->runs[0].events.size())); // not there: ignored
        QCOMPARE(w.graphTabs()->currentIndex(), int(MainWindow::GraphsTab));
        QVERIFY(!w.sqlConsole()->isEmptyStateShown());

        const int64_t end = w.document()->trace->runs.front().summary.durationNs;
        emit w.timeline()->rangeSelected(0, end);
        QVERIFY(!w.rangeStatsView()->isEmptyStateShown());
        QCOMPARE(size_t(w.rangeStatsView()->model()->rowCount()),
                 timelineRangeStats(w.timeline()->model(), 0, end).size());

        // The timeline can show the eager run; the Inspector then reads that run, and a
        // statistics row (the shown run's) brings the shown run back.
        QComboBox *runs = w.timelineRunChooser();
        QCOMPARE(runs->count(), 2);
        QVERIFY(!runs->parentWidget()->isHidden()); // the run bar, shown with two runs
        emit runs->activated(1);
        const profiler::Trace &eager = *w.document()->baseline->trace;
        QCOMPARE(w.timeline()->model().trace(), &eager);
        const profiler::EventId eagerOp{0};
        w.timeline()->selectEvent(eagerOp);
        emit w.timeline()->eventSelected(0, eagerOp);
        QCOMPARE(w.inspector()->value(QStringLiteral("name")),
                 QString::fromStdString(eager.strings[eager.runs[0].events[0].name]));
        emit w.statsView()->eventsRequested(QString::fromStdString(w.document()->stats->kernels.front().name), 1);
        QCOMPARE(w.timeline()->model().trace(), w.document()->trace.get());
        QCOMPARE(runs->currentIndex(), 0);

        // A file's run as the first side: this file again, whose compiled run it opens on.
        w.compareWith(trace);
        QTRY_VERIFY_WITH_TIMEOUT(w.compareView()->comparison() != nullptr &&
                                     w.graphTabs()->currentIndex() == MainWindow::CompareTab,
                                 20000);
        QCOMPARE(w.compareView()->comparison()->baseLabel, std::string("compiled"));
        QVERIFY(!w.compareView()->comparison()->nodes.empty()); // one captured graph on both sides

        QTemporaryDir out;
        QCOMPARE(runFusescope({QStringLiteral("--screenshot"), out.path(), trace}, nullptr, &err), 0);
        for (const char *name : {"memory.png", "compare.png", "sql.png"}) {
            const QImage image(out.filePath(QString::fromLatin1(name)));
            QVERIFY2(!image.isNull(), name);
            QVERIFY2(colourVariety(image) > 40, name);
        }
    }

    // Kineto traces opened together are the ranks of one run.
    void rankFilesOpenAsOneRun()
    {
        const QString dir = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/param/dlrm_kineto/");
        const QStringList ranks{dir + "worker0_step_12.1694128201545.pt.trace.json",
                                dir + "worker1_step_12.1694128201556.pt.trace.json"};
        if (!QFileInfo::exists(ranks.front()))
            QSKIP("../shared/testdata is absent");
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::documentShown);
        w.openFiles(ranks);
        QVERIFY(shown.wait(60000));
        QCOMPARE(shown.count(), 1);
        const profiler::Run &run = w.document()->trace->runs.front();
        std::set<int64_t> pids;
        for (const profiler::Track &t : run.tracks)
            pids.insert(t.pid);
        QVERIFY2(pids.count(0) && pids.count(1), "a process group per rank");
        QVERIFY(QString::fromStdString(w.document()->title).startsWith(QLatin1String("2 files")));
    }

    void screenshotsHaveRealContent()
    {
        QTemporaryDir out;
        QString stdoutText, err;
        QCOMPARE(runFusescope({QStringLiteral("--screenshot"), out.path(), m_encoderTrace}, &stdoutText, &err), 0);
        for (const char *name : {"graph-captured.png", "graph-fused.png", "stages.png", "code.png"}) {
            const QImage image(out.filePath(QString::fromLatin1(name)));
            QVERIFY2(!image.isNull(), name);
            QVERIFY2(image.width() > 300 && image.height() > 200, name);
            QVERIFY2(colourVariety(image) > 40, name);
        }
    }

    void screenshotOfABadFileFails()
    {
        QTemporaryDir out;
        QFile junk(out.filePath(QStringLiteral("junk.fstrace")));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("not a trace");
        junk.close();
        QString err;
        QCOMPARE(runFusescope({QStringLiteral("--screenshot"), out.path(), junk.fileName()}, nullptr, &err), 1);
        QVERIFY(err.contains(QLatin1String("junk.fstrace")));
    }
};

QTEST_MAIN(TestGui)
#include "tst_app_gui.moc"
