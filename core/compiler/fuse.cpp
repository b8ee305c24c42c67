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
};

class Fuser
{
public:
    explicit Fuser(const Graph &graph)
    {
        int pos = 0;
        for (Node *n : graph.nodes()) {
            m_position[n] = pos++;
            if (auto g = initialGroup(*n)) {
                m_groupOf[n] = static_cast<int>(m_groups.size());
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
    int groupOf(const Node *n) const
    {
        auto it = m_groupOf.find(n);
        return it == m_groupOf.end() ? -1 : it->second;
    }

    // Edges between groups: producer node -> consumer node, through any alias views.
    template <typename F>
    void forEachEdge(F f) const
    {
        for (const auto &[node, g] : m_groupOf) {
            for (Node *user : readersOf(const_cast<Node *>(node))) {
                const int gc = groupOf(user);
                if (gc >= 0 && gc != g)
                    f(const_cast<Node *>(node), user, g, gc);
            }
        }
    }

    double bytesSaved(Node *from, int gp, int gc) const
    {
        double bytes = 0;
        for (const TensorMeta &m : from->outputs)
            bytes += static_cast<double>(m.nbytes());
        for (Node *reader : readersOf(from)) {
            const int g = groupOf(reader);
            if (g != gp && g != gc)
                return bytes; // still written for that reader: saves the read only
        }
        return m_groups[static_cast<size_t>(gp)].anchor == from ? bytes : 2 * bytes;
    }

    std::vector<Candidate> candidates() const
    {
        std::vector<Candidate> out;
        std::set<std::pair<int, int>> seen;
        forEachEdge([&](Node *from, Node *to, int gp, int gc) {
            if (seen.insert({gp, gc}).second)
                out.push_back({gp, gc, from, to, bytesSaved(from, gp, gc)});
        });
        std::stable_sort(out.begin(), out.end(), [&](const Candidate &a, const Candidate &b) {
            if (a.saved != b.saved)
                return a.saved > b.saved;
            return m_position.at(a.to) < m_position.at(b.to);
        });
        return out;
    }

    std::set<int> successors(int g) const
    {
        std::set<int> out;
        for (Node *n : m_groups[static_cast<size_t>(g)].nodes) {
            for (Node *user : readersOf(n)) {
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

    bool mergeBest(PassLog &log, std::vector<FusionDecision> &decisions)
    {
        for (const Candidate &c : candidates()) {
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
            m_groupOf[n] = c.consumer;
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

    std::vector<Group> m_groups;
    std::unordered_map<const Node *, int> m_groupOf;
    std::unordered_map<const Node *, int> m_position;
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
    schedule.kernels = orderKernels(graph, fuser.liveGroups());
    for (const FusionDecision &d : schedule.decisions) {
        if (!d.fused)
            log.push_back(d.text());
    }
    log.push_back(std::to_string(schedule.kernels.size()) + " kernels, estimated "
                  + std::to_string(static_cast<int64_t>(schedule.bytesMoved())) + " bytes moved");
    return schedule;
}

} // namespace fusescope::compiler
