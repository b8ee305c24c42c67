// One shared selection across the views: a kernel on the timeline, its fused
// group in the fused graph, its origin nodes in the captured graph, its row
// in the statistics and its generated code. Whichever view the user selects
// in, the others follow without taking the focus or switching tabs;
// m_following keeps a view that follows from echoing the selection back.
#include "app/mainwindow.h"

#include "views/codeview.h"
#include "views/graphview.h"
#include "views/inspector.h"
#include "views/statsview.h"
#include "views/timelineview.h"

#include <QScopedValueRollback>

namespace fusescope {

namespace {

// The run's first kernel event called `name`; invalid when there is none.
profiler::EventId firstKernelNamed(const profiler::Trace &trace, const profiler::Run &run, const std::string &name)
{
    profiler::StringId id;
    for (uint32_t i = 1; i < trace.strings.size() && !id.valid(); ++i) {
        if (trace.strings[profiler::StringId(i)] == name)
            id = profiler::StringId(i);
    }
    if (!id.valid())
        return {};
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        if (run.events[i].name == id && run.events[i].kind == profiler::EventKind::Kernel)
            return profiler::EventId(i);
    }
    return {};
}

} // namespace

void MainWindow::onTimelineEventSelected(int run, profiler::EventId id)
{
    m_inspector->showTraceEvent(timelineDocument(), run, id);
    // The graphs, code and statistics are the shown run's: an eager event has no kernel there.
    if (m_following || !m_document || !m_document->trace || timelineDocument() != m_document)
        return;
    QScopedValueRollback<bool> following(m_following, true);
    const profiler::Trace &trace = *m_document->trace;
    const profiler::Event &event = trace.runs.front().event(id);
    const std::string &name = trace.strings[event.name];
    if (event.kind == profiler::EventKind::Op || event.kind == profiler::EventKind::UserRange) {
        m_statsView->selectRow(StatsView::OpsTab, QString::fromStdString(name));
        return;
    }
    if (event.kind != profiler::EventKind::Kernel)
        return;
    m_statsView->selectRow(StatsView::KernelsTab, QString::fromStdString(name));
    const StageGraph *fused = m_fusedView->graph();
    const GraphKernel *kernel = fused ? fused->kernel(name) : nullptr;
    if (kernel) {
        m_fusedView->highlightNodes(kernel->nodes);
        m_capturedView->highlightNodes(fused->originsOf(kernel->nodes));
        m_codeView->selectKernel(QString::fromStdString(name));
    } else if (const auto origins = profiler::parseOrigins(trace.strings[event.detail])) {
        m_capturedView->highlightNodes(*origins);
    }
}

// A kernel chosen in a graph or in the code: its first launch on the timeline
// and its statistics row.
void MainWindow::followKernel(const QString &kernel)
{
    if (m_following || kernel.isEmpty() || !m_document || !m_document->trace || m_document->trace->runs.empty() ||
        timelineDocument() != m_document)
        return;
    QScopedValueRollback<bool> following(m_following, true);
    m_statsView->selectRow(StatsView::KernelsTab, kernel);
    const profiler::EventId id = firstKernelNamed(*m_document->trace, m_document->trace->runs.front(), kernel.toStdString());
    if (id.valid())
        m_timeline->selectEvent(id);
}

// A captured node: its statistics row, and the kernel that computes it.
void MainWindow::followCapturedNode(int nodeId)
{
    if (m_following)
        return;
    if (const StageGraph *captured = m_capturedView->graph()) {
        if (const GraphNode *n = captured->find(nodeId))
            m_statsView->selectRow(StatsView::NodesTab, QString::fromStdString(n->name));
    }
    const StageGraph *fused = m_fusedView->graph();
    if (!fused)
        return;
    for (int id : fused->nodesWithOrigins({nodeId})) {
        const GraphNode *n = fused->find(id);
        if (n && !n->kernel.empty()) {
            followKernel(QString::fromStdString(n->kernel));
            return;
        }
    }
}

} // namespace fusescope
