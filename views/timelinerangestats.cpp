#include "views/timelinerangestats.h"

#include <algorithm>
#include <unordered_map>

namespace fusescope {

namespace {

bool overlaps(const profiler::Event &e, int64_t t0, int64_t t1)
{
    if (e.duration == 0)
        return e.start >= t0 && e.start <= t1;
    return e.start < t1 && e.end() > t0;
}

} // namespace

std::vector<RangeStatRow> timelineRangeStats(const TimelineModel &model, int64_t t0, int64_t t1,
                                             const std::vector<int> &tracks)
{
    if (!model.run() || t1 < t0)
        return {};
    // Keyed by StringId: one lookup per event, the names are resolved once at the end.
    std::unordered_map<uint32_t, RangeStatRow> byName;
    for (size_t l = 0; l < model.lanes().size(); ++l) {
        const TimelineLane &lane = model.lanes()[l];
        if (!tracks.empty() && std::find(tracks.begin(), tracks.end(), lane.track) == tracks.end())
            continue;
        const auto [first, last] = model.visibleRange(int(l), t0, t1);
        for (size_t i = first; i < last; ++i) {
            const profiler::Event &e = model.event(lane.events[i]);
            if (!overlaps(e, t0, t1))
                continue;
            auto [it, inserted] = byName.try_emplace(e.name.value);
            if (inserted)
                it->second.kind = e.kind;
            ++it->second.count;
            it->second.totalNs += std::min(e.end(), t1) - std::max(e.start, t0);
        }
    }
    std::vector<RangeStatRow> rows;
    rows.reserve(byName.size());
    const double span = double(std::max<int64_t>(1, t1 - t0));
    for (auto &[name, row] : byName) {
        row.name = model.trace()->strings[profiler::StringId(name)];
        row.percent = double(row.totalNs) * 100.0 / span;
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(), [](const RangeStatRow &a, const RangeStatRow &b) {
        return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.name < b.name;
    });
    return rows;
}

} // namespace fusescope
