#pragma once
// Order, names and ids of an imported trace's tracks (see kinetotracks.cpp).

#include "profiler/kinetoimport.h"

#include <map>
#include <optional>

namespace fusescope::profiler::kineto {

class TrackLayout
{
public:
    explicit TrackLayout(const ImportState &state);

    // The pending tracks' indices in display order.
    std::vector<uint16_t> order() const;
    Track threadTrack(uint16_t local, StringTable &strings);
    Track counterTrack(const CounterSeries &series, StringTable &strings);
    int64_t rankOf(uint32_t file) const;

private:
    const ProcessMeta *process(const PendingTrack &t) const;
    const ThreadMeta *thread(const PendingTrack &t) const;
    int64_t processSort(const PendingTrack &t) const;
    int64_t threadSort(const PendingTrack &t) const;
    std::string processName(const PendingTrack &t) const;
    std::string threadName(const PendingTrack &t) const;
    std::string rankPrefix(uint32_t file) const;
    int64_t numericId(const std::string &text);

    const ImportState &m_state;
    bool m_multiRank = false;
    std::map<std::string, int64_t> m_textIds;
};

} // namespace fusescope::profiler::kineto
