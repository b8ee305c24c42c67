#include "profiler/tracereader.h"

#include "profiler/filecheck.h"
#include "profiler/tracestore.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>

namespace fusescope::profiler {

using store::Statement;

namespace {

// Reads what tracewriter.cpp's encoders wrote; running past the end marks the
// reader bad instead of reading out of bounds, so a corrupt chunk is reported.
struct ByteReader {
    const uint8_t *p;
    const uint8_t *end;
    bool bad = false;

    uint8_t byte()
    {
        if (p == end) {
            bad = true;
            return 0;
        }
        return *p++;
    }
    uint64_t varint()
    {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            const uint8_t b = byte();
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
        bad = true;
        return v;
    }
    int64_t zigzag()
    {
        const uint64_t v = varint();
        return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
    }
    float f32()
    {
        uint32_t bits = 0;
        for (int i = 0; i < 4; ++i)
            bits |= uint32_t(byte()) << (8 * i);
        return std::bit_cast<float>(bits);
    }
    bool done() const { return !bad && p == end; }
};

// The smallest records (head, depth, three one-byte varints; ten one-byte
// varints and the copy byte): a count the bytes cannot hold is corrupt, and
// is caught before anything is allocated for it.
constexpr size_t kMinEventBytes = 5;
constexpr size_t kMinArgsBytes = 12;

bool plausible(int64_t count, size_t bytes, size_t minRecord)
{
    return count >= 0 && uint64_t(count) <= bytes / minRecord;
}

ByteReader readerOf(std::span<const uint8_t> data)
{
    return {data.data(), data.data() + data.size()};
}

// `out` receives exactly `count` events; false when the bytes do not hold them.
bool decodeEvents(std::span<const uint8_t> data, TrackId track, int64_t base, Event *out, size_t count)
{
    ByteReader in = readerOf(data);
    int64_t start = base;
    uint32_t args = 0;
    for (size_t i = 0; i < count && !in.bad; ++i) {
        Event &e = out[i];
        const uint8_t head = in.byte();
        e.kind = static_cast<EventKind>(head & store::kKindMask);
        e.depth = in.byte();
        e.track = track;
        start += static_cast<int64_t>(in.varint());
        e.start = start;
        e.duration = static_cast<int64_t>(in.varint());
        e.name = StringId(static_cast<uint32_t>(in.varint() - 1));
        e.detail = (head & store::kHasDetail) ? StringId(static_cast<uint32_t>(in.varint())) : StringId();
        if (head & store::kHasArgs) {
            args += static_cast<uint32_t>(in.varint());
            e.args = ArgsId(args);
        } else {
            e.args = ArgsId();
        }
        e.flops = (head & store::kHasFlops) ? in.f32() : 0.0f;
        e.bytes = (head & store::kHasBytes) ? in.f32() : 0.0f;
    }
    return in.done();
}

bool decodeArgs(std::span<const uint8_t> data, EventArgs *out, size_t count)
{
    ByteReader in = readerOf(data);
    int64_t correlation = -1, external = -1;
    for (size_t i = 0; i < count && !in.bad; ++i) {
        EventArgs &a = out[i];
        a.correlation = correlation += in.zigzag();
        a.externalId = external += in.zigzag();
        for (int32_t *field :
             {&a.device, &a.stream, &a.grid[0], &a.grid[1], &a.grid[2], &a.block[0], &a.block[1], &a.block[2]})
            *field = static_cast<int32_t>(in.zigzag());
        const uint8_t copy = in.byte();
        a.copyKind = static_cast<CopyKind>(copy & ~store::kPinnedBit);
        a.pinned = (copy & store::kPinnedBit) != 0;
        a.extra = StringId(static_cast<uint32_t>(in.varint() - 1));
    }
    return in.done();
}

// Reports progress at most every 1 % and tells a cancelled load apart.
class Progress
{
public:
    Progress(const LoadControl &control, int64_t total)
        : m_control(control)
        , m_total(std::max<int64_t>(total, 1))
    { }
    // False once cancelled.
    bool advance(int64_t done)
    {
        m_done += done;
        const double fraction = std::min(1.0, double(m_done) / double(m_total));
        if (m_control.progress && (fraction - m_reported >= 0.01 || (fraction == 1.0 && m_reported < 1.0))) {
            m_reported = fraction;
            m_control.progress(fraction);
        }
        return !(m_control.cancel && m_control.cancel->load(std::memory_order_relaxed));
    }
    // A load that read no events says 1.0 too.
    void finish() { advance(m_total); }

private:
    const LoadControl &m_control;
    int64_t m_total;
    int64_t m_done = 0;
    double m_reported = -1;
};

} // namespace

struct TraceReader::State {
    explicit State(const std::string &path)
        : db(path, store::readOnlyUri(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
             "cannot open the file")
    { }

    void identify();
    SchemaVersion readSchemaVersion();
    void readMeta();
    void readRuns();
    void checkRun(int run) const;
    [[noreturn]] void corrupt(const std::string &what) const { db.fail(what, "the trace is corrupt"); }

    void loadStrings(StringTable &into);
    std::vector<Track> tracks(int run);
    bool loadEvents(int run, std::vector<Event> &events, Progress &progress);
    size_t chunkEvents(int run, const Statement &row) const;
    void decodeEventChunk(int run, const Statement &row, Event *out);
    void decodeEventChunk(int run, const Statement &row, std::vector<Event> &out);
    std::vector<std::pair<EventId, Event>> overlapping(int run, TrackId track, int64_t t0, int64_t t1);
    bool loadArgs(int run, std::vector<EventArgs> &args);
    void loadAllocations(int run, std::vector<Allocation> &out);
    void loadFlowsAndCounters(int run, Run &into);
    CompileStages compileStages(int run);
    bool loadRun(int run, Trace &into, Progress &progress);
    const std::vector<int> &spanClasses(int run, TrackId track);
    std::vector<LodLevel> computeLod(int run, TrackId track);

    store::Database db;
    TraceMeta meta;
    SchemaVersion version;
    std::vector<RunListing> runs;
    std::vector<bool> ended; // endRun() was reached: the LOD rows are there
    std::optional<StringTable> strings;
    std::map<std::pair<int, TrackId>, std::vector<int>> classes;
    std::map<std::pair<int, TrackId>, std::vector<LodLevel>> computedLod;
};

namespace {

// The start of an SQLite file, up to its 100-byte header; empty when the file is not SQLite.
std::vector<uint8_t> sqliteHeader(const std::string &path)
{
    static constexpr char kMagic[] = "SQLite format 3"; // with its NUL: 16 bytes
    std::vector<uint8_t> head(100);
    std::FILE *f = std::fopen(path.c_str(), "rb");
    const size_t n = f ? std::fread(head.data(), 1, head.size(), f) : 0;
    if (f)
        std::fclose(f);
    if (n < sizeof kMagic || !std::equal(kMagic, kMagic + sizeof kMagic, head.begin()))
        return {};
    head.resize(n);
    return head;
}

uint32_t bigEndian(const std::vector<uint8_t> &bytes, size_t at, int size)
{
    uint32_t v = 0;
    for (int i = 0; i < size; ++i)
        v = v << 8 | bytes[at + size_t(i)];
    return v;
}

// A file cut short by a copy fails late and vaguely in SQLite ("malformed");
// its header still says how long it should be. Read before SQLite, which
// fails on the schema first. Pages still in a -wal file (a killed writer)
// legitimately lie beyond the main file's end.
void checkNotTruncated(const std::string &path)
{
    const std::vector<uint8_t> head = sqliteHeader(path);
    std::error_code ec;
    const auto wal = std::filesystem::file_size(path + "-wal", ec);
    if (head.size() < 100 || (!ec && wal > 0))
        return;
    const uint32_t pageSize = bigEndian(head, 16, 2) == 1 ? 65536 : bigEndian(head, 16, 2);
    const uint32_t pages = bigEndian(head, 28, 4);
    // The size field is valid only when the change counter matches "version valid for".
    if (pages == 0 || bigEndian(head, 24, 4) != bigEndian(head, 92, 4))
        return;
    const uintmax_t expected = uintmax_t(pageSize) * pages, actual = std::filesystem::file_size(path, ec);
    if (!ec && actual < expected)
        throw Error(path + ": is truncated (" + std::to_string(actual) + " bytes, its header says "
                    + std::to_string(expected) + "); it was cut off while being copied or written");
}

SchemaVersion parseVersion(const std::string &text)
{
    SchemaVersion v {-1, -1};
    char tail = 0;
    if (std::sscanf(text.c_str(), "%d.%d%c", &v.major, &v.minor, &tail) != 2)
        return {-1, -1};
    return v;
}

} // namespace

// Tells a Fusescope trace from other files with a sentence a person can act on.
void TraceReader::State::identify()
{
    char *message = nullptr;
    const int rc = sqlite3_exec(db.handle(), "SELECT count(*) FROM sqlite_master", nullptr, nullptr, &message);
    const std::string detail = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    if ((rc & 0xff) == SQLITE_NOTADB && !sqliteHeader(db.path()).empty())
        throw Error(db.path() + ": is a damaged or truncated SQLite database: " + detail);
    if ((rc & 0xff) == SQLITE_NOTADB)
        throw Error(db.path() + ": is not a Fusescope trace (not an SQLite database)");
    if (rc != SQLITE_OK)
        throw Error(db.path() + ": is a damaged SQLite database: " + detail);
    // Another program may have tables called meta and runs too: look at the columns.
    Statement columns(db,
                      "SELECT (SELECT count(*) FROM pragma_table_info('meta') WHERE name IN ('key', 'value')) "
                      "+ (SELECT count(*) FROM pragma_table_info('runs') WHERE name IN ('id', 'ended'))");
    columns.step();
    if (columns.integer(0) != 4)
        throw Error(db.path() + ": is an SQLite database but not a Fusescope trace (no meta and runs tables)");
}

SchemaVersion TraceReader::State::readSchemaVersion()
{
    Statement q(db, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (!q.step())
        throw Error(db.path() + ": is an SQLite database but not a Fusescope trace (no schema_version in meta)");
    const std::string text = q.text(0);
    const SchemaVersion v = parseVersion(text);
    if (v.major < 0)
        throw Error(db.path() + ": has an unreadable trace schema version '" + text + "'");
    const std::string supported = std::to_string(store::kSchemaMajor) + ".x";
    if (v.major > store::kSchemaMajor)
        throw Error(db.path() + ": trace schema version " + text + " is newer than this Fusescope reads (" + supported
                    + "); update Fusescope");
    if (v.major < store::kSchemaMajor)
        throw Error(db.path() + ": trace schema version " + text + " is older than this Fusescope reads (" + supported
                    + ")");
    return v;
}

void TraceReader::State::readMeta()
{
    Statement q(db, "SELECT key, value FROM meta");
    std::map<std::string, std::string> values;
    while (q.step())
        values[q.text(0)] = q.text(1);
    meta.schemaVersion = version.major;
    meta.producer = values["producer"];
    meta.host = values["host"];
    meta.cpuModel = values["cpu_model"];
    meta.gpu = values["gpu"];
    meta.createdUtc = values["created_utc"];
    meta.commandLine = values["command_line"];
}

void TraceReader::State::readRuns()
{
    Statement q(db,
                "SELECT id, name, model, mode, origin_ns, wall_start_unix_ns, options, ended, complete, "
                "duration_ns, events, steps, dropped_events FROM runs ORDER BY id");
    while (q.step()) {
        if (q.integer(0) != int64_t(runs.size()))
            corrupt("runs are not numbered 0, 1, 2 …");
        RunListing &r = runs.emplace_back();
        r.info = {q.text(1), q.text(2), q.text(3), q.integer(4), q.integer(5), q.text(6)};
        ended.push_back(q.integer(7) != 0);
        r.summary = {q.integer(9), q.integer(10), q.integer(11), q.integer(12), ended.back() && q.integer(8) != 0};
    }
    Statement values(db, "SELECT run, key, value FROM run_values");
    while (values.step()) {
        const int64_t run = values.integer(0);
        if (run >= 0 && run < int64_t(runs.size()))
            runs[size_t(run)].values[values.text(1)] = values.text(2);
    }
}

void TraceReader::State::checkRun(int run) const
{
    if (run < 0 || run >= int(runs.size()))
        throw Error(db.path() + ": has no run " + std::to_string(run) + " (it has " + std::to_string(runs.size())
                    + ")");
}

void TraceReader::State::loadStrings(StringTable &into)
{
    Statement q(db, "SELECT id, value FROM strings ORDER BY id");
    while (q.step()) {
        const int64_t id = q.integer(0);
        if (id == 0)
            continue; // every StringTable starts with ""
        if (id != int64_t(into.size()))
            corrupt("string " + std::to_string(into.size()) + " is missing");
        into.push(q.text(1));
    }
}

std::vector<Track> TraceReader::State::tracks(int run)
{
    Statement q(db, "SELECT id, kind, name, pid, tid, device, sort_index FROM tracks WHERE run = ? ORDER BY id");
    q.bind(1, int64_t(run));
    std::vector<Track> out;
    while (q.step()) {
        const auto id = static_cast<uint16_t>(q.integer(0));
        // Ids are indexes; a gap (never written) gets a placeholder with its id.
        while (out.size() <= id)
            out.emplace_back().id = TrackId(static_cast<uint16_t>(out.size() - 1));
        out[id] = {TrackId(id),
                   static_cast<TrackKind>(q.integer(1)),
                   StringId(static_cast<uint32_t>(q.integer(2))),
                   q.integer(3),
                   q.integer(4),
                   static_cast<int32_t>(q.integer(5)),
                   static_cast<int32_t>(q.integer(6))};
    }
    return out;
}

// Columns of `row`: track, first_event, count, start_ns, data.
size_t TraceReader::State::chunkEvents(int run, const Statement &row) const
{
    if (!plausible(row.integer(2), row.blob(4).size(), kMinEventBytes))
        corrupt("the event chunk of run " + std::to_string(run) + " from event " + std::to_string(row.integer(1))
                + " has a wrong count");
    return static_cast<size_t>(row.integer(2));
}

void TraceReader::State::decodeEventChunk(int run, const Statement &row, Event *out)
{
    const auto track = TrackId(static_cast<uint16_t>(row.integer(0)));
    if (!decodeEvents(row.blob(4), track, row.integer(3), out, chunkEvents(run, row)))
        corrupt("the event chunk of run " + std::to_string(run) + " from event " + std::to_string(row.integer(1))
                + " does not decode");
}

void TraceReader::State::decodeEventChunk(int run, const Statement &row, std::vector<Event> &out)
{
    out.resize(chunkEvents(run, row));
    decodeEventChunk(run, row, out.data());
}

bool TraceReader::State::loadEvents(int run, std::vector<Event> &events, Progress &progress)
{
    // length() of a blob reads no blob pages, so this costs one pass over the chunk rows.
    Statement size(db,
                   "SELECT coalesce(max(first_event + count), 0), coalesce(sum(count), 0), "
                   "coalesce(sum(length(data)), 0) FROM event_chunks WHERE run = ?");
    size.bind(1, int64_t(run)).step();
    if (size.integer(0) != size.integer(1) || !plausible(size.integer(0), size_t(size.integer(2)), kMinEventBytes))
        corrupt("events of run " + std::to_string(run) + " are missing or overlap");
    events.resize(static_cast<size_t>(size.integer(0)));
    Statement q(db,
                "SELECT track, first_event, count, start_ns, data FROM event_chunks WHERE run = ? "
                "ORDER BY first_event");
    q.bind(1, int64_t(run));
    while (q.step()) {
        const int64_t first = q.integer(1), count = q.integer(2);
        if (first < 0 || count < 0 || first + count > int64_t(events.size()))
            corrupt("an event chunk of run " + std::to_string(run) + " lies outside its events");
        decodeEventChunk(run, q, events.data() + first);
        if (!progress.advance(count))
            return false;
    }
    return true;
}

bool TraceReader::State::loadArgs(int run, std::vector<EventArgs> &args)
{
    Statement q(db, "SELECT first_args, count, data FROM args_chunks WHERE run = ? ORDER BY first_args");
    q.bind(1, int64_t(run));
    while (q.step()) {
        const int64_t first = q.integer(0), count = q.integer(1);
        if (first != int64_t(args.size()) || !plausible(count, q.blob(2).size(), kMinArgsBytes))
            return false;
        args.resize(args.size() + size_t(count));
        if (!decodeArgs(q.blob(2), args.data() + first, size_t(count)))
            return false;
    }
    return true;
}

void TraceReader::State::loadAllocations(int run, std::vector<Allocation> &out)
{
    Statement q(db,
                "SELECT time_ns, address, bytes, allocated_after, reserved_after, op, track, device "
                "FROM allocations WHERE run = ? ORDER BY rowid");
    q.bind(1, int64_t(run));
    while (q.step()) {
        Allocation &a = out.emplace_back();
        a.time = q.integer(0);
        a.address = std::bit_cast<uint64_t>(q.integer(1));
        a.bytes = q.integer(2);
        a.allocatedAfter = q.integer(3);
        a.reservedAfter = q.integer(4);
        a.op = q.isNull(5) ? EventId() : EventId(static_cast<uint32_t>(q.integer(5)));
        a.track = q.isNull(6) ? TrackId() : TrackId(static_cast<uint16_t>(q.integer(6)));
        a.device = static_cast<int16_t>(q.integer(7));
    }
}

void TraceReader::State::loadFlowsAndCounters(int run, Run &into)
{
    Statement flows(db, "SELECT id, from_event, to_event, kind FROM flows WHERE run = ? ORDER BY rowid");
    flows.bind(1, int64_t(run));
    const auto eventId = [&](int column) {
        return flows.isNull(column) ? EventId() : EventId(static_cast<uint32_t>(flows.integer(column)));
    };
    while (flows.step())
        into.flows.push_back({std::bit_cast<uint64_t>(flows.integer(0)), eventId(1), eventId(2),
                              static_cast<FlowKind>(flows.integer(3))});
    Statement counters(db, "SELECT time_ns, value, track FROM counters WHERE run = ? ORDER BY rowid");
    counters.bind(1, int64_t(run));
    while (counters.step())
        into.counters.push_back(
            {counters.integer(0), counters.real(1), TrackId(static_cast<uint16_t>(counters.integer(2)))});
}

CompileStages TraceReader::State::compileStages(int run)
{
    Statement q(db,
                "SELECT name, segment, duration_ms, graph_json, details_json, code, nodes, kernels, bytes_moved, "
                "planned_peak, unplanned_peak FROM compile_stages WHERE run = ? ORDER BY position");
    q.bind(1, int64_t(run));
    CompileStages stages;
    while (q.step()) {
        compiler::CompileStage &s = stages.emplace_back();
        s.name = q.text(0);
        s.segment = static_cast<int>(q.integer(1));
        s.durationMs = q.real(2);
        s.graphJson = q.text(3);
        s.detailsJson = q.text(4);
        s.code = q.text(5);
        s.stats = {q.integer(6), q.integer(7), q.real(8), q.integer(9), q.integer(10)};
    }
    Statement log(db, "SELECT position, text FROM compile_log WHERE run = ? ORDER BY position, line");
    log.bind(1, int64_t(run));
    while (log.step()) {
        const int64_t position = log.integer(0);
        if (position < 0 || position >= int64_t(stages.size()))
            corrupt("a compile log line belongs to no stage");
        stages[size_t(position)].log.push_back(log.text(1));
    }
    return stages;
}

bool TraceReader::State::loadRun(int run, Trace &into, Progress &progress)
{
    checkRun(run);
    if (into.strings.size() <= 1)
        loadStrings(into.strings);
    Run r;
    r.info = runs[size_t(run)].info;
    r.summary = runs[size_t(run)].summary;
    r.tracks = tracks(run);
    if (!loadEvents(run, r.events, progress))
        return false;
    if (!loadArgs(run, r.args))
        corrupt("the args of run " + std::to_string(run) + " do not decode");
    loadAllocations(run, r.allocations);
    loadFlowsAndCounters(run, r);
    r.stages = compileStages(run);
    into.runs.push_back(std::move(r));
    return true;
}

// Which span classes (bit widths of end_ns - start_ns) a track's chunks have:
// usually two or three, each one indexed range scan in events().
const std::vector<int> &TraceReader::State::spanClasses(int run, TrackId track)
{
    const auto key = std::make_pair(run, track);
    if (const auto it = classes.find(key); it != classes.end())
        return it->second;
    Statement q(db, "SELECT DISTINCT span_class FROM event_chunks WHERE run = ? AND track = ?");
    q.bind(1, int64_t(run)).bind(2, int64_t(track.value));
    std::vector<int> found;
    while (q.step())
        found.push_back(static_cast<int>(q.integer(0)));
    return classes[key] = std::move(found);
}

std::vector<LodLevel> TraceReader::State::computeLod(int run, TrackId track)
{
    Statement q(db, "SELECT track, first_event, count, start_ns, data FROM event_chunks WHERE run = ? AND track = ?");
    q.bind(1, int64_t(run)).bind(2, int64_t(track.value));
    LodBuilder builder;
    std::vector<Event> chunk;
    while (q.step()) {
        decodeEventChunk(run, q, chunk);
        builder.add(chunk);
    }
    return builder.levels(track, runs[size_t(run)].summary.durationNs);
}

TraceReader::TraceReader(const std::string &path)
    : m_path(path)
{
    checkFileIsThere(path, "a Fusescope trace");
    checkNotTruncated(path);
    m_state = std::make_unique<State>(path);
    State &s = *m_state;
    s.identify();
    s.version = s.readSchemaVersion();
    s.readMeta();
    s.readRuns();
}

TraceReader::~TraceReader() = default;

const TraceMeta &TraceReader::meta() const
{
    return m_state->meta;
}

SchemaVersion TraceReader::schemaVersion() const
{
    return m_state->version;
}

const std::vector<RunListing> &TraceReader::runs() const
{
    return m_state->runs;
}

const StringTable &TraceReader::strings()
{
    std::lock_guard lock(m_mutex);
    if (!m_state->strings)
        m_state->loadStrings(m_state->strings.emplace());
    return *m_state->strings;
}

std::optional<Trace> TraceReader::load(const LoadControl &control)
{
    std::lock_guard lock(m_mutex);
    State &s = *m_state;
    int64_t total = 0;
    for (const RunListing &r : s.runs)
        total += r.summary.events;
    Progress progress(control, total);
    Trace trace;
    trace.meta = s.meta;
    s.loadStrings(trace.strings);
    for (int run = 0; run < int(s.runs.size()); ++run) {
        if (!s.loadRun(run, trace, progress))
            return std::nullopt;
    }
    progress.finish();
    return trace;
}

bool TraceReader::loadRun(int run, Trace &into, const LoadControl &control)
{
    std::lock_guard lock(m_mutex);
    m_state->checkRun(run);
    Progress progress(control, m_state->runs[size_t(run)].summary.events);
    if (!m_state->loadRun(run, into, progress))
        return false;
    progress.finish();
    return true;
}

std::vector<Track> TraceReader::tracks(int run)
{
    std::lock_guard lock(m_mutex);
    m_state->checkRun(run);
    return m_state->tracks(run);
}

// The events of the chunks that reach into [t0, t1], with their ids.
std::vector<std::pair<EventId, Event>> TraceReader::State::overlapping(int run, TrackId track, int64_t t0, int64_t t1)
{
    // A chunk of span class c spans less than 2^c ns, so one that reaches t0
    // starts after t0 - 2^c: per class, the index narrows the scan to the window.
    Statement q(db,
                "SELECT track, first_event, count, start_ns, data FROM event_chunks WHERE run = ? AND track = ? "
                "AND span_class = ? AND start_ns BETWEEN ? AND ? AND end_ns >= ?");
    std::vector<std::pair<EventId, Event>> found;
    std::vector<Event> chunk;
    for (const int spanClass : spanClasses(run, track)) {
        int64_t from = INT64_MIN;
        if (spanClass < 63 && __builtin_sub_overflow(t0, (int64_t(1) << spanClass) - 1, &from))
            from = INT64_MIN;
        q.bind(1, int64_t(run)).bind(2, int64_t(track.value)).bind(3, int64_t(spanClass));
        q.bind(4, from).bind(5, t1).bind(6, t0);
        while (q.step()) {
            decodeEventChunk(run, q, chunk);
            for (size_t i = 0; i < chunk.size(); ++i) {
                if (chunk[i].start <= t1 && chunk[i].end() >= t0)
                    found.emplace_back(EventId(static_cast<uint32_t>(q.integer(1) + int64_t(i))), chunk[i]);
            }
        }
        q.reset();
    }
    return found;
}

std::vector<Event> TraceReader::events(int run, TrackId track, int64_t t0, int64_t t1, std::vector<EventId> *ids)
{
    std::lock_guard lock(m_mutex);
    m_state->checkRun(run);
    auto found = m_state->overlapping(run, track, t0, t1);
    std::sort(found.begin(), found.end(), [](const auto &a, const auto &b) {
        return a.second.start != b.second.start ? a.second.start < b.second.start : a.first < b.first;
    });
    std::vector<Event> out;
    out.reserve(found.size());
    if (ids)
        ids->clear();
    for (const auto &[id, e] : found) {
        out.push_back(e);
        if (ids)
            ids->push_back(id);
    }
    return out;
}

EventArgs TraceReader::args(int run, ArgsId id)
{
    std::lock_guard lock(m_mutex);
    State &s = *m_state;
    s.checkRun(run);
    Statement q(s.db,
                "SELECT first_args, count, data FROM args_chunks WHERE run = ? AND first_args <= ? "
                "ORDER BY first_args DESC LIMIT 1");
    q.bind(1, int64_t(run)).bind(2, int64_t(id.value));
    const auto missing
        = [&] { return Error(m_path + ": run " + std::to_string(run) + " has no args " + std::to_string(id.value)); };
    if (!id.valid() || !q.step() || int64_t(id.value) >= q.integer(0) + q.integer(1))
        throw missing();
    std::vector<EventArgs> chunk(static_cast<size_t>(q.integer(1)));
    if (!decodeArgs(q.blob(2), chunk.data(), chunk.size()))
        s.corrupt("the args chunk of run " + std::to_string(run) + " from " + std::to_string(q.integer(0))
                  + " does not decode");
    return chunk[size_t(int64_t(id.value) - q.integer(0))];
}

std::optional<LodLevel> TraceReader::lod(int run, TrackId track, int level)
{
    std::lock_guard lock(m_mutex);
    State &s = *m_state;
    s.checkRun(run);
    if (!s.ended[size_t(run)]) {
        const auto key = std::make_pair(run, track);
        auto it = s.computedLod.find(key);
        if (it == s.computedLod.end())
            it = s.computedLod.emplace(key, s.computeLod(run, track)).first;
        for (const LodLevel &l : it->second) {
            if (l.level == level)
                return l;
        }
        return std::nullopt;
    }
    Statement q(s.db,
                "SELECT bucket, count, busy_ns, max_depth FROM lod WHERE run = ? AND track = ? AND level = ? "
                "ORDER BY bucket");
    q.bind(1, int64_t(run)).bind(2, int64_t(track.value)).bind(3, int64_t(level));
    LodLevel out {track, level, {}};
    while (q.step())
        out.buckets.push_back(
            {q.integer(0), q.integer(2), static_cast<uint32_t>(q.integer(1)), static_cast<uint8_t>(q.integer(3))});
    if (out.buckets.empty())
        return std::nullopt;
    return out;
}

CompileStages TraceReader::compileStages(int run)
{
    std::lock_guard lock(m_mutex);
    m_state->checkRun(run);
    return m_state->compileStages(run);
}

} // namespace fusescope::profiler
