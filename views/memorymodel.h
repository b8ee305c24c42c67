#pragma once
// The Memory view's table of the allocations live at the chosen moment, and
// the unit formatting its chart shares. SortRole gives raw numbers so a proxy
// sorts 900 KiB below 1 MiB.

#include "profiler/memoryanalysis.h"

#include <QAbstractTableModel>

#include <vector>

namespace fusescope {

// "512 B", "1.50 KiB", "3.25 GiB": the largest binary unit that keeps it >= 1.
QString formatBytes(double bytes);
// "1 allocation", "1,234 allocations": Qt's %n needs a translation to pluralize.
QString allocationCount(int64_t count);

class LiveAllocationModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { SizeColumn, AddressColumn, MadeByColumn, AgeColumn, AllocatedAtColumn, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1,
        EventIdRole, // quint32: the op or kernel that made it; invalid id when none
    };

    explicit LiveAllocationModel(QObject *parent = nullptr);

    // `allocations` are those live at `timeNs`; their age is measured from it.
    void setAllocations(std::vector<profiler::LiveAllocation> allocations, int64_t timeNs);
    void clear();
    const profiler::LiveAllocation &allocation(int row) const { return m_allocations[size_t(row)]; }
    int64_t timeNs() const { return m_timeNs; }
    int64_t totalBytes() const { return m_totalBytes; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString text(const profiler::LiveAllocation &a, int column) const;
    QVariant sortKey(const profiler::LiveAllocation &a, int column) const;
    QString toolTip(const profiler::LiveAllocation &a, int column) const;

    std::vector<profiler::LiveAllocation> m_allocations;
    int64_t m_timeNs = 0;
    int64_t m_totalBytes = 0;
};

} // namespace fusescope
