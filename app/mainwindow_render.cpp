// Headless rendering of every view to PNG (--screenshot, demo --headless):
// the window is driven as a user would — a hot node selected, the fuse stage
// stepped to, a kernel opened — so the pictures show the views at work.
#include "app/mainwindow.h"

#include "views/codeview.h"
#include "views/compareview.h"
#include "views/graphview.h"
#include "views/hintsview.h"
#include "views/inspector.h"
#include "views/memoryview.h"
#include "views/sqlconsole.h"
#include "views/stagenavigator.h"
#include "views/statsview.h"
#include "views/timelineview.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QDockWidget>
#include <QTabWidget>
#include <QThread>

#include <algorithm>
#include <functional>

namespace fusescope {
namespace {

constexpr int kLayoutWaitMs = 120000;
constexpr int kWorkerWaitMs = 30000;

// Runs the event loop until `done` or `ms` have passed; sleeps between
// rounds, so waiting does not take the core the awaited worker needs.
bool waitUntil(const std::function<bool()> &done, int ms)
{
    QDeadlineTimer deadline(ms);
    while (!done() && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(5);
    }
    QCoreApplication::processEvents();
    return done();
}

bool waitForLayouts(std::initializer_list<GraphView *> views)
{
    return waitUntil([&views] {
        return std::none_of(views.begin(), views.end(), [](GraphView *v) { return v->isLayoutRunning(); });
    }, kLayoutWaitMs);
}

// The node worth pointing at: the one with the most measured time, else the
// first GEMM or convolution, else the first op.
int interestingNode(const Document &doc, const StageGraph &graph)
{
    int best = -1;
    double bestTime = -1;
    for (const GraphNode &n : graph.nodes) {
        if (!n.isOp() || n.view)
            continue;
        const auto it = doc.nodeTimeNs.find(n.id);
        const bool gemm = n.target.find("mm") != std::string::npos || n.target.find("conv") != std::string::npos ||
                          n.target.find("linear") != std::string::npos;
        const double score = it != doc.nodeTimeNs.end() ? it->second : gemm ? 0.5 : 0.0;
        if (score > bestTime) {
            best = n.id;
            bestTime = score;
        }
    }
    return best;
}

// The kernel worth reading: the one with the most measured time, else the
// first generated (non-extern) one.
QString interestingKernel(const Document &doc, const StageGraph &fused)
{
    QString best;
    double bestTime = -1;
    for (const GraphKernel &k : fused.kernels) {
        const auto it = doc.kernelTimeNs.find(k.name);
        const double score = it != doc.kernelTimeNs.end() ? it->second : k.kind == "extern" ? 0.0 : 0.5;
        if (score > bestTime) {
            best = QString::fromStdString(k.name);
            bestTime = score;
        }
    }
    return best;
}

bool save(QWidget *widget, const QString &path, QStringList &written, QString *error)
{
    if (!widget->grab().save(path)) {
        *error = QObject::tr("cannot write %1").arg(path);
        return false;
    }
    written << path;
    return true;
}

} // namespace

QStringList MainWindow::renderViews(const QString &dir, QString *error)
{
    QStringList written;
    ensurePolished();
    show();
    QCoreApplication::processEvents();
    if (!m_document) {
        save(this, QDir(dir).filePath(QStringLiteral("mainwindow.png")), written, error);
        return written;
    }
    if (m_document->hasGraphs() && !renderGraphViews(dir, written, error))
        return {};
    if (m_document->trace && (!renderTimeline(dir, written, error) || !renderAnalysisViews(dir, written, error)))
        return {};
    return written;
}

bool MainWindow::renderGraphViews(const QString &dir, QStringList &written, QString *error)
{
    if (!waitForLayouts({m_capturedView, m_fusedView})) {
        *error = tr("laying out the graphs of %1 took longer than %2 s").arg(QString::fromStdString(m_document->path)).arg(kLayoutWaitMs / 1000);
        return false;
    }
    m_tabs->setCurrentIndex(GraphsTab);
    if (const StageGraph *captured = m_capturedView->graph()) {
        const int node = interestingNode(*m_document, *captured);
        if (node >= 0) {
            m_capturedView->selectNode(node);
            emit m_capturedView->nodeSelected(node);
        }
    }
    // The graphs get the whole window while they are photographed.
    for (QDockWidget *dock : m_docks)
        dock->hide();
    QCoreApplication::processEvents();
    const bool graphsSaved = save(m_capturedView, QDir(dir).filePath(QStringLiteral("graph-captured.png")), written, error) &&
                             save(m_fusedView, QDir(dir).filePath(QStringLiteral("graph-fused.png")), written, error);
    for (QDockWidget *dock : m_docks)
        dock->show();
    if (!graphsSaved)
        return false;
    if (const StageGraph *fused = m_fusedView->graph())
        m_codeView->selectKernel(interestingKernel(*m_document, *fused));
    const int fuse = m_document->stageIndex("fuse");
    m_navigator->selectStage(fuse >= 0 ? fuse : 0);
    m_tabs->setCurrentIndex(StageTab);
    waitForLayouts({m_stageView});
    QCoreApplication::processEvents();
    if (!save(this, QDir(dir).filePath(QStringLiteral("stages.png")), written, error))
        return false;
    // The code gets room to be read while it is photographed.
    resizeDocks({m_docks[1]}, {height() / 2}, Qt::Vertical);
    QCoreApplication::processEvents();
    const bool codeSaved = save(m_codeView, QDir(dir).filePath(QStringLiteral("code.png")), written, error);
    resizeDocks({m_docks[1]}, {240}, Qt::Vertical);
    return codeSaved;
}

// The whole run, with its longest kernel (else longest event) selected so
// the Inspector shows it.
bool MainWindow::renderTimeline(const QString &dir, QStringList &written, QString *error)
{
    m_tabs->setCurrentIndex(TimelineTab);
    const profiler::Run &run = m_document->trace->runs.front();
    profiler::EventId longest;
    auto better = [&run, &longest](uint32_t i) {
        if (!longest.valid())
            return true;
        const profiler::Event &a = run.events[i], &b = run.events[longest.value];
        const bool ak = a.kind == profiler::EventKind::Kernel, bk = b.kind == profiler::EventKind::Kernel;
        return ak != bk ? ak : a.duration > b.duration;
    };
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        if (better(i))
            longest = profiler::EventId{i};
    }
    if (longest.valid()) {
        m_timeline->selectEvent(longest);
        m_inspector->showTraceEvent(m_document, 0, longest);
    }
    m_timeline->resetZoom();
    m_docks[4]->raise(); // the hints, beside the run they are about
    QCoreApplication::processEvents();
    if (!save(this, QDir(dir).filePath(QStringLiteral("timeline.png")), written, error))
        return false;
    // The tables get room to be read while they are photographed.
    resizeDocks({m_docks[3]}, {height() / 2}, Qt::Vertical);
    m_docks[3]->raise();
    QCoreApplication::processEvents();
    const bool stats = save(m_statsView, QDir(dir).filePath(QStringLiteral("stats.png")), written, error);
    m_docks[4]->raise();
    QCoreApplication::processEvents();
    const bool hints = stats && save(m_hintsView, QDir(dir).filePath(QStringLiteral("hints.png")), written, error);
    resizeDocks({m_docks[3]}, {240}, Qt::Vertical);
    return hints;
}

// sql.png: the console's first example (the kernels by total time) run on the file.
bool MainWindow::renderSqlConsole(const QString &dir, QStringList &written, QString *error)
{
    const QStringList examples = m_sqlConsole->exampleQueries();
    if (m_sqlConsole->isEmptyStateShown() || examples.isEmpty())
        return true;
    m_docks[5]->raise();
    resizeDocks({m_docks[5]}, {height() / 2}, Qt::Vertical);
    bool finished = false;
    const QMetaObject::Connection done =
        connect(m_sqlConsole, &SqlConsole::queryFinished, this, [&finished] { finished = true; });
    m_sqlConsole->setQuery(examples.front());
    m_sqlConsole->runQuery();
    waitUntil([&finished] { return finished; }, kWorkerWaitMs);
    disconnect(done);
    if (!finished) {
        *error = tr("the SQL example on %1 took longer than %2 s")
                     .arg(QString::fromStdString(m_document->path))
                     .arg(kWorkerWaitMs / 1000);
        return false;
    }
    QCoreApplication::processEvents();
    const bool saved = save(m_sqlConsole, QDir(dir).filePath(QStringLiteral("sql.png")), written, error);
    resizeDocks({m_docks[5]}, {240}, Qt::Vertical);
    return saved;
}

// memory.png with the live allocations at the peak, compare.png when the
// file holds two runs to compare.
bool MainWindow::renderAnalysisViews(const QString &dir, QStringList &written, QString *error)
{
    m_tabs->setCurrentIndex(MemoryTab);
    if (m_document->stats) {
        for (const profiler::MemoryStats &m : m_document->stats->memory) {
            if (m.peakAllocated > 0) {
                m_memoryView->setDevice(m.device);
                m_memoryView->selectTime(m.peakAllocatedTime);
                break;
            }
        }
    }
    QCoreApplication::processEvents();
    if (!save(m_memoryView, QDir(dir).filePath(QStringLiteral("memory.png")), written, error) ||
        !renderSqlConsole(dir, written, error))
        return false;
    if (!m_document->baseline)
        return true;
    m_tabs->setCurrentIndex(CompareTab);
    if (!waitUntil([this] { return !m_compareView->isBusy(); }, kWorkerWaitMs)) {
        *error = tr("comparing the runs of %1 took longer than %2 s")
                     .arg(QString::fromStdString(m_document->path))
                     .arg(kWorkerWaitMs / 1000);
        return false;
    }
    return save(m_compareView, QDir(dir).filePath(QStringLiteral("compare.png")), written, error);
}

} // namespace fusescope
