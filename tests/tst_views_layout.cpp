// The graph layout engines: geometry checks every layout must pass, with
// both engines, plus the time limit, cancel, the crash path and bad input.
#include "core/tensor/tensor.h"
#include "tests/viewtest.h"
#include "views/graphlayout.h"
#include "views/graphvizlayout.h"

#include <QTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <thread>

using namespace fusescope;

namespace {

constexpr double tolerance = 1.0; // pixels; dot rounds to whole points


LayoutRequest chain(int n)
{
    viewtest::LayoutBuilder g;
    for (int i = 0; i < n; ++i)
        if (g.node(); i > 0)
            g.edge(i - 1, i);
    return g.request;
}

// conv-bn-relu-conv-bn-add(skip)-relu blocks, each block a cluster.
LayoutRequest resnet(int blocks, bool clusters = true)
{
    viewtest::LayoutBuilder g;
    int x = g.node();
    for (int b = 0; b < blocks; ++b) {
        const int c = clusters ? g.cluster(-1, "layer" + std::to_string(b)) : -1;
        int y = g.op(x, c);
        y = g.op(y, c);
        const int add = g.node(60, 24, c);
        g.edge(y, add);
        g.edge(x, add);
        x = add;
    }
    return g.request;
}

// Blocks with an attention cluster nested in each, a mask used by every block.
LayoutRequest transformer(int blocks)
{
    viewtest::LayoutBuilder g;
    int x = g.node();
    const int mask = g.node(80, 24);
    for (int b = 0; b < blocks; ++b) {
        const int block = g.cluster(-1, "h." + std::to_string(b));
        const int attention = g.cluster(block, "attn");
        const int q = g.op(x, attention), k = g.op(x, attention), v = g.op(x, attention);
        const int scores = g.node(100, 30, attention), softmax = g.node(100, 30, attention);
        g.edge(q, scores), g.edge(k, scores), g.edge(scores, softmax), g.edge(mask, softmax);
        const int mix = g.node(100, 30, attention);
        g.edge(softmax, mix), g.edge(v, mix);
        const int add = g.node(60, 24, block);
        g.edge(g.op(mix, block), add), g.edge(x, add);
        x = g.op(g.op(add, block), block);
    }
    return g.request;
}

// Dense blocks (each layer reads every earlier output of its block): dot
// needs seconds for 1,500 nodes of this, even bounded.
LayoutRequest dense(int nodes)
{
    viewtest::LayoutBuilder g;
    int x = g.node();
    while (g.request.nodes.size() < size_t(nodes)) {
        std::vector<int> features {x};
        for (int layer = 0; layer < 12; ++layer) {
            const int concat = g.node(80, 24);
            for (int f : features)
                g.edge(f, concat);
            features.push_back(g.op(concat));
        }
        x = features.back();
    }
    return g.request;
}

LayoutRequest randomDag(int n, unsigned seed)
{
    viewtest::LayoutBuilder g;
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> size(20, 160);
    for (int i = 0; i < n; ++i) {
        g.node(size(random), size(random) / 3);
        for (int k = 0; i > 0 && k < 2; ++k)
            g.edge(std::uniform_int_distribution<int>(std::max(0, i - (k ? n : 5)), i - 1)(random), i);
    }
    return g.request;
}

// Duplicate edges, a self-loop, an isolated node and a second component.
LayoutRequest awkward()
{
    viewtest::LayoutBuilder g;
    const int a = g.node(), b = g.node(), c = g.node(40, 80), d = g.node();
    g.edge(a, b), g.edge(a, b), g.edge(b, b), g.edge(b, c), g.edge(a, c);
    g.node(10, 10);
    const int e = g.node(200, 20);
    g.edge(e, d);
    return g.request;
}

LayoutRequest cycle()
{
    viewtest::LayoutBuilder g;
    for (int i = 0; i < 4; ++i)
        g.node();
    g.edge(0, 1), g.edge(1, 2), g.edge(2, 3), g.edge(3, 1), g.edge(2, 0);
    return g.request;
}

const std::map<QString, std::function<LayoutRequest()>> &graphs()
{
    static const std::map<QString, std::function<LayoutRequest()>> all {
        {"chain", [] { return chain(12); }},
        {"resnet", [] { return resnet(8); }},
        {"transformer", [] { return transformer(3); }},
        {"random", [] { return randomDag(150, 7); }},
        {"awkward", [] { return awkward(); }},
        {"cycle", [] { return cycle(); }},
    };
    return all;
}

LayoutRect box(const LayoutRequest &request, const LayoutResult &result, int v)
{
    const LayoutNode &n = request.nodes[v];
    return {result.centers[v].x - n.width / 2, result.centers[v].y - n.height / 2, n.width, n.height};
}

bool overlaps(const LayoutRect &a, const LayoutRect &b)
{
    return a.x + a.width > b.x + tolerance && b.x + b.width > a.x + tolerance && a.y + a.height > b.y + tolerance
        && b.y + b.height > a.y + tolerance;
}

bool contains(const LayoutRect &outer, const LayoutRect &inner)
{
    return inner.x >= outer.x - tolerance && inner.y >= outer.y - tolerance
        && inner.x + inner.width <= outer.x + outer.width + tolerance
        && inner.y + inner.height <= outer.y + outer.height + tolerance;
}

// How far p lies from the rectangle's border, inside or out.
double distanceToBorder(const LayoutRect &r, LayoutPoint p)
{
    const double dx = std::max({r.x - p.x, 0.0, p.x - r.x - r.width});
    const double dy = std::max({r.y - p.y, 0.0, p.y - r.y - r.height});
    if (dx > 0 || dy > 0)
        return std::hypot(dx, dy);
    return std::min({p.x - r.x, r.x + r.width - p.x, p.y - r.y, r.y + r.height - p.y});
}

QString text(const std::string &s)
{
    return QString::fromStdString(s);
}

QString checkSizes(const LayoutRequest &request, const LayoutResult &result)
{
    if (result.centers.size() != request.nodes.size() || result.edgePaths.size() != request.edges.size()
        || result.clusterRects.size() != request.clusters.size())
        return "the result's sizes do not match the request's";
    return {};
}

QString checkDirections(const LayoutRequest &request, const LayoutResult &result)
{
    for (size_t e = 0; e < request.edges.size(); ++e) {
        const LayoutEdge edge = request.edges[e];
        if (edge.from != edge.to && result.centers[edge.from].y >= result.centers[edge.to].y)
            return QString("edge %1 (%2 -> %3) does not point down").arg(e).arg(edge.from).arg(edge.to);
    }
    return {};
}

// Sorted by left edge, each box against those starting before it ends.
QString checkOverlaps(const LayoutRequest &request, const LayoutResult &result)
{
    std::vector<int> order(request.nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return box(request, result, a).x < box(request, result, b).x; });
    for (size_t i = 0; i < order.size(); ++i) {
        const LayoutRect a = box(request, result, order[i]);
        for (size_t j = i + 1; j < order.size() && box(request, result, order[j]).x < a.x + a.width; ++j)
            if (overlaps(a, box(request, result, order[j])))
                return QString("nodes %1 and %2 overlap").arg(order[i]).arg(order[j]);
    }
    return {};
}

QString checkClusters(const LayoutRequest &request, const LayoutResult &result)
{
    for (size_t v = 0; v < request.nodes.size(); ++v) {
        const int c = request.nodes[v].cluster;
        if (c >= 0 && !contains(result.clusterRects[c], box(request, result, static_cast<int>(v))))
            return QString("cluster %1 does not contain its node %2").arg(c).arg(v);
    }
    for (size_t c = 0; c < request.clusters.size(); ++c) {
        const int parent = request.clusters[c].parent;
        const LayoutRect r = result.clusterRects[c];
        if (r.width <= 0 || r.height <= 0)
            continue;
        if (r.height < 20)
            return QString("cluster %1 has no room for its label").arg(c);
        if (parent >= 0 && !contains(result.clusterRects[parent], r))
            return QString("cluster %1 does not contain its child %2").arg(parent).arg(c);
    }
    return {};
}

QString checkEdgePaths(const LayoutRequest &request, const LayoutResult &result)
{
    for (size_t e = 0; e < request.edges.size(); ++e) {
        const LayoutEdge edge = request.edges[e];
        const auto &path = result.edgePaths[e];
        if (edge.from == edge.to)
            continue;
        if (path.size() < 2 || (result.edgesAreBezier && path.size() % 3 != 1))
            return QString("edge %1 has a path of %2 points").arg(e).arg(path.size());
        if (distanceToBorder(box(request, result, edge.from), path.front()) > 2 * tolerance)
            return QString("edge %1 does not start at its source's border").arg(e);
        if (distanceToBorder(box(request, result, edge.to), path.back()) > 2 * tolerance)
            return QString("edge %1 does not end at its target's border").arg(e);
    }
    return {};
}

QString checkBounds(const LayoutRequest &request, const LayoutResult &result)
{
    const LayoutRect bounds = result.bounds;
    if (bounds.x != 0 || bounds.y != 0)
        return "the bounds do not start at (0, 0)";
    for (size_t v = 0; v < request.nodes.size(); ++v)
        if (!contains(bounds, box(request, result, static_cast<int>(v))))
            return QString("node %1 lies outside the bounds").arg(v);
    for (const auto &path : result.edgePaths)
        for (const LayoutPoint &p : path)
            if (!contains(bounds, {p.x, p.y, 0, 0}))
                return "an edge leaves the bounds";
    return {};
}

// The first thing wrong with the layout, or empty.
QString problemWith(const LayoutRequest &request, const LayoutResult &result, bool dag)
{
    QString problem = checkSizes(request, result);
    if (problem.isEmpty() && dag)
        problem = checkDirections(request, result);
    for (auto check : {checkOverlaps, checkClusters, checkEdgePaths, checkBounds})
        if (problem.isEmpty())
            problem = check(request, result);
    return problem;
}

LayoutResult layout(LayoutRequest request, LayoutEngine engine, double limit = 30)
{
    request.engine = engine;
    request.timeLimitSeconds = limit;
    return computeLayout(request);
}

} // namespace

class TestViewsLayout : public QObject
{
    Q_OBJECT

private slots:
    void geometry_data()
    {
        QTest::addColumn<QString>("graph");
        QTest::addColumn<int>("engine");
        for (const auto &[name, build] : graphs()) {
            QTest::newRow(qPrintable("graphviz " + name)) << name << int(LayoutEngine::Graphviz);
            QTest::newRow(qPrintable("layered " + name)) << name << int(LayoutEngine::Layered);
        }
    }
    void geometry()
    {
        QFETCH(QString, graph);
        QFETCH(int, engine);
        const LayoutRequest request = graphs().at(graph)();
        const LayoutResult result = layout(request, LayoutEngine(engine));
        QCOMPARE(text(result.engine), engine == int(LayoutEngine::Graphviz) ? "graphviz dot" : "layered");
        QCOMPARE(text(result.note), QString());
        QCOMPARE(result.edgesAreBezier, engine == int(LayoutEngine::Graphviz));
        const QString problem = problemWith(request, result, graph != "cycle");
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void emptyAndSingle_data()
    {
        QTest::addColumn<int>("engine");
        QTest::newRow("graphviz") << int(LayoutEngine::Graphviz);
        QTest::newRow("layered") << int(LayoutEngine::Layered);
    }
    void emptyAndSingle()
    {
        QFETCH(int, engine);
        const LayoutResult empty = layout({}, LayoutEngine(engine));
        QVERIFY(empty.centers.empty());
        QCOMPARE(empty.bounds.width, 0.0);
        QVERIFY(!empty.engine.empty());
        viewtest::LayoutBuilder g;
        g.node(120, 40);
        const LayoutResult one = layout(g.request, LayoutEngine(engine));
        QCOMPARE(one.centers.size(), size_t(1));
        QCOMPARE(one.centers[0].x, 60.0);
        QCOMPARE(one.centers[0].y, 20.0);
        QCOMPARE(one.bounds.width, 120.0);
        QCOMPARE(one.bounds.height, 40.0);
    }

    void duplicatesAndLoops_data() { emptyAndSingle_data(); }
    void duplicatesAndLoops()
    {
        QFETCH(int, engine);
        const LayoutRequest request = awkward();
        const LayoutResult result = layout(request, LayoutEngine(engine));
        QVERIFY(result.edgePaths[2].empty()); // the self-loop
        QCOMPARE(result.edgePaths[1].size(), result.edgePaths[0].size());
        QCOMPARE(result.edgePaths[1].back().y, result.edgePaths[0].back().y);
    }

    // Nodes 4 (isolated) and 5-3 (a pair) sit apart from the first three.
    void componentsSideBySide_data() { emptyAndSingle_data(); }
    void componentsSideBySide()
    {
        QFETCH(int, engine);
        const LayoutRequest request = awkward();
        const LayoutResult result = layout(request, LayoutEngine(engine));
        for (int v : {0, 1, 2})
            for (int w : {3, 4, 5}) {
                const LayoutRect a = box(request, result, v), b = box(request, result, w);
                QVERIFY2(a.x + a.width < b.x || b.x + b.width < a.x || a.y + a.height < b.y || b.y + b.height < a.y,
                         qPrintable(QString("nodes %1 and %2 share a column and a row").arg(v).arg(w)));
            }
    }

    // Two parallel branches, each a cluster: the clusters need not overlap.
    void clustersApart_data() { emptyAndSingle_data(); }
    void clustersApart()
    {
        QFETCH(int, engine);
        viewtest::LayoutBuilder g;
        const int top = g.node(), bottom = g.node();
        for (int c = 0; c < 2; ++c) {
            const int cluster = g.cluster(-1, c ? "right" : "left\\N");
            int x = top;
            for (int i = 0; i < 4; ++i)
                x = g.op(x, cluster);
            g.edge(x, bottom);
        }
        const LayoutResult result = layout(g.request, LayoutEngine(engine));
        QVERIFY(!overlaps(result.clusterRects[0], result.clusterRects[1]));
        const QString problem = problemWith(g.request, result, true);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void invalidInputThrows_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("edge out of range") << 0;
        QTest::newRow("negative edge") << 1;
        QTest::newRow("cluster out of range") << 2;
        QTest::newRow("parent after child") << 3;
        QTest::newRow("negative size") << 4;
    }
    void invalidInputThrows()
    {
        QFETCH(int, kind);
        LayoutRequest request = resnet(2);
        switch (kind) {
        case 0:
            request.edges.push_back({0, int(request.nodes.size())});
            break;
        case 1:
            request.edges.push_back({-1, 0});
            break;
        case 2:
            request.nodes[3].cluster = int(request.clusters.size());
            break;
        case 3:
            request.clusters[0].parent = 1;
            break;
        default:
            request.nodes[1].width = -5;
            break;
        }
        QVERIFY_THROWS_EXCEPTION(Error, computeLayout(request));
    }

    void autoPolicy()
    {
        const LayoutResult small = layout(resnet(4), LayoutEngine::Auto);
        QCOMPARE(text(small.engine), "graphviz dot");
        const LayoutRequest big = chain(autoGraphvizNodeLimit + 1);
        const LayoutResult large = layout(big, LayoutEngine::Auto);
        QCOMPARE(text(large.engine), "layered");
        QVERIFY2(large.note.find("above the Graphviz limit of") != std::string::npos, large.note.c_str());
    }

    // dot needs seconds for this; the child is killed at the limit.
    void timeLimitFallsBack()
    {
        const LayoutRequest request = dense(1500);
        const auto start = std::chrono::steady_clock::now();
        const LayoutResult result = layout(request, LayoutEngine::Graphviz, 0.2);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        QCOMPARE(text(result.engine), "layered");
        QCOMPARE(text(result.note), "graphviz took longer than 0.2 s");
        QVERIFY2(seconds < 2, qPrintable(QString("took %1 s").arg(seconds))); // dot alone takes several
        const QString problem = problemWith(request, result, true);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void crashFallsBack()
    {
        GraphvizOptions options;
        options.raiseInChild = SIGSEGV;
        const LayoutResult crashed = graphvizLayout(resnet(2), nullptr, options);
        QVERIFY(crashed.engine.empty());
        QCOMPARE(text(crashed.note), "graphviz crashed (signal 11)");
        QVERIFY(crashed.centers.empty());
    }

    void cancelStopsGraphviz()
    {
        LayoutRequest request = dense(1500);
        request.engine = LayoutEngine::Graphviz;
        request.timeLimitSeconds = 600;
        std::atomic<bool> cancel = false;
        LayoutResult result;
        std::thread worker([&] { result = computeLayout(request, &cancel); });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const auto cancelled = std::chrono::steady_clock::now();
        cancel = true;
        worker.join();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled).count();
        QVERIFY(result.cancelled);
        QVERIFY(result.centers.empty());
        QVERIFY2(seconds < 1, qPrintable(QString("took %1 s to stop").arg(seconds)));
    }

    void cancelStopsLayered()
    {
        std::atomic<bool> cancel = true;
        LayoutRequest request = resnet(50);
        request.engine = LayoutEngine::Layered;
        const LayoutResult result = computeLayout(request, &cancel);
        QVERIFY(result.cancelled);
        QVERIFY(result.centers.empty());
    }

    // Every node of a 1,000-chain feeds the last: half a million dummies
    // would be needed, so past the budget the longest edges run straight.
    void dummyBudget()
    {
        LayoutRequest request = chain(1000);
        for (int v = 0; v < 997; ++v)
            request.edges.push_back({v, 999});
        const LayoutResult result = layout(request, LayoutEngine::Layered);
        const QString problem = problemWith(request, result, true);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(result.edgePaths[999].size(), size_t(2)); // 0 -> 999, the longest
        QVERIFY(result.edgePaths.back().size() > 2);       // 996 -> 999 keeps its dummies
    }

    void tenThousandNodes_data()
    {
        QTest::addColumn<QString>("graph");
        QTest::newRow("resnet") << "resnet";
        QTest::newRow("transformer") << "transformer";
        QTest::newRow("random") << "random";
    }
    void tenThousandNodes()
    {
        QFETCH(QString, graph);
        const LayoutRequest request = graph == "resnet" ? resnet(2000)
            : graph == "transformer"                    ? transformer(625)
                                                        : randomDag(10000, 3);
        QVERIFY(request.nodes.size() >= 10000);
        const LayoutResult result = layout(request, LayoutEngine::Auto);
        QCOMPARE(text(result.engine), "layered");
        const QString problem = problemWith(request, result, true);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }
};

QTEST_GUILESS_MAIN(TestViewsLayout)
#include "tst_views_layout.moc"
