// The SQL console's workers: the store built from an imported trace, the
// schema read and the queries, each in its own thread; results of a document
// or query that was replaced meanwhile are dropped.
#include "views/sqlconsole.h"

#include "profiler/traceformat.h"
#include "profiler/tracesave.h"
#include "views/sqlquery.h"
#include "views/sqlresultmodel.h"

#include <QHeaderView>
#include <QLocale>
#include <QProgressBar>
#include <QStackedWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>

namespace fusescope {
namespace {

bool isStoreFile(const Document &doc)
{
    return doc.format == fileFormatName(FileFormat::FsTrace) && !doc.path.empty();
}

// "42 rows", or "10,000 of 1,000,000+ rows shown" when the limit cut it.
QString rowsStatus(const SqlResult &r)
{
    const QLocale english(QLocale::English);
    const auto shown = qlonglong(r.rows.size());
    const QString time = SqlConsole::tr(" (%1 ms)").arg(r.elapsedMs);
    if (shown < r.totalRows || r.totalIsLowerBound)
        return SqlConsole::tr("%1 of %2%3 rows shown")
                   .arg(english.toString(shown), english.toString(r.totalRows),
                        r.totalIsLowerBound ? QStringLiteral("+") : QString())
            + time;
    return (r.totalRows == 1 ? SqlConsole::tr("1 row") : SqlConsole::tr("%1 rows").arg(english.toString(shown))) + time;
}

// The runs the window has loaded, for the `events` table: the shown one and
// the one the Compare view sets against it.
std::shared_ptr<const SqlEventRuns> eventRunsOf(const Document *doc)
{
    auto runs = std::make_shared<SqlEventRuns>();
    for (const Document *d : {doc ? doc->baseline.get() : nullptr, doc}) {
        if (d && d->trace && !d->trace->runs.empty())
            runs->push_back({d->run, d->trace});
    }
    return runs->empty() ? nullptr : runs;
}

} // namespace

SqlConsole::~SqlConsole()
{
    stopWorkers();
}

// Only the destructor blocks: elsewhere a cancelled worker finishes on its own.
void SqlConsole::stopWorkers()
{
    cancel();
    if (m_schemaQuery)
        m_schemaQuery->cancel();
    m_workers.waitAll();
}

void SqlConsole::setDocument(std::shared_ptr<const Document> document)
{
    cancel();
    if (m_schemaQuery)
        m_schemaQuery->cancel();
    m_query.reset();
    m_schemaQuery.reset();
    m_conversionCancel.reset();
    m_pendingSql.clear();
    m_storeDir.reset();
    m_storePath.clear();
    m_schema->clear();
    m_haveSchema = false;
    m_model->clear();
    setBusy(false);
    setStatus({});
    m_document = std::move(document);
    m_eventRuns = eventRunsOf(m_document.get());
    if (!m_document)
        return showEmptyState(tr("Open a trace to query it with SQL."));
    if (!isStoreFile(*m_document) && !m_document->trace)
        return showEmptyState(tr("%1 holds no trace to query: open a recorded or imported trace.")
                                  .arg(QString::fromStdString(m_document->title)));
    m_stack->setCurrentIndex(1);
    if (isStoreFile(*m_document)) {
        m_storePath = QString::fromStdString(m_document->path);
        startSchemaLoad();
        setStatus(tr("Read-only queries over %1; Ctrl+Enter runs").arg(m_storePath));
    } else {
        new QTreeWidgetItem(m_schema, {tr("(appears with the first query)")});
        setStatus(tr("The first query stores the imported trace for SQL; Ctrl+Enter runs"));
    }
}

void SqlConsole::startSchemaLoad()
{
    auto query = std::make_shared<SqlQuery>(m_storePath, QString(), 0, true);
    query->setEventRuns(m_eventRuns);
    auto result = std::make_shared<SqlResult>();
    m_schemaQuery = query;
    m_workers.start([query, result] { *result = query->run(); },
                [this, query, result] {
                    if (query != m_schemaQuery)
                        return; // another document by now
                    m_schemaQuery.reset();
                    if (result->ok)
                        showSchema(*result);
                    else
                        setStatus(result->error, true);
                });
}

void SqlConsole::runQuery()
{
    const QString sql = query().trimmed();
    QString refusal;
    if (isEmptyStateShown())
        refusal = tr("No trace to query: open a recorded or imported trace");
    else if (sql.isEmpty())
        refusal = tr("Nothing to run: write a query first");
    if (!refusal.isEmpty()) {
        setStatus(refusal, true);
        emit queryFinished(false);
        return;
    }
    remember(sql);
    if (m_query)
        m_query->cancel(); // its result is stale now
    m_query.reset();
    if (!m_storePath.isEmpty())
        return startQuery(sql);
    m_pendingSql = sql;
    if (!m_conversionCancel)
        startConversion();
}

void SqlConsole::startQuery(const QString &sql)
{
    auto query = std::make_shared<SqlQuery>(m_storePath, sql, m_rowLimit, !m_haveSchema);
    query->setEventRuns(m_eventRuns);
    auto result = std::make_shared<SqlResult>();
    m_query = query;
    setBusy(true);
    setStatus(tr("Running…"));
    // The store's folder stays while a query reads it, even if the document goes.
    m_workers.start([query, result, dir = m_storeDir] { *result = query->run(); },
                [this, query, result] {
                    if (query != m_query)
                        return; // a newer query or document replaced it
                    m_query.reset();
                    setBusy(false);
                    queryDone(result);
                });
}

// Columns as wide as their first rows' text needs, but none wider than a
// third of the view, so one long value does not push the rest out of sight.
void SqlConsole::fitColumns()
{
    m_table->horizontalHeader()->setResizeContentsPrecision(200);
    m_table->resizeColumnsToContents();
    const int widest = std::max(120, m_table->viewport()->width() / 3);
    for (int c = 0; c < m_model->columnCount(); ++c)
        m_table->setColumnWidth(c, std::min(m_table->columnWidth(c), widest));
}

void SqlConsole::queryDone(std::shared_ptr<const SqlResult> result)
{
    if (!result->schema.empty())
        showSchema(*result);
    if (result->ok) {
        m_model->setResult(result);
        fitColumns();
        setStatus(rowsStatus(*result));
    } else {
        m_model->clear();
        if (result->cancelled)
            setStatus(tr("Query cancelled after %1 ms").arg(result->elapsedMs));
        else
            setStatus(tr("Error: %1").arg(result->error), true);
    }
    emit queryFinished(result->ok);
}

void SqlConsole::startConversion()
{
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    auto dir = std::make_shared<QTemporaryDir>();
    if (!dir->isValid())
        return conversionDone(false, false, tr("cannot create a temporary folder: %1").arg(dir->errorString()));
    m_conversionCancel = cancelFlag;
    const QString path = dir->filePath(QStringLiteral("imported.fstrace"));
    auto error = std::make_shared<QString>();
    auto ok = std::make_shared<bool>(false);
    setBusy(true);
    m_progress->setValue(0);
    m_progress->show();
    setStatus(tr("Storing the imported trace for SQL…"));
    const auto report = conversionProgress(cancelFlag);
    m_workers.start([trace = m_document->trace, path, cancelFlag, report, ok, error, dir] {
        try {
            *ok = profiler::saveTrace(*trace, path.toStdString(), {report, cancelFlag.get()});
        } catch (const Error &e) {
            *error = QString::fromUtf8(e.what());
        }
    }, [this, cancelFlag, dir, path, ok, error] {
        if (cancelFlag != m_conversionCancel)
            return; // another document by now
        m_conversionCancel.reset();
        if (*ok) {
            m_storeDir = dir;
            m_storePath = path;
        }
        conversionDone(*ok, *cancelFlag, *error);
    });
}

// Called in the worker; shows the progress unless another document replaced the conversion.
std::function<void(double)> SqlConsole::conversionProgress(std::shared_ptr<std::atomic<bool>> cancelFlag)
{
    return [this, cancelFlag](double fraction) {
        QMetaObject::invokeMethod(this, [this, cancelFlag, fraction] {
            if (cancelFlag == m_conversionCancel)
                m_progress->setValue(int(fraction * 1000));
        }, Qt::QueuedConnection);
    };
}

void SqlConsole::conversionDone(bool ok, bool cancelled, const QString &error)
{
    m_progress->hide();
    const QString sql = std::exchange(m_pendingSql, QString());
    if (ok && !sql.isEmpty())
        return startQuery(sql);
    setBusy(false);
    if (cancelled)
        setStatus(tr("Storing the imported trace was cancelled"));
    else if (!ok)
        setStatus(tr("Error: cannot store the imported trace for SQL: %1").arg(error), true);
    if (!ok)
        emit queryFinished(false);
}

void SqlConsole::cancel()
{
    if (m_query)
        m_query->cancel();
    if (m_conversionCancel)
        *m_conversionCancel = true;
}

bool SqlConsole::isRunning() const
{
    return m_query || m_conversionCancel;
}

} // namespace fusescope
