#include "profiler/chromeexport.h"

#include "profiler/statistics.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <ostream>
#include <set>

namespace fusescope::profiler {

namespace {

// Collects the output and hands it to the stream in large blocks: a stream
// call per member costs more than formatting the member.
class JsonSink
{
public:
    explicit JsonSink(std::ostream &out) : m_out(out) { m_buffer.reserve(kBlock + kBlock / 4); }
    void put(char c) { m_buffer.push_back(c); }
    void write(std::string_view s) { m_buffer.append(s); }
    // Called between events, so the buffer stays near one block.
    void flushIfFull()
    {
        if (m_buffer.size() >= kBlock)
            flush();
    }
    void flush()
    {
        m_out.write(m_buffer.data(), std::streamsize(m_buffer.size()));
        m_buffer.clear();
    }

private:
    static constexpr size_t kBlock = size_t(1) << 16;
    std::ostream &m_out;
    std::string m_buffer;
};

// The first byte of a UTF-8 sequence: its length and the range its second
// byte must lie in, which excludes overlong forms, surrogates and code points
// past U+10FFFF (Unicode table 3-7).
struct Utf8Lead {
    size_t length = 0; // 0: cannot start a sequence
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
};

Utf8Lead utf8Lead(unsigned char c)
{
    auto lead = [](size_t length, int low, int high) {
        return Utf8Lead{length, static_cast<unsigned char>(low), static_cast<unsigned char>(high)};
    };
    if (c < 0x80)
        return lead(1, 0x80, 0xBF);
    if (c >= 0xC2 && c <= 0xDF)
        return lead(2, 0x80, 0xBF);
    if (c >= 0xE0 && c <= 0xEF)
        return lead(3, c == 0xE0 ? 0xA0 : 0x80, c == 0xED ? 0x9F : 0xBF);
    if (c >= 0xF0 && c <= 0xF4)
        return lead(4, c == 0xF0 ? 0x90 : 0x80, c == 0xF4 ? 0x8F : 0xBF);
    return lead(0, 0x80, 0xBF);
}

// Length of the well-formed sequence at p, or 0.
size_t utf8Length(const unsigned char *p, const unsigned char *end)
{
    const Utf8Lead lead = utf8Lead(*p);
    if (lead.length <= 1)
        return lead.length;
    if (size_t(end - p) < lead.length || p[1] < lead.low || p[1] > lead.high)
        return 0;
    for (size_t i = 2; i < lead.length; ++i) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    }
    return lead.length;
}

bool needsEscape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

void writeEscape(JsonSink &out, unsigned char c)
{
    static const char kHex[] = "0123456789abcdef";
    switch (c) {
    case '"': out.write("\\\""); return;
    case '\\': out.write("\\\\"); return;
    case '\n': out.write("\\n"); return;
    case '\r': out.write("\\r"); return;
    case '\t': out.write("\\t"); return;
    default: break;
    }
    out.write("\\u00");
    out.put(kHex[c >> 4]);
    out.put(kHex[c & 0xF]);
}

// A JSON string. Runs of plain bytes are copied in one write; each byte that
// starts no valid UTF-8 sequence becomes U+FFFD, since strict readers
// (Perfetto, nlohmann) reject the whole file otherwise.
void writeString(JsonSink &out, std::string_view s)
{
    const auto *p = reinterpret_cast<const unsigned char *>(s.data());
    const auto *end = p + s.size();
    const auto *plain = p;
    out.put('"');
    while (p < end) {
        const size_t length = utf8Length(p, end);
        if (length > 1 || (length == 1 && !needsEscape(*p))) {
            p += length;
            continue;
        }
        out.write({reinterpret_cast<const char *>(plain), size_t(p - plain)});
        if (length == 0)
            out.write("\\ufffd");
        else
            writeEscape(out, *p);
        plain = ++p;
    }
    out.write({reinterpret_cast<const char *>(plain), size_t(p - plain)});
    out.put('"');
}

template <typename T>
void writeNumber(JsonSink &out, T value)
{
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.write({buffer, size_t(result.ptr - buffer)});
}

// ns as µs with three decimals, in integers so no nanosecond is rounded away.
void writeMicros(JsonSink &out, int64_t ns)
{
    const uint64_t magnitude = ns < 0 ? 0 - uint64_t(ns) : uint64_t(ns);
    const unsigned fraction = unsigned(magnitude % 1000);
    if (ns < 0)
        out.put('-');
    writeNumber(out, magnitude / 1000);
    const char digits[4] = {'.', char('0' + fraction / 100), char('0' + fraction / 10 % 10), char('0' + fraction % 10)};
    out.write({digits, 4});
}

// Writes one JSON object's members as they come and closes it when it goes
// out of scope; a nested value is written to the sink that member() returns.
class JsonObject
{
public:
    explicit JsonObject(JsonSink &out) : m_out(out) { m_out.put('{'); }
    ~JsonObject() { m_out.put('}'); }
    JsonObject(const JsonObject &) = delete;
    JsonObject &operator=(const JsonObject &) = delete;

    JsonSink &member(std::string_view key)
    {
        if (!m_first)
            m_out.put(',');
        m_first = false;
        writeString(m_out, key);
        m_out.put(':');
        return m_out;
    }
    JsonObject &string(std::string_view key, std::string_view value)
    {
        writeString(member(key), value);
        return *this;
    }
    JsonObject &integer(std::string_view key, int64_t value)
    {
        writeNumber(member(key), value);
        return *this;
    }
    JsonObject &micros(std::string_view key, int64_t ns)
    {
        writeMicros(member(key), ns);
        return *this;
    }
    // Leaves out what JSON cannot hold (infinities, NaN).
    JsonObject &number(std::string_view key, double value)
    {
        if (std::isfinite(value))
            writeNumber(member(key), value);
        return *this;
    }

private:
    JsonSink &m_out;
    bool m_first = true;
};

// Where a track's events go in the viewer.
struct Lane {
    int64_t pid = 0;
    int64_t tid = 0;
};

// Far above real thread ids and stream numbers, for tracks whose tid is taken.
constexpr int64_t kFirstSyntheticTid = 1'000'000'000;

struct RunLanes {
    int64_t runPid = 0;
    std::vector<Lane> lanes; // by TrackId

    Lane of(TrackId track) const { return track.value < lanes.size() ? lanes[track.value] : Lane{runPid, 0}; }
};

RunLanes lanesOf(const Run &run, int64_t runPid)
{
    RunLanes result{runPid, {}};
    std::set<std::pair<int64_t, int64_t>> taken;
    int64_t synthetic = kFirstSyntheticTid;
    for (const Track &track : run.tracks) {
        Lane lane{track.pid != 0 ? track.pid : runPid, track.tid};
        while (!taken.insert({lane.pid, lane.tid}).second)
            lane.tid = synthetic++;
        result.lanes.push_back(lane);
    }
    return result;
}

// What an event's detail text means, by kind.
const char *detailKey(EventKind kind)
{
    switch (kind) {
    case EventKind::Op: return "shapes";
    case EventKind::Kernel: return "origins";
    case EventKind::Instant: return "text";
    default: return "detail";
    }
}

void writeDims(JsonObject &args, std::string_view key, const int32_t (&dims)[3])
{
    if (dims[0] == 0 && dims[1] == 0 && dims[2] == 0)
        return;
    JsonSink &out = args.member(key);
    for (int i = 0; i < 3; ++i) {
        out.put(i == 0 ? '[' : ',');
        writeNumber(out, dims[i]);
    }
    out.put(']');
}

// The extras' JSON object, re-serialized so a malformed one cannot break the
// file; one that does not parse travels as a string.
void writeExtra(JsonObject &args, const std::string &text)
{
    if (text.empty())
        return;
    const nlohmann::json extra = nlohmann::json::parse(text, nullptr, false);
    if (extra.is_discarded())
        args.string("extra", text);
    else
        args.member("extra").write(extra.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void writeEventArgs(JsonObject &args, const EventArgs &a, EventKind kind, const StringTable &strings)
{
    if (a.correlation >= 0)
        args.integer("correlation", a.correlation);
    if (a.externalId >= 0)
        args.integer("external id", a.externalId);
    if (a.device >= 0)
        args.integer("device", a.device);
    if (a.stream >= 0)
        args.integer("stream", a.stream);
    writeDims(args, "grid", a.grid);
    writeDims(args, "block", a.block);
    if (kind == EventKind::Memcpy) {
        args.string("copy kind", copyKindName(a.copyKind));
        args.member("pinned").write(a.pinned ? "true" : "false");
    }
    writeExtra(args, strings[a.extra]);
}

class ChromeTraceWriter
{
public:
    ChromeTraceWriter(const Trace &trace, std::ostream &out) : m_trace(trace), m_out(out) {}

    void write()
    {
        m_out.write("{\"traceEvents\":[");
        for (size_t i = 0; i < m_trace.runs.size(); ++i)
            writeRun(i);
        m_out.write("\n],\"displayTimeUnit\":\"ns\",\"otherData\":");
        writeOtherData();
        m_out.write("}\n");
        m_out.flush();
    }

private:
    // The next element of traceEvents, one per line.
    JsonSink &next()
    {
        m_out.flushIfFull();
        m_out.write(m_firstEvent ? "\n" : ",\n");
        m_firstEvent = false;
        return m_out;
    }

    void writeRun(size_t index)
    {
        const Run &run = m_trace.runs[index];
        const RunLanes lanes = lanesOf(run, int64_t(index) + 1);
        writeProcesses(run, lanes, int64_t(index));
        writeThreads(run, lanes);
        for (const Event &e : run.events)
            writeEvent(run, lanes, e);
        // After the slices: a flow end binds to the slice open at its time,
        // and viewers keep the file's order among events of equal time.
        for (const Flow &flow : run.flows)
            writeFlow(run, lanes, flow);
        for (const Allocation &a : run.allocations)
            writeMemory(lanes, a);
        for (const CounterSample &sample : run.counters)
            writeCounter(run, lanes, sample);
    }

    // With "ts" 0 like Chrome's own metadata, for readers that want every event timed.
    void writeMetadata(std::string_view name, Lane lane, bool thread, auto writeArgs)
    {
        JsonObject e(next());
        e.string("ph", "M").string("name", name).integer("pid", lane.pid).micros("ts", 0);
        if (thread)
            e.integer("tid", lane.tid);
        JsonObject args(e.member("args"));
        writeArgs(args);
    }

    // process_name and process_sort_index, or the thread_ pair.
    void writeNaming(Lane lane, bool thread, const std::string &name, int64_t order)
    {
        const std::string scope = thread ? "thread" : "process";
        writeMetadata(scope + "_name", lane, thread, [&](JsonObject &a) { a.string("name", name); });
        writeMetadata(scope + "_sort_index", lane, thread, [&](JsonObject &a) { a.integer("sort_index", order); });
    }

    void writeProcesses(const Run &run, const RunLanes &lanes, int64_t sortIndex)
    {
        std::set<int64_t> pids{lanes.runPid};
        for (const Lane &lane : lanes.lanes)
            pids.insert(lane.pid);
        const std::string label = runLabel(run, sortIndex);
        for (int64_t pid : pids) {
            const std::string name = pid == lanes.runPid ? label : label + " pid " + std::to_string(pid);
            writeNaming({pid, 0}, false, name, sortIndex);
        }
    }

    // The run's name, and a warning in it when the capture is not complete.
    static std::string runLabel(const Run &run, int64_t index)
    {
        std::string label = run.info.name.empty() ? "run " + std::to_string(index + 1) : run.info.name;
        if (!run.summary.complete)
            label += " (incomplete)";
        if (run.summary.droppedEvents)
            label += " (" + std::to_string(run.summary.droppedEvents) + " events dropped)";
        return label;
    }

    // Counter tracks are drawn per process from their "C" events, not as threads.
    void writeThreads(const Run &run, const RunLanes &lanes)
    {
        for (size_t i = 0; i < run.tracks.size(); ++i) {
            const Track &track = run.tracks[i];
            if (track.kind == TrackKind::Counter)
                continue;
            // sortIndex first; the track order breaks ties (TrackId is 16 bits).
            const int64_t order = int64_t(track.sortIndex) * 65536 + int64_t(i);
            writeNaming(lanes.lanes[i], true, trackName(track), order);
        }
    }

    std::string trackName(const Track &track) const
    {
        const std::string &name = m_trace.strings[track.name];
        return name.empty() ? std::string(trackKindName(track.kind)) + " " + std::to_string(track.tid) : name;
    }

    void writeEvent(const Run &run, const RunLanes &lanes, const Event &event)
    {
        const Lane lane = lanes.of(event.track);
        JsonObject e(next());
        e.string("ph", event.kind == EventKind::Instant ? "i" : "X");
        e.string("name", m_trace.strings[event.name]).string("cat", eventKindName(event.kind));
        e.integer("pid", lane.pid).integer("tid", lane.tid).micros("ts", event.start);
        if (event.kind == EventKind::Instant)
            e.string("s", "t");
        else
            e.micros("dur", event.duration);
        JsonObject args(e.member("args"));
        writeArgs(run, event, args);
    }

    void writeArgs(const Run &run, const Event &event, JsonObject &args) const
    {
        const std::string &detail = m_trace.strings[event.detail];
        if (!detail.empty())
            args.string(detailKey(event.kind), detail);
        if (event.flops != 0)
            args.number("flops", event.flops);
        if (event.bytes != 0)
            args.number("bytes", event.bytes);
        if (const EventArgs *a = argsOf(run, event))
            writeEventArgs(args, *a, event.kind, m_trace.strings);
    }

    // Flow ids are numbered afresh across the file: the runs' own ids may
    // repeat from run to run, and viewers join flows of one id.
    void writeFlow(const Run &run, const RunLanes &lanes, const Flow &flow)
    {
        if (flow.from.value >= run.events.size() || flow.to.value >= run.events.size())
            return;
        const uint64_t id = ++m_lastFlowId;
        writeFlowEnd("s", lanes, run.event(flow.from), id, flow.kind);
        writeFlowEnd("f", lanes, run.event(flow.to), id, flow.kind);
    }

    // "f" binds to the slice around its timestamp ("bp":"e"), not the next one.
    void writeFlowEnd(std::string_view phase, const RunLanes &lanes, const Event &at, uint64_t id, FlowKind kind)
    {
        const Lane lane = lanes.of(at.track);
        JsonObject e(next());
        e.string("ph", phase).integer("id", int64_t(id)).string("cat", flowKindName(kind));
        e.string("name", flowKindName(kind)).integer("pid", lane.pid).integer("tid", lane.tid);
        e.micros("ts", at.start);
        if (phase == "f")
            e.string("bp", "e");
    }

    void writeMemory(const RunLanes &lanes, const Allocation &a)
    {
        const std::string name = a.device < 0 ? "CPU memory" : "GPU " + std::to_string(a.device) + " memory";
        JsonObject e(next());
        e.string("ph", "C").string("name", name).integer("pid", lanes.of(a.track).pid).micros("ts", a.time);
        JsonObject args(e.member("args"));
        args.integer("allocated", a.allocatedAfter).integer("reserved", a.reservedAfter);
    }

    void writeCounter(const Run &run, const RunLanes &lanes, const CounterSample &sample)
    {
        const std::string name =
            sample.track.value < run.tracks.size() ? trackName(run.tracks[sample.track.value]) : "counter";
        JsonObject e(next());
        e.string("ph", "C").string("name", name).integer("pid", lanes.of(sample.track).pid);
        e.micros("ts", sample.time);
        JsonObject args(e.member("args"));
        args.number("value", sample.value);
    }

    void writeOtherData()
    {
        const TraceMeta &meta = m_trace.meta;
        JsonObject data(m_out);
        data.integer("schema_version", meta.schemaVersion).string("producer", meta.producer);
        data.string("host", meta.host).string("cpu", meta.cpuModel).string("gpu", meta.gpu);
        data.string("created_utc", meta.createdUtc).string("command_line", meta.commandLine);
    }

    const Trace &m_trace;
    JsonSink m_out;
    bool m_firstEvent = true;
    uint64_t m_lastFlowId = 0;
};

} // namespace

void exportChromeTrace(const Trace &trace, std::ostream &out)
{
    ChromeTraceWriter(trace, out).write();
}

void exportChromeTrace(const Trace &trace, const std::string &path)
{
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file)
        throw Error("cannot create Chrome trace '" + path + "': " + std::strerror(errno));
    exportChromeTrace(trace, file);
    file.close();
    if (!file)
        throw Error("cannot write Chrome trace '" + path + "': " + std::strerror(errno));
}

} // namespace fusescope::profiler
