// Graph layout on synthetic graphs shaped like real model graphs: Graphviz's
// dot (bounded and not, in its child process) against the layered layout,
// and what Auto picks. The figures behind autoGraphvizNodeLimit.
#include "benchutil.h"

#include "core/compiler/capture.h"
#include "core/zoo/zoo.h"
#include "tests/viewtest.h"
#include "views/graphlayout.h"
#include "views/graphvizlayout.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <string>

using namespace fusescope;

namespace {


// conv-bn-relu twice and an add with the skip edge, one cluster per block.
LayoutRequest resnet(size_t nodes)
{
    viewtest::LayoutBuilder g;
    int x = g.node();
    for (int b = 0; g.size() < nodes; ++b) {
        const int c = g.cluster(-1, "layer." + std::to_string(b));
        int y = g.op(x, c);
        y = g.node(110, 30, c), g.edge(y - 1, y);
        y = g.op(y, c);
        const int add = g.node(60, 24, c);
        g.edge(y, add), g.edge(x, add);
        x = g.node(110, 30, c), g.edge(add, x);
    }
    return g.request;
}

// Blocks with a nested attention cluster; the mask and the position table
// feed every block: edges across the whole graph.
LayoutRequest transformer(size_t nodes)
{
    viewtest::LayoutBuilder g;
    int x = g.node();
    const int mask = g.node(80, 24), positions = g.node(80, 24);
    for (int b = 0; g.size() < nodes; ++b) {
        const int block = g.cluster(-1, "h." + std::to_string(b)), attention = g.cluster(block, "attn");
        const int norm = g.op(x, block);
        const int q = g.op(norm, attention), k = g.op(norm, attention), v = g.op(norm, attention);
        const int rotary = g.node(100, 30, attention);
        g.edge(q, rotary), g.edge(positions, rotary);
        const int scores = g.node(100, 30, attention), softmax = g.node(100, 30, attention);
        g.edge(rotary, scores), g.edge(k, scores), g.edge(scores, softmax), g.edge(mask, softmax);
        const int mix = g.node(100, 30, attention);
        g.edge(softmax, mix), g.edge(v, mix);
        const int add = g.node(60, 24, block);
        g.edge(g.op(mix, block), add), g.edge(x, add);
        const int add2 = g.node(60, 24, block);
        g.edge(g.op(g.op(g.op(add, block), block), block), add2), g.edge(add, add2);
        x = add2;
    }
    return g.request;
}

// Dense blocks of 12 layers: each layer concatenates every earlier output of its block.
LayoutRequest densenet(size_t nodes)
{
    viewtest::LayoutBuilder g;
    int x = g.node();
    for (int b = 0; g.size() < nodes; ++b) {
        const int c = g.cluster(-1, "denseblock" + std::to_string(b));
        std::vector<int> features {x};
        for (int layer = 0; layer < 12 && g.size() < nodes; ++layer) {
            const int concat = g.node(80, 24, c);
            for (int f : features)
                g.edge(f, concat);
            features.push_back(g.op(g.op(concat, c), c));
        }
        x = g.op(features.back(), -1);
    }
    return g.request;
}

// The cluster of a module path ("layer1.0.conv1"), nested as the GraphView nests them.
int moduleCluster(viewtest::LayoutBuilder &g, std::map<std::string, int> &clusters, const std::string &path)
{
    if (path.empty())
        return -1;
    if (const auto it = clusters.find(path); it != clusters.end())
        return it->second;
    const size_t dot = path.rfind('.');
    const int parent = moduleCluster(g, clusters, dot == std::string::npos ? "" : path.substr(0, dot));
    return clusters[path] = g.cluster(parent, path);
}

// A zoo model's captured graph, as the GraphView would lay it out.
LayoutRequest captured(const std::string &model)
{
    zoo::Instance instance = zoo::create(model);
    const compiler::Graph graph = compiler::captureModule(*instance.model, compiler::zooInputs(model));
    viewtest::LayoutBuilder g;
    std::map<const compiler::Node *, int> index;
    std::map<std::string, int> clusters;
    for (const compiler::Node *node : graph.nodes()) {
        const bool op = node->kind == compiler::NodeKind::CallFunction;
        index[node] = g.node(op ? 110 : 80, op ? 30 : 22, moduleCluster(g, clusters, node->modulePath));
        for (const compiler::NodeRef &input : node->inputs())
            g.edge(index.at(input.node), index[node]);
    }
    return g.request;
}

struct GraphShape {
    const char *name;
    std::function<LayoutRequest(size_t)> build;
};

double timeOnce(const std::function<void()> &run)
{
    const auto start = std::chrono::steady_clock::now();
    run();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Seconds of one dot run in its child process, or the reason it failed.
std::string graphvizFigure(LayoutRequest request, const GraphvizOptions &options, double limit)
{
    request.timeLimitSeconds = limit;
    LayoutResult result;
    const double seconds = timeOnce([&] { result = graphvizLayout(request, nullptr, options); });
    char text[96];
    if (result.engine.empty())
        std::snprintf(text, sizeof text, "%s", result.note.c_str());
    else
        std::snprintf(text, sizeof text, "%.3f s", seconds);
    return text;
}

void reportSize(const GraphShape &shape, size_t nodes, bool withGraphviz)
{
    LayoutRequest request = shape.build(nodes);
    request.engine = LayoutEngine::Layered;
    const double layered = bench::medianSeconds(3, [&] { computeLayout(request); });
    request.engine = LayoutEngine::Auto;
    const LayoutResult chosen = computeLayout(request);
    std::printf("graphlayout %-11s %6zu nodes %6zu edges: layered %.4f s, auto %s (%.3f s)", shape.name,
                request.nodes.size(), request.edges.size(), layered, chosen.engine.c_str(), chosen.seconds);
    if (withGraphviz)
        std::printf(", graphviz bounded %s", graphvizFigure(request, {}, 60).c_str());
    std::printf("\n");
    std::fflush(stdout);
}

// Around the Auto limit: what the caps and the spline router cost.
void reportGraphvizOptions(const GraphShape &shape, size_t nodes)
{
    const LayoutRequest request = shape.build(nodes);
    GraphvizOptions unbounded;
    unbounded.bounded = false;
    GraphvizOptions polyline, lines;
    polyline.splines = "polyline";
    lines.splines = "line";
    std::printf("graphviz    %-11s %6zu nodes %6zu edges: bounded %s, unbounded %s, polyline %s, line %s\n", shape.name,
                request.nodes.size(), request.edges.size(), graphvizFigure(request, {}, 60).c_str(),
                graphvizFigure(request, unbounded, 60).c_str(), graphvizFigure(request, polyline, 60).c_str(),
                graphvizFigure(request, lines, 60).c_str());
    std::fflush(stdout);
}

} // namespace

// `bench_graphlayout quick` leaves out the dot runs on 1,000 nodes (minutes).
int main(int argc, char **argv)
{
    const bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;
    const GraphShape shapes[] = {{"resnet", resnet}, {"transformer", transformer}, {"densenet", densenet}};
    std::printf("graphviz child start-up (2 nodes): %s\n", graphvizFigure(resnet(2), {}, 60).c_str());
    for (const char *model : {"resnet18", "encoder", "llama_block"}) {
        const LayoutRequest request = captured(model);
        reportGraphvizOptions({model, [&](size_t) { return request; }}, 0);
        reportSize({model, [&](size_t) { return request; }}, 0, false);
    }
    for (const GraphShape &shape : shapes)
        for (size_t nodes : {100, 200, 300, 500})
            reportGraphvizOptions(shape, nodes);
    for (const GraphShape &shape : shapes)
        for (size_t nodes : {1000, 10000})
            reportSize(shape, nodes, nodes == 1000 && !quick);
    return 0;
}
