// Read Kineto events → pending records (see kinetoread.h): what each phase
// makes, in the file's order, as B/E pairing, flow order and track numbering
// depend on it.

#include "profiler/kinetoread.h"
#include "profiler/kinetotext.h"

#include "core/tensor/tensor.h"

#include <charconv>

namespace fusescope::profiler::kineto {

void failAt(const std::string &path, const std::string &what, const char *buffer, const char *at,
            std::optional<size_t> event)
{
    std::string where = " at byte " + std::to_string(at ? at - buffer : 0);
    if (event)
        where = " in event " + std::to_string(*event) + where;
    throw Error(path + ": " + what + where);
}

EventBuilder::EventBuilder(const JsonBuffer &buffer, uint32_t file, ImportState &state)
    : m_text(buffer.data()), m_textSize(buffer.size()), m_file(file), m_state(state), m_path(state.files[file].path)
{
    // Kineto writes 200-600 bytes an event, nearly all with args: one guess
    // spares the copies of growing vectors (the pages are touched only as
    // events arrive; a guess of half as many args copied the V100 trace's
    // 45,000 once, 5 % of the builder's time).
    m_state.events.reserve(m_state.events.size() + buffer.size() / 256);
    m_state.args.reserve(m_state.args.size() + buffer.size() / 256);
}

// Copied into each event's fields: assigning ArgsFields() zeroed them with
// `rep stos` first, slow to start for a few cache lines (see kBlankEvent).
constexpr ArgsFields kBlankFields{};

void EventBuilder::add(const ReadBatch &batch)
{
    for (const ReadEvent &read : batch.events) {
        m_read = &read;
        m_ev = &read.ev;
        m_fields = kBlankFields;
        m_fields.address = read.strings.address;
        readArgs(batch);
        handleEvent();
    }
}

void EventBuilder::failEvent(const std::string &what) const
{
    failAt(m_path, what, m_text, m_read->start, m_read->index);
}

// ---- args ----

void EventBuilder::readArgs(const ReadBatch &batch)
{
    m_extra.clear();
    m_numbers.clear();
    for (size_t i = m_read->argsBegin; i < m_read->argsEnd; ++i)
        readArg(batch.args[i]);
    if (!m_extra.empty())
        m_extra.push_back('}');
}

// Keeps what EventArgs has a field for, uses what memory, metadata, counter
// and copy events need, and keeps every other value in `extra`.
void EventBuilder::readArg(const ArgText &arg)
{
    const std::string_view key = arg.key, raw = arg.raw;
    if (arg.kind == ArgText::Nested) {
        int32_t(&dims)[3] = equals(key, "grid") ? m_fields.args.grid : m_fields.args.block;
        if ((equals(key, "grid") || equals(key, "block")) && parseDims(raw, dims))
            m_fields.known = true;
        else
            appendExtra(key, raw);
        return;
    }
    if (arg.kind == ArgText::Number) {
        if (readEventArg(key, raw)) {
            m_fields.known = true;
            return;
        }
        m_numbers.push_back({key, raw});
        readNumberArg(key, raw);
    }
    appendExtra(key, raw);
}

// A key that is a view into the file was written without escapes (the
// reader unescapes others into its arena): it needs none now either.
void EventBuilder::appendExtra(std::string_view key, std::string_view raw)
{
    m_extra.push_back(m_extra.empty() ? '{' : ',');
    const auto at = reinterpret_cast<uintptr_t>(key.data()), begin = reinterpret_cast<uintptr_t>(m_text);
    if (at >= begin && at + key.size() <= begin + m_textSize) {
        m_extra.push_back('"');
        m_extra.append(key);
        m_extra.push_back('"');
    } else {
        appendJsonString(m_extra, key);
    }
    m_extra.push_back(':');
    m_extra.append(raw);
}

bool EventBuilder::readEventArg(std::string_view key, std::string_view raw)
{
    EventArgs &a = m_fields.args;
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

void EventBuilder::readNumberArg(std::string_view key, std::string_view raw)
{
    if (equals(key, "bytes"))
        std::from_chars(raw.data(), raw.data() + raw.size(), m_fields.bytes);
    else if (equals(key, "Bytes"))
        parseInt(raw, m_fields.memBytes);
    else if (equals(key, "Total Allocated"))
        parseInt(raw, m_fields.totalAllocated);
    else if (equals(key, "Total Reserved"))
        parseInt(raw, m_fields.totalReserved);
    else if (equals(key, "Device Id"))
        parseInt(raw, m_fields.deviceId);
    else if (equals(key, "Device Type"))
        parseInt(raw, m_fields.deviceType);
    else if (equals(key, "Addr"))
        parseAddress(raw, m_fields.address);
    else if (equals(key, "sort_index"))
        m_fields.hasSort = parseInt(raw, m_fields.sortIndex);
}

// ---- what each phase makes ----

void EventBuilder::handleEvent()
{
    if (m_ev->ph == 0)
        failEvent("the event has no \"ph\" (phase)");
    if (m_ev->ph == 'M')
        return addMetadata();
    if (!m_ev->hasTs)
        failEvent("the event has no \"ts\"");
    switch (m_ev->ph) {
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
uint16_t EventBuilder::track()
{
    if (m_hasLastTrack && m_ev->pid == m_lastPid && m_ev->tid == m_lastTid)
        return m_lastTrack;
    m_lastTrack = findTrack();
    m_lastPid = m_ev->pid;
    m_lastTid = m_ev->tid;
    m_hasLastTrack = true;
    return m_lastTrack;
}

uint16_t EventBuilder::findTrack()
{
    std::string key = trackKey(m_file, m_ev->pid, m_ev->tid);
    if (auto it = m_state.trackIndex.find(key); it != m_state.trackIndex.end())
        return it->second;
    if (m_state.tracks.size() >= TrackId::kInvalid)
        failEvent("more threads and streams than the 65,535 a run can hold");
    const auto index = static_cast<uint16_t>(m_state.tracks.size());
    m_state.tracks.push_back({m_file, std::string(m_ev->pid), std::string(m_ev->tid), false, -1});
    m_state.trackIndex.emplace(std::move(key), index);
    return index;
}

StringId EventBuilder::intern(std::string_view s)
{
    if (auto it = m_names.find(s); it != m_names.end())
        return it->second;
    const StringId id = m_state.trace.strings.intern(s);
    m_names.emplace(s, id);
    return id;
}

void EventBuilder::addComplete()
{
    if (!m_ev->hasDur)
        failEvent("a complete (\"X\") event has no \"dur\"");
    if (m_ev->dur < 0)
        failEvent("\"dur\" is negative");
    pushEvent(makeEvent(m_ev->ts, m_ev->dur));
}

Event EventBuilder::makeEvent(int64_t start, int64_t duration)
{
    Event e;
    e.start = start;
    e.duration = duration;
    e.name = intern(m_ev->name);
    e.kind = m_ev->ph == 'i' || m_ev->ph == 'I' ? EventKind::Instant : kindOf(m_ev->cat, m_ev->name);
    e.track = TrackId(track());
    if (e.kind == EventKind::Memcpy || e.kind == EventKind::Memset)
        e.bytes = float(m_fields.bytes);
    if (e.kind == EventKind::Memcpy) {
        m_fields.args.copyKind = copyKindOf(m_ev->name);
        m_fields.args.pinned = m_ev->name.find("Pinned") != std::string_view::npos;
        m_fields.known = true;
    }
    e.args = takeArgs();
    if (isGpuKind(e.kind) || equals(m_ev->cat, "gpu_user_annotation"))
        markGpu(e.track.value);
    return e;
}

ArgsId EventBuilder::takeArgs()
{
    if (!m_fields.known && m_extra.empty())
        return {};
    if (!m_extra.empty())
        m_fields.args.extra = m_state.trace.strings.intern(m_extra);
    m_state.args.push_back(m_fields.args);
    return ArgsId(static_cast<uint32_t>(m_state.args.size() - 1));
}

void EventBuilder::markGpu(uint16_t index)
{
    PendingTrack &t = m_state.tracks[index];
    t.gpu = true;
    if (t.device < 0)
        t.device = m_fields.args.device;
}

void EventBuilder::pushEvent(const Event &e)
{
    m_state.events.push_back(e);
    m_lastTs = std::max(m_lastTs, e.end());
}

// B/E pair up per thread like a stack, whatever their names (as
// chrome://tracing does).
void EventBuilder::openSlice()
{
    Event e = makeEvent(m_ev->ts, 0);
    m_open[e.track.value].push_back(e);
    m_lastTs = std::max(m_lastTs, m_ev->ts);
}

void EventBuilder::closeSlice()
{
    auto it = m_open.find(track());
    if (it == m_open.end() || it->second.empty())
        return; // its B was before the capture started
    Event e = it->second.back();
    it->second.pop_back();
    if (m_ev->ts < e.start)
        failEvent("an \"E\" event ends before its \"B\" began");
    e.duration = m_ev->ts - e.start;
    pushEvent(e);
}

// A capture cut short leaves ranges open: they end with the file, and the
// run says it is incomplete.
void EventBuilder::finish()
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

void EventBuilder::addInstant()
{
    if (equals(m_ev->name, "[memory]"))
        return addMemory();
    pushEvent(makeEvent(m_ev->ts, 0));
}

void EventBuilder::addMemory()
{
    PendingMemory m;
    m.ts = m_ev->ts;
    m.address = m_fields.address;
    m.bytes = m_fields.memBytes;
    m.totalAllocated = m_fields.totalAllocated;
    m.totalReserved = m_fields.totalReserved;
    m.track = track();
    // Device Type 0 is the CPU (c10::DeviceType::CPU), whatever its id says.
    m.device = static_cast<int16_t>(m_fields.deviceType == 0 ? -1 : m_fields.deviceId);
    m_state.memory.push_back(m);
    m_lastTs = std::max(m_lastTs, m_ev->ts);
}

void EventBuilder::addCounter()
{
    for (const auto &[key, text] : m_numbers) {
        double value = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || p != text.data() + text.size())
            continue;
        const std::string name = key == m_ev->name ? std::string(m_ev->name)
                                                  : std::string(m_ev->name) + " · " + std::string(key);
        m_state.counters.push_back({m_ev->ts, value, counterSeries(name)});
    }
}

uint32_t EventBuilder::counterSeries(const std::string &name)
{
    std::string key = processKey(m_file, m_ev->pid) + '\x1f' + name;
    auto [it, added] = m_state.counterIndex.try_emplace(std::move(key), uint32_t(m_state.counterSeries.size()));
    if (added)
        m_state.counterSeries.push_back({m_file, std::string(m_ev->pid), name});
    return it->second;
}

void EventBuilder::addFlowEnd()
{
    PendingFlowEnd f;
    f.kind = flowKindOf(m_ev->cat, m_ev->name);
    f.id = flowId();
    f.ts = m_ev->ts;
    f.track = track();
    f.order = static_cast<uint32_t>(m_state.flowEnds.size());
    f.enclosing = m_ev->ph != 'f' || equals(m_ev->bp, "e");
    f.phase = m_ev->ph;
    f.file = m_file;
    m_state.flowEnds.push_back(f);
}

// Flows are matched by category and id; user flows of two categories may
// reuse an id, so their category is folded in.
uint64_t EventBuilder::flowId() const
{
    uint64_t id = 0;
    if (!parseInt(m_ev->id, id))
        id = std::hash<std::string_view>{}(m_ev->id);
    if (flowKindOf(m_ev->cat, m_ev->name) == FlowKind::User)
        id ^= std::hash<std::string_view>{}(m_ev->cat) * 31;
    return id;
}

void EventBuilder::addMetadata()
{
    if (m_ev->name == "process_name" || m_ev->name == "process_labels" || m_ev->name == "process_sort_index") {
        ProcessMeta &p = m_state.processes[processKey(m_file, m_ev->pid)];
        if (m_ev->name == "process_name")
            p.name = m_read->strings.name;
        else if (m_ev->name == "process_labels")
            p.labels = m_read->strings.labels;
        else
            p.hasSort = m_fields.hasSort, p.sortIndex = m_fields.sortIndex;
    } else if (m_ev->name == "thread_name" || m_ev->name == "thread_sort_index") {
        ThreadMeta &t = m_state.threads[trackKey(m_file, m_ev->pid, m_ev->tid)];
        if (m_ev->name == "thread_name")
            t.name = trimRight(m_read->strings.name);
        else
            t.hasSort = m_fields.hasSort, t.sortIndex = m_fields.sortIndex;
    }
}

} // namespace fusescope::profiler::kineto
