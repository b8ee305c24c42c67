#pragma once
// Internal to the Nsight Systems importer (the public API is importer.h):
// read-only access to an export's tables, whose set and columns vary with the
// exporter's schema version (2.x, 3.x; tables are created lazily, so any of
// them may be missing).

#include "profiler/importer.h"

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusescope::profiler::nsys {

// Thrown out of a row loop when ImportControl::cancel is set; importNsys
// turns it into std::nullopt.
struct Cancelled {
};

// One result row, valid while the visitor that received it runs.
class Row
{
public:
    explicit Row(sqlite3_stmt *stmt)
        : m_stmt(stmt)
    { }
    bool isNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
    int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }
    std::string text(int column) const;

private:
    sqlite3_stmt *m_stmt;
};

// An export opened read-only (immutable): nothing is written, not even a journal.
// Every failure is an Error naming the file and, for row reads, the table.
class ExportFile
{
public:
    ExportFile(const std::string &path, const ImportControl &control);
    ~ExportFile();
    ExportFile(const ExportFile &) = delete;
    ExportFile &operator=(const ExportFile &) = delete;

    const std::string &path() const { return m_path; }
    bool hasTable(const std::string &table) const { return m_tables.count(table) != 0; }
    bool hasColumn(const std::string &table, const std::string &column);
    // `column` when the table has it, otherwise `fallback` (an SQL expression).
    std::string columnOr(const std::string &table, const std::string &column, const std::string &fallback = "NULL");
    // Counts the rows of those tables that exist: the denominator of progress.
    void countRows(const std::vector<std::string> &tables);
    // Runs `sql`, which reads `table`, calling `visit` per row; polls the
    // cancel flag and reports progress every few thousand rows.
    void forEachRow(const std::string &table, const std::string &sql, const std::function<void(const Row &)> &visit);
    // id -> `column` ("name" or "label") of an ENUM_* table; empty when the table is absent.
    std::map<int64_t, std::string> enumValues(const std::string &table, const std::string &column);
    // Reports done == total: filtered queries read fewer rows than were counted.
    void reportDone();

private:
    [[noreturn]] void fail(const std::string &what) const;
    // `counted`: its rows are progress (the tables countRows counted), not schema or enum lookups.
    void query(const std::string &table, const std::string &sql, const std::function<void(const Row &)> &visit,
               bool counted);
    void readSchema();
    void tick(bool force);

    std::string m_path;
    const ImportControl &m_control;
    sqlite3 *m_db = nullptr;
    std::set<std::string> m_tables;
    std::map<std::string, std::set<std::string>> m_columns;
    uint64_t m_done = 0;
    uint64_t m_total = 0;
};

// The export's StringIds, interned into the trace's strings on first use.
class ExportStrings
{
public:
    void read(ExportFile &file);
    const std::string &text(int64_t id) const;
    StringId intern(int64_t id, StringTable &strings);

private:
    std::unordered_map<int64_t, std::string> m_text;
    std::unordered_map<int64_t, StringId> m_interned;
};

} // namespace fusescope::profiler::nsys
