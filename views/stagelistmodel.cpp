#include "views/stagelistmodel.h"

#include <QLocale>

namespace fusescope {
namespace {

std::vector<int> previousStages(const Document &doc)
{
    std::vector<int> previous(doc.stages.size(), -1);
    for (size_t i = 0; i < doc.stages.size(); ++i) {
        for (size_t j = i; j-- > 0;) {
            if (doc.stages[j].segment == doc.stages[i].segment) {
                previous[i] = int(j);
                break;
            }
        }
    }
    return previous;
}

GraphDiff diffStages(const Document &doc, int before, int after)
{
    if (before < 0 || size_t(after) >= doc.graphs.size())
        return {};
    const StageGraph *b = doc.graphs[size_t(before)].get(), *a = doc.graphs[size_t(after)].get();
    return b && a ? diffGraphs(*b, *a) : GraphDiff{};
}

} // namespace

StageListModel::StageListModel(QObject *parent) : QAbstractTableModel(parent) {}

void StageListModel::setDocument(std::shared_ptr<const Document> document)
{
    std::vector<int> previous;
    std::vector<GraphDiff> diffs;
    if (document) {
        previous = previousStages(*document);
        for (size_t i = 0; i < previous.size(); ++i)
            diffs.push_back(diffStages(*document, previous[i], int(i)));
    }
    beginResetModel();
    m_document = std::move(document);
    m_previous = std::move(previous);
    m_diffs = std::move(diffs);
    endResetModel();
}

int StageListModel::previousInSegment(int row) const
{
    return row >= 0 && size_t(row) < m_previous.size() ? m_previous[size_t(row)] : -1;
}

const GraphDiff &StageListModel::diff(int row) const
{
    static const GraphDiff none;
    return row >= 0 && size_t(row) < m_diffs.size() ? m_diffs[size_t(row)] : none;
}

QString StageListModel::stageTitle(int row) const
{
    if (row < 0 || row >= rowCount())
        return {};
    const compiler::CompileStage &stage = m_document->stages[size_t(row)];
    const QString name = QString::fromStdString(stage.name);
    return stage.segment > 0 ? tr("%1 (segment %2)").arg(name).arg(stage.segment) : name;
}

QString StageListModel::diffSummary(int row) const
{
    if (row < 0 || row >= rowCount())
        return {};
    const int previous = previousInSegment(row);
    if (previous < 0)
        return tr("%1: %n nodes", nullptr, int(m_document->stages[size_t(row)].stats.nodes)).arg(stageTitle(row));
    return tr("%1 vs %2: %3").arg(stageTitle(row), stageTitle(previous), changesText(row));
}

int StageListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_document ? 0 : int(m_document->stages.size());
}

int StageListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant StageListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    switch (role) {
    case Qt::DisplayRole:
        return displayData(index.row(), index.column());
    case SortRole:
        return sortData(index.row(), index.column());
    case Qt::ToolTipRole:
        return logText(index.row()).isEmpty() ? tr("%1 logged nothing").arg(stageTitle(index.row()))
                                              : logText(index.row());
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant StageListModel::displayData(int row, int column) const
{
    const compiler::CompileStage &stage = m_document->stages[size_t(row)];
    const QLocale locale;
    switch (column) {
    case NameColumn:
        return stageTitle(row);
    case DurationColumn:
        return locale.toString(stage.durationMs, 'f', 2);
    case NodesColumn:
        return locale.toString(qlonglong(stage.stats.nodes));
    case KernelsColumn:
        return locale.toString(qlonglong(stage.stats.kernels));
    case BytesColumn:
        return locale.formattedDataSize(qint64(stage.stats.bytesMoved), 1, QLocale::DataSizeSIFormat);
    case ChangesColumn:
        return changesText(row);
    }
    return {};
}

QVariant StageListModel::sortData(int row, int column) const
{
    const compiler::CompileStage &stage = m_document->stages[size_t(row)];
    switch (column) {
    case DurationColumn:
        return stage.durationMs;
    case NodesColumn:
        return qlonglong(stage.stats.nodes);
    case KernelsColumn:
        return qlonglong(stage.stats.kernels);
    case BytesColumn:
        return stage.stats.bytesMoved;
    case ChangesColumn:
        return qulonglong(diff(row).added.size() + diff(row).removed.size() + diff(row).changed.size());
    default:
        return row; // pipeline order
    }
}

QString StageListModel::changesText(int row) const
{
    return previousInSegment(row) < 0 ? QString() : QString::fromStdString(diff(row).summary());
}

QString StageListModel::logText(int row) const
{
    if (row < 0 || row >= rowCount())
        return {};
    QStringList lines;
    for (const std::string &line : m_document->stages[size_t(row)].log)
        lines << QString::fromStdString(line);
    return lines.join(QLatin1Char('\n'));
}

QVariant StageListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *const titles[] = {QT_TR_NOOP("Stage"),        QT_TR_NOOP("Time (ms)"),
                                         QT_TR_NOOP("Nodes"),        QT_TR_NOOP("Kernels"),
                                         QT_TR_NOOP("Bytes moved"), QT_TR_NOOP("Changes")};
    return section >= 0 && section < ColumnCount ? tr(titles[section]) : QVariant();
}

} // namespace fusescope
