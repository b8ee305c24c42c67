#include "views/graphview.h"

#include "core/ops/registry.h"
#include "views/graphcanvas.h"
#include "views/heatlegend.h"

#include <QAction>
#include <QCoreApplication>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace fusescope {

struct GraphView::Job {
    int id = 0;
    std::atomic<bool> cancel{false};
    std::vector<QStringList> lines;
    std::vector<GraphBoxItem::Style> styles;
};

namespace {

GraphBoxItem::Style styleOf(const GraphNode &n)
{
    if (!n.isOp())
        return GraphBoxItem::Io;
    if (n.view)
        return GraphBoxItem::View;
    const OpDef *def = OpRegistry::instance().find(n.target);
    if (!def)
        return GraphBoxItem::Op;
    switch (def->kind) {
    case OpKind::Matmul:
    case OpKind::Convolution: return GraphBoxItem::Gemm;
    case OpKind::Reduction: return GraphBoxItem::Reduction;
    case OpKind::View: return GraphBoxItem::View;
    default: return GraphBoxItem::Op;
    }
}

QString elide(const std::string &text, int max = 48)
{
    QString s = QString::fromStdString(text);
    return s.size() <= max ? s : s.left(max - 1) + QChar(0x2026);
}

QString lastComponent(const std::string &module)
{
    const size_t dot = module.rfind('.');
    return QString::fromStdString(dot == std::string::npos ? module : module.substr(dot + 1));
}

} // namespace

GraphView::GraphView(QWidget *parent)
    : QWidget(parent), m_workers(this)
{
    buildUi();
    clear(tr("No graph"));
}

GraphView::~GraphView()
{
    // The scene dies with the children, after this object is no longer a
    // GraphView: its last selectionChanged must not reach onSelectionChanged.
    disconnect(m_scene, nullptr, this, nullptr);
    cancelLayout();
    m_workers.waitAll();
}

void GraphView::buildUi()
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("graphTitle"));
    m_title->setContentsMargins(6, 2, 6, 0);
    layout->addWidget(m_title);

    m_searchBar = new QWidget(this);
    auto *search = new QHBoxLayout(m_searchBar);
    search->setContentsMargins(4, 0, 4, 0);
    m_searchEdit = new QLineEdit(m_searchBar);
    m_searchEdit->setPlaceholderText(tr("Find node, op or module"));
    m_searchEdit->setClearButtonEnabled(true);
    m_searchCount = new QLabel(m_searchBar);
    auto *prev = new QToolButton(m_searchBar);
    prev->setText(tr("Prev"));
    prev->setToolTip(tr("Previous match (Shift+F3)"));
    auto *next = new QToolButton(m_searchBar);
    next->setText(tr("Next"));
    next->setToolTip(tr("Next match (F3, Enter)"));
    auto *close = new QToolButton(m_searchBar);
    close->setText(QStringLiteral("✕"));
    close->setToolTip(tr("Close (Esc)"));
    search->addWidget(m_searchEdit, 1);
    search->addWidget(m_searchCount);
    search->addWidget(prev);
    search->addWidget(next);
    search->addWidget(close);
    m_searchBar->hide();
    layout->addWidget(m_searchBar);
    connect(m_searchEdit, &QLineEdit::textChanged, this, [this](const QString &t) { find(t); });
    connect(m_searchEdit, &QLineEdit::returnPressed, this, &GraphView::findNext);
    connect(next, &QToolButton::clicked, this, &GraphView::findNext);
    connect(prev, &QToolButton::clicked, this, &GraphView::findPrevious);
    connect(close, &QToolButton::clicked, m_searchBar, &QWidget::hide);

    m_scene = new QGraphicsScene(this);
    m_stack = new QStackedWidget(this);
    m_canvas = new GraphCanvas(m_stack);
    m_canvas->setScene(m_scene);
    m_empty = new QLabel(m_stack);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setMargin(24);
    m_empty->setObjectName(QStringLiteral("graphEmpty"));
    m_stack->addWidget(m_canvas);
    m_stack->addWidget(m_empty);
    layout->addWidget(m_stack, 1);

    auto *bottom = new QHBoxLayout;
    bottom->setContentsMargins(6, 0, 6, 2);
    bottom->setSpacing(16);
    m_busy = new QWidget(this);
    auto *busy = new QHBoxLayout(m_busy);
    busy->setContentsMargins(0, 0, 0, 0);
    m_busyLabel = new QLabel(m_busy);
    auto *bar = new QProgressBar(m_busy);
    bar->setRange(0, 0);
    bar->setMaximumWidth(120);
    auto *cancel = new QPushButton(tr("Cancel"), m_busy);
    cancel->setObjectName(QStringLiteral("cancelLayout"));
    busy->addWidget(m_busyLabel);
    busy->addWidget(bar);
    busy->addWidget(cancel);
    m_busy->hide();
    connect(cancel, &QPushButton::clicked, this, &GraphView::cancelLayout);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("graphStatus"));
    m_legend = new HeatLegend(this);
    m_legend->hide();
    bottom->addWidget(m_busy);
    bottom->addWidget(m_status, 1);
    bottom->addWidget(m_legend);
    layout->addLayout(bottom);

    auto shortcut = [this](const QKeySequence &keys, auto slot) {
        auto *a = new QAction(this);
        a->setShortcut(keys);
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(a, &QAction::triggered, this, slot);
        QWidget::addAction(a);
        return a;
    };
    shortcut(QKeySequence::Find, [this] { showSearchBar(); });
    shortcut(QKeySequence::FindNext, [this] { findNext(); });
    shortcut(QKeySequence::FindPrevious, [this] { findPrevious(); });
    shortcut(QKeySequence(Qt::Key_Escape), [this] { m_searchBar->hide(); m_canvas->setFocus(); });

    connect(m_scene, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
    connect(m_canvas, &GraphCanvas::itemDoubleClicked, this, &GraphView::onItemDoubleClicked);
}

void GraphView::setTitle(const QString &title)
{
    m_title->setText(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()));
}

void GraphView::clear(const QString &emptyText)
{
    cancelLayout();
    m_document.reset();
    m_graph.reset();
    m_stage = -1;
    m_scene->clear();
    m_boxes.clear();
    m_clusters.clear();
    m_edges.clear();
    m_presented = {};
    m_layout = {};
    m_selectedNode = -1;
    showMessage(emptyText);
    m_status->clear();
    m_legend->hide();
}

void GraphView::setStage(std::shared_ptr<const Document> document, int stage, std::unordered_map<int, ItemMark> marks)
{
    const bool sameDocument = document == m_document;
    const std::shared_ptr<const StageGraph> graph = document ? document->graphs.at(size_t(stage)) : nullptr;
    m_marks = std::move(marks);
    // The same graph in a newer document (a preview completed): keep the
    // drawing and the user's view, take the new times.
    if (graph && graph == m_graph) {
        m_document = std::move(document);
        m_stage = stage;
        applyMarks();
        applyHeat();
        return;
    }
    const int keepSelection = m_selectedNode;
    clear({});
    m_document = std::move(document);
    m_graph = graph;
    m_stage = stage;
    if (!m_graph)
        return;
    // Stages of one document share module paths: keep what the user opened.
    if (!sameDocument || m_expanded.empty())
        m_expanded = defaultExpandedModules(*m_graph);
    m_fitAfterLayout = !sameDocument;
    relayout(m_graph->find(keepSelection) ? keepSelection : -1);
}

LayoutRequest GraphView::layoutRequest(std::vector<QStringList> &lines, std::vector<GraphBoxItem::Style> &styles) const
{
    LayoutRequest request;
    for (const PresentedItem &item : m_presented.items) {
        GraphBoxItem::Style style = GraphBoxItem::Op;
        lines.push_back(itemLines(item, style));
        styles.push_back(style);
        const QSizeF size = GraphBoxItem::sizeFor(lines.back(), style);
        request.nodes.push_back({size.width(), size.height(), item.cluster});
    }
    request.edges = m_presented.edges;
    for (const PresentedCluster &c : m_presented.clusters)
        request.clusters.push_back({c.parent, c.name});
    return request;
}

QStringList GraphView::itemLines(const PresentedItem &item, GraphBoxItem::Style &style) const
{
    if (item.kind == PresentedItem::Kind::Module) {
        style = GraphBoxItem::Module;
        return {QStringLiteral("▸ ") + lastComponent(item.module),
                tr("%n node(s)", nullptr, int(item.members.size()))};
    }
    const GraphNode &n = *m_graph->find(item.nodeId);
    style = styleOf(n);
    if (n.kind == "placeholder")
        return {tr("input %1").arg(elide(n.target)), elide(n.shapeText())};
    if (n.kind == "output")
        return {tr("output")};
    return {elide(n.opLabel()), elide(n.shapeText())};
}

void GraphView::relayout(int focusNodeId)
{
    cancelLayout();
    m_presented = presentGraph(*m_graph, m_expanded);
    auto job = std::make_shared<Job>();
    job->id = ++m_jobCounter;
    LayoutRequest request = layoutRequest(job->lines, job->styles);
    m_running = job;
    m_focusAfterLayout = focusNodeId;
    m_busyLabel->setText(tr("Laying out %n item(s)…", nullptr, int(request.nodes.size())));
    m_busy->show();
    emit layoutStarted(int(request.nodes.size()));
    QPointer<GraphView> self(this);
    m_workers.start([self, job, request = std::move(request)] {
        LayoutResult result;
        try {
            result = computeLayout(request, &job->cancel);
        } catch (const std::exception &e) {
            result.engine = "failed";
            result.note = e.what();
        }
        QMetaObject::invokeMethod(
            qApp, [self, id = job->id, result = std::move(result)]() mutable {
                if (self)
                    self->layoutDone(id, std::move(result));
            },
            Qt::QueuedConnection);
    });
}

void GraphView::cancelLayout()
{
    if (!m_running)
        return;
    m_running->cancel = true;
    m_running.reset();
    m_busy->hide();
    if (m_graph && m_boxes.empty())
        showMessage(tr("Layout cancelled: the graph has %n item(s) at this level. Collapse modules or reopen the stage.",
                       nullptr, int(m_presented.items.size())));
}

void GraphView::layoutDone(int jobId, LayoutResult result)
{
    // A newer layout was started (or this one cancelled): this result is stale.
    if (!m_running || m_running->id != jobId || result.cancelled)
        return;
    const std::shared_ptr<Job> job = std::move(m_running);
    m_busy->hide();
    if (result.engine == "failed") {
        showMessage(tr("This graph could not be laid out: %1").arg(QString::fromStdString(result.note)));
        return;
    }
    m_layout = std::move(result);
    populateScene(job->lines, job->styles);
    m_status->setText(tr("%1 items · %2 in %3 s%4")
                          .arg(m_presented.items.size())
                          .arg(QString::fromStdString(m_layout.engine))
                          .arg(m_layout.seconds, 0, 'f', 2)
                          .arg(m_layout.note.empty() ? QString() : QStringLiteral(" · ") + QString::fromStdString(m_layout.note)));
    if (m_fitAfterLayout)
        m_canvas->fitReadable();
    m_fitAfterLayout = false;
    if (m_focusAfterLayout >= 0)
        selectNode(m_focusAfterLayout);
    emit layoutFinished();
}

void GraphView::populateScene(const std::vector<QStringList> &lines, const std::vector<GraphBoxItem::Style> &styles)
{
    m_scene->clear();
    m_boxes.clear();
    m_clusters.clear();
    m_edges.clear();
    m_stack->setCurrentWidget(m_canvas);
    for (size_t c = 0; c < m_presented.clusters.size() && c < m_layout.clusterRects.size(); ++c) {
        const LayoutRect &r = m_layout.clusterRects[c];
        const PresentedCluster &pc = m_presented.clusters[c];
        auto *item = new GraphClusterItem(int(c), pc.kind == PresentedCluster::Kind::Kernel ? GraphClusterItem::Kernel
                                                                                           : GraphClusterItem::Module,
                                          QString::fromStdString(pc.name), QRectF(r.x, r.y, r.width, r.height));
        m_scene->addItem(item);
        m_clusters.push_back(item);
    }
    for (size_t i = 0; i < m_presented.items.size(); ++i) {
        auto *item = new GraphBoxItem(int(i), styles[i], lines[i],
                                      GraphBoxItem::sizeFor(lines[i], styles[i]));
        item->setPos(m_layout.centers[i].x, m_layout.centers[i].y);
        item->setZValue(1);
        m_scene->addItem(item);
        m_boxes.push_back(item);
    }
    for (const auto &path : m_layout.edgePaths) {
        QList<QPointF> points;
        for (const LayoutPoint &p : path)
            points << QPointF(p.x, p.y);
        auto *edge = new GraphEdgeItem(points, m_layout.edgesAreBezier);
        m_scene->addItem(edge);
        m_edges.push_back(edge);
    }
    m_scene->setSceneRect(m_scene->itemsBoundingRect().adjusted(-40, -40, 40, 40));
    applyHeat();
    applyMarks();
    applyMatches();
    highlightNodes(m_highlighted);
}

GraphBoxItem *GraphView::boxItem(int presentedIndex) const
{
    return presentedIndex >= 0 && size_t(presentedIndex) < m_boxes.size() ? m_boxes[size_t(presentedIndex)] : nullptr;
}

double GraphView::itemTimeNs(const PresentedItem &item) const
{
    auto nodeTime = [this](int id) {
        const GraphNode *n = m_graph->find(id);
        return n ? m_document->attributedTimeNs(*m_graph, *n) : 0.0;
    };
    if (item.kind == PresentedItem::Kind::Node)
        return nodeTime(item.nodeId);
    double total = 0;
    for (int id : item.members)
        total += nodeTime(id);
    return total;
}

bool GraphView::heatAvailable() const
{
    return m_document && m_document->profiled && !m_document->nodeTimeNs.empty();
}

void GraphView::setHeatEnabled(bool enabled)
{
    m_heatEnabled = enabled;
    applyHeat();
}

void GraphView::applyHeat()
{
    const bool on = m_heatEnabled && heatAvailable();
    std::vector<double> times(m_boxes.size(), 0.0);
    double maxNs = 0;
    for (size_t i = 0; on && i < m_boxes.size(); ++i) {
        times[i] = itemTimeNs(m_presented.items[i]);
        maxNs = std::max(maxNs, times[i]);
    }
    for (size_t i = 0; i < m_boxes.size(); ++i) {
        const bool hot = on && maxNs > 0 && times[i] > 0;
        m_boxes[i]->setHeat(hot ? heatColor(times[i] / maxNs) : QColor());
        if (hot)
            m_boxes[i]->setToolTip(m_boxes[i]->lines().join(QLatin1Char('\n')) + tr("\nmeasured: %1").arg(formatDuration(times[i])));
    }
    m_legend->setMaximum(maxNs);
    m_legend->setVisible(on && maxNs > 0);
}

void GraphView::applyMarks()
{
    for (size_t i = 0; i < m_boxes.size(); ++i) {
        const PresentedItem &item = m_presented.items[i];
        const auto it = item.kind == PresentedItem::Kind::Node ? m_marks.find(item.nodeId) : m_marks.end();
        m_boxes[i]->setMark(it == m_marks.end() ? ItemMark::None : it->second);
    }
}

void GraphView::selectNode(int nodeId, bool center)
{
    GraphBoxItem *box = boxItem(m_presented.itemFor(nodeId));
    m_selectedNode = box ? nodeId : -1;
    const QSignalBlocker block(m_scene);
    m_scene->clearSelection();
    if (!box)
        return;
    box->setSelected(true);
    if (center)
        m_canvas->centerOn(box);
}

void GraphView::highlightNodes(const std::vector<int> &nodeIds)
{
    m_highlighted = nodeIds;
    std::set<int> items;
    for (int id : nodeIds) {
        if (const int i = m_presented.itemFor(id); i >= 0)
            items.insert(i);
    }
    for (size_t i = 0; i < m_boxes.size(); ++i)
        m_boxes[i]->setHighlighted(items.count(int(i)) > 0);
    for (size_t e = 0; e < m_edges.size() && e < m_presented.edges.size(); ++e) {
        const LayoutEdge &edge = m_presented.edges[e];
        m_edges[e]->setHighlighted(items.count(edge.from) && items.count(edge.to));
    }
    std::set<std::string> kernels;
    for (int id : nodeIds) {
        if (const GraphNode *n = m_graph ? m_graph->find(id) : nullptr)
            kernels.insert(n->kernel);
    }
    for (GraphClusterItem *c : m_clusters)
        c->setHighlighted(c->kind() == GraphClusterItem::Kernel && kernels.count(c->label().toStdString()));
    if (!items.empty() && m_selectedNode < 0)
        m_canvas->centerOn(m_boxes[size_t(*items.begin())]);
}

std::vector<int> GraphView::highlightedItems() const
{
    std::vector<int> out;
    for (size_t i = 0; i < m_boxes.size(); ++i) {
        if (m_boxes[i]->isHighlighted())
            out.push_back(int(i));
    }
    return out;
}

void GraphView::onSelectionChanged()
{
    const QList<QGraphicsItem *> selected = m_scene->selectedItems();
    auto *box = selected.isEmpty() ? nullptr : dynamic_cast<GraphBoxItem *>(selected.front());
    if (!box) {
        m_selectedNode = -1;
        emit nodeSelected(-1);
        return;
    }
    const PresentedItem &item = m_presented.items[size_t(box->index())];
    if (item.kind == PresentedItem::Kind::Module) {
        m_selectedNode = -1;
        emit moduleSelected(QString::fromStdString(item.module), QList<int>(item.members.begin(), item.members.end()));
        return;
    }
    m_selectedNode = item.nodeId;
    emit nodeSelected(item.nodeId);
}

void GraphView::onItemDoubleClicked(QGraphicsItem *item)
{
    if (auto *box = dynamic_cast<GraphBoxItem *>(item)) {
        const PresentedItem &p = m_presented.items[size_t(box->index())];
        if (p.kind == PresentedItem::Kind::Module) {
            setModuleExpanded(p.module, true);
        } else if (const GraphNode *n = m_graph->find(p.nodeId); n && !n->kernel.empty()) {
            emit kernelActivated(QString::fromStdString(n->kernel));
        }
        return;
    }
    if (auto *cluster = dynamic_cast<GraphClusterItem *>(item)) {
        if (cluster->kind() == GraphClusterItem::Module)
            setModuleExpanded(cluster->label().toStdString(), false);
        else
            emit kernelActivated(cluster->label());
    }
}

void GraphView::setModuleExpanded(const std::string &module, bool expanded)
{
    if (!m_graph || (m_expanded.count(module) > 0) == expanded)
        return;
    int focus = -1;
    if (expanded) {
        m_expanded.insert(module);
        for (const GraphNode &n : m_graph->nodes) {
            if ((n.module == module || n.module.rfind(module + ".", 0) == 0) && !n.isParameter()) {
                focus = n.id;
                break;
            }
        }
    } else {
        // Closing a module closes what is inside it too, so reopening it shows one level.
        for (auto it = m_expanded.begin(); it != m_expanded.end();)
            it = (*it == module || it->rfind(module + ".", 0) == 0) ? m_expanded.erase(it) : std::next(it);
        for (const GraphNode &n : m_graph->nodes) {
            if (n.module == module || n.module.rfind(module + ".", 0) == 0) {
                focus = n.id;
                break;
            }
        }
    }
    relayout(focus);
}

void GraphView::expandAll()
{
    if (!m_graph)
        return;
    m_expanded = modulePaths(*m_graph);
    relayout(m_selectedNode);
}

void GraphView::collapseAll()
{
    if (!m_graph)
        return;
    m_expanded.clear();
    relayout(-1);
}

void GraphView::showSearchBar()
{
    m_searchBar->show();
    m_searchEdit->setFocus();
    m_searchEdit->selectAll();
}

int GraphView::find(const QString &text)
{
    m_matches.clear();
    m_matchIndex = -1;
    const std::string needle = text.trimmed().toLower().toStdString();
    auto contains = [&needle](std::string hay) {
        std::transform(hay.begin(), hay.end(), hay.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        return hay.find(needle) != std::string::npos;
    };
    for (const GraphNode *n = m_graph && !needle.empty() ? m_graph->nodes.data() : nullptr;
         n && n != m_graph->nodes.data() + m_graph->nodes.size(); ++n) {
        if (!n->isParameter() && (contains(n->name) || contains(n->target) || contains(n->module)))
            m_matches.push_back(n->id);
    }
    if (m_searchEdit->text() != text) {
        const QSignalBlocker block(m_searchEdit);
        m_searchEdit->setText(text);
    }
    applyMatches();
    if (!m_matches.empty())
        findNext();
    return int(m_matches.size());
}

void GraphView::applyMatches()
{
    std::set<int> items;
    for (int id : m_matches)
        items.insert(m_presented.itemFor(id));
    for (size_t i = 0; i < m_boxes.size(); ++i)
        m_boxes[i]->setMatched(items.count(int(i)) > 0);
    m_searchCount->setText(m_searchEdit->text().isEmpty() ? QString()
                           : m_matches.empty()            ? tr("no match")
                                                          : tr("%1 of %2").arg(m_matchIndex + 1).arg(m_matches.size()));
}

void GraphView::findNext()
{
    if (m_matches.empty())
        return;
    m_matchIndex = (m_matchIndex + 1) % int(m_matches.size());
    selectNode(m_matches[size_t(m_matchIndex)]);
    applyMatches();
    emit nodeSelected(m_selectedNode);
}

void GraphView::findPrevious()
{
    if (m_matches.empty())
        return;
    m_matchIndex = (m_matchIndex - 1 + int(m_matches.size())) % int(m_matches.size());
    selectNode(m_matches[size_t(m_matchIndex)]);
    applyMatches();
    emit nodeSelected(m_selectedNode);
}

void GraphView::zoomIn()
{
    m_canvas->zoomBy(1.25);
}

void GraphView::zoomOut()
{
    m_canvas->zoomBy(0.8);
}

void GraphView::fitToView()
{
    m_canvas->fitAll();
}

double GraphView::zoom() const
{
    return m_canvas->zoom();
}

void GraphView::showMessage(const QString &text)
{
    m_empty->setText(text);
    m_stack->setCurrentWidget(m_empty);
}

} // namespace fusescope
