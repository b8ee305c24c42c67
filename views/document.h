#pragma once
// What the window shows of one opened file: the compile stages of one run
// with their parsed graphs, and the measured times when the run was profiled.
// Built once by a loader in a worker thread, immutable after, shared by every
// view through a shared_ptr<const Document>.

#include "profiler/hints.h"
#include "profiler/statistics.h"
#include "profiler/trace.h"
#include "views/stagegraph.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusescope {

struct Document {
    std::string path;
    std::string title;  // "encoder, run 1 'compiled'" or "resnet18.onnx"
    std::string format; // "Fusescope trace", "ONNX model"
    int run = 0;        // the shown run's index in the file (0 for imported traces)
    std::vector<compiler::CompileStage> stages;           // pipeline order, every segment
    std::vector<std::shared_ptr<const StageGraph>> graphs; // parallel to stages
    // Measured on a profiled run: time per captured node id (compiled kernels'
    // time attributed through origins) and per fused kernel name.
    bool profiled = false;
    std::unordered_map<int, double> nodeTimeNs;
    std::unordered_map<std::string, double> kernelTimeNs;
    // The shown run's events, for the timeline: the trace's only run (index 0).
    // Null for an ONNX model, which has run nothing.
    std::shared_ptr<const profiler::Trace> trace;
    // Run 0's statistics and hints, computed once with the load (in its worker)
    // for every view that shows them; null / empty without a trace.
    std::shared_ptr<const profiler::RunStatistics> stats;
    std::vector<profiler::Hint> hints;
    std::vector<std::string> notes; // what the user should know: "run 0 was cut short"
    // The run the Compare view sets against the shown one: the eager run of a
    // `--compare` file (its trace and statistics; no hints, no graphs). Null when none.
    std::shared_ptr<const Document> baseline;
    // False for a loader's preview: the captured graph only, the rest still coming.
    bool complete = true;

    // The index of stage `name` of `segment`, or -1.
    bool hasGraphs() const { return !stages.empty(); }

    int stageIndex(const std::string &name, int segment = 0) const
    {
        for (size_t i = 0; i < stages.size(); ++i) {
            if (stages[i].name == name && stages[i].segment == segment)
                return int(i);
        }
        return -1;
    }
    const StageGraph *graph(const std::string &name, int segment = 0) const
    {
        const int i = stageIndex(name, segment);
        return i < 0 ? nullptr : graphs[size_t(i)].get();
    }
    // The measured time of `node`: each origin's time split evenly among the
    // nodes of `graph` that came from it, so a decomposed op's nodes add up
    // to the op's time instead of each showing all of it.
    double attributedTimeNs(const StageGraph &graph, const GraphNode &node) const
    {
        double ns = 0;
        for (int o : node.origins) {
            const auto it = nodeTimeNs.find(o);
            if (it != nodeTimeNs.end())
                ns += it->second / std::max(1, graph.originShare(o));
        }
        return ns;
    }
};

// Sets `trace` and computes its run 0's statistics and, unless `withHints` is
// false (a baseline run, which only the Compare view reads), its hints; none
// for a trace without runs. What a loader does in its worker thread.
void setRecordedRun(Document &doc, std::shared_ptr<const profiler::Trace> trace, bool withHints = true);

} // namespace fusescope
