#pragma once
// What the view tests share: documents built from real compiles, without
// the system C++ compiler, and the layout-request builder of the layout test
// and benchmark.

#include "core/compiler/capture.h"
#include "core/compiler/compile.h"
#include "core/zoo/zoo.h"
#include "views/document.h"
#include "views/graphlayout.h"

#include <cstdlib>
#include <memory>

namespace fusescope::viewtest {

inline void useTestCache()
{
#ifdef FUSESCOPE_TEST_CACHE_DIR
    setenv("XDG_CACHE_HOME", FUSESCOPE_TEST_CACHE_DIR, 1);
#endif
}

inline std::shared_ptr<Document> documentFrom(const std::vector<compiler::CompileStage> &stages)
{
    auto doc = std::make_shared<Document>();
    doc->stages = stages;
    for (const compiler::CompileStage &s : stages)
        doc->graphs.push_back(StageGraph::fromStage(s));
    return doc;
}

// A zoo model captured on meta tensors and compiled with the interpreter:
// every stage, code included, and neither the C++ compiler nor the maths runs.
inline std::shared_ptr<Document> compiledZooModel(const std::string &name)
{
    zoo::Instance inst = zoo::create(name);
    compiler::Graph g = compiler::captureModule(*inst.model, compiler::zooInputs(name));
    compiler::CompileOptions options;
    options.interpret = true;
    std::shared_ptr<Document> doc = documentFrom(compiler::compileGraph(std::move(g), 0.0, options).stages);
    doc->path = "/tmp/" + name + ".fstrace";
    doc->title = name;
    return doc;
}

// Builds layout requests the way the GraphView does: nodes in topological order.
class LayoutBuilder
{
public:
    int node(double width = 110, double height = 30, int cluster = -1)
    {
        request.nodes.push_back({width, height, cluster});
        return static_cast<int>(request.nodes.size()) - 1;
    }
    void edge(int from, int to) { request.edges.push_back({from, to}); }
    int cluster(int parent, const std::string &label)
    {
        request.clusters.push_back({parent, label});
        return static_cast<int>(request.clusters.size()) - 1;
    }
    // An op with its weight: a source feeding only this op.
    int op(int input, int cluster = -1)
    {
        const int weight = node(70, 22, cluster), v = node(110, 30, cluster);
        edge(weight, v);
        edge(input, v);
        return v;
    }
    size_t size() const { return request.nodes.size(); }
    LayoutRequest request;
};

} // namespace fusescope::viewtest
