#include "app/cli.h"

#include "app/commands.h"
#include "app/mainwindow.h"
#include "core/buildinfo.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>

#include <cstdio>
#include <iostream>

namespace fusescope {
namespace {

void printVersion()
{
    std::cout << "fusescope " << versionString() << "\nfeatures: " << featureLine() << "\n";
}

void printHelp()
{
    std::cout << "Usage: fusescope [FILE...]\n"
                 "       fusescope COMMAND [OPTIONS]     (fusescope COMMAND --help for its options)\n"
                 "       fusescope --screenshot DIR [FILE]\n\n"
                 "Profiler and compiler-graph visualizer for deep-learning models. Without a command it\n"
                 "opens the GUI with FILE(s): .fstrace, Kineto/Chrome .json/.json.gz, Nsight Systems\n"
                 ".sqlite or .onnx.\n\n"
                 "Options:\n"
                 "  -h, --help          show this help\n"
                 "  -V, --version       print the version and the optional features of this build\n"
                 "  --screenshot DIR    render every view (of FILE, if given) to DIR/<view>.png\n"
                 "                      without a display\n\n"
                 "Commands:\n";
    for (const Command &c : commands()) {
        std::printf("  %-10s %s%s\n", c.name, c.summary, c.run ? "" : " (planned, not built yet)");
    }
    std::fflush(stdout);
    std::cout << "\nExit codes: 0 success, 1 bad input (reason on stderr), 2 usage error.\n";
}

int usageError(const std::string &message)
{
    std::cerr << "fusescope: " << message << "\nTry 'fusescope --help'.\n";
    return ExitUsage;
}

int runCommand(const Command &command, int argc, char **argv)
{
    if (!command.run) {
        std::cerr << "fusescope: '" << command.name
                  << "' is part of the command-line contract but not built yet in this version\n";
        return ExitUsage;
    }
    QCoreApplication app(argc, argv);
    QStringList args = QCoreApplication::arguments();
    args.remove(0, 2);
    return command.run(args);
}

bool haveDisplay()
{
    return qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY")
        || qEnvironmentVariableIsSet("QT_QPA_PLATFORM");
}

int runScreenshot(int argc, char **argv, const QString &dir, const QStringList &files)
{
    if (files.size() > 1)
        return usageError("--screenshot takes at most one FILE");
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (!QDir().mkpath(dir)) {
        std::cerr << "fusescope: cannot create screenshot folder " << dir.toStdString() << "\n";
        return ExitBadInput;
    }
    MainWindow window;
    window.resize(1600, 1000);
    if (!files.isEmpty()) {
        const OpenOutcome outcome = openDocument(files.front());
        if (!outcome.ok) {
            std::cerr << "fusescope: " << outcome.reason.toStdString() << "\n";
            return ExitBadInput;
        }
        window.setDocument(outcome.document);
    }
    QString error;
    const QStringList written = window.renderViews(dir, &error);
    if (!error.isEmpty()) {
        std::cerr << "fusescope: " << error.toStdString() << "\n";
        return ExitBadInput;
    }
    for (const QString &path : written)
        std::cout << path.toStdString() << "\n";
    return ExitOk;
}

int runGui(int argc, char **argv, const QStringList &files)
{
    if (!haveDisplay()) {
        std::cerr << "fusescope: no display (DISPLAY and WAYLAND_DISPLAY are unset). Use a command such as "
                     "'fusescope demo --headless', or --screenshot DIR FILE.\n";
        return ExitUsage;
    }
    QApplication app(argc, argv);
    MainWindow window;
    window.show();
    window.openFiles(files);
    return app.exec();
}

} // namespace

int runFusescope(int argc, char **argv)
{
    QCoreApplication::setOrganizationName(QStringLiteral("Fusescope"));
    QCoreApplication::setApplicationName(QStringLiteral("fusescope"));
    QCoreApplication::setApplicationVersion(QString::fromStdString(versionString()));

    if (argc >= 2) {
        const QString first = QString::fromLocal8Bit(argv[1]);
        if (const Command *command = findCommand(first))
            return runCommand(*command, argc, argv);
    }
    QStringList files;
    QString screenshotDir;
    bool screenshot = false;
    for (int i = 1; i < argc; ++i) {
        const QString arg = QString::fromLocal8Bit(argv[i]);
        if (arg == QLatin1String("--version") || arg == QLatin1String("-V")) {
            printVersion();
            return ExitOk;
        }
        if (arg == QLatin1String("--help") || arg == QLatin1String("-h")) {
            printHelp();
            return ExitOk;
        }
        if (arg == QLatin1String("--screenshot")) {
            if (i + 1 >= argc)
                return usageError("--screenshot needs a folder: --screenshot DIR [FILE]");
            screenshot = true;
            screenshotDir = QString::fromLocal8Bit(argv[++i]);
        } else if (arg.startsWith(QLatin1Char('-')) && arg != QLatin1String("-")) {
            return usageError("unknown option " + arg.toStdString());
        } else {
            files << arg;
        }
    }
    if (screenshot)
        return runScreenshot(argc, argv, screenshotDir, files);
    return runGui(argc, argv, files);
}

} // namespace fusescope
