// The Nsight Systems importer against two real exports (schema 2.9 and 3.13):
// every count and total it produces equals what plain SQL over the same file
// says, the file is never written, and damaged or foreign files are refused
// with a sentence naming the file instead of a crash.

// importer.h first, in a block of its own: moc (run with C++17 predefines)
// fails on <concepts> when events.h is the first header it reads.
#include "profiler/importer.h"

#include "profiler/statistics.h"
#include "profiler/tracestore.h" // store::kSchemaSql, for a file that is a Fusescope trace
#include "tests/qteststring.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

#include <map>
#include <random>
#include <set>

using namespace fusescope;
using namespace fusescope::profiler;

namespace {

const QString kSaxpy = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite");
const QString kCloverleaf
    = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/nsys/pipit/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite");

// The independent side: plain SQL over the export, read-only.
class Sql
{
public:
    explicit Sql(const QString &path, bool writable = false)
    {
        const QByteArray uri = "file:" + path.toUtf8() + (writable ? "" : "?mode=ro");
        const int flags
            = (writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_URI;
        if (sqlite3_open_v2(uri.constData(), &m_db, flags, nullptr) != SQLITE_OK)
            qFatal("cannot open %s", uri.constData());
    }
    ~Sql() { sqlite3_close(m_db); }

    bool hasTable(const char *table) const
    {
        return scalar(QByteArray("SELECT count(*) FROM sqlite_master WHERE name = '") + table + "'") > 0;
    }
    int64_t scalar(const QByteArray &sql) const
    {
        int64_t value = 0;
        rows(sql, [&](sqlite3_stmt *s) { value = sqlite3_column_int64(s, 0); });
        return value;
    }
    // name -> integer, from "SELECT name, value …".
    std::map<std::string, int64_t> byName(const QByteArray &sql) const
    {
        std::map<std::string, int64_t> values;
        rows(sql, [&](sqlite3_stmt *s) {
            values[reinterpret_cast<const char *>(sqlite3_column_text(s, 0))] = sqlite3_column_int64(s, 1);
        });
        return values;
    }
    void exec(const char *sql) const
    {
        char *message = nullptr;
        if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) != SQLITE_OK)
            qFatal("%s: %s", sql, message);
    }

private:
    template <typename Visit> void rows(const QByteArray &sql, Visit visit) const
    {
        sqlite3_stmt *s = nullptr;
        if (sqlite3_prepare_v2(m_db, sql.constData(), -1, &s, nullptr) != SQLITE_OK)
            qFatal("%s: %s", sql.constData(), sqlite3_errmsg(m_db));
        while (sqlite3_step(s) == SQLITE_ROW)
            visit(s);
        sqlite3_finalize(s);
    }

    sqlite3 *m_db = nullptr;
};

// COUNT(*) of a table, 0 when the export never created it.
int64_t countOf(const Sql &sql, const char *table, const char *where = "")
{
    return sql.hasTable(table) ? sql.scalar(QByteArray("SELECT count(*) FROM ") + table + " " + where) : 0;
}

// The rule the importer documents: an API call's backtrace twin (eventClass
// 67, the same correlation id as a plain row) is not a call of its own.
const QByteArray kRuntimeCalls = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE NOT (r.eventClass = 67 AND "
                                 "EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME o WHERE o.correlationId = "
                                 "r.correlationId AND o.eventClass != 67))";

std::map<EventKind, int64_t> countByKind(const Run &run)
{
    std::map<EventKind, int64_t> counts;
    for (const Event &e : run.events)
        ++counts[e.kind];
    return counts;
}

QString testdata(const QString &path)
{
    return QFileInfo::exists(path) ? path : QString();
}

#define REQUIRE_TESTDATA(path)                                                                                         \
    if (testdata(path).isEmpty())                                                                                      \
        QSKIP(qPrintable("the real Nsight Systems exports are not here: " + path                                       \
                         + " (../shared/testdata is the project's test-data checkout)"));

Trace importOrFail(const QString &path)
{
    auto trace = importNsys(path.toStdString());
    if (!trace)
        qFatal("import of %s returned nothing", qPrintable(path));
    return std::move(*trace);
}

// The message of the error importing `path`, or "" when it imported.
QString importError(const QString &path)
{
    try {
        importNsys(path.toStdString());
        return {};
    } catch (const Error &e) {
        return QString::fromStdString(e.what());
    }
}

QString copyInto(const QTemporaryDir &dir, const QString &path, const QString &name = "copy.sqlite")
{
    const QString copy = dir.filePath(name);
    QFile::remove(copy);
    if (!QFile::copy(path, copy) || !QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner))
        qFatal("cannot copy %s", qPrintable(path));
    return copy;
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return f.readAll();
}

void writeAll(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

void addBothExports()
{
    QTest::addColumn<QString>("path");
    QTest::newRow("saxpy 2.9") << kSaxpy;
    QTest::newRow("cloverleaf 3.13") << kCloverleaf;
}

// An import of a damaged file either fails with a sentence that starts with
// the file's name, or succeeds (SQLite did not notice). Returns true on failure.
bool importsOrNamesTheFile(const QString &path, QString &message)
{
    message = importError(path);
    if (message.isEmpty())
        return false;
    if (!message.startsWith(path + ": "))
        qFatal("error does not name the file: %s", qPrintable(message));
    return true;
}

} // namespace

class TestNsysImport : public QObject
{
    Q_OBJECT
private slots:
    void countsMatchSql_data() { addBothExports(); }
    void countsMatchSql()
    {
        QFETCH(QString, path);
        REQUIRE_TESTDATA(path);
        const Trace trace = importOrFail(path);
        QCOMPARE(trace.runs.size(), size_t(1));
        auto counts = countByKind(trace.runs[0]);
        Sql sql(path);
        QCOMPARE(counts[EventKind::Kernel], countOf(sql, "CUPTI_ACTIVITY_KIND_KERNEL"));
        QCOMPARE(counts[EventKind::Memcpy], countOf(sql, "CUPTI_ACTIVITY_KIND_MEMCPY"));
        QCOMPARE(counts[EventKind::Memset], countOf(sql, "CUPTI_ACTIVITY_KIND_MEMSET"));
        QCOMPARE(counts[EventKind::Runtime],
                 sql.scalar(kRuntimeCalls) + countOf(sql, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"));
        QCOMPARE(counts[EventKind::UserRange],
                 countOf(sql, "NVTX_EVENTS", "WHERE eventType IN (59, 60, 70, 71) AND \"end\" IS NOT NULL"));
        QCOMPARE(trace.runs[0].summary.events, int64_t(trace.runs[0].events.size()));
    }

    void kernelTotalsMatchSql_data() { addBothExports(); }
    void kernelTotalsMatchSql()
    {
        QFETCH(QString, path);
        REQUIRE_TESTDATA(path);
        const Trace trace = importOrFail(path);
        const RunStatistics stats = computeStatistics(trace, trace.runs[0]);
        std::map<std::string, int64_t> totals, calls;
        for (const KernelStats &k : stats.kernels) {
            totals[k.name] += k.time.totalNs;
            calls[k.name] += k.time.calls;
        }
        Sql sql(path);
        const QByteArray byName = "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
                                  "GROUP BY s.value";
        QCOMPARE(totals, sql.byName("SELECT s.value, sum(k.\"end\" - k.start) " + byName));
        QCOMPARE(calls, sql.byName("SELECT s.value, count(*) " + byName));
        QVERIFY(!totals.empty());
    }

    void copyTotalsMatchSql_data() { addBothExports(); }
    void copyTotalsMatchSql()
    {
        QFETCH(QString, path);
        REQUIRE_TESTDATA(path);
        const Trace trace = importOrFail(path);
        const RunStatistics stats = computeStatistics(trace, trace.runs[0]);
        std::map<std::string, int64_t> got;
        for (const CopyStats &c : stats.copies) {
            got[copyKindName(c.kind)] = c.transfer.totalNs;
            QCOMPARE(int64_t(c.transfer.bytes),
                     Sql(path).scalar("SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = "
                                      + QByteArray::number(c.kind == CopyKind::HostToDevice ? 1 : 2)));
        }
        // Both exports copy only host to device (1) and device to host (2).
        const auto want = Sql(path).byName("SELECT CASE copyKind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' END, "
                                           "sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY copyKind");
        QCOMPARE(got, want);
    }

    void launchFlowsFollowCorrelationIds_data() { addBothExports(); }
    void launchFlowsFollowCorrelationIds()
    {
        QFETCH(QString, path);
        REQUIRE_TESTDATA(path);
        const Trace trace = importOrFail(path);
        const Run &run = trace.runs[0];
        std::set<uint32_t> targets;
        for (const Flow &f : run.flows) {
            QCOMPARE(f.kind, FlowKind::Launch);
            QCOMPARE(run.event(f.from).kind, EventKind::Runtime);
            const EventKind to = run.event(f.to).kind;
            QVERIFY(to == EventKind::Kernel || to == EventKind::Memcpy || to == EventKind::Memset);
            QCOMPARE(argsOf(run, run.event(f.from))->correlation, argsOf(run, run.event(f.to))->correlation);
            QVERIFY(targets.insert(f.to.value).second); // one launch per kernel
        }
        Sql sql(path);
        int64_t joined = 0;
        for (const char *table :
             {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"})
            joined += countOf(sql, table,
                              "g WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                              "WHERE r.correlationId = g.correlationId)");
        QCOMPARE(int64_t(run.flows.size()), joined);
        QVERIFY(joined > 0);
    }

    void tracksAndNesting_data() { addBothExports(); }
    void tracksAndNesting()
    {
        QFETCH(QString, path);
        REQUIRE_TESTDATA(path);
        const Trace trace = importOrFail(path);
        const Run &run = trace.runs[0];
        std::map<TrackKind, int64_t> kinds;
        for (const Track &t : run.tracks)
            ++kinds[t.kind];
        Sql sql(path);
        QCOMPARE(kinds[TrackKind::GpuStream],
                 sql.scalar("SELECT count(*) FROM (SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL "
                            "UNION SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY)"));
        QCOMPARE(kinds[TrackKind::CpuThread],
                 sql.scalar("SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
        for (uint32_t i = 0; i < run.events.size(); ++i) {
            const Event &e = run.events[i];
            const Track &t = run.tracks[e.track.value];
            if (i > 0) {
                const Event &p = run.events[i - 1];
                QVERIFY(std::tie(p.track, p.start, p.depth) <= std::tie(e.track, e.start, e.depth));
            }
            if (t.kind == TrackKind::GpuStream) {
                QCOMPARE(argsOf(run, e)->device, t.device);
                QCOMPARE(int64_t(argsOf(run, e)->stream), t.tid);
                QCOMPARE(int(e.depth), 0); // one stream runs one thing at a time
            }
        }
        int64_t first = run.events.empty() ? -1 : run.events[0].start;
        for (const Event &e : run.events)
            first = std::min(first, e.start);
        QCOMPARE(first, int64_t(0)); // the earliest timestamp is the origin
    }

    void syncSitsInsideItsApiCall()
    {
        REQUIRE_TESTDATA(kCloverleaf);
        const Trace trace = importOrFail(kCloverleaf);
        const Run &run = trace.runs[0];
        int syncs = 0;
        for (uint32_t i = 0; i < run.events.size(); ++i) {
            const Event &e = run.events[i];
            if (trace.strings[e.name] != "Event sync")
                continue;
            ++syncs;
            QVERIFY(i > 0 && e.depth == 1);
            const Event &call = run.events[i - 1];
            QCOMPARE(trace.strings[call.name], std::string("cudaDeviceSynchronize"));
            QVERIFY(call.start <= e.start && e.end() <= call.end());
            QCOMPARE(argsOf(run, call)->correlation, argsOf(run, e)->correlation);
        }
        QCOMPARE(syncs, 1312);
    }

    void namesAndMeta()
    {
        REQUIRE_TESTDATA(kSaxpy);
        const Trace trace = importOrFail(kSaxpy);
        const Run &run = trace.runs[0];
        QCOMPARE(run.info.mode, std::string("imported"));
        QCOMPARE(run.info.name, std::string("saxpy-mpi-cuda_nsys_perlmutter0"));
        QCOMPARE(run.info.originNs,
                 Sql(kSaxpy).scalar("SELECT min(start) FROM (SELECT start FROM "
                                    "CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT start FROM "
                                    "NVTX_EVENTS WHERE eventType = 59)"));
        QCOMPARE(trace.meta.gpu, std::string("NVIDIA A100-SXM4-40GB"));
        QCOMPARE(trace.meta.producer, std::string("NVIDIA Nsight Systems 2022.2.1.31"));
        QCOMPARE(trace.meta.host, std::string("nid001608"));
        std::set<std::string> trackNames, eventNames;
        for (const Track &t : run.tracks)
            trackNames.insert(trace.strings[t.name]);
        for (const Event &e : run.events)
            eventNames.insert(trace.strings[e.name]);
        QVERIFY(trackNames.count("thread 1230493 (MPI Rank 0)"));
        QVERIFY(trackNames.count("GPU 0 stream 7 (NVIDIA A100-SXM4-40GB)"));
        for (const char *name : {"cudaLaunchKernel", "cudaMemcpy", "MPI_Send", "saxpy",
                                 "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)"})
            QVERIFY2(eventNames.count(name), name);
        QCOMPARE(importOrFail(kCloverleaf).meta.gpu, std::string("4x NVIDIA A100-SXM4-80GB"));
    }

    // Memsets, start/end ranges and memory events: neither export has any, so a copy gets some.
    void memsetsRangesAndMemory()
    {
        REQUIRE_TESTDATA(kSaxpy);
        QTemporaryDir dir;
        const QString path = copyInto(dir, kSaxpy);
        Sql(path, true)
            .exec(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET(start, \"end\", deviceId, contextId, streamId, correlationId, "
                "  globalPid, value, bytes, memKind) VALUES (900000000, 900001000, 0, 1, 7, 135, 302119223558144, 0, "
                "4096, 2);"
                "INSERT INTO NVTX_EVENTS(start, \"end\", eventType, text, globalTid) VALUES "
                "  (950000000, 960000000, 60, 'phase', 302119224788637), (970000000, NULL, 60, 'open', "
                "302119224788637);"
                "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS(start, globalPid, deviceId, contextId, address, pc, bytes, "
                "  memKind, memoryOperationType, correlationId) VALUES "
                "  (885000000, 302119223558144, 0, 1, 4096, 0, 1000, 2, 0, 135),"
                "  (887300000, 302119223558144, 0, 1, 8192, 0, 500, 2, 0, 136),"
                "  (990000000, 302119223558144, 0, 1, 4096, 0, 0, 2, 1, NULL);");
        const Trace trace = importOrFail(path);
        const Run &run = trace.runs[0];
        auto counts = countByKind(run);
        QCOMPARE(counts[EventKind::Memset], int64_t(1));
        QCOMPARE(counts[EventKind::UserRange], int64_t(23)); // the open range is left out
        QCOMPARE(computeStatistics(trace, run).memsets.bytes, 4096.0);
        QCOMPARE(run.allocations.size(), size_t(3));
        QCOMPARE(run.allocations[0].allocatedAfter, int64_t(1000));
        QCOMPARE(run.allocations[1].allocatedAfter, int64_t(1500));
        QCOMPARE(run.allocations[2].bytes, int64_t(-1000));
        QCOMPARE(run.allocations[2].allocatedAfter, int64_t(500));
        QCOMPARE(trace.strings[run.event(run.allocations[0].op).name], std::string("cudaMalloc"));
        QCOMPARE(run.counters.size(), size_t(3));
        QCOMPARE(run.counters.back().value, 500.0);
        QCOMPARE(run.tracks[run.counters[0].track.value].kind, TrackKind::Counter);
        QCOMPARE(int(run.flows.size()), 5 + 15 + 1);
    }

    void fileIsNotWritten()
    {
        REQUIRE_TESTDATA(kCloverleaf);
        QTemporaryDir dir;
        const QString path = copyInto(dir, kCloverleaf);
        const QByteArray before = readAll(path);
        const QDateTime mtime = QFileInfo(path).lastModified();
        importOrFail(path);
        QCOMPARE(QFileInfo(path).lastModified(), mtime);
        QVERIFY(readAll(path) == before);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList {"copy.sqlite"}); // no journal, no -wal
    }

    void foreignFilesAreRefused_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("reason");
        const QString notNsys = "is not an Nsight Systems export (no Nsight Systems tables: expected StringIds and "
                                "at least one CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table)";
        QTest::newRow("empty database") << "emptydb" << notNsys;
        QTest::newRow("other database") << "other" << notNsys;
        QTest::newRow("fusescope trace") << "fstrace" << notNsys;
        QTest::newRow("strings only") << "strings" << notNsys;
        QTest::newRow("empty file") << "empty"
                                    << "is empty, not an Nsight Systems export";
        QTest::newRow("text") << "text"
                              << "is not an SQLite database, so not an Nsight Systems export";
        QTest::newRow("missing") << "missing"
                                 << "no such file";
        QTest::newRow("directory") << "directory"
                                   << "is a directory, not an Nsight Systems export";
    }
    void foreignFilesAreRefused()
    {
        QFETCH(QString, kind);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        QString path = dir.filePath(kind + ".sqlite");
        if (kind == "emptydb")
            Sql(path, true).exec("PRAGMA user_version = 1");
        else if (kind == "other")
            Sql(path, true).exec("CREATE TABLE t(x); INSERT INTO t VALUES (1);");
        else if (kind == "fstrace")
            Sql(path = dir.filePath("t.fstrace"), true).exec(store::kSchemaSql);
        else if (kind == "strings")
            Sql(path, true).exec("CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);");
        else if (kind == "empty")
            writeAll(path, {});
        else if (kind == "text")
            writeAll(path, "{\"traceEvents\": []}");
        else if (kind == "directory")
            path = dir.path();
        const QString error = importError(path);
        QCOMPARE(error, path + ": " + reason);
    }

    void truncatedCopiesNeverCrash_data() { addBothExports(); }
    void truncatedCopiesNeverCrash()
    {
        QFETCH(QString, path);
        REQUIRE_TESTDATA(path);
        QTemporaryDir dir;
        const QByteArray bytes = readAll(path);
        const QString copy = dir.filePath("cut.sqlite");
        int refused = 0;
        QString message;
        std::vector<qsizetype> offsets = {1, 15, 16, 99, 100, 512, 4095, 4096, 4097, 8192};
        for (int i = 1; i <= 20; ++i)
            offsets.push_back(bytes.size() * i / 21);
        for (const qsizetype offset : offsets) {
            writeAll(copy, bytes.left(offset));
            refused += importsOrNamesTheFile(copy, message);
            QVERIFY2(!message.isEmpty(), qPrintable(QString::number(offset))); // a cut file is always noticed
        }
        qInfo("%d of %zu cuts refused; the last: %s", refused, offsets.size(), qPrintable(message));
        // The same cuts with a header that agrees (no page count): SQLite meets the missing pages itself.
        refused = 0;
        QString lastRefusal;
        for (const qsizetype offset : offsets) {
            QByteArray cut = bytes.left(offset);
            if (cut.size() >= 100)
                cut.replace(28, 4, QByteArray(4, '\0'));
            writeAll(copy, cut);
            if (importsOrNamesTheFile(copy, message)) {
                ++refused;
                lastRefusal = message;
            }
        }
        qInfo("%d of %zu cuts without a page count refused; the last: %s", refused, offsets.size(),
              qPrintable(lastRefusal));
    }

    void flippedBytesNeverCrash_data() { addBothExports(); }
    void flippedBytesNeverCrash()
    {
        QFETCH(QString, path);
        REQUIRE_TESTDATA(path);
        QTemporaryDir dir;
        const QByteArray original = readAll(path);
        const QString copy = dir.filePath("flipped.sqlite");
        std::mt19937 random(20240607);
        int refused = 0;
        QString message, lastRefusal;
        for (int round = 0; round < 100; ++round) {
            QByteArray bytes = original;
            // Half the rounds hit the first pages (header, schema, the small tables' roots), where damage shows.
            const qsizetype span = round % 2 ? bytes.size() : std::min<qsizetype>(bytes.size(), 65536);
            for (int k = 0; k < 4; ++k)
                bytes[std::uniform_int_distribution<qsizetype>(0, span - 1)(random)] ^= char(1 + random() % 255);
            writeAll(copy, bytes);
            if (importsOrNamesTheFile(copy, message)) {
                ++refused;
                lastRefusal = message;
            }
        }
        qInfo("%d of 100 damaged copies refused; the last: %s", refused, qPrintable(lastRefusal));
    }

    void damagedTableIsNamed()
    {
        REQUIRE_TESTDATA(kCloverleaf);
        QTemporaryDir dir;
        const QString path = copyInto(dir, kCloverleaf);
        // Zero the kernel table's root page: SQLite reports it malformed when it is read.
        const int64_t root
            = Sql(path).scalar("SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'");
        const int64_t pageSize = Sql(path).scalar("PRAGMA page_size");
        QByteArray bytes = readAll(path);
        bytes.replace((root - 1) * pageSize, pageSize, QByteArray(pageSize, '\x00'));
        writeAll(path, bytes);
        const QString error = importError(path);
        QVERIFY2(error.startsWith(path + ": cannot read table CUPTI_ACTIVITY_KIND_KERNEL: "), qPrintable(error));
    }

    void progressAndCancel()
    {
        REQUIRE_TESTDATA(kCloverleaf);
        std::vector<std::pair<uint64_t, uint64_t>> reported;
        ImportControl control;
        control.progress = [&](uint64_t done, uint64_t total) { reported.emplace_back(done, total); };
        QVERIFY(importNsys(kCloverleaf.toStdString(), control));
        QVERIFY(reported.size() >= 3);
        for (size_t i = 1; i < reported.size(); ++i) {
            QVERIFY(reported[i - 1].first <= reported[i].first);
            QCOMPARE(reported[i].second, reported[0].second);
        }
        QCOMPARE(reported.back().first, reported.back().second);
        QVERIFY(reported.back().second > 3048 + 1312);

        std::atomic<bool> cancel = true;
        control.cancel = &cancel;
        QVERIFY(!importNsys(kCloverleaf.toStdString(), control));
        cancel = false;
        control.progress = [&](uint64_t done, uint64_t) { cancel = cancel || done > 3000; };
        QVERIFY(!importNsys(kCloverleaf.toStdString(), control));
    }

    void importTime()
    {
        REQUIRE_TESTDATA(kCloverleaf);
        for (const QString &path : {kSaxpy, kCloverleaf}) {
            QElapsedTimer timer;
            timer.start();
            const Trace trace = importOrFail(path);
            qInfo("%s: %zu events in %lld ms", qPrintable(QFileInfo(path).fileName()), trace.runs[0].events.size(),
                  static_cast<long long>(timer.elapsed()));
        }
    }
};

QTEST_GUILESS_MAIN(TestNsysImport)
#include "tst_profiler_nsys.moc"
