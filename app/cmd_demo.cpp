// `fusescope demo`: the embedded default. Records the zoo model encoder eager
// and compiled (what `profile encoder --compare` records) and shows it: in the
// GUI, or headless as the report plus a screenshot of every view.
#include "app/cmdline.h"
#include "app/commands.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

#include <iostream>

namespace fusescope {

namespace {

const char kDemoModel[] = "encoder";
constexpr int kScreenshotTimeoutMs = 5 * 60 * 1000;

// A new folder demo-<date>-<time> under the cache location, else ./fusescope-demo.
QString defaultDemoDir()
{
    const QString cache = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
    if (!cache.isEmpty()) {
        const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
        QString dir = QDir(cache).filePath(QStringLiteral("demo-") + stamp);
        for (int n = 2; QFileInfo::exists(dir); ++n)
            dir = QDir(cache).filePath(QStringLiteral("demo-%1-%2").arg(stamp).arg(n));
        if (QDir().mkpath(dir))
            return dir;
    }
    return QDir::current().filePath(QStringLiteral("fusescope-demo"));
}

bool haveDisplay()
{
    return qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
}

// The views render in a child process on the offscreen platform, so the
// command itself needs no GUI and a crash there cannot lose the trace.
int writeScreenshots(CommandLine &cmd, const QString &dir, const QString &trace)
{
    std::cout.flush();
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedChannels);
    child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--screenshot"), dir, trace});
    if (!child.waitForStarted())
        return cmd.badInput(QStringLiteral("cannot start %1 for the screenshots: %2")
                                .arg(QCoreApplication::applicationFilePath(), child.errorString()));
    if (!child.waitForFinished(kScreenshotTimeoutMs)) {
        child.kill();
        child.waitForFinished();
        return cmd.badInput(QStringLiteral("%1: rendering the screenshots did not finish in %2 s")
                                .arg(trace).arg(kScreenshotTimeoutMs / 1000));
    }
    if (child.exitStatus() != QProcess::NormalExit)
        return cmd.badInput(QStringLiteral("%1: the process rendering the screenshots crashed").arg(trace));
    return child.exitCode();
}

int openInGui(CommandLine &cmd, const QString &trace)
{
    if (!QProcess::startDetached(QCoreApplication::applicationFilePath(), {trace}))
        return cmd.badInput(QStringLiteral("cannot start the GUI (%1) for %2").arg(QCoreApplication::applicationFilePath(), trace));
    printLine(QStringLiteral("opening %1 in the GUI").arg(trace));
    return ExitOk;
}

} // namespace

int recordDemo(const QString &trace)
{
    return runProfileCommand({QLatin1String(kDemoModel), QStringLiteral("--compare"), QStringLiteral("--record-shapes"),
                              QStringLiteral("--profile-memory"), QStringLiteral("-o"), trace});
}

int runDemoCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("demo"), QStringLiteral("[--headless] [--out DIR]"),
                    QStringLiteral("Profiles the zoo model %1 eager and compiled into DIR/demo.fstrace (what\n"
                                   "'fusescope profile %1 --compare --record-shapes --profile-memory' records)\n"
                                   "and opens it in the GUI. With --headless, or when there is no display (DISPLAY\n"
                                   "and WAYLAND_DISPLAY unset), it prints the report instead and writes a screenshot\n"
                                   "of every view to DIR/<view>.png.\n"
                                   "DIR defaults to a new folder demo-<date>-<time> under the cache location\n"
                                   "(%2), or ./fusescope-demo when there is none.")
                        .arg(QLatin1String(kDemoModel), QStandardPaths::writableLocation(QStandardPaths::CacheLocation)));
    QCommandLineParser &p = cmd.parser();
    p.addOptions({{QStringLiteral("headless"), QStringLiteral("Print the report and write screenshots; no window.")},
                  {QStringLiteral("out"), QStringLiteral("The folder for demo.fstrace and the screenshots."), QStringLiteral("DIR")}});
    if (auto exit = cmd.parse(args, 0, 0))
        return *exit;
    if (p.isSet(QStringLiteral("out")) && p.value(QStringLiteral("out")).isEmpty())
        return cmd.usageError(QStringLiteral("--out needs a folder"));
    const QString dir = p.isSet(QStringLiteral("out")) ? p.value(QStringLiteral("out")) : defaultDemoDir();
    if (!QDir().mkpath(dir))
        return cmd.badInput(QStringLiteral("%1: cannot create the folder").arg(dir));
    const QString trace = QDir(dir).filePath(QStringLiteral("demo.fstrace"));
    if (const int rc = recordDemo(trace))
        return rc;
    if (!p.isSet(QStringLiteral("headless")) && haveDisplay())
        return openInGui(cmd, trace);
    if (!p.isSet(QStringLiteral("headless")))
        printLine(QStringLiteral("no display (DISPLAY and WAYLAND_DISPLAY are unset): printing the report and writing screenshots"));
    printLine(QString());
    if (const int rc = runReportCommand({trace}))
        return rc;
    printLine(QString());
    printLine(QStringLiteral("screenshots in %1:").arg(dir));
    return writeScreenshots(cmd, dir, trace);
}

} // namespace fusescope
