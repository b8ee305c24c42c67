#include "profiler/nsysimport.h"

#include "profiler/filecheck.h"
#include "profiler/tracestore.h" // store::readOnlyUri

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fusescope::profiler::nsys {
namespace {

// Cancel is polled and progress reported once per this many rows: often
// enough to answer within milliseconds, rarely enough to cost nothing.
constexpr uint64_t kRowsPerTick = 4096;

using StatementPtr = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt *)>;

uint32_t bigEndian(const unsigned char *bytes, int size)
{
    uint32_t v = 0;
    for (int i = 0; i < size; ++i)
        v = v << 8 | bytes[i];
    return v;
}

// What SQLite would only say vaguely, or late: said up front with the path.
void checkFile(const std::string &path)
{
    checkFileIsThere(path, "an Nsight Systems export");
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    unsigned char head[100] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char *>(head), sizeof head);
    static constexpr char kMagic[] = "SQLite format 3"; // with its NUL: 16 bytes
    if (in.gcount() < 16 || std::memcmp(head, kMagic, sizeof kMagic) != 0)
        throw Error(path + ": is not an SQLite database, so not an Nsight Systems export");
    if (in.gcount() < 100)
        throw Error(path + ": is truncated (" + std::to_string(size) + " bytes, shorter than an SQLite header)");
    // The page count in the header is valid only when the change counter matches "version valid for".
    const uint32_t pageSize = bigEndian(head + 16, 2) == 1 ? 65536 : bigEndian(head + 16, 2);
    const uint64_t expected = uint64_t(pageSize) * bigEndian(head + 28, 4);
    if (bigEndian(head + 24, 4) == bigEndian(head + 92, 4) && size < expected)
        throw Error(path + ": is truncated (" + std::to_string(size) + " bytes, its header says "
                    + std::to_string(expected) + "); it was cut off while being copied or written");
}

std::string quoted(const std::string &name)
{
    std::string q = "\"";
    for (char c : name)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

} // namespace

std::string Row::text(int column) const
{
    const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))) : std::string();
}

ExportFile::ExportFile(const std::string &path, const ImportControl &control)
    : m_path(path)
    , m_control(control)
{
    checkFile(path);
    // immutable=1: SQLite takes no locks and never looks for or writes a journal.
    const std::string uri = store::readOnlyUri(path) + "&immutable=1";
    const int rc = sqlite3_open_v2(uri.c_str(), &m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    try {
        if (rc != SQLITE_OK)
            fail(std::string("cannot be opened: ") + (m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc)));
        sqlite3_exec(m_db, "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
        readSchema();
    } catch (...) {
        // A constructor that throws gets no destructor: close the handle here
        // (SQLite allocates one even when the open fails).
        sqlite3_close_v2(m_db);
        throw;
    }
}

ExportFile::~ExportFile()
{
    sqlite3_close_v2(m_db);
}

void ExportFile::fail(const std::string &what) const
{
    throw Error(m_path + ": " + what);
}

void ExportFile::readSchema()
{
    query(
        "sqlite_master", "SELECT name FROM sqlite_master WHERE type = 'table'",
        [this](const Row &row) { m_tables.insert(row.text(0)); }, false);
    bool activity = hasTable("NVTX_EVENTS");
    for (const std::string &table : m_tables)
        activity = activity || table.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0;
    if (!hasTable("StringIds") || !activity)
        fail("is not an Nsight Systems export (no Nsight Systems tables: expected StringIds and at least one "
             "CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table)");
}

bool ExportFile::hasColumn(const std::string &table, const std::string &column)
{
    if (!hasTable(table))
        return false;
    const auto found = m_columns.try_emplace(table);
    std::set<std::string> &columns = found.first->second; // a plain reference: lambdas may capture it (C++17 forbids bindings)
    if (found.second) {
        query(
            table, "SELECT name FROM pragma_table_info(" + quoted(table) + ")",
            [&](const Row &row) { columns.insert(row.text(0)); }, false);
    }
    return columns.count(column) != 0;
}

std::string ExportFile::columnOr(const std::string &table, const std::string &column, const std::string &fallback)
{
    return hasColumn(table, column) ? quoted(column) : fallback;
}

void ExportFile::countRows(const std::vector<std::string> &tables)
{
    uint64_t total = 0;
    for (const std::string &table : tables) {
        if (hasTable(table))
            query(
                table, "SELECT count(*) FROM " + quoted(table),
                [&](const Row &row) { total += uint64_t(std::max<int64_t>(0, row.integer(0))); }, false);
    }
    m_done = 0;
    m_total = total;
    tick(true);
}

void ExportFile::forEachRow(const std::string &table, const std::string &sql,
                            const std::function<void(const Row &)> &visit)
{
    query(table, sql, visit, true);
}

void ExportFile::query(const std::string &table, const std::string &sql, const std::function<void(const Row &)> &visit,
                       bool counted)
{
    tick(true);
    sqlite3_stmt *raw = nullptr;
    const int prepared = sqlite3_prepare_v2(m_db, sql.c_str(), -1, &raw, nullptr);
    StatementPtr stmt(raw, sqlite3_finalize);
    if (prepared != SQLITE_OK)
        fail("cannot read table " + table + ": " + sqlite3_errmsg(m_db));
    int rc;
    while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
        visit(Row(stmt.get()));
        if (counted && ++m_done % kRowsPerTick == 0)
            tick(false);
    }
    if (rc != SQLITE_DONE)
        fail("cannot read table " + table + ": " + sqlite3_errmsg(m_db));
}

void ExportFile::tick(bool force)
{
    if (m_control.cancel && m_control.cancel->load(std::memory_order_relaxed))
        throw Cancelled {};
    if (m_control.progress && m_total > 0 && (force || m_done % kRowsPerTick == 0))
        m_control.progress(std::min(m_done, m_total), m_total);
}

void ExportFile::reportDone()
{
    m_done = m_total;
    tick(true);
}

std::map<int64_t, std::string> ExportFile::enumValues(const std::string &table, const std::string &column)
{
    std::map<int64_t, std::string> values;
    if (hasColumn(table, "id") && hasColumn(table, column)) {
        query(
            table, "SELECT id, " + quoted(column) + " FROM " + quoted(table),
            [&](const Row &row) { values[row.integer(0)] = row.text(1); }, false);
    }
    return values;
}

void ExportStrings::read(ExportFile &file)
{
    file.forEachRow("StringIds", "SELECT id, value FROM StringIds",
                    [this](const Row &row) { m_text[row.integer(0)] = row.text(1); });
}

const std::string &ExportStrings::text(int64_t id) const
{
    static const std::string kEmpty;
    auto it = m_text.find(id);
    return it != m_text.end() ? it->second : kEmpty;
}

StringId ExportStrings::intern(int64_t id, StringTable &strings)
{
    auto [it, added] = m_interned.try_emplace(id);
    if (added)
        it->second = strings.intern(text(id));
    return it->second;
}

} // namespace fusescope::profiler::nsys
