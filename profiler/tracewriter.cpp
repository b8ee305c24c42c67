#include "profiler/tracewriter.h"

#include "core/buildinfo.h"
#include "core/runtime/machine.h"
#include "profiler/lod.h"
#include "profiler/tracestore.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fusescope::profiler {

using store::Statement;

namespace {

// LEB128: 7 bits a byte, low bits first, high bit set on all but the last.
uint8_t *putVarint(uint8_t *out, uint64_t v)
{
    while (v >= 0x80) {
        *out++ = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    *out++ = static_cast<uint8_t>(v);
    return out;
}

uint64_t zigzag(int64_t v)
{
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

uint8_t *putFloat(uint8_t *out, float f)
{
    const auto bits = std::bit_cast<uint32_t>(f);
    for (int i = 0; i < 4; ++i)
        *out++ = static_cast<uint8_t>(bits >> (8 * i));
    return out;
}

// The largest records (docs/trace-format.md): an event is head and depth,
// two 64-bit and three 32-bit varints, two floats; args are ten 64-bit
// varints, the copy byte and a 32-bit varint.
constexpr size_t kMaxEventBytes = 2 + 2 * 10 + 3 * 5 + 2 * 4;
constexpr size_t kMaxArgsBytes = 10 * 10 + 1 + 5;

// Events of one track, contiguous ids; start times relative to `base`, the
// chunk's earliest start, so a chunk sorted by start has no negative delta.
void encodeEvents(std::span<const Event> events, int64_t base, std::vector<uint8_t> &out)
{
    out.resize(events.size() * kMaxEventBytes);
    uint8_t *p = out.data();
    int64_t previousStart = base;
    uint32_t previousArgs = 0;
    for (const Event &e : events) {
        const bool flops = std::bit_cast<uint32_t>(e.flops) != 0, bytes = std::bit_cast<uint32_t>(e.bytes) != 0;
        *p++ = static_cast<uint8_t>(static_cast<uint8_t>(e.kind) & store::kKindMask)
            | (e.detail.valid() ? store::kHasDetail : 0) | (e.args.valid() ? store::kHasArgs : 0)
            | (flops ? store::kHasFlops : 0) | (bytes ? store::kHasBytes : 0);
        *p++ = e.depth;
        p = putVarint(p, static_cast<uint64_t>(e.start - previousStart));
        p = putVarint(p, static_cast<uint64_t>(e.duration));
        p = putVarint(p, static_cast<uint32_t>(e.name.value + 1)); // an invalid name becomes 0
        if (e.detail.valid())
            p = putVarint(p, e.detail.value);
        if (e.args.valid()) {
            p = putVarint(p, static_cast<uint32_t>(e.args.value - previousArgs));
            previousArgs = e.args.value;
        }
        if (flops)
            p = putFloat(p, e.flops);
        if (bytes)
            p = putFloat(p, e.bytes);
        previousStart = e.start;
    }
    out.resize(static_cast<size_t>(p - out.data()));
}

void encodeArgs(std::span<const EventArgs> args, std::vector<uint8_t> &out)
{
    out.resize(args.size() * kMaxArgsBytes);
    uint8_t *p = out.data();
    int64_t previousCorrelation = -1, previousExternal = -1;
    for (const EventArgs &a : args) {
        p = putVarint(p, zigzag(a.correlation - previousCorrelation));
        p = putVarint(p, zigzag(a.externalId - previousExternal));
        for (const int32_t v :
             {a.device, a.stream, a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1], a.block[2]})
            p = putVarint(p, zigzag(v));
        *p++ = static_cast<uint8_t>(static_cast<uint8_t>(a.copyKind) | (a.pinned ? store::kPinnedBit : 0));
        p = putVarint(p, static_cast<uint32_t>(a.extra.value + 1));
        previousCorrelation = a.correlation;
        previousExternal = a.externalId;
    }
    out.resize(static_cast<size_t>(p - out.data()));
}

std::string hostName()
{
    char name[256] = {};
    return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

std::string nowUtcIso8601()
{
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc {};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

// The arguments of this process separated by spaces, as /proc has them.
std::string commandLine()
{
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!raw.empty() && raw.back() == '\0')
        raw.pop_back();
    std::replace(raw.begin(), raw.end(), '\0', ' ');
    return raw;
}

TraceMeta completed(TraceMeta meta)
{
    meta.schemaVersion = store::kSchemaMajor;
    const auto orElse = [](std::string &field, auto fill) {
        if (field.empty())
            field = fill();
    };
    orElse(meta.producer, [] { return "fusescope " + versionString(); });
    orElse(meta.host, hostName);
    orElse(meta.cpuModel, [] { return machineInfo().cpuModel; });
    orElse(meta.createdUtc, nowUtcIso8601);
    orElse(meta.commandLine, commandLine);
    return meta;
}

// A new file: an old one and its journals go first, so nothing of it is mixed in.
void removeOldFile(const std::string &path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw Error(path + ": cannot create the trace file: is a directory");
    for (const char *suffix : {"", "-wal", "-shm", "-journal"}) {
        std::filesystem::remove(path + suffix, ec);
        if (ec)
            throw Error(path + ": cannot replace the existing file: " + ec.message());
    }
}

} // namespace

// The open file and what the run being written has reached. Its write*
// functions run inside the caller's transaction.
struct TraceWriter::State {
    explicit State(const std::string &path)
        : db(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
             "cannot create the trace file")
    { }

    void writeStrings(const EventBatch &b);
    void writeTracks(const EventBatch &b);
    void writeEvents(const EventBatch &b);
    void writeEventChunk(uint32_t firstEvent, std::span<const Event> events);
    void writeArgs(const EventBatch &b);
    void writeAllocations(const EventBatch &b);
    void writeFlowsAndCounters(const EventBatch &b);
    void writeProgress();
    void writeLod(int64_t endNs);

    // The statements of every batch, prepared once the schema exists.
    struct Statements {
        explicit Statements(store::Database &db);
        Statement string, track, eventChunk, argsChunk, allocation, flow, counter, progress, lod;
    };

    store::Database db;
    std::unique_ptr<Statements> statements;
    int runs = 0;
    int current = -1;
    uint32_t strings = 1; // ids below are in the file; 0 = "" comes with the schema
    // The open run's progress, so a run that never ends still says how far it got.
    LodBuilder lod;
    int64_t events = 0;
    int64_t steps = 0;
    int64_t maxEnd = 0;
    std::vector<uint8_t> buffer; // one chunk's encoding, reused
};

TraceWriter::State::Statements::Statements(store::Database &db)
    : string(db, "INSERT INTO strings(id, value) VALUES(?, ?)")
    , track(db,
            "INSERT OR REPLACE INTO tracks(run, id, kind, name, pid, tid, device, sort_index) "
            "VALUES(?, ?, ?, ?, ?, ?, ?, ?)")
    , eventChunk(db,
                 "INSERT INTO event_chunks(run, track, first_event, count, start_ns, end_ns, span_class, data) "
                 "VALUES(?, ?, ?, ?, ?, ?, ?, ?)")
    , argsChunk(db, "INSERT INTO args_chunks(run, first_args, count, data) VALUES(?, ?, ?, ?)")
    , allocation(db,
                 "INSERT INTO allocations(run, time_ns, address, bytes, allocated_after, reserved_after, op, "
                 "track, device) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)")
    , flow(db, "INSERT INTO flows(run, id, from_event, to_event, kind) VALUES(?, ?, ?, ?, ?)")
    , counter(db, "INSERT INTO counters(run, track, time_ns, value) VALUES(?, ?, ?, ?)")
    , progress(db, "UPDATE runs SET events = ?, steps = ?, duration_ns = ? WHERE id = ?")
    , lod(db, "INSERT INTO lod(run, track, level, bucket, count, busy_ns, max_depth) VALUES(?, ?, ?, ?, ?, ?, ?)")
{ }

namespace {

// NULL stands for an invalid id.
void bindId(Statement &s, int index, uint32_t value, uint32_t invalid)
{
    if (value == invalid)
        s.bindNull(index);
    else
        s.bind(index, int64_t(value));
}

} // namespace

void TraceWriter::State::writeStrings(const EventBatch &b)
{
    for (size_t i = 0; i < b.newStrings.size(); ++i) {
        const auto id = static_cast<uint32_t>(b.firstString + i);
        if (id < strings)
            continue; // sent before (ids are the same in every sink)
        if (id != strings)
            db.fail("strings", "string " + std::to_string(id) + " arrived before string " + std::to_string(strings));
        statements->string.bind(1, int64_t(id)).bind(2, b.newStrings[i]).run();
        ++strings;
    }
}

void TraceWriter::State::writeTracks(const EventBatch &b)
{
    Statement &s = statements->track;
    for (const Track &t : b.newTracks) {
        s.bind(1, int64_t(current))
            .bind(2, int64_t(t.id.value))
            .bind(3, int64_t(t.kind))
            .bind(4, int64_t(t.name.value));
        s.bind(5, t.pid).bind(6, t.tid).bind(7, int64_t(t.device)).bind(8, int64_t(t.sortIndex)).run();
    }
}

// One chunk per run of same-track events, at most kChunkEvents long: the
// batch is sorted by track, so a chunk covers a contiguous range of ids.
void TraceWriter::State::writeEvents(const EventBatch &b)
{
    const std::span<const Event> all(b.events);
    for (size_t i = 0; i < all.size();) {
        size_t j = i + 1;
        while (j < all.size() && j - i < store::kChunkEvents && all[j].track == all[i].track)
            ++j;
        writeEventChunk(b.firstEvent + static_cast<uint32_t>(i), all.subspan(i, j - i));
        i = j;
    }
    lod.add(all);
    for (const Event &e : all) {
        maxEnd = std::max(maxEnd, e.end());
        steps += e.kind == EventKind::Step;
    }
    events = std::max<int64_t>(events, int64_t(b.firstEvent) + int64_t(all.size()));
}

void TraceWriter::State::writeEventChunk(uint32_t firstEvent, std::span<const Event> chunk)
{
    int64_t start = chunk[0].start, end = chunk[0].end();
    for (const Event &e : chunk) {
        start = std::min(start, e.start);
        end = std::max(end, e.end());
    }
    encodeEvents(chunk, start, buffer);
    Statement &s = statements->eventChunk;
    s.bind(1, int64_t(current)).bind(2, int64_t(chunk[0].track.value)).bind(3, int64_t(firstEvent));
    s.bind(4, int64_t(chunk.size())).bind(5, start).bind(6, end);
    s.bind(7, int64_t(std::bit_width(static_cast<uint64_t>(end - start)))).bindBlob(8, buffer).run();
}

void TraceWriter::State::writeArgs(const EventBatch &b)
{
    const std::span<const EventArgs> all(b.args);
    for (size_t i = 0; i < all.size(); i += store::kChunkEvents) {
        const auto chunk = all.subspan(i, std::min(store::kChunkEvents, all.size() - i));
        encodeArgs(chunk, buffer);
        Statement &s = statements->argsChunk;
        s.bind(1, int64_t(current)).bind(2, int64_t(b.firstArgs + i)).bind(3, int64_t(chunk.size()));
        s.bindBlob(4, buffer).run();
    }
}

void TraceWriter::State::writeAllocations(const EventBatch &b)
{
    Statement &s = statements->allocation;
    for (const Allocation &a : b.allocations) {
        s.bind(1, int64_t(current)).bind(2, a.time).bind(3, std::bit_cast<int64_t>(a.address)).bind(4, a.bytes);
        s.bind(5, a.allocatedAfter).bind(6, a.reservedAfter);
        bindId(s, 7, a.op.value, EventId::kInvalid);
        bindId(s, 8, a.track.value, TrackId::kInvalid);
        s.bind(9, int64_t(a.device)).run();
    }
}

void TraceWriter::State::writeFlowsAndCounters(const EventBatch &b)
{
    Statement &f = statements->flow;
    for (const Flow &flow : b.flows) {
        f.bind(1, int64_t(current)).bind(2, std::bit_cast<int64_t>(flow.id));
        bindId(f, 3, flow.from.value, EventId::kInvalid);
        bindId(f, 4, flow.to.value, EventId::kInvalid);
        f.bind(5, int64_t(flow.kind)).run();
    }
    Statement &c = statements->counter;
    for (const CounterSample &sample : b.counters)
        c.bind(1, int64_t(current))
            .bind(2, int64_t(sample.track.value))
            .bind(3, sample.time)
            .bind(4, sample.value)
            .run();
}

void TraceWriter::State::writeProgress()
{
    statements->progress.bind(1, events).bind(2, steps).bind(3, maxEnd).bind(4, int64_t(current)).run();
}

void TraceWriter::State::writeLod(int64_t endNs)
{
    Statement &s = statements->lod;
    for (const LodLevel &level : lod.levels(endNs)) {
        for (const LodBucket &b : level.buckets) {
            s.bind(1, int64_t(current)).bind(2, int64_t(level.track.value)).bind(3, int64_t(level.level));
            s.bind(4, b.index).bind(5, int64_t(b.count)).bind(6, b.busyNs).bind(7, int64_t(b.maxDepth)).run();
        }
    }
}

namespace {

void writeMeta(store::Database &db, const TraceMeta &meta)
{
    Statement insert(db, "INSERT INTO meta(key, value) VALUES(?, ?)");
    const std::pair<const char *, std::string> rows[] = {
        {"schema_version", std::to_string(store::kSchemaMajor) + "." + std::to_string(store::kSchemaMinor)},
        {"producer", meta.producer},
        {"host", meta.host},
        {"cpu_model", meta.cpuModel},
        {"gpu", meta.gpu},
        {"created_utc", meta.createdUtc},
        {"command_line", meta.commandLine},
        {"lod_base_bucket_ns", std::to_string(kLodBaseBucketNs)},
        {"lod_fanout", std::to_string(1 << kLodFanoutShift)},
    };
    for (const auto &[key, value] : rows)
        insert.bind(1, std::string_view(key)).bind(2, value).run();
}

// The names of the enums' numbers, so the file explains itself in the sqlite3 shell.
void writeEnumNames(store::Database &db)
{
    Statement insert(db, "INSERT INTO enum_names(enum, value, name) VALUES(?, ?, ?)");
    const auto add = [&](std::string_view kind, int count, auto nameOf) {
        for (int v = 0; v < count; ++v)
            insert.bind(1, kind).bind(2, int64_t(v)).bind(3, std::string_view(nameOf(v))).run();
    };
    add("event_kind", kEventKindCount, [](int v) { return eventKindName(EventKind(v)); });
    add("track_kind", 4, [](int v) { return trackKindName(TrackKind(v)); });
    add("copy_kind", 6, [](int v) { return copyKindName(CopyKind(v)); });
    add("flow_kind", 3, [](int v) { return flowKindName(FlowKind(v)); });
}

void createSchema(store::Database &db, const TraceMeta &meta)
{
    // Pragmas outside the transaction: journal_mode cannot change inside one.
    db.exec(("PRAGMA application_id = " + std::to_string(store::kApplicationId)).c_str());
    db.exec("PRAGMA journal_mode = WAL");
    // In WAL mode NORMAL still survives a killed process; only a power cut may lose the last commits.
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA cache_size = -16384");
    store::Transaction transaction(db);
    db.exec(store::kSchemaSql);
    writeMeta(db, meta);
    writeEnumNames(db);
    db.exec("INSERT INTO strings(id, value) VALUES(0, '')");
    transaction.commit();
}

} // namespace

TraceWriter::TraceWriter(const std::string &path, const TraceMeta &meta)
    : m_path(path)
{
    removeOldFile(path);
    m_state = std::make_unique<State>(path);
    createSchema(m_state->db, completed(meta));
    m_state->statements = std::make_unique<State::Statements>(m_state->db);
}

TraceWriter::~TraceWriter()
{
    close();
}

void TraceWriter::checkOpen(const char *call) const
{
    if (!m_state)
        throw Error(m_path + ": " + call + " after close()");
}

void TraceWriter::checkRun(int runIndex) const
{
    checkOpen("writing");
    if (runIndex < 0 || runIndex >= m_state->runs)
        throw Error(m_path + ": no run " + std::to_string(runIndex) + " (" + std::to_string(m_state->runs) + " begun)");
}

int TraceWriter::currentRun() const
{
    std::lock_guard lock(m_mutex);
    return m_state ? m_state->current : -1;
}

void TraceWriter::beginRun(const RunInfo &info)
{
    std::lock_guard lock(m_mutex);
    checkOpen("beginRun()");
    State &s = *m_state;
    if (s.current >= 0)
        throw Error(m_path + ": beginRun() while run " + std::to_string(s.current) + " is open");
    Statement insert(s.db,
                     "INSERT INTO runs(id, name, model, mode, origin_ns, wall_start_unix_ns, options, ended, "
                     "complete, duration_ns, events, steps, dropped_events) "
                     "VALUES(?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 0, 0)");
    insert.bind(1, int64_t(s.runs)).bind(2, info.name).bind(3, info.model).bind(4, info.mode);
    insert.bind(5, info.originNs).bind(6, info.wallStartUnixNs).bind(7, info.options).run();
    s.current = s.runs++;
    s.lod = LodBuilder();
    s.events = s.steps = s.maxEnd = 0;
}

void TraceWriter::write(EventBatch &&batch)
{
    std::lock_guard lock(m_mutex);
    checkOpen("write()");
    State &s = *m_state;
    if (s.current < 0)
        throw Error(m_path + ": write() outside a run; call beginRun() first");
    store::Transaction transaction(s.db);
    s.writeStrings(batch);
    s.writeTracks(batch);
    s.writeEvents(batch);
    s.writeArgs(batch);
    s.writeAllocations(batch);
    s.writeFlowsAndCounters(batch);
    s.writeProgress();
    transaction.commit();
}

void TraceWriter::endRun(const RunSummary &summary)
{
    std::lock_guard lock(m_mutex);
    checkOpen("endRun()");
    State &s = *m_state;
    if (s.current < 0)
        throw Error(m_path + ": endRun() without beginRun()");
    store::Transaction transaction(s.db);
    s.writeLod(std::max(summary.durationNs, s.maxEnd));
    Statement update(s.db,
                     "UPDATE runs SET ended = 1, complete = ?, duration_ns = ?, events = ?, steps = ?, "
                     "dropped_events = ? WHERE id = ?");
    update.bind(1, int64_t(summary.complete)).bind(2, summary.durationNs).bind(3, summary.events);
    update.bind(4, summary.steps).bind(5, summary.droppedEvents).bind(6, int64_t(s.current)).run();
    transaction.commit();
    s.current = -1;
    s.lod = LodBuilder(); // its memory is the size of level 0; not needed any more
}

void TraceWriter::writeCompileStages(int runIndex, const CompileStages &stages)
{
    std::lock_guard lock(m_mutex);
    checkRun(runIndex);
    store::Database &db = m_state->db;
    store::Transaction transaction(db);
    Statement erase(db, "DELETE FROM compile_stages WHERE run = ?");
    erase.bind(1, int64_t(runIndex)).run();
    Statement eraseLog(db, "DELETE FROM compile_log WHERE run = ?");
    eraseLog.bind(1, int64_t(runIndex)).run();
    Statement insert(db,
                     "INSERT INTO compile_stages(run, position, name, segment, duration_ms, graph_json, "
                     "details_json, code, nodes, kernels, bytes_moved, planned_peak, unplanned_peak) "
                     "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    Statement log(db, "INSERT INTO compile_log(run, position, line, text) VALUES(?, ?, ?, ?)");
    for (size_t i = 0; i < stages.size(); ++i) {
        const compiler::CompileStage &st = stages[i];
        insert.bind(1, int64_t(runIndex)).bind(2, int64_t(i)).bind(3, st.name).bind(4, int64_t(st.segment));
        insert.bind(5, st.durationMs).bind(6, st.graphJson).bind(7, st.detailsJson).bind(8, st.code);
        insert.bind(9, st.stats.nodes).bind(10, st.stats.kernels).bind(11, st.stats.bytesMoved);
        insert.bind(12, st.stats.plannedPeak).bind(13, st.stats.unplannedPeak).run();
        for (size_t line = 0; line < st.log.size(); ++line)
            log.bind(1, int64_t(runIndex)).bind(2, int64_t(i)).bind(3, int64_t(line)).bind(4, st.log[line]).run();
    }
    transaction.commit();
}

void TraceWriter::setRunValue(int runIndex, std::string_view key, std::string_view value)
{
    std::lock_guard lock(m_mutex);
    checkRun(runIndex);
    Statement insert(m_state->db, "INSERT OR REPLACE INTO run_values(run, key, value) VALUES(?, ?, ?)");
    insert.bind(1, int64_t(runIndex)).bind(2, key).bind(3, value).run();
}

void TraceWriter::close()
{
    std::lock_guard lock(m_mutex);
    if (!m_state)
        return;
    m_state->statements.reset();
    // A finished file should be one file that opens read-only anywhere, even
    // on read-only media, which a WAL database without its -shm cannot. Best
    // effort: with a reader attached the mode stays WAL, which is still valid.
    sqlite3_exec(m_state->db.handle(), "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
    m_state.reset();
}

} // namespace fusescope::profiler
