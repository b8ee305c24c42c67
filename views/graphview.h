#pragma once
// One stage's graph, drawn: laid out off the GUI thread (cancellable, stale
// layouts dropped), modules collapsible, fused kernels as clusters, search,
// a heat overlay of measured time, and diff marks against another stage.

#include "views/document.h"
#include "views/graphitems.h"
#include "views/graphlayout.h"
#include "views/graphpresentation.h"
#include "views/workerthreads.h"

#include <QPointer>
#include <QWidget>

#include <atomic>
#include <memory>
#include <set>
#include <unordered_map>

class QGraphicsScene;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QStackedWidget;

namespace fusescope {

class GraphCanvas;
class HeatLegend;

class GraphView : public QWidget
{
    Q_OBJECT
public:
    explicit GraphView(QWidget *parent = nullptr);
    ~GraphView() override;

    void setTitle(const QString &title);
    // Shows stage `stage` of `document` (its graph must be there); marks each
    // node as `marks` says. Starts a layout unless the same graph is shown.
    void setStage(std::shared_ptr<const Document> document, int stage,
                  std::unordered_map<int, ItemMark> marks = {});
    void clear(const QString &emptyText);
    const StageGraph *graph() const { return m_graph.get(); }
    int stage() const { return m_stage; }

    // Selection and cross-highlighting by node id. A node inside a collapsed
    // module selects (or highlights) the module's box.
    void selectNode(int nodeId, bool center = true);
    int selectedNode() const { return m_selectedNode; }
    void highlightNodes(const std::vector<int> &nodeIds);
    std::vector<int> highlightedItems() const;

    void setModuleExpanded(const std::string &module, bool expanded);
    bool isModuleExpanded(const std::string &module) const { return m_expanded.count(module) > 0; }
    void expandAll();
    void collapseAll();

    // Case-insensitive match on node name, op and module; returns the count.
    int find(const QString &text);
    void findNext();
    void findPrevious();
    int currentMatch() const { return m_matchIndex; }

    void zoomIn();
    void zoomOut();
    void fitToView();
    double zoom() const;

    void setHeatEnabled(bool enabled);
    bool heatAvailable() const;
    bool heatEnabled() const { return m_heatEnabled; }

    bool isLayoutRunning() const { return m_running != nullptr; }
    void cancelLayout();
    const LayoutResult &layoutResult() const { return m_layout; }
    const PresentedGraph &presented() const { return m_presented; }
    QGraphicsScene *scene() const { return m_scene; }
    GraphCanvas *canvas() const { return m_canvas; }
    GraphBoxItem *boxItem(int presentedIndex) const;

signals:
    void nodeSelected(int nodeId); // -1: nothing
    void moduleSelected(const QString &module, const QList<int> &members);
    void kernelActivated(const QString &kernel);
    void layoutStarted(int items);
    void layoutFinished();

private:
    struct Job;
    void buildUi();
    void relayout(int focusNodeId = -1);
    LayoutRequest layoutRequest(std::vector<QStringList> &lines, std::vector<GraphBoxItem::Style> &styles) const;
    void layoutDone(int jobId, LayoutResult result);
    void populateScene(const std::vector<QStringList> &lines, const std::vector<GraphBoxItem::Style> &styles);
    void applyHeat();
    void applyMarks();
    void applyMatches();
    void onSelectionChanged();
    void onItemDoubleClicked(QGraphicsItem *item);
    void showSearchBar();
    void showMessage(const QString &text);
    double itemTimeNs(const PresentedItem &item) const;
    QStringList itemLines(const PresentedItem &item, GraphBoxItem::Style &style) const;

    std::shared_ptr<const Document> m_document;
    std::shared_ptr<const StageGraph> m_graph;
    int m_stage = -1;
    std::unordered_map<int, ItemMark> m_marks;
    std::set<std::string> m_expanded;
    PresentedGraph m_presented;
    LayoutResult m_layout;
    std::vector<GraphBoxItem *> m_boxes;
    std::vector<GraphClusterItem *> m_clusters;
    std::vector<GraphEdgeItem *> m_edges;
    int m_selectedNode = -1;
    std::vector<int> m_highlighted;
    std::vector<int> m_matches; // node ids
    int m_matchIndex = -1;
    bool m_heatEnabled = true;
    int m_focusAfterLayout = -1;
    bool m_fitAfterLayout = true;

    int m_jobCounter = 0;
    std::shared_ptr<Job> m_running;
    WorkerThreads m_workers;

    QLabel *m_title = nullptr;
    QStackedWidget *m_stack = nullptr;
    QGraphicsScene *m_scene = nullptr;
    GraphCanvas *m_canvas = nullptr;
    QWidget *m_searchBar = nullptr;
    QLineEdit *m_searchEdit = nullptr;
    QLabel *m_searchCount = nullptr;
    QWidget *m_busy = nullptr;
    QLabel *m_busyLabel = nullptr;
    QLabel *m_status = nullptr;
    HeatLegend *m_legend = nullptr;
    QLabel *m_empty = nullptr;
};

} // namespace fusescope
