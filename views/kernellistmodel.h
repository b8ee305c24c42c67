#pragma once

#include "views/document.h"

#include <QAbstractTableModel>

#include <memory>

namespace fusescope {

// The fused kernels of one segment, in run order, as the fuse stage formed
// them, with the measured time of each when the document was profiled.
class KernelListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, NodesColumn, TimeColumn, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1,
        NodeIdsRole, // QList<int>: the kernel's member nodes
    };

    explicit KernelListModel(QObject *parent = nullptr);

    void setDocument(std::shared_ptr<const Document> document, int segment = 0);
    // The graph the kernels come from; null when the segment has no fuse stage.
    const StageGraph *graph() const { return m_graph.get(); }
    bool isProfiled() const { return m_document && m_document->profiled; }

    const GraphKernel &kernel(int row) const;
    QString kernelName(int row) const;
    QList<int> nodeIds(int row) const;
    int rowOf(const QString &name) const; // -1 when absent
    // Total measured time of the kernel, or a negative number when unknown.
    double timeNs(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant displayData(int row, int column) const;
    QVariant sortData(int row, int column) const;
    QString toolTip(int row) const;

    std::shared_ptr<const Document> m_document;
    std::shared_ptr<const StageGraph> m_graph;
};

// "12.3 µs", "4.56 ms", "1.20 s".
QString formatKernelTime(double ns);

} // namespace fusescope
