#pragma once

#include "views/document.h"
#include "views/graphdiff.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace fusescope {

// The compile stages of a document, one row each, with what every stage
// changed in the graph against the stage before it in the same segment.
class StageListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, DurationColumn, NodesColumn, KernelsColumn, BytesColumn, ChangesColumn, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1 };

    explicit StageListModel(QObject *parent = nullptr);

    // Diffs every stage against its predecessor, then resets in one batch.
    void setDocument(std::shared_ptr<const Document> document);
    const Document *document() const { return m_document.get(); }

    // The row of the stage before `row` in the same segment, or -1.
    int previousInSegment(int row) const;
    // Empty for a segment's first stage or a stage whose graph is missing.
    const GraphDiff &diff(int row) const;
    // "simplify vs decompose: +0 −5 ~3"; "capture: 42 nodes" for a first stage.
    QString diffSummary(int row) const;
    // "fuse" or "fuse (segment 1)".
    QString stageTitle(int row) const;
    // The stage's log lines, one a line; "" when it logged nothing.
    QString logText(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant displayData(int row, int column) const;
    QVariant sortData(int row, int column) const;
    QString changesText(int row) const;

    std::shared_ptr<const Document> m_document;
    std::vector<int> m_previous; // parallel to the stages
    std::vector<GraphDiff> m_diffs;
};

} // namespace fusescope
