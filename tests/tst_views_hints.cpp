// The hints view: the model over the engine's findings, ranking, the detail
// pane, the evidence a click publishes, and the empty states.
#include "hintfixture.h"
#include "profiler/importer.h"
#include "profiler/statistics.h"
#include "views/hintsmodel.h"
#include "views/hintsview.h"
#include "views/timelinemodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>

#include <filesystem>

using namespace fusescope;
using namespace fusescope::profiler;

namespace {

const std::string kAlexnet =
    FUSESCOPE_TESTDATA_DIR "/kineto/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz";

// The GPU busy through the whole step with one long kernel: nothing to fix.
const char *kQuietRun = R"(
step 0 1000
kernel long 0 990
)";

std::shared_ptr<const Document> documentOf(Trace trace)
{
    auto doc = std::make_shared<Document>();
    setRecordedRun(*doc, std::make_shared<const Trace>(std::move(trace)));
    return doc;
}

std::vector<Hint> hintsOf(const Trace &trace)
{
    const Run &run = trace.runs.front();
    return computeHints(trace, run, computeStatistics(trace, run));
}

Hint makeHint(const std::string &rule, HintSeverity severity, double savingUs)
{
    Hint h;
    h.rule = rule;
    h.severity = severity;
    h.message = rule + " seen";
    h.fix = "change " + rule;
    h.savingUs = savingUs;
    h.events = {EventId(1), EventId(2)};
    h.nodes = {7};
    return h;
}

} // namespace

class TestHints : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void modelIsConsistent();
    void modelColumns_data();
    void modelColumns();
    void rankedFindings();
    void clickPublishesEvidence();
    void detailShowsFix();
    void emptyStates_data();
    void emptyStates();

private:
    std::shared_ptr<const Document> m_alexnet;
};

void TestHints::initTestCase()
{
    if (!std::filesystem::exists(kAlexnet))
        return;
    std::optional<Trace> trace = importKineto({kAlexnet});
    QVERIFY(trace && !trace->runs.empty());
    m_alexnet = documentOf(std::move(*trace));
}

void TestHints::modelIsConsistent()
{
    HintsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setHints({makeHint("launch-bound", HintSeverity::Warning, 1500),
                    makeHint("gpu-idle", HintSeverity::Critical, 20)});
    QCOMPARE(model.rowCount(), 2);
    model.setHints({});
    QCOMPARE(model.rowCount(), 0);
}

void TestHints::modelColumns_data()
{
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("display");
    QTest::addColumn<QVariant>("sort");
    QTest::newRow("severity") << int(HintsModel::SeverityColumn) << "Critical" << QVariant(int(HintSeverity::Critical));
    QTest::newRow("rule") << int(HintsModel::RuleColumn) << "gpu-idle" << QVariant(QStringLiteral("gpu-idle"));
    QTest::newRow("saving") << int(HintsModel::SavingColumn)
                            << QString::fromStdString(formatDuration(1500000)) << QVariant(1500.0);
    QTest::newRow("message") << int(HintsModel::MessageColumn) << "gpu-idle seen"
                             << QVariant(QStringLiteral("gpu-idle seen"));
}

void TestHints::modelColumns()
{
    QFETCH(int, column);
    QFETCH(QString, display);
    QFETCH(QVariant, sort);
    HintsModel model;
    model.setHints({makeHint("gpu-idle", HintSeverity::Critical, 1500)});
    const QModelIndex index = model.index(0, column);
    QCOMPARE(index.data().toString(), display);
    QCOMPARE(index.data(HintsModel::SortRole), sort);
    QVERIFY(index.data(Qt::ToolTipRole).toString().contains("change gpu-idle"));
    QVERIFY(index.data(Qt::ToolTipRole).toString().contains("gpu-idle seen"));
}

void TestHints::rankedFindings()
{
    if (!m_alexnet)
        QSKIP("the alexnet Kineto trace is not in shared/testdata");
    HintsView view;
    view.setDocument(m_alexnet);
    const std::vector<Hint> expected = hintsOf(*m_alexnet->trace);
    QVERIFY(!expected.empty());
    QCOMPARE(view.hints().size(), expected.size());
    QVERIFY(view.emptyMessage().isEmpty());

    auto *table = view.findChild<QTableView *>();
    QVERIFY(table);
    QCOMPARE(table->model()->rowCount(), int(expected.size()));
    double largest = 0;
    for (const Hint &h : expected)
        largest = std::max(largest, h.savingUs);
    const QModelIndex first = table->model()->index(0, HintsModel::SavingColumn);
    QCOMPARE(first.data(HintsModel::SortRole).toDouble(), largest);
    QCOMPARE(view.hints().front().savingUs, largest);
}

void TestHints::clickPublishesEvidence()
{
    if (!m_alexnet)
        QSKIP("the alexnet Kineto trace is not in shared/testdata");
    HintsView view;
    view.resize(900, 600);
    view.setDocument(m_alexnet);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto *table = view.findChild<QTableView *>();
    QVERIFY(table && table->model()->rowCount() > 0);
    QSignalSpy spy(&view, &HintsView::evidenceSelected);

    const int row = std::min(1, table->model()->rowCount() - 1);
    const QRect rect = table->visualRect(table->model()->index(row, HintsModel::MessageColumn));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(spy.count(), 1);
    const auto events = spy.at(0).at(0).value<std::vector<EventId>>();
    const auto nodes = spy.at(0).at(1).value<std::vector<int>>();
    QCOMPARE(events, view.hints()[size_t(row)].events);
    QCOMPARE(nodes, view.hints()[size_t(row)].nodes);

    // A second click on the same row brings the evidence back once more.
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(spy.count(), 2);
    view.selectHint(0);
    QCOMPARE(spy.count(), 3);
    QCOMPARE(spy.at(2).at(0).value<std::vector<EventId>>(), view.hints().front().events);
}

void TestHints::detailShowsFix()
{
    if (!m_alexnet)
        QSKIP("the alexnet Kineto trace is not in shared/testdata");
    HintsView view;
    view.setDocument(m_alexnet);
    auto *detail = view.findChild<QTextBrowser *>();
    QVERIFY(detail && detail->isReadOnly());
    for (int row = 0; row < int(view.hints().size()); ++row) {
        view.selectHint(row);
        const Hint &h = view.hints()[size_t(row)];
        const QString text = detail->toPlainText();
        QVERIFY2(text.contains(QString::fromStdString(h.fix)), qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(h.message)));
        QVERIFY(text.contains(QStringLiteral("%1 event").arg(h.events.size())));
    }
}

void TestHints::emptyStates_data()
{
    QTest::addColumn<bool>("withTrace");
    QTest::addColumn<QString>("message");
    QTest::newRow("no trace") << false << "This file holds no recorded run";
    QTest::newRow("no findings") << true << QString::fromUtf8("No rule's threshold was crossed — nothing to fix here");
}

void TestHints::emptyStates()
{
    QFETCH(bool, withTrace);
    QFETCH(QString, message);
    std::shared_ptr<const Document> doc = std::make_shared<const Document>();
    if (withTrace) {
        Trace quiet = fixture::TraceFixture(kQuietRun).take();
        QVERIFY2(hintsOf(quiet).empty(), "the quiet fixture should cross no threshold");
        doc = documentOf(std::move(quiet));
    }
    HintsView view;
    if (m_alexnet)
        view.setDocument(m_alexnet); // the empty state must replace earlier findings
    view.setDocument(doc);
    QVERIFY(view.hints().empty());
    QCOMPARE(view.emptyMessage(), message);
}

QTEST_MAIN(TestHints)
#include "tst_views_hints.moc"
