#include "views/sortabletable.h"

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QKeyEvent>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <algorithm>

namespace fusescope {

namespace {

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

SortableTable createSortableTable(QAbstractItemModel *model, int sortRole, QWidget *parent, int nameColumn)
{
    auto *proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(sortRole);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy->setFilterKeyColumn(0);
    auto *view = new QTableView(parent);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->verticalHeader()->hide();
    // The names take what the numbers leave: with the last column (a
    // percentage) stretched, op names were cut to a dozen characters.
    QHeaderView *header = view->horizontalHeader();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setSectionResizeMode(nameColumn, QHeaderView::Stretch);
    const auto fitNumbers = [view] { view->resizeColumnsToContents(); };
    QObject::connect(model, &QAbstractItemModel::modelReset, view, fitNumbers);
    fitNumbers();
    view->installEventFilter(new TsvCopyFilter(view));
    return {view, proxy};
}

QString selectedRowsAsTsv(const QTableView &view)
{
    QModelIndexList rows = view.selectionModel() ? view.selectionModel()->selectedRows() : QModelIndexList();
    if (rows.isEmpty())
        return {};
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    const QAbstractItemModel &model = *view.model();
    QStringList lines{headerTexts(model).join(QLatin1Char('\t'))};
    for (const QModelIndex &row : rows)
        lines << rowTexts(model, row.row()).join(QLatin1Char('\t'));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

bool TsvCopyFilter::eventFilter(QObject *watched, QEvent *event)
{
    const bool isKey = event->type() == QEvent::KeyPress || event->type() == QEvent::ShortcutOverride;
    auto *view = qobject_cast<QTableView *>(watched);
    if (view && isKey && static_cast<QKeyEvent *>(event)->matches(QKeySequence::Copy)) {
        // Accepting the override keeps a window-wide Ctrl+C shortcut from taking the key.
        event->accept();
        if (event->type() != QEvent::KeyPress)
            return false;
        const QString tsv = selectedRowsAsTsv(*view);
        if (!tsv.isEmpty())
            QApplication::clipboard()->setText(tsv);
        return true;
    }
    return QObject::eventFilter(watched, event);
}

} // namespace fusescope
