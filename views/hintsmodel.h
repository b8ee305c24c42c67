#pragma once

#include "profiler/hints.h"

#include <QAbstractTableModel>

#include <vector>

namespace fusescope {

// The hints engine's findings, one row each, in the engine's rank order
// (largest estimated saving first). Holds a copy: the view computes the
// hints once per document and hands them over in one batch.
class HintsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { SeverityColumn, RuleColumn, SavingColumn, MessageColumn, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1, // raw values: severity rank, rule id, saving in µs, message
    };

    explicit HintsModel(QObject *parent = nullptr);

    void setHints(std::vector<profiler::Hint> hints);
    const std::vector<profiler::Hint> &hints() const { return m_hints; }
    const profiler::Hint &hint(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant displayData(const profiler::Hint &hint, int column) const;
    QVariant sortData(const profiler::Hint &hint, int column) const;
    QVariant decoration(const profiler::Hint &hint, int column) const;
    QVariant foreground(const profiler::Hint &hint, int column) const;
    static QString toolTip(const profiler::Hint &hint);

    std::vector<profiler::Hint> m_hints;
};

QString hintSeverityText(profiler::HintSeverity severity); // "Info", "Warning", "Critical"
// The saving as a duration ("12.3 ms"); savings are in µs.
QString formatHintSaving(double savingUs);

} // namespace fusescope
