#include "profiler/lod.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace fusescope::profiler {
namespace {

int64_t floorDiv(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Sorted by index; buckets of the same index become one.
void mergeSorted(std::vector<LodBucket> &buckets)
{
    size_t out = 0;
    for (size_t i = 0; i < buckets.size(); ++i) {
        if (out > 0 && buckets[out - 1].index == buckets[i].index) {
            LodBucket &into = buckets[out - 1];
            into.count += buckets[i].count;
            into.busyNs += buckets[i].busyNs;
            into.maxDepth = std::max(into.maxDepth, buckets[i].maxDepth);
        } else {
            buckets[out++] = buckets[i];
        }
    }
    buckets.resize(out);
}

void sortAndMerge(std::vector<LodBucket> &buckets)
{
    std::sort(buckets.begin(), buckets.end(), [](const auto &a, const auto &b) { return a.index < b.index; });
    mergeSorted(buckets);
}

// The next level: each index divided by 8; the order is kept, so no sort.
void coarsen(std::vector<LodBucket> &buckets)
{
    for (LodBucket &b : buckets)
        b.index >>= kLodFanoutShift;
    mergeSorted(buckets);
}

} // namespace

int lodTopLevel(int64_t endNs)
{
    int level = 0;
    while (level < kLodMaxLevel && lodBucketNs(level) < endNs)
        ++level;
    return level;
}

void TrackLod::add(const Event &event)
{
    LodBucket &b = bucket(floorDiv(event.start, kLodBaseBucketNs));
    ++b.count;
    b.maxDepth = std::max(b.maxDepth, event.depth);
    ++m_events;
    if (event.depth == 0 && event.duration > 0)
        addBusy(event);
}

LodBucket &TrackLod::bucket(int64_t index)
{
    // unordered_map keeps references valid across rehashes, so the cache may outlive inserts.
    if (!m_last || m_last->index != index) {
        m_last = &m_base[index];
        m_last->index = index;
    }
    return *m_last;
}

void TrackLod::addBusy(const Event &event)
{
    const int64_t width = kLodBaseBucketNs;
    const int64_t end = event.end();
    const int64_t first = floorDiv(event.start, width);
    const int64_t last = floorDiv(end - 1, width);
    if (first == last) {
        bucket(first).busyNs += event.duration;
        return;
    }
    bucket(first).busyNs += (first + 1) * width - event.start;
    bucket(last).busyNs += end - last * width;
    if (last - first > 1)
        m_covered.emplace_back(first + 1, last - 1);
}

std::vector<LodLevel> TrackLod::levels(TrackId track, int topLevel) const
{
    std::vector<LodBucket> starts;
    starts.reserve(m_base.size());
    for (const auto &entry : m_base)
        starts.push_back(entry.second);
    sortAndMerge(starts);
    std::vector<LodLevel> out;
    for (int level = 0; level <= topLevel; ++level) {
        if (level > 0)
            coarsen(starts);
        if (auto buckets = complete(starts, level))
            out.push_back({track, level, std::move(*buckets)});
    }
    return out;
}

std::optional<std::vector<LodBucket>> TrackLod::complete(const std::vector<LodBucket> &starts, int level) const
{
    const int shift = kLodFanoutShift * level;
    // Counted before anything is built: a long covered run at a fine level
    // would otherwise allocate a bucket per 100 µs only to be thrown away.
    if (bucketCount(starts, shift) * kLodMinEventsPerBucket > m_events)
        return std::nullopt;
    std::vector<LodBucket> buckets = starts;
    for (const auto &[first, last] : m_covered) {
        for (int64_t b = first >> shift; b <= last >> shift; ++b) {
            const int64_t lo = std::max(first, b << shift);
            const int64_t hi = std::min(last, ((b + 1) << shift) - 1);
            buckets.push_back({b, (hi - lo + 1) * kLodBaseBucketNs, 0, 0});
        }
    }
    if (!m_covered.empty())
        sortAndMerge(buckets);
    return buckets;
}

// The buckets of `starts` plus those only the covered runs reach, each once.
int64_t TrackLod::bucketCount(const std::vector<LodBucket> &starts, int shift) const
{
    std::vector<std::pair<int64_t, int64_t>> runs;
    runs.reserve(m_covered.size());
    for (const auto &[first, last] : m_covered)
        runs.emplace_back(first >> shift, last >> shift);
    std::sort(runs.begin(), runs.end());
    auto count = static_cast<int64_t>(starts.size());
    std::optional<int64_t> reached; // the last bucket already counted for a run
    for (auto [lo, hi] : runs) {
        if (reached)
            lo = std::max(lo, *reached + 1);
        if (lo > hi)
            continue;
        const auto byIndex = [](const LodBucket &b, int64_t i) { return b.index < i; };
        const auto from = std::lower_bound(starts.begin(), starts.end(), lo, byIndex);
        const auto to = std::lower_bound(from, starts.end(), hi + 1, byIndex);
        count += (hi - lo + 1) - (to - from);
        reached = hi;
    }
    return count;
}

void LodBuilder::add(std::span<const Event> events)
{
    TrackLod *lod = nullptr;
    TrackId current;
    for (const Event &e : events) {
        // A batch is sorted by track: one map lookup per track, not per event.
        if (!lod || e.track != current) {
            current = e.track;
            lod = &m_tracks[current];
        }
        lod->add(e);
    }
}

std::vector<LodLevel> LodBuilder::levels(int64_t endNs) const
{
    std::vector<LodLevel> out;
    for (const auto &[track, lod] : m_tracks) {
        auto levels = lod.levels(track, lodTopLevel(endNs));
        std::move(levels.begin(), levels.end(), std::back_inserter(out));
    }
    return out;
}

std::vector<LodLevel> LodBuilder::levels(TrackId track, int64_t endNs) const
{
    const auto it = m_tracks.find(track);
    return it == m_tracks.end() ? std::vector<LodLevel> {} : it->second.levels(track, lodTopLevel(endNs));
}

} // namespace fusescope::profiler
