#include "views/memorymodel.h"

#include "views/timelinemodel.h"

#include <QLocale>

#include <cmath>
#include <numeric>

namespace fusescope {

QString formatBytes(double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double value = std::abs(bytes);
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    const QString sign = bytes < 0 ? QStringLiteral("-") : QString();
    if (unit == 0)
        return sign + QStringLiteral("%1 B").arg(qint64(value));
    return sign
        + QStringLiteral("%1 %2")
              .arg(value, 0, 'f', value < 10 ? 2 : (value < 100 ? 1 : 0))
              .arg(QLatin1String(units[unit]));
}

QString allocationCount(int64_t count)
{
    return count == 1 ? LiveAllocationModel::tr("1 allocation")
                      : LiveAllocationModel::tr("%1 allocations").arg(QLocale().toString(qint64(count)));
}

LiveAllocationModel::LiveAllocationModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

void LiveAllocationModel::setAllocations(std::vector<profiler::LiveAllocation> allocations, int64_t timeNs)
{
    beginResetModel();
    m_allocations = std::move(allocations);
    m_timeNs = timeNs;
    m_totalBytes = std::accumulate(m_allocations.begin(), m_allocations.end(), int64_t(0),
                                   [](int64_t sum, const profiler::LiveAllocation &a) { return sum + a.bytes; });
    endResetModel();
}

void LiveAllocationModel::clear()
{
    setAllocations({}, 0);
}

int LiveAllocationModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_allocations.size());
}

int LiveAllocationModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LiveAllocationModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const profiler::LiveAllocation &a = m_allocations[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return text(a, index.column());
    case SortRole:
        return sortKey(a, index.column());
    case Qt::ToolTipRole:
        return toolTip(a, index.column());
    case EventIdRole:
        return quint32(a.op.value);
    case Qt::TextAlignmentRole:
        return index.column() == MadeByColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QString LiveAllocationModel::text(const profiler::LiveAllocation &a, int column) const
{
    switch (column) {
    case SizeColumn:
        return formatBytes(double(a.bytes));
    case AddressColumn:
        return QStringLiteral("0x%1").arg(a.address, 0, 16);
    case MadeByColumn:
        return a.opName.empty() ? tr("(no op)") : QString::fromStdString(a.opName);
    case AgeColumn:
        return QString::fromStdString(formatDuration(m_timeNs - a.allocTime));
    default:
        return QString::fromStdString(formatDuration(a.allocTime));
    }
}

QVariant LiveAllocationModel::sortKey(const profiler::LiveAllocation &a, int column) const
{
    switch (column) {
    case SizeColumn:
        return qint64(a.bytes);
    case AddressColumn:
        return quint64(a.address);
    case MadeByColumn:
        return QString::fromStdString(a.opName);
    case AgeColumn:
        return qint64(m_timeNs - a.allocTime);
    default:
        return qint64(a.allocTime);
    }
}

QString LiveAllocationModel::toolTip(const profiler::LiveAllocation &a, int column) const
{
    switch (column) {
    case SizeColumn:
        return tr("%1 bytes").arg(QLocale().toString(qint64(a.bytes)));
    case MadeByColumn:
        return a.opName.empty() ? tr("No op or kernel was running when this block was allocated")
                                : tr("Allocated while %1 ran; double-click to show it on the timeline")
                                      .arg(QString::fromStdString(a.opName));
    case AgeColumn:
        return tr("How long the block had been live at the chosen time");
    case AllocatedAtColumn:
        return tr("Time since the start of the run");
    default:
        return {};
    }
}

QVariant LiveAllocationModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *const titles[] = {QT_TR_NOOP("Size"), QT_TR_NOOP("Address"), QT_TR_NOOP("Made by"),
                                         QT_TR_NOOP("Age"), QT_TR_NOOP("Allocated at")};
    return tr(titles[section]);
}

} // namespace fusescope
