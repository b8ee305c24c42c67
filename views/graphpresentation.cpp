#include "views/graphpresentation.h"

#include <algorithm>
#include <map>

namespace fusescope {
namespace {

// How many drawn (non-parameter) nodes each module holds, nested ones included.
std::map<std::string, int> drawnNodeCounts(const StageGraph &graph)
{
    std::map<std::string, int> counts;
    for (const GraphNode &n : graph.nodes) {
        if (n.isParameter())
            continue;
        for (const std::string &m : moduleChain(n.module))
            ++counts[m];
    }
    return counts;
}

// The outermost module of `chain` that is closed, or "" when all are open.
// A module of one node is never a box: the node says more than a box would.
std::string firstClosed(const std::vector<std::string> &chain, const std::set<std::string> &expanded,
                        const std::map<std::string, int> &counts)
{
    for (const std::string &m : chain) {
        if (!expanded.count(m)) {
            const auto it = counts.find(m);
            return it != counts.end() && it->second > 1 ? m : std::string();
        }
    }
    return {};
}

size_t countItems(const StageGraph &graph, const std::set<std::string> &expanded, const std::map<std::string, int> &counts)
{
    std::set<std::string> boxes;
    size_t nodes = 0;
    for (const GraphNode &n : graph.nodes) {
        if (n.isParameter())
            continue;
        const std::string closed = firstClosed(moduleChain(n.module), expanded, counts);
        closed.empty() ? void(++nodes) : void(boxes.insert(closed));
    }
    return nodes + boxes.size();
}

class Presenter
{
public:
    Presenter(const StageGraph &graph, const std::set<std::string> &expanded)
        : m_graph(graph), m_expanded(expanded), m_counts(drawnNodeCounts(graph))
    {
        for (const GraphKernel &k : graph.kernels) {
            if (k.nodes.size() >= 2)
                m_kernelsToCluster.insert(k.name);
        }
    }

    PresentedGraph run()
    {
        for (const GraphNode &n : m_graph.nodes) {
            if (!n.isParameter())
                place(n);
        }
        for (const GraphNode &n : m_graph.nodes)
            connect(n);
        clusterBoxesByKernel();
        return std::move(m_out);
    }

private:
    void place(const GraphNode &n)
    {
        const std::vector<std::string> chain = moduleChain(n.module);
        const std::string closed = firstClosed(chain, m_expanded, m_counts);
        if (!closed.empty()) {
            const int box = moduleBox(closed);
            m_out.items[size_t(box)].members.push_back(n.id);
            m_out.itemOfNode[n.id] = box;
            return;
        }
        PresentedItem item;
        item.nodeId = n.id;
        item.module = n.module;
        item.cluster = m_kernelsToCluster.count(n.kernel) ? kernelCluster(n.kernel) : moduleCluster(chain);
        m_out.itemOfNode[n.id] = int(m_out.items.size());
        m_out.items.push_back(std::move(item));
    }

    int moduleBox(const std::string &module)
    {
        if (const auto it = m_boxes.find(module); it != m_boxes.end())
            return it->second;
        PresentedItem box;
        box.kind = PresentedItem::Kind::Module;
        box.module = module;
        std::vector<std::string> parents = moduleChain(module);
        parents.pop_back();
        box.cluster = moduleCluster(parents);
        m_boxes[module] = int(m_out.items.size());
        m_out.items.push_back(std::move(box));
        return m_boxes[module];
    }

    int kernelCluster(const std::string &kernel)
    {
        if (const auto it = m_clusters.find("k:" + kernel); it != m_clusters.end())
            return it->second;
        m_out.clusters.push_back({PresentedCluster::Kind::Kernel, kernel, -1});
        return m_clusters["k:" + kernel] = int(m_out.clusters.size()) - 1;
    }

    // Open modules frame their members before fusion; after it the kernels do,
    // and a node belongs to one cluster only.
    int moduleCluster(const std::vector<std::string> &chain)
    {
        if (!m_graph.kernels.empty() || chain.empty())
            return -1;
        int parent = -1;
        for (const std::string &m : chain) {
            // A frame around a single node adds ink, not information.
            if (const auto count = m_counts.find(m); count == m_counts.end() || count->second <= 1)
                continue;
            auto it = m_clusters.find("m:" + m);
            if (it == m_clusters.end()) {
                m_out.clusters.push_back({PresentedCluster::Kind::Module, m, parent});
                it = m_clusters.emplace("m:" + m, int(m_out.clusters.size()) - 1).first;
            }
            parent = it->second;
        }
        return parent;
    }

    // After fusion a closed module whose nodes all run in one kernel sits
    // inside that kernel's cluster, so the kernels stay visible when closed.
    void clusterBoxesByKernel()
    {
        for (PresentedItem &item : m_out.items) {
            if (item.kind != PresentedItem::Kind::Module || item.cluster >= 0)
                continue;
            const GraphNode *first = m_graph.find(item.members.front());
            const bool one = first && m_kernelsToCluster.count(first->kernel) &&
                             std::all_of(item.members.begin(), item.members.end(), [&](int id) {
                                 const GraphNode *n = m_graph.find(id);
                                 return n && (n->kernel == first->kernel || n->view);
                             });
            if (one)
                item.cluster = kernelCluster(first->kernel);
        }
    }

    void connect(const GraphNode &n)
    {
        const int to = m_out.itemFor(n.id);
        if (to < 0)
            return;
        for (int input : n.inputs) {
            const int from = m_out.itemFor(input);
            if (from >= 0 && from != to && m_edges.insert({from, to}).second)
                m_out.edges.push_back({from, to});
        }
    }

    const StageGraph &m_graph;
    const std::set<std::string> &m_expanded;
    const std::map<std::string, int> m_counts;
    std::set<std::string> m_kernelsToCluster;
    std::map<std::string, int> m_boxes;
    std::map<std::string, int> m_clusters;
    std::set<std::pair<int, int>> m_edges;
    PresentedGraph m_out;
};

} // namespace

std::vector<std::string> moduleChain(const std::string &module)
{
    std::vector<std::string> chain;
    for (size_t pos = module.find('.'); !module.empty(); pos = module.find('.', pos + 1)) {
        chain.push_back(module.substr(0, pos));
        if (pos == std::string::npos)
            break;
    }
    return chain;
}

std::set<std::string> modulePaths(const StageGraph &graph)
{
    std::set<std::string> paths;
    for (const GraphNode &n : graph.nodes) {
        for (std::string &m : moduleChain(n.module))
            paths.insert(std::move(m));
    }
    return paths;
}

std::set<std::string> defaultExpandedModules(const StageGraph &graph, int maxItems, int openAllUpTo)
{
    const std::set<std::string> all = modulePaths(graph);
    const std::map<std::string, int> counts = drawnNodeCounts(graph);
    if (countItems(graph, all, counts) <= size_t(openAllUpTo))
        return all;
    std::set<std::string> expanded;
    for (size_t depth = 1;; ++depth) {
        std::set<std::string> next = expanded;
        for (const std::string &m : all) {
            if (moduleChain(m).size() == depth)
                next.insert(m);
        }
        if (next.size() == expanded.size() || countItems(graph, next, counts) > size_t(maxItems))
            return expanded;
        expanded = std::move(next);
    }
}

PresentedGraph presentGraph(const StageGraph &graph, const std::set<std::string> &expanded)
{
    return Presenter(graph, expanded).run();
}

} // namespace fusescope
