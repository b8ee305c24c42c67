#pragma once
// The SQL console's result table: one immutable SqlResult swapped in whole.
// Display shows NULL, blobs and long text in a readable short form; EditRole
// gives the value as SQLite returned it.

#include "views/sqlquery.h"

#include <QAbstractTableModel>

#include <memory>

namespace fusescope {

class SqlResultModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;

    void setResult(std::shared_ptr<const SqlResult> result);
    void clear();
    const SqlResult *result() const { return m_result.get(); }

    // The cell as one line of text for TSV: NULL is empty, tabs and newlines become spaces.
    QString cellText(const QModelIndex &index) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const QVariant &value(const QModelIndex &index) const;

    std::shared_ptr<const SqlResult> m_result;
};

} // namespace fusescope
