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

namespace fusescope::compiler {
namespace {

struct Candidate {
    int producer = -1, consumer = -1; // groups
    Node *from = nullptr, *to = nullptr;
    double saved = 0;
    size_t edge = 0; // the edge's place in graph order (producer node, then its readers)
};

// Two ids (groups or nodes) as one key.
uint64_t pairKey(int first, int second)
{
    return (static_cast<uint64_t>(static_cast<uint32_t>(first)) << 32) | static_cast<uint32_t>(second);
}

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
        size_t edges = 0;
        m_writersById.resize(m_readersById.size());
        m_firstEdgeById.resize(m_readersById.size());
        for (Node *n : m_nodes) {
            std::vector<Node *> &readers = m_readersById[static_cast<size_t>(n->id)];
            readers = readersOf(n);
            m_firstEdgeById[static_cast<size_t>(n->id)] = edges;
            for (size_t k = 0; k < readers.size(); ++k)
                m_writersById[static_cast<size_t>(readers[k]->id)].push_back({n, edges + k});
            edges += readers.size();
            m_position[n] = pos;
            m_positionById[static_cast<size_t>(n->id)] = pos++;
            if (auto g = initialGroup(*n)) {
                m_groupById[static_cast<size_t>(n->id)] = static_cast<int>(m_groups.size());
                m_groups.push_back(std::move(*g));
            }
        }
        m_versions.assign(m_groups.size(), 0);
        for (size_t g = 0; g < m_groups.size(); ++g)
            enqueuePairsOf(static_cast<int>(g), false);
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

    // Best first: most bytes saved, then the earliest consumer, then the
    // earliest edge — a total order, so the result never depends on the
    // order candidates were found in.
    struct Better {
        const std::vector<int> *positionById;
        bool operator()(const Candidate &a, const Candidate &b) const
        {
            if (a.saved != b.saved)
                return a.saved > b.saved;
            const int pa = (*positionById)[static_cast<size_t>(a.to->id)];
            const int pb = (*positionById)[static_cast<size_t>(b.to->id)];
            return pa != pb ? pa < pb : a.edge < b.edge;
        }
    };

    // The candidates of every pair of groups with `g` on one side (its
    // readers' groups; with `both`, its producers' too): one per pair, the
    // first edge between them in graph order.
    std::unordered_map<uint64_t, Candidate> pairsOf(int g, bool both) const
    {
        std::unordered_map<uint64_t, Candidate> out;
        const auto consider = [&](Node *from, Node *to, size_t edge, int gp, int gc) {
            if (gp < 0 || gc < 0 || gp == gc)
                return;
            auto [it, fresh] = out.try_emplace(pairKey(gp, gc), Candidate{gp, gc, from, to, 0, edge});
            if (!fresh && edge < it->second.edge)
                it->second = {gp, gc, from, to, 0, edge};
        };
        for (Node *n : m_groups[static_cast<size_t>(g)].nodes) {
            const std::vector<Node *> &users = readers(n);
            const size_t first = m_firstEdgeById[static_cast<size_t>(n->id)];
            for (size_t k = 0; k < users.size(); ++k)
                consider(n, users[k], first + k, g, groupOf(users[k]));
            if (!both)
                continue;
            for (const auto &[writer, edge] : m_writersById[static_cast<size_t>(n->id)])
                consider(writer, n, edge, groupOf(writer), g);
        }
        return out;
    }

    void enqueuePairsOf(int g, bool both)
    {
        for (auto &[key, c] : pairsOf(g, both)) {
            c.saved = bytesSaved(c.from, c.producer, c.consumer);
            m_queue.insert(c);
            m_queued.emplace(key, c);
        }
    }

    void dequeuePairsOf(int g)
    {
        for (const auto &[key, c] : pairsOf(g, true)) {
            const auto it = m_queued.find(key);
            if (it != m_queued.end()) {
                m_queue.erase(it->second);
                m_queued.erase(it);
            }
        }
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
        if (const std::string *why = knownRefusal(c))
            return *why;
        const Group &p = m_groups[static_cast<size_t>(c.producer)];
        const Group &q = m_groups[static_cast<size_t>(c.consumer)];
        std::string why;
        std::optional<Group> m = mergeGroups(p, q, c.from, c.to, m_position, why);
        if (!m) {
            m_refusals[edgeKey(c)] = {c.producer, c.consumer, version(c.producer), version(c.consumer), why};
            return why;
        }
        if (auto cycle = cycleThrough(c.producer, c.consumer))
            return cycle;
        if (merged)
            *merged = std::move(*m);
        return std::nullopt;
    }

    // A refusal by the fusion rules depends only on the two groups and the
    // edge, so it holds until either group changes; every round looks at the
    // best candidates again, and DenseNet-121 (ONNX) made 30,000 such checks
    // for 375 merges. Cycles depend on every group and are looked for each
    // time.
    struct Refusal {
        int producer = -1, consumer = -1;
        uint64_t producerVersion = 0, consumerVersion = 0;
        std::string why;
    };

    static uint64_t edgeKey(const Candidate &c) { return pairKey(c.from->id, c.to->id); }
    uint64_t version(int g) const { return m_versions[static_cast<size_t>(g)]; }

    const std::string *knownRefusal(const Candidate &c) const
    {
        const auto it = m_refusals.find(edgeKey(c));
        if (it == m_refusals.end())
            return nullptr;
        const Refusal &r = it->second;
        const bool same = r.producer == c.producer && r.consumer == c.consumer
            && r.producerVersion == version(c.producer) && r.consumerVersion == version(c.consumer);
        return same ? &r.why : nullptr;
    }

    // A merge changes only the pairs the two groups are part of: which edge
    // joins a pair, and the bytes it saves (a producer's other readers may
    // now be in the merged group), depend on nothing else. The queue keeps
    // every other candidate and its place.
    bool mergeBest(PassLog &log, std::vector<FusionDecision> &decisions)
    {
        for (const Candidate &c : m_queue) {
            Group merged;
            if (whyNot(c, &merged))
                continue;
            FusionDecision d{c.from->name, c.to->name, true, merged.reasonOfMerge, c.saved};
            const Candidate chosen = c; // the queue's copy goes with the pairs below
            dequeuePairsOf(chosen.producer);
            dequeuePairsOf(chosen.consumer);
            apply(chosen, std::move(merged));
            enqueuePairsOf(chosen.consumer, true);
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
        ++m_versions[static_cast<size_t>(c.consumer)];
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
    std::vector<std::vector<std::pair<Node *, size_t>>> m_writersById; // node id -> (producer, edge) it reads
    std::vector<size_t> m_firstEdgeById; // node id -> the edge of its first reader
    std::unordered_map<const Node *, int> m_position; // what mergeGroups reads
    std::vector<uint64_t> m_versions;                 // group -> merges it has taken in
    mutable std::unordered_map<uint64_t, Refusal> m_refusals; // edge (from id, to id) -> its last rule refusal
    std::set<Candidate, Better> m_queue{Better{&m_positionById}};
    std::unordered_map<uint64_t, Candidate> m_queued; // pair of groups -> its candidate in m_queue
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
