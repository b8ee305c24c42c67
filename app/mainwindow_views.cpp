// The document views of the main window and how they follow each other:
// captured and fused graphs side by side, the selected stage's graph with
// its diff, the stage navigator, the generated code and the Inspector.
// Selection travels through origins: a captured node lights up the fused
// kernel that computes it, and a fused node the captured nodes it came from.
#include "app/mainwindow.h"

#include "views/codeview.h"
#include "views/compareview.h"
#include "views/emptystatewidget.h"
#include "views/graphdiff.h"
#include "views/graphexport.h"
#include "views/graphview.h"
#include "views/inspector.h"
#include "views/memoryview.h"
#include "views/rangestatsview.h"
#include "views/sqlconsole.h"
#include "views/heatlegend.h"
#include "views/hintsview.h"
#include "views/stagenavigator.h"
#include "views/statsview.h"
#include "views/timelinerangestats.h"
#include "views/timelineview.h"

#include <QAction>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include <limits>
#include <set>

namespace fusescope {
namespace {

const QString kHeatKey = QStringLiteral("view/heatOverlay");

QDockWidget *makeDock(QMainWindow *window, const QString &title, const QString &name, QWidget *content)
{
    auto *dock = new QDockWidget(title, window);
    dock->setObjectName(name);
    dock->setWidget(content);
    return dock;
}

// Every node of `graph` in a kernel that holds one of `nodeIds`.
std::vector<int> kernelMates(const StageGraph &graph, const std::vector<int> &nodeIds)
{
    std::set<std::string> kernels;
    for (int id : nodeIds) {
        if (const GraphNode *n = graph.find(id); n && !n->kernel.empty())
            kernels.insert(n->kernel);
    }
    std::vector<int> out = nodeIds;
    for (const std::string &k : kernels) {
        if (const GraphKernel *kernel = graph.kernel(k))
            out.insert(out.end(), kernel->nodes.begin(), kernel->nodes.end());
    }
    return out;
}

} // namespace

void MainWindow::createViews()
{
    m_capturedView = new GraphView(this);
    m_capturedView->setObjectName(QStringLiteral("capturedGraph"));
    m_capturedView->setTitle(tr("Captured graph"));
    m_fusedView = new GraphView(this);
    m_fusedView->setObjectName(QStringLiteral("fusedGraph"));
    m_fusedView->setTitle(tr("After fusion"));
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("beforeAfterSplitter"));
    split->addWidget(m_capturedView);
    split->addWidget(m_fusedView);
    m_stageView = new GraphView(this);
    m_stageView->setObjectName(QStringLiteral("stageGraph"));
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("graphTabs"));
    m_timeline = new TimelineView(this);
    m_timeline->setObjectName(QStringLiteral("timeline"));
    m_tabs->addTab(split, tr("Before / after fusion"));
    m_tabs->addTab(m_stageView, tr("Stage"));
    m_tabs->addTab(createTimelinePage(), tr("Timeline"));
    createAnalysisViews();
    m_tabs->setTabToolTip(TimelineTab, tr("Every CPU thread, GPU stream, compile stage and memory counter of the run over time "
                                "(Ctrl+wheel or W/S zoom, drag or A/D pan, Shift-drag a range, Ctrl+F find)"));
    m_tabs->setTabToolTip(0, tr("The captured graph beside the fused one; selecting a node in one highlights its "
                                "counterpart in the other"));
    m_tabs->setTabToolTip(1, tr("The selected compile stage's graph, with what it changed marked"));
    m_stack->addWidget(m_tabs);
}

void MainWindow::createDocks()
{
    m_navigator = new StageNavigator(this);
    m_codeView = new CodeView(this);
    m_inspector = new Inspector(this);
    QDockWidget *stages = makeDock(this, tr("Stages"), QStringLiteral("stagesDock"), m_navigator);
    QDockWidget *code = makeDock(this, tr("Code"), QStringLiteral("codeDock"), m_codeView);
    QDockWidget *inspector = makeDock(this, tr("Inspector"), QStringLiteral("inspectorDock"), m_inspector);
    addDockWidget(Qt::LeftDockWidgetArea, stages);
    addDockWidget(Qt::RightDockWidgetArea, inspector);
    addDockWidget(Qt::BottomDockWidgetArea, code);
    m_statsView = new StatsView(this);
    m_hintsView = new HintsView(this);
    QDockWidget *stats = makeDock(this, tr("Statistics"), QStringLiteral("statsDock"), m_statsView);
    QDockWidget *hints = makeDock(this, tr("Hints"), QStringLiteral("hintsDock"), m_hintsView);
    tabifyDockWidget(code, stats);
    tabifyDockWidget(stats, hints);
    QDockWidget *sql = makeDock(this, tr("SQL"), QStringLiteral("sqlDock"), m_sqlConsole);
    sql->setToolTip(tr("Read-only SQL over the open trace's store"));
    tabifyDockWidget(hints, sql);
    QDockWidget *range = makeDock(this, tr("Range"), QStringLiteral("rangeDock"), m_rangeStats);
    tabifyDockWidget(sql, range);
    code->raise();
    resizeDocks({stages, inspector}, {400, 320}, Qt::Horizontal);
    resizeDocks({code}, {240}, Qt::Vertical);
    m_docks = {stages, code, inspector, stats, hints, sql, range}; // code stays at [1]: renderViews and kernelActivated use it
}

void MainWindow::createViewMenu()
{
    QMenu *view = menuBar()->addMenu(tr("&View"));
    QToolBar *tools = addToolBar(tr("Graph"));
    tools->setObjectName(QStringLiteral("graphToolBar"));
    tools->addAction(m_openAction);
    tools->addSeparator();
    auto graphAction = [this, view, tools](const QString &text, const QKeySequence &keys, void (GraphView::*slot)(),
                                           const QString &tip) {
        QAction *a = view->addAction(text, this, [this, slot] { (currentGraphView()->*slot)(); });
        a->setShortcut(keys);
        a->setToolTip(keys.isEmpty() ? tip : QStringLiteral("%1 (%2)").arg(tip, keys.toString(QKeySequence::NativeText)));
        a->setStatusTip(tip);
        tools->addAction(a);
        return a;
    };
    graphAction(tr("Zoom &In"), QKeySequence::ZoomIn, &GraphView::zoomIn, tr("Zoom in on the graph in view"));
    graphAction(tr("Zoom &Out"), QKeySequence::ZoomOut, &GraphView::zoomOut, tr("Zoom out of the graph in view"));
    graphAction(tr("&Fit Graph"), QKeySequence(Qt::CTRL | Qt::Key_0), &GraphView::fitToView,
                tr("Show the whole graph (F in the graph)"));
    view->addSeparator();
    tools->addSeparator();
    graphAction(tr("&Expand All Modules"), QKeySequence(), &GraphView::expandAll,
                tr("Open every module: draw every node (double-click a box opens one)"));
    graphAction(tr("&Collapse All Modules"), QKeySequence(), &GraphView::collapseAll,
                tr("Close every module: one box per top-level module"));
    m_heatAction = view->addAction(tr("Measured Time &Heat"));
    m_heatAction->setCheckable(true);
    m_heatAction->setChecked(QSettings().value(kHeatKey, true).toBool());
    m_heatAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    m_heatAction->setToolTip(tr("Colour nodes by measured time (profiled files)"));
    m_heatAction->setObjectName(QStringLiteral("actionHeat"));
    tools->addAction(m_heatAction);
    tools->addAction(m_exportAction);
    connect(m_heatAction, &QAction::toggled, this, [this](bool on) {
        QSettings().setValue(kHeatKey, on);
        for (GraphView *g : {m_capturedView, m_fusedView, m_stageView})
            g->setHeatEnabled(on);
    });
    view->addSeparator();
    for (QDockWidget *dock : m_docks)
        view->addAction(dock->toggleViewAction());

    QMenu *go = menuBar()->addMenu(tr("&Go"));
    go->addAction(m_navigator->previousAction());
    go->addAction(m_navigator->nextAction());

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *about = help->addAction(tr("&About Fusescope"), this, &MainWindow::showAbout);
    about->setObjectName(QStringLiteral("actionAbout"));
}

void MainWindow::connectSelection()
{
    connect(m_capturedView, &GraphView::nodeSelected, this, &MainWindow::onCapturedNodeSelected);
    connect(m_fusedView, &GraphView::nodeSelected, this, &MainWindow::onFusedNodeSelected);
    connect(m_stageView, &GraphView::nodeSelected, this, &MainWindow::onStageNodeSelected);
    for (GraphView *g : {m_capturedView, m_fusedView, m_stageView}) {
        connect(g, &GraphView::moduleSelected, this, [this, g](const QString &module, const QList<int> &members) {
            m_inspector->showModule(m_document, g->stage(), module, members);
        });
        connect(g, &GraphView::kernelActivated, this, [this](const QString &kernel) {
            m_codeView->selectKernel(kernel);
            m_docks[1]->raise();
        });
    }
    connect(m_navigator, &StageNavigator::stageSelected, this, &MainWindow::showStage);
    connect(m_navigator, &StageNavigator::decisionActivated, this, &MainWindow::onDecisionActivated);
    connect(m_codeView, &CodeView::kernelSelected, this, &MainWindow::onKernelSelected);
    connect(m_inspector, &Inspector::nodeActivated, this, &MainWindow::goToNode);
    connect(m_timeline, &TimelineView::eventSelected, this, &MainWindow::onTimelineEventSelected);
    connect(m_timeline, &TimelineView::rangeSelected, this, &MainWindow::showRangeStatistics);
    connect(m_statsView, &StatsView::eventsRequested, this, [this](const QString &name) {
        showTimelineRun(false); // the statistics are the shown run's
        showEvents(name);
    });
    connect(m_statsView, &StatsView::nodeRequested, this, [this](int nodeId) { goToNode(captureStage(), nodeId); });
    connect(m_hintsView, &HintsView::evidenceSelected, this, &MainWindow::showEvidence);
    connectAnalysisViews();
}

void MainWindow::disconnectViews()
{
    // The views die with the children, after this object is no longer a
    // MainWindow: what they emit on the way out must not reach its slots.
    for (QObject *view : std::initializer_list<QObject *>{m_capturedView, m_fusedView, m_stageView, m_navigator,
                                                          m_codeView, m_inspector, m_loader, m_timeline,
                                                          m_statsView, m_hintsView, m_memoryView, m_compareView,
                                                          m_sqlConsole, m_compareLoader, m_rangeStats})
        disconnect(view, nullptr, this, nullptr);
}

void MainWindow::setDocument(std::shared_ptr<const Document> document)
{
    m_document = std::move(document);
    m_inspector->clear();
    const QString name = QFileInfo(QString::fromStdString(m_document->path)).fileName();
    setWindowTitle(tr("%1 — Fusescope").arg(name));
    const int capture = captureStage();
    const int fuse = fuseStage();
    const QString noGraph = tr("%1 holds no compile stages, so no graph: record one with 'fusescope profile MODEL "
                               "--compile'. Its events are on the Timeline tab.").arg(name);
    if (capture >= 0)
        m_capturedView->setStage(m_document, capture);
    else
        m_capturedView->clear(m_document->hasGraphs() ? tr("%1 holds no captured graph").arg(name) : noGraph);
    if (fuse >= 0)
        m_fusedView->setStage(m_document, fuse);
    else if (!m_document->complete)
        m_fusedView->clear(tr("Compiling %1… the fused graph appears when the compile is done").arg(name));
    else
        m_fusedView->clear(m_document->hasGraphs() ? tr("%1 holds no fuse stage: the compile stopped before fusion").arg(name)
                                                   : noGraph);
    if (!m_document->hasGraphs())
        m_stageView->clear(noGraph);
    showTimeline();
    m_navigator->setDocument(m_document);
    m_codeView->setDocument(m_document);
    if (m_document->complete) { // the statistics and hints of a preview would only be replaced
        m_statsView->setDocument(m_document);
        m_hintsView->setDocument(m_document);
        showAnalysisViews();
    }
    m_exportAction->setEnabled(true);
    if (m_stack->currentWidget() != m_tabs || m_document->complete == false)
        m_tabs->setCurrentIndex(m_document->hasGraphs() ? GraphsTab : TimelineTab);
    m_stack->setCurrentWidget(m_tabs);
    statusBar()->showMessage(m_document->complete ? tr("Opened %1: %2").arg(name, QString::fromStdString(m_document->title))
                                                  : tr("Opening %1: the captured graph, while the rest loads").arg(name));
    for (const std::string &note : m_document->notes)
        statusBar()->showMessage(QString::fromStdString(note), 10000);
    if (m_document->complete)
        emit documentShown();
}

// The run's events, when the file has run anything (an ONNX model has not).
void MainWindow::showTimeline()
{
    fillTimelineRuns();
    if (m_document->trace && m_document->trace.get() == m_timeline->model().trace())
        return; // a preview completed: the same events, keep the user's view
    if (m_document->trace && !m_document->trace->runs.empty())
        m_timeline->setTrace(m_document->trace, 0);
    else
        m_timeline->setTrace(nullptr, 0);
    m_tabs->setTabEnabled(TimelineTab, m_document->trace != nullptr);
}

void MainWindow::showRangeStatistics(int64_t t0, int64_t t1)
{
    // Computed once, for the status bar's top names and the Range table both.
    std::vector<RangeStatRow> rows = timelineRangeStats(m_timeline->model(), t0, t1);
    QStringList top;
    for (size_t i = 0; i < rows.size() && i < 3; ++i)
        top << QStringLiteral("%1 ×%2 %3 %").arg(QString::fromStdString(rows[i].name)).arg(rows[i].count)
                   .arg(rows[i].percent, 0, 'f', 1);
    statusBar()->showMessage(tr("Range %1: %2").arg(formatDuration(double(t1 - t0)), top.join(QStringLiteral(", "))));
    m_rangeStats->showRows(std::move(rows), t0, t1);
    m_docks[6]->raise();
}

// A hint's evidence: its events framed on the timeline, its nodes lit in the captured graph.
void MainWindow::showEvidence(const std::vector<profiler::EventId> &events, const std::vector<int> &nodes)
{
    const profiler::Trace *trace = m_document ? m_document->trace.get() : nullptr;
    if (trace && !events.empty()) {
        showTimelineRun(false); // the hints are the shown run's
        const profiler::Run &run = trace->runs.front();
        int64_t t0 = std::numeric_limits<int64_t>::max(), t1 = std::numeric_limits<int64_t>::min();
        for (profiler::EventId id : events) {
            t0 = std::min(t0, run.event(id).start);
            t1 = std::max(t1, run.event(id).end());
        }
        m_tabs->setCurrentIndex(TimelineTab);
        m_timeline->zoomToRange(t0, std::max(t1, t0 + 1));
        m_timeline->selectEvent(events.front());
        m_inspector->showTraceEvent(m_document, 0, events.front());
    }
    if (!nodes.empty() && m_capturedView->graph()) {
        m_capturedView->highlightNodes(nodes);
        if (events.empty())
            m_tabs->setCurrentIndex(GraphsTab);
    }
}

int MainWindow::captureStage() const
{
    return m_document ? m_document->stageIndex("capture") : -1;
}

int MainWindow::fuseStage() const
{
    return m_document ? m_document->stageIndex("fuse") : -1;
}

void MainWindow::showStage(int index)
{
    if (!m_document || index < 0 || size_t(index) >= m_document->stages.size())
        return;
    const compiler::CompileStage &stage = m_document->stages[size_t(index)];
    std::unordered_map<int, ItemMark> marks;
    if (index > 0 && m_document->stages[size_t(index) - 1].segment == stage.segment) {
        const GraphDiff diff = diffGraphs(*m_document->graphs[size_t(index) - 1], *m_document->graphs[size_t(index)]);
        for (int id : diff.added)
            marks[id] = ItemMark::Added;
        for (const NodeChange &c : diff.changed)
            marks[c.id] = ItemMark::Changed;
    }
    m_stageView->setTitle(tr("Stage %1: %2").arg(index).arg(QString::fromStdString(stage.name)));
    m_stageView->setStage(m_document, index, std::move(marks));
    if (m_tabs->currentIndex() != 1 && m_navigator->hasFocus())
        m_tabs->setCurrentIndex(StageTab);
}

void MainWindow::onCapturedNodeSelected(int nodeId)
{
    if (nodeId < 0)
        return;
    m_inspector->showNode(m_document, captureStage(), nodeId);
    const StageGraph *fused = m_fusedView->graph();
    if (!fused)
        return;
    const std::vector<int> lit = kernelMates(*fused, fused->nodesWithOrigins({nodeId}));
    m_fusedView->highlightNodes(lit);
    m_capturedView->highlightNodes({});
    followCapturedNode(nodeId);
}

void MainWindow::onFusedNodeSelected(int nodeId)
{
    if (nodeId < 0)
        return;
    m_inspector->showNode(m_document, fuseStage(), nodeId);
    const StageGraph *fused = m_fusedView->graph();
    if (!fused)
        return;
    const std::vector<int> mates = kernelMates(*fused, {nodeId});
    m_capturedView->highlightNodes(fused->originsOf(mates));
    m_fusedView->highlightNodes({});
    if (const GraphNode *n = fused->find(nodeId); n && !n->kernel.empty()) {
        m_codeView->selectKernel(QString::fromStdString(n->kernel));
        followKernel(QString::fromStdString(n->kernel));
    }
}

void MainWindow::onStageNodeSelected(int nodeId)
{
    if (nodeId >= 0)
        m_inspector->showNode(m_document, m_stageView->stage(), nodeId);
}

void MainWindow::onKernelSelected(const QString &kernel, const QList<int> &nodeIds)
{
    const std::vector<int> ids(nodeIds.begin(), nodeIds.end());
    m_fusedView->highlightNodes(ids);
    if (const StageGraph *fused = m_fusedView->graph())
        m_capturedView->highlightNodes(fused->originsOf(ids));
    statusBar()->showMessage(tr("Kernel %1: %n node(s)", nullptr, int(ids.size())).arg(kernel), 5000);
    followKernel(kernel);
}

void MainWindow::onDecisionActivated(const QStringList &nodeNames)
{
    const StageGraph *graph = m_stageView->graph() ? m_stageView->graph() : m_fusedView->graph();
    if (!graph)
        return;
    std::vector<int> ids;
    for (const QString &name : nodeNames) {
        if (const GraphNode *n = graph->findByName(name.toStdString()))
            ids.push_back(n->id);
    }
    m_stageView->highlightNodes(ids);
    m_tabs->setCurrentIndex(StageTab);
}

void MainWindow::goToNode(int stage, int nodeId)
{
    GraphView *target = stage == captureStage() ? m_capturedView : stage == fuseStage() ? m_fusedView : m_stageView;
    if (target == m_stageView && m_stageView->stage() != stage)
        m_navigator->selectStage(stage);
    m_tabs->setCurrentIndex(target == m_stageView ? 1 : 0);
    target->selectNode(nodeId);
    m_inspector->showNode(m_document, stage, nodeId);
}

GraphView *MainWindow::currentGraphView() const
{
    if (m_tabs->currentIndex() == 1)
        return m_stageView;
    return m_fusedView->hasFocus() || m_fusedView->isAncestorOf(focusWidget()) ? m_fusedView : m_capturedView;
}

void MainWindow::exportCurrentGraph()
{
    GraphView *view = currentGraphView();
    if (!view->graph()) {
        QMessageBox::information(this, tr("Export graph"), tr("There is no graph to export yet."));
        return;
    }
    const QString suggested = QStringLiteral("%1-%2.png")
                                  .arg(QFileInfo(QString::fromStdString(m_document->path)).completeBaseName(),
                                       QString::fromStdString(view->graph()->stageName));
    const QString path = chooseExportFile(suggested);
    if (path.isEmpty())
        return;
    QString error;
    if (!exportGraph(*view, path, &error)) {
        QMessageBox::warning(this, tr("Export graph"), error);
        return;
    }
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
}

} // namespace fusescope
