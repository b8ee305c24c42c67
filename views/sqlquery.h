#pragma once
// One read-only SQL query over a `.fstrace` file, run in a worker thread:
// its own connection opened read-only, writes refused three ways (read-only
// open, PRAGMA query_only, a statement and authorizer check), a row limit,
// and cancel() from any thread through sqlite3_interrupt.

#include "views/sqleventstable.h"

#include <QString>
#include <QStringList>
#include <QVariant>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

struct sqlite3;

namespace fusescope {

struct SqlTableSchema {
    QString name;
    QStringList columns; // "name TYPE"
};

struct SqlResult {
    bool ok = false;
    bool cancelled = false;
    QString error;                // SQLite's message, or why the console refused
    QStringList columns;
    std::vector<QVariantList> rows; // the first rowLimit rows; a null QVariant is SQL NULL
    qint64 totalRows = 0;         // rows counted, up to SqlQuery::kCountCap
    bool totalIsLowerBound = false; // counting stopped at the cap: "N+ rows"
    qint64 elapsedMs = 0;
    std::vector<SqlTableSchema> schema; // filled when asked for
};

class SqlQuery
{
public:
    // Rows past the shown ones are only counted, and only this far.
    static constexpr qint64 kCountCap = 1'000'000;

    // `sql` may be empty to read only the schema.
    SqlQuery(QString path, QString sql, int rowLimit, bool withSchema);
    ~SqlQuery();
    SqlQuery(const SqlQuery &) = delete;
    SqlQuery &operator=(const SqlQuery &) = delete;

    // The loaded runs the `events` table serves (views/sqleventstable.h); none: no such table.
    void setEventRuns(std::shared_ptr<const SqlEventRuns> runs) { m_eventRuns = std::move(runs); }

    // In the worker thread; never throws.
    SqlResult run();
    // From any thread: the running statement stops with "cancelled".
    void cancel();
    bool isCancelled() const;

private:
    void execute(sqlite3 *db, SqlResult &result);
    void attach(sqlite3 *db);
    void detach();

    QString m_path;
    QString m_sql;
    std::shared_ptr<const SqlEventRuns> m_eventRuns;
    int m_rowLimit;
    bool m_withSchema;
    mutable std::mutex m_mutex; // guards m_db against closing while cancel() interrupts it
    sqlite3 *m_db = nullptr;
    std::atomic<bool> m_cancelled = false; // read by SQLite's progress handler
};

} // namespace fusescope
