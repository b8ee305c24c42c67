// The main window: menus, opening files (in a worker, with progress and
// Cancel), recent files, drag and drop, and what it remembers between runs.
// The document views and their cross-links are in mainwindow_views.cpp.
#include "app/mainwindow.h"

#include "app/commands.h"
#include "core/buildinfo.h"
#include "profiler/traceformat.h"
#include "views/emptystatewidget.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

namespace fusescope {

namespace {

const QString kGeometryKey = QStringLiteral("mainWindow/geometry");
const QString kStateKey = QStringLiteral("mainWindow/state");
const QString kLastDirKey = QStringLiteral("mainWindow/lastOpenDir");
const QString kLastExportDirKey = QStringLiteral("mainWindow/lastExportDir");
constexpr int kStateVersion = 3; // the Statistics and Hints docks arrived

QStringList localFiles(const QMimeData *mime)
{
    QStringList files;
    if (!mime || !mime->hasUrls())
        return files;
    for (const QUrl &url : mime->urls()) {
        if (url.isLocalFile())
            files << url.toLocalFile();
    }
    return files;
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    setWindowTitle(tr("Fusescope"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/fusescope.svg")));
    setAcceptDrops(true);
    setDockNestingEnabled(true);

    m_loader = new DocumentLoader(this);
    connect(m_loader, &DocumentLoader::previewReady, this, &MainWindow::setDocument);
    connect(m_loader, &DocumentLoader::loaded, this, &MainWindow::onLoaded);
    connect(m_loader, &DocumentLoader::failed, this, &MainWindow::onLoadFailed);
    connect(m_loader, &DocumentLoader::cancelled, this, [this] {
        m_progress->hide();
        statusBar()->showMessage(tr("Opening cancelled"), 5000);
        startNextLoad();
    });
    connect(m_loader, &DocumentLoader::progress, this, [this](int percent, const QString &what) {
        m_progressBar->setValue(percent);
        m_progressLabel->setText(what);
    });

    m_stack = new QStackedWidget(this);
    m_emptyState = new EmptyStateWidget(m_stack);
    m_emptyState->setDemoAvailable(true);
    m_stack->addWidget(m_emptyState);
    setCentralWidget(m_stack);
    connect(m_emptyState, &EmptyStateWidget::openRequested, this, &MainWindow::showOpenDialog);
    connect(m_emptyState, &EmptyStateWidget::demoRequested, this, &MainWindow::runDemo);

    createViews();
    createDocks();
    createActions();
    createViewMenu();
    createStatusBar();
    connectSelection();
    restoreWindowState();
}

MainWindow::~MainWindow()
{
    disconnectViews();
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(QIcon::fromTheme(QStringLiteral("document-open")), tr("&Open…"), this,
                                   &MainWindow::showOpenDialog);
    m_openAction->setShortcut(QKeySequence::Open);
    m_openAction->setStatusTip(tr("Open a trace or a model"));
    m_openAction->setObjectName(QStringLiteral("actionOpen"));

    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recentMenu->setObjectName(QStringLiteral("menuRecent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    rebuildRecentMenu();

    m_exportAction = file->addAction(tr("&Export Graph…"), this, &MainWindow::exportCurrentGraph);
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAction->setStatusTip(tr("Save the graph in view as DOT, SVG or PNG"));
    m_exportAction->setObjectName(QStringLiteral("actionExportGraph"));
    m_exportAction->setEnabled(false);

    createCompareAction(file);

    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setObjectName(QStringLiteral("actionQuit"));
}

void MainWindow::createStatusBar()
{
    m_progress = new QWidget(this);
    auto *layout = new QHBoxLayout(m_progress);
    layout->setContentsMargins(0, 0, 0, 0);
    m_progressLabel = new QLabel(m_progress);
    m_progressBar = new QProgressBar(m_progress);
    m_progressBar->setRange(0, 100);
    m_progressBar->setMaximumWidth(180);
    m_cancelButton = new QPushButton(tr("Cancel"), m_progress);
    m_cancelButton->setObjectName(QStringLiteral("cancelOpen"));
    m_cancelButton->setToolTip(tr("Stop opening this file"));
    connect(m_cancelButton, &QPushButton::clicked, this, &MainWindow::cancelLoading);
    layout->addWidget(m_progressLabel);
    layout->addWidget(m_progressBar);
    layout->addWidget(m_cancelButton);
    statusBar()->addPermanentWidget(m_progress);
    m_progress->hide();
    statusBar()->showMessage(tr("No file open"));
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = m_recent.files();
    for (int i = 0; i < files.size(); ++i) {
        const QString path = files.at(i);
        const QString label = QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName());
        QAction *action = m_recentMenu->addAction(label, this, [this, path] { openFile(path); });
        action->setToolTip(path);
        action->setStatusTip(path);
    }
    if (files.isEmpty()) {
        m_recentMenu->addAction(tr("No recent files"))->setEnabled(false);
        return;
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("&Clear Recent Files"), this, [this] { m_recent.clear(); });
}

void MainWindow::showOpenDialog()
{
    openFiles(chooseFilesToOpen());
}

QStringList MainWindow::chooseFilesToOpen()
{
    QSettings settings;
    const QString dir = settings.value(kLastDirKey, QDir::homePath()).toString();
    const QString filters = tr("Traces and models (*.fstrace *.json *.gz *.sqlite *.onnx);;"
                               "Fusescope traces (*.fstrace);;"
                               "PyTorch profiler / Kineto traces (*.json *.json.gz);;"
                               "Nsight Systems exports (*.sqlite);;"
                               "ONNX models (*.onnx);;All files (*)");
    const QStringList files = QFileDialog::getOpenFileNames(this, tr("Open a trace or a model"), dir, filters);
    if (!files.isEmpty())
        settings.setValue(kLastDirKey, QFileInfo(files.front()).absolutePath());
    return files;
}

QString MainWindow::chooseExportFile(const QString &suggestedName)
{
    QSettings settings;
    const QString dir = settings.value(kLastExportDirKey, QDir::homePath()).toString();
    const QString file = QFileDialog::getSaveFileName(this, tr("Export graph"), QDir(dir).filePath(suggestedName),
                                                      tr("PNG image (*.png);;SVG drawing (*.svg);;Graphviz DOT (*.dot)"));
    if (!file.isEmpty())
        settings.setValue(kLastExportDirKey, QFileInfo(file).absolutePath());
    return file;
}

void MainWindow::openFiles(const QStringList &paths)
{
    // Kineto traces opened together are the ranks of one run; anything else
    // opens one file after another.
    const bool ranks = paths.size() > 1 && std::all_of(paths.begin(), paths.end(), [](const QString &p) {
        return probeFileFormat(p.toStdString()).format == FileFormat::ChromeJson;
    });
    if (ranks)
        m_pending << paths;
    for (const QString &path : ranks ? QStringList() : paths)
        m_pending << QStringList{path};
    if (!m_loader->isLoading())
        startNextLoad();
}

void MainWindow::openFile(const QString &path)
{
    openFiles({path});
}

void MainWindow::startNextLoad()
{
    if (m_pending.isEmpty())
        return;
    const QStringList paths = m_pending.takeFirst();
    const QString shown = paths.size() > 1 ? tr("%n file(s)", nullptr, int(paths.size())) : QFileInfo(paths.front()).fileName();
    m_progressLabel->setText(tr("Opening %1").arg(shown));
    m_progressBar->setValue(0);
    m_cancelButton->show();
    m_progress->show();
    statusBar()->showMessage(tr("Opening %1…").arg(QDir::toNativeSeparators(paths.join(QStringLiteral(", ")))));
    m_loader->start(paths);
}

void MainWindow::cancelLoading()
{
    m_pending.clear();
    m_loader->cancel();
}

void MainWindow::onLoaded(std::shared_ptr<const Document> document)
{
    m_progress->hide();
    m_recent.add(QString::fromStdString(document->path));
    setDocument(std::move(document));
    startNextLoad();
}

void MainWindow::onLoadFailed(const QString &path, const QString &reason)
{
    m_progress->hide();
    reportOpenFailure(path, reason);
    startNextLoad();
}

void MainWindow::runDemo()
{
    if (m_demo && m_demo->isRunning())
        return;
    const QString dir = QDir(QStandardPaths::writableLocation(QStandardPaths::CacheLocation)).filePath(QStringLiteral("demo"));
    const QString trace = QDir(dir).filePath(QStringLiteral("demo.fstrace"));
    if (!QDir().mkpath(dir)) {
        reportOpenFailure(trace, tr("cannot create the folder %1").arg(dir));
        return;
    }
    m_progressLabel->setText(tr("Profiling the demo model (encoder, eager and compiled)…"));
    m_progressBar->setRange(0, 0);
    m_cancelButton->hide(); // a recording runs to its end: it takes seconds
    m_progress->show();
    m_emptyState->setDemoAvailable(false, tr("The demo is being recorded"));
    if (!m_demo) {
        m_demo = new QFutureWatcher<int>(this);
        connect(m_demo, &QFutureWatcher<int>::finished, this, [this, trace] {
            m_progressBar->setRange(0, 100);
            m_progress->hide();
            m_emptyState->setDemoAvailable(true);
            if (m_demo->result() == 0)
                openFile(trace);
            else
                reportOpenFailure(trace, tr("recording the demo failed (fusescope profile exit code %1)").arg(m_demo->result()));
        });
    }
    // The same code path as `fusescope demo`.
    m_demo->setFuture(QtConcurrent::run([trace] { return recordDemo(trace); }));
}

void MainWindow::reportOpenFailure(const QString &path, const QString &reason)
{
    statusBar()->showMessage(tr("Could not open %1").arg(QFileInfo(path).fileName()));
    // Non-blocking, so a batch of dropped files reports each failure and tests
    // can inspect the box without a nested event loop.
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Cannot open file"),
                                tr("Cannot open %1").arg(QDir::toNativeSeparators(path)), QMessageBox::Ok, this);
    box->setInformativeText(reason);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("openErrorBox"));
    box->open();
    emit openFailed(path, reason);
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Fusescope"),
                       tr("<h3>Fusescope %1</h3>"
                          "<p>A profiler and compiler-graph visualizer for deep-learning models.</p>"
                          "<p>Optional features of this build: %2</p>")
                           .arg(QString::fromStdString(versionString()), QString::fromStdString(featureLine())));
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveWindowState();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (!localFiles(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    const QStringList files = localFiles(event->mimeData());
    if (files.isEmpty())
        return;
    event->acceptProposedAction();
    openFiles(files);
}

void MainWindow::restoreWindowState()
{
    QSettings settings;
    if (!restoreGeometry(settings.value(kGeometryKey).toByteArray()))
        resize(1280, 800);
    restoreState(settings.value(kStateKey).toByteArray(), kStateVersion);
}

void MainWindow::saveWindowState()
{
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState(kStateVersion));
}

} // namespace fusescope
