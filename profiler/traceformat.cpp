#include "profiler/traceformat.h"

#include <sqlite3.h>
#include <zlib.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

namespace fusescope {
namespace {

constexpr size_t kHeadBytes = 4096;

std::string readHead(const std::string &path, std::string &error)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        error = "no such file";
        return {};
    }
    if (std::filesystem::is_directory(status)) {
        error = "is a directory, not a file";
        return {};
    }
    // Opening a pipe waits for its writer, and what it gives cannot be read twice.
    if (!std::filesystem::is_regular_file(status)) {
        error = "is not a regular file (a pipe or a device): save the trace to a file first";
        return {};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = std::string("cannot be read: ") + std::strerror(errno);
        return {};
    }
    std::string head(kHeadBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    if (head.empty())
        error = "is empty";
    return head;
}

// Decompresses the start of a gzip file; enough to see the first JSON token.
std::string gunzipHead(const std::string &path, std::string &error)
{
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) {
        error = "cannot be opened as gzip";
        return {};
    }
    std::string out(kHeadBytes, '\0');
    const int n = gzread(gz, out.data(), static_cast<unsigned>(out.size()));
    if (n <= 0) {
        int errnum = 0;
        // gzerror's text belongs to the stream: copy it before gzclose.
        error = n < 0 ? std::string("is a corrupt gzip stream (") + gzerror(gz, &errnum) + ")"
                      : "is an empty gzip stream";
        gzclose(gz);
        return {};
    }
    gzclose(gz);
    out.resize(static_cast<size_t>(n));
    return out;
}

char firstNonSpace(const std::string &text)
{
    for (char c : text) {
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return c;
    }
    return '\0';
}

std::set<std::string> sqliteTables(const std::string &path, std::string &error)
{
    sqlite3 *raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    std::unique_ptr<sqlite3, int (*)(sqlite3 *)> db(raw, sqlite3_close);
    std::set<std::string> tables;
    if (rc != SQLITE_OK) {
        error = std::string("is not a readable SQLite database: ") + sqlite3_errstr(rc);
        return tables;
    }
    auto collect = [](void *ctx, int, char **values, char **) {
        static_cast<std::set<std::string> *>(ctx)->insert(values[0] ? values[0] : "");
        return 0;
    };
    char *msg = nullptr;
    if (sqlite3_exec(db.get(), "SELECT name FROM sqlite_master WHERE type='table'", collect, &tables, &msg)
        != SQLITE_OK) {
        error = std::string("is a corrupt SQLite database: ") + (msg ? msg : "unknown error");
        sqlite3_free(msg);
    }
    return tables;
}

FormatProbe probeSqlite(const std::string &path)
{
    FormatProbe probe;
    const auto tables = sqliteTables(path, probe.error);
    if (!probe.ok())
        return probe;
    if (tables.count("meta") && tables.count("runs"))
        probe.format = FileFormat::FsTrace;
    else if (tables.count("StringIds") && tables.count("TARGET_INFO_SESSION_START_TIME"))
        probe.format = FileFormat::NsysSqlite;
    else
        probe.error = "is an SQLite database but neither a Fusescope trace nor an Nsight Systems export";
    return probe;
}

// ModelProto starts with a protobuf field tag: ir_version (field 1, varint) in
// every exporter we know of, but any valid tag is accepted here; the importer
// does the real validation.
bool looksLikeProtobuf(const std::string &head)
{
    const auto tag = static_cast<unsigned char>(head[0]);
    const unsigned wireType = tag & 7u;
    return (tag >> 3) != 0 && (wireType <= 2 || wireType == 5);
}

bool hasSuffix(const std::string &s, const char *suffix)
{
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

FormatProbe probeFileFormat(const std::string &path)
{
    FormatProbe probe;
    const std::string head = readHead(path, probe.error);
    if (!probe.ok())
        return probe;
    static constexpr char kSqliteMagic[] = "SQLite format 3";
    if (head.compare(0, sizeof kSqliteMagic, kSqliteMagic, sizeof kSqliteMagic) == 0)
        return probeSqlite(path);

    std::string text = head;
    if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f
        && static_cast<unsigned char>(head[1]) == 0x8b) {
        probe.gzipped = true;
        text = gunzipHead(path, probe.error);
        if (!probe.ok())
            return probe;
    }
    const char first = firstNonSpace(text);
    if (first == '{' || first == '[') {
        probe.format = FileFormat::ChromeJson;
        return probe;
    }
    if (!probe.gzipped && hasSuffix(path, ".onnx") && looksLikeProtobuf(head)) {
        probe.format = FileFormat::Onnx;
        return probe;
    }
    probe.error = probe.gzipped ? "is gzip-compressed but does not hold JSON"
                                : "is not a format Fusescope opens (.fstrace, Kineto/Chrome .json[.gz], "
                                  "Nsight Systems .sqlite, .onnx)";
    return probe;
}

const char *fileFormatName(FileFormat format)
{
    switch (format) {
    case FileFormat::FsTrace:
        return "Fusescope trace";
    case FileFormat::NsysSqlite:
        return "Nsight Systems export";
    case FileFormat::ChromeJson:
        return "Kineto/Chrome trace";
    case FileFormat::Onnx:
        return "ONNX model";
    case FileFormat::Unknown:
        break;
    }
    return "unknown format";
}

} // namespace fusescope
