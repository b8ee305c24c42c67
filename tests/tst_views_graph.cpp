// The GraphView and what it draws: presentation (modules, kernels as
// clusters), layout off the GUI thread, selection, search, collapse/expand,
// heat overlay, diff marks and export; the Inspector.
#include "tests/viewtest.h"
#include "views/graphcanvas.h"
#include "views/graphexport.h"
#include "views/graphpresentation.h"
#include "views/graphview.h"
#include "views/heatlegend.h"
#include "views/inspector.h"

#include <QFile>
#include <QGraphicsScene>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <set>

using namespace fusescope;

namespace {

// A GEMM by a weight: aten.mm, or fusescope.mm_bf16x6 where the CPU has AMX tiles.
bool isProduct(const std::string &target)
{
    return target == "aten.mm" || target == "fusescope.mm_bf16x6";
}

const std::shared_ptr<Document> &encoder()
{
    static const std::shared_ptr<Document> doc = viewtest::compiledZooModel("encoder");
    return doc;
}

const std::shared_ptr<Document> &resnet()
{
    static const std::shared_ptr<Document> doc = viewtest::compiledZooModel("resnet18");
    return doc;
}

bool showAndWait(GraphView &view, std::shared_ptr<const Document> doc, int stage,
                 std::unordered_map<int, ItemMark> marks = {})
{
    QSignalSpy done(&view, &GraphView::layoutFinished);
    view.setStage(std::move(doc), stage, std::move(marks));
    return done.wait(60000) || !view.isLayoutRunning();
}

bool relayoutAndWait(GraphView &view, const std::function<void()> &change)
{
    QSignalSpy done(&view, &GraphView::layoutFinished);
    change();
    return done.wait(60000);
}

int countColours(const QImage &image)
{
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3)
            colours.insert(image.pixel(x, y));
    }
    return int(colours.size());
}

} // namespace

class TestGraphView : public QObject
{
    Q_OBJECT
private slots:
    void moduleChainSplitsPaths()
    {
        QCOMPARE(moduleChain(""), std::vector<std::string>{});
        QCOMPARE(moduleChain("a"), std::vector<std::string>{"a"});
        QCOMPARE(moduleChain("layer1.0.conv1"), (std::vector<std::string>{"layer1", "layer1.0", "layer1.0.conv1"}));
    }

    void smallGraphsOpenEveryModule()
    {
        const StageGraph &g = *encoder()->graph("capture");
        QCOMPARE(defaultExpandedModules(g), modulePaths(g));
    }

    void bigGraphsStartCollapsed()
    {
        const StageGraph &g = *resnet()->graph("decompose");
        const std::set<std::string> open = defaultExpandedModules(g, 40, 40);
        QVERIFY(open.size() < modulePaths(g).size());
        const PresentedGraph p = presentGraph(g, open);
        QVERIFY2(p.items.size() <= 40, std::to_string(p.items.size()).c_str());
        const auto boxes = std::count_if(p.items.begin(), p.items.end(),
                                         [](const PresentedItem &i) { return i.kind == PresentedItem::Kind::Module; });
        QVERIFY(boxes > 0);
        // Every op node is drawn by exactly one item.
        for (const GraphNode &n : g.nodes) {
            if (!n.isParameter())
                QVERIFY2(p.itemFor(n.id) >= 0, n.name.c_str());
        }
    }

    void collapsedModulesOwnTheirNodes()
    {
        const StageGraph &g = *resnet()->graph("capture");
        const PresentedGraph p = presentGraph(g, {});
        for (const PresentedItem &item : p.items) {
            if (item.kind != PresentedItem::Kind::Module)
                continue;
            QVERIFY(item.module.find('.') == std::string::npos); // only top-level boxes
            for (int id : item.members)
                QVERIFY(g.find(id)->module.rfind(item.module, 0) == 0);
        }
        for (const LayoutEdge &e : p.edges)
            QVERIFY(e.from != e.to);
    }

    void fusedKernelsBecomeClusters()
    {
        const StageGraph &g = *encoder()->graph("fuse");
        const PresentedGraph p = presentGraph(g, modulePaths(g));
        size_t multiNode = 0;
        for (const GraphKernel &k : g.kernels)
            multiNode += k.nodes.size() >= 2;
        QCOMPARE(p.clusters.size(), multiNode);
        for (size_t i = 0; i < p.items.size(); ++i) {
            if (p.items[i].cluster < 0)
                continue;
            const PresentedCluster &c = p.clusters[size_t(p.items[i].cluster)];
            QCOMPARE(c.kind, PresentedCluster::Kind::Kernel);
            QCOMPARE(g.find(p.items[i].nodeId)->kernel, c.name);
        }
    }

    void drawsNodesEdgesAndClusters()
    {
        GraphView view;
        view.resize(900, 700);
        QVERIFY(showAndWait(view, encoder(), encoder()->stageIndex("fuse")));
        const PresentedGraph &p = view.presented();
        int boxes = 0, edges = 0, clusters = 0;
        for (QGraphicsItem *item : view.scene()->items()) {
            boxes += dynamic_cast<GraphBoxItem *>(item) != nullptr;
            edges += dynamic_cast<GraphEdgeItem *>(item) != nullptr;
            clusters += dynamic_cast<GraphClusterItem *>(item) != nullptr;
        }
        QCOMPARE(size_t(boxes), p.items.size());
        QCOMPARE(size_t(edges), p.edges.size());
        QCOMPARE(size_t(clusters), p.clusters.size());
        QVERIFY(clusters > 0);
        // Each box shows the op and its output shape.
        const GraphNode *mm = nullptr;
        for (const GraphNode &n : view.graph()->nodes)
            mm = !mm && isProduct(n.target) ? &n : mm;
        QVERIFY(mm);
        const GraphBoxItem *box = view.boxItem(p.itemFor(mm->id));
        QCOMPARE(box->lines().value(0), QString::fromStdString(mm->target.substr(mm->target.find('.') + 1)));
        QCOMPARE(box->lines().value(1), QString::fromStdString(mm->shapeText()));
    }

    void selectionEmitsTheNode()
    {
        GraphView view;
        QVERIFY(showAndWait(view, encoder(), encoder()->stageIndex("capture")));
        QSignalSpy selected(&view, &GraphView::nodeSelected);
        const int item = 3;
        view.boxItem(item)->setSelected(true);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toInt(), view.presented().items[item].nodeId);
        QCOMPARE(view.selectedNode(), view.presented().items[item].nodeId);
    }

    void searchFindsAndSteps()
    {
        GraphView view;
        view.show();
        QVERIFY(showAndWait(view, encoder(), encoder()->stageIndex("decompose")));
        QSignalSpy selected(&view, &GraphView::nodeSelected);
        const int matches = view.find(QStringLiteral("MM"));
        int expected = 0;
        for (const GraphNode &n : view.graph()->nodes)
            expected += !n.isParameter() && (n.name.find("mm") != std::string::npos || n.target.find("mm") != std::string::npos ||
                                             n.module.find("mm") != std::string::npos);
        QCOMPARE(matches, expected);
        QVERIFY(matches >= 2);
        const int first = view.selectedNode();
        QVERIFY(view.graph()->find(first)->target.find("mm") != std::string::npos ||
                view.graph()->find(first)->name.find("mm") != std::string::npos);
        view.findNext();
        QVERIFY(view.selectedNode() != first);
        view.findPrevious();
        QCOMPARE(view.selectedNode(), first);
        QCOMPARE(selected.count(), 3);
        QCOMPARE(view.find(QStringLiteral("no-such-op")), 0);
        // Ctrl+F opens the search box.
        QTest::keySequence(&view, QKeySequence::Find);
        auto *edit = view.findChild<QLineEdit *>();
        QVERIFY(edit && edit->isVisible());
    }

    void doubleClickExpandsAndCollapses()
    {
        GraphView view;
        view.resize(800, 600);
        QVERIFY(showAndWait(view, resnet(), resnet()->stageIndex("capture")));
        QVERIFY(relayoutAndWait(view, [&] { view.collapseAll(); }));
        const size_t collapsed = view.presented().items.size();
        int layer1 = -1;
        for (size_t i = 0; i < view.presented().items.size(); ++i) {
            if (view.presented().items[i].module == "layer1" && view.presented().items[i].kind == PresentedItem::Kind::Module)
                layer1 = int(i);
        }
        QVERIFY(layer1 >= 0);
        QVERIFY(relayoutAndWait(view, [&] { emit view.canvas()->itemDoubleClicked(view.boxItem(layer1)); }));
        QVERIFY(view.isModuleExpanded("layer1"));
        QVERIFY(view.presented().items.size() > collapsed);
        // The opened module is framed by a cluster; double-clicking the frame closes it.
        GraphClusterItem *frame = nullptr;
        for (QGraphicsItem *item : view.scene()->items()) {
            if (auto *c = dynamic_cast<GraphClusterItem *>(item); c && c->label() == QLatin1String("layer1"))
                frame = c;
        }
        QVERIFY(frame);
        QVERIFY(relayoutAndWait(view, [&] { emit view.canvas()->itemDoubleClicked(frame); }));
        QVERIFY(!view.isModuleExpanded("layer1"));
        QCOMPARE(view.presented().items.size(), collapsed);
    }

    void keyboardZoomAndFit()
    {
        GraphView view;
        view.resize(600, 400);
        view.show();
        QVERIFY(showAndWait(view, encoder(), encoder()->stageIndex("fuse")));
        // A long graph first shows at a readable zoom; F fits all of it.
        QVERIFY(view.zoom() >= 0.6 - 1e-9);
        QTest::keyClick(view.canvas(), Qt::Key_F);
        const double fitted = view.zoom();
        QVERIFY(fitted < 0.6);
        QTest::keyClick(view.canvas(), Qt::Key_Equal, Qt::ControlModifier);
        QVERIFY(view.zoom() > fitted);
        QTest::keyClick(view.canvas(), Qt::Key_Minus, Qt::ControlModifier);
        QTest::keyClick(view.canvas(), Qt::Key_Minus, Qt::ControlModifier);
        QVERIFY(view.zoom() < fitted);
        QTest::keyClick(view.canvas(), Qt::Key_F);
        QVERIFY(qAbs(view.zoom() - fitted) < 1e-9);
    }

    void heatNeedsMeasuredTimes()
    {
        auto doc = std::make_shared<Document>(*encoder());
        GraphView view;
        QVERIFY(showAndWait(view, doc, doc->stageIndex("capture")));
        QVERIFY(!view.heatAvailable());
        auto *legend = view.findChild<HeatLegend *>();
        QVERIFY(legend && legend->isHidden());

        auto profiled = std::make_shared<Document>(*encoder());
        profiled->profiled = true;
        const StageGraph &g = *profiled->graph("capture");
        int hot = -1;
        for (const GraphNode &n : g.nodes)
            hot = hot < 0 && n.target == "aten.linear" ? n.id : hot;
        QVERIFY(hot >= 0);
        profiled->nodeTimeNs[hot] = 2e6;
        GraphView heated;
        heated.show();
        QVERIFY(showAndWait(heated, profiled, profiled->stageIndex("capture")));
        QVERIFY(heated.heatAvailable());
        QCOMPARE(heated.findChild<HeatLegend *>()->maximum(), 2e6);
        QVERIFY(heated.findChild<HeatLegend *>()->isVisible());
        QVERIFY(heated.boxItem(heated.presented().itemFor(hot))->toolTip().contains(QLatin1String("2.000 ms")));
    }

    void highlightMarksItemsAndKernel()
    {
        GraphView view;
        QVERIFY(showAndWait(view, encoder(), encoder()->stageIndex("fuse")));
        const GraphKernel &k = view.graph()->kernels.front();
        view.highlightNodes(k.nodes);
        std::vector<int> expected;
        for (int id : k.nodes)
            expected.push_back(view.presented().itemFor(id));
        std::sort(expected.begin(), expected.end());
        expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
        QCOMPARE(view.highlightedItems(), expected);
        view.highlightNodes({});
        QVERIFY(view.highlightedItems().empty());
    }

    void diffMarksArePainted()
    {
        GraphView view;
        const int decompose = encoder()->stageIndex("decompose");
        const int added = encoder()->graphs[size_t(decompose)]->nodes.back().id;
        QVERIFY(showAndWait(view, encoder(), decompose, {{added, ItemMark::Added}}));
        const int item = view.presented().itemFor(added);
        QVERIFY(item >= 0);
        QCOMPARE(view.boxItem(item)->mark(), ItemMark::Added);
        QCOMPARE(view.boxItem(item == 0 ? 1 : 0)->mark(), ItemMark::None);
    }

    void staleLayoutsAreDropped()
    {
        GraphView view;
        QSignalSpy done(&view, &GraphView::layoutFinished);
        view.setStage(resnet(), resnet()->stageIndex("capture"));
        view.setStage(encoder(), encoder()->stageIndex("fuse")); // supersedes the first
        QVERIFY(done.wait(60000));
        QTest::qWait(300);
        QCOMPARE(done.count(), 1);
        QCOMPARE(view.graph()->stageName, std::string("fuse"));
        QCOMPARE(view.scene()->items().isEmpty(), false);
    }

    void cancelLeavesAMessage()
    {
        GraphView view;
        view.setStage(resnet(), resnet()->stageIndex("decompose"));
        QVERIFY(view.isLayoutRunning());
        view.cancelLayout();
        QVERIFY(!view.isLayoutRunning());
        QSignalSpy done(&view, &GraphView::layoutFinished);
        QVERIFY(!done.wait(500));
        auto *label = view.findChild<QLabel *>(QStringLiteral("graphEmpty"));
        QVERIFY(label && label->text().contains(QLatin1String("cancelled")));
    }

    void exportsDotSvgPng()
    {
        GraphView view;
        QVERIFY(showAndWait(view, encoder(), encoder()->stageIndex("fuse")));
        QTemporaryDir dir;
        QString error;
        QVERIFY2(exportGraph(view, dir.filePath(QStringLiteral("g.dot")), &error), qPrintable(error));
        QVERIFY2(exportGraph(view, dir.filePath(QStringLiteral("g.svg")), &error), qPrintable(error));
        QVERIFY2(exportGraph(view, dir.filePath(QStringLiteral("g.png")), &error), qPrintable(error));
        QFile dot(dir.filePath(QStringLiteral("g.dot")));
        QVERIFY(dot.open(QIODevice::ReadOnly));
        const QByteArray text = dot.readAll();
        QVERIFY(text.startsWith("digraph"));
        QCOMPARE(text.count("->"), qsizetype(view.presented().edges.size()));
        QCOMPARE(text.count("subgraph cluster_"), qsizetype(view.presented().clusters.size()));
        QFile svg(dir.filePath(QStringLiteral("g.svg")));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().contains("<svg"));
        const QImage png(dir.filePath(QStringLiteral("g.png")));
        QVERIFY(!png.isNull());
        QVERIFY(countColours(png) > 20);
        QVERIFY(!exportGraph(view, dir.filePath(QStringLiteral("g.bmp")), &error));
        QVERIFY(error.contains(QLatin1String("g.bmp")));
        QVERIFY(!exportGraph(view, QStringLiteral("/nonexistent/dir/g.png"), &error));
    }

    void inspectorShowsTheNode()
    {
        const auto &doc = encoder();
        const int fuse = doc->stageIndex("fuse");
        const StageGraph &g = *doc->graphs[size_t(fuse)];
        const GraphNode *mm = nullptr;
        for (const GraphNode &n : g.nodes)
            mm = !mm && isProduct(n.target) ? &n : mm;
        QVERIFY(mm);
        Inspector inspector;
        inspector.showNode(doc, fuse, mm->id);
        QCOMPARE(inspector.value(QStringLiteral("name")), QString::fromStdString(mm->name));
        QCOMPARE(inspector.value(QStringLiteral("target")), QString::fromStdString(mm->target));
        QCOMPARE(inspector.value(QStringLiteral("kernel")), QString::fromStdString(mm->kernel));
        QCOMPARE(inspector.value(QStringLiteral("outputs")), QString::fromStdString(mm->shapeText()));
        QCOMPARE(inspector.value(QStringLiteral("inputs")), QString::number(mm->inputs.size()));
        QCOMPARE(inspector.value(QStringLiteral("origins")), QString::number(mm->origins.size()));
        QVERIFY(inspector.value(QStringLiteral("measured time")).contains(QLatin1String("not profiled")));
        // Activating an input row asks to go to that node.
        QSignalSpy go(&inspector, &Inspector::nodeActivated);
        QTreeWidgetItem *inputs = inspector.tree()->findItems(QStringLiteral("inputs"), Qt::MatchExactly).value(0);
        QVERIFY(inputs && inputs->childCount() > 0);
        emit inspector.tree()->itemActivated(inputs->child(0), 0);
        QCOMPARE(go.count(), 1);
        QCOMPARE(go.at(0).at(1).toInt(), mm->inputs.front());
    }
};

QTEST_MAIN(TestGraphView)
#include "tst_views_graph.moc"
