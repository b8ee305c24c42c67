// The device rules that judge single events: pageable-memcpy (a copy's host
// memory), sync-in-step (a runtime call that blocks the CPU) and
// low-occupancy (a kernel's launch configuration).

#include "profiler/hinttimeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <tuple>

namespace fusescope::profiler {

using namespace hinting;

namespace {

// pageable-memcpy
constexpr double kPinnedTimeShare = 0.5; // pinned copies reach about twice the bandwidth and need no staging copy
// Less saved, in all, is not worth a change (a DLRM rank's ten pageable
// copies of a few bytes each took 10 µs: 5 µs of a 14 ms step).
constexpr double kMinPinnedSavingNs = 10'000;
// sync-in-step
constexpr int64_t kMinBlockedNs = 10'000; // less, in all, is not worth a rewrite
constexpr size_t kNamedCauses = 3;
// low-occupancy
constexpr int64_t kLongKernelNs = 50'000;    // shorter kernels are dominated by their launch and tail
constexpr double kLowOccupancy = 0.25;
constexpr double kOccupancyGainShare = 0.5;  // rough: half of the time occupancy explains is won back
// Limits for computing theoretical occupancy when the trace has no device
// properties (Nsight exports): the most generous of Volta..Hopper, so the
// result is an upper bound and never makes a kernel look worse than it is.
constexpr int kMaxWarpsPerSm = 64;
constexpr int kMaxBlocksPerSm = 32;
constexpr int kRegistersPerSm = 65536;
constexpr int kRegisterAllocationUnit = 256; // per warp
constexpr int64_t kSharedMemoryPerSm = 228 * 1024;

// ---- pageable-memcpy ----

// "244.4 MB", "12.0 kB", "96 B": copies are as small as a few bytes.
std::string formatDecimalBytes(double bytes)
{
    if (bytes >= 1e6)
        return formatText("%.1f MB", bytes / 1e6);
    if (bytes >= 1e3)
        return formatText("%.1f kB", bytes / 1e3);
    return formatText("%.0f B", bytes);
}

// The importers name copies "Memcpy HtoD (Pageable -> Device)" and set
// `pinned` for page-locked ones; only host<->device copies have a host side.
bool isPageableCopy(const Trace &trace, const Run &run, const Event &e)
{
    const EventArgs *args = argsOf(run, e);
    return e.kind == EventKind::Memcpy && args && !args->pinned
        && (args->copyKind == CopyKind::HostToDevice || args->copyKind == CopyKind::DeviceToHost)
        && containsNoCase(trace.strings[e.name], "pageable");
}

struct PageableCopies {
    int toDevice = 0;
    int toHost = 0;
    int64_t ns = 0;
    double bytes = 0;
    std::vector<std::pair<double, EventId>> evidence;
};

PageableCopies pageableCopies(const HintContext &ctx, const DeviceTimeline &timeline)
{
    PageableCopies copies;
    for (EventId id : timeline.activity()) {
        const Event &e = ctx.run.event(id);
        if (!isPageableCopy(ctx.trace, ctx.run, e))
            continue;
        (argsOf(ctx.run, e)->copyKind == CopyKind::HostToDevice ? copies.toDevice : copies.toHost)++;
        copies.ns += e.duration;
        copies.bytes += e.bytes;
        copies.evidence.push_back({double(e.duration), id});
    }
    return copies;
}

std::vector<Hint> checkPageableMemcpy(const HintContext &ctx)
{
    const DeviceTimeline &timeline = timelineOf(ctx);
    const PageableCopies copies = pageableCopies(ctx, timeline);
    const double saving = kPinnedTimeShare * double(copies.ns);
    if (copies.evidence.empty() || saving < kMinPinnedSavingNs)
        return {};
    Hint hint;
    hint.rule = "pageable-memcpy";
    hint.savingUs = saving / 1e3;
    hint.severity = severityFor(saving, timeline.baseNs());
    hint.message = formatText("%d host-to-device and %d device-to-host copies from pageable host memory, %s in %s "
                              "(threshold: 10 µs to save)",
                              copies.toDevice, copies.toHost, formatDecimalBytes(copies.bytes).c_str(),
                              formatNs(double(copies.ns)).c_str());
    hint.fix = inFramework(
        ctx.framework,
        "Copy from pinned memory: DataLoader(pin_memory=True) or tensor.pin_memory(), then "
        ".to(device, non_blocking=True) so the copy overlaps compute.",
        "Allocate the host buffers page-locked (cudaMallocHost / cudaHostAlloc, or cudaHostRegister) and copy with "
        "cudaMemcpyAsync on a non-default stream.",
        "Keep inputs in pinned host memory so copies overlap compute.");
    hint.events = strongest(copies.evidence);
    return {hint};
}

// ---- sync-in-step ----

// "cudaStreamSynchronize", "cuCtxSynchronize", "hipDeviceSynchronize",
// "cuMemcpyDtoH_v2": runtime and driver calls that return only when the GPU
// has caught up (a synchronous cudaMemcpy waits for the stream too).
bool isBlockingCall(std::string_view name)
{
    for (std::string_view prefix : {"cuda", "hip", "cu"}) {
        if (name.starts_with(prefix)) {
            name.remove_prefix(prefix.size());
            break;
        }
    }
    if (const size_t version = name.rfind("_v"); version != std::string_view::npos)
        name = name.substr(0, version);
    static constexpr std::array<std::string_view, 12> kBlocking = {
        "DeviceSynchronize", "StreamSynchronize", "EventSynchronize", "CtxSynchronize",
        "Memcpy",            "Memcpy2D",          "Memcpy3D",         "MemcpyToSymbol",
        "MemcpyFromSymbol",  "MemcpyDtoH",        "MemcpyHtoD",       "MemcpyDtoD"};
    return std::find(kBlocking.begin(), kBlocking.end(), name) != kBlocking.end();
}

bool onCpu(const Run &run, const Event &e)
{
    return e.track.value < run.tracks.size() && run.tracks[e.track.value].kind == TrackKind::CpuThread;
}

// The steps as merged intervals (ranks of one import may overlap), or
// everything when the run has none.
std::vector<Interval> stepCover(const Run &run, const DeviceTimeline &timeline)
{
    std::vector<Interval> cover;
    for (EventId id : timeline.steps()) {
        const Event &step = run.event(id);
        if (!cover.empty() && step.start <= cover.back().end)
            cover.back().end = std::max(cover.back().end, step.end());
        else
            cover.push_back({step.start, step.end()});
    }
    return cover;
}

bool inside(const std::vector<Interval> &cover, int64_t time)
{
    auto it = std::partition_point(cover.begin(), cover.end(), [&](Interval i) { return i.end <= time; });
    return it != cover.end() && it->start <= time;
}

struct BlockingCall {
    EventId call;
    EventId cause; // the outermost op around it, or the call itself
};

// One sweep per track over ops and blocking calls: the bottom of the stack of
// open ops is the framework call that asked for the sync (aten::item, aten::to).
std::vector<BlockingCall> blockingCalls(const HintContext &ctx, const std::vector<Interval> &cover, bool everywhere)
{
    const Run &run = ctx.run;
    std::vector<EventId> order;
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        const Event &e = run.events[i];
        const bool call = e.kind == EventKind::Runtime && isBlockingCall(ctx.trace.strings[e.name])
            && (everywhere || inside(cover, e.start));
        if (onCpu(run, e) && (e.kind == EventKind::Op || call))
            order.push_back(EventId(i));
    }
    std::stable_sort(order.begin(), order.end(), [&run](EventId a, EventId b) {
        const Event &x = run.event(a), &y = run.event(b);
        return std::tuple(x.track, x.start, -x.duration) < std::tuple(y.track, y.start, -y.duration);
    });
    std::vector<BlockingCall> calls;
    std::vector<EventId> open;
    for (EventId id : order) {
        const Event &e = run.event(id);
        while (!open.empty() && (run.event(open.back()).track != e.track || run.event(open.back()).end() <= e.start))
            open.pop_back();
        if (e.kind == EventKind::Op)
            open.push_back(id);
        else
            calls.push_back({id, open.empty() ? id : open.front()});
    }
    return calls;
}

// "aten::item ×12, cudaDeviceSynchronize ×1": the commonest causes first.
std::string causesText(const HintContext &ctx, const std::vector<BlockingCall> &calls)
{
    std::map<std::string, int> counts;
    for (const BlockingCall &c : calls)
        ++counts[ctx.trace.strings[ctx.run.event(c.cause).name]];
    std::vector<std::pair<std::string, int>> ranked(counts.begin(), counts.end());
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
    std::string text;
    for (size_t i = 0; i < ranked.size() && i < kNamedCauses; ++i)
        text += (i ? ", " : "") + ranked[i].first + " ×" + std::to_string(ranked[i].second);
    return text;
}

std::vector<Hint> checkSyncInStep(const HintContext &ctx)
{
    const DeviceTimeline &timeline = timelineOf(ctx);
    if (!timeline.hasGpu())
        return {};
    const std::vector<BlockingCall> calls = blockingCalls(ctx, stepCover(ctx.run, timeline), timeline.steps().empty());
    int64_t blocked = 0;
    std::vector<std::pair<double, EventId>> evidence;
    for (const BlockingCall &c : calls) {
        blocked += ctx.run.event(c.call).duration;
        evidence.push_back({double(ctx.run.event(c.call).duration), c.call});
    }
    if (blocked < kMinBlockedNs)
        return {};
    Hint hint;
    hint.rule = "sync-in-step";
    hint.savingUs = double(blocked) / 1e3;
    hint.severity = severityFor(double(blocked), timeline.baseNs());
    hint.message = formatText("%zu blocking CUDA calls %s held the CPU %s (threshold %s in all): %s", calls.size(),
                          timeline.steps().empty() ? "in the run (it has no steps)" : "inside steps",
                          formatNs(double(blocked)).c_str(), formatNs(double(kMinBlockedNs)).c_str(),
                          causesText(ctx, calls).c_str());
    hint.fix = inFramework(
        ctx.framework,
        "Keep values on the GPU inside the step: no .item(), .cpu(), .tolist(), print(tensor) or "
        "torch.cuda.synchronize() per step; accumulate metrics as tensors and read them every N steps; copy results "
        "with .to('cpu', non_blocking=True) into pinned memory.",
        "Take cudaDeviceSynchronize / cudaStreamSynchronize and synchronous cudaMemcpy out of the loop: use "
        "cudaMemcpyAsync and events (cudaEventRecord + cudaStreamWaitEvent), and wait at most once per iteration.",
        "Avoid reading results back inside the step; read them once at its end.");
    hint.events = strongest(std::move(evidence));
    return {hint};
}

// ---- low-occupancy ----

// Occupancy with generic limits; 0 when the block cannot be placed at all.
double theoreticalOccupancy(int64_t registersPerThread, int64_t sharedBytes, int64_t threads)
{
    if (threads <= 0)
        return 0;
    const int64_t warps = (threads + 31) / 32;
    int64_t blocks = std::min<int64_t>(kMaxBlocksPerSm, kMaxWarpsPerSm / warps);
    if (registersPerThread > 0) {
        const int64_t perWarp = (registersPerThread * 32 + kRegisterAllocationUnit - 1) / kRegisterAllocationUnit
            * kRegisterAllocationUnit;
        blocks = std::min(blocks, kRegistersPerSm / perWarp / warps);
    }
    if (sharedBytes > 0)
        blocks = std::min(blocks, kSharedMemoryPerSm / sharedBytes);
    return double(blocks * warps) / double(kMaxWarpsPerSm);
}

// Kineto's "est. achieved occupancy %" is CUDA's occupancy calculator capped
// by the grid (blocks per SM) and 0 when its query failed; Nsight exports
// carry registers and shared memory, from which the theoretical value follows.
double occupancyOf(const std::string &extra, int64_t threads)
{
    const nlohmann::json json = nlohmann::json::parse(extra, nullptr, false);
    if (!json.is_object())
        return 0;
    auto number = [&json](const char *key) {
        auto it = json.find(key);
        return it != json.end() && it->is_number() ? it->get<double>() : -1.0;
    };
    if (const double kineto = number("est. achieved occupancy %"); kineto >= 0)
        return kineto / 100.0;
    if (number("registersPerThread") < 0)
        return 0;
    return theoreticalOccupancy(int64_t(number("registersPerThread")), int64_t(std::max(0.0, number("sharedMemory"))),
                                threads);
}

class OccupancyCache
{
public:
    explicit OccupancyCache(const HintContext &ctx) : m_ctx(ctx) {}
    // 0 = unknown
    double of(const Event &kernel)
    {
        const EventArgs *args = argsOf(m_ctx.run, kernel);
        if (!args || !args->extra.valid())
            return 0;
        const int64_t threads = int64_t(args->block[0]) * std::max(1, args->block[1]) * std::max(1, args->block[2]);
        auto [it, added] = m_values.try_emplace({args->extra.value, threads}, 0.0);
        if (added)
            it->second = occupancyOf(m_ctx.trace.strings[args->extra], threads);
        return it->second;
    }

private:
    const HintContext &m_ctx;
    std::map<std::pair<uint32_t, int64_t>, double> m_values;
};

struct LowOccupancy {
    int kernels = 0;
    int64_t ns = 0;
    double savingNs = 0;
    double lowest = 1;
    EventId lowestKernel;
    std::vector<std::pair<double, EventId>> evidence;
};

LowOccupancy lowOccupancyKernels(const HintContext &ctx, const DeviceTimeline &timeline)
{
    LowOccupancy low;
    OccupancyCache cache(ctx);
    for (EventId id : timeline.activity()) {
        const Event &e = ctx.run.event(id);
        if (e.kind != EventKind::Kernel || e.duration < kLongKernelNs)
            continue;
        const double occupancy = cache.of(e);
        if (occupancy <= 0 || occupancy >= kLowOccupancy)
            continue;
        ++low.kernels;
        low.ns += e.duration;
        low.savingNs += double(e.duration) * (1.0 - occupancy / kLowOccupancy) * kOccupancyGainShare;
        if (occupancy < low.lowest || !low.lowestKernel.valid())
            std::tie(low.lowest, low.lowestKernel) = std::pair(occupancy, id);
        low.evidence.push_back({double(e.duration), id});
    }
    return low;
}

std::vector<Hint> checkLowOccupancy(const HintContext &ctx)
{
    const DeviceTimeline &timeline = timelineOf(ctx);
    const LowOccupancy low = lowOccupancyKernels(ctx, timeline);
    if (low.kernels == 0)
        return {};
    Hint hint;
    hint.rule = "low-occupancy";
    hint.savingUs = low.savingNs / 1e3;
    hint.severity = severityFor(low.savingNs, timeline.baseNs());
    hint.message = formatText("%d kernel launches of at least 50 µs ran below %s occupancy, %s in all; the lowest, %s, "
                          "at %s",
                          low.kernels, formatPercent(kLowOccupancy).c_str(), formatNs(double(low.ns)).c_str(),
                          ctx.trace.strings[ctx.run.event(low.lowestKernel).name].c_str(),
                          formatPercent(low.lowest).c_str());
    hint.fix = inFramework(
        ctx.framework,
        "The kernel's registers, shared memory or a grid smaller than the GPU keep few warps resident: try a larger "
        "batch, torch.backends.cudnn.benchmark=True and channels_last so cuDNN/cuBLAS pick other kernels; in your "
        "own Triton kernels lower BLOCK sizes or num_stages.",
        "Cut registers per thread (__launch_bounds__, -maxrregcount) or shared memory per block, or launch at least "
        "two blocks per SM; Nsight Compute's Occupancy section shows the limiter.",
        "Launch more parallel work per kernel (larger batches).");
    hint.events = strongest(low.evidence);
    return {hint};
}

} // namespace

HintRule pageableMemcpyRule()
{
    return makeRule("pageable-memcpy", "Copies from pageable host memory",
                "host-to-device or device-to-host copies whose host side is pageable, when pinning them saves at "
                "least 10 µs in all. Saving: half the copies' time (pinned copies run at about twice the bandwidth, "
                "and only they can overlap compute).",
                checkPageableMemcpy);
}

HintRule syncInStepRule()
{
    return makeRule("sync-in-step", "The CPU waits for the GPU inside the step",
                "blocking runtime calls (device/stream/event/context synchronize, synchronous cudaMemcpy) inside "
                "steps, or anywhere when the run has no steps, together at least 10 µs. Saving: the time they held "
                "the CPU (an upper bound).",
                checkSyncInStep);
}

HintRule lowOccupancyRule()
{
    return makeRule("low-occupancy", "Long kernels at low occupancy",
                "kernels of at least 50 µs below 25 % occupancy: Kineto's \"est. achieved occupancy %\" (the "
                "occupancy calculator's value capped by the grid; 0, a failed query, is skipped), or for Nsight "
                "exports the theoretical occupancy from registers, shared memory and block size with the most "
                "generous Volta–Hopper limits. Saving (rough): half of duration × (1 − occupancy / 25 %).",
                checkLowOccupancy);
}

} // namespace fusescope::profiler
