#include "views/sqlquery.h"

#include "profiler/tracestore.h"

#include <QElapsedTimer>

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>

namespace fusescope {
namespace {

using profiler::store::Database;
using profiler::store::Statement;

// Why the console refused a query before SQLite ran it.
struct Refusal {
    QString message;
};

// Pragmas that only read: those taking an argument name what to describe;
// the others must come without a value, which would set them.
bool pragmaAllowed(std::string_view name, const char *value)
{
    static constexpr std::array<std::string_view, 9> kDescribe = {
        "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo",
        "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check"};
    static constexpr std::array<std::string_view, 16> kRead = {
        "table_list", "database_list", "collation_list", "function_list", "module_list", "pragma_list",
        "compile_options", "application_id", "user_version", "schema_version", "data_version", "page_count",
        "page_size", "freelist_count", "encoding", "journal_mode"};
    const auto has = [&](const auto &list) { return std::find(list.begin(), list.end(), name) != list.end(); };
    return has(kDescribe) || (has(kRead) && value == nullptr);
}

// SQLite's authorizer: `context` receives the reason of a refusal, since
// SQLite itself only says "not authorized".
int authorize(void *context, int action, const char *arg1, const char *arg2, const char *, const char *)
{
    auto &reason = *static_cast<QString *>(context);
    if (action == SQLITE_ATTACH || action == SQLITE_DETACH) {
        reason = QStringLiteral("ATTACH and DETACH are refused: the console reads only the open trace");
        return SQLITE_DENY;
    }
    if (action == SQLITE_PRAGMA) {
        const QByteArray name = QByteArray(arg1 ? arg1 : "").toLower();
        if (pragmaAllowed(std::string_view(name.constData(), size_t(name.size())), arg2))
            return SQLITE_OK;
        reason = QStringLiteral("PRAGMA %1 is refused: the console is read-only and allows only pragmas that read")
                     .arg(QString::fromUtf8(name));
        return SQLITE_DENY;
    }
    return SQLITE_OK;
}

int interruptWhenCancelled(void *query)
{
    return static_cast<const SqlQuery *>(query)->isCancelled() ? 1 : 0;
}

struct StatementDeleter {
    void operator()(sqlite3_stmt *s) const { sqlite3_finalize(s); }
};
using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

QString failure(sqlite3 *db, const QString &reason)
{
    if (sqlite3_errcode(db) == SQLITE_AUTH && !reason.isEmpty())
        return reason;
    return QString::fromUtf8(sqlite3_errmsg(db));
}

// True when more than comments, whitespace and semicolons follow the first statement.
bool hasMoreStatements(sqlite3 *db, const char *tail, const char *end)
{
    while (tail && tail < end) {
        sqlite3_stmt *next = nullptr;
        const char *rest = nullptr;
        const int rc = sqlite3_prepare_v2(db, tail, int(end - tail), &next, &rest);
        StatementPtr guard(next);
        if (rc != SQLITE_OK || next)
            return true;
        if (rest == tail)
            break;
        tail = rest;
    }
    return false;
}

StatementPtr prepareOne(sqlite3 *db, const QByteArray &sql, QString &reason)
{
    sqlite3_stmt *raw = nullptr;
    const char *tail = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql.constData(), int(sql.size()), &raw, &tail);
    StatementPtr stmt(raw);
    if (rc != SQLITE_OK)
        throw Refusal{failure(db, reason)};
    if (!stmt)
        throw Refusal{QStringLiteral("nothing to run: the query holds no statement")};
    if (hasMoreStatements(db, tail, sql.constData() + sql.size()))
        throw Refusal{QStringLiteral("only one statement at a time: run the others one by one")};
    if (!sqlite3_stmt_readonly(stmt.get()))
        throw Refusal{QStringLiteral("the console is read-only: this statement would change the trace")};
    return stmt;
}

QVariant columnValue(sqlite3_stmt *s, int column)
{
    switch (sqlite3_column_type(s, column)) {
    case SQLITE_INTEGER:
        return QVariant(qlonglong(sqlite3_column_int64(s, column)));
    case SQLITE_FLOAT:
        return QVariant(sqlite3_column_double(s, column));
    case SQLITE_TEXT:
        return QString::fromUtf8(reinterpret_cast<const char *>(sqlite3_column_text(s, column)),
                                 sqlite3_column_bytes(s, column));
    case SQLITE_BLOB:
        return QByteArray(static_cast<const char *>(sqlite3_column_blob(s, column)), sqlite3_column_bytes(s, column));
    default:
        return {};
    }
}

QVariantList rowOf(sqlite3_stmt *s, int columns)
{
    QVariantList row;
    row.reserve(columns);
    for (int c = 0; c < columns; ++c)
        row.push_back(columnValue(s, c));
    return row;
}

std::vector<SqlTableSchema> readSchema(Database &db)
{
    std::vector<SqlTableSchema> tables;
    Statement names(db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') "
                        "AND name NOT LIKE 'sqlite%' ORDER BY rowid");
    while (names.step())
        tables.push_back({QString::fromStdString(names.text(0)), {}});
    Statement columns(db, "SELECT name, type FROM pragma_table_info(?)");
    for (SqlTableSchema &t : tables) {
        const std::string name = t.name.toStdString();
        columns.bind(1, std::string_view(name));
        while (columns.step())
            t.columns << QString::fromStdString(columns.text(0) + " " + columns.text(1));
        columns.reset();
    }
    return tables;
}

// Keeps the connection known to cancel() while a statement may run on it.
class Attachment
{
public:
    explicit Attachment(std::function<void()> detach) : m_detach(std::move(detach)) { }
    ~Attachment() { m_detach(); }

private:
    std::function<void()> m_detach;
};

} // namespace

SqlQuery::SqlQuery(QString path, QString sql, int rowLimit, bool withSchema)
    : m_path(std::move(path)), m_sql(std::move(sql)), m_rowLimit(rowLimit), m_withSchema(withSchema)
{ }

SqlQuery::~SqlQuery() = default;

SqlResult SqlQuery::run()
{
    SqlResult result;
    QElapsedTimer timer;
    timer.start();
    try {
        const std::string path = m_path.toStdString();
        Database db(path, profiler::store::readOnlyUri(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                    "cannot open the trace for queries");
        db.exec("PRAGMA query_only = 1"); // a second guard, should the read-only open ever be lifted
        if (m_eventRuns && registerEventsTable(db.handle(), m_eventRuns) != SQLITE_OK)
            db.fail("the events table");
        if (m_withSchema) {
            result.schema = readSchema(db);
            if (m_eventRuns)
                result.schema.insert(result.schema.begin(), eventsTableSchema());
        }
        if (m_sql.trimmed().isEmpty()) {
            result.ok = true;
        } else {
            attach(db.handle());
            const Attachment attached([this] { detach(); });
            execute(db.handle(), result);
        }
    } catch (const Error &e) {
        result.error = QString::fromUtf8(e.what());
    } catch (const Refusal &r) {
        result.error = r.message;
    }
    result.elapsedMs = timer.elapsed();
    return result;
}

void SqlQuery::execute(sqlite3 *db, SqlResult &result)
{
    QString reason;
    sqlite3_set_authorizer(db, authorize, &reason);
    sqlite3_progress_handler(db, 10000, interruptWhenCancelled, this);
    const StatementPtr stmt = prepareOne(db, m_sql.toUtf8(), reason);
    const int columns = sqlite3_column_count(stmt.get());
    for (int c = 0; c < columns; ++c)
        result.columns << QString::fromUtf8(sqlite3_column_name(stmt.get(), c));
    int rc;
    while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
        if (result.totalRows == kCountCap) {
            result.totalIsLowerBound = true;
            break;
        }
        if (result.totalRows++ < m_rowLimit)
            result.rows.push_back(rowOf(stmt.get(), columns));
    }
    result.cancelled = isCancelled();
    result.ok = !result.cancelled && (rc == SQLITE_ROW || rc == SQLITE_DONE);
    if (!result.ok && !result.cancelled)
        result.error = QString::fromUtf8(sqlite3_errmsg(db));
}

void SqlQuery::attach(sqlite3 *db)
{
    std::lock_guard lock(m_mutex);
    m_db = db;
}

void SqlQuery::detach()
{
    std::lock_guard lock(m_mutex);
    m_db = nullptr;
}

void SqlQuery::cancel()
{
    m_cancelled = true;
    std::lock_guard lock(m_mutex);
    if (m_db)
        sqlite3_interrupt(m_db);
}

bool SqlQuery::isCancelled() const
{
    return m_cancelled.load(std::memory_order_relaxed);
}

} // namespace fusescope
