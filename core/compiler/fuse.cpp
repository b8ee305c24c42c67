// The `fuse` stage. Every non-view node starts as its own group; the
// scheduler merges the producer/consumer pair that saves the most memory
// traffic, as long as the merged group is a kernel codegen can write and
// the merge creates no cycle, until no pair is left. Every pair left apart
// is recorded with the reason.
#include "core/compiler/fusion_rules.h"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace fusescope::compiler {
namespace {

struct Candidate {
    int producer = -1, consumer = -1; // groups
    Node *from = nullptr, *to = nullptr;
    double saved = 0;
};

class Fuser
{
public:
    explicit Fuser(const Graph &graph)
        : m_nodes(graph.nodes()),
          m_groupById(static_cast<size_t>(graph.nextId()), -1),
          m_positionById(static_cast<size_t>(graph.nextId()), -1),
          m_readersById(static_cast<size_t>(graph.nextId()))
    {
        int pos = 0;
        for (Node *n : m_nodes) {
            m_readersById[static_cast<size_t>(n->id)] = readersOf(n);
            m_position[n] = pos;
            m_positionById[static_cast<size_t>(n->id)] = pos++;
            if (auto g = initialGroup(*n)) {
                m_groupById[static_cast<size_t>(n->id)] = static_cast<int>(m_groups.size());
                m_groups.push_back(std::move(*g));
            }
        }
    }

    void run(PassLog &log, std::vector<FusionDecision> &decisions)
    {
        while (mergeBest(log, decisions)) {
        }
        recordRefusals(decisions);
    }

    std::vector<Group> liveGroups() const
    {
        std::vector<Group> out;
        for (const Group &g : m_groups) {
            if (g.alive)
                out.push_back(g);
        }
        return out;
    }

private:
    // Looked up for every edge on every merge: a vector by node id, not a hash map.
    int groupOf(const Node *n) const
    {
        const size_t id = static_cast<size_t>(n->id);
        return id < m_groupById.size() ? m_groupById[id] : -1;
    }

    // readersOf(n), which the graph fixes: merges only regroup nodes, and
    // every merge looks at every edge again (DenseNet-121 spent half its
    // fuse stage making these lists).
    const std::vector<Node *> &readers(const Node *n) const { return m_readersById[static_cast<size_t>(n->id)]; }

    // Edges between groups: producer node -> consumer node, through any
    // alias views, in graph order so every run decides alike.
    template <typename F>
    void forEachEdge(F f) const
    {
        for (Node *node : m_nodes) {
            const int g = groupOf(node);
            if (g < 0)
                continue;
            for (Node *user : readers(node)) {
                const int gc = groupOf(user);
                if (gc >= 0 && gc != g)
                    f(node, user, g, gc);
            }
        }
    }

    double bytesSaved(Node *from, int gp, int gc) const
    {
        double bytes = 0;
        for (const TensorMeta &m : from->outputs)
            bytes += static_cast<double>(m.nbytes());
        for (Node *reader : readers(from)) {
            const int g = groupOf(reader);
            if (g != gp && g != gc)
                return bytes; // still written for that reader: saves the read only
        }
        return m_groups[static_cast<size_t>(gp)].anchor == from ? bytes : 2 * bytes;
    }

    // One candidate per pair of groups: the first edge between them in graph order.
    std::vector<Candidate> candidates() const
    {
        std::vector<Candidate> out;
        std::unordered_set<uint64_t> seen;
        seen.reserve(m_nodes.size() * 2);
        forEachEdge([&](Node *from, Node *to, int gp, int gc) {
            const uint64_t pair = (static_cast<uint64_t>(static_cast<uint32_t>(gp)) << 32) | static_cast<uint32_t>(gc);
            if (seen.insert(pair).second)
                out.push_back({gp, gc, from, to, bytesSaved(from, gp, gc)});
        });
        return out;
    }

    // Best first: most bytes saved, then the earliest consumer, then the
    // earliest found — a total order, so the result never depends on the sort.
    bool before(const Candidate &a, size_t ia, const Candidate &b, size_t ib) const
    {
        if (a.saved != b.saved)
            return a.saved > b.saved;
        const int pa = m_positionById[static_cast<size_t>(a.to->id)], pb = m_positionById[static_cast<size_t>(b.to->id)];
        return pa != pb ? pa < pb : ia < ib;
    }

    std::set<int> successors(int g) const
    {
        std::set<int> out;
        for (Node *n : m_groups[static_cast<size_t>(g)].nodes) {
            for (Node *user : readers(n)) {
                const int gu = groupOf(user);
                if (gu >= 0 && gu != g)
                    out.insert(gu);
            }
        }
        return out;
    }

    bool reaches(int start, int target) const
    {
        std::deque<int> queue{start};
        std::set<int> visited{start};
        while (!queue.empty()) {
            const int g = queue.front();
            queue.pop_front();
            if (g == target)
                return true;
            for (int s : successors(g)) {
                if (visited.insert(s).second)
                    queue.push_back(s);
            }
        }
        return false;
    }

    // A path producer -> X -> consumer through a third group: the merged
    // group would have to run both before and after X.
    std::optional<std::string> cycleThrough(int gp, int gc) const
    {
        for (int s : successors(gp)) {
            if (s != gc && reaches(s, gc))
                return "fusing would create a cycle through " + m_groups[static_cast<size_t>(s)].nodes.front()->name;
        }
        return std::nullopt;
    }

    std::optional<std::string> whyNot(const Candidate &c, Group *merged) const
    {
        const Group &p = m_groups[static_cast<size_t>(c.producer)];
        const Group &q = m_groups[static_cast<size_t>(c.consumer)];
        std::string why;
        std::optional<Group> m = mergeGroups(p, q, c.from, c.to, m_position, why);
        if (!m)
            return why;
        if (auto cycle = cycleThrough(c.producer, c.consumer))
            return cycle;
        if (merged)
            *merged = std::move(*m);
        return std::nullopt;
    }

    // Most merges take the best candidate or one of the next few, so they
    // come off a heap one at a time instead of sorting them all each round.
    bool mergeBest(PassLog &log, std::vector<FusionDecision> &decisions)
    {
        const std::vector<Candidate> all = candidates();
        std::vector<size_t> heap(all.size());
        for (size_t i = 0; i < heap.size(); ++i)
            heap[i] = i;
        const auto worse = [&](size_t a, size_t b) { return before(all[b], b, all[a], a); };
        std::make_heap(heap.begin(), heap.end(), worse);
        while (!heap.empty()) {
            std::pop_heap(heap.begin(), heap.end(), worse);
            const Candidate &c = all[heap.back()];
            heap.pop_back();
            Group merged;
            if (whyNot(c, &merged))
                continue;
            FusionDecision d{c.from->name, c.to->name, true, merged.reasonOfMerge, c.saved};
            apply(c, std::move(merged));
            log.push_back(d.text());
            decisions.push_back(d);
            return true;
        }
        return false;
    }

    void apply(const Candidate &c, Group merged)
    {
        Group &p = m_groups[static_cast<size_t>(c.producer)];
        for (Node *n : p.nodes)
            m_groupById[static_cast<size_t>(n->id)] = c.consumer;
        p.alive = false;
        p.nodes.clear();
        m_groups[static_cast<size_t>(c.consumer)] = std::move(merged);
    }

    void recordRefusals(std::vector<FusionDecision> &decisions) const
    {
        std::set<std::pair<const Node *, const Node *>> seen;
        forEachEdge([&](Node *from, Node *to, int gp, int gc) {
            if (!seen.insert({from, to}).second)
                return;
            const std::optional<std::string> why = whyNot({gp, gc, from, to, 0}, nullptr);
            decisions.push_back({from->name, to->name, false, why.value_or("no memory saving"), 0});
        });
    }

    std::vector<Node *> m_nodes; // graph order
    std::vector<Group> m_groups;
    std::vector<int> m_groupById;    // node id -> group, -1 for views and nodes in no group
    std::vector<int> m_positionById; // node id -> position in graph order
    std::vector<std::vector<Node *>> m_readersById;
    std::unordered_map<const Node *, int> m_position; // what mergeGroups reads
};

} // namespace

std::string FusionDecision::text() const
{
    if (fused)
        return "fused " + producer + " into " + consumer + ": " + reason + ", saves "
            + std::to_string(static_cast<int64_t>(bytesSaved)) + " bytes";
    return "cannot fuse " + producer + " with " + consumer + ": " + reason;
}

Schedule fuse(Graph &graph, PassLog &log)
{
    for (Node *n : graph.nodes())
        n->kernel.clear();
    Fuser fuser(graph);
    Schedule schedule;
    fuser.run(log, schedule.decisions);
    std::vector<Group> groups = fuser.liveGroups();
    settleLoneCats(groups);
    schedule.kernels = orderKernels(graph, groups);
    for (const FusionDecision &d : schedule.decisions) {
        if (!d.fused)
            log.push_back(d.text());
    }
    log.push_back(std::to_string(schedule.kernels.size()) + " kernels, estimated "
                  + std::to_string(static_cast<int64_t>(schedule.bytesMoved())) + " bytes moved");
    return schedule;
}

} // namespace fusescope::compiler
