#include "profiler/memoryanalysis.h"

#include <algorithm>
#include <bit>
#include <unordered_map>

namespace fusescope::profiler {

namespace {

std::string opNameOf(const Trace &trace, const Run &run, EventId op)
{
    if (!op.valid() || op.value >= run.events.size())
        return {};
    return trace.strings[run.event(op).name];
}

// floor(log2(bytes)) for bytes > 0.
int bucketIndex(int64_t bytes)
{
    return std::bit_width(uint64_t(bytes)) - 1;
}

} // namespace

std::vector<LiveAllocation> liveAllocationsAt(const Trace &trace, const Run &run, int device, int64_t timeNs)
{
    // Live blocks by address, as indices into run.allocations.
    std::unordered_map<uint64_t, size_t> live;
    for (size_t i = 0; i < run.allocations.size(); ++i) {
        const Allocation &a = run.allocations[i];
        if (a.time > timeNs)
            break; // in time order: nothing later is live yet
        if (a.device != device)
            continue;
        if (a.bytes > 0)
            live[a.address] = i; // a reuse without a recorded free replaces the old block
        else if (a.bytes < 0)
            live.erase(a.address);
    }
    std::vector<LiveAllocation> result;
    result.reserve(live.size());
    for (const auto &[address, i] : live) {
        const Allocation &a = run.allocations[i];
        result.push_back({address, a.bytes, a.time, a.op, opNameOf(trace, run, a.op)});
    }
    std::sort(result.begin(), result.end(), [](const LiveAllocation &x, const LiveAllocation &y) {
        if (x.bytes != y.bytes)
            return x.bytes > y.bytes;
        return x.allocTime != y.allocTime ? x.allocTime < y.allocTime : x.address < y.address;
    });
    return result;
}

SizeHistogram sizeHistogram(const Run &run, int device)
{
    SizeHistogram histogram;
    histogram.device = device;
    std::vector<SizeBucket> all(64);
    int lowest = 64;
    int highest = -1;
    for (const Allocation &a : run.allocations) {
        if (a.device != device || a.bytes <= 0)
            continue;
        const int k = bucketIndex(a.bytes);
        all[size_t(k)].count += 1;
        all[size_t(k)].totalBytes += a.bytes;
        lowest = std::min(lowest, k);
        highest = std::max(highest, k);
        ++histogram.allocations;
    }
    for (int k = lowest; k <= highest; ++k) {
        all[size_t(k)].lowerBytes = int64_t(1) << k;
        histogram.buckets.push_back(all[size_t(k)]);
    }
    return histogram;
}

std::vector<int> allocationDevices(const Run &run)
{
    std::vector<int> devices;
    for (const Allocation &a : run.allocations) {
        if (std::find(devices.begin(), devices.end(), a.device) == devices.end())
            devices.push_back(a.device);
    }
    std::sort(devices.begin(), devices.end());
    return devices;
}

int64_t plannedPeak(const Run &run)
{
    for (auto it = run.stages.rbegin(); it != run.stages.rend(); ++it) {
        if (it->stats.plannedPeak >= 0)
            return it->stats.plannedPeak;
    }
    return -1;
}

} // namespace fusescope::profiler
