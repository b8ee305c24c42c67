#include "views/comparemodel.h"

#include "views/heatlegend.h" // formatDuration

#include <QBrush>
#include <QColor>

#include <cmath>

namespace fusescope {

namespace {

QString formatCalls(double calls)
{
    // Per-step calls may be fractional; whole ones read as integers.
    return calls == std::floor(calls) ? QString::number(qint64(calls)) : QString::number(calls, 'f', 2);
}

QString signedDuration(double ns)
{
    if (ns == 0)
        return QStringLiteral("0");
    return (ns > 0 ? QStringLiteral("+") : QStringLiteral("−")) + formatDuration(std::abs(ns));
}

} // namespace

QString formatSpeedup(double speedup)
{
    if (speedup <= 0)
        return QString();
    if (std::abs(speedup - 1.0) < 0.005)
        return CompareModel::tr("same");
    return speedup > 1 ? CompareModel::tr("%1× faster").arg(speedup, 0, 'f', 2)
                       : CompareModel::tr("%1× slower").arg(1.0 / speedup, 0, 'f', 2);
}

CompareModel::CompareModel(Table table, QObject *parent) : QAbstractTableModel(parent), m_table(table) {}

void CompareModel::setComparison(std::shared_ptr<const profiler::RunComparison> comparison)
{
    beginResetModel();
    m_comparison = std::move(comparison);
    endResetModel();
    headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

const std::vector<profiler::DeltaRow> *CompareModel::rows() const
{
    if (!m_comparison)
        return nullptr;
    switch (m_table) {
    case NodesTable: return &m_comparison->nodes;
    case OpsTable: return &m_comparison->ops;
    default: return &m_comparison->kernels;
    }
}

const profiler::DeltaRow *CompareModel::row(int row) const
{
    const auto *all = rows();
    return all && row >= 0 && size_t(row) < all->size() ? &(*all)[size_t(row)] : nullptr;
}

int CompareModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !rows() ? 0 : int(rows()->size());
}

int CompareModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    const QString base = m_comparison ? QString::fromStdString(m_comparison->baseLabel) : tr("first");
    const QString other = m_comparison ? QString::fromStdString(m_comparison->otherLabel) : tr("second");
    if (role == Qt::ToolTipRole) {
        if (section == DeltaColumn)
            return tr("%1 minus %2: negative is faster").arg(other, base);
        if (section == SpeedupColumn)
            return tr("%1's time divided by %2's").arg(base, other);
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    const QString detail = m_table == NodesTable ? tr("Op") : m_table == KernelsTable ? tr("Device") : QString();
    const QString perStep = m_comparison && m_comparison->perStep ? tr(" per step") : QString();
    const QString headers[] = {tr("Name"), detail, tr("Calls %1").arg(base), tr("Calls %1").arg(other),
                               tr("Time %1%2").arg(base, perStep), tr("Time %1%2").arg(other, perStep),
                               tr("Δ time"), tr("Speedup")};
    return headers[section];
}

QString CompareModel::text(const profiler::DeltaRow &r, int column) const
{
    switch (column) {
    case NameColumn: return QString::fromStdString(r.name);
    case DetailColumn: return QString::fromStdString(r.detail);
    case BaseCallsColumn: return r.inBase ? formatCalls(r.baseCalls) : QStringLiteral("—");
    case OtherCallsColumn: return r.inOther ? formatCalls(r.otherCalls) : QStringLiteral("—");
    case BaseTimeColumn: return r.inBase ? formatDuration(r.baseNs) : QStringLiteral("—");
    case OtherTimeColumn: return r.inOther ? formatDuration(r.otherNs) : QStringLiteral("—");
    case DeltaColumn: return signedDuration(r.deltaNs());
    default:
        if (!r.inBase)
            return tr("only in %1").arg(QString::fromStdString(m_comparison->otherLabel));
        if (!r.inOther)
            return tr("only in %1").arg(QString::fromStdString(m_comparison->baseLabel));
        if (r.otherNs == 0 && r.baseNs > 0)
            return m_table == NodesTable ? tr("no kernel") : tr("no time");
        return formatSpeedup(r.speedup());
    }
}

QVariant CompareModel::sortKey(const profiler::DeltaRow &r, int column) const
{
    switch (column) {
    case NameColumn:
    case DetailColumn: return text(r, column);
    case BaseCallsColumn: return r.baseCalls;
    case OtherCallsColumn: return r.otherCalls;
    case BaseTimeColumn: return r.baseNs;
    case OtherTimeColumn: return r.otherNs;
    case DeltaColumn: return r.deltaNs();
    default:
        // Rows without a ratio sort beyond every real one: removed work as the best, new work as the worst.
        if (r.inBase && r.otherNs == 0)
            return 1e300;
        return r.inBase ? r.speedup() : 0.0;
    }
}

QVariant CompareModel::foreground(const profiler::DeltaRow &r, int column) const
{
    if (column != DeltaColumn && column != SpeedupColumn)
        return {};
    if (r.deltaNs() < 0)
        return QBrush(QColor(0x1b, 0x7f, 0x3b));
    if (r.deltaNs() > 0)
        return QBrush(QColor(0xb3, 0x26, 0x1e));
    return {};
}

QString CompareModel::toolTip(const profiler::DeltaRow &r) const
{
    const QString base = QString::fromStdString(m_comparison->baseLabel);
    const QString other = QString::fromStdString(m_comparison->otherLabel);
    QString tip = QString::fromStdString(r.name);
    if (!r.detail.empty())
        tip += QStringLiteral(" (%1)").arg(QString::fromStdString(r.detail));
    tip += QStringLiteral("\n%1: %2 in %3 call(s)").arg(base, r.inBase ? formatDuration(r.baseNs) : tr("absent"),
                                                      formatCalls(r.baseCalls));
    tip += QStringLiteral("\n%1: %2 in %3 call(s)").arg(other, r.inOther ? formatDuration(r.otherNs) : tr("absent"),
                                                       formatCalls(r.otherCalls));
    if (m_table == NodesTable && r.inOther && r.otherNs == 0 && r.inBase)
        tip += tr("\nNo kernel of %1 computes this node: it became index arithmetic or was folded away").arg(other);
    if (r.nodeId >= 0)
        tip += tr("\nDouble-click to select the node in the graph");
    else if (r.inOther)
        tip += tr("\nDouble-click to find its events on the timeline");
    return tip;
}

QVariant CompareModel::data(const QModelIndex &index, int role) const
{
    const profiler::DeltaRow *r = index.isValid() ? row(index.row()) : nullptr;
    if (!r || index.column() >= ColumnCount)
        return {};
    switch (role) {
    case Qt::DisplayRole: return text(*r, index.column());
    case SortRole: return sortKey(*r, index.column());
    case NameRole: return QString::fromStdString(r->name);
    case NodeIdRole: return r->nodeId;
    case InOtherRole: return r->inOther;
    case Qt::ForegroundRole: return foreground(*r, index.column());
    case Qt::ToolTipRole: return toolTip(*r);
    case Qt::TextAlignmentRole:
        return index.column() >= BaseCallsColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default: return {};
    }
}

} // namespace fusescope
