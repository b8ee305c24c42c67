#include "profiler/traceformat.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>
#include <sys/stat.h>
#include <zlib.h>

using namespace fusescope;

namespace {

QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

QString writeGzip(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes)
{
    const QString path = dir.filePath(name);
    gzFile gz = gzopen(path.toLocal8Bit().constData(), "wb");
    gzwrite(gz, bytes.constData(), static_cast<unsigned>(bytes.size()));
    gzclose(gz);
    return path;
}

QString writeSqlite(const QTemporaryDir &dir, const QString &name, const char *schema)
{
    const QString path = dir.filePath(name);
    sqlite3 *db = nullptr;
    sqlite3_open(path.toLocal8Bit().constData(), &db);
    sqlite3_exec(db, schema, nullptr, nullptr, nullptr);
    sqlite3_close(db);
    return path;
}

} // namespace

class TestTraceFormat : public QObject
{
    Q_OBJECT
private slots:
    void recognizes_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("format");
        QTest::newRow("chrome object") << "t.json" << QByteArray("  {\"traceEvents\": []}")
                                       << int(FileFormat::ChromeJson);
        QTest::newRow("chrome bare array")
            << "t.json" << QByteArray("\n[{\"ph\":\"X\"}]") << int(FileFormat::ChromeJson);
        QTest::newRow("onnx") << "m.onnx" << QByteArray("\x08\x07\x12\x0c", 4) << int(FileFormat::Onnx);
    }
    void recognizes()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, bytes);
        QFETCH(int, format);
        QTemporaryDir dir;
        const FormatProbe probe = probeFileFormat(writeFile(dir, name, bytes).toStdString());
        QVERIFY2(probe.ok(), probe.error.c_str());
        QCOMPARE(int(probe.format), format);
    }

    void gzippedJson()
    {
        QTemporaryDir dir;
        const FormatProbe probe = probeFileFormat(writeGzip(dir, "t.json.gz", "{\"traceEvents\":[]}").toStdString());
        QVERIFY2(probe.ok(), probe.error.c_str());
        QCOMPARE(probe.format, FileFormat::ChromeJson);
        QVERIFY(probe.gzipped);
    }

    void sqliteFlavours()
    {
        QTemporaryDir dir;
        const auto fs = probeFileFormat(
            writeSqlite(dir, "a.fstrace", "CREATE TABLE meta(k,v); CREATE TABLE runs(id);").toStdString());
        QCOMPARE(fs.format, FileFormat::FsTrace);
        const auto nsys = probeFileFormat(
            writeSqlite(dir, "b.sqlite",
                        "CREATE TABLE StringIds(id,value); CREATE TABLE TARGET_INFO_SESSION_START_TIME(x);")
                .toStdString());
        QCOMPARE(nsys.format, FileFormat::NsysSqlite);
        const auto other = probeFileFormat(writeSqlite(dir, "c.sqlite", "CREATE TABLE t(x);").toStdString());
        QVERIFY(!other.ok());
        QVERIFY(other.error.find("neither a Fusescope trace nor an Nsight Systems export") != std::string::npos);
    }

    void rejects_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        QTest::newRow("empty") << "e.json" << QByteArray() << "is empty";
        QTest::newRow("binary junk") << "x.bin"
                                     << QByteArray("\x7f"
                                                   "ELF\x02\x01",
                                                   6)
                                     << "is not a format";
        QTest::newRow("onnx without a tag") << "m.onnx" << QByteArray("\x00\x01", 2) << "is not a format";
        QTest::newRow("truncated sqlite") << "t.fstrace" << QByteArray("SQLite format 3\0\x10\x00", 18) << "SQLite";
        QTest::newRow("corrupt gzip") << "t.json.gz" << QByteArray("\x1f\x8b\x08\x00garbagegarbage", 18) << "gzip";
    }
    void rejects()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const FormatProbe probe = probeFileFormat(writeFile(dir, name, bytes).toStdString());
        QVERIFY(!probe.ok());
        QVERIFY2(QString::fromStdString(probe.error).contains(reason), probe.error.c_str());
    }

    void missingAndDirectory()
    {
        QTemporaryDir dir;
        QCOMPARE(probeFileFormat(dir.filePath("nope.fstrace").toStdString()).error, std::string("no such file"));
        QVERIFY(probeFileFormat(dir.path().toStdString()).error.find("directory") != std::string::npos);
    }

    // A pipe would block the open until a writer came: refused before that.
    void pipesAndDevicesAreRefused()
    {
        QTemporaryDir dir;
        const std::string fifo = dir.filePath("trace.json").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        for (const std::string &path : {fifo, std::string("/dev/null")}) {
            const FormatProbe probe = probeFileFormat(path);
            QVERIFY(!probe.ok());
            QVERIFY2(probe.error.find("not a regular file") != std::string::npos, probe.error.c_str());
        }
    }

    void realThirdPartyFiles_data()
    {
        QTest::addColumn<QString>("relative");
        QTest::addColumn<int>("format");
        QTest::newRow("kineto gz") << "kineto/hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
                                   << int(FileFormat::ChromeJson);
        QTest::newRow("kineto json") << "kineto/param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json"
                                     << int(FileFormat::ChromeJson);
        QTest::newRow("nsys") << "nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite" << int(FileFormat::NsysSqlite);
        QTest::newRow("onnx") << "onnx-models/light/light_squeezenet.onnx" << int(FileFormat::Onnx);
    }
    void realThirdPartyFiles()
    {
        QFETCH(QString, relative);
        QFETCH(int, format);
        const QString path = QDir(QStringLiteral(FUSESCOPE_TESTDATA_DIR)).filePath(relative);
        if (!QFile::exists(path))
            QSKIP("shared/testdata is not present next to the checkout");
        const FormatProbe probe = probeFileFormat(path.toStdString());
        QVERIFY2(probe.ok(), probe.error.c_str());
        QCOMPARE(int(probe.format), format);
    }
};

QTEST_GUILESS_MAIN(TestTraceFormat)
#include "tst_profiler_traceformat.moc"
