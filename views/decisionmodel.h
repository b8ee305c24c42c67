#pragma once

#include "views/stagegraph.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <memory>

namespace fusescope {

// The fuse stage's decisions, one row each: the pairs it fused (with the
// bytes that no longer go through memory and the kernel they ended in) and
// the pairs it refused, with the reason. Sort through a QSortFilterProxyModel
// with sortRole() == SortRole.
class DecisionModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { DecisionColumn, ProducerColumn, ConsumerColumn, BytesSavedColumn, KernelColumn, ReasonColumn,
                  ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1,
        NodeNamesRole, // QStringList: the producer and the consumer
        NodeIdsRole,   // QList<int>: their ids in the graph
        FusedRole,     // bool
    };

    explicit DecisionModel(QObject *parent = nullptr);

    // A graph without decisions (any stage but fuse) empties the model.
    void setGraph(std::shared_ptr<const StageGraph> graph);
    const StageGraph *graph() const { return m_graph.get(); }

    const GraphDecision &decision(int row) const;
    QStringList nodeNames(int row) const;
    QList<int> nodeIds(int row) const;
    // The kernel holding a fused pair's consumer; "" for a refusal.
    QString kernelName(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant displayData(int row, int column) const;
    QVariant sortData(int row, int column) const;

    std::shared_ptr<const StageGraph> m_graph;
};

} // namespace fusescope
