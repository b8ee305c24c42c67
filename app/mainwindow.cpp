#include "app/mainwindow.h"

#include "core/buildinfo.h"
#include "views/emptystatewidget.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>

namespace fusescope {
namespace {

const QString kGeometryKey = QStringLiteral("mainWindow/geometry");
const QString kStateKey = QStringLiteral("mainWindow/state");
const QString kLastDirKey = QStringLiteral("mainWindow/lastOpenDir");
constexpr int kStateVersion = 1;

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

    m_stack = new QStackedWidget(this);
    m_emptyState = new EmptyStateWidget(m_stack);
    m_emptyState->setDemoAvailable(false,
                                   tr("The demo needs the tensor core and the profiler, "
                                      "which are not built yet"));
    m_stack->addWidget(m_emptyState);
    setCentralWidget(m_stack);
    connect(m_emptyState, &EmptyStateWidget::openRequested, this, &MainWindow::showOpenDialog);

    createActions();
    statusBar()->showMessage(tr("No file open"));
    restoreWindowState();
}

MainWindow::~MainWindow() = default;

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

    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setObjectName(QStringLiteral("actionQuit"));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *about = help->addAction(tr("&About Fusescope"), this, &MainWindow::showAbout);
    about->setObjectName(QStringLiteral("actionAbout"));
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

void MainWindow::openFiles(const QStringList &paths)
{
    for (const QString &path : paths)
        openFile(path);
}

bool MainWindow::openFile(const QString &path)
{
    const OpenOutcome outcome = openDocument(path);
    if (!outcome.ok) {
        reportOpenFailure(path, outcome.reason);
        return false;
    }
    m_recent.add(path);
    statusBar()->showMessage(tr("Opened %1").arg(QFileInfo(path).fileName()));
    return true;
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

QStringList MainWindow::renderViews(const QString &dir, QString *error)
{
    // Until the document views exist the window itself (its empty state) is
    // the only view there is.
    ensurePolished();
    const QString path = QDir(dir).filePath(QStringLiteral("mainwindow.png"));
    if (!grab().save(path)) {
        *error = tr("cannot write %1").arg(path);
        return {};
    }
    return {path};
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
