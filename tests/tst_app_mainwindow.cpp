#include "app/mainwindow.h"
#include "app/recentfiles.h"
#include "views/emptystatewidget.h"

#include <QAction>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

using namespace fusescope;

namespace {

// Replaces the modal file dialog with a scripted answer.
class ScriptedWindow : public MainWindow
{
public:
    QStringList answer;
    int dialogCalls = 0;

protected:
    QStringList chooseFilesToOpen() override
    {
        ++dialogCalls;
        return answer;
    }
};

QString writeJunk(const QTemporaryDir &dir, const QString &name)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    f.write("this is not a trace");
    return path;
}

QMessageBox *errorBox(QWidget *window)
{
    return window->findChild<QMessageBox *>(QStringLiteral("openErrorBox"));
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("FusescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_app_mainwindow"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
    }

    void init() { QSettings().clear(); }

    void emptyStateIsShown()
    {
        MainWindow w;
        auto *stack = qobject_cast<QStackedWidget *>(w.centralWidget());
        QVERIFY(stack);
        QCOMPARE(stack->currentWidget(), w.emptyState());
        QCOMPARE(w.emptyState()->message(), QStringLiteral("Open a trace or a model, or run the demo"));
        auto *label = w.findChild<QLabel *>(QStringLiteral("emptyStateMessage"));
        QVERIFY(label);
        QCOMPARE(label->text(), w.emptyState()->message());
        auto *demo = w.findChild<QPushButton *>(QStringLiteral("emptyStateDemo"));
        QVERIFY(demo && demo->isEnabled());
        QVERIFY(!demo->toolTip().isEmpty());
    }

    void ctrlOOpensTheDialog()
    {
        ScriptedWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QCOMPARE(w.openAction()->shortcut(), QKeySequence(QKeySequence::Open));
        QTest::keySequence(&w, QKeySequence::Open);
        QCOMPARE(w.dialogCalls, 1);
        auto *button = w.findChild<QPushButton *>(QStringLiteral("emptyStateOpen"));
        QTest::mouseClick(button, Qt::LeftButton);
        QCOMPARE(w.dialogCalls, 2);
    }

    void badFileFromDialogShowsAnError()
    {
        QTemporaryDir dir;
        ScriptedWindow w;
        w.answer = {writeJunk(dir, QStringLiteral("junk.fstrace"))};
        QSignalSpy failed(&w, &MainWindow::openFailed);
        w.openAction()->trigger();
        QTRY_COMPARE(failed.count(), 1); // files load in a worker
        QCOMPARE(failed.at(0).at(0).toString(), w.answer.front());
        QVERIFY(failed.at(0).at(1).toString().contains(QLatin1String("junk.fstrace")));
        QMessageBox *box = errorBox(&w);
        QVERIFY(box);
        QTRY_VERIFY(box->isVisible());
        QVERIFY(box->text().contains(QLatin1String("junk.fstrace")));
        QVERIFY(box->informativeText().contains(QLatin1String("is not a format Fusescope opens")));
        QVERIFY(RecentFiles().files().isEmpty()); // a failed open is not "recent"
    }

    void cancelledDialogDoesNothing()
    {
        ScriptedWindow w;
        QSignalSpy failed(&w, &MainWindow::openFailed);
        w.openAction()->trigger();
        QCOMPARE(w.dialogCalls, 1);
        QCOMPARE(failed.count(), 0);
        QVERIFY(!errorBox(&w));
    }

    void droppedFilesAreOpened()
    {
        QTemporaryDir dir;
        MainWindow w;
        QVERIFY(w.acceptDrops());
        QSignalSpy failed(&w, &MainWindow::openFailed);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(writeJunk(dir, QStringLiteral("a.json"))),
                      QUrl::fromLocalFile(dir.filePath(QStringLiteral("missing.onnx")))});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &drop);
        QTRY_COMPARE(failed.count(), 2);
        QVERIFY(failed.at(1).at(1).toString().contains(QLatin1String("missing.onnx no such file")));
    }

    void recentFilesAreKeptNewestFirst()
    {
        RecentFiles recent;
        for (int i = 0; i < RecentFiles::kMaxEntries + 3; ++i)
            recent.add(QStringLiteral("/tmp/f%1.fstrace").arg(i));
        recent.add(QStringLiteral("/tmp/f5.fstrace"));
        const QStringList files = recent.files();
        QCOMPARE(files.size(), RecentFiles::kMaxEntries);
        QCOMPARE(files.front(), QStringLiteral("/tmp/f5.fstrace"));
        QCOMPARE(files.count(QStringLiteral("/tmp/f5.fstrace")), 1);
        QVERIFY(!files.contains(QStringLiteral("/tmp/f0.fstrace")));
    }

    void recentMenuOpensItsEntry()
    {
        RecentFiles().add(QStringLiteral("/nonexistent/old.fstrace"));
        MainWindow w;
        QSignalSpy failed(&w, &MainWindow::openFailed);
        emit w.recentMenu()->aboutToShow();
        const QList<QAction *> actions = w.recentMenu()->actions();
        QVERIFY(actions.size() >= 1);
        QVERIFY(actions.front()->text().contains(QLatin1String("old.fstrace")));
        actions.front()->trigger();
        QTRY_COMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("/nonexistent/old.fstrace"));
    }

    void geometryIsRemembered()
    {
        {
            MainWindow w;
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.resize(913, 611);
            QTRY_COMPARE(w.size(), QSize(913, 611));
            w.close();
        }
        MainWindow again;
        QCOMPARE(again.size(), QSize(913, 611));
    }

    void aboutAndQuitExist()
    {
        MainWindow w;
        QVERIFY(w.findChild<QAction *>(QStringLiteral("actionAbout")));
        auto *quit = w.findChild<QAction *>(QStringLiteral("actionQuit"));
        QVERIFY(quit);
        QCOMPARE(quit->shortcut(), QKeySequence(QKeySequence::Quit));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_app_mainwindow.moc"
