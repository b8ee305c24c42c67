#pragma once
// The range statistics of a timeline selection as a table: per event name,
// its kind, how many events overlap the range, their time clipped to it and
// the share of the range. Sortable by raw numbers, filterable, Ctrl+C as TSV;
// a double-click asks the timeline for the name's events.

#include "views/timelinerangestats.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace fusescope {

class RangeStatsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, CountColumn, TotalColumn, PercentColumn, ColumnCount };
    static constexpr int SortRole = Qt::UserRole + 1;

    using QAbstractTableModel::QAbstractTableModel;
    void setRows(std::vector<RangeStatRow> rows);
    const std::vector<RangeStatRow> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<RangeStatRow> m_rows;
};

class RangeStatsView : public QWidget
{
    Q_OBJECT
public:
    explicit RangeStatsView(QWidget *parent = nullptr);

    // The statistics of [t0, t1] on `model`'s run.
    void showRange(const TimelineModel &model, int64_t t0, int64_t t1);
    // Rows timelineRangeStats already computed for [t0, t1].
    void showRows(std::vector<RangeStatRow> rows, int64_t t0, int64_t t1);
    void clear();
    bool isEmptyStateShown() const;
    RangeStatsModel *model() const { return m_model; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QTableView *table() const { return m_table; }
    QString summaryText() const;

signals:
    void eventsRequested(const QString &name);

private:
    QLabel *m_summary = nullptr;
    QLineEdit *m_filter = nullptr;
    QTableView *m_table = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    RangeStatsModel *m_model = nullptr;
    bool m_empty = true;
};

} // namespace fusescope
