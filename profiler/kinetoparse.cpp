// One Kineto / Chrome trace-event document → pending records, walked once with
// simdjson On Demand, so no tree of the file is ever built. Fields are read in
// the order the file has them; an event's meaning (phase, category) is decided
// after its last field.

#include "profiler/kinetoimport.h"
#include "profiler/kinetotext.h"

#include "core/tensor/tensor.h"

#include <simdjson.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace fusescope::profiler::kineto {

namespace {

namespace od = simdjson::ondemand;

constexpr size_t kPollEvery = 4096; // events between cancel polls and progress reports

// The value of a result, or simdjson's exception. (simdjson_result<field>
// has its own value(): the field's value, not the result's.)
template <typename T>
T take(simdjson::simdjson_result<T> &&result)
{
    T out;
    if (const simdjson::error_code ec = std::move(result).get(out))
        throw simdjson::simdjson_error(ec);
    return out;
}

// What an event's "args" holds: the fields EventArgs has, what memory,
// metadata and counter events need, and the rest as a JSON object.
struct ArgsScan {
    EventArgs args;
    bool known = false; // any EventArgs field was set
    double bytes = 0;
    int64_t memBytes = 0;
    int64_t totalAllocated = -1;
    int64_t totalReserved = -1;
    int64_t deviceId = -1;
    int64_t deviceType = -1;
    uint64_t address = 0;
    std::string_view name;   // metadata: process or thread name
    std::string_view labels; // metadata: process labels
    bool hasSort = false;
    int64_t sortIndex = 0;
    std::vector<std::pair<std::string_view, std::string_view>> numbers; // key and number text, for counters
    std::string extra;

    // Keeps the two buffers' capacity from event to event.
    void clear()
    {
        args = EventArgs{};
        known = false;
        bytes = 0;
        memBytes = 0;
        totalAllocated = totalReserved = deviceId = deviceType = -1;
        address = 0;
        name = labels = {};
        hasSort = false;
        sortIndex = 0;
        numbers.clear();
        extra.clear();
    }
};

// The fields of one trace event, as read.
struct RawEvent {
    char ph = 0;
    std::string_view cat;
    std::string_view name;
    std::string_view pid;
    std::string_view tid;
    std::string_view bp;
    std::string_view id;
    int64_t ts = 0;
    int64_t dur = 0;
    bool hasTs = false;
    bool hasDur = false;
};

class DocumentParser
{
public:
    DocumentParser(const JsonBuffer &buffer, uint32_t file, ImportState &state, ImportProgress &progress)
        : m_buffer(buffer), m_file(file), m_state(state), m_progress(progress), m_path(state.files[file].path)
    {
    }

    bool run()
    {
        try {
            return parseRoot();
        } catch (const simdjson::simdjson_error &e) {
            // A document cut short is incomplete where it ends, whatever was being read then.
            if (e.error() == simdjson::INCOMPLETE_ARRAY_OR_OBJECT)
                fail("invalid JSON: the file ends inside an array or object (is it cut short?)",
                     m_buffer.data() + m_buffer.size());
            fail(std::string("invalid JSON (") + simdjson::error_message(e.error()) + ")", errorLocation());
        }
    }

private:
    // ---- errors: the file, then the event and the byte they are at ----

    [[noreturn]] void fail(const std::string &what, const char *at) const
    {
        std::string where = " at byte " + std::to_string(at ? at - m_buffer.data() : 0);
        if (m_inEvents)
            where = " in event " + std::to_string(m_eventIndex) + where;
        throw Error(m_path + ": " + what + where);
    }
    [[noreturn]] void failEvent(const std::string &what) const { fail(what, m_eventStart); }

    const char *errorLocation()
    {
        const auto at = m_doc.current_location();
        return at.error() ? m_eventStart : at.value_unsafe();
    }

    // ---- the document ----

    bool parseRoot()
    {
        const simdjson::error_code ec =
            m_parser.iterate(m_buffer.data(), m_buffer.size(), m_buffer.size() + simdjson::SIMDJSON_PADDING).get(m_doc);
        if (ec)
            fail(std::string("is not valid JSON (") + simdjson::error_message(ec) + ")", stage1ErrorAt(ec));
        bool done = true;
        switch (m_doc.type().value()) {
        case od::json_type::array: done = parseEvents(m_doc.get_array()); break;
        case od::json_type::object: done = parseTopObject(); break;
        default: fail("is not a trace: a JSON trace is an object with \"traceEvents\" or an array of events", m_buffer.data());
        }
        // current_location() fails with OUT_OF_BOUNDS exactly at the end.
        if (done && !m_doc.current_location().error())
            fail("has content after the trace's JSON value", errorLocation());
        return done;
    }

    // Stage 1 does not say where it stopped; only a bad byte can be located.
    const char *stage1ErrorAt(simdjson::error_code ec) const
    {
        if (ec != simdjson::UTF8_ERROR)
            return m_buffer.data() + m_buffer.size();
        const char *p = m_buffer.data();
        size_t lo = 0;
        size_t hi = m_buffer.size();
        // The shortest invalid prefix, to a few bytes (a sequence cut at the
        // prefix's end also fails, so the answer may sit up to 3 bytes early).
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            (simdjson::validate_utf8(p, mid) ? lo : hi) = mid;
        }
        return p + lo;
    }

    bool parseTopObject()
    {
        bool sawEvents = false;
        for (auto result : m_doc.get_object()) {
            od::field field = take(std::move(result));
            const std::string_view key = field.unescaped_key().value();
            if (key == "traceEvents") {
                sawEvents = true;
                if (take(field.value().type()) != od::json_type::array)
                    fail("is not a trace: \"traceEvents\" is not an array", take(field.value().current_location()));
                if (!parseEvents(field.value().get_array()))
                    return false;
            } else if (key == "distributedInfo") {
                readDistributedInfo(field.value());
            } else if (key == "baseTimeNanoseconds") {
                readBaseTime(field.value());
            } else if (key == "deviceProperties") {
                readDeviceProperties(field.value());
            } else {
                validate(field.value());
            }
        }
        if (!sawEvents)
            fail("is not a trace: the JSON object has no \"traceEvents\" array", m_buffer.data());
        return true;
    }

    void readDistributedInfo(od::value v)
    {
        if (take(v.type()) != od::json_type::object)
            return validate(v);
        for (auto result : take(v.get_object())) {
            od::field field = take(std::move(result));
            const std::string_view key = take(field.unescaped_key());
            if ((key == "rank" || key == "world_size") && take(field.value().type()) == od::json_type::number)
                (key == "rank" ? m_state.files[m_file].rank : m_state.files[m_file].worldSize) =
                    take(field.value().get_int64());
            else
                validate(field.value());
        }
    }

    void readBaseTime(od::value v)
    {
        if (take(v.type()) != od::json_type::number)
            return validate(v);
        m_state.files[m_file].baseNs = take(v.get_int64());
        m_state.files[m_file].hasBase = true;
    }

    void readDeviceProperties(od::value v)
    {
        if (take(v.type()) != od::json_type::array)
            return validate(v);
        for (auto result : take(v.get_array())) {
            od::value device = take(std::move(result));
            if (take(device.type()) != od::json_type::object) {
                validate(device);
                continue;
            }
            for (auto fieldResult : take(device.get_object())) {
                od::field field = take(std::move(fieldResult));
                if (take(field.unescaped_key()) == "name" && m_state.files[m_file].gpu.empty())
                    m_state.files[m_file].gpu = std::string(take(field.value().get_string()));
                else
                    validate(field.value());
            }
        }
    }

    // Walks a value that is not used, so its syntax is checked all the same.
    void validate(od::value &v)
    {
        switch (take(v.type())) {
        case od::json_type::array:
            for (auto item : take(v.get_array())) {
                od::value x = take(std::move(item));
                validate(x);
            }
            break;
        case od::json_type::object:
            for (auto result : take(v.get_object())) {
                od::field field = take(std::move(result));
                take(field.unescaped_key());
                validate(field.value());
            }
            break;
        default:
            checkScalar(trimRight(v.raw_json_token()));
        }
    }
    void validate(od::value &&v) { validate(v); }

    void checkScalar(std::string_view raw)
    {
        if (!validScalar(raw))
            fail("invalid JSON value", raw.data());
    }

    // The text of an array or object value, checked on the way.
    std::string_view walkRaw(od::value &v)
    {
        const char *begin = take(v.current_location());
        validate(v);
        const char *end = take(m_doc.current_location());
        return trimRight(std::string_view(begin, size_t(end - begin)));
    }

    // ---- events ----

    bool parseEvents(od::array events)
    {
        m_inEvents = true;
        // Kineto writes 200-600 bytes an event: one guess spares the copies of
        // a growing vector (the pages are touched only as events arrive).
        m_state.events.reserve(m_state.events.size() + m_buffer.size() / 256);
        m_state.args.reserve(m_state.args.size() + m_buffer.size() / 512);
        for (auto element : events) {
            od::value value = element.value();
            m_eventStart = value.current_location().value();
            if (value.type().value() != od::json_type::object)
                failEvent("a trace event is not a JSON object");
            readEvent(value.get_object().value());
            handleEvent();
            if (++m_eventIndex % kPollEvery == 0 && !poll())
                return false;
        }
        m_inEvents = false;
        closeUnfinished();
        return true;
    }

    bool poll()
    {
        m_progress.parsing(double(m_eventStart - m_buffer.data()) / double(std::max<size_t>(1, m_buffer.size())));
        return !m_progress.cancelled();
    }

    void readEvent(od::object object)
    {
        m_ev = RawEvent{};
        m_args.clear();
        for (auto result : object) {
            od::field field = take(std::move(result));
            readField(readKey(field), field.value());
        }
    }

    // A key as the file has it when it has no escape (nearly always): a view
    // into the buffer, where unescaped_key() would copy every key of the file
    // into simdjson's string buffer. Stage 1 has checked the string is closed.
    static std::string_view readKey(od::field &field)
    {
        const char *begin = field.key().raw();
        const char *p = begin;
        while (*p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20)
            ++p;
        if (*p == '"')
            return {begin, size_t(p - begin)};
        return take(field.unescaped_key());
    }

    void readField(std::string_view key, od::value &v)
    {
        if (equals(key, "ph")) {
            const std::string_view ph = readString(v, "ph");
            m_ev.ph = ph.empty() ? 0 : ph.front();
        } else if (equals(key, "cat"))
            m_ev.cat = readString(v, "cat");
        else if (equals(key, "name"))
            m_ev.name = readString(v, "name");
        else if (equals(key, "pid"))
            m_ev.pid = readIdText(v, "pid");
        else if (equals(key, "tid"))
            m_ev.tid = readIdText(v, "tid");
        else if (equals(key, "ts"))
            m_ev.hasTs = readTime(v, "ts", m_ev.ts);
        else if (equals(key, "dur"))
            m_ev.hasDur = readTime(v, "dur", m_ev.dur);
        else if (equals(key, "id"))
            m_ev.id = readIdText(v, "id");
        else if (equals(key, "bp"))
            m_ev.bp = readString(v, "bp");
        else if (equals(key, "args"))
            readArgs(v);
        else
            validate(v);
    }

    std::string_view readString(od::value &v, const char *key)
    {
        std::string_view s;
        if (!stringValue(v, s))
            failEvent(trimRight(v.raw_json_token()).starts_with('"')
                          ? std::string("invalid JSON: the string of \"") + key + "\" has a bad escape"
                          : std::string("\"") + key + "\" is not a string");
        return s;
    }

    // A string without escapes is a view into the buffer: stage 1 has checked
    // its UTF-8 and control characters, and nothing needs copying. Others are
    // unescaped by simdjson, which checks the escapes.
    static bool stringValue(od::value &v, std::string_view &out)
    {
        const std::string_view raw = trimRight(v.raw_json_token());
        if (raw.size() < 2 || raw.front() != '"')
            return false;
        const std::string_view inner = raw.substr(1, raw.size() - 2);
        if (raw.back() == '"' && inner.find('\\') == std::string_view::npos) {
            out = inner;
            return true;
        }
        return !v.get_string().get(out);
    }

    // pid, tid and flow ids: a number or a string, compared as text.
    std::string_view readIdText(od::value &v, const char *key)
    {
        const od::json_type type = v.type().value();
        if (type == od::json_type::number) {
            const std::string_view raw = trimRight(v.raw_json_token());
            checkScalar(raw);
            return raw;
        }
        if (type != od::json_type::string)
            failEvent(std::string("\"") + key + "\" is neither a number nor a string");
        return readString(v, key);
    }

    bool readTime(od::value &v, const char *key, int64_t &ns)
    {
        if (v.type().value() != od::json_type::number)
            failEvent(std::string("\"") + key + "\" is not a number");
        const std::string_view raw = trimRight(v.raw_json_token());
        if (!microsTextToNs(raw, ns)) { // it checks the number's grammar too
            checkScalar(raw);
            failEvent(std::string("\"") + key + "\" is out of range");
        }
        return true;
    }

    // ---- args ----

    void readArgs(od::value &v)
    {
        if (v.type().value() != od::json_type::object)
            failEvent("\"args\" is not a JSON object");
        for (auto result : v.get_object()) {
            od::field field = take(std::move(result));
            const std::string_view key = readKey(field);
            readArg(key, field.value());
        }
        if (!m_args.extra.empty())
            m_args.extra.push_back('}');
    }

    // Keeps what EventArgs has a field for, uses what memory, metadata,
    // counter and copy events need, and keeps every other value in `extra`.
    void readArg(std::string_view key, od::value &v)
    {
        const od::json_type type = v.type().value();
        if (type == od::json_type::array || type == od::json_type::object) {
            const std::string_view raw = walkRaw(v);
            int32_t(&dims)[3] = equals(key, "grid") ? m_args.args.grid : m_args.args.block;
            if ((equals(key, "grid") || equals(key, "block")) && parseDims(raw, dims))
                m_args.known = true;
            else
                appendExtra(key, raw);
            return;
        }
        // The token is taken first: reading a string consumes the value.
        const std::string_view raw = trimRight(v.raw_json_token());
        checkScalar(raw);
        if (type == od::json_type::number && readEventArg(key, raw)) {
            m_args.known = true;
            return;
        }
        if (type == od::json_type::number) {
            m_args.numbers.emplace_back(key, raw);
            readNumberArg(key, raw);
        } else if (type == od::json_type::string && (equals(key, "name") || equals(key, "labels") || equals(key, "Addr"))) {
            readStringArg(key, v);
        }
        appendExtra(key, raw);
    }

    void appendExtra(std::string_view key, std::string_view raw)
    {
        m_args.extra.push_back(m_args.extra.empty() ? '{' : ',');
        appendJsonString(m_args.extra, key);
        m_args.extra.push_back(':');
        m_args.extra.append(raw);
    }

    bool readEventArg(std::string_view key, std::string_view raw)
    {
        EventArgs &a = m_args.args;
        if (equals(key, "correlation"))
            return parseInt(raw, a.correlation);
        if (equals(key, "External id") || equals(key, "external id"))
            return parseInt(raw, a.externalId);
        if (equals(key, "device"))
            return parseInt(raw, a.device);
        if (equals(key, "stream"))
            return parseInt(raw, a.stream);
        return false;
    }

    void readStringArg(std::string_view key, od::value &v)
    {
        std::string_view text;
        if (!stringValue(v, text))
            return;
        if (equals(key, "name"))
            m_args.name = text;
        else if (equals(key, "labels"))
            m_args.labels = text;
        else
            parseAddress(text, m_args.address);
    }

    void readNumberArg(std::string_view key, std::string_view raw)
    {
        if (equals(key, "bytes"))
            std::from_chars(raw.data(), raw.data() + raw.size(), m_args.bytes);
        else if (equals(key, "Bytes"))
            parseInt(raw, m_args.memBytes);
        else if (equals(key, "Total Allocated"))
            parseInt(raw, m_args.totalAllocated);
        else if (equals(key, "Total Reserved"))
            parseInt(raw, m_args.totalReserved);
        else if (equals(key, "Device Id"))
            parseInt(raw, m_args.deviceId);
        else if (equals(key, "Device Type"))
            parseInt(raw, m_args.deviceType);
        else if (equals(key, "Addr"))
            parseAddress(raw, m_args.address);
        else if (equals(key, "sort_index"))
            m_args.hasSort = parseInt(raw, m_args.sortIndex);
    }

    // ---- what each phase makes ----

    void handleEvent()
    {
        if (m_ev.ph == 0)
            failEvent("the event has no \"ph\" (phase)");
        if (m_ev.ph == 'M')
            return addMetadata();
        if (!m_ev.hasTs)
            failEvent("the event has no \"ts\"");
        switch (m_ev.ph) {
        case 'X': addComplete(); break;
        case 'B': openSlice(); break;
        case 'E': closeSlice(); break;
        case 'i':
        case 'I': addInstant(); break;
        case 'C': addCounter(); break;
        case 's':
        case 't':
        case 'f': addFlowEnd(); break;
        default: break; // async (b/e/n), samples, objects: not part of this model
        }
    }

    // Neighbouring events are mostly on one thread: the last track is kept.
    uint16_t track()
    {
        if (m_hasLastTrack && m_ev.pid == m_lastPid && m_ev.tid == m_lastTid)
            return m_lastTrack;
        m_lastTrack = findTrack();
        m_lastPid = m_ev.pid;
        m_lastTid = m_ev.tid;
        m_hasLastTrack = true;
        return m_lastTrack;
    }

    uint16_t findTrack()
    {
        std::string key = trackKey(m_file, m_ev.pid, m_ev.tid);
        if (auto it = m_state.trackIndex.find(key); it != m_state.trackIndex.end())
            return it->second;
        if (m_state.tracks.size() >= TrackId::kInvalid)
            failEvent("more threads and streams than the 65,535 a run can hold");
        const auto index = static_cast<uint16_t>(m_state.tracks.size());
        m_state.tracks.push_back({m_file, std::string(m_ev.pid), std::string(m_ev.tid), false, -1});
        m_state.trackIndex.emplace(std::move(key), index);
        return index;
    }

    StringId intern(std::string_view s)
    {
        if (auto it = m_names.find(s); it != m_names.end())
            return it->second;
        const StringId id = m_state.trace.strings.intern(s);
        m_names.emplace(s, id);
        return id;
    }

    void addComplete()
    {
        if (!m_ev.hasDur)
            failEvent("a complete (\"X\") event has no \"dur\"");
        if (m_ev.dur < 0)
            failEvent("\"dur\" is negative");
        pushEvent(makeEvent(m_ev.ts, m_ev.dur));
    }

    Event makeEvent(int64_t start, int64_t duration)
    {
        Event e;
        e.start = start;
        e.duration = duration;
        e.name = intern(m_ev.name);
        e.kind = m_ev.ph == 'i' || m_ev.ph == 'I' ? EventKind::Instant : kindOf(m_ev.cat, m_ev.name);
        e.track = TrackId(track());
        if (e.kind == EventKind::Memcpy || e.kind == EventKind::Memset)
            e.bytes = float(m_args.bytes);
        if (e.kind == EventKind::Memcpy) {
            m_args.args.copyKind = copyKindOf(m_ev.name);
            m_args.args.pinned = m_ev.name.find("Pinned") != std::string_view::npos;
            m_args.known = true;
        }
        e.args = takeArgs();
        if (isGpuKind(e.kind) || equals(m_ev.cat, "gpu_user_annotation"))
            markGpu(e.track.value);
        return e;
    }

    ArgsId takeArgs()
    {
        if (!m_args.known && m_args.extra.empty())
            return {};
        if (!m_args.extra.empty())
            m_args.args.extra = m_state.trace.strings.intern(m_args.extra);
        m_state.args.push_back(m_args.args);
        return ArgsId(static_cast<uint32_t>(m_state.args.size() - 1));
    }

    void markGpu(uint16_t index)
    {
        PendingTrack &t = m_state.tracks[index];
        t.gpu = true;
        if (t.device < 0)
            t.device = m_args.args.device;
    }

    void pushEvent(const Event &e)
    {
        m_state.events.push_back(e);
        m_lastTs = std::max(m_lastTs, e.end());
    }

    // B/E pair up per thread like a stack, whatever their names (as
    // chrome://tracing does).
    void openSlice()
    {
        Event e = makeEvent(m_ev.ts, 0);
        m_open[e.track.value].push_back(e);
        m_lastTs = std::max(m_lastTs, m_ev.ts);
    }

    void closeSlice()
    {
        auto it = m_open.find(track());
        if (it == m_open.end() || it->second.empty())
            return; // its B was before the capture started
        Event e = it->second.back();
        it->second.pop_back();
        if (m_ev.ts < e.start)
            failEvent("an \"E\" event ends before its \"B\" began");
        e.duration = m_ev.ts - e.start;
        pushEvent(e);
    }

    // A capture cut short leaves ranges open: they end with the file, and the
    // run says it is incomplete.
    void closeUnfinished()
    {
        for (auto &[track, stack] : m_open) {
            for (Event &e : stack) {
                e.duration = std::max<int64_t>(0, m_lastTs - e.start);
                m_state.events.push_back(e);
                m_state.unfinishedRanges = true;
            }
        }
        m_open.clear();
    }

    void addInstant()
    {
        if (equals(m_ev.name, "[memory]"))
            return addMemory();
        pushEvent(makeEvent(m_ev.ts, 0));
    }

    void addMemory()
    {
        PendingMemory m;
        m.ts = m_ev.ts;
        m.address = m_args.address;
        m.bytes = m_args.memBytes;
        m.totalAllocated = m_args.totalAllocated;
        m.totalReserved = m_args.totalReserved;
        m.track = track();
        // Device Type 0 is the CPU (c10::DeviceType::CPU), whatever its id says.
        m.device = static_cast<int16_t>(m_args.deviceType == 0 ? -1 : m_args.deviceId);
        m_state.memory.push_back(m);
        m_lastTs = std::max(m_lastTs, m_ev.ts);
    }

    void addCounter()
    {
        for (const auto &[key, text] : m_args.numbers) {
            double value = 0;
            const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc() || p != text.data() + text.size())
                continue;
            const std::string name = key == m_ev.name ? std::string(m_ev.name)
                                                      : std::string(m_ev.name) + " · " + std::string(key);
            m_state.counters.push_back({m_ev.ts, value, counterSeries(name)});
        }
    }

    uint32_t counterSeries(const std::string &name)
    {
        std::string key = processKey(m_file, m_ev.pid) + '\x1f' + name;
        auto [it, added] = m_state.counterIndex.try_emplace(std::move(key), uint32_t(m_state.counterSeries.size()));
        if (added)
            m_state.counterSeries.push_back({m_file, std::string(m_ev.pid), name});
        return it->second;
    }

    void addFlowEnd()
    {
        PendingFlowEnd f;
        f.kind = flowKindOf(m_ev.cat, m_ev.name);
        f.id = flowId();
        f.ts = m_ev.ts;
        f.track = track();
        f.order = static_cast<uint32_t>(m_state.flowEnds.size());
        f.enclosing = m_ev.ph != 'f' || equals(m_ev.bp, "e");
        f.phase = m_ev.ph;
        f.file = m_file;
        m_state.flowEnds.push_back(f);
    }

    // Flows are matched by category and id; user flows of two categories may
    // reuse an id, so their category is folded in.
    uint64_t flowId() const
    {
        uint64_t id = 0;
        if (!parseInt(m_ev.id, id))
            id = std::hash<std::string_view>{}(m_ev.id);
        if (flowKindOf(m_ev.cat, m_ev.name) == FlowKind::User)
            id ^= std::hash<std::string_view>{}(m_ev.cat) * 31;
        return id;
    }

    void addMetadata()
    {
        if (m_ev.name == "process_name" || m_ev.name == "process_labels" || m_ev.name == "process_sort_index") {
            ProcessMeta &p = m_state.processes[processKey(m_file, m_ev.pid)];
            if (m_ev.name == "process_name")
                p.name = m_args.name;
            else if (m_ev.name == "process_labels")
                p.labels = m_args.labels;
            else
                p.hasSort = m_args.hasSort, p.sortIndex = m_args.sortIndex;
        } else if (m_ev.name == "thread_name" || m_ev.name == "thread_sort_index") {
            ThreadMeta &t = m_state.threads[trackKey(m_file, m_ev.pid, m_ev.tid)];
            if (m_ev.name == "thread_name")
                t.name = trimRight(m_args.name);
            else
                t.hasSort = m_args.hasSort, t.sortIndex = m_args.sortIndex;
        }
    }

    const JsonBuffer &m_buffer;
    const uint32_t m_file;
    ImportState &m_state;
    ImportProgress &m_progress;
    const std::string m_path;
    od::parser m_parser;
    od::document m_doc;
    bool m_inEvents = false;
    size_t m_eventIndex = 0;
    const char *m_eventStart = nullptr;
    RawEvent m_ev;
    ArgsScan m_args;
    bool m_hasLastTrack = false;
    uint16_t m_lastTrack = 0;
    std::string_view m_lastPid;
    std::string_view m_lastTid;
    int64_t m_lastTs = std::numeric_limits<int64_t>::min();
    std::unordered_map<std::string_view, StringId> m_names; // views into the parser's string buffer
    std::unordered_map<uint16_t, std::vector<Event>> m_open;  // B events per track, innermost last
};

} // namespace

std::string trackKey(uint32_t file, std::string_view pid, std::string_view tid)
{
    std::string key = processKey(file, pid);
    key.push_back('\x1f');
    key.append(tid);
    return key;
}

std::string processKey(uint32_t file, std::string_view pid)
{
    std::string key = std::to_string(file);
    key.push_back('\x1f');
    key.append(pid);
    return key;
}

bool parseDocument(const JsonBuffer &buffer, uint32_t file, ImportState &state, ImportProgress &progress)
{
    DocumentParser parser(buffer, file, state, progress);
    return parser.run();
}

} // namespace fusescope::profiler::kineto
