// Drives the real `fusescope` executable: the command-line contract of
// shared/CLI.md is what scripts depend on, so it is tested from outside.
#include <QDir>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Result {
    int exitCode = -1;
    QString out;
    QString err;
};

Result runFusescope(const QStringList &args, const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FUSESCOPE_BINARY), args);
    if (!p.waitForFinished(120000))
        qFatal("fusescope %s did not finish", qPrintable(args.join(' ')));
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT
private slots:
    void version()
    {
        const Result r = runFusescope({QStringLiteral("--version")});
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY2(QRegularExpression(QStringLiteral("^fusescope \\d+\\.\\d+\\.\\d+$")).match(lines[0]).hasMatch(),
                 qPrintable(lines[0]));
        QVERIFY2(QRegularExpression(QStringLiteral("^features: cuda=(on|off) cupti=(on|off) nvrtc=(on|off) "
                                                   "onnx=(on|off)$"))
                     .match(lines[1])
                     .hasMatch(),
                 qPrintable(lines[1]));
        QVERIFY(r.err.isEmpty());
    }

    void help()
    {
        const Result r = runFusescope({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith(QLatin1String("Usage: fusescope")));
        for (const char *command : {"ops", "run", "bench", "profile", "report", "export", "stages", "demo"})
            QVERIFY2(r.out.contains(QStringLiteral("\n  %1 ").arg(QLatin1String(command))), command);
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown option") << QStringList {"--bogus"} << "unknown option --bogus";
        QTest::newRow("screenshot without folder") << QStringList {"--screenshot"} << "needs a folder";
        QTest::newRow("two files to screenshot") << QStringList {"--screenshot", "d", "a", "b"} << "at most one FILE";
    }
    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Result r = runFusescope(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void plannedCommandRefuses()
    {
        const Result r = runFusescope({QStringLiteral("stages"), QStringLiteral("encoder")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("not built yet")), qPrintable(r.err));
    }

    void noDisplayIsAnError()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            env.remove(QLatin1String(var));
        const Result r = runFusescope({}, env);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("no display")), qPrintable(r.err));
    }

    void screenshotOfEmptyWindow()
    {
        QTemporaryDir dir;
        const Result r = runFusescope({QStringLiteral("--screenshot"), dir.path()});
        QCOMPARE(r.exitCode, 0);
        const QImage image(dir.filePath(QStringLiteral("mainwindow.png")));
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 640 && image.height() >= 400);
        QCOMPARE(r.out.trimmed(), dir.filePath(QStringLiteral("mainwindow.png")));
    }

    void screenshotOfBadFileFails_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("reason");
        QTest::newRow("missing") << QByteArray() << "no such file";
        QTest::newRow("junk") << QByteArray("not a trace at all") << "is not a format Fusescope opens";
    }
    void screenshotOfBadFileFails()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("bad.fstrace"));
        if (!content.isEmpty()) {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        }
        const Result r = runFusescope({QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("shots")), file});
        QCOMPARE(r.exitCode, 1);
        // One line of ours; Qt itself may warn about the platform above it.
        const QStringList ours
            = r.err.split(QLatin1Char('\n')).filter(QRegularExpression(QStringLiteral("^fusescope:")));
        QCOMPARE(ours.size(), 1);
        QVERIFY2(ours.front().contains(QLatin1String("bad.fstrace")) && ours.front().contains(reason),
                 qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_app_cli.moc"
