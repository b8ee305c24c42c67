#include "views/sqleventstable.h"

#include "views/sqlquery.h"

#include <sqlite3.h>

namespace fusescope {

namespace {

enum Column { RunColumn, IdColumn, TrackColumn, KindColumn, NameColumn, StartColumn, DurColumn, EndColumn, DepthColumn,
              DetailColumn, FlopsColumn, BytesColumn };

constexpr const char *kDeclaration =
    "CREATE TABLE x(run INTEGER, id INTEGER, track INTEGER, kind TEXT, name TEXT, start_ns INTEGER, dur_ns INTEGER, "
    "end_ns INTEGER, depth INTEGER, detail TEXT, flops REAL, bytes REAL)";

struct Table {
    sqlite3_vtab base{};
    std::shared_ptr<const SqlEventRuns> runs;
};

// Walks every event of every run, run after run.
struct Cursor {
    sqlite3_vtab_cursor base{};
    const SqlEventRuns *runs = nullptr;
    size_t run = 0;
    size_t event = 0;

    const profiler::Trace &trace() const { return *(*runs)[run].trace; }
    const profiler::Event &current() const { return trace().runs.front().events[event]; }
    void skipEmptyRuns()
    {
        while (run < runs->size() && event >= (*runs)[run].trace->runs.front().events.size()) {
            ++run;
            event = 0;
        }
    }
};

int connect(sqlite3 *db, void *aux, int, const char *const *, sqlite3_vtab **out, char **)
{
    const int rc = sqlite3_declare_vtab(db, kDeclaration);
    if (rc != SQLITE_OK)
        return rc;
    auto *table = new Table;
    table->runs = *static_cast<std::shared_ptr<const SqlEventRuns> *>(aux);
    *out = &table->base;
    return SQLITE_OK;
}

int disconnect(sqlite3_vtab *vtab)
{
    delete reinterpret_cast<Table *>(vtab);
    return SQLITE_OK;
}

// A full scan: SQLite filters; the cost tells the planner the table is large.
int bestIndex(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    double rows = 0;
    for (const SqlEventRun &r : *reinterpret_cast<Table *>(vtab)->runs)
        rows += double(r.trace->runs.front().events.size());
    info->estimatedCost = rows + 1;
    info->estimatedRows = sqlite3_int64(rows);
    return SQLITE_OK;
}

int open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    auto *cursor = new Cursor;
    cursor->runs = reinterpret_cast<Table *>(vtab)->runs.get();
    *out = &cursor->base;
    return SQLITE_OK;
}

int close(sqlite3_vtab_cursor *c)
{
    delete reinterpret_cast<Cursor *>(c);
    return SQLITE_OK;
}

int filter(sqlite3_vtab_cursor *c, int, const char *, int, sqlite3_value **)
{
    auto *cursor = reinterpret_cast<Cursor *>(c);
    cursor->run = 0;
    cursor->event = 0;
    cursor->skipEmptyRuns();
    return SQLITE_OK;
}

int next(sqlite3_vtab_cursor *c)
{
    auto *cursor = reinterpret_cast<Cursor *>(c);
    ++cursor->event;
    cursor->skipEmptyRuns();
    return SQLITE_OK;
}

int eof(sqlite3_vtab_cursor *c)
{
    const auto *cursor = reinterpret_cast<const Cursor *>(c);
    return cursor->run >= cursor->runs->size();
}

// The trace outlives the statement, so its strings are handed over without a copy.
void text(sqlite3_context *ctx, const std::string &s)
{
    sqlite3_result_text64(ctx, s.data(), s.size(), SQLITE_STATIC, SQLITE_UTF8);
}

int column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int column)
{
    const auto *cursor = reinterpret_cast<const Cursor *>(c);
    const profiler::Event &e = cursor->current();
    switch (column) {
    case RunColumn: sqlite3_result_int64(ctx, (*cursor->runs)[cursor->run].run); break;
    case IdColumn: sqlite3_result_int64(ctx, sqlite3_int64(cursor->event)); break;
    case TrackColumn: sqlite3_result_int64(ctx, e.track.value); break;
    case KindColumn: sqlite3_result_text(ctx, profiler::eventKindName(e.kind), -1, SQLITE_STATIC); break;
    case NameColumn: text(ctx, cursor->trace().strings[e.name]); break;
    case StartColumn: sqlite3_result_int64(ctx, e.start); break;
    case DurColumn: sqlite3_result_int64(ctx, e.duration); break;
    case EndColumn: sqlite3_result_int64(ctx, e.end()); break;
    case DepthColumn: sqlite3_result_int64(ctx, e.depth); break;
    case DetailColumn: text(ctx, cursor->trace().strings[e.detail]); break;
    case FlopsColumn: sqlite3_result_double(ctx, e.flops); break;
    default: sqlite3_result_double(ctx, e.bytes); break;
    }
    return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *out)
{
    const auto *cursor = reinterpret_cast<const Cursor *>(c);
    sqlite3_int64 before = 0;
    for (size_t r = 0; r < cursor->run; ++r)
        before += sqlite3_int64((*cursor->runs)[r].trace->runs.front().events.size());
    *out = before + sqlite3_int64(cursor->event);
    return SQLITE_OK;
}

sqlite3_module eventsModule()
{
    sqlite3_module m{};
    m.iVersion = 1;
    m.xCreate = nullptr; // eponymous only: `events` exists without CREATE VIRTUAL TABLE, which a read-only file forbids
    m.xConnect = connect;
    m.xBestIndex = bestIndex;
    m.xDisconnect = disconnect;
    m.xOpen = open;
    m.xClose = close;
    m.xFilter = filter;
    m.xNext = next;
    m.xEof = eof;
    m.xColumn = column;
    m.xRowid = rowid;
    return m;
}

} // namespace

int registerEventsTable(sqlite3 *db, std::shared_ptr<const SqlEventRuns> runs)
{
    static const sqlite3_module module = eventsModule();
    auto *aux = new std::shared_ptr<const SqlEventRuns>(std::move(runs));
    return sqlite3_create_module_v2(db, "events", &module, aux,
                                    [](void *p) { delete static_cast<std::shared_ptr<const SqlEventRuns> *>(p); });
}

SqlTableSchema eventsTableSchema()
{
    return {QStringLiteral("events"),
            {QStringLiteral("run INTEGER"), QStringLiteral("id INTEGER"), QStringLiteral("track INTEGER"),
             QStringLiteral("kind TEXT"), QStringLiteral("name TEXT"), QStringLiteral("start_ns INTEGER"),
             QStringLiteral("dur_ns INTEGER"), QStringLiteral("end_ns INTEGER"), QStringLiteral("depth INTEGER"),
             QStringLiteral("detail TEXT"), QStringLiteral("flops REAL"), QStringLiteral("bytes REAL")}};
}

} // namespace fusescope
