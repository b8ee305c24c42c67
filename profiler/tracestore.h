#pragma once
// What the trace store's writer and reader share: the schema, the chunk
// encoding's constants and a thin SQLite wrapper that turns every SQLite error
// into a fusescope::Error naming the file. Internal to the store: the public
// headers are tracewriter.h and tracereader.h. docs/trace-format.md describes
// all of it for people who read the file with other tools.

#include "core/tensor/tensor.h" // fusescope::Error

#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace fusescope::profiler::store {

// Major: incompatible change, refused by older readers. Minor: additive.
inline constexpr int kSchemaMajor = 1;
inline constexpr int kSchemaMinor = 0;
// PRAGMA application_id, so `file` and other tools can tell the file apart.
inline constexpr int32_t kApplicationId = 0x46537472; // "FStr"

// At most this many events (or args) go into one chunk: small enough that a
// time-range query decodes little more than it returns (about 40 µs a chunk),
// large enough that SQLite's per-row and last-overflow-page overhead stays
// below a byte per event.
inline constexpr size_t kChunkEvents = 4096;

// The first byte of an event record: bits 0-3 the EventKind, bits 4-7 which
// optional fields follow.
inline constexpr uint8_t kKindMask = 0x0f;
inline constexpr uint8_t kHasDetail = 0x10;
inline constexpr uint8_t kHasArgs = 0x20;
inline constexpr uint8_t kHasFlops = 0x40;
inline constexpr uint8_t kHasBytes = 0x80;
// The copy-kind byte of an args record: bit 7 says "pinned".
inline constexpr uint8_t kPinnedBit = 0x80;

// Schema v1.0. Integers are SQLite's 64-bit signed; unsigned 64-bit values
// (addresses, flow ids) are stored bit for bit. NULL = an invalid id.
inline constexpr const char *kSchemaSql = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE enum_names(enum TEXT NOT NULL, value INTEGER NOT NULL, name TEXT NOT NULL,
                        PRIMARY KEY(enum, value)) WITHOUT ROWID;
CREATE TABLE strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,
                  origin_ns INTEGER NOT NULL, wall_start_unix_ns INTEGER NOT NULL, options TEXT NOT NULL,
                  ended INTEGER NOT NULL, complete INTEGER NOT NULL, duration_ns INTEGER NOT NULL,
                  events INTEGER NOT NULL, steps INTEGER NOT NULL, dropped_events INTEGER NOT NULL);
CREATE TABLE run_values(run INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                        PRIMARY KEY(run, key)) WITHOUT ROWID;
CREATE TABLE tracks(run INTEGER NOT NULL, id INTEGER NOT NULL, kind INTEGER NOT NULL, name INTEGER NOT NULL,
                    pid INTEGER NOT NULL, tid INTEGER NOT NULL, device INTEGER NOT NULL,
                    sort_index INTEGER NOT NULL, PRIMARY KEY(run, id)) WITHOUT ROWID;
CREATE TABLE event_chunks(run INTEGER NOT NULL, track INTEGER NOT NULL, first_event INTEGER NOT NULL,
                          count INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
                          span_class INTEGER NOT NULL, data BLOB NOT NULL);
CREATE UNIQUE INDEX event_chunks_by_id ON event_chunks(run, first_event);
CREATE INDEX event_chunks_by_time ON event_chunks(run, track, span_class, start_ns);
CREATE TABLE args_chunks(run INTEGER NOT NULL, first_args INTEGER NOT NULL, count INTEGER NOT NULL,
                         data BLOB NOT NULL);
CREATE UNIQUE INDEX args_chunks_by_id ON args_chunks(run, first_args);
CREATE TABLE allocations(run INTEGER NOT NULL, time_ns INTEGER NOT NULL, address INTEGER NOT NULL,
                         bytes INTEGER NOT NULL, allocated_after INTEGER NOT NULL,
                         reserved_after INTEGER NOT NULL, op INTEGER, track INTEGER, device INTEGER NOT NULL);
CREATE INDEX allocations_by_time ON allocations(run, time_ns);
CREATE TABLE flows(run INTEGER NOT NULL, id INTEGER NOT NULL, from_event INTEGER, to_event INTEGER,
                   kind INTEGER NOT NULL);
CREATE INDEX flows_by_run ON flows(run);
CREATE TABLE counters(run INTEGER NOT NULL, track INTEGER NOT NULL, time_ns INTEGER NOT NULL,
                      value REAL NOT NULL);
CREATE INDEX counters_by_track ON counters(run, track, time_ns);
CREATE TABLE compile_stages(run INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,
                            segment INTEGER NOT NULL, duration_ms REAL NOT NULL, graph_json TEXT NOT NULL,
                            details_json TEXT NOT NULL, code TEXT NOT NULL,
                            nodes INTEGER NOT NULL, kernels INTEGER NOT NULL, bytes_moved REAL NOT NULL,
                            planned_peak INTEGER NOT NULL, unplanned_peak INTEGER NOT NULL,
                            PRIMARY KEY(run, position)) WITHOUT ROWID;
CREATE TABLE compile_log(run INTEGER NOT NULL, position INTEGER NOT NULL, line INTEGER NOT NULL,
                         text TEXT NOT NULL, PRIMARY KEY(run, position, line)) WITHOUT ROWID;
CREATE TABLE lod(run INTEGER NOT NULL, track INTEGER NOT NULL, level INTEGER NOT NULL, bucket INTEGER NOT NULL,
                 count INTEGER NOT NULL, busy_ns INTEGER NOT NULL, max_depth INTEGER NOT NULL,
                 PRIMARY KEY(run, track, level, bucket)) WITHOUT ROWID;
)sql";

// "file:/a%20b.fstrace?mode=ro": a path made safe for an SQLite URI.
inline std::string readOnlyUri(std::string_view path)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string uri = "file:";
    for (const char c : path) {
        if (c == '%' || c == '?' || c == '#' || c == ' ') {
            const auto u = static_cast<unsigned char>(c);
            uri += '%';
            uri += kHex[u >> 4];
            uri += kHex[u & 15];
        } else {
            uri += c;
        }
    }
    return uri + "?mode=ro";
}

// One open database; every failure throws an Error naming the file and SQLite's message.
class Database
{
public:
    // `failure` says what opening means to the user ("cannot create the trace file").
    Database(std::string path, const std::string &filename, int flags, std::string_view failure)
        : m_path(std::move(path))
    {
        const int rc = sqlite3_open_v2(filename.c_str(), &m_db, flags, nullptr);
        if (rc != SQLITE_OK) {
            const std::string message = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
            sqlite3_close(m_db);
            m_db = nullptr;
            throw Error(m_path + ": " + std::string(failure) + ": " + message);
        }
        sqlite3_extended_result_codes(m_db, 1);
    }
    ~Database() { sqlite3_close_v2(m_db); }
    Database(const Database &) = delete;
    Database &operator=(const Database &) = delete;

    sqlite3 *handle() const { return m_db; }
    const std::string &path() const { return m_path; }
    void exec(const char *sql)
    {
        if (sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
            fail(sql);
    }
    // "PATH: database or disk is full (COMMIT)": SQLite's message, then what failed.
    [[noreturn]] void fail(std::string_view what) const { fail(what, sqlite3_errmsg(m_db)); }
    [[noreturn]] void fail(std::string_view what, const std::string &message) const
    {
        throw Error(m_path + ": " + message + " (" + std::string(what) + ")");
    }

private:
    std::string m_path;
    sqlite3 *m_db = nullptr;
};

// A prepared statement; reset() lets a writer reuse it batch after batch.
class Statement
{
public:
    Statement(Database &db, const char *sql)
        : m_db(db)
    {
        if (sqlite3_prepare_v3(db.handle(), sql, -1, SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr) != SQLITE_OK)
            db.fail(sql);
    }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    Statement &bind(int index, int64_t value) { return check(sqlite3_bind_int64(m_stmt, index, value)); }
    Statement &bind(int index, double value) { return check(sqlite3_bind_double(m_stmt, index, value)); }
    Statement &bind(int index, std::string_view text)
    {
        return check(sqlite3_bind_text64(m_stmt, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8));
    }
    // The bytes must stay alive until the statement has run.
    Statement &bindBlob(int index, std::span<const uint8_t> bytes)
    {
        return check(sqlite3_bind_blob64(m_stmt, index, bytes.data(), bytes.size(), SQLITE_STATIC));
    }
    Statement &bindNull(int index) { return check(sqlite3_bind_null(m_stmt, index)); }
    // True while there is a row; false when done.
    bool step()
    {
        const int rc = sqlite3_step(m_stmt);
        if (rc == SQLITE_ROW)
            return true;
        if (rc != SQLITE_DONE) {
            // A failed statement must be reset before its next use; that may change the message.
            const std::string message = sqlite3_errmsg(m_db.handle());
            sqlite3_reset(m_stmt);
            m_db.fail(sqlite3_sql(m_stmt), message);
        }
        return false;
    }
    // Runs a statement that returns no rows, then makes it ready for the next.
    void run()
    {
        step();
        reset();
    }
    void reset()
    {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    }

    bool isNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
    int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }
    double real(int column) const { return sqlite3_column_double(m_stmt, column); }
    std::string text(int column) const
    {
        const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
        return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))) : std::string();
    }
    // Valid until the next step() or reset().
    std::span<const uint8_t> blob(int column) const
    {
        const auto *p = static_cast<const uint8_t *>(sqlite3_column_blob(m_stmt, column));
        return {p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
    }

private:
    Statement &check(int rc)
    {
        if (rc != SQLITE_OK)
            m_db.fail(sqlite3_sql(m_stmt));
        return *this;
    }

    Database &m_db;
    sqlite3_stmt *m_stmt = nullptr;
};

// BEGIN IMMEDIATE … COMMIT; rolls back when left without a commit (an exception).
class Transaction
{
public:
    explicit Transaction(Database &db)
        : m_db(db)
    {
        db.exec("BEGIN IMMEDIATE");
    }
    ~Transaction()
    {
        if (!m_done)
            sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
    Transaction(const Transaction &) = delete;
    Transaction &operator=(const Transaction &) = delete;
    void commit()
    {
        m_db.exec("COMMIT");
        m_done = true;
    }

private:
    Database &m_db;
    bool m_done = false;
};

} // namespace fusescope::profiler::store
