// The analysis views of the main window: the Memory and Compare tabs, the
// SQL console and Range docks, File ▸ Compare With…, and the Timeline tab's
// choice of run (the eager run of a --compare file beside the shown one).
#include "app/mainwindow.h"

#include "views/compareview.h"
#include "views/inspector.h"
#include "views/memoryview.h"
#include "views/rangestatsview.h"
#include "views/sqlconsole.h"
#include "views/timelineview.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QVBoxLayout>

namespace fusescope {

namespace {

const QString kCompareDirKey = QStringLiteral("paths/lastCompareDir");

} // namespace

void MainWindow::createAnalysisViews()
{
    m_memoryView = new MemoryView(this);
    m_memoryView->setObjectName(QStringLiteral("memory"));
    m_compareView = new CompareView(this);
    m_compareView->setObjectName(QStringLiteral("compare"));
    m_tabs->insertTab(MemoryTab, m_memoryView, tr("Memory"));
    m_tabs->insertTab(CompareTab, m_compareView, tr("Compare"));
    m_tabs->setTabToolTip(MemoryTab, tr("Allocated and reserved memory over time with the peak; click a moment to "
                                        "list the allocations live then"));
    m_tabs->setTabToolTip(CompareTab, tr("Two runs side by side (eager against compiled, or File ▸ Compare With…): "
                                         "per graph node, op and kernel, the change in time and calls"));
    m_sqlConsole = new SqlConsole(this);
    m_sqlConsole->setObjectName(QStringLiteral("sqlConsole"));
    m_rangeStats = new RangeStatsView(this);
    m_rangeStats->setObjectName(QStringLiteral("rangeStats"));
}

void MainWindow::createCompareAction(QMenu *file)
{
    m_compareAction = file->addAction(tr("&Compare With…"), this, [this] {
        const QString path = chooseFileToCompare();
        if (!path.isEmpty())
            compareWith(path);
    });
    m_compareAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_compareAction->setStatusTip(tr("Set another file's run against the shown one in the Compare tab"));
    m_compareAction->setObjectName(QStringLiteral("actionCompareWith"));
    m_compareAction->setEnabled(false);

    m_compareLoader = new DocumentLoader(this);
    connect(m_compareLoader, &DocumentLoader::loaded, this, [this](std::shared_ptr<const Document> base) {
        if (!m_document)
            return;
        m_compareView->setRuns(base, m_document);
        m_tabs->setCurrentIndex(CompareTab);
        statusBar()->showMessage(tr("Comparing %1 with the shown run").arg(QString::fromStdString(base->title)), 5000);
    });
    connect(m_compareLoader, &DocumentLoader::failed, this, &MainWindow::reportOpenFailure);
    connect(m_compareLoader, &DocumentLoader::progress, this, [this](int percent, const QString &what) {
        statusBar()->showMessage(tr("Loading the file to compare: %1 (%2 %)").arg(what).arg(percent));
    });
}

QString MainWindow::chooseFileToCompare()
{
    QSettings settings;
    const QString dir = settings.value(kCompareDirKey, QDir::homePath()).toString();
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Compare the shown run with"), dir,
        tr("Traces (*.fstrace *.json *.gz *.sqlite);;All files (*)"));
    if (!file.isEmpty())
        settings.setValue(kCompareDirKey, QFileInfo(file).absolutePath());
    return file;
}

void MainWindow::compareWith(const QString &path)
{
    if (!m_document || !m_document->trace) {
        QMessageBox::information(this, tr("Compare"), tr("Open a trace first: the file chosen is compared with its run."));
        return;
    }
    statusBar()->showMessage(tr("Loading %1 to compare…").arg(QDir::toNativeSeparators(path)));
    m_compareLoader->start(path);
}

void MainWindow::connectAnalysisViews()
{
    connect(m_compareView, &CompareView::eventsRequested, this, [this](const QString &name) {
        showTimelineRun(false); // the rows it sends are the shown run's
        showEvents(name);
    });
    connect(m_compareView, &CompareView::nodeRequested, this, [this](int nodeId) { goToNode(captureStage(), nodeId); });
    connect(m_memoryView, &MemoryView::eventRequested, this, [this](quint32 id) {
        // A damaged file may name an op that is not there.
        if (!m_document || !m_document->trace || id >= m_document->trace->runs.front().events.size())
            return;
        showTimelineRun(false); // the Memory tab is the shown run's
        const profiler::EventId event{id};
        const profiler::Event &e = m_document->trace->runs.front().event(event);
        m_tabs->setCurrentIndex(TimelineTab);
        m_timeline->zoomToRange(e.start, e.end() + std::max<int64_t>(1, e.duration));
        m_timeline->selectEvent(event);
        m_inspector->showTraceEvent(m_document, 0, event);
    });
    connect(m_rangeStats, &RangeStatsView::eventsRequested, this, &MainWindow::showEvents);
    connect(m_memoryView, &MemoryView::timeRangeRequested, this, [this](qint64 t0, qint64 t1) {
        showTimelineRun(false);
        m_tabs->setCurrentIndex(TimelineTab);
        m_timeline->zoomToRange(t0, std::max(t1, t0 + 1));
    });
}

// The rows of a statistics or comparison table, found on the timeline.
void MainWindow::showEvents(const QString &name)
{
    m_tabs->setCurrentIndex(TimelineTab);
    if (m_timeline->find(name) > 0)
        m_timeline->findNext();
}

void MainWindow::showAnalysisViews()
{
    m_memoryView->setDocument(m_document);
    m_compareView->setDocument(m_document);
    m_sqlConsole->setDocument(m_document);
    m_rangeStats->clear();
    m_tabs->setTabEnabled(MemoryTab, m_document->trace != nullptr);
    m_compareAction->setEnabled(m_document->trace != nullptr);
}

// The Timeline tab: the run's tracks under a run chooser, shown when the
// file holds a second run to look at (the eager run of a --compare file).
QWidget *MainWindow::createTimelinePage()
{
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    m_timelineRunBar = new QWidget(page);
    auto *bar = new QHBoxLayout(m_timelineRunBar);
    bar->setContentsMargins(4, 2, 4, 0);
    bar->addWidget(new QLabel(tr("Run:"), m_timelineRunBar));
    m_timelineRuns = new QComboBox(m_timelineRunBar);
    m_timelineRuns->setObjectName(QStringLiteral("timelineRun"));
    m_timelineRuns->setToolTip(tr("Which run of the file the timeline shows; the statistics, hints, memory and graphs "
                                  "stay the shown run's"));
    bar->addWidget(m_timelineRuns);
    bar->addStretch();
    connect(m_timelineRuns, &QComboBox::activated, this, [this](int index) { showTimelineRun(index == 1); });
    layout->addWidget(m_timelineRunBar);
    layout->addWidget(m_timeline);
    m_timelineRunBar->hide();
    return page;
}

void MainWindow::fillTimelineRuns()
{
    const QSignalBlocker blocker(m_timelineRuns);
    m_timelineRuns->clear();
    if (m_document->baseline && m_document->baseline->trace) {
        m_timelineRuns->addItem(QString::fromStdString(m_document->title));
        m_timelineRuns->addItem(QString::fromStdString(m_document->baseline->title));
    }
    m_timelineRunBar->setVisible(m_timelineRuns->count() > 1);
}

std::shared_ptr<const Document> MainWindow::timelineDocument() const
{
    const bool baseline = m_document && m_document->baseline && m_document->baseline->trace &&
                          m_timeline->model().trace() == m_document->baseline->trace.get();
    return baseline ? m_document->baseline : m_document;
}

void MainWindow::showTimelineRun(bool baseline)
{
    if (!m_document || (baseline && !(m_document->baseline && m_document->baseline->trace)))
        return;
    const std::shared_ptr<const Document> doc = baseline ? m_document->baseline : m_document;
    if (!doc->trace || doc->trace.get() == m_timeline->model().trace())
        return;
    m_timeline->setTrace(doc->trace, 0);
    m_rangeStats->clear();
    const QSignalBlocker blocker(m_timelineRuns);
    m_timelineRuns->setCurrentIndex(baseline ? 1 : 0);
}

} // namespace fusescope
