// The device rules that read the busy/idle timeline: launch-bound, gpu-idle,
// input-stall. Each one counts a disjoint kind of idle time, so their savings
// add up: gaps under 100 µs before short kernels are launch latency, longer
// gaps inside a step's device work are GPU idle time, and the GPU's wait
// before a step's first CUDA call (and between steps) is an input stall.

#include "profiler/hintrules.h"
#include "profiler/hinttimeline.h"

#include <algorithm>
#include <optional>

namespace fusescope::profiler {

using namespace hinting;

namespace {

// launch-bound
constexpr int64_t kShortKernelNs = 10'000;    // a kernel under 10 µs costs about what its launch costs
constexpr int64_t kLaunchGapCapNs = 100'000;  // a longer gap is the CPU doing something else, not launch latency
constexpr int kMinShortKernels = 20;          // a handful of tiny kernels is normal in any program
constexpr double kMinLaunchIdleShare = 0.5;   // idle / (idle + short kernels' time) around the short kernels
// gpu-idle
constexpr double kIdleGapShare = 0.10;        // a gap longer than 10 % of its step is worth a look on its own
constexpr int64_t kMinIdleGapNs = kLaunchGapCapNs; // shorter gaps belong to launch-bound
constexpr int kUtilizationChunks = 30;        // Nsight Systems' GPU-utilization rule: 30 chunks of the span
constexpr double kLowBusyShare = 0.5;         // … and flags those under 50 % busy
constexpr double kMinIdleSavingShare = 0.01;  // less than 1 % of the steps is noise
// input-stall
constexpr double kMinStallShare = 0.05;       // of the steps' span

// ---- launch-bound ----

struct LaunchGaps {
    int shortKernels = 0;
    int64_t kernelNs = 0; // the short kernels' time
    int64_t gapNs = 0;    // idle gaps right before them, each under kLaunchGapCapNs
    std::vector<std::pair<double, EventId>> evidence;
};

LaunchGaps launchGaps(const Run &run, const DeviceTimeline &timeline)
{
    LaunchGaps gaps;
    std::optional<int64_t> busyEnd;
    for (EventId id : timeline.activity()) {
        const Event &e = run.event(id);
        if (e.kind == EventKind::Kernel && e.duration < kShortKernelNs) {
            const int64_t gap = busyEnd ? e.start - *busyEnd : 0;
            ++gaps.shortKernels;
            gaps.kernelNs += e.duration;
            if (gap > 0 && gap <= kLaunchGapCapNs) {
                gaps.gapNs += gap;
                gaps.evidence.push_back({double(gap), id});
            }
        }
        busyEnd = std::max(busyEnd.value_or(e.end()), e.end());
    }
    return gaps;
}

std::vector<Hint> checkLaunchBound(const HintContext &ctx)
{
    const DeviceTimeline &timeline = timelineOf(ctx);
    const LaunchGaps gaps = launchGaps(ctx.run, timeline);
    const double idleShare = gaps.gapNs ? double(gaps.gapNs) / double(gaps.gapNs + gaps.kernelNs) : 0.0;
    if (gaps.shortKernels < kMinShortKernels || idleShare < kMinLaunchIdleShare)
        return {};
    Hint hint;
    hint.rule = "launch-bound";
    hint.savingUs = double(gaps.gapNs) / 1e3;
    hint.severity = severityFor(double(gaps.gapNs), timeline.baseNs());
    hint.message = formatText("%d kernels shorter than 10 µs (of %zu GPU operations) with the GPU idle %s between them, "
                          "%s of their time (thresholds: at least %d such kernels, idle at least %s)",
                          gaps.shortKernels, timeline.activity().size(), formatNs(double(gaps.gapNs)).c_str(),
                          formatPercent(idleShare).c_str(), kMinShortKernels, formatPercent(kMinLaunchIdleShare).c_str());
    hint.fix = inFramework(
        ctx.framework,
        "Launch fewer, larger kernels: torch.compile(model) fuses the small ops, mode=\"reduce-overhead\" also replays "
        "the step as a CUDA graph (or capture it yourself with torch.cuda.CUDAGraph); a larger batch makes each kernel "
        "longer.",
        "Fuse the small kernels, or capture the launch sequence once as a CUDA graph (cudaStreamBeginCapture … "
        "cudaGraphLaunch) so launch latency stops gating the GPU.",
        "Compile the model: the compiled run fuses chains of small ops into fewer kernels.");
    hint.events = strongest(gaps.evidence);
    return {hint};
}

// ---- gpu-idle ----

// The device-work part of each step (after its lead-in, which input-stall
// counts), or the GPU span when the run has no steps.
struct Window {
    Interval range;
    int64_t stepNs = 0; // what the 10 % threshold is a share of
};

std::vector<Window> idleWindows(const Run &run, const DeviceTimeline &timeline)
{
    std::vector<Window> windows;
    for (EventId id : timeline.steps()) {
        const Event &step = run.event(id);
        windows.push_back({{timeline.leadInEnd(step), step.end()}, step.duration});
    }
    if (windows.empty())
        windows.push_back({timeline.span(), timeline.span().length()});
    return windows;
}

std::vector<Interval> lowUtilizationChunks(const DeviceTimeline &timeline)
{
    const Interval span = timeline.span();
    std::vector<Interval> low;
    for (int i = 0; i < kUtilizationChunks && span.length() > 0; ++i) {
        const Interval chunk{span.start + span.length() * i / kUtilizationChunks,
                             span.start + span.length() * (i + 1) / kUtilizationChunks};
        if (double(timeline.busyIn(chunk)) < kLowBusyShare * double(chunk.length()))
            low.push_back(chunk);
    }
    return low;
}

struct IdleTime {
    int64_t ns = 0;
    int longGaps = 0;  // over 10 % of their step
    int chunkGaps = 0; // counted for lying in a low-utilization chunk
    size_t lowChunks = 0;
    std::vector<std::pair<double, EventId>> evidence; // the GPU work that ended each gap
};

// The first GPU work at or after `time`: what the GPU was waiting for.
std::optional<EventId> workAfter(const Run &run, const DeviceTimeline &timeline, int64_t time)
{
    const std::vector<EventId> &work = timeline.activity();
    auto it = std::partition_point(work.begin(), work.end(), [&](EventId id) { return run.event(id).start < time; });
    return it == work.end() ? std::nullopt : std::optional<EventId>(*it);
}

void addGap(IdleTime &idle, Interval gap, const Window &window, const std::vector<Interval> &lowChunks,
            std::optional<EventId> after)
{
    const bool isLong = double(gap.length()) > kIdleGapShare * double(window.stepNs);
    const int64_t counted = isLong ? gap.length() : coveredBy(gap, lowChunks);
    if (counted <= 0)
        return;
    idle.ns += counted;
    (isLong ? idle.longGaps : idle.chunkGaps)++;
    if (after)
        idle.evidence.push_back({double(counted), *after});
}

IdleTime idleTime(const Run &run, const DeviceTimeline &timeline)
{
    IdleTime idle;
    const std::vector<Interval> lowChunks = lowUtilizationChunks(timeline);
    idle.lowChunks = lowChunks.size();
    for (const Window &window : idleWindows(run, timeline)) {
        for (const Interval &gap : timeline.idleIn(window.range)) {
            if (gap.length() >= kMinIdleGapNs)
                addGap(idle, gap, window, lowChunks, workAfter(run, timeline, gap.end));
        }
    }
    return idle;
}

// Names only the kinds of gap there were: "… in 1 gap longer than 10% of
// its step", not also "and 0 gaps … in chunks under 50% busy (0 of 30 chunks)".
std::string idleMessage(const IdleTime &idle, int64_t base, bool steps)
{
    const char *window = steps ? "step" : "span";
    std::string text = formatText("The GPU sat idle %s (%s of the %s) in ", formatNs(double(idle.ns)).c_str(),
                                  formatPercent(double(idle.ns) / double(base)).c_str(), steps ? "steps" : "GPU span");
    if (idle.longGaps > 0)
        text += idle.longGaps == 1 ? formatText("1 gap longer than 10%% of its %s", window)
                                   : formatText("%d gaps longer than 10%% of their %s", idle.longGaps, window);
    if (idle.longGaps > 0 && idle.chunkGaps > 0)
        text += " and ";
    if (idle.chunkGaps > 0)
        text += formatText("%d gap%s of at least 100 µs in chunks under 50%% busy (%d of %d chunks)", idle.chunkGaps,
                           idle.chunkGaps == 1 ? "" : "s", int(idle.lowChunks), kUtilizationChunks);
    return text;
}

std::vector<Hint> checkGpuIdle(const HintContext &ctx)
{
    const DeviceTimeline &timeline = timelineOf(ctx);
    if (!timeline.hasGpu())
        return {};
    const IdleTime idle = idleTime(ctx.run, timeline);
    const int64_t base = timeline.baseNs();
    if (idle.ns <= 0 || double(idle.ns) < kMinIdleSavingShare * double(base))
        return {};
    Hint hint;
    hint.rule = "gpu-idle";
    hint.savingUs = double(idle.ns) / 1e3;
    hint.severity = severityFor(double(idle.ns), base);
    hint.message = idleMessage(idle, base, !timeline.steps().empty());
    hint.fix = inFramework(
        ctx.framework,
        "See what the CPU thread does during the gaps: move logging, .item() and Python work out of the step, copy "
        "with .to(device, non_blocking=True), and cut CPU overhead with torch.compile or CUDA graphs.",
        "See what the CPU thread does during the gaps: queue work ahead of the GPU (async copies, fewer "
        "synchronizations), or overlap independent work on more streams.",
        "See what the CPU does during the gaps in the Timeline; compile the model to cut per-op overhead.");
    hint.events = strongest(idle.evidence);
    return {hint};
}

// ---- input-stall ----

// Before each step's first CUDA call, and between steps: the CPU prepares
// the next input while the GPU has nothing queued.
std::vector<Interval> stallIdle(const Run &run, const DeviceTimeline &timeline)
{
    std::vector<Interval> idle;
    std::optional<int64_t> previousEnd;
    for (EventId id : timeline.steps()) {
        const Event &step = run.event(id);
        const int64_t from = previousEnd ? std::min(*previousEnd, step.start) : step.start;
        for (const Interval &gap : timeline.idleIn({from, timeline.leadInEnd(step)}))
            idle.push_back(gap);
        previousEnd = std::max(previousEnd.value_or(step.end()), step.end());
    }
    return mergeIntervals(std::move(idle));
}

// The CPU ranges the stalls overlap, heaviest first: what the CPU was doing.
std::vector<EventId> stallEvidence(const Run &run, const std::vector<Interval> &stalls)
{
    std::vector<std::pair<double, EventId>> weighted;
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        const Event &e = run.events[i];
        if (e.kind != EventKind::Op && e.kind != EventKind::UserRange)
            continue;
        if (const int64_t covered = coveredBy({e.start, e.end()}, stalls); covered > 0)
            weighted.push_back({double(covered) - 1e-3 * double(e.depth), EventId(i)});
    }
    return strongest(std::move(weighted));
}

int64_t stepsSpan(const Run &run, const DeviceTimeline &timeline)
{
    int64_t end = 0;
    for (EventId id : timeline.steps())
        end = std::max(end, run.event(id).end());
    return timeline.steps().empty() ? 0 : end - run.event(timeline.steps().front()).start;
}

std::vector<Hint> checkInputStall(const HintContext &ctx)
{
    const DeviceTimeline &timeline = timelineOf(ctx);
    if (!timeline.hasGpu() || timeline.steps().empty())
        return {};
    const std::vector<Interval> stalls = stallIdle(ctx.run, timeline);
    int64_t stalled = 0;
    for (const Interval &gap : stalls)
        stalled += gap.length();
    const int64_t span = stepsSpan(ctx.run, timeline);
    if (span <= 0 || double(stalled) < kMinStallShare * double(span))
        return {};
    Hint hint;
    hint.rule = "input-stall";
    hint.savingUs = double(stalled) / 1e3;
    hint.severity = severityFor(double(stalled), span);
    hint.events = stallEvidence(ctx.run, stalls);
    const std::string during = hint.events.empty() ? std::string()
                                                   : ", mostly during " + ctx.trace.strings[ctx.run.event(hint.events[0]).name];
    hint.message = formatText("Over %zu steps the GPU waited %s (%s of the steps, threshold %s) before each step's first "
                          "CUDA call and between steps%s",
                          timeline.steps().size(), formatNs(double(stalled)).c_str(),
                          formatPercent(double(stalled) / double(span)).c_str(), formatPercent(kMinStallShare).c_str(),
                          during.c_str());
    hint.fix = inFramework(
        ctx.framework,
        "Load data ahead of the GPU: DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2, "
        "persistent_workers=True), then batch.to(device, non_blocking=True); move CPU-side preprocessing into the "
        "workers or onto the GPU.",
        "Prepare the next input while the GPU runs the current one: worker threads, double-buffered pinned host "
        "buffers and cudaMemcpyAsync on a separate stream.",
        "Prepare inputs before the step starts, so the step's time is the model's.");
    return {hint};
}

} // namespace

std::vector<HintRule> deviceHintRules()
{
    return {
        makeRule("launch-bound", "Launch-bound: many tiny kernels with the GPU idle between them",
             "at least 20 kernels under 10 µs; the idle gaps (each ≤ 100 µs) right before them at least 50 % of gaps "
             "plus their time. Saving: those gaps.",
             checkLaunchBound),
        pageableMemcpyRule(),
        syncInStepRule(),
        makeRule("gpu-idle", "GPU idle inside steps",
             "idle gaps of at least 100 µs in a step's device work that are longer than 10 % of the step, or lie in "
             "one of 30 equal chunks of the GPU span that is under 50 % busy (Nsight Systems' measure); profiler "
             "overhead counts as busy; at least 1 % of the steps. Saving: that idle time.",
             checkGpuIdle),
        makeRule("input-stall", "Input stall: the GPU waits for the next batch",
             "GPU idle before each step's first CUDA call and between steps at least 5 % of the steps' span. Saving: "
             "that idle time.",
             checkInputStall),
        lowOccupancyRule(),
    };
}

} // namespace fusescope::profiler
