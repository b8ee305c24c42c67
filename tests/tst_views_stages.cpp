// The stage step-through: graph diffs between stages (hand-made graphs and a
// real compile), the stage and decision models, and the navigator widget.
#include "core/compiler/compile.h"
#include "core/compiler/graph_json.h"
#include "core/ops/functional.h"
#include "core/tensor/factory.h"
#include "core/zoo/zoo.h"
#include "tests/viewtest.h"
#include "views/decisionmodel.h"
#include "views/graphdiff.h"
#include "views/stagelistmodel.h"
#include "views/stagenavigator.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

#include <algorithm>
#include <cstdlib>

using namespace fusescope;
using namespace fusescope::compiler;

namespace {

std::shared_ptr<const StageGraph> stageGraph(const Graph &g)
{
    CompileStage stage;
    stage.name = "test";
    stage.graphJson = graphToJsonText(g);
    return StageGraph::fromStage(stage);
}

TensorMeta meta(Shape sizes)
{
    TensorMeta m;
    m.strides = contiguousStrides(sizes);
    m.sizes = std::move(sizes);
    return m;
}

// x -> add(x, 1) -> gelu -> output, on f32[8,128].
Graph smallGraph()
{
    Graph g;
    Node *x = g.add(NodeKind::Placeholder, "x", {}, {meta({8, 128})}, "x");
    Node *add = g.add(NodeKind::CallFunction, "aten.add", {Arg::of(x->out()), Arg::of(Value(1.0))},
                      {meta({8, 128})}, "add");
    Node *gelu = g.add(NodeKind::CallFunction, "aten.gelu", {Arg::of(add->out())}, {meta({8, 128})}, "gelu");
    g.add(NodeKind::Output, "output", {Arg::list({gelu->out()})}, {}, "output");
    g.lint();
    return g;
}

// One edit a pass could make, by name; what the diff must report is in the test's data.
void mutate(Graph &g, const QString &edit)
{
    Node *add = g.findByName("add"), *gelu = g.findByName("gelu");
    if (edit == "retarget") {
        gelu->target = "aten.mul";
    } else if (edit == "reshape") {
        gelu->outputs = {meta({8, 64})};
    } else if (edit == "restride") {
        gelu->outputs[0].strides = {1, 8};
    } else if (edit == "fuse") {
        add->kernel = "fused_add_gelu";
        gelu->kernel = "fused_add_gelu";
    } else if (edit == "constant") {
        g.setArgs(add, {Arg::of(g.findByName("x")->out()), Arg::of(Value(2.0))});
    } else if (edit == "replace") {
        Node *tanh = g.add(NodeKind::CallFunction, "aten.tanh", {Arg::of(add->out())}, {meta({8, 128})}, "tanh",
                           gelu);
        g.replaceUses(gelu->out(), tanh->out());
        g.erase(gelu);
    }
    g.lint();
}

std::vector<int> changedIds(const GraphDiff &diff)
{
    std::vector<int> ids;
    for (const NodeChange &c : diff.changed)
        ids.push_back(c.id);
    return ids;
}



// exp, then a nonzero that breaks the graph: two segments.
std::shared_ptr<const Document> compiledWithGraphBreak()
{
    CompileOptions options;
    options.interpret = true;
    CompiledFunction fn = compile(
        [](const TensorList &in) {
            const Tensor y = ops::exp(in[0]);
            const Tensor idx = ops::cast(ops::nonzero(ops::gt(y, 2.0)), DType::F32);
            return TensorList{ops::add(ops::sum(idx), ops::sum(y))};
        },
        {}, options);
    Generator gen(5);
    fn({randn({6, 5}, gen)});
    return viewtest::documentFrom(fn.stages());
}

} // namespace

class TestViewsStages : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        viewtest::useTestCache();
        m_doc = viewtest::compiledZooModel("encoder");
        m_fuse = m_doc->stageIndex("fuse");
        QVERIFY(m_fuse > 0);
    }

    // --- diff on hand-made graphs -------------------------------------------------

    void diffReportsEachEdit_data()
    {
        QTest::addColumn<QString>("edit");
        QTest::addColumn<QStringList>("added");
        QTest::addColumn<QStringList>("removed");
        QTest::addColumn<QStringList>("changed");
        QTest::addColumn<QString>("reason");
        using V = QStringList;
        QTest::newRow("nothing") << "" << V{} << V{} << V{} << "";
        QTest::newRow("target") << "retarget" << V{} << V{} << V{"gelu"} << "target aten.gelu -> aten.mul";
        QTest::newRow("shape") << "reshape" << V{} << V{} << V{"gelu"} << "shape f32[8,128] -> f32[8,64]";
        QTest::newRow("strides") << "restride" << V{} << V{} << V{"gelu"} << "strides [128,1] -> [1,8]";
        QTest::newRow("kernel") << "fuse" << V{} << V{} << V{"add", "gelu"} << "now in kernel fused_add_gelu";
        QTest::newRow("constant") << "constant" << V{} << V{} << V{"add"} << "arguments '1.0' -> '2.0'";
        QTest::newRow("replace") << "replace" << V{"tanh"} << V{"gelu"} << V{"output"} << "inputs (gelu) -> (tanh)";
    }
    void diffReportsEachEdit()
    {
        QFETCH(QString, edit);
        QFETCH(QStringList, added);
        QFETCH(QStringList, removed);
        QFETCH(QStringList, changed);
        QFETCH(QString, reason);
        const Graph before = smallGraph();
        Graph after(before);
        mutate(after, edit);
        const auto b = stageGraph(before), a = stageGraph(after);
        const GraphDiff diff = diffGraphs(*b, *a);
        QCOMPARE(diff.added, idsOf(*a, added));
        QCOMPARE(diff.removed, idsOf(*b, removed));
        QCOMPARE(changedIds(diff), idsOf(*a, changed));
        QCOMPARE(diff.isEmpty(), edit.isEmpty());
        if (!reason.isEmpty())
            QCOMPARE(QString::fromStdString(diff.changed.back().reason()), reason);
    }

    void diffSummaryCounts()
    {
        Graph after = smallGraph();
        mutate(after, "replace");
        const GraphDiff diff = diffGraphs(*stageGraph(smallGraph()), *stageGraph(after));
        QCOMPARE(QString::fromStdString(diff.summary()), QString::fromUtf8("+1 \u22121 ~1"));
        QVERIFY(diff.change(diff.changed.front().id));
        QVERIFY(!diff.change(-7));
    }

    // --- diff on a real compile -----------------------------------------------------

    void decomposeAddsAndRemovesNodes()
    {
        const int decompose = m_doc->stageIndex("decompose");
        const GraphDiff diff = diffGraphs(*m_doc->graphs[0], *m_doc->graphs[size_t(decompose)]);
        QVERIFY(!diff.added.empty());
        QVERIFY(!diff.removed.empty());
        for (int id : diff.added)
            QVERIFY(!m_doc->graphs[0]->find(id));
    }

    void fuseChangesKernelMembershipOnly()
    {
        const GraphDiff diff = diffGraphs(*m_doc->graphs[size_t(m_fuse - 1)], *m_doc->graphs[size_t(m_fuse)]);
        QVERIFY(diff.added.empty());
        QVERIFY(diff.removed.empty());
        QVERIFY(!diff.changed.empty());
        for (const NodeChange &c : diff.changed) {
            QCOMPARE(c.reasons.size(), size_t(1));
            QVERIFY2(c.reasons[0].rfind("now in kernel ", 0) == 0, c.reason().c_str());
        }
    }

    // --- StageListModel ---------------------------------------------------------------

    void stageListHasOneRowPerStage()
    {
        StageListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setDocument(m_doc);
        QCOMPARE(reset.size(), 1);
        QCOMPARE(model.rowCount(), int(m_doc->stages.size()));
        QCOMPARE(model.index(m_fuse, StageListModel::NameColumn).data().toString(), QStringLiteral("fuse"));
        QCOMPARE(model.index(m_fuse, StageListModel::KernelsColumn).data().toString(),
                 QString::number(m_doc->stages[size_t(m_fuse)].stats.kernels));
        QCOMPARE(model.index(0, StageListModel::ChangesColumn).data().toString(), QString());
        const QString changes = model.index(1, StageListModel::ChangesColumn).data().toString();
        QCOMPARE(changes, QString::fromStdString(diffGraphs(*m_doc->graphs[0], *m_doc->graphs[1]).summary()));
        model.setDocument(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void stageToolTipIsItsLog()
    {
        StageListModel model;
        model.setDocument(m_doc);
        const QString tip = model.index(m_fuse, StageListModel::DurationColumn).data(Qt::ToolTipRole).toString();
        QCOMPARE(tip.count(QLatin1Char('\n')) + 1, qsizetype(m_doc->stages[size_t(m_fuse)].log.size()));
        QVERIFY(tip.contains(QStringLiteral("cannot fuse")));
    }

    void stageDiffSummarySaysWhatAgainstWhat()
    {
        StageListModel model;
        model.setDocument(m_doc);
        QVERIFY(model.diffSummary(0).startsWith(QStringLiteral("capture: ")));
        QCOMPARE(model.diffSummary(2), QStringLiteral("simplify vs decompose: ")
                                           + QString::fromStdString(model.diff(2).summary()));
    }

    void segmentsDiffAgainstTheirOwnStages()
    {
        StageListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto doc = compiledWithGraphBreak();
        model.setDocument(doc);
        const int second = doc->stageIndex("capture", 1);
        QVERIFY(second > 0);
        QCOMPARE(model.stageTitle(second), QStringLiteral("capture (segment 1)"));
        QCOMPARE(model.previousInSegment(second), -1);
        QCOMPARE(model.previousInSegment(second + 1), second);
        QVERIFY(model.diff(second).isEmpty());
    }

    // --- DecisionModel ------------------------------------------------------------------

    void decisionsOfTheFuseStage()
    {
        DecisionModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto &graph = m_doc->graphs[size_t(m_fuse)];
        model.setGraph(graph);
        QCOMPARE(model.rowCount(), int(graph->decisions.size()));
        for (int row = 0; row < model.rowCount(); ++row) {
            const GraphDecision &d = graph->decisions[size_t(row)];
            const QStringList names = model.index(row, 0).data(DecisionModel::NodeNamesRole).toStringList();
            QCOMPARE(names, QStringList({QString::fromStdString(d.producer), QString::fromStdString(d.consumer)}));
            QCOMPARE(model.nodeIds(row).size(), 2);
            QCOMPARE(model.index(row, DecisionModel::KernelColumn).data().toString().isEmpty(), !d.fused);
        }
        model.setGraph(m_doc->graphs[0]); // capture: no decisions
        QCOMPARE(model.rowCount(), 0);
    }

    void decisionsSortByBytesSaved()
    {
        DecisionModel model;
        model.setGraph(m_doc->graphs[size_t(m_fuse)]);
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setSourceModel(&model);
        proxy.setSortRole(DecisionModel::SortRole);
        proxy.sort(DecisionModel::BytesSavedColumn, Qt::DescendingOrder);
        const auto &decisions = m_doc->graphs[size_t(m_fuse)]->decisions;
        const double most = std::max_element(decisions.begin(), decisions.end(), [](auto &a, auto &b) {
                                return a.bytesSaved < b.bytesSaved;
                            })->bytesSaved;
        QCOMPARE(proxy.index(0, DecisionModel::BytesSavedColumn).data(DecisionModel::SortRole).toDouble(), most);
        const int last = proxy.rowCount() - 1;
        QCOMPARE(proxy.index(last, 0).data(DecisionModel::FusedRole).toBool(), false); // refusals sink
    }

    // --- StageNavigator ------------------------------------------------------------------

    void navigatorEmptyState()
    {
        StageNavigator nav;
        nav.setDocument(std::make_shared<Document>());
        QVERIFY(nav.isEmptyState());
        QCOMPARE(nav.currentStage(), -1);
        nav.next();
        QCOMPARE(nav.currentStage(), -1);
        nav.setDocument(m_doc);
        QVERIFY(!nav.isEmptyState());
        nav.setDocument(nullptr);
        QVERIFY(nav.isEmptyState());
    }

    void navigatorStepsWithinBounds()
    {
        StageNavigator nav;
        QSignalSpy selected(&nav, &StageNavigator::stageSelected);
        nav.setDocument(m_doc);
        QCOMPARE(nav.currentStage(), 0);
        QCOMPARE(selected.size(), 1);
        QVERIFY(!nav.previousAction()->isEnabled());
        nav.previous();
        QCOMPARE(nav.currentStage(), 0);
        nav.next();
        QCOMPARE(nav.currentStage(), 1);
        QCOMPARE(selected.last().at(0).toInt(), 1);
        const int last = int(m_doc->stages.size()) - 1;
        nav.selectStage(last);
        QVERIFY(!nav.nextAction()->isEnabled());
        nav.next();
        QCOMPARE(nav.currentStage(), last);
        QCOMPARE(selected.size(), 3);
    }

    void altArrowsStepThroughStages_data()
    {
        QTest::addColumn<bool>("focusOnLog");
        QTest::newRow("focus on the stage table") << false;
        QTest::newRow("focus elsewhere") << true;
    }
    void altArrowsStepThroughStages()
    {
        QFETCH(bool, focusOnLog);
        StageNavigator nav;
        nav.setDocument(m_doc);
        nav.show();
        nav.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&nav));
        QWidget *target = focusOnLog ? nav.findChild<QPlainTextEdit *>() : static_cast<QWidget *>(nav.stageView());
        QVERIFY(target);
        target->setFocus();
        QSignalSpy selected(&nav, &StageNavigator::stageSelected);
        QTest::keyClick(target, Qt::Key_Right, Qt::AltModifier);
        QCOMPARE(nav.currentStage(), 1);
        QTest::keyClick(target, Qt::Key_Right, Qt::AltModifier);
        QTest::keyClick(target, Qt::Key_Left, Qt::AltModifier);
        QCOMPARE(nav.currentStage(), 1);
        QCOMPARE(selected.size(), 3);
    }

    void navigatorSummaryAndLog()
    {
        StageNavigator nav;
        nav.setDocument(m_doc);
        nav.selectStage(m_fuse);
        QCOMPARE(nav.diffSummary(), QStringLiteral("fuse vs simplify: ")
                                        + QString::fromStdString(nav.stageModel()->diff(m_fuse).summary()));
        const auto *log = nav.findChild<QPlainTextEdit *>();
        QCOMPARE(log->blockCount(), int(m_doc->stages[size_t(m_fuse)].log.size()));
    }

    void decisionsShowFromFuseOn()
    {
        StageNavigator nav;
        nav.setDocument(m_doc);
        for (int i = 0; i < int(m_doc->stages.size()); ++i) {
            nav.selectStage(i);
            QCOMPARE(nav.decisionsVisible(), i >= m_fuse);
            QCOMPARE(nav.decisionModel()->rowCount(), i >= m_fuse ? int(m_doc->graphs[size_t(m_fuse)]->decisions.size()) : 0);
        }
    }

    void clickingADecisionNamesItsNodes()
    {
        StageNavigator nav;
        nav.setDocument(m_doc);
        nav.selectStage(m_fuse);
        nav.resize(900, 900);
        nav.show();
        QVERIFY(QTest::qWaitForWindowExposed(&nav));
        QSignalSpy activated(&nav, &StageNavigator::decisionActivated);
        QTableView *view = nav.decisionView();
        const QModelIndex first = view->model()->index(0, DecisionModel::ProducerColumn);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(first).center());
        QCOMPARE(activated.size(), 1);
        const QStringList names = activated.first().at(0).toStringList();
        QCOMPARE(names, first.data(DecisionModel::NodeNamesRole).toStringList());
        QCOMPARE(names.size(), 2);
    }

private:
    static std::vector<int> idsOf(const StageGraph &g, const QStringList &names)
    {
        std::vector<int> ids;
        for (const QString &name : names)
            ids.push_back(g.findByName(name.toStdString())->id);
        return ids;
    }

    std::shared_ptr<const Document> m_doc;
    int m_fuse = -1;
};

QTEST_MAIN(TestViewsStages)
#include "tst_views_stages.moc"
