#pragma once
// Level-of-detail summaries of a track, so a zoomed-out timeline draws a few
// thousand buckets instead of aggregating millions of events per frame.
// Level L cuts the run's time into buckets of 100 µs × 8^L from time 0; a
// bucket of level L+1 is exactly 8 buckets of level L, so every level is
// merged from level 0, and level 0 is gathered event by event.

#include "profiler/events.h"

#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fusescope::profiler {

inline constexpr int64_t kLodBaseBucketNs = 100'000;
inline constexpr int kLodFanoutShift = 3; // 8 buckets of a level make one of the next
inline constexpr int kLodMaxLevel = 15; // 100 µs × 8^15 ≈ 110 years; one more would overflow
// A level is kept only where its buckets hold this many events on average:
// below that, a view draws the events themselves at about the same cost
// (a 1000-pixel window of 3-pixel buckets: a few thousand events).
inline constexpr int64_t kLodMinEventsPerBucket = 16;

constexpr int64_t lodBucketNs(int level)
{
    return kLodBaseBucketNs << (kLodFanoutShift * level);
}
// The first level whose bucket 0 covers all of [0, endNs): one bucket for the run.
int lodTopLevel(int64_t endNs);

struct LodBucket {
    int64_t index = 0; // covers [index × bucketNs, (index + 1) × bucketNs) of run time
    int64_t busyNs = 0; // time covered by depth-0 events, clipped to the bucket
    uint32_t count = 0; // events that start in the bucket
    uint8_t maxDepth = 0; // the deepest of those

    bool operator==(const LodBucket &) const = default;
};

struct LodLevel {
    TrackId track;
    int level = 0;
    std::vector<LodBucket> buckets; // by index; empty buckets are left out

    int64_t bucketNs() const { return lodBucketNs(level); }
};

// Level 0 of one track, gathered event by event in any order.
class TrackLod
{
public:
    TrackLod() = default;
    // Not copyable: m_last points into m_base (a move keeps the nodes, a copy would not).
    TrackLod(const TrackLod &) = delete;
    TrackLod &operator=(const TrackLod &) = delete;
    TrackLod(TrackLod &&) = default;
    TrackLod &operator=(TrackLod &&) = default;

    void add(const Event &event);
    int64_t events() const { return m_events; }
    // Levels 0 … topLevel, leaving out each level whose buckets would hold
    // fewer than kLodMinEventsPerBucket events on average: it would summarize
    // little, and a view draws the events there.
    std::vector<LodLevel> levels(TrackId track, int topLevel) const;

private:
    LodBucket &bucket(int64_t index);
    void addBusy(const Event &event);
    // `starts` (level `level`, without the covered runs) completed by them,
    // or nothing when that level would not summarize.
    std::optional<std::vector<LodBucket>> complete(const std::vector<LodBucket> &starts, int level) const;
    int64_t bucketCount(const std::vector<LodBucket> &starts, int shift) const;

    std::unordered_map<int64_t, LodBucket> m_base;
    // Runs of level-0 buckets [first, last] a long depth-0 event covers whole:
    // kept as ranges, so a one-hour step does not make 36 million buckets.
    std::vector<std::pair<int64_t, int64_t>> m_covered;
    LodBucket *m_last = nullptr; // events of a track arrive mostly in start order
    int64_t m_events = 0;
};

// Every track of a run: what the writer feeds batch by batch, and what the
// reader rebuilds from the events of a run whose writer never finished.
class LodBuilder
{
public:
    void add(std::span<const Event> events);
    // Levels 0 … lodTopLevel(endNs) of every track, those that summarize (see TrackLod).
    std::vector<LodLevel> levels(int64_t endNs) const;
    std::vector<LodLevel> levels(TrackId track, int64_t endNs) const;

private:
    std::map<TrackId, TrackLod> m_tracks;
};

} // namespace fusescope::profiler
