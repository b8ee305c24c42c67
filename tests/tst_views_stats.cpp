// The Statistics view on two real runs — a recording of the encoder made by
// the fusescope binary and an imported Kineto trace: the four models pass
// QAbstractItemModelTester and hold one row per RunStatistics entry, sorting,
// the filter, Ctrl+C as TSV, double-click and the empty state.
#include "profiler/importer.h"
#include "profiler/tracereader.h"
#include "views/statsmodels.h"
#include "views/statsview.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QHeaderView>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>

using namespace fusescope;

Q_DECLARE_METATYPE(std::shared_ptr<const Document>)

namespace {

const QString kKineto = QStringLiteral(
    FUSESCOPE_TESTDATA_DIR "/kineto/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");

std::shared_ptr<const Document> documentOf(profiler::Trace trace)
{
    auto doc = std::make_shared<Document>();
    setRecordedRun(*doc, std::make_shared<const profiler::Trace>(std::move(trace)));
    return doc;
}

// Records the encoder with the fusescope binary; null (with `why`) when it cannot.
std::shared_ptr<const Document> recordEncoder(const QString &dir, QString *why)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    const QString path = dir + QStringLiteral("/enc.fstrace");
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FUSESCOPE_BINARY),
            {QStringLiteral("profile"), QStringLiteral("encoder"), QStringLiteral("--compile"), QStringLiteral("--steps"),
             QStringLiteral("2"), QStringLiteral("-o"), path});
    if (!p.waitForFinished(300000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *why = QString::fromUtf8(p.readAllStandardError()) + p.errorString();
        return nullptr;
    }
    std::optional<profiler::Trace> trace = profiler::TraceReader(path.toStdString()).load();
    return trace ? documentOf(std::move(*trace)) : nullptr;
}

size_t expectedRows(const profiler::RunStatistics &s, StatsView::Tab tab)
{
    switch (tab) {
    case StatsView::OpsTab: return s.ops.size();
    case StatsView::KernelsTab: return s.kernels.size();
    case StatsView::CopiesTab: return s.copies.size() + (s.memsets.calls > 0 ? 1 : 0); // then the memsets
    default: return s.nodes.size();
    }
}

int timeColumn(StatsView::Tab tab)
{
    static const int columns[] = {OpStatsModel::TotalColumn, KernelStatsModel::TotalColumn, CopyStatsModel::TotalColumn,
                                  NodeStatsModel::TimeColumn};
    return columns[tab];
}

// The view, shown, on one document.
struct ViewFixture {
    StatsView view;
    explicit ViewFixture(std::shared_ptr<const Document> doc)
    {
        view.resize(900, 600);
        view.setDocument(std::move(doc));
        view.show();
    }
};

} // namespace

class TestStats : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void models_data() { sourceAndTab(); }
    void models();
    void sortByTotal_data() { sourceAndTab(); }
    void sortByTotal();
    void filter_data() { sourceAndTab(); }
    void filter();
    void copyTsv_data() { sources(); }
    void copyTsv();
    void columnWidths_data() { sourceAndTab(); }
    void columnWidths();
    void doubleClick_data() { sourceAndTab(); }
    void doubleClick();
    void launchShapes();
    void memsetsFollowTheCopies();
    void emptyState_data();
    void emptyState();

private:
    void sources();
    void sourceAndTab();
    std::shared_ptr<const Document> fetchDocument();

    QTemporaryDir m_dir;
    std::map<QString, std::shared_ptr<const Document>> m_documents;
    std::map<QString, QString> m_missing; // why a source is absent
};

void TestStats::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QString why;
    m_documents["recording"] = recordEncoder(m_dir.path(), &why);
    m_missing["recording"] = why;
    if (QFileInfo::exists(kKineto)) {
        std::optional<profiler::Trace> t = profiler::importKineto({kKineto.toStdString()});
        QVERIFY(t);
        m_documents["kineto"] = documentOf(std::move(*t));
    } else {
        m_missing["kineto"] = QStringLiteral("the shared test data is not there");
    }
}

void TestStats::sources()
{
    QTest::addColumn<QString>("source");
    QTest::newRow("recording") << QStringLiteral("recording");
    QTest::newRow("kineto") << QStringLiteral("kineto");
}

void TestStats::sourceAndTab()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("tab");
    static const char *const tabs[] = {"ops", "kernels", "copies", "nodes"};
    for (const char *source : {"recording", "kineto"}) {
        for (int t = 0; t < StatsView::TabCount; ++t)
            QTest::addRow("%s %s", source, tabs[t]) << QString::fromLatin1(source) << t;
    }
}

std::shared_ptr<const Document> TestStats::fetchDocument()
{
    QFETCH(QString, source);
    const auto it = m_documents.find(source);
    if (it == m_documents.end() || !it->second)
        qWarning("%s: %s", qPrintable(source), qPrintable(m_missing[source]));
    return it == m_documents.end() ? nullptr : it->second;
}

void TestStats::models()
{
    QFETCH(int, tab);
    auto doc = fetchDocument();
    if (!doc)
        QSKIP("source not available");
    const profiler::RunStatistics stats = profiler::computeStatistics(*doc->trace, doc->trace->runs[0]);
    OpStatsModel ops;
    KernelStatsModel kernels;
    CopyStatsModel copies;
    NodeStatsModel nodes;
    StatsTableModel *all[] = {&ops, &kernels, &copies, &nodes};
    StatsTableModel *model = all[tab];
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model->setStatistics(statsDataOf(*doc));
    QCOMPARE(size_t(model->rowCount()), expectedRows(stats, StatsView::Tab(tab)));
    model->setStatistics(nullptr);
    QCOMPARE(model->rowCount(), 0);
}

void TestStats::sortByTotal()
{
    QFETCH(int, tab);
    auto doc = fetchDocument();
    if (!doc)
        QSKIP("source not available");
    ViewFixture f(doc);
    const auto t = StatsView::Tab(tab);
    QSortFilterProxyModel *proxy = f.view.proxy(t);
    if (proxy->rowCount() < 2)
        QSKIP("fewer than two rows");
    const int totalColumn = timeColumn(t);
    f.view.table(t)->sortByColumn(1, Qt::AscendingOrder); // away from the default first
    f.view.table(t)->sortByColumn(totalColumn, Qt::DescendingOrder);
    double largest = 0;
    for (int r = 0; r < proxy->rowCount(); ++r)
        largest = std::max(largest, proxy->index(r, totalColumn).data(StatsTableModel::SortRole).toDouble());
    QCOMPARE(proxy->index(0, totalColumn).data(StatsTableModel::SortRole).toDouble(), largest);
    QVERIFY(largest > 0);
}

void TestStats::filter()
{
    QFETCH(int, tab);
    auto doc = fetchDocument();
    if (!doc)
        QSKIP("source not available");
    ViewFixture f(doc);
    const auto t = StatsView::Tab(tab);
    f.view.tabs()->setCurrentIndex(tab);
    StatsTableModel *model = f.view.model(t);
    if (model->rowCount() == 0)
        QSKIP("no rows");
    // The last row's name, in the other case, minus its first character.
    const QString name = model->name(model->rowCount() - 1);
    const QString needle = (name.size() > 3 ? name.mid(1) : name).toUpper();
    int matching = 0;
    for (int r = 0; r < model->rowCount(); ++r)
        matching += model->name(r).contains(needle, Qt::CaseInsensitive) ? 1 : 0;
    f.view.filterEdit()->setText(needle);
    QSortFilterProxyModel *proxy = f.view.proxy(t);
    QCOMPARE(proxy->rowCount(), matching);
    QVERIFY(matching >= 1);
    for (int r = 0; r < proxy->rowCount(); ++r)
        QVERIFY(proxy->index(r, 0).data(StatsTableModel::NameRole).toString().contains(needle, Qt::CaseInsensitive));
    // Only the current tab filters.
    const auto other = StatsView::Tab((tab + 1) % StatsView::TabCount);
    QCOMPARE(f.view.proxy(other)->rowCount(), f.view.model(other)->rowCount());
    f.view.filterEdit()->clear();
    QCOMPARE(proxy->rowCount(), model->rowCount());
}

void TestStats::copyTsv()
{
    auto doc = fetchDocument();
    if (!doc)
        QSKIP("source not available");
    ViewFixture f(doc);
    QTableView *table = f.view.table(StatsView::OpsTab);
    QAbstractItemModel *proxy = table->model();
    QVERIFY(proxy->rowCount() >= 2);
    QApplication::clipboard()->clear();
    table->setFocus();
    table->selectRow(0);
    table->selectionModel()->select(proxy->index(1, 0),
                                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QTest::keyClick(table, Qt::Key_C, Qt::ControlModifier);
    const QStringList lines = QApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines[0], QStringLiteral("Op\tCalls\tTotal\tSelf\tAvg\tMin\tMax\t%"));
    for (int r = 0; r < 2; ++r) {
        const QStringList cells = lines[r + 1].split(QLatin1Char('\t'));
        QCOMPARE(cells.size(), proxy->columnCount());
        QCOMPARE(cells[0], proxy->index(r, 0).data().toString());
        QCOMPARE(cells[2], proxy->index(r, OpStatsModel::TotalColumn).data().toString());
    }
}

// The numbers show in full and the name column takes the rest of the width
// (the last column used to stretch, leaving names a dozen characters).
void TestStats::columnWidths()
{
    QFETCH(int, tab);
    auto doc = fetchDocument();
    if (!doc)
        QSKIP("source not available");
    ViewFixture f(doc);
    f.view.tabs()->setCurrentIndex(tab);
    QVERIFY(QTest::qWaitForWindowExposed(&f.view));
    QTableView *table = f.view.table(StatsView::Tab(tab));
    if (table->model()->rowCount() == 0)
        QSKIP("no rows");
    QAbstractItemModel *model = table->model();
    const auto textWidth = [&](int c) { // the column's widest text, header included
        int w = table->horizontalHeader()->fontMetrics().horizontalAdvance(model->headerData(c, Qt::Horizontal).toString());
        for (int r = 0; r < model->rowCount(); ++r)
            w = std::max(w, table->fontMetrics().horizontalAdvance(model->index(r, c).data().toString()));
        return w;
    };
    int numbers = 0; // what the number columns need at most: their text, margins and sort arrow
    for (int c = 1; c < model->columnCount(); ++c) {
        const int shown = table->columnWidth(c);
        table->resizeColumnToContents(c);
        QVERIFY2(shown >= table->columnWidth(c), qPrintable(QString::number(c)));
        numbers += textWidth(c) + 40;
    }
    const int rest = table->viewport()->width() - numbers;
    QVERIFY2(table->columnWidth(0) >= std::min(textWidth(0), rest),
             qPrintable(QStringLiteral("name column %1 px, %2 px left by the numbers")
                            .arg(table->columnWidth(0))
                            .arg(rest)));
}

void TestStats::doubleClick()
{
    QFETCH(int, tab);
    auto doc = fetchDocument();
    if (!doc)
        QSKIP("source not available");
    ViewFixture f(doc);
    const auto t = StatsView::Tab(tab);
    f.view.tabs()->setCurrentIndex(tab);
    QVERIFY(QTest::qWaitForWindowExposed(&f.view));
    QTableView *table = f.view.table(t);
    if (table->model()->rowCount() == 0)
        QSKIP("no rows");
    QSignalSpy events(&f.view, &StatsView::eventsRequested);
    QSignalSpy nodes(&f.view, &StatsView::nodeRequested);
    const QModelIndex first = table->model()->index(0, 0);
    // A widget's mouseDClick sends the double-click alone; the view wants the press before it.
    const QPoint centre = table->visualRect(first).center();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, centre);
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, centre);
    QCOMPARE(events.size(), 1);
    QCOMPARE(events[0][0].toString(), first.data(StatsTableModel::NameRole).toString());
    QCOMPARE(events[0][1].toInt(), tab);
    QCOMPARE(nodes.size(), t == StatsView::NodesTab ? 1 : 0);
    if (t == StatsView::NodesTab)
        QCOMPARE(nodes[0][0].toInt(), first.data(NodeStatsModel::NodeIdRole).toInt());
}

// The copies tab ends with the GPU memsets (alexnet's trace has 3): their
// calls and bytes, under the name Kineto's memset events carry ("Memset …").
void TestStats::memsetsFollowTheCopies()
{
    const auto it = m_documents.find(QStringLiteral("kineto"));
    if (it == m_documents.end() || !it->second)
        QSKIP("the shared test data is not there");
    const profiler::RunStatistics stats = profiler::computeStatistics(*it->second->trace, it->second->trace->runs[0]);
    QCOMPARE(stats.memsets.calls, int64_t(3));
    CopyStatsModel copies;
    copies.setStatistics(statsDataOf(*it->second));
    const int last = copies.rowCount() - 1;
    QCOMPARE(last, int(stats.copies.size()));
    QCOMPARE(copies.name(last), QStringLiteral("Memset"));
    QCOMPARE(copies.index(last, CopyStatsModel::CallsColumn).data().toString(), QStringLiteral("3"));
    QCOMPARE(copies.index(last, CopyStatsModel::BytesColumn).data(StatsTableModel::SortRole).toDouble(),
             stats.memsets.bytes);
}

// The most frequent grid/block of each kernel name wins.
void TestStats::launchShapes()
{
    profiler::Trace trace;
    profiler::Run &run = trace.runs.emplace_back();
    const profiler::StringId gemm = trace.strings.intern("gemm");
    auto launch = [&](int grid, int block) {
        profiler::EventArgs a;
        a.grid[0] = grid;
        a.grid[1] = a.grid[2] = a.block[1] = a.block[2] = 1;
        a.block[0] = block;
        profiler::Event e;
        e.kind = profiler::EventKind::Kernel;
        e.name = gemm;
        e.duration = 10;
        e.args = profiler::ArgsId(uint32_t(run.args.size()));
        run.args.push_back(a);
        run.events.push_back(e);
    };
    launch(64, 128);
    launch(32, 256);
    launch(32, 256);
    const auto shapes = mostCommonLaunchShapes(trace, run);
    QCOMPARE(shapes.size(), size_t(1));
    QCOMPARE(shapes.at("gemm").grid[0], 32);
    QCOMPARE(shapes.at("gemm").block[0], 256);
}

void TestStats::emptyState_data()
{
    QTest::addColumn<std::shared_ptr<const Document>>("document");
    QTest::addColumn<bool>("empty");
    auto noTrace = std::make_shared<Document>();
    auto noRun = std::make_shared<Document>();
    noRun->trace = std::make_shared<const profiler::Trace>();
    profiler::Trace oneRun;
    oneRun.runs.emplace_back();
    QTest::newRow("no document") << std::shared_ptr<const Document>() << true;
    QTest::newRow("no trace") << std::shared_ptr<const Document>(noTrace) << true;
    QTest::newRow("no run") << std::shared_ptr<const Document>(noRun) << true;
    QTest::newRow("an empty run") << documentOf(std::move(oneRun)) << false;
}

void TestStats::emptyState()
{
    QFETCH(std::shared_ptr<const Document>, document);
    QFETCH(bool, empty);
    ViewFixture f(document);
    QCOMPARE(f.view.isEmptyStateShown(), empty);
    QCOMPARE(f.view.tabs()->isVisible(), !empty);
    if (empty) {
        const auto labels = f.view.findChildren<QLabel *>();
        const bool said = std::any_of(labels.begin(), labels.end(), [](const QLabel *l) {
            return l->isVisible() && l->text() == QStringLiteral("This file holds no recorded run");
        });
        QVERIFY(said);
    }
}

QTEST_MAIN(TestStats)
#include "tst_views_stats.moc"
