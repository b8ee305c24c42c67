#pragma once

#include "app/documentloader.h"
#include "app/recentfiles.h"
#include "views/document.h"

#include <QFutureWatcher>
#include <QMainWindow>

class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTabWidget;

namespace fusescope {

class CodeView;
class CompareView;
class EmptyStateWidget;
class GraphView;
class Inspector;
class HintsView;
class MemoryView;
class RangeStatsView;
class SqlConsole;
class StageNavigator;
class StatsView;
class TimelineView;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    // The tabs of the central area, in order.
    enum CentralTab { GraphsTab, StageTab, TimelineTab, MemoryTab, CompareTab };

    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Loads in a worker; several files load one after another (the last one
    // that loads stays shown), except Kineto traces, which open together as
    // the ranks of one run.
    void openFiles(const QStringList &paths);
    void openFile(const QString &path);
    // Loads `path` in a worker and compares its run (as the first side) with
    // the shown one in the Compare tab.
    void compareWith(const QString &path);
    // Shows a document loaded elsewhere (headless --screenshot).
    void setDocument(std::shared_ptr<const Document> document);
    std::shared_ptr<const Document> document() const { return m_document; }
    bool isLoading() const { return m_loader->isLoading(); }
    void cancelLoading();

    // Renders every view to DIR/<view>.png (for --screenshot); returns the
    // paths written, or sets *error.
    QStringList renderViews(const QString &dir, QString *error);

    QAction *openAction() const { return m_openAction; }
    QMenu *recentMenu() const { return m_recentMenu; }
    EmptyStateWidget *emptyState() const { return m_emptyState; }
    GraphView *capturedView() const { return m_capturedView; }
    GraphView *fusedView() const { return m_fusedView; }
    GraphView *stageView() const { return m_stageView; }
    StageNavigator *stageNavigator() const { return m_navigator; }
    CodeView *codeView() const { return m_codeView; }
    Inspector *inspector() const { return m_inspector; }
    TimelineView *timeline() const { return m_timeline; }
    QComboBox *timelineRunChooser() const { return m_timelineRuns; }
    StatsView *statsView() const { return m_statsView; }
    HintsView *hintsView() const { return m_hintsView; }
    MemoryView *memoryView() const { return m_memoryView; }
    CompareView *compareView() const { return m_compareView; }
    SqlConsole *sqlConsole() const { return m_sqlConsole; }
    RangeStatsView *rangeStatsView() const { return m_rangeStats; }
    QTabWidget *graphTabs() const { return m_tabs; }

signals:
    void openFailed(const QString &path, const QString &reason);
    void documentShown();

public slots:
    void showOpenDialog();
    void exportCurrentGraph();
    // Records the zoo encoder eager and compiled (as `fusescope demo`) and opens it.
    void runDemo();

protected:
    // The file chooser; a seam so tests drive File > Open without a modal dialog.
    virtual QStringList chooseFilesToOpen();
    virtual QString chooseFileToCompare();
    virtual QString chooseExportFile(const QString &suggestedName);
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createViews();
    void createAnalysisViews();
    void createDocks();
    void createCompareAction(QMenu *file);
    void connectAnalysisViews();
    void showAnalysisViews();
    void showEvents(const QString &name);
    QWidget *createTimelinePage();
    void fillTimelineRuns();
    // The document whose run the timeline shows: the shown one, or its baseline.
    std::shared_ptr<const Document> timelineDocument() const;
    void showTimelineRun(bool baseline);
    void createActions();
    void createViewMenu();
    void createStatusBar();
    void connectSelection();
    void disconnectViews();
    void rebuildRecentMenu();
    void showAbout();
    void startNextLoad();
    void onLoaded(std::shared_ptr<const Document> document);
    void onLoadFailed(const QString &path, const QString &reason);
    void reportOpenFailure(const QString &path, const QString &reason);
    void showStage(int index);
    void showTimeline();
    bool renderGraphViews(const QString &dir, QStringList &written, QString *error);
    bool renderTimeline(const QString &dir, QStringList &written, QString *error);
    bool renderAnalysisViews(const QString &dir, QStringList &written, QString *error);
    bool renderSqlConsole(const QString &dir, QStringList &written, QString *error);
    void showRangeStatistics(int64_t t0, int64_t t1);
    void showEvidence(const std::vector<profiler::EventId> &events, const std::vector<int> &nodes);
    void onTimelineEventSelected(int run, profiler::EventId id);
    void followKernel(const QString &kernel);
    void followCapturedNode(int nodeId);
    void onCapturedNodeSelected(int nodeId);
    void onFusedNodeSelected(int nodeId);
    void onStageNodeSelected(int nodeId);
    void onKernelSelected(const QString &kernel, const QList<int> &nodeIds);
    void onDecisionActivated(const QStringList &nodeNames);
    void goToNode(int stage, int nodeId);
    GraphView *currentGraphView() const;
    int captureStage() const;
    int fuseStage() const;
    void restoreWindowState();
    void saveWindowState();

    RecentFiles m_recent;
    DocumentLoader *m_loader = nullptr;
    QList<QStringList> m_pending; // each: one file, or the ranks of one run
    QFutureWatcher<int> *m_demo = nullptr;
    std::shared_ptr<const Document> m_document;
    bool m_following = false; // views are following a selection made elsewhere

    QStackedWidget *m_stack = nullptr;
    EmptyStateWidget *m_emptyState = nullptr;
    QTabWidget *m_tabs = nullptr;
    GraphView *m_capturedView = nullptr;
    GraphView *m_fusedView = nullptr;
    GraphView *m_stageView = nullptr;
    TimelineView *m_timeline = nullptr;
    QWidget *m_timelineRunBar = nullptr;
    QComboBox *m_timelineRuns = nullptr;
    StageNavigator *m_navigator = nullptr;
    CodeView *m_codeView = nullptr;
    Inspector *m_inspector = nullptr;
    StatsView *m_statsView = nullptr;
    HintsView *m_hintsView = nullptr;
    MemoryView *m_memoryView = nullptr;
    CompareView *m_compareView = nullptr;
    SqlConsole *m_sqlConsole = nullptr;
    RangeStatsView *m_rangeStats = nullptr;
    DocumentLoader *m_compareLoader = nullptr;
    QList<QDockWidget *> m_docks;

    QAction *m_openAction = nullptr;
    QAction *m_exportAction = nullptr;
    QAction *m_heatAction = nullptr;
    QAction *m_compareAction = nullptr;
    QMenu *m_recentMenu = nullptr;
    QWidget *m_progress = nullptr;
    QProgressBar *m_progressBar = nullptr;
    QLabel *m_progressLabel = nullptr;
    QPushButton *m_cancelButton = nullptr;
};

} // namespace fusescope
