#pragma once
// The Compare view: two recorded runs side by side — the eager and the
// compiled run of a `--compare` file, or the shown run against another
// file's — with the totals and overall speedup above tables of graph nodes,
// ops and kernels. The comparison is computed in a worker; a newer pair of
// runs drops the result of an older one.

#include "views/comparemodel.h"
#include "views/document.h"
#include "views/workerthreads.h"

#include <QWidget>

#include <array>
#include <memory>
#include <vector>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace fusescope {

class CompareView : public QWidget
{
    Q_OBJECT
public:
    explicit CompareView(QWidget *parent = nullptr);
    ~CompareView() override;

    // Compares the document's baseline run (the eager run of a `--compare`
    // file) with its shown run; the empty state when it has none.
    void setDocument(std::shared_ptr<const Document> document);
    // `base` against `other`, each the run 0 of its document's trace.
    void setRuns(std::shared_ptr<const Document> base, std::shared_ptr<const Document> other);

    std::shared_ptr<const profiler::RunComparison> comparison() const { return m_comparison; }
    bool isEmptyStateShown() const;
    bool isBusy() const { return m_busy; }
    QString summaryText() const;
    QTabWidget *tabs() const { return m_tabs; }
    QLineEdit *filterEdit() const { return m_filter; }
    QTableView *table(CompareModel::Table table) const { return m_tables[size_t(table)]; }
    QSortFilterProxyModel *proxy(CompareModel::Table table) const { return m_proxies[size_t(table)]; }
    CompareModel *model(CompareModel::Table table) const { return m_models[size_t(table)]; }

signals:
    // A double-click on a row of the shown run: kind 0 op, 1 kernel (as StatsView's).
    void eventsRequested(const QString &name, int kind);
    void nodeRequested(int nodeId);
    // Emitted when a comparison is shown.
    void comparisonReady();

private:
    QWidget *createContent();
    void showComparison(quint64 job, std::shared_ptr<const profiler::RunComparison> comparison, QString error);
    void showMessage(const QString &text);
    void applyFilter();
    void activateRow(CompareModel::Table table, const QModelIndex &proxyIndex);

    QLabel *m_message = nullptr;
    QWidget *m_content = nullptr;
    QLabel *m_summary = nullptr;
    QLineEdit *m_filter = nullptr;
    QTabWidget *m_tabs = nullptr;
    std::array<CompareModel *, CompareModel::TableCount> m_models = {};
    std::array<QSortFilterProxyModel *, CompareModel::TableCount> m_proxies = {};
    std::array<QTableView *, CompareModel::TableCount> m_tables = {};
    std::shared_ptr<const profiler::RunComparison> m_comparison;
    quint64 m_job = 0; // the comparison being shown or computed; older results are dropped
    bool m_busy = false;
    bool m_empty = true;
    WorkerThreads m_workers; // last, so destroyed first: the jobs end before the rest of the view
};

// The label a run carries in the Compare view: its name, else its mode, else the file's title.
std::string compareLabel(const Document &doc);

} // namespace fusescope
