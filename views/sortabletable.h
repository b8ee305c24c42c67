#pragma once
// What every statistics-like table of the window shares: a read-only
// QTableView over a QSortFilterProxyModel that sorts by raw numbers (not by
// their text) and filters on the name column, whole rows selected, and
// Ctrl+C copying the selected rows as TSV with a header line.

#include <QObject>
#include <QString>

class QAbstractItemModel;
class QSortFilterProxyModel;
class QTableView;
class QWidget;

namespace fusescope {

struct SortableTable {
    QTableView *view = nullptr;
    QSortFilterProxyModel *proxy = nullptr;
};

// `sortRole` gives the raw values the proxy sorts by. The proxy and the view
// are children of `parent`; the view copies its selection on Ctrl+C.
// `nameColumn` takes the width the other columns leave; they fit their
// contents whenever the model is reset, and the user may resize them.
SortableTable createSortableTable(QAbstractItemModel *model, int sortRole, QWidget *parent, int nameColumn = 0);

// The selected rows of `view` as TSV, the header line first, in the view's
// order; "" when nothing is selected.
QString selectedRowsAsTsv(const QTableView &view);

// Copies a table's selected rows as TSV on Ctrl+C (the view's own copy
// would take one cell).
class TsvCopyFilter : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
};

} // namespace fusescope
