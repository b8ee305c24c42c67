// The SQL console over a real recording (`fusescope profile mlp --compare
// --profile-memory`) and an imported Kineto trace: rows equal what sqlite3
// computes, every example query runs, writes are refused and leave the file
// untouched, SQLite's errors reach the status line, one statement at a time,
// the row limit, Cancel, Ctrl+Enter, Ctrl+C as TSV, the history, the schema
// list, the empty state; and saveTrace() round-trips through TraceReader.
#include "profiler/importer.h"
#include "profiler/traceformat.h"
#include "profiler/tracereader.h"
#include "profiler/tracesave.h"
#include "views/sqlconsole.h"
#include "views/sqlexamples.h"

#include <sqlite3.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QCryptographicHash>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <optional>

using namespace fusescope;

namespace {

const QString kKineto =
    QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
const char *const kCountToBillion = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                                    "WHERE x < 1000000000) SELECT count(*) FROM c";

QString countTo(int n)
{
    return QStringLiteral("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %1) "
                          "SELECT x FROM c")
        .arg(n);
}

// Records two runs of the MLP with the fusescope binary; "" (with `why`) when it cannot.
QString recordTrace(const QString &dir, QString *why)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    const QString path = dir + QStringLiteral("/c.fstrace");
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FUSESCOPE_BINARY),
            {QStringLiteral("profile"), QStringLiteral("mlp"), QStringLiteral("--compare"), QStringLiteral("--steps"),
             QStringLiteral("2"), QStringLiteral("--profile-memory"), QStringLiteral("-o"), path});
    if (!p.waitForFinished(300000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *why = QString::fromUtf8(p.readAllStandardError()) + p.errorString();
        return {};
    }
    return path;
}

// Run `run` of the file, as the loader keeps it; no trace when `run` is -1.
std::shared_ptr<Document> runDocument(const QString &path, int run)
{
    auto doc = std::make_shared<Document>();
    doc->path = path.toStdString();
    doc->title = QFileInfo(path).fileName().toStdString();
    doc->format = fileFormatName(FileFormat::FsTrace);
    doc->run = std::max(run, 0);
    auto trace = std::make_shared<profiler::Trace>();
    if (run >= 0 && profiler::TraceReader(doc->path).loadRun(run, *trace))
        setRecordedRun(*doc, std::move(trace));
    return doc;
}

// The --compare recording as the window holds it: the compiled run, with the eager one as its baseline.
std::shared_ptr<const Document> storeDocument(const QString &path)
{
    std::shared_ptr<Document> doc = runDocument(path, 1);
    doc->baseline = runDocument(path, 0);
    return doc;
}

// What sqlite3 itself returns for `sql`, every cell as text (NULL as "").
QList<QStringList> directRows(const QString &path, const QString &sql)
{
    QList<QStringList> rows;
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(db);
        return rows;
    }
    sqlite3_stmt *stmt = nullptr;
    sqlite3_prepare_v2(db, sql.toUtf8().constData(), -1, &stmt, nullptr);
    while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
        QStringList row;
        for (int c = 0; c < sqlite3_column_count(stmt); ++c)
            row << QString::fromUtf8(reinterpret_cast<const char *>(sqlite3_column_text(stmt, c)));
        rows << row;
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return rows;
}

QList<QStringList> modelRows(const QAbstractItemModel &model)
{
    QList<QStringList> rows;
    for (int r = 0; r < model.rowCount(); ++r) {
        QStringList row;
        for (int c = 0; c < model.columnCount(); ++c)
            row << model.data(model.index(r, c), Qt::EditRole).toString();
        rows << row;
    }
    return rows;
}

QByteArray digest(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256) : QByteArray();
}

// Runs `sql` and waits: queryFinished's flag, or nothing when it never came.
std::optional<bool> runAndWait(SqlConsole &console, const QString &sql, int timeoutMs = 120000)
{
    QSignalSpy finished(&console, &SqlConsole::queryFinished);
    console.setQuery(sql);
    console.runQuery();
    if (finished.isEmpty() && !finished.wait(timeoutMs))
        return std::nullopt;
    return finished.first().first().toBool();
}

// The strings, tracks and counts two loads of the same trace must agree on.
void compareRuns(const profiler::Trace &a, const profiler::Trace &b)
{
    QCOMPARE(b.runs.size(), a.runs.size());
    for (size_t r = 0; r < a.runs.size(); ++r) {
        const profiler::Run &x = a.runs[r], &y = b.runs[r];
        QCOMPARE(y.info.name, x.info.name);
        QCOMPARE(y.summary.events, x.summary.events);
        QCOMPARE(y.events.size(), x.events.size());
        QCOMPARE(y.tracks.size(), x.tracks.size());
        QCOMPARE(y.args.size(), x.args.size());
        QCOMPARE(y.allocations.size(), x.allocations.size());
        QCOMPARE(y.flows.size(), x.flows.size());
        QCOMPARE(y.counters.size(), x.counters.size());
        QCOMPARE(y.stages.size(), x.stages.size());
        for (size_t i = 0; i < x.events.size(); ++i) {
            QCOMPARE(b.strings[y.events[i].name], a.strings[x.events[i].name]);
            QCOMPARE(y.events[i].duration, x.events[i].duration);
            QCOMPARE(y.events[i].start, x.events[i].start);
            QCOMPARE(y.events[i].track, x.events[i].track);
        }
    }
}

} // namespace

class TestSql : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void emptyState();
    void rowsMatchSqlite_data();
    void rowsMatchSqlite();
    void examples_data();
    void examples();
    void eventsTable();
    void schemaList();
    void writesRefused_data();
    void writesRefused();
    void readingPragmasAllowed();
    void syntaxError();
    void oneStatement();
    void rowLimit();
    void cancelSlowQuery();
    void ctrlEnterAndCopy();
    void historyRemembered();
    void cancelStoring();
    void importedTrace();
    void saveTraceRoundTrip_data();
    void saveTraceRoundTrip();

private:
    std::optional<profiler::Trace> importedKineto();

    QTemporaryDir m_dir;
    QString m_path;
};

void TestSql::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // QSettings must not touch the user's configuration.
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("config"))));
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("fusescope-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_views_sql"));
    QString why;
    m_path = recordTrace(m_dir.path(), &why);
    QVERIFY2(!m_path.isEmpty(), qPrintable(QStringLiteral("cannot record the trace: ") + why));
}

void TestSql::emptyState()
{
    SqlConsole console;
    QVERIFY(console.isEmptyStateShown());
    console.setDocument(nullptr);
    QVERIFY(console.isEmptyStateShown());
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT 1")), std::optional<bool>(false));
    QVERIFY(console.isStatusError());
    QCOMPARE(console.resultModel()->rowCount(), 0);
    auto onnx = std::make_shared<Document>();
    onnx->format = fileFormatName(FileFormat::Onnx);
    onnx->path = "/tmp/model.onnx";
    console.setDocument(onnx);
    QVERIFY(console.isEmptyStateShown());
    console.setDocument(storeDocument(m_path));
    QVERIFY(!console.isEmptyStateShown());
    console.setDocument(nullptr);
    QVERIFY(console.isEmptyStateShown());
}

void TestSql::rowsMatchSqlite_data()
{
    QTest::addColumn<QString>("sql");
    QTest::newRow("runs") << QStringLiteral("SELECT name, mode FROM runs ORDER BY id");
    QTest::newRow("numbers") << QStringLiteral("SELECT id, events, duration_ns, steps FROM runs ORDER BY id");
    QTest::newRow("allocations")
        << QStringLiteral("SELECT run, time_ns, bytes, op FROM allocations ORDER BY run, time_ns, rowid");
    QTest::newRow("strings") << QStringLiteral("SELECT id, value FROM strings ORDER BY id");
}

void TestSql::rowsMatchSqlite()
{
    QFETCH(QString, sql);
    SqlConsole console;
    QAbstractItemModelTester tester(console.resultModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    console.setDocument(storeDocument(m_path));
    QCOMPARE(runAndWait(console, sql), std::optional<bool>(true));
    const QList<QStringList> expected = directRows(m_path, sql);
    QVERIFY(!expected.isEmpty());
    QCOMPARE(modelRows(*console.resultModel()), expected);
    QVERIFY2(console.statusText().startsWith(QStringLiteral("%1 row").arg(expected.size())),
             qPrintable(console.statusText()));
    QVERIFY(!console.isStatusError());
}

void TestSql::examples_data()
{
    QTest::addColumn<QString>("sql");
    for (const SqlExample &e : sqlExamples())
        QTest::newRow(e.title) << QString::fromUtf8(e.sql);
}

void TestSql::examples()
{
    QFETCH(QString, sql);
    SqlConsole console;
    QVERIFY(console.exampleQueries().contains(sql));
    console.setDocument(storeDocument(m_path));
    QCOMPARE(runAndWait(console, sql), std::optional<bool>(true));
    QVERIFY2(!console.isStatusError(), qPrintable(console.statusText()));
    QVERIFY(console.resultModel()->columnCount() > 0);
}

// The loaded runs' events: as many per run as the traces hold, and the
// kernels' totals per name equal the run statistics'.
void TestSql::eventsTable()
{
    SqlConsole console;
    const std::shared_ptr<const Document> doc = storeDocument(m_path);
    console.setDocument(doc);
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT run, count(*) FROM events GROUP BY run ORDER BY run")),
             std::optional<bool>(true));
    QCOMPARE(modelRows(*console.resultModel()),
             (QList<QStringList>{{QStringLiteral("0"), QString::number(doc->baseline->trace->runs[0].events.size())},
                                 {QStringLiteral("1"), QString::number(doc->trace->runs[0].events.size())}}));
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT name, count(*), sum(dur_ns) FROM events WHERE run = 1 "
                                                "AND kind = 'kernel' GROUP BY name ORDER BY name")),
             std::optional<bool>(true));
    std::map<std::string, std::pair<int64_t, int64_t>> expected;
    for (const profiler::KernelStats &k : doc->stats->kernels) {
        expected[k.name].first += k.time.calls;
        expected[k.name].second += k.time.totalNs;
    }
    QList<QStringList> rows;
    for (const auto &[name, totals] : expected)
        rows << QStringList{QString::fromStdString(name), QString::number(totals.first), QString::number(totals.second)};
    QVERIFY(!rows.isEmpty());
    QCOMPARE(modelRows(*console.resultModel()), rows);
}

void TestSql::schemaList()
{
    SqlConsole console;
    console.setDocument(storeDocument(m_path));
    QTRY_VERIFY_WITH_TIMEOUT(!console.schemaTables().isEmpty(), 10000);
    const QStringList expected = {
        QStringLiteral("events"), QStringLiteral("meta"), QStringLiteral("enum_names"), QStringLiteral("strings"), QStringLiteral("runs"),
        QStringLiteral("run_values"), QStringLiteral("tracks"), QStringLiteral("event_chunks"),
        QStringLiteral("args_chunks"), QStringLiteral("allocations"), QStringLiteral("flows"),
        QStringLiteral("counters"), QStringLiteral("compile_stages"), QStringLiteral("compile_log"), QStringLiteral("lod")};
    QCOMPARE(console.schemaTables(), expected);
}

void TestSql::writesRefused_data()
{
    QTest::addColumn<QString>("sql");
    const QString other = m_dir.filePath(QStringLiteral("other.db"));
    QTest::newRow("delete") << QStringLiteral("DELETE FROM runs");
    QTest::newRow("drop") << QStringLiteral("DROP TABLE runs");
    QTest::newRow("insert") << QStringLiteral("INSERT INTO meta(key, value) VALUES('x', 'y')");
    QTest::newRow("update") << QStringLiteral("UPDATE runs SET name = 'x'");
    QTest::newRow("create") << QStringLiteral("CREATE TABLE x(a)");
    QTest::newRow("create temp") << QStringLiteral("CREATE TEMP TABLE x(a)");
    QTest::newRow("attach") << QStringLiteral("ATTACH DATABASE '%1' AS other").arg(other);
    QTest::newRow("writable_schema") << QStringLiteral("PRAGMA writable_schema = 1");
    QTest::newRow("user_version") << QStringLiteral("PRAGMA user_version = 7");
    QTest::newRow("journal_mode") << QStringLiteral("PRAGMA journal_mode = WAL");
    QTest::newRow("vacuum") << QStringLiteral("VACUUM");
    QTest::newRow("vacuum into") << QStringLiteral("VACUUM INTO '%1'").arg(other);
    QTest::newRow("reindex") << QStringLiteral("REINDEX");
    QTest::newRow("analyze") << QStringLiteral("ANALYZE");
}

void TestSql::writesRefused()
{
    QFETCH(QString, sql);
    const QByteArray before = digest(m_path);
    const QDateTime modified = QFileInfo(m_path).lastModified();
    SqlConsole console;
    console.setDocument(storeDocument(m_path));
    QCOMPARE(runAndWait(console, sql), std::optional<bool>(false));
    QVERIFY(console.isStatusError());
    const QString status = console.statusText();
    QVERIFY2(status.contains(QStringLiteral("read-only")) || status.contains(QStringLiteral("refused")),
             qPrintable(status));
    QCOMPARE(digest(m_path), before);
    QCOMPARE(QFileInfo(m_path).lastModified(), modified);
    QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("other.db"))));
    QVERIFY(!QFileInfo::exists(m_path + QStringLiteral("-journal")));
    QVERIFY(!QFileInfo::exists(m_path + QStringLiteral("-wal")));
}

void TestSql::readingPragmasAllowed()
{
    SqlConsole console;
    console.setDocument(storeDocument(m_path));
    QCOMPARE(runAndWait(console, QStringLiteral("PRAGMA table_info(runs)")), std::optional<bool>(true));
    QCOMPARE(console.resultModel()->rowCount(), 13);
    QCOMPARE(runAndWait(console, QStringLiteral("PRAGMA application_id")), std::optional<bool>(true));
    QCOMPARE(console.resultModel()->data(console.resultModel()->index(0, 0), Qt::EditRole).toLongLong(),
             qlonglong(0x46537472));
}

void TestSql::syntaxError()
{
    SqlConsole console;
    console.setDocument(storeDocument(m_path));
    QCOMPARE(runAndWait(console, QStringLiteral("SELEC name FROM runs")), std::optional<bool>(false));
    QVERIFY(console.isStatusError());
    QVERIFY2(console.statusText().contains(QStringLiteral("near \"SELEC\": syntax error")),
             qPrintable(console.statusText()));
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT nope FROM runs")), std::optional<bool>(false));
    QVERIFY2(console.statusText().contains(QStringLiteral("no such column: nope")), qPrintable(console.statusText()));
    QCOMPARE(console.resultModel()->rowCount(), 0);
}

void TestSql::oneStatement()
{
    SqlConsole console;
    console.setDocument(storeDocument(m_path));
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT 1; SELECT 2")), std::optional<bool>(false));
    QVERIFY2(console.statusText().contains(QStringLiteral("only one statement at a time")),
             qPrintable(console.statusText()));
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT 1; DELETE FROM runs")), std::optional<bool>(false));
    QVERIFY(console.statusText().contains(QStringLiteral("only one statement at a time")));
    // Trailing semicolons, whitespace and comments are not another statement.
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT 1 ;  ;\n-- done\n")), std::optional<bool>(true));
    QCOMPARE(console.resultModel()->rowCount(), 1);
}

void TestSql::rowLimit()
{
    SqlConsole console;
    console.setDocument(storeDocument(m_path));
    QCOMPARE(runAndWait(console, countTo(20000)), std::optional<bool>(true));
    QCOMPARE(console.resultModel()->rowCount(), SqlConsole::kDefaultRowLimit);
    QVERIFY2(console.statusText().startsWith(QStringLiteral("10,000 of 20,000 rows shown")),
             qPrintable(console.statusText()));
    console.setRowLimit(100);
    QCOMPARE(runAndWait(console, countTo(250)), std::optional<bool>(true));
    QCOMPARE(console.resultModel()->rowCount(), 100);
    QCOMPARE(console.resultModel()->data(console.resultModel()->index(99, 0), Qt::EditRole).toLongLong(), 100);
    QVERIFY2(console.statusText().startsWith(QStringLiteral("100 of 250 rows shown")), qPrintable(console.statusText()));
    QCOMPARE(runAndWait(console, countTo(2000000)), std::optional<bool>(true));
    QVERIFY2(console.statusText().startsWith(QStringLiteral("100 of 1,000,000+ rows shown")),
             qPrintable(console.statusText()));
    QCOMPARE(runAndWait(console, countTo(100)), std::optional<bool>(true));
    QVERIFY2(console.statusText().startsWith(QStringLiteral("100 rows")), qPrintable(console.statusText()));
}

void TestSql::cancelSlowQuery()
{
    SqlConsole console;
    console.setDocument(storeDocument(m_path));
    QSignalSpy finished(&console, &SqlConsole::queryFinished);
    console.setQuery(QString::fromUtf8(kCountToBillion));
    console.runQuery();
    QTest::qWait(300);
    QVERIFY(console.isRunning());
    QVERIFY(finished.isEmpty());
    QElapsedTimer timer;
    timer.start();
    console.cancel();
    QVERIFY(finished.wait(5000));
    QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(finished.first().first().toBool(), false);
    QVERIFY2(console.statusText().contains(QStringLiteral("cancelled")), qPrintable(console.statusText()));
    QVERIFY(!console.isStatusError());
    QVERIFY(!console.isRunning());
    // The destructor cancels a query still running instead of waiting for it.
    auto other = std::make_unique<SqlConsole>();
    other->setDocument(storeDocument(m_path));
    other->setQuery(QString::fromUtf8(kCountToBillion));
    other->runQuery();
    QTest::qWait(100);
    timer.restart();
    other.reset();
    QVERIFY(timer.elapsed() < 2000);
}

void TestSql::ctrlEnterAndCopy()
{
    SqlConsole console;
    console.resize(900, 600);
    console.show();
    console.setDocument(storeDocument(m_path));
    QSignalSpy finished(&console, &SqlConsole::queryFinished);
    const QString sql = QStringLiteral("SELECT name, mode FROM runs ORDER BY id");
    console.setQuery(sql);
    QTest::keyClick(console.editor(), Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().first().toBool(), true);
    console.resultView()->selectAll();
    QApplication::clipboard()->clear();
    QTest::keyClick(console.resultView(), Qt::Key_C, Qt::ControlModifier);
    QString expected = QStringLiteral("name\tmode\n");
    for (const QStringList &row : directRows(m_path, sql))
        expected += row.join(QLatin1Char('\t')) + QLatin1Char('\n');
    QCOMPARE(QApplication::clipboard()->text(), expected);
    // One cell: its column's name, then the value.
    console.resultView()->clearSelection();
    console.resultView()->selectionModel()->select(console.resultModel()->index(1, 1), QItemSelectionModel::Select);
    QCOMPARE(console.selectionAsTsv(), QStringLiteral("mode\n%1\n").arg(directRows(m_path, sql)[1][1]));
}

void TestSql::historyRemembered()
{
    const QString first = QStringLiteral("SELECT count(*) FROM tracks");
    const QString second = QStringLiteral("SELECT key FROM meta ORDER BY key");
    {
        SqlConsole console;
        console.setDocument(storeDocument(m_path));
        QCOMPARE(runAndWait(console, first), std::optional<bool>(true));
        QCOMPARE(runAndWait(console, second), std::optional<bool>(true));
        QCOMPARE(console.history().mid(0, 2), (QStringList{second, first}));
        QCOMPARE(runAndWait(console, first), std::optional<bool>(true));
        QCOMPARE(console.history().mid(0, 2), (QStringList{first, second})); // moved up, not repeated
        QCOMPARE(console.history().count(first), 1);
        console.setQuery(QStringLiteral("draft"));
        QTest::keyClick(console.editor(), Qt::Key_Up, Qt::ControlModifier);
        QCOMPARE(console.query(), first);
        QTest::keyClick(console.editor(), Qt::Key_Up, Qt::ControlModifier);
        QCOMPARE(console.query(), second);
        QTest::keyClick(console.editor(), Qt::Key_Down, Qt::ControlModifier);
        QCOMPARE(console.query(), first);
    }
    SqlConsole reopened;
    QCOMPARE(reopened.query(), first);
    QCOMPARE(reopened.history().mid(0, 2), (QStringList{first, second}));
}

// Cancel while the imported trace is being stored: nothing runs, nothing is shown as a result.
void TestSql::cancelStoring()
{
    std::optional<profiler::Trace> trace = importedKineto();
    if (!trace)
        QSKIP("the shared test data (kineto/hta/amd_trace) is not there");
    auto doc = std::make_shared<Document>();
    doc->format = fileFormatName(FileFormat::ChromeJson);
    doc->trace = std::make_shared<const profiler::Trace>(std::move(*trace));
    SqlConsole console;
    console.setDocument(doc);
    QSignalSpy finished(&console, &SqlConsole::queryFinished);
    console.setQuery(QStringLiteral("SELECT count(*) FROM runs"));
    console.runQuery();
    QVERIFY(console.isRunning());
    console.cancel();
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.first().first().toBool(), false);
    QVERIFY2(console.statusText().contains(QStringLiteral("cancelled")), qPrintable(console.statusText()));
    QCOMPARE(console.resultModel()->rowCount(), 0);
    // A later run stores the trace again and answers.
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT count(*) FROM runs")), std::optional<bool>(true));
    QCOMPARE(console.resultModel()->data(console.resultModel()->index(0, 0), Qt::EditRole).toLongLong(), 1);
}

std::optional<profiler::Trace> TestSql::importedKineto()
{
    if (!QFileInfo::exists(kKineto))
        return std::nullopt;
    return profiler::importTraces({kKineto.toStdString()});
}

void TestSql::importedTrace()
{
    std::optional<profiler::Trace> trace = importedKineto();
    if (!trace)
        QSKIP("the shared test data (kineto/hta/amd_trace) is not there");
    auto doc = std::make_shared<Document>();
    doc->path = kKineto.toStdString();
    doc->format = fileFormatName(FileFormat::ChromeJson);
    setRecordedRun(*doc, std::make_shared<const profiler::Trace>(std::move(*trace)));
    const profiler::Run &run = doc->trace->runs.front();
    SqlConsole console;
    console.setDocument(doc);
    QVERIFY(!console.isEmptyStateShown());
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT events, mode FROM runs")), std::optional<bool>(true));
    QAbstractItemModel &model = *console.resultModel();
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.data(model.index(0, 0), Qt::EditRole).toLongLong(), qlonglong(run.events.size()));
    QCOMPARE(model.data(model.index(0, 0), Qt::EditRole).toLongLong(), run.summary.events);
    QCOMPARE(model.data(model.index(0, 1), Qt::EditRole).toString(), QStringLiteral("imported"));
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT sum(count) FROM event_chunks")), std::optional<bool>(true));
    QCOMPARE(model.data(model.index(0, 0), Qt::EditRole).toLongLong(), qlonglong(run.events.size()));
    QCOMPARE(runAndWait(console, QStringLiteral("SELECT count(*) FROM flows")), std::optional<bool>(true));
    QCOMPARE(model.data(model.index(0, 0), Qt::EditRole).toLongLong(), qlonglong(run.flows.size()));
    QVERIFY(console.schemaTables().contains(QStringLiteral("event_chunks")));
    for (const QString &sql : console.exampleQueries())
        QVERIFY2(runAndWait(console, sql) == std::optional<bool>(true), qPrintable(sql + QLatin1Char('\n') + console.statusText()));
}

void TestSql::saveTraceRoundTrip_data()
{
    QTest::addColumn<QString>("source");
    QTest::newRow("recording") << QStringLiteral("recording");
    QTest::newRow("kineto") << QStringLiteral("kineto");
}

void TestSql::saveTraceRoundTrip()
{
    QFETCH(QString, source);
    std::optional<profiler::Trace> original =
        source == QLatin1String("kineto") ? importedKineto() : profiler::TraceReader(m_path.toStdString()).load();
    if (!original && source == QLatin1String("kineto"))
        QSKIP("the shared test data (kineto/hta/amd_trace) is not there");
    QVERIFY(original);
    QVERIFY(!original->runs.empty() && !original->runs.front().events.empty());
    const std::string path = m_dir.filePath(source + QStringLiteral(".fstrace")).toStdString();
    std::vector<double> progress;
    std::atomic<bool> cancel = false;
    QVERIFY(profiler::saveTrace(*original, path, {[&](double f) { progress.push_back(f); }, &cancel}));
    QVERIFY(!progress.empty() && progress.back() == 1.0);
    std::optional<profiler::Trace> back = profiler::TraceReader(path).load();
    QVERIFY(back);
    compareRuns(*original, *back);
    // Cancelled: no file is left behind.
    cancel = true;
    QVERIFY(!profiler::saveTrace(*original, path + ".cancelled", {{}, &cancel}));
    QVERIFY(!QFileInfo::exists(QString::fromStdString(path + ".cancelled")));
}

QTEST_MAIN(TestSql)
#include "tst_views_sql.moc"
