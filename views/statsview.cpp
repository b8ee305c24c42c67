#include "views/statsview.h"

#include "views/sortabletable.h"
#include "views/statsmodels.h"

#include <QApplication>
#include <QClipboard>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace fusescope {

namespace {

StatsTableModel *createModel(StatsView::Tab tab, QObject *parent)
{
    switch (tab) {
    case StatsView::OpsTab: return new OpStatsModel(parent);
    case StatsView::KernelsTab: return new KernelStatsModel(parent);
    case StatsView::CopiesTab: return new CopyStatsModel(parent);
    default: return new NodeStatsModel(parent);
    }
}

QString tabTitle(StatsView::Tab tab)
{
    static const char *const titles[] = {
        QT_TRANSLATE_NOOP("StatsView", "Ops"), QT_TRANSLATE_NOOP("StatsView", "Kernels"),
        QT_TRANSLATE_NOOP("StatsView", "Copies"), QT_TRANSLATE_NOOP("StatsView", "Graph nodes")};
    return StatsView::tr(titles[tab]);
}

} // namespace

StatsView::StatsView(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_emptyLabel = new QLabel(tr("This file holds no recorded run"), this);
    m_emptyLabel->setAlignment(Qt::AlignCenter);
    layout->addWidget(m_emptyLabel);
    m_content = createContent();
    layout->addWidget(m_content);
    showEmptyState(true);
}

StatsView::~StatsView() = default;

QWidget *StatsView::createContent()
{
    auto *content = new QWidget(this);
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(0, 0, 0, 0);
    m_filter = new QLineEdit(content);
    m_filter->setPlaceholderText(tr("Filter by name"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, &StatsView::applyFilter);
    layout->addWidget(m_filter);
    m_warnings = new QLabel(content);
    m_warnings->setWordWrap(true);
    m_warnings->hide();
    layout->addWidget(m_warnings);
    m_tabs = new QTabWidget(content);
    for (int t = 0; t < TabCount; ++t) {
        m_models[size_t(t)] = createModel(Tab(t), this);
        m_tabs->addTab(createTable(Tab(t), m_models[size_t(t)]), tabTitle(Tab(t)));
    }
    connect(m_tabs, &QTabWidget::currentChanged, this, &StatsView::applyFilter);
    layout->addWidget(m_tabs);
    return content;
}

QTableView *StatsView::createTable(Tab tab, StatsTableModel *model)
{
    const SortableTable table = createSortableTable(model, StatsTableModel::SortRole, m_tabs);
    connect(table.view, &QTableView::doubleClicked, this, [this, tab](const QModelIndex &i) { activateRow(tab, i); });
    m_proxies[size_t(tab)] = table.proxy;
    m_tables[size_t(tab)] = table.view;
    return table.view;
}

void StatsView::setDocument(std::shared_ptr<const Document> document)
{
    m_document = std::move(document);
    setStatistics(m_document && m_document->stats ? statsDataOf(*m_document) : nullptr);
}

void StatsView::setStatistics(std::shared_ptr<const StatsData> data)
{
    for (StatsTableModel *model : m_models)
        model->setStatistics(data);
    sortByTime();
    showWarnings(data.get());
    showEmptyState(data == nullptr);
}

// The statistics come sorted by time, descending: the header shows that order.
void StatsView::sortByTime()
{
    m_tables[OpsTab]->sortByColumn(OpStatsModel::TotalColumn, Qt::DescendingOrder);
    m_tables[KernelsTab]->sortByColumn(KernelStatsModel::TotalColumn, Qt::DescendingOrder);
    m_tables[CopiesTab]->sortByColumn(CopyStatsModel::TotalColumn, Qt::DescendingOrder);
    m_tables[NodesTab]->sortByColumn(NodeStatsModel::TimeColumn, Qt::DescendingOrder);
}

// Partial numbers must not pass for complete ones.
void StatsView::showWarnings(const StatsData *data)
{
    QStringList warnings;
    if (data) {
        for (const std::string &w : data->stats.warnings)
            warnings << QString::fromStdString(w);
    }
    m_warnings->setText(tr("Incomplete: %1").arg(warnings.join(QStringLiteral("; "))));
    m_warnings->setVisible(!warnings.isEmpty());
}

void StatsView::showEmptyState(bool empty)
{
    m_emptyLabel->setVisible(empty);
    m_content->setVisible(!empty);
}

bool StatsView::isEmptyStateShown() const
{
    return !m_emptyLabel->isHidden();
}

void StatsView::applyFilter()
{
    // Only the current tab filters, so switching tabs shows the other
    // tables whole until the text applies to them too.
    const int current = m_tabs->currentIndex();
    for (int t = 0; t < TabCount; ++t)
        m_proxies[size_t(t)]->setFilterFixedString(t == current ? m_filter->text() : QString());
}

void StatsView::activateRow(Tab tab, const QModelIndex &proxyIndex)
{
    if (!proxyIndex.isValid())
        return;
    const QModelIndex source = m_proxies[size_t(tab)]->mapToSource(proxyIndex);
    emit eventsRequested(source.data(StatsTableModel::NameRole).toString(), int(tab));
    if (tab == NodesTab)
        emit nodeRequested(source.data(NodeStatsModel::NodeIdRole).toInt());
}

bool StatsView::selectRow(Tab tab, const QString &name)
{
    QSortFilterProxyModel *proxy = m_proxies[size_t(tab)];
    for (int r = 0; r < proxy->rowCount(); ++r) {
        const QModelIndex index = proxy->index(r, 0);
        if (index.data(StatsTableModel::NameRole).toString() == name) {
            QTableView *table = m_tables[size_t(tab)];
            table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            table->scrollTo(index);
            return true;
        }
    }
    return false;
}

QString StatsView::selectedName(Tab tab) const
{
    const QModelIndex index = m_tables[size_t(tab)]->selectionModel()->currentIndex();
    return index.isValid() ? index.siblingAtColumn(0).data(StatsTableModel::NameRole).toString() : QString();
}

QString StatsView::selectionAsTsv() const
{
    return selectedRowsAsTsv(*m_tables[size_t(m_tabs->currentIndex())]);
}

void StatsView::copySelection() const
{
    const QString tsv = selectionAsTsv();
    if (!tsv.isEmpty())
        QApplication::clipboard()->setText(tsv);
}

} // namespace fusescope
