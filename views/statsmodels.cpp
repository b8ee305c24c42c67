#include "views/statsmodels.h"

#include "views/document.h"

#include "views/timelinemodel.h"

#include <cmath>
#include <map>

namespace fusescope {

namespace {

using ShapeKey = std::array<int32_t, 6>; // grid then block
using ShapeCounts = std::map<ShapeKey, int64_t>;

ShapeKey shapeKey(const profiler::EventArgs &args)
{
    return {args.grid[0], args.grid[1], args.grid[2], args.block[0], args.block[1], args.block[2]};
}

// The most frequent key; on a tie the smallest, so the result does not
// depend on event order.
LaunchShape mostCommon(const ShapeCounts &counts)
{
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it) {
        if (it->second > best->second)
            best = it;
    }
    LaunchShape shape;
    for (int i = 0; i < 3; ++i) {
        shape.grid[size_t(i)] = best->first[size_t(i)];
        shape.block[size_t(i)] = best->first[size_t(i) + 3];
    }
    return shape;
}

QString duration(double ns)
{
    return QString::fromStdString(formatDuration(int64_t(std::llround(ns))));
}

QString rate(double perNs)
{
    return QString::number(perNs, 'f', 2);
}

QString dims(const std::array<int32_t, 3> &d)
{
    return QStringLiteral("%1×%2×%3").arg(d[0]).arg(d[1]).arg(d[2]);
}

qlonglong volume(const std::array<int32_t, 3> &d)
{
    return qlonglong(d[0]) * d[1] * d[2];
}

QString deviceName(int32_t device)
{
    return device < 0 ? QStringLiteral("CPU") : QStringLiteral("GPU %1").arg(device);
}

} // namespace

std::unordered_map<std::string, LaunchShape> mostCommonLaunchShapes(const profiler::Trace &trace,
                                                                    const profiler::Run &run)
{
    std::unordered_map<uint32_t, ShapeCounts> counts; // by name's StringId
    for (const profiler::Event &e : run.events) {
        if (e.kind != profiler::EventKind::Kernel)
            continue;
        const profiler::EventArgs *args = profiler::argsOf(run, e);
        if (args && args->grid[0] > 0 && args->block[0] > 0)
            ++counts[e.name.value][shapeKey(*args)];
    }
    std::unordered_map<std::string, LaunchShape> shapes;
    for (const auto &entry : counts)
        shapes[trace.strings[profiler::StringId(entry.first)]] = mostCommon(entry.second);
    return shapes;
}

std::shared_ptr<const StatsData> statsDataOf(const Document &doc)
{
    auto data = std::make_shared<StatsData>();
    if (!doc.stats)
        return data;
    data->stats = *doc.stats;
    data->launchShapes = mostCommonLaunchShapes(*doc.trace, doc.trace->runs[0]);
    return data;
}

QString formatByteCount(double bytes)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
    int unit = 0;
    while (std::abs(bytes) >= 1000 && unit < 4) {
        bytes /= 1000;
        ++unit;
    }
    return QStringLiteral("%1 %2").arg(bytes, 0, 'f', unit ? 2 : 0).arg(QLatin1String(units[unit]));
}

// ---- StatsTableModel -------------------------------------------------------

StatsTableModel::StatsTableModel(QObject *parent) : QAbstractTableModel(parent) {}

void StatsTableModel::setStatistics(std::shared_ptr<const StatsData> data)
{
    beginResetModel();
    m_data = std::move(data);
    endResetModel();
}

int StatsTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_data ? 0 : rows();
}

int StatsTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(headers().size());
}

QVariant StatsTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    switch (role) {
    case Qt::DisplayRole:
        return text(index.row(), index.column());
    case SortRole:
        return sortKey(index.row(), index.column());
    case NameRole:
        return name(index.row());
    case Qt::TextAlignmentRole:
        return index.column() == 0 ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    default:
        return {};
    }
}

QVariant StatsTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    const QStringList names = headers();
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= names.size())
        return {};
    return names[section];
}

// ---- OpStatsModel ----------------------------------------------------------

int OpStatsModel::rows() const
{
    return int(stats().ops.size());
}

QStringList OpStatsModel::headers() const
{
    return {tr("Op"), tr("Calls"), tr("Total"), tr("Self"), tr("Avg"), tr("Min"), tr("Max"), tr("%")};
}

QString OpStatsModel::name(int row) const
{
    return QString::fromStdString(stats().ops[size_t(row)].name);
}

QString OpStatsModel::text(int row, int column) const
{
    if (column == NameColumn)
        return name(row);
    if (column == CallsColumn)
        return QString::number(stats().ops[size_t(row)].time.calls);
    if (column == PercentColumn)
        return QStringLiteral("%1 %").arg(stats().ops[size_t(row)].percent, 0, 'f', 1);
    return duration(sortKey(row, column).toDouble());
}

QVariant OpStatsModel::sortKey(int row, int column) const
{
    const profiler::RangeStats &op = stats().ops[size_t(row)];
    switch (column) {
    case NameColumn: return name(row);
    case CallsColumn: return qlonglong(op.time.calls);
    case TotalColumn: return qlonglong(op.time.totalNs);
    case SelfColumn: return qlonglong(op.selfNs);
    case AvgColumn: return op.time.avgNs();
    case MinColumn: return qlonglong(op.time.minNs);
    case MaxColumn: return qlonglong(op.time.maxNs);
    default: return op.percent;
    }
}

// ---- KernelStatsModel ------------------------------------------------------

int KernelStatsModel::rows() const
{
    return int(stats().kernels.size());
}

QStringList KernelStatsModel::headers() const
{
    return {tr("Kernel"), tr("Device"), tr("Calls"), tr("Total"), tr("Avg"),
            tr("Grid"), tr("Block"), tr("GB/s"), tr("GFLOP/s")};
}

QString KernelStatsModel::name(int row) const
{
    return QString::fromStdString(stats().kernels[size_t(row)].name);
}

LaunchShape KernelStatsModel::shape(int row) const
{
    const auto it = m_data->launchShapes.find(stats().kernels[size_t(row)].name);
    return it == m_data->launchShapes.end() ? LaunchShape{} : it->second;
}

QString KernelStatsModel::text(int row, int column) const
{
    switch (column) {
    case NameColumn: return name(row);
    case DeviceColumn: return deviceName(stats().kernels[size_t(row)].device);
    case CallsColumn: return QString::number(stats().kernels[size_t(row)].time.calls);
    case GridColumn: return shape(row).valid() ? dims(shape(row).grid) : QString();
    case BlockColumn: return shape(row).valid() ? dims(shape(row).block) : QString();
    case BandwidthColumn:
    case ThroughputColumn: return rate(sortKey(row, column).toDouble());
    default: return duration(sortKey(row, column).toDouble());
    }
}

QVariant KernelStatsModel::sortKey(int row, int column) const
{
    const profiler::KernelStats &k = stats().kernels[size_t(row)];
    switch (column) {
    case NameColumn: return name(row);
    case DeviceColumn: return k.device;
    case CallsColumn: return qlonglong(k.time.calls);
    case TotalColumn: return qlonglong(k.time.totalNs);
    case AvgColumn: return k.time.avgNs();
    case GridColumn: return volume(shape(row).grid);
    case BlockColumn: return volume(shape(row).block);
    case BandwidthColumn: return k.gigabytesPerSecond();
    default: return k.gflopsPerSecond();
    }
}

// ---- CopyStatsModel --------------------------------------------------------
// One row per copy kind, then one for the GPU memsets if there were any.

int CopyStatsModel::rows() const
{
    return int(stats().copies.size()) + (stats().memsets.calls > 0 ? 1 : 0);
}

QStringList CopyStatsModel::headers() const
{
    return {tr("Kind"), tr("Calls"), tr("Bytes"), tr("Total"), tr("GB/s")};
}

const profiler::TransferStats &CopyStatsModel::transfer(int row) const
{
    const auto r = size_t(row);
    return r < stats().copies.size() ? stats().copies[r].transfer : stats().memsets;
}

QString CopyStatsModel::name(int row) const
{
    const auto r = size_t(row);
    return r < stats().copies.size() ? QString::fromLatin1(profiler::copyKindName(stats().copies[r].kind))
                                     : QStringLiteral("Memset");
}

QString CopyStatsModel::text(int row, int column) const
{
    const profiler::TransferStats &t = transfer(row);
    switch (column) {
    case KindColumn: return name(row);
    case CallsColumn: return QString::number(t.calls);
    case BytesColumn: return formatByteCount(t.bytes);
    case TotalColumn: return duration(double(t.totalNs));
    default: return rate(t.gigabytesPerSecond());
    }
}

QVariant CopyStatsModel::sortKey(int row, int column) const
{
    const profiler::TransferStats &t = transfer(row);
    switch (column) {
    case KindColumn: return name(row);
    case CallsColumn: return qlonglong(t.calls);
    case BytesColumn: return t.bytes;
    case TotalColumn: return qlonglong(t.totalNs);
    default: return t.gigabytesPerSecond();
    }
}

// ---- NodeStatsModel --------------------------------------------------------

int NodeStatsModel::rows() const
{
    return int(stats().nodes.size());
}

QStringList NodeStatsModel::headers() const
{
    return {tr("Node"), tr("Id"), tr("Kernels"), tr("Time"), tr("GFLOP/s"), tr("GB/s")};
}

QString NodeStatsModel::name(int row) const
{
    return QString::fromStdString(stats().nodes[size_t(row)].name);
}

int NodeStatsModel::nodeId(int row) const
{
    return stats().nodes[size_t(row)].id;
}

QVariant NodeStatsModel::data(const QModelIndex &index, int role) const
{
    if (role == NodeIdRole && checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return nodeId(index.row());
    return StatsTableModel::data(index, role);
}

QString NodeStatsModel::text(int row, int column) const
{
    switch (column) {
    case NameColumn: return name(row);
    case IdColumn: return QString::number(nodeId(row));
    case KernelsColumn: return QString::number(stats().nodes[size_t(row)].kernels);
    case TimeColumn: return duration(stats().nodes[size_t(row)].timeNs);
    default: return rate(sortKey(row, column).toDouble());
    }
}

QVariant NodeStatsModel::sortKey(int row, int column) const
{
    const profiler::NodeStats &n = stats().nodes[size_t(row)];
    const double perNs = n.timeNs > 0 ? 1.0 / n.timeNs : 0.0;
    switch (column) {
    case NameColumn: return name(row);
    case IdColumn: return n.id;
    case KernelsColumn: return qlonglong(n.kernels);
    case TimeColumn: return n.timeNs;
    case ThroughputColumn: return n.flops * perNs;
    default: return n.bytes * perNs;
    }
}

} // namespace fusescope
