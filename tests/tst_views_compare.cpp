// The Compare view on a real --compare recording made by the binary: the
// three models hold the comparison's rows and pass QAbstractItemModelTester,
// the summary states the speedup, rows lead to the graph and the timeline,
// a newer pair of runs replaces an older one, Ctrl+C copies TSV, and the
// empty state explains how to get something to compare.
#include "views/compareview.h"
// After a Qt header: moc cannot parse <concepts> when it comes first.
#include "profiler/tracereader.h"
#include "views/sortabletable.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace fusescope;

namespace {

// Each run of the file as a document of its own, as the loader makes them.
std::vector<std::shared_ptr<Document>> runDocuments(const QString &path)
{
    profiler::TraceReader reader(path.toStdString());
    std::vector<std::shared_ptr<Document>> docs;
    for (size_t i = 0; i < reader.runs().size(); ++i) {
        auto trace = std::make_shared<profiler::Trace>();
        if (!reader.loadRun(int(i), *trace))
            return {};
        auto doc = std::make_shared<Document>();
        doc->title = reader.runs()[i].info.name;
        setRecordedRun(*doc, std::move(trace));
        docs.push_back(std::move(doc));
    }
    return docs;
}

QString record(const QString &dir, const QString &model, QString *why)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    const QString path = dir + QLatin1Char('/') + model + QStringLiteral(".fstrace");
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FUSESCOPE_BINARY), {QStringLiteral("profile"), model, QStringLiteral("--compare"),
                                               QStringLiteral("--steps"), QStringLiteral("2"), QStringLiteral("-o"),
                                               path});
    if (!p.waitForFinished(300000) || p.exitCode() != 0) {
        *why = QString::fromUtf8(p.readAllStandardError());
        return {};
    }
    return path;
}

int rowOf(const QSortFilterProxyModel &proxy, const QString &name)
{
    for (int r = 0; r < proxy.rowCount(); ++r) {
        if (proxy.index(r, CompareModel::NameColumn).data().toString() == name)
            return r;
    }
    return -1;
}

} // namespace

class TestCompareView : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::shared_ptr<Document> m_eager, m_compiled;

    // The view, shown, on the recorded pair; the comparison done.
    bool showPair(CompareView &view)
    {
        QSignalSpy ready(&view, &CompareView::comparisonReady);
        view.setRuns(m_eager, m_compiled);
        return ready.wait(10000);
    }

private slots:
    void initTestCase()
    {
        QString why;
        const QString path = record(m_dir.path(), QStringLiteral("encoder"), &why);
        QVERIFY2(!path.isEmpty(), qPrintable(why));
        std::vector<std::shared_ptr<Document>> docs = runDocuments(path);
        QCOMPARE(docs.size(), size_t(2));
        m_eager = docs[0];
        m_compiled = docs[1];
    }

    void modelsHoldTheComparison()
    {
        CompareView view;
        view.resize(1000, 600);
        view.show();
        QVERIFY(showPair(view));
        QVERIFY(!view.isEmptyStateShown() && !view.isBusy());
        const profiler::RunComparison &c = *view.comparison();
        const std::vector<profiler::DeltaRow> *rows[] = {&c.nodes, &c.ops, &c.kernels};
        for (int t = 0; t < CompareModel::TableCount; ++t) {
            CompareModel *model = view.model(CompareModel::Table(t));
            QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
            QCOMPARE(model->rowCount(), int(rows[t]->size()));
            for (int r = 0; r < model->rowCount(); ++r)
                QCOMPARE(model->index(r, CompareModel::DeltaColumn).data(CompareModel::SortRole).toDouble(),
                         (*rows[t])[size_t(r)].deltaNs());
        }
        QVERIFY(!c.nodes.empty());
        QCOMPARE(view.tabs()->currentIndex(), int(CompareModel::NodesTable));
        // The headers name the two runs.
        QVERIFY(view.model(CompareModel::OpsTable)->headerData(CompareModel::BaseTimeColumn, Qt::Horizontal)
                    .toString().contains(QLatin1String("eager")));
        QVERIFY(view.summaryText().contains(QLatin1String("compiled")));
        // The verdict is the measured speedup's (compiled may be faster, slower or
        // within 0.5% of eager on a given machine), in bold after the two medians.
        QVERIFY(c.speedup > 0);
        QVERIFY2(view.summaryText().contains(QStringLiteral(", <b>%1</b>").arg(formatSpeedup(c.speedup))),
                 qPrintable(view.summaryText()));
    }

    // The verdict's words: within 0.5% is "same", else the factor either way.
    void speedupWords()
    {
        QCOMPARE(formatSpeedup(2.0), QStringLiteral("2.00× faster"));
        QCOMPARE(formatSpeedup(0.5), QStringLiteral("2.00× slower"));
        QCOMPARE(formatSpeedup(1.004), QStringLiteral("same"));
        QCOMPARE(formatSpeedup(0.996), QStringLiteral("same"));
        QCOMPARE(formatSpeedup(0), QString());
    }

    // The proxies sort by raw numbers: the biggest saving first when Δ ascends.
    void sortsByRawDelta()
    {
        CompareView view;
        QVERIFY(showPair(view));
        QSortFilterProxyModel *proxy = view.proxy(CompareModel::NodesTable);
        for (int r = 1; r < proxy->rowCount(); ++r)
            QVERIFY(proxy->index(r - 1, CompareModel::DeltaColumn).data(CompareModel::SortRole).toDouble() <=
                    proxy->index(r, CompareModel::DeltaColumn).data(CompareModel::SortRole).toDouble());
    }

    void rowsLeadToTheGraphAndTheTimeline()
    {
        CompareView view;
        view.resize(1000, 600);
        view.show();
        QVERIFY(showPair(view));
        QSignalSpy nodes(&view, &CompareView::nodeRequested);
        QSignalSpy events(&view, &CompareView::eventsRequested);
        QTableView *table = view.table(CompareModel::NodesTable);
        const QModelIndex first = table->model()->index(0, 0);
        emit table->doubleClicked(first);
        QCOMPARE(nodes.size(), 1);
        QCOMPARE(nodes.at(0).at(0).toInt(), first.data(CompareModel::NodeIdRole).toInt());
        // A kernel of the shown (compiled) run goes to the timeline; the eager run's own do not.
        view.tabs()->setCurrentIndex(CompareModel::KernelsTable);
        QSortFilterProxyModel *kernels = view.proxy(CompareModel::KernelsTable);
        int shown = -1, eagerOnly = -1;
        for (int r = 0; r < kernels->rowCount(); ++r) {
            const bool inOther = kernels->index(r, 0).data(CompareModel::InOtherRole).toBool();
            (inOther ? shown : eagerOnly) = r;
        }
        QVERIFY(shown >= 0 && eagerOnly >= 0);
        emit view.table(CompareModel::KernelsTable)->doubleClicked(kernels->index(eagerOnly, 0));
        QCOMPARE(events.size(), 0);
        emit view.table(CompareModel::KernelsTable)->doubleClicked(kernels->index(shown, 0));
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.at(0).at(0).toString(), kernels->index(shown, 0).data().toString());
        QCOMPARE(events.at(0).at(1).toInt(), 1);
    }

    void filterAppliesToTheCurrentTable()
    {
        CompareView view;
        QVERIFY(showPair(view));
        view.tabs()->setCurrentIndex(CompareModel::OpsTable);
        view.filterEdit()->setText(QStringLiteral("LINEAR"));
        QSortFilterProxyModel *ops = view.proxy(CompareModel::OpsTable);
        QCOMPARE(ops->rowCount(), 1);
        QCOMPARE(ops->index(0, 0).data().toString(), QStringLiteral("aten.linear"));
        QCOMPARE(view.proxy(CompareModel::KernelsTable)->rowCount(), view.model(CompareModel::KernelsTable)->rowCount());
    }

    void copiesSelectedRowsAsTsv()
    {
        CompareView view;
        view.resize(1000, 600);
        view.show();
        QVERIFY(showPair(view));
        view.tabs()->setCurrentIndex(CompareModel::OpsTable);
        QTableView *table = view.table(CompareModel::OpsTable);
        const int row = rowOf(*view.proxy(CompareModel::OpsTable), QStringLiteral("aten.gelu"));
        QVERIFY(row >= 0);
        table->selectRow(row);
        table->setFocus();
        QTest::keySequence(table, QKeySequence::Copy);
        const QStringList lines = QApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines[0].startsWith(QLatin1String("Name\t")));
        QVERIFY(lines[1].startsWith(QLatin1String("aten.gelu\t")));
        QCOMPARE(lines[1].count(QLatin1Char('\t')), CompareModel::ColumnCount - 1);
    }

    // Only the last of several quick requests is shown.
    void newerRunsReplaceOlderOnes()
    {
        CompareView view;
        QSignalSpy ready(&view, &CompareView::comparisonReady);
        view.setRuns(m_compiled, m_eager);
        view.setRuns(m_eager, m_compiled);
        QVERIFY(ready.wait(10000));
        QTest::qWait(100); // the older result, if it were delivered, would arrive by now
        QCOMPARE(ready.size(), 1);
        QCOMPARE(view.comparison()->baseLabel, std::string("eager"));
    }

    void emptyStateWithoutTwoRuns()
    {
        CompareView view;
        QVERIFY(view.isEmptyStateShown());
        view.setDocument(m_compiled); // no baseline
        QVERIFY(view.isEmptyStateShown());
        QVERIFY(!view.comparison());
        auto withBaseline = std::make_shared<Document>(*m_compiled);
        withBaseline->baseline = m_eager;
        QSignalSpy ready(&view, &CompareView::comparisonReady);
        view.setDocument(withBaseline);
        QVERIFY(!view.isEmptyStateShown());
        QVERIFY(ready.wait(10000));
        QCOMPARE(view.comparison()->otherLabel, std::string("compiled"));
        view.setDocument(nullptr);
        QVERIFY(view.isEmptyStateShown());
        QCOMPARE(view.model(CompareModel::NodesTable)->rowCount(), 0);
    }
};

QTEST_MAIN(TestCompareView)
#include "tst_views_compare.moc"
