#pragma once
// One table of the Compare view: the graph nodes, ops or kernels of a
// RunComparison, each row the two sides' calls and times, the delta and the
// speedup. SortRole gives raw numbers, so a proxy sorts 9 µs below 10 ms.

#include "profiler/compare.h"

#include <QAbstractTableModel>

#include <memory>

namespace fusescope {

class CompareModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Table { NodesTable, OpsTable, KernelsTable, TableCount };
    enum Column {
        NameColumn, DetailColumn, BaseCallsColumn, OtherCallsColumn, BaseTimeColumn, OtherTimeColumn, DeltaColumn,
        SpeedupColumn, ColumnCount,
    };
    enum Role {
        SortRole = Qt::UserRole + 1,
        NameRole,   // QString: the op, kernel or node name
        NodeIdRole, // int: the captured node's id, -1 outside the nodes table
        InOtherRole // bool: the row exists on the second (shown) side
    };

    CompareModel(Table table, QObject *parent = nullptr);

    void setComparison(std::shared_ptr<const profiler::RunComparison> comparison);
    const profiler::DeltaRow *row(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const std::vector<profiler::DeltaRow> *rows() const;
    QString text(const profiler::DeltaRow &row, int column) const;
    QVariant sortKey(const profiler::DeltaRow &row, int column) const;
    QVariant foreground(const profiler::DeltaRow &row, int column) const;
    QString toolTip(const profiler::DeltaRow &row) const;

    Table m_table;
    std::shared_ptr<const profiler::RunComparison> m_comparison;
};

// "3.10× faster", "1.25× slower", "same".
QString formatSpeedup(double speedup);

} // namespace fusescope
