#include "views/statsview.h"

#include "views/statsmodels.h"

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

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

QStringList rowTexts(const QAbstractItemModel &model, int row)
{
    QStringList cells;
    for (int c = 0; c < model.columnCount(); ++c)
        cells << model.index(row, c).data().toString();
    return cells;
}

QStringList headerTexts(const QAbstractItemModel &model)
{
    QStringList cells;
    for (int c = 0; c < model.columnCount(); ++c)
        cells << model.headerData(c, Qt::Horizontal).toString();
    return cells;
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
    auto *proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(model);
    proxy->setSortRole(StatsTableModel::SortRole);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy->setFilterKeyColumn(0);
    auto *view = new QTableView(m_tabs);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    // Our Ctrl+C copies whole rows; the view's own would copy one cell.
    view->installEventFilter(this);
    connect(view, &QTableView::doubleClicked, this, [this, tab](const QModelIndex &i) { activateRow(tab, i); });
    m_proxies[size_t(tab)] = proxy;
    m_tables[size_t(tab)] = view;
    return view;
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

QString StatsView::selectionAsTsv() const
{
    const QTableView *view = m_tables[size_t(m_tabs->currentIndex())];
    QModelIndexList rows = view->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    const QAbstractItemModel &model = *view->model();
    QStringList lines{headerTexts(model).join(QLatin1Char('\t'))};
    for (const QModelIndex &row : rows)
        lines << rowTexts(model, row.row()).join(QLatin1Char('\t'));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void StatsView::copySelection() const
{
    const QString tsv = selectionAsTsv();
    if (!tsv.isEmpty())
        QApplication::clipboard()->setText(tsv);
}

bool StatsView::eventFilter(QObject *watched, QEvent *event)
{
    const bool isKey = event->type() == QEvent::KeyPress || event->type() == QEvent::ShortcutOverride;
    if (isKey && static_cast<QKeyEvent *>(event)->matches(QKeySequence::Copy)) {
        if (event->type() == QEvent::KeyPress)
            copySelection();
        event->accept();
        return event->type() == QEvent::KeyPress;
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace fusescope
