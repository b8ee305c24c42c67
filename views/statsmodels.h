#pragma once
// The Statistics view's tables: ops, kernels, copies by kind and graph nodes
// of one run. One immutable StatsData is computed per document and swapped
// into the four models in one reset each; SortRole gives the raw numbers so
// a proxy sorts 9 µs below 10 ms.

#include "profiler/statistics.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <array>
#include <memory>
#include <string>
#include <unordered_map>

namespace fusescope {

struct Document;

// The launch shape seen most often for one kernel name.
struct LaunchShape {
    std::array<int32_t, 3> grid = {0, 0, 0};
    std::array<int32_t, 3> block = {0, 0, 0};
    bool valid() const { return grid[0] > 0 && block[0] > 0; }
};

struct StatsData {
    profiler::RunStatistics stats;
    std::unordered_map<std::string, LaunchShape> launchShapes; // by kernel name
};

// The document's run statistics (computed with the load), plus each kernel's
// most common grid/block: one pass over the events.
std::shared_ptr<const StatsData> statsDataOf(const Document &doc);
std::unordered_map<std::string, LaunchShape> mostCommonLaunchShapes(const profiler::Trace &trace,
                                                                    const profiler::Run &run);

// What the four tables share: a name in column 0, text for display, raw
// numbers under SortRole.
class StatsTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role {
        SortRole = Qt::UserRole + 1,
        NameRole, // QString: what a double-click asks the timeline for
    };

    explicit StatsTableModel(QObject *parent = nullptr);

    void setStatistics(std::shared_ptr<const StatsData> data);
    virtual QString name(int row) const = 0;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

protected:
    virtual int rows() const = 0;
    virtual QStringList headers() const = 0;
    virtual QString text(int row, int column) const = 0;
    virtual QVariant sortKey(int row, int column) const = 0;
    const profiler::RunStatistics &stats() const { return m_data->stats; }
    bool hasData() const { return m_data != nullptr; }

    std::shared_ptr<const StatsData> m_data;
};

class OpStatsModel : public StatsTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, CallsColumn, TotalColumn, SelfColumn, AvgColumn, MinColumn, MaxColumn, PercentColumn };
    using StatsTableModel::StatsTableModel;
    QString name(int row) const override;

protected:
    int rows() const override;
    QStringList headers() const override;
    QString text(int row, int column) const override;
    QVariant sortKey(int row, int column) const override;
};

class KernelStatsModel : public StatsTableModel
{
    Q_OBJECT
public:
    enum Column {
        NameColumn, DeviceColumn, CallsColumn, TotalColumn, AvgColumn, GridColumn, BlockColumn,
        BandwidthColumn, ThroughputColumn,
    };
    using StatsTableModel::StatsTableModel;
    QString name(int row) const override;

protected:
    int rows() const override;
    QStringList headers() const override;
    QString text(int row, int column) const override;
    QVariant sortKey(int row, int column) const override;

private:
    LaunchShape shape(int row) const;
};

class CopyStatsModel : public StatsTableModel
{
    Q_OBJECT
public:
    enum Column { KindColumn, CallsColumn, BytesColumn, TotalColumn, BandwidthColumn };
    using StatsTableModel::StatsTableModel;
    QString name(int row) const override; // the copy kind's name, or "Memset"

protected:
    int rows() const override;
    QStringList headers() const override;
    QString text(int row, int column) const override;
    QVariant sortKey(int row, int column) const override;

private:
    const profiler::TransferStats &transfer(int row) const;
};

class NodeStatsModel : public StatsTableModel
{
    Q_OBJECT
public:
    enum Role { NodeIdRole = StatsTableModel::NameRole + 1 };
    enum Column { NameColumn, IdColumn, KernelsColumn, TimeColumn, ThroughputColumn, BandwidthColumn };
    using StatsTableModel::StatsTableModel;
    QString name(int row) const override;
    int nodeId(int row) const;

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

protected:
    int rows() const override;
    QStringList headers() const override;
    QString text(int row, int column) const override;
    QVariant sortKey(int row, int column) const override;
};

// "1.23 MB", "512 B".
QString formatByteCount(double bytes);

} // namespace fusescope
