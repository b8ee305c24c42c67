#include "views/inspector.h"

#include "views/heatlegend.h"

#include <QHeaderView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace fusescope {
namespace {

constexpr int kNodeRole = Qt::UserRole + 1;
constexpr int kStageRole = Qt::UserRole + 2;

QString shapeList(const Shape &s)
{
    QStringList parts;
    for (int64_t d : s)
        parts << QString::number(d);
    return QLatin1Char('[') + parts.join(QLatin1Char(',')) + QLatin1Char(']');
}

QString str(const std::string &s)
{
    return QString::fromStdString(s);
}

} // namespace

Inspector::Inspector(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_tree = new QTreeWidget(this);
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("Property"), tr("Value")});
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_tree->setRootIsDecorated(true);
    m_tree->setUniformRowHeights(true);
    layout->addWidget(m_tree);
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        if (item->data(0, kNodeRole).isValid())
            emit nodeActivated(item->data(0, kStageRole).toInt(), item->data(0, kNodeRole).toInt());
    });
    clear();
}

void Inspector::clear()
{
    m_tree->clear();
    auto *hint = new QTreeWidgetItem(m_tree, {tr("Nothing selected"), tr("click a node in a graph")});
    hint->setDisabled(true);
}

QTreeWidgetItem *Inspector::addRow(const QString &key, const QString &value, QTreeWidgetItem *parent)
{
    auto *item = parent ? new QTreeWidgetItem(parent, {key, value}) : new QTreeWidgetItem(m_tree, {key, value});
    item->setToolTip(1, value);
    return item;
}

QString Inspector::value(const QString &key) const
{
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        if (m_tree->topLevelItem(i)->text(0) == key)
            return m_tree->topLevelItem(i)->text(1);
    }
    return {};
}

void Inspector::showNode(std::shared_ptr<const Document> document, int stage, int nodeId)
{
    m_document = std::move(document);
    const StageGraph *graph = m_document ? m_document->graphs.at(size_t(stage)).get() : nullptr;
    const GraphNode *n = graph ? graph->find(nodeId) : nullptr;
    if (!n) {
        clear();
        return;
    }
    m_tree->clear();
    addRow(tr("name"), str(n->name));
    addRow(tr("op"), str(n->opLabel()));
    addRow(tr("target"), str(n->target));
    addRow(tr("kind"), str(n->kind) + (n->view ? tr(" (view: index arithmetic, no copy)") : QString()));
    addRow(tr("stage"), str(graph->stageName));
    addRow(tr("module"), n->module.empty() ? tr("(top level)") : str(n->module));
    if (!n->constArgs.empty())
        addRow(tr("constants"), str(n->constArgs));
    if (const GraphKernel *k = graph->kernel(n->kernel)) {
        QTreeWidgetItem *row = addRow(tr("kernel"), str(k->name));
        addRow(tr("kind"), str(k->kind), row);
        addRow(tr("why fused"), str(k->reason), row);
        addRow(tr("nodes"), QString::number(k->nodes.size()), row);
        addRow(tr("bytes read / written"), QStringLiteral("%L1 / %L2").arg(k->bytesRead, 0, 'f', 0).arg(k->bytesWritten, 0, 'f', 0), row);
    }
    addOutputs(*n);
    addNodeList(tr("inputs"), n->inputs, stage);
    addNodeList(tr("users"), n->users, stage);
    const int capture = m_document->stageIndex("capture", m_document->stages[size_t(stage)].segment);
    addNodeList(tr("origins"), n->origins, capture >= 0 ? capture : stage);
    addTiming(*graph, *n);
    m_tree->expandAll();
}

void Inspector::addOutputs(const GraphNode &node)
{
    QTreeWidgetItem *outputs = addRow(tr("outputs"), str(node.shapeText()));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
        const compiler::TensorMeta &m = node.outputs[i];
        QTreeWidgetItem *row = addRow(QStringLiteral("%1").arg(i), str(dtypeName(m.dtype)) + shapeList(m.sizes), outputs);
        addRow(tr("shape"), shapeList(m.sizes), row);
        addRow(tr("dtype"), str(dtypeName(m.dtype)), row);
        addRow(tr("strides"), shapeList(m.strides), row);
        addRow(tr("offset"), QString::number(m.offset), row);
        addRow(tr("bytes"), QStringLiteral("%L1").arg(m.nbytes()), row);
        if (m.aliasOf >= 0)
            addRow(tr("aliases"), tr("argument %1's storage").arg(m.aliasOf), row);
    }
}

void Inspector::addNodeList(const QString &title, const std::vector<int> &ids, int stage)
{
    const StageGraph *graph = m_document->graphs.at(size_t(stage)).get();
    QTreeWidgetItem *group = addRow(title, QString::number(ids.size()));
    for (int id : ids) {
        const GraphNode *n = graph->find(id);
        QTreeWidgetItem *row = addRow(n ? str(n->name) : tr("node %1").arg(id),
                                      n ? str(n->target) + QStringLiteral("  ") + str(n->shapeText()) : QString(), group);
        row->setData(0, kNodeRole, id);
        row->setData(0, kStageRole, stage);
        row->setToolTip(0, tr("Double-click to select it"));
    }
}

void Inspector::addTiming(const StageGraph &graph, const GraphNode &node)
{
    if (!m_document->profiled) {
        addRow(tr("measured time"), tr("not profiled (open a trace recorded with profile --compile)"));
        return;
    }
    const double ns = m_document->attributedTimeNs(graph, node);
    QTreeWidgetItem *row = addRow(tr("measured time"), ns > 0 ? formatDuration(ns) : tr("none attributed"));
    row->setToolTip(1, tr("The compiled kernels' time attributed to the captured nodes this one came from, "
                          "shared evenly among the nodes of this stage that came from them"));
    const auto k = m_document->kernelTimeNs.find(node.kernel);
    if (k != m_document->kernelTimeNs.end())
        addRow(tr("kernel time"), formatDuration(k->second));
}

void Inspector::showModule(std::shared_ptr<const Document> document, int stage, const QString &module,
                           const QList<int> &members)
{
    m_document = std::move(document);
    if (!m_document) {
        clear();
        return;
    }
    m_tree->clear();
    addRow(tr("module"), module);
    addRow(tr("nodes"), QString::number(members.size()));
    addRow(tr("expand"), tr("double-click the box"));
    addNodeList(tr("members"), std::vector<int>(members.begin(), members.end()), stage);
    double ns = 0;
    const StageGraph *graph = m_document->graphs.at(size_t(stage)).get();
    for (int id : members) {
        if (const GraphNode *n = graph->find(id))
            ns += m_document->attributedTimeNs(*graph, *n);
    }
    if (m_document->profiled)
        addRow(tr("measured time"), formatDuration(ns));
    m_tree->expandToDepth(0);
}

void Inspector::showTraceEvent(std::shared_ptr<const Document> document, int run, profiler::EventId id)
{
    m_document = std::move(document);
    const profiler::Trace *trace = m_document ? m_document->trace.get() : nullptr;
    if (!trace || run < 0 || size_t(run) >= trace->runs.size() || !id.valid() ||
        id.value >= trace->runs[size_t(run)].events.size()) {
        clear();
        return;
    }
    const profiler::Run &r = trace->runs[size_t(run)];
    const profiler::Event &e = r.event(id);
    m_tree->clear();
    addRow(tr("name"), str(trace->strings[e.name]));
    addRow(tr("kind"), QString::fromUtf8(profiler::eventKindName(e.kind)));
    if (e.track.valid() && e.track.value < r.tracks.size())
        addRow(tr("track"), str(trace->strings[r.tracks[e.track.value].name]));
    addRow(tr("start"), formatDuration(double(e.start)));
    addRow(tr("duration"), formatDuration(double(e.duration)));
    addRow(tr("depth"), QString::number(e.depth));
    if (e.flops > 0)
        addRow(tr("flops (estimated)"), QStringLiteral("%L1").arg(double(e.flops), 0, 'f', 0));
    if (e.bytes > 0)
        addRow(tr("bytes (estimated)"), QStringLiteral("%L1").arg(double(e.bytes), 0, 'f', 0));
    if (e.kind == profiler::EventKind::Kernel)
        addEventOrigins(e);
    else if (!trace->strings[e.detail].empty())
        addRow(tr("detail"), str(trace->strings[e.detail]));
    addEventArgs(r, e);
    m_tree->expandAll();
}

void Inspector::addEventArgs(const profiler::Run &run, const profiler::Event &e)
{
    if (!e.args.valid() || e.args.value >= run.args.size())
        return;
    const profiler::EventArgs &a = run.args[e.args.value];
    QTreeWidgetItem *args = addRow(tr("args"), QString());
    if (a.correlation >= 0)
        addRow(tr("correlation"), QString::number(a.correlation), args);
    if (a.externalId >= 0)
        addRow(tr("external id"), QString::number(a.externalId), args);
    if (a.device >= 0)
        addRow(tr("device"), QString::number(a.device), args);
    if (a.stream >= 0)
        addRow(tr("stream"), QString::number(a.stream), args);
    if (a.grid[0] > 0)
        addRow(tr("grid / block"), QStringLiteral("[%1,%2,%3] / [%4,%5,%6]").arg(a.grid[0]).arg(a.grid[1]).arg(a.grid[2])
                                        .arg(a.block[0]).arg(a.block[1]).arg(a.block[2]), args);
    if (a.copyKind != profiler::CopyKind::Unknown)
        addRow(tr("copy"), QString::fromUtf8(profiler::copyKindName(a.copyKind)) + (a.pinned ? tr(", pinned") : tr(", pageable")),
               args);
    if (a.extra.valid())
        addRow(tr("other"), str(m_document->trace->strings[a.extra]), args);
}

// A compiled kernel's detail is the captured graph nodes it computed: "3,5,9".
void Inspector::addEventOrigins(const profiler::Event &e)
{
    const QString detail = str(m_document->trace->strings[e.detail]);
    const int capture = m_document->stageIndex("capture");
    if (detail.isEmpty() || capture < 0) {
        if (!detail.isEmpty())
            addRow(tr("detail"), detail);
        return;
    }
    std::vector<int> ids;
    for (const QString &part : detail.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int id = part.trimmed().toInt(&ok);
        if (ok)
            ids.push_back(id);
    }
    addNodeList(tr("graph nodes"), ids, capture);
}

} // namespace fusescope
