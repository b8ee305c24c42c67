#include "views/decisionmodel.h"

#include <QLocale>

namespace fusescope {

DecisionModel::DecisionModel(QObject *parent) : QAbstractTableModel(parent) {}

void DecisionModel::setGraph(std::shared_ptr<const StageGraph> graph)
{
    beginResetModel();
    m_graph = std::move(graph);
    endResetModel();
}

const GraphDecision &DecisionModel::decision(int row) const
{
    Q_ASSERT(row >= 0 && row < rowCount());
    return m_graph->decisions[size_t(row)];
}

QStringList DecisionModel::nodeNames(int row) const
{
    const GraphDecision &d = decision(row);
    return {QString::fromStdString(d.producer), QString::fromStdString(d.consumer)};
}

QList<int> DecisionModel::nodeIds(int row) const
{
    QList<int> ids;
    for (const QString &name : nodeNames(row)) {
        if (const GraphNode *node = m_graph->findByName(name.toStdString()))
            ids << node->id;
    }
    return ids;
}

QString DecisionModel::kernelName(int row) const
{
    const GraphDecision &d = decision(row);
    const GraphNode *consumer = d.fused ? m_graph->findByName(d.consumer) : nullptr;
    return consumer ? QString::fromStdString(consumer->kernel) : QString();
}

int DecisionModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_graph ? 0 : int(m_graph->decisions.size());
}

int DecisionModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DecisionModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    switch (role) {
    case Qt::DisplayRole:
        return displayData(row, index.column());
    case Qt::ToolTipRole:
        return QString::fromStdString(decision(row).text());
    case SortRole:
        return sortData(row, index.column());
    case NodeNamesRole:
        return nodeNames(row);
    case NodeIdsRole:
        return QVariant::fromValue(nodeIds(row));
    case FusedRole:
        return decision(row).fused;
    case Qt::TextAlignmentRole:
        return index.column() == BytesSavedColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default:
        return {};
    }
}

QVariant DecisionModel::displayData(int row, int column) const
{
    const GraphDecision &d = decision(row);
    switch (column) {
    case DecisionColumn:
        return d.fused ? tr("fused") : tr("refused");
    case ProducerColumn:
        return QString::fromStdString(d.producer);
    case ConsumerColumn:
        return QString::fromStdString(d.consumer);
    case BytesSavedColumn:
        return d.fused ? QLocale().formattedDataSize(qint64(d.bytesSaved), 1, QLocale::DataSizeSIFormat) : QString();
    case KernelColumn:
        return kernelName(row);
    case ReasonColumn:
        return QString::fromStdString(d.reason);
    }
    return {};
}

QVariant DecisionModel::sortData(int row, int column) const
{
    if (column == BytesSavedColumn)
        return decision(row).fused ? decision(row).bytesSaved : -1.0;
    return displayData(row, column);
}

QVariant DecisionModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *const titles[] = {QT_TR_NOOP("Decision"),    QT_TR_NOOP("Producer"),
                                         QT_TR_NOOP("Consumer"),    QT_TR_NOOP("Bytes saved"),
                                         QT_TR_NOOP("Kernel"),      QT_TR_NOOP("Reason")};
    return section >= 0 && section < ColumnCount ? tr(titles[section]) : QVariant();
}

} // namespace fusescope
