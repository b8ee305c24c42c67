#include "profiler/statistics.h"

#include "core/compiler/graph_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace fusescope::profiler {

void TimeStats::add(const Event &event)
{
    minNs = calls ? std::min(minNs, event.duration) : event.duration;
    maxNs = calls ? std::max(maxNs, event.duration) : event.duration;
    ++calls;
    totalNs += event.duration;
    flops += event.flops;
    bytes += event.bytes;
}

void TransferStats::add(const Event &event)
{
    ++calls;
    bytes += event.bytes;
    totalNs += event.duration;
}

std::optional<std::vector<int>> parseOrigins(std::string_view text)
{
    std::vector<int> ids;
    const char *p = text.data();
    const char *end = p + text.size();
    while (p < end) {
        while (p < end && *p == ' ')
            ++p;
        int id = 0;
        auto [next, ec] = std::from_chars(p, end, id);
        if (ec != std::errc() || (next < end && *next != ','))
            return std::nullopt;
        ids.push_back(id);
        p = next == end ? end : next + 1;
    }
    if (ids.empty())
        return std::nullopt;
    return ids;
}

const EventArgs *argsOf(const Run &run, const Event &event)
{
    return event.args.valid() && event.args.value < run.args.size() ? &run.args[event.args.value] : nullptr;
}

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr size_t kCopyKindCount = size_t(CopyKind::PeerToPeer) + 1;

// Rows keyed by an integer, in the order their keys first appear.
template <typename Row>
class Rows
{
public:
    template <typename Make>
    Row &at(uint64_t key, Make make)
    {
        auto [it, added] = m_index.try_emplace(key, m_rows.size());
        if (added)
            m_rows.push_back(make());
        return m_rows[it->second];
    }
    std::vector<Row> take() { return std::move(m_rows); }

private:
    std::unordered_map<uint64_t, size_t> m_index;
    std::vector<Row> m_rows;
};

// Stable, so equal rows keep the order in which they first appeared.
template <typename Row, typename Key>
void sortDescending(std::vector<Row> &rows, Key key)
{
    std::stable_sort(rows.begin(), rows.end(), [&](const Row &a, const Row &b) { return key(a) > key(b); });
}

// Node names of the captured graphs. A graph break makes several capture
// stages; an id that appears in more than one keeps the first segment's name.
std::map<int, std::string> capturedNodeNames(const Run &run, std::vector<std::string> &warnings)
{
    std::map<int, std::string> names;
    for (const compiler::CompileStage &stage : run.stages) {
        if (stage.name != "capture")
            continue;
        try {
            const compiler::Graph graph = compiler::graphFromJsonText(stage.graphJson);
            for (const compiler::Node *node : graph.nodes())
                names.emplace(node->id, node->name);
        } catch (const Error &e) {
            warnings.push_back("capture graph of segment " + std::to_string(stage.segment)
                               + " is unreadable, its nodes are shown by id: " + e.what());
        }
    }
    return names;
}

// One range on a track's nesting stack.
struct OpenRange {
    uint32_t event = kNone;
    bool underOp = false; // this range is an op or lies inside one
};

// Per-track ranges, sorted by (start, depth) so a parent comes before its children.
class RangeWalk
{
public:
    explicit RangeWalk(const Run &run) : m_run(run) {}

    void add(uint32_t index)
    {
        const TrackId track = m_run.events[index].track;
        if (track.value >= m_byTrack.size())
            m_byTrack.resize(size_t(track.value) + 1);
        m_byTrack[track.value].push_back(index);
    }

    // Calls visit(event, parent or null, parentIsUnderOp) for every range.
    template <typename Visit>
    void walk(Visit visit)
    {
        for (std::vector<uint32_t> &indices : m_byTrack) {
            sortByStart(indices);
            walkTrack(indices, visit);
        }
    }

private:
    // Batches are each sorted, so a track is usually sorted already.
    void sortByStart(std::vector<uint32_t> &indices) const
    {
        auto before = [&](uint32_t a, uint32_t b) {
            const Event &x = m_run.events[a];
            const Event &y = m_run.events[b];
            return x.start != y.start ? x.start < y.start : x.depth < y.depth;
        };
        if (!std::is_sorted(indices.begin(), indices.end(), before))
            std::sort(indices.begin(), indices.end(), before);
    }

    template <typename Visit>
    void walkTrack(const std::vector<uint32_t> &indices, Visit &visit)
    {
        std::vector<OpenRange> open; // open[d]: the latest range at depth d
        for (uint32_t index : indices) {
            const Event &event = m_run.events[index];
            const OpenRange parent = enclosing(open, event);
            visit(event, parent.event == kNone ? nullptr : &m_run.events[parent.event], parent.underOp);
            open.resize(size_t(event.depth) + 1);
            open[event.depth] = {index, event.kind == EventKind::Op || parent.underOp};
        }
    }

    // The range one level up, if it still contains `event`.
    OpenRange enclosing(const std::vector<OpenRange> &open, const Event &event) const
    {
        if (event.depth == 0 || event.depth > open.size())
            return {};
        const OpenRange candidate = open[event.depth - 1];
        if (candidate.event == kNone)
            return {};
        const Event &parent = m_run.events[candidate.event];
        return parent.start <= event.start && event.end() <= parent.end() ? candidate : OpenRange{};
    }

    const Run &m_run;
    std::vector<std::vector<uint32_t>> m_byTrack;
};

struct DetailTotals {
    int64_t launches = 0;
    double ns = 0;
    double flops = 0;
    double bytes = 0;
};

class StatisticsBuilder
{
public:
    StatisticsBuilder(const Trace &trace, const Run &run) : m_strings(trace.strings), m_run(run), m_ranges(run) {}

    RunStatistics build()
    {
        for (uint32_t i = 0; i < m_run.events.size(); ++i)
            addEvent(i);
        m_ranges.walk([this](const Event &e, const Event *parent, bool underOp) { addRange(e, parent, underOp); });
        for (const Allocation &a : m_run.allocations)
            addAllocation(a);
        finishRanges();
        finishKernels();
        finishCopies();
        finishNodes();
        finishMemory();
        return std::move(m_stats);
    }

private:
    void addEvent(uint32_t index)
    {
        const Event &e = m_run.events[index];
        switch (e.kind) {
        case EventKind::Op:
        case EventKind::UserRange: m_ranges.add(index); break;
        case EventKind::Step: m_stats.steps.add(e); break;
        case EventKind::Kernel:
            addKernel(e);
            m_ranges.add(index);
            break;
        case EventKind::Memcpy: addCopy(e); break;
        case EventKind::Memset: m_stats.memsets.add(e); break;
        default: break;
        }
    }

    RangeStats &rangeRow(const Event &e)
    {
        Rows<RangeStats> &rows = e.kind == EventKind::Op ? m_ops : m_userRanges;
        return rows.at(e.name.value, [&] { return RangeStats{m_strings[e.name], {}, 0, 0.0}; });
    }

    // Ops and user ranges lose their direct op and range children from their
    // self time, kernels their direct kernel children (a compiled GEMM kernel
    // and the BLAS call inside it); kernels inside an op stay the op's own work.
    void addRange(const Event &e, const Event *parent, bool underOp)
    {
        const bool kernel = e.kind == EventKind::Kernel;
        if (kernel)
            kernelRow(e).selfNs += e.duration;
        else
            addOpOrUserRange(e, underOp);
        if (parent && (parent->kind == EventKind::Kernel) == kernel)
            (kernel ? kernelRow(*parent).selfNs : rangeRow(*parent).selfNs) -= e.duration;
    }

    void addOpOrUserRange(const Event &e, bool underOp)
    {
        RangeStats &row = rangeRow(e);
        row.time.add(e);
        row.selfNs += e.duration;
        if (e.kind == EventKind::Op && !underOp)
            m_stats.opTimeNs += e.duration;
    }

    KernelStats &kernelRow(const Event &e)
    {
        const EventArgs *args = argsOf(m_run, e);
        const int32_t device = args ? args->device : -1;
        const uint64_t key = uint64_t(e.name.value) << 32 | uint32_t(device);
        return m_kernels.at(key, [&] { return KernelStats{m_strings[e.name], device, {}, 0}; });
    }

    void addKernel(const Event &e)
    {
        kernelRow(e).time.add(e);
        if (e.detail.valid() && !m_strings[e.detail].empty())
            addDetail(m_byDetail[e.detail.value], e);
    }

    static void addDetail(DetailTotals &totals, const Event &e)
    {
        ++totals.launches;
        totals.ns += double(e.duration);
        totals.flops += e.flops;
        totals.bytes += e.bytes;
    }

    void addCopy(const Event &e)
    {
        const EventArgs *args = argsOf(m_run, e);
        const CopyKind kind = args ? args->copyKind : CopyKind::Unknown;
        if (size_t(kind) < m_copies.size())
            m_copies[size_t(kind)].add(e);
    }

    void addAllocation(const Allocation &a)
    {
        MemoryStats &m = m_memory[a.device];
        m.device = a.device;
        m.timeline.push_back({a.time, a.allocatedAfter, a.reservedAfter});
        if (a.allocatedAfter > m.peakAllocated) {
            m.peakAllocated = a.allocatedAfter;
            m.peakAllocatedTime = a.time;
        }
        if (a.reservedAfter > m.peakReserved) {
            m.peakReserved = a.reservedAfter;
            m.peakReservedTime = a.time;
        }
    }

    void finishRanges()
    {
        m_stats.ops = m_ops.take();
        m_stats.userRanges = m_userRanges.take();
        for (RangeStats &op : m_stats.ops)
            op.percent = m_stats.opTimeNs ? 100.0 * double(op.time.totalNs) / double(m_stats.opTimeNs) : 0.0;
        sortDescending(m_stats.ops, [](const RangeStats &r) { return r.time.totalNs; });
        sortDescending(m_stats.userRanges, [](const RangeStats &r) { return r.time.totalNs; });
    }

    void finishKernels()
    {
        m_stats.kernels = m_kernels.take();
        sortDescending(m_stats.kernels, [](const KernelStats &k) { return k.time.totalNs; });
    }

    void finishCopies()
    {
        for (size_t kind = 0; kind < m_copies.size(); ++kind) {
            if (m_copies[kind].calls)
                m_stats.copies.push_back({CopyKind(kind), m_copies[kind]});
        }
    }

    void finishNodes()
    {
        const std::map<int, std::string> names = capturedNodeNames(m_run, m_stats.warnings);
        int64_t unreadable = 0;
        for (const auto &[detail, totals] : m_byDetail) {
            const auto origins = parseOrigins(m_strings[StringId(detail)]);
            if (origins)
                splitAmong(*origins, totals, names);
            else
                unreadable += totals.launches;
        }
        if (unreadable)
            m_stats.warnings.push_back(std::to_string(unreadable)
                                       + " kernel launches have a detail that is not a list of graph-node origins");
        m_stats.nodes = m_nodes.take();
        sortDescending(m_stats.nodes, [](const NodeStats &n) { return n.timeNs; });
    }

    void splitAmong(const std::vector<int> &origins, const DetailTotals &totals,
                    const std::map<int, std::string> &names)
    {
        const double share = 1.0 / double(origins.size());
        for (int id : origins) {
            NodeStats &node = m_nodes.at(uint32_t(id), [&] { return NodeStats{id, nodeName(names, id), 0, 0, 0, 0}; });
            node.kernels += totals.launches;
            node.timeNs += totals.ns * share;
            node.flops += totals.flops * share;
            node.bytes += totals.bytes * share;
        }
    }

    static std::string nodeName(const std::map<int, std::string> &names, int id)
    {
        auto it = names.find(id);
        return it != names.end() ? it->second : "node " + std::to_string(id);
    }

    void finishMemory()
    {
        for (auto &[device, stats] : m_memory)
            m_stats.memory.push_back(std::move(stats));
    }

    const StringTable &m_strings;
    const Run &m_run;
    RunStatistics m_stats;
    RangeWalk m_ranges;
    Rows<RangeStats> m_ops;
    Rows<RangeStats> m_userRanges;
    Rows<KernelStats> m_kernels;
    Rows<NodeStats> m_nodes;
    std::array<TransferStats, kCopyKindCount> m_copies{}; // by CopyKind
    // Sorted by detail id, so node rows come out in the same order on every run.
    std::map<uint32_t, DetailTotals> m_byDetail;
    std::map<int, MemoryStats> m_memory;     // by device, CPU (-1) first
};

} // namespace

RunStatistics computeStatistics(const Trace &trace, const Run &run)
{
    return StatisticsBuilder(trace, run).build();
}

} // namespace fusescope::profiler
