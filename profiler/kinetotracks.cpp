// The tracks of an imported trace: order and names from the files' "M"
// metadata, so the timeline lists them as chrome://tracing does (processes by
// sort index, then threads by sort index), one process group per rank.

#include "profiler/kinetotracks.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <tuple>

namespace fusescope::profiler::kineto {

namespace {

// Kineto's own defaults when a file has no sort index: CPU processes by pid,
// then GPUs, then the profiler's span rows ("Spans", "Traces").
constexpr int64_t kGpuProcessBase = 0x1000000;
constexpr int64_t kTextProcessBase = 0x20000000;

std::optional<int64_t> numberIn(std::string_view text)
{
    if (text.starts_with("stream "))
        text.remove_prefix(7);
    int64_t n = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || p != text.data() + text.size())
        return std::nullopt;
    return n;
}

} // namespace

TrackLayout::TrackLayout(const ImportState &state) : m_state(state)
{
    m_multiRank = state.files.size() > 1;
}

int64_t TrackLayout::rankOf(uint32_t file) const
{
    const int64_t rank = m_state.files[file].rank;
    return rank >= 0 ? rank : int64_t(file);
}

const ProcessMeta *TrackLayout::process(const PendingTrack &t) const
{
    const auto it = m_state.processes.find(processKey(t.file, t.pid));
    return it == m_state.processes.end() ? nullptr : &it->second;
}

const ThreadMeta *TrackLayout::thread(const PendingTrack &t) const
{
    const auto it = m_state.threads.find(trackKey(t.file, t.pid, t.tid));
    return it == m_state.threads.end() ? nullptr : &it->second;
}

int64_t TrackLayout::processSort(const PendingTrack &t) const
{
    if (const ProcessMeta *p = process(t); p && p->hasSort)
        return p->sortIndex;
    const std::optional<int64_t> pid = numberIn(t.pid);
    if (!pid)
        return kTextProcessBase;
    return t.gpu ? kGpuProcessBase + *pid : *pid;
}

int64_t TrackLayout::threadSort(const PendingTrack &t) const
{
    if (const ThreadMeta *th = thread(t); th && th->hasSort)
        return th->sortIndex;
    return numberIn(t.tid).value_or(std::numeric_limits<int32_t>::max());
}

std::string TrackLayout::processName(const PendingTrack &t) const
{
    const ProcessMeta *p = process(t);
    if (t.gpu) {
        if (p && p->labels.starts_with("GPU"))
            return p->labels;
        return "GPU " + (t.device >= 0 ? std::to_string(t.device) : t.pid);
    }
    if (p && !p->name.empty())
        return p->name + (numberIn(t.pid) ? " (" + t.pid + ")" : "");
    return numberIn(t.pid) ? "process " + t.pid : t.pid;
}

std::string TrackLayout::threadName(const PendingTrack &t) const
{
    if (const ThreadMeta *th = thread(t); th && !th->name.empty())
        return th->name;
    if (!numberIn(t.tid) || t.tid.starts_with("stream "))
        return t.tid;
    return (t.gpu ? "stream " : "thread ") + t.tid;
}

std::string TrackLayout::rankPrefix(uint32_t file) const
{
    return m_multiRank ? "rank " + std::to_string(rankOf(file)) + " · " : std::string();
}

// A string pid or tid gets a negative stand-in, the same for the same text.
int64_t TrackLayout::numericId(const std::string &text)
{
    if (const std::optional<int64_t> n = numberIn(text))
        return *n;
    auto [it, added] = m_textIds.try_emplace(text, -int64_t(m_textIds.size()) - 1);
    return it->second;
}

std::vector<uint16_t> TrackLayout::order() const
{
    const std::vector<PendingTrack> &tracks = m_state.tracks;
    std::vector<uint16_t> order(tracks.size());
    std::iota(order.begin(), order.end(), uint16_t(0));
    auto key = [&](uint16_t i) {
        const PendingTrack &t = tracks[i];
        return std::make_tuple(rankOf(t.file), t.file, processSort(t), t.pid, threadSort(t), t.tid);
    };
    std::stable_sort(order.begin(), order.end(), [&](uint16_t a, uint16_t b) { return key(a) < key(b); });
    return order;
}

Track TrackLayout::threadTrack(uint16_t local, StringTable &strings)
{
    const PendingTrack &t = m_state.tracks[local];
    Track track;
    track.kind = t.gpu ? TrackKind::GpuStream : TrackKind::CpuThread;
    track.name = strings.intern(rankPrefix(t.file) + processName(t) + " · " + threadName(t));
    track.pid = m_multiRank ? rankOf(t.file) : numericId(t.pid);
    track.tid = numericId(t.tid);
    track.device = t.gpu ? (t.device >= 0 ? t.device : int32_t(numberIn(t.pid).value_or(-1))) : -1;
    return track;
}

Track TrackLayout::counterTrack(const CounterSeries &series, StringTable &strings)
{
    Track track;
    track.kind = TrackKind::Counter;
    track.name = strings.intern(rankPrefix(series.file) + series.name);
    track.pid = m_multiRank ? rankOf(series.file) : numericId(series.pid);
    return track;
}

} // namespace fusescope::profiler::kineto
