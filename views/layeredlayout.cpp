#include "views/layeredlayout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <unordered_map>

namespace fusescope {
namespace {

constexpr double dummyGap = 8; // long edges may run closer to each other than nodes
constexpr double dummyWeight = 4; // how much harder a long edge resists bending than a node moves
constexpr double satelliteWeight = 0.05; // a node with one edge gives way to the main line
constexpr int orderSweeps = 8; // barycenter sweeps, alternating down and up
constexpr int coordinateSweeps = 5; // centering sweeps, alternating down and up: users end up under their inputs
constexpr double componentGap = 2 * layoutNodeGap;

bool cancelled(const std::atomic<bool> *cancel)
{
    return cancel && cancel->load(std::memory_order_relaxed);
}

// The cluster forest: each cluster's path from its root, for nesting depth,
// common ancestors and the ordering key.
class ClusterTree
{
public:
    explicit ClusterTree(const std::vector<LayoutCluster> &clusters)
        : m_paths(clusters.size())
    {
        for (size_t c = 0; c < clusters.size(); ++c) {
            const int parent = clusters[c].parent;
            if (parent >= 0)
                m_paths[c] = m_paths[parent];
            m_paths[c].push_back(static_cast<int>(c));
        }
    }
    bool empty() const { return m_paths.empty(); }
    size_t size() const { return m_paths.size(); }
    // Root first, c last; empty for -1.
    std::span<const int> path(int c) const { return c < 0 ? std::span<const int>() : std::span<const int>(m_paths[c]); }
    int depth(int c) const { return static_cast<int>(path(c).size()); }
    int root(int c) const { return c < 0 ? -1 : path(c).front(); }
    int common(int a, int b) const
    {
        const auto pa = path(a), pb = path(b);
        int last = -1;
        for (size_t i = 0; i < std::min(pa.size(), pb.size()) && pa[i] == pb[i]; ++i)
            last = pa[i];
        return last;
    }
    // How many cluster borders lie between a node of cluster a and one of cluster b.
    int borders(int a, int b) const { return depth(a) + depth(b) - 2 * depth(common(a, b)); }

private:
    std::vector<std::vector<int>> m_paths;
};

class UnionFind
{
public:
    explicit UnionFind(size_t n)
        : m_parent(n)
    {
        std::iota(m_parent.begin(), m_parent.end(), 0);
    }
    int find(int v)
    {
        while (m_parent[v] != v)
            v = m_parent[v] = m_parent[m_parent[v]];
        return v;
    }
    // The smaller root wins, so a component is named by its first node.
    void unite(int a, int b)
    {
        a = find(a), b = find(b);
        m_parent[std::max(a, b)] = std::min(a, b);
    }

private:
    std::vector<int> m_parent;
};

// One edge of a component, oriented downward: `reversed` when it closed a
// cycle and was turned around so the layering has a DAG.
struct LocalEdge {
    int upper = 0, lower = 0; // local vertex indices
    int id = 0; // index into the unique edges
    bool reversed = false;
};

// The distinct, non-loop edges; `first[e]` is the unique edge whose path edge e shares.
struct UniqueEdges {
    std::vector<LayoutEdge> edges;
    std::vector<int> first; // per request edge; -1 for self-loops
};

UniqueEdges uniqueEdges(const std::vector<LayoutEdge> &edges)
{
    UniqueEdges u;
    u.first.assign(edges.size(), -1);
    std::unordered_map<uint64_t, int> seen;
    seen.reserve(edges.size());
    for (size_t e = 0; e < edges.size(); ++e) {
        const LayoutEdge edge = edges[e];
        if (edge.from == edge.to)
            continue;
        const uint64_t key = (uint64_t(uint32_t(edge.from)) << 32) | uint32_t(edge.to);
        const auto [it, added] = seen.try_emplace(key, static_cast<int>(u.edges.size()));
        if (added)
            u.edges.push_back(edge);
        u.first[e] = it->second;
    }
    return u;
}

// Sugiyama's steps on one connected component, in its own coordinates.
class ComponentLayout
{
public:
    ComponentLayout(const LayoutRequest &request, const ClusterTree &tree, std::span<const int> nodes,
                    std::vector<LocalEdge> edges);
    bool run(const std::atomic<bool> *cancel);

    LayoutPoint center(int local) const { return {m_x[local], layerCenter(local)}; }
    std::vector<LayoutPoint> path(const LocalEdge &edge) const;
    const std::vector<LocalEdge> &edges() const { return m_edges; }

private:
    size_t vertexCount() const { return m_layer.size(); }
    bool isDummy(int v) const { return v >= m_realCount; }
    bool isSatellite(int v) const { return ups(v).size() + downs(v).size() == 1; }
    double layerCenter(int v) const { return m_layerY[m_layer[v]]; }
    std::span<const int> ups(int v) const { return neighbours(m_upStart, m_up, v); }
    std::span<const int> downs(int v) const { return neighbours(m_downStart, m_down, v); }
    static std::span<const int> neighbours(const std::vector<int> &start, const std::vector<int> &list, int v);

    void breakCycles();
    void assignLayers();
    void lowerSources(const std::vector<int> &sources, const std::vector<std::vector<int>> &out);
    void addDummies();
    std::vector<bool> chainsOverBudget(const std::vector<int> &chainLength) const;
    int addChain(int upper, int length, int cluster);
    void buildAdjacency();
    void orderLayers(const std::atomic<bool> *cancel);
    void sweepOrder(bool down);
    void sortLayer(std::vector<int> &layer);
    bool keyLess(int a, int b) const;
    void assignX(const std::atomic<bool> *cancel);
    void placeLayer(const std::vector<int> &layer, bool useUps, bool useDowns);
    double wantedX(int v, bool useUps, bool useDowns) const;
    double separation(int a, int b) const;
    void assignY();

    const ClusterTree &m_tree;
    int m_realCount = 0;
    std::vector<LocalEdge> m_edges;
    std::vector<std::vector<int>> m_routes; // per local edge: vertices from upper to lower
    // Per vertex: real nodes first, then dummies.
    std::vector<int> m_layer, m_cluster;
    std::vector<double> m_width, m_height, m_key, m_x;
    std::vector<std::pair<int, int>> m_segments; // (upper, lower) on adjacent layers
    std::vector<int> m_upStart, m_up, m_downStart, m_down;
    std::vector<std::vector<int>> m_layers; // vertices per layer, in order
    std::vector<double> m_layerY, m_layerHeight;
    std::vector<double> m_clusterKey; // per cluster, while sorting one layer
};

ComponentLayout::ComponentLayout(const LayoutRequest &request, const ClusterTree &tree, std::span<const int> nodes,
                                 std::vector<LocalEdge> edges)
    : m_tree(tree)
    , m_realCount(static_cast<int>(nodes.size()))
    , m_edges(std::move(edges))
{
    for (size_t i = 0; i < nodes.size(); ++i) {
        const LayoutNode &node = request.nodes[nodes[i]];
        m_width.push_back(node.width);
        m_height.push_back(node.height);
        m_cluster.push_back(node.cluster);
        m_key.push_back(static_cast<double>(i)); // the request's order: usually topological
    }
    m_clusterKey.resize(tree.size());
}

bool ComponentLayout::run(const std::atomic<bool> *cancel)
{
    breakCycles();
    assignLayers();
    addDummies();
    buildAdjacency();
    orderLayers(cancel);
    if (cancelled(cancel))
        return false;
    assignX(cancel);
    assignY();
    return !cancelled(cancel);
}

std::span<const int> ComponentLayout::neighbours(const std::vector<int> &start, const std::vector<int> &list, int v)
{
    return std::span<const int>(list.data() + start[v], list.data() + start[v + 1]);
}

// Depth-first search; an edge back to a vertex still on the stack closes a
// cycle, so it is turned around.
void ComponentLayout::breakCycles()
{
    std::vector<std::vector<int>> out(m_realCount);
    for (size_t e = 0; e < m_edges.size(); ++e)
        out[m_edges[e].upper].push_back(static_cast<int>(e));
    enum : char { White, Grey, Black };
    std::vector<char> colour(m_realCount, White);
    std::vector<std::pair<int, size_t>> stack;
    for (int start = 0; start < m_realCount; ++start) {
        if (colour[start] != White)
            continue;
        colour[start] = Grey;
        stack.emplace_back(start, 0);
        while (!stack.empty()) {
            auto &[v, next] = stack.back();
            const auto &edges = out[v];
            if (next == edges.size()) {
                colour[v] = Black;
                stack.pop_back();
                continue;
            }
            LocalEdge &edge = m_edges[edges[next++]];
            const int w = edge.lower;
            if (colour[w] == Grey) {
                std::swap(edge.upper, edge.lower);
                edge.reversed = true;
            } else if (colour[w] == White) {
                colour[w] = Grey;
                stack.emplace_back(w, 0);
            }
        }
    }
}

// Longest path from the top (Kahn's order), then every source moves down to
// just above its highest user: a weight or a mask sits next to where it is
// used, not on the top row with an edge across the whole graph.
void ComponentLayout::assignLayers()
{
    std::vector<std::vector<int>> out(m_realCount);
    std::vector<int> indegree(m_realCount, 0);
    for (const LocalEdge &e : m_edges) {
        out[e.upper].push_back(e.lower);
        ++indegree[e.lower];
    }
    m_layer.assign(m_realCount, 0);
    std::vector<int> ready;
    for (int v = 0; v < m_realCount; ++v)
        if (indegree[v] == 0)
            ready.push_back(v);
    const std::vector<int> sources = ready;
    while (!ready.empty()) {
        const int v = ready.back();
        ready.pop_back();
        for (int w : out[v]) {
            m_layer[w] = std::max(m_layer[w], m_layer[v] + 1);
            if (--indegree[w] == 0)
                ready.push_back(w);
        }
    }
    lowerSources(sources, out);
}

void ComponentLayout::lowerSources(const std::vector<int> &sources, const std::vector<std::vector<int>> &out)
{
    for (int v : sources)
        if (!out[v].empty()) {
            int highest = std::numeric_limits<int>::max();
            for (int w : out[v])
                highest = std::min(highest, m_layer[w]);
            m_layer[v] = highest - 1;
        }
    const int top = *std::min_element(m_layer.begin(), m_layer.end());
    for (int &layer : m_layer)
        layer -= top;
}

// Long edges leaving one vertex share one chain of dummies, a bus that each
// target branches off: a value used in every block of a transformer costs one
// chain, not one per use.
void ComponentLayout::addDummies()
{
    std::vector<int> chainLength(m_realCount, 0);
    for (const LocalEdge &e : m_edges) {
        const int span = m_layer[e.lower] - m_layer[e.upper];
        chainLength[e.upper] = std::max(chainLength[e.upper], span - 1);
    }
    std::vector<int> chainCluster(m_cluster.begin(), m_cluster.end());
    for (const LocalEdge &e : m_edges)
        chainCluster[e.upper] = m_tree.common(chainCluster[e.upper], m_cluster[e.lower]);
    const std::vector<bool> straight = chainsOverBudget(chainLength);
    std::vector<int> chainStart(m_realCount, -1);
    for (int v = 0; v < m_realCount; ++v)
        if (chainLength[v] > 0 && !straight[v])
            chainStart[v] = addChain(v, chainLength[v], chainCluster[v]);
    for (const LocalEdge &e : m_edges) {
        std::vector<int> route {e.upper};
        const int span = m_layer[e.lower] - m_layer[e.upper];
        const int first = chainStart[e.upper];
        if (span > 1 && first >= 0)
            for (int d = 0; d < span - 1; ++d)
                route.push_back(first + d);
        if (span == 1 || first >= 0)
            m_segments.emplace_back(route.back(), e.lower);
        route.push_back(e.lower);
        m_routes.push_back(std::move(route));
    }
}

// Dummies are bounded to 20 per node (at least 100,000): past that the
// longest chains are dropped and their edges drawn straight, so a graph of
// edges spanning thousands of layers cannot take millions of dummies.
std::vector<bool> ComponentLayout::chainsOverBudget(const std::vector<int> &chainLength) const
{
    std::vector<bool> straight(chainLength.size(), false);
    const int64_t budget = std::max<int64_t>(100000, 20 * int64_t(m_realCount));
    int64_t total = std::accumulate(chainLength.begin(), chainLength.end(), int64_t(0));
    if (total <= budget)
        return straight;
    std::vector<int> longest(chainLength.size());
    std::iota(longest.begin(), longest.end(), 0);
    std::sort(longest.begin(), longest.end(), [&](int a, int b) { return chainLength[a] > chainLength[b]; });
    for (size_t i = 0; i < longest.size() && total > budget; ++i) {
        straight[longest[i]] = true;
        total -= chainLength[longest[i]];
    }
    return straight;
}

int ComponentLayout::addChain(int upper, int length, int cluster)
{
    const int first = static_cast<int>(vertexCount());
    for (int d = 0; d < length; ++d) {
        const int v = first + d;
        m_layer.push_back(m_layer[upper] + d + 1);
        m_cluster.push_back(cluster);
        m_width.push_back(0);
        m_height.push_back(0);
        m_key.push_back(m_key[upper] + 0.5);
        m_segments.emplace_back(d == 0 ? upper : v - 1, v);
    }
    return first;
}

void ComponentLayout::buildAdjacency()
{
    const size_t n = vertexCount();
    m_upStart.assign(n + 1, 0);
    m_downStart.assign(n + 1, 0);
    for (const auto &[u, l] : m_segments) {
        ++m_downStart[u + 1];
        ++m_upStart[l + 1];
    }
    std::partial_sum(m_upStart.begin(), m_upStart.end(), m_upStart.begin());
    std::partial_sum(m_downStart.begin(), m_downStart.end(), m_downStart.begin());
    m_up.resize(m_segments.size());
    m_down.resize(m_segments.size());
    std::vector<int> upFill(m_upStart.begin(), m_upStart.end() - 1),
        downFill(m_downStart.begin(), m_downStart.end() - 1);
    for (const auto &[u, l] : m_segments) {
        m_down[downFill[u]++] = l;
        m_up[upFill[l]++] = u;
    }
}

void ComponentLayout::orderLayers(const std::atomic<bool> *cancel)
{
    const int layers = *std::max_element(m_layer.begin(), m_layer.end()) + 1;
    m_layers.assign(layers, {});
    for (size_t v = 0; v < vertexCount(); ++v)
        m_layers[m_layer[v]].push_back(static_cast<int>(v));
    for (auto &layer : m_layers)
        sortLayer(layer);
    for (int sweep = 0; sweep < orderSweeps && !cancelled(cancel); ++sweep)
        sweepOrder(sweep % 2 == 0);
}

// The barycenter heuristic: each vertex moves to the mean position of its
// neighbours on the layer just swept; one without any keeps its place.
void ComponentLayout::sweepOrder(bool down)
{
    std::vector<double> position(vertexCount());
    for (const auto &layer : m_layers)
        for (size_t i = 0; i < layer.size(); ++i)
            position[layer[i]] = static_cast<double>(i);
    const int count = static_cast<int>(m_layers.size());
    for (int step = 1; step < count; ++step) {
        auto &layer = m_layers[down ? step : count - 1 - step];
        for (int v : layer) {
            const auto others = down ? ups(v) : downs(v);
            double sum = 0;
            for (int w : others)
                sum += position[w];
            m_key[v] = others.empty() ? position[v] : sum / others.size();
        }
        sortLayer(layer);
        for (size_t i = 0; i < layer.size(); ++i)
            position[layer[i]] = static_cast<double>(i);
    }
}

// By barycenter, but a cluster's vertices stay together: a clustered vertex
// sorts first by its outermost cluster's mean key on this layer, then by the
// next cluster's, and so on.
void ComponentLayout::sortLayer(std::vector<int> &layer)
{
    if (m_tree.empty()) {
        std::stable_sort(layer.begin(), layer.end(), [&](int a, int b) { return m_key[a] < m_key[b]; });
        return;
    }
    std::unordered_map<int, std::pair<double, int>> sums;
    for (int v : layer)
        for (int c : m_tree.path(m_cluster[v])) {
            auto &[sum, count] = sums[c];
            sum += m_key[v];
            ++count;
        }
    for (const auto &[c, sum] : sums)
        m_clusterKey[c] = sum.first / sum.second;
    std::stable_sort(layer.begin(), layer.end(), [&](int a, int b) { return keyLess(a, b); });
}

// Compares the sequences (outermost cluster, ..., innermost cluster, vertex),
// each item by (key, id), so a cluster never interleaves with its neighbours.
bool ComponentLayout::keyLess(int a, int b) const
{
    const auto pa = m_tree.path(m_cluster[a]);
    const auto pb = m_tree.path(m_cluster[b]);
    const int clusters = static_cast<int>(m_tree.size());
    auto item = [&](std::span<const int> path, int v, size_t level) {
        if (level < path.size())
            return std::pair(m_clusterKey[path[level]], path[level]);
        return std::pair(m_key[v], clusters + v);
    };
    for (size_t level = 0;; ++level) {
        const auto ia = item(pa, a, level), ib = item(pb, b, level);
        if (ia != ib)
            return ia < ib;
        if (level >= pa.size() || level >= pb.size())
            return false; // both items were the same vertex
    }
}

// Each sweep moves every vertex toward the mean of its neighbours on the
// layer before it, as close as the order and the gaps allow.
void ComponentLayout::assignX(const std::atomic<bool> *cancel)
{
    m_x.assign(vertexCount(), 0);
    for (const auto &layer : m_layers)
        placeLayer(layer, false, false);
    const int count = static_cast<int>(m_layers.size());
    for (int sweep = 0; sweep < coordinateSweeps && !cancelled(cancel); ++sweep) {
        const bool down = sweep % 2 == 0;
        for (int step = 1; step < count; ++step)
            placeLayer(m_layers[down ? step : count - 1 - step], down, !down);
    }
}

// The closest placement to the wanted x's (least squares, dummies weighted
// more so long edges run straight, satellites less) that keeps the order and the gaps: pool
// adjacent violators on x minus each vertex's least offset from the first.
void ComponentLayout::placeLayer(const std::vector<int> &layer, bool useUps, bool useDowns)
{
    struct Block {
        double weight, weighted;
        size_t end;
        double mean() const { return weighted / weight; }
    };
    std::vector<double> offset(layer.size(), 0);
    std::vector<Block> blocks;
    for (size_t i = 0; i < layer.size(); ++i) {
        const int v = layer[i];
        if (i > 0)
            offset[i] = offset[i - 1] + separation(layer[i - 1], v);
        const double wanted = wantedX(v, useUps, useDowns);
        const double weight = isDummy(v) ? dummyWeight : isSatellite(v) ? satelliteWeight : 1.0;
        blocks.push_back({weight, weight * (wanted - offset[i]), i + 1});
        while (blocks.size() > 1 && blocks[blocks.size() - 2].mean() > blocks.back().mean()) {
            const Block last = blocks.back();
            blocks.pop_back();
            blocks.back() = {blocks.back().weight + last.weight, blocks.back().weighted + last.weighted, last.end};
        }
    }
    size_t i = 0;
    for (const Block &block : blocks)
        for (; i < block.end; ++i)
            m_x[layer[i]] = block.mean() + offset[i];
}

// The mean x of the neighbours looked at. A neighbour with no other edge (a
// weight, say) counts only when there is nothing else: it follows its user
// rather than pulling the main line into a staircase.
double ComponentLayout::wantedX(int v, bool useUps, bool useDowns) const
{
    double sums[2] = {0, 0};
    int counts[2] = {0, 0};
    auto add = [&](std::span<const int> others) {
        for (int w : others) {
            const int satellite = isSatellite(w);
            sums[satellite] += m_x[w];
            ++counts[satellite];
        }
    };
    add(useUps ? ups(v) : std::span<const int>());
    add(useDowns ? downs(v) : std::span<const int>());
    if (counts[0] > 0)
        return sums[0] / counts[0];
    return counts[1] > 0 ? sums[1] / counts[1] : m_x[v];
}

double ComponentLayout::separation(int a, int b) const
{
    const double gap = isDummy(a) || isDummy(b) ? dummyGap : layoutNodeGap;
    const int borders = m_tree.borders(m_cluster[a], m_cluster[b]);
    return (m_width[a] + m_width[b]) / 2 + gap + borders * layoutClusterPadding;
}

// Rows of the tallest node's height; a row where clusters begin gets room
// for their padding and labels above it, one where they end for padding below.
void ComponentLayout::assignY()
{
    const size_t count = m_layers.size();
    m_layerHeight.assign(count, 0);
    std::vector<int> opening(count, 0), closing(count, 0);
    std::unordered_map<int, std::pair<int, int>> extent; // cluster -> first and last layer
    for (int v = 0; v < m_realCount; ++v) {
        const int layer = m_layer[v];
        m_layerHeight[layer] = std::max(m_layerHeight[layer], m_height[v]);
        for (int c : m_tree.path(m_cluster[v])) {
            auto [it, added] = extent.try_emplace(c, layer, layer);
            it->second = {std::min(it->second.first, layer), std::max(it->second.second, layer)};
        }
    }
    for (const auto &[c, range] : extent) {
        ++opening[range.first];
        ++closing[range.second];
    }
    double y = 0;
    for (size_t l = 0; l < count; ++l) {
        y += opening[l] * (layoutClusterPadding + layoutClusterLabelHeight);
        m_layerY.push_back(y + m_layerHeight[l] / 2);
        y += m_layerHeight[l] + layoutLayerGap + closing[l] * layoutClusterPadding;
    }
}

// From the upper vertex's bottom border down through each dummy's row (a
// vertical run, so no node is crossed) to the lower vertex's top border;
// reversed edges then point back up.
std::vector<LayoutPoint> ComponentLayout::path(const LocalEdge &edge) const
{
    const std::vector<int> &route = m_routes[&edge - m_edges.data()];
    std::vector<LayoutPoint> points;
    points.push_back({m_x[route.front()], layerCenter(route.front()) + m_height[route.front()] / 2});
    for (size_t i = 1; i + 1 < route.size(); ++i) {
        const int d = route[i];
        const double half = m_layerHeight[m_layer[d]] / 2;
        points.push_back({m_x[d], layerCenter(d) - half});
        if (half > 0)
            points.push_back({m_x[d], layerCenter(d) + half});
    }
    points.push_back({m_x[route.back()], layerCenter(route.back()) - m_height[route.back()] / 2});
    if (edge.reversed)
        std::reverse(points.begin(), points.end());
    return points;
}

// Nodes joined by an edge or by an outermost cluster are laid out together.
std::vector<std::vector<int>> components(const LayoutRequest &request, const UniqueEdges &unique,
                                         const ClusterTree &tree)
{
    const int n = static_cast<int>(request.nodes.size());
    UnionFind sets(request.nodes.size());
    for (const LayoutEdge &e : unique.edges)
        sets.unite(e.from, e.to);
    std::vector<int> firstInRoot(tree.size(), -1);
    for (int v = 0; v < n; ++v) {
        const int root = tree.root(request.nodes[v].cluster);
        if (root >= 0 && firstInRoot[root] >= 0)
            sets.unite(firstInRoot[root], v);
        else if (root >= 0)
            firstInRoot[root] = v;
    }
    std::vector<int> index(request.nodes.size(), -1);
    std::vector<std::vector<int>> parts;
    for (int v = 0; v < n; ++v) {
        int &part = index[sets.find(v)];
        if (part < 0) {
            part = static_cast<int>(parts.size());
            parts.emplace_back();
        }
        parts[part].push_back(v);
    }
    return parts;
}

// Shelves of components, left to right in node order, in rows about twice
// as wide as the whole is tall.
std::vector<LayoutPoint> shelfOffsets(const std::vector<LayoutRect> &boxes)
{
    double area = 0, widest = 0;
    for (const LayoutRect &box : boxes) {
        area += (box.width + componentGap) * (box.height + componentGap);
        widest = std::max(widest, box.width);
    }
    const double rowWidth = std::max(widest, 2 * std::sqrt(area / 2));
    std::vector<LayoutPoint> offsets;
    double x = 0, y = 0, rowHeight = 0;
    for (const LayoutRect &box : boxes) {
        if (x > 0 && x + box.width > rowWidth) {
            x = 0;
            y += rowHeight + componentGap;
            rowHeight = 0;
        }
        offsets.push_back({x - box.x, y - box.y});
        x += box.width + componentGap;
        rowHeight = std::max(rowHeight, box.height);
    }
    return offsets;
}

// The whole layout, one component at a time in its own coordinates, then
// shifted onto its shelf.
class LayeredLayout
{
public:
    LayeredLayout(const LayoutRequest &request)
        : m_request(request)
        , m_tree(request.clusters)
        , m_unique(uniqueEdges(request.edges))
        , m_centers(request.nodes.size())
        , m_paths(m_unique.edges.size())
    { }
    bool run(const std::atomic<bool> *cancel);
    LayoutResult result() const;

private:
    std::vector<std::vector<LocalEdge>> localEdges(const std::vector<std::vector<int>> &parts) const;
    LayoutRect layoutPart(std::span<const int> nodes, std::vector<LocalEdge> edges, const std::atomic<bool> *cancel);
    void shift(const std::vector<LayoutPoint> &offsets); // per component

    const LayoutRequest &m_request;
    const ClusterTree m_tree;
    const UniqueEdges m_unique;
    std::vector<int> m_part, m_local; // per node
    std::vector<LayoutPoint> m_centers;
    std::vector<std::vector<LayoutPoint>> m_paths; // per unique edge
    bool m_cancelled = false;
};

bool LayeredLayout::run(const std::atomic<bool> *cancel)
{
    const std::vector<std::vector<int>> parts = components(m_request, m_unique, m_tree);
    m_part.resize(m_request.nodes.size());
    m_local.resize(m_request.nodes.size());
    for (size_t p = 0; p < parts.size(); ++p)
        for (size_t i = 0; i < parts[p].size(); ++i)
            m_part[parts[p][i]] = static_cast<int>(p), m_local[parts[p][i]] = static_cast<int>(i);
    std::vector<std::vector<LocalEdge>> edges = localEdges(parts);
    std::vector<LayoutRect> boxes;
    for (size_t p = 0; p < parts.size(); ++p) {
        boxes.push_back(layoutPart(parts[p], std::move(edges[p]), cancel));
        if (m_cancelled)
            return false;
    }
    shift(shelfOffsets(boxes));
    return true;
}

std::vector<std::vector<LocalEdge>> LayeredLayout::localEdges(const std::vector<std::vector<int>> &parts) const
{
    std::vector<std::vector<LocalEdge>> edges(parts.size());
    for (size_t id = 0; id < m_unique.edges.size(); ++id) {
        const LayoutEdge e = m_unique.edges[id];
        edges[m_part[e.from]].push_back({m_local[e.from], m_local[e.to], static_cast<int>(id), false});
    }
    return edges;
}

// Lays out one component and returns its box, with room for the padding and
// labels of the clusters in it.
LayoutRect LayeredLayout::layoutPart(std::span<const int> nodes, std::vector<LocalEdge> edges,
                                     const std::atomic<bool> *cancel)
{
    ComponentLayout layout(m_request, m_tree, nodes, std::move(edges));
    if (!layout.run(cancel)) {
        m_cancelled = true;
        return {};
    }
    LayoutExtent extent;
    int depth = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const LayoutNode &node = m_request.nodes[nodes[i]];
        m_centers[nodes[i]] = layout.center(static_cast<int>(i));
        extent.add(m_centers[nodes[i]], node.width, node.height);
        depth = std::max(depth, m_tree.depth(node.cluster));
    }
    for (const LocalEdge &edge : layout.edges()) {
        m_paths[edge.id] = layout.path(edge);
        for (const LayoutPoint &p : m_paths[edge.id])
            extent.add(p, 0, 0);
    }
    const double margin = depth * layoutClusterPadding;
    extent.add({extent.left - margin, extent.top - depth * layoutClusterLabelHeight - margin}, 0, 0);
    extent.add({extent.right + margin, extent.bottom + margin}, 0, 0);
    return extent.rect();
}

void LayeredLayout::shift(const std::vector<LayoutPoint> &offsets)
{
    auto move = [](LayoutPoint &p, LayoutPoint by) { p = {p.x + by.x, p.y + by.y}; };
    for (size_t v = 0; v < m_centers.size(); ++v)
        move(m_centers[v], offsets[m_part[v]]);
    for (size_t id = 0; id < m_paths.size(); ++id)
        for (LayoutPoint &p : m_paths[id])
            move(p, offsets[m_part[m_unique.edges[id].from]]);
}

LayoutResult LayeredLayout::result() const
{
    LayoutResult result;
    result.engine = "layered";
    result.centers = m_centers;
    result.edgePaths.reserve(m_request.edges.size());
    for (int first : m_unique.first)
        result.edgePaths.push_back(first < 0 ? std::vector<LayoutPoint>() : m_paths[first]);
    result.clusterRects = clusterRectsAround(m_request, m_centers);
    return result;
}

} // namespace

std::vector<LayoutRect> clusterRectsAround(const LayoutRequest &request, const std::vector<LayoutPoint> &centers)
{
    std::vector<LayoutExtent> extents(request.clusters.size());
    for (size_t v = 0; v < request.nodes.size(); ++v)
        if (request.nodes[v].cluster >= 0)
            extents[request.nodes[v].cluster].add(centers[v], request.nodes[v].width, request.nodes[v].height);
    std::vector<LayoutRect> rects(request.clusters.size());
    for (size_t c = request.clusters.size(); c-- > 0;) {
        if (extents[c].empty())
            continue;
        const LayoutExtent &e = extents[c];
        const double pad = layoutClusterPadding;
        rects[c] = {e.left - pad, e.top - pad - layoutClusterLabelHeight, e.right - e.left + 2 * pad,
                    e.bottom - e.top + 2 * pad + layoutClusterLabelHeight};
        if (request.clusters[c].parent >= 0)
            extents[request.clusters[c].parent].add(rects[c]);
    }
    return rects;
}

LayoutResult layeredLayout(const LayoutRequest &request, const std::atomic<bool> *cancel)
{
    LayeredLayout layout(request);
    if (!layout.run(cancel)) {
        LayoutResult result;
        result.cancelled = true;
        return result;
    }
    return layout.result();
}

} // namespace fusescope
