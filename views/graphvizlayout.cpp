#include "views/graphvizlayout.h"

#include <graphviz/gvc.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unordered_map>

namespace fusescope {
namespace {

// ---- The child: Graphviz only, then the numbers down the pipe. ----

// The message is doubles: its length, this tag, the counts, then the numbers.
constexpr double wireTag = 20071.0;

std::string number(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", value);
    return text;
}

void setAttribute(void *object, const char *name, const std::string &value)
{
    std::string n = name, v = value, empty;
    agsafeset(object, n.data(), v.data(), empty.data());
}

Agsym_t *declare(Agraph_t *graph, int kind, const char *name, const char *fallback)
{
    std::string n = name, v = fallback;
    return agattr(graph, kind, n.data(), v.data());
}

// Cluster labels are the only outside text that reaches Graphviz, and only as
// an attribute value, never as DOT; a backslash would start dot's escapes
// (\N, \G) there, so it is doubled to show as typed.
std::string escapedLabel(const std::string &label)
{
    std::string text;
    for (char c : label)
        text += c == '\\' ? std::string("\\\\") : std::string(1, c);
    return text;
}

// The request as a cgraph graph, built in the child and never freed: the
// child exits right after the layout.
class DotGraph
{
public:
    DotGraph(const LayoutRequest &request, const GraphvizOptions &options);
    bool layout();
    std::vector<double> message() const;

private:
    void setGraphAttributes(const GraphvizOptions &options);
    void addNodes();
    void addClusters();
    void addEdges();

    const LayoutRequest &m_request;
    Agraph_t *m_graph = nullptr;
    std::vector<Agnode_t *> m_nodes;
    std::vector<Agraph_t *> m_clusters;
    std::vector<Agedge_t *> m_edges; // per request edge; duplicates share one, null for self-loops
};

DotGraph::DotGraph(const LayoutRequest &request, const GraphvizOptions &options)
    : m_request(request)
{
    std::string name = "g";
    m_graph = agopen(name.data(), Agdirected, nullptr);
    setGraphAttributes(options);
    addNodes();
    addClusters();
    addEdges();
}

// Inches, as dot wants them: the gaps match the layered layout's.
void DotGraph::setGraphAttributes(const GraphvizOptions &options)
{
    setAttribute(m_graph, "rankdir", "TB");
    setAttribute(m_graph, "nodesep", "0.25");
    setAttribute(m_graph, "ranksep", "0.5");
    setAttribute(m_graph, "splines", options.splines);
    if (!options.bounded)
        return;
    setAttribute(m_graph, "nslimit", "2");
    setAttribute(m_graph, "nslimit1", "2");
    setAttribute(m_graph, "mclimit", "0.5");
    setAttribute(m_graph, "searchsize", "30");
}

// Our own names (n0, n1, ...) and no labels: the view draws the text.
void DotGraph::addNodes()
{
    declare(m_graph, AGNODE, "shape", "box");
    declare(m_graph, AGNODE, "fixedsize", "true");
    declare(m_graph, AGNODE, "label", "");
    Agsym_t *width = declare(m_graph, AGNODE, "width", "0.75");
    Agsym_t *height = declare(m_graph, AGNODE, "height", "0.5");
    for (size_t v = 0; v < m_request.nodes.size(); ++v) {
        std::string name = "n" + std::to_string(v);
        Agnode_t *node = agnode(m_graph, name.data(), 1);
        // dot mishandles zero-sized nodes; a point is small enough to not matter.
        std::string w = number(std::max(m_request.nodes[v].width, 1.0) / 72);
        std::string h = number(std::max(m_request.nodes[v].height, 1.0) / 72);
        agxset(node, width, w.data());
        agxset(node, height, h.data());
        m_nodes.push_back(node);
    }
}

void DotGraph::addClusters()
{
    for (size_t c = 0; c < m_request.clusters.size(); ++c) {
        const LayoutCluster &cluster = m_request.clusters[c];
        Agraph_t *parent = cluster.parent < 0 ? m_graph : m_clusters[cluster.parent];
        std::string name = "cluster_" + std::to_string(c);
        Agraph_t *subgraph = agsubg(parent, name.data(), 1);
        setAttribute(subgraph, "label", escapedLabel(cluster.label));
        m_clusters.push_back(subgraph);
    }
    for (size_t v = 0; v < m_request.nodes.size(); ++v)
        if (m_request.nodes[v].cluster >= 0)
            agsubnode(m_clusters[m_request.nodes[v].cluster], m_nodes[v], 1);
}

void DotGraph::addEdges()
{
    declare(m_graph, AGEDGE, "dir", "none"); // the view draws its own arrow heads
    std::unordered_map<uint64_t, Agedge_t *> seen;
    for (const LayoutEdge &e : m_request.edges) {
        Agedge_t *&edge = seen[(uint64_t(uint32_t(e.from)) << 32) | uint32_t(e.to)];
        if (!edge && e.from != e.to)
            edge = agedge(m_graph, m_nodes[e.from], m_nodes[e.to], nullptr, 1);
        m_edges.push_back(edge);
    }
}

bool DotGraph::layout()
{
    GVC_t *context = gvContext();
    return context && gvLayout(context, m_graph, "dot") == 0;
}

void appendBox(std::vector<double> &out, const boxf &box)
{
    out.insert(out.end(), {box.LL.x, box.LL.y, box.UR.x, box.UR.y});
}

// Dot's own coordinates (points, y up); the parent flips them.
std::vector<double> DotGraph::message() const
{
    std::vector<double> out {0, wireTag, double(m_nodes.size()), double(m_clusters.size()), double(m_edges.size())};
    for (Agnode_t *node : m_nodes)
        out.insert(out.end(), {ND_coord(node).x, ND_coord(node).y});
    for (Agraph_t *cluster : m_clusters)
        appendBox(out, agnnodes(cluster) > 0 ? GD_bb(cluster) : boxf {});
    for (Agedge_t *edge : m_edges) {
        const splines *spline = edge ? ED_spl(edge) : nullptr;
        const bezier *curve = spline && spline->size > 0 ? &spline->list[0] : nullptr;
        out.push_back(curve ? curve->size : 0);
        for (int i = 0; curve && i < curve->size; ++i)
            out.insert(out.end(), {curve->list[i].x, curve->list[i].y});
    }
    out[0] = double(out.size());
    return out;
}

bool writeAll(int fd, const void *data, size_t size)
{
    const char *bytes = static_cast<const char *>(data);
    while (size > 0) {
        const ssize_t written = write(fd, bytes, size);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return false;
        bytes += written;
        size -= static_cast<size_t>(written);
    }
    return true;
}

int ignoreMessage(char *)
{
    return 0;
}

// The parent's crash handlers (Qt Test's, a sanitizer's) would report a
// crash in the child as their own; the child should just die by the signal.
void restoreDefaultSignals()
{
    struct sigaction action = {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    for (int signal = 1; signal < NSIG; ++signal)
        if (signal != SIGKILL && signal != SIGSTOP)
            sigaction(signal, &action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
}

// Exit status 0: the message is complete; 3: dot failed; 4: the pipe broke.
[[noreturn]] void runChild(const LayoutRequest &request, const GraphvizOptions &options, int fd, pid_t parent)
{
    // Dies with the thread that forked it, so a killed parent leaves no dot behind.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(5);
    restoreDefaultSignals();
    agseterr(AGMAX);
    agseterrf(ignoreMessage); // warnings would land on the parent's stderr
    if (options.raiseInChild)
        raise(options.raiseInChild);
    DotGraph graph(request, options);
    if (!graph.layout())
        _exit(3);
    const std::vector<double> message = graph.message();
    _exit(writeAll(fd, message.data(), message.size() * sizeof(double)) ? 0 : 4);
}

// ---- The parent: wait, kill at the limit or on cancel, read the numbers. ----

struct ChildRun {
    std::string bytes;
    int status = 0;
    bool timedOut = false, cancelled = false;
};

// Reads what is there without blocking; true at end of file.
bool drain(int fd, std::string &bytes)
{
    char buffer[65536];
    for (;;) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n > 0)
            bytes.append(buffer, static_cast<size_t>(n));
        else if (n < 0 && errno == EINTR)
            continue;
        else
            return n == 0;
    }
}

void killChild(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) { }
}

// Polls every 20 ms: the pipe for data, the child for its exit, the flag and the clock.
ChildRun waitForChild(pid_t pid, int fd, double limitSeconds, const std::atomic<bool> *cancel)
{
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(limitSeconds);
    ChildRun run;
    for (;;) {
        const bool atEnd = drain(fd, run.bytes);
        if (waitpid(pid, &run.status, WNOHANG) == pid) {
            drain(fd, run.bytes);
            return run;
        }
        if (cancel && cancel->load()) {
            killChild(pid);
            run.cancelled = true;
            return run;
        }
        if (Clock::now() >= deadline) {
            killChild(pid);
            run.timedOut = true;
            return run;
        }
        pollfd readable {fd, POLLIN, 0};
        poll(atEnd ? nullptr : &readable, atEnd ? 0 : 1, atEnd ? 1 : 20); // at the end, wait for the exit
    }
}

class WireReader
{
public:
    explicit WireReader(const std::string &bytes)
        : m_data(bytes.size() / sizeof(double))
    {
        std::memcpy(m_data.data(), bytes.data(), m_data.size() * sizeof(double));
    }
    bool ok() const { return m_ok; }
    bool atEnd() const { return m_next == m_data.size(); }
    double next()
    {
        m_ok = m_ok && m_next < m_data.size();
        return m_ok ? m_data[m_next++] : 0;
    }
    size_t count(size_t most)
    {
        const double n = next();
        m_ok = m_ok && n >= 0 && n <= double(most);
        return m_ok ? static_cast<size_t>(n) : 0;
    }
    // Dot's y grows upward, the view's downward.
    LayoutPoint point()
    {
        const double x = next();
        return {x, -next()};
    }
    LayoutRect box()
    {
        const double left = next(), bottom = next(), right = next(), top = next();
        return {left, -top, right - left, top - bottom};
    }

private:
    std::vector<double> m_data;
    size_t m_next = 0;
    bool m_ok = true;
};

// Dot leaves an edge without a spline now and then; a straight cubic from
// border to border keeps every path drawable.
std::vector<LayoutPoint> straightCurve(const LayoutRequest &request, const LayoutResult &result, LayoutEdge edge)
{
    const LayoutPoint from = result.centers[edge.from], to = result.centers[edge.to];
    const LayoutPoint start {from.x, from.y + request.nodes[edge.from].height / 2};
    const LayoutPoint end {to.x, to.y - request.nodes[edge.to].height / 2};
    return {start, start, end, end};
}

std::optional<LayoutResult> parseMessage(const std::string &bytes, const LayoutRequest &request)
{
    WireReader in(bytes);
    LayoutResult result;
    const bool header = in.next() == double(bytes.size() / sizeof(double)) && in.next() == wireTag
        && in.count(request.nodes.size()) == request.nodes.size()
        && in.count(request.clusters.size()) == request.clusters.size()
        && in.count(request.edges.size()) == request.edges.size();
    for (size_t v = 0; header && v < request.nodes.size(); ++v)
        result.centers.push_back(in.point());
    for (size_t c = 0; header && c < request.clusters.size(); ++c)
        result.clusterRects.push_back(in.box());
    for (size_t e = 0; header && in.ok() && e < request.edges.size(); ++e) {
        result.edgePaths.emplace_back(in.count(bytes.size()));
        for (LayoutPoint &p : result.edgePaths.back())
            p = in.point();
    }
    if (!header || !in.ok() || !in.atEnd() || bytes.size() % sizeof(double) != 0)
        return std::nullopt;
    for (size_t e = 0; e < request.edges.size(); ++e)
        if (result.edgePaths[e].empty() && request.edges[e].from != request.edges[e].to)
            result.edgePaths[e] = straightCurve(request, result, request.edges[e]);
    result.edgesAreBezier = true;
    result.engine = "graphviz dot";
    return result;
}

std::string failure(const ChildRun &run, double limitSeconds)
{
    char text[96];
    if (run.timedOut)
        std::snprintf(text, sizeof text, "graphviz took longer than %g s", limitSeconds);
    else if (WIFSIGNALED(run.status))
        std::snprintf(text, sizeof text, "graphviz crashed (signal %d)", WTERMSIG(run.status));
    else if (WEXITSTATUS(run.status) != 0)
        std::snprintf(text, sizeof text, "graphviz failed (exit status %d)", WEXITSTATUS(run.status));
    else
        std::snprintf(text, sizeof text, "graphviz wrote a short result");
    return text;
}

LayoutResult failed(const std::string &note)
{
    LayoutResult result;
    result.note = note;
    return result;
}

} // namespace

LayoutResult graphvizLayout(const LayoutRequest &request, const std::atomic<bool> *cancel,
                            const GraphvizOptions &options)
{
    if (request.nodes.empty()) {
        LayoutResult empty;
        empty.engine = "graphviz dot";
        empty.edgePaths.resize(request.edges.size());
        return empty;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return failed(std::string("graphviz could not start: ") + std::strerror(errno));
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        runChild(request, options, fds[1], parent);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return failed(std::string("graphviz could not start: ") + std::strerror(errno));
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    const ChildRun run = waitForChild(pid, fds[0], request.timeLimitSeconds, cancel);
    close(fds[0]);
    if (run.cancelled) {
        LayoutResult result;
        result.cancelled = true;
        return result;
    }
    const bool exited = !run.timedOut && WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0;
    std::optional<LayoutResult> result = exited ? parseMessage(run.bytes, request) : std::nullopt;
    return result ? *result : failed(failure(run, request.timeLimitSeconds));
}

} // namespace fusescope
