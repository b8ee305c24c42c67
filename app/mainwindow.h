#pragma once

#include "app/documentopener.h"
#include "app/recentfiles.h"

#include <QMainWindow>

class QMenu;
class QStackedWidget;

namespace fusescope {

class EmptyStateWidget;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    void openFiles(const QStringList &paths);
    bool openFile(const QString &path);

    // Renders every view to DIR/<view>.png (for --screenshot); returns the
    // paths written, or sets *error.
    QStringList renderViews(const QString &dir, QString *error);

    QAction *openAction() const { return m_openAction; }
    QMenu *recentMenu() const { return m_recentMenu; }
    EmptyStateWidget *emptyState() const { return m_emptyState; }

signals:
    void openFailed(const QString &path, const QString &reason);

public slots:
    void showOpenDialog();

protected:
    // The file chooser; a seam so tests drive File > Open without a modal dialog.
    virtual QStringList chooseFilesToOpen();
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createActions();
    void rebuildRecentMenu();
    void showAbout();
    void reportOpenFailure(const QString &path, const QString &reason);
    void restoreWindowState();
    void saveWindowState();

    RecentFiles m_recent;
    QStackedWidget *m_stack = nullptr;
    EmptyStateWidget *m_emptyState = nullptr;
    QAction *m_openAction = nullptr;
    QMenu *m_recentMenu = nullptr;
};

} // namespace fusescope
