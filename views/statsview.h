#pragma once
// The Statistics view: sortable tables of the shown run's ops, kernels,
// copies and graph nodes, a filter on the current table's names, Ctrl+C as
// TSV, and a double-click that asks the timeline for the row's events.

#include "views/document.h"

#include <QWidget>

#include <array>
#include <memory>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace fusescope {

struct StatsData;
class StatsTableModel;

class StatsView : public QWidget
{
    Q_OBJECT
public:
    enum Tab { OpsTab, KernelsTab, CopiesTab, NodesTab, TabCount };

    explicit StatsView(QWidget *parent = nullptr);
    ~StatsView() override;

    // Shows the document's run statistics, computed with the load in its
    // worker; only each kernel's most common grid/block is found here.
    void setDocument(std::shared_ptr<const Document> document);
    void setStatistics(std::shared_ptr<const StatsData> data);

    // The selected rows of the current table as TSV, header line first;
    // "" when nothing is selected.
    QString selectionAsTsv() const;
    // Selects and shows the first row of `tab` named `name` (a node's name in
    // the nodes tab) without switching tabs or emitting; false when none is.
    bool selectRow(Tab tab, const QString &name);
    // The name of `tab`'s current row, "" when none.
    QString selectedName(Tab tab) const;
    void copySelection() const;

    bool isEmptyStateShown() const;
    QTabWidget *tabs() const { return m_tabs; }
    QLineEdit *filterEdit() const { return m_filter; }
    QTableView *table(Tab tab) const { return m_tables[size_t(tab)]; }
    QSortFilterProxyModel *proxy(Tab tab) const { return m_proxies[size_t(tab)]; }
    StatsTableModel *model(Tab tab) const { return m_models[size_t(tab)]; }

signals:
    // kind: 0 op, 1 kernel, 2 copy (name = the copy kind's name), 3 node.
    void eventsRequested(const QString &name, int kind);
    void nodeRequested(int nodeId);

private:
    QWidget *createContent();
    QTableView *createTable(Tab tab, StatsTableModel *model);
    void applyFilter();
    void activateRow(Tab tab, const QModelIndex &proxyIndex);
    void showEmptyState(bool empty);
    void sortByTime();
    void showWarnings(const StatsData *data);

    QLabel *m_emptyLabel = nullptr;
    QWidget *m_content = nullptr;
    QLineEdit *m_filter = nullptr;
    QLabel *m_warnings = nullptr;
    QTabWidget *m_tabs = nullptr;
    std::array<StatsTableModel *, TabCount> m_models = {};
    std::array<QSortFilterProxyModel *, TabCount> m_proxies = {};
    std::array<QTableView *, TabCount> m_tables = {};
    std::shared_ptr<const Document> m_document;
};

} // namespace fusescope
