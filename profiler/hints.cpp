#include "profiler/hints.h"

#include "profiler/hintrules.h"

#include <algorithm>

namespace fusescope::profiler {

namespace {

// Whose words the fixes use. Only the importers write runs of mode
// "imported": the Nsight importer marks its runs' options "nsys export …"
// (and its producer names Nsight), the Kineto importer is the only other
// one, so every other imported run is a PyTorch profiler trace. Runs we
// recorded ourselves ("eager", "compiled") get Fusescope's words.
std::string frameworkOf(const Trace &trace, const Run &run)
{
    if (run.info.mode != "imported")
        return "fusescope";
    const bool nsys = run.info.options.starts_with("nsys export")
        || trace.meta.producer.find("Nsight") != std::string::npos;
    return nsys ? "nsys" : "pytorch";
}

// The run's own stages, or else those of the first run that has some: in a
// --compare file the eager run's hints may read the compiled run's graph of
// the same model.
const CompileStages *stagesFor(const Trace &trace, const Run &run)
{
    if (!run.stages.empty())
        return &run.stages;
    auto it = std::find_if(trace.runs.begin(), trace.runs.end(), [](const Run &r) { return !r.stages.empty(); });
    return it == trace.runs.end() ? nullptr : &it->stages;
}

} // namespace

const char *hintSeverityName(HintSeverity severity)
{
    switch (severity) {
    case HintSeverity::Info: return "info";
    case HintSeverity::Warning: return "warning";
    case HintSeverity::Critical: return "critical";
    }
    return "info";
}

const std::vector<HintRule> &hintRules()
{
    static const std::vector<HintRule> rules = [] {
        std::vector<HintRule> all = deviceHintRules();
        for (HintRule &rule : graphHintRules())
            all.push_back(std::move(rule));
        return all;
    }();
    return rules;
}

// Rules are trusted not to throw (odd input yields no hint, not an
// exception): a throw here is a bug to see, not to hide.
std::vector<Hint> computeHints(const Trace &trace, const Run &run, const RunStatistics &stats)
{
    const HintContext context{trace, run, stats, stagesFor(trace, run), frameworkOf(trace, run), nullptr};
    std::vector<Hint> hints;
    for (const HintRule &rule : hintRules()) {
        for (Hint &hint : rule.check(context))
            hints.push_back(std::move(hint));
    }
    // Stable: equal savings keep the rules' order.
    std::stable_sort(hints.begin(), hints.end(), [](const Hint &a, const Hint &b) { return a.savingUs > b.savingUs; });
    return hints;
}

} // namespace fusescope::profiler
