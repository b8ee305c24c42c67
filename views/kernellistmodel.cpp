#include "views/kernellistmodel.h"

#include <QLocale>

namespace fusescope {
namespace {

// Before fuse there are no kernels; a trace written without a fuse stage may
// still carry kernels on a later stage's graph.
std::shared_ptr<const StageGraph> kernelGraph(const Document &doc, int segment)
{
    const int fuse = doc.stageIndex("fuse", segment);
    if (fuse >= 0 && size_t(fuse) < doc.graphs.size() && doc.graphs[size_t(fuse)])
        return doc.graphs[size_t(fuse)];
    for (size_t i = 0; i < doc.stages.size() && i < doc.graphs.size(); ++i) {
        if (doc.stages[i].segment == segment && doc.graphs[i] && !doc.graphs[i]->kernels.empty())
            return doc.graphs[i];
    }
    return nullptr;
}

} // namespace

QString formatKernelTime(double ns)
{
    const QLocale locale;
    if (ns < 1e3)
        return locale.toString(ns, 'f', 0) + QStringLiteral(" ns");
    if (ns < 1e6)
        return locale.toString(ns / 1e3, 'f', 1) + QStringLiteral(" µs");
    if (ns < 1e9)
        return locale.toString(ns / 1e6, 'f', 2) + QStringLiteral(" ms");
    return locale.toString(ns / 1e9, 'f', 2) + QStringLiteral(" s");
}

KernelListModel::KernelListModel(QObject *parent) : QAbstractTableModel(parent) {}

void KernelListModel::setDocument(std::shared_ptr<const Document> document, int segment)
{
    std::shared_ptr<const StageGraph> graph = document ? kernelGraph(*document, segment) : nullptr;
    beginResetModel();
    m_document = std::move(document);
    m_graph = std::move(graph);
    endResetModel();
}

const GraphKernel &KernelListModel::kernel(int row) const
{
    Q_ASSERT(row >= 0 && row < rowCount());
    return m_graph->kernels[size_t(row)];
}

QString KernelListModel::kernelName(int row) const
{
    return row >= 0 && row < rowCount() ? QString::fromStdString(kernel(row).name) : QString();
}

QList<int> KernelListModel::nodeIds(int row) const
{
    const std::vector<int> &nodes = kernel(row).nodes;
    return QList<int>(nodes.begin(), nodes.end());
}

int KernelListModel::rowOf(const QString &name) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (kernelName(row) == name)
            return row;
    }
    return -1;
}

double KernelListModel::timeNs(int row) const
{
    if (!isProfiled())
        return -1;
    const auto it = m_document->kernelTimeNs.find(kernel(row).name);
    return it == m_document->kernelTimeNs.end() ? -1 : it->second;
}

int KernelListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_graph ? 0 : int(m_graph->kernels.size());
}

int KernelListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    switch (role) {
    case Qt::DisplayRole:
        return displayData(index.row(), index.column());
    case Qt::ToolTipRole:
        return toolTip(index.row());
    case SortRole:
        return sortData(index.row(), index.column());
    case NodeIdsRole:
        return QVariant::fromValue(nodeIds(index.row()));
    case Qt::TextAlignmentRole:
        return index.column() >= NodesColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default:
        return {};
    }
}

QVariant KernelListModel::displayData(int row, int column) const
{
    const GraphKernel &k = kernel(row);
    switch (column) {
    case NameColumn:
        return QString::fromStdString(k.name);
    case KindColumn:
        return QString::fromStdString(k.kind);
    case NodesColumn:
        return qulonglong(k.nodes.size());
    case TimeColumn:
        return timeNs(row) < 0 ? QString() : formatKernelTime(timeNs(row));
    }
    return {};
}

QVariant KernelListModel::sortData(int row, int column) const
{
    switch (column) {
    case NodesColumn:
        return qulonglong(kernel(row).nodes.size());
    case TimeColumn:
        return timeNs(row);
    default:
        return displayData(row, column);
    }
}

QString KernelListModel::toolTip(int row) const
{
    const GraphKernel &k = kernel(row);
    const QLocale locale;
    QString text = tr("%1: %2, reads %3, writes %4")
                       .arg(QString::fromStdString(k.name), QString::fromStdString(k.kind),
                            locale.formattedDataSize(qint64(k.bytesRead), 1, QLocale::DataSizeSIFormat),
                            locale.formattedDataSize(qint64(k.bytesWritten), 1, QLocale::DataSizeSIFormat));
    if (!k.reason.empty())
        text += QLatin1Char('\n') + QString::fromStdString(k.reason);
    return text;
}

QVariant KernelListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *const titles[] = {QT_TR_NOOP("Kernel"), QT_TR_NOOP("Kind"), QT_TR_NOOP("Nodes"),
                                         QT_TR_NOOP("Time")};
    return section >= 0 && section < ColumnCount ? tr(titles[section]) : QVariant();
}

} // namespace fusescope
