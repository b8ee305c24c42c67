#include "views/rangestatsview.h"

#include "views/heatlegend.h" // formatDuration
#include "views/sortabletable.h"

#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace fusescope {

void RangeStatsModel::setRows(std::vector<RangeStatRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int RangeStatsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RangeStatsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RangeStatsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::ToolTipRole && section == TotalColumn)
        return tr("The events' time inside the range; nested events each count their own");
    if (role != Qt::DisplayRole)
        return {};
    const QString headers[] = {tr("Name"), tr("Kind"), tr("Count"), tr("Time in range"), tr("% of range")};
    return headers[section];
}

QVariant RangeStatsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || size_t(index.row()) >= m_rows.size() || index.column() >= ColumnCount)
        return {};
    const RangeStatRow &r = m_rows[size_t(index.row())];
    if (role == Qt::TextAlignmentRole)
        return index.column() >= CountColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    const bool sort = role == SortRole;
    switch (index.column()) {
    case NameColumn: return QString::fromStdString(r.name);
    case KindColumn: return QString::fromLatin1(profiler::eventKindName(r.kind));
    case CountColumn: return sort ? QVariant(qint64(r.count)) : QVariant(QString::number(r.count));
    case TotalColumn: return sort ? QVariant(qint64(r.totalNs)) : QVariant(formatDuration(double(r.totalNs)));
    default: return sort ? QVariant(r.percent) : QVariant(QStringLiteral("%1 %").arg(r.percent, 0, 'f', 1));
    }
}

RangeStatsView::RangeStatsView(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);
    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(tr("Filter by name"));
    m_filter->setClearButtonEnabled(true);
    layout->addWidget(m_filter);
    m_model = new RangeStatsModel(this);
    const SortableTable table = createSortableTable(m_model, RangeStatsModel::SortRole, this);
    m_table = table.view;
    m_proxy = table.proxy;
    layout->addWidget(m_table);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex &i) {
        emit eventsRequested(m_proxy->index(i.row(), RangeStatsModel::NameColumn).data().toString());
    });
    clear();
}

void RangeStatsView::showRange(const TimelineModel &model, int64_t t0, int64_t t1)
{
    showRows(timelineRangeStats(model, t0, t1), t0, t1);
}

void RangeStatsView::showRows(std::vector<RangeStatRow> rows, int64_t t0, int64_t t1)
{
    m_model->setRows(std::move(rows));
    m_table->sortByColumn(RangeStatsModel::TotalColumn, Qt::DescendingOrder);
    m_summary->setText(tr("Range %1 – %2 (%3): %n name(s)", nullptr, m_model->rowCount())
                           .arg(formatDuration(double(t0)), formatDuration(double(t1)), formatDuration(double(t1 - t0))));
    m_filter->setEnabled(true);
    m_table->setEnabled(true);
    m_empty = false;
}

void RangeStatsView::clear()
{
    m_model->setRows({});
    m_summary->setText(tr("Shift-drag on the timeline to select a range: the events inside it are counted here"));
    m_filter->setEnabled(false);
    m_table->setEnabled(false);
    m_empty = true;
}

bool RangeStatsView::isEmptyStateShown() const
{
    return m_empty;
}

QString RangeStatsView::summaryText() const
{
    return m_summary->text();
}

} // namespace fusescope
