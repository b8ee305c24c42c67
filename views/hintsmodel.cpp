#include "views/hintsmodel.h"

#include "views/timelinemodel.h"

#include <QApplication>
#include <QColor>
#include <QIcon>
#include <QStyle>

#include <cmath>

namespace fusescope {

QString hintSeverityText(profiler::HintSeverity severity)
{
    switch (severity) {
    case profiler::HintSeverity::Info: return HintsModel::tr("Info");
    case profiler::HintSeverity::Warning: return HintsModel::tr("Warning");
    case profiler::HintSeverity::Critical: return HintsModel::tr("Critical");
    }
    return {};
}

QString formatHintSaving(double savingUs)
{
    return QString::fromStdString(formatDuration(std::llround(savingUs * 1000.0)));
}

HintsModel::HintsModel(QObject *parent) : QAbstractTableModel(parent) {}

void HintsModel::setHints(std::vector<profiler::Hint> hints)
{
    beginResetModel();
    m_hints = std::move(hints);
    endResetModel();
}

const profiler::Hint &HintsModel::hint(int row) const
{
    Q_ASSERT(row >= 0 && row < rowCount());
    return m_hints[size_t(row)];
}

int HintsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_hints.size());
}

int HintsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HintsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const profiler::Hint &h = hint(index.row());
    switch (role) {
    case Qt::DisplayRole: return displayData(h, index.column());
    case SortRole: return sortData(h, index.column());
    case Qt::DecorationRole: return decoration(h, index.column());
    case Qt::ForegroundRole: return foreground(h, index.column());
    case Qt::ToolTipRole: return toolTip(h);
    case Qt::TextAlignmentRole:
        if (index.column() == SavingColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default: return {};
    }
}

QVariant HintsModel::displayData(const profiler::Hint &hint, int column) const
{
    switch (column) {
    case SeverityColumn: return hintSeverityText(hint.severity);
    case RuleColumn: return QString::fromStdString(hint.rule);
    case SavingColumn: return formatHintSaving(hint.savingUs);
    case MessageColumn: return QString::fromStdString(hint.message);
    default: return {};
    }
}

QVariant HintsModel::sortData(const profiler::Hint &hint, int column) const
{
    if (column == SeverityColumn)
        return int(hint.severity);
    if (column == SavingColumn)
        return hint.savingUs;
    return displayData(hint, column);
}

QVariant HintsModel::decoration(const profiler::Hint &hint, int column) const
{
    if (column != SeverityColumn || !qApp)
        return {};
    switch (hint.severity) {
    case profiler::HintSeverity::Info: return QApplication::style()->standardIcon(QStyle::SP_MessageBoxInformation);
    case profiler::HintSeverity::Warning: return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
    case profiler::HintSeverity::Critical: return QApplication::style()->standardIcon(QStyle::SP_MessageBoxCritical);
    }
    return {};
}

QVariant HintsModel::foreground(const profiler::Hint &hint, int column) const
{
    // Only the severity word is coloured: a whole red row is hard to read.
    if (column != SeverityColumn)
        return {};
    switch (hint.severity) {
    case profiler::HintSeverity::Info: return {};
    case profiler::HintSeverity::Warning: return QColor(0xb3, 0x6b, 0x00);
    case profiler::HintSeverity::Critical: return QColor(0xc6, 0x28, 0x28);
    }
    return {};
}

QString HintsModel::toolTip(const profiler::Hint &hint)
{
    return QString::fromStdString(hint.message) + QStringLiteral("\n\n") + tr("Fix: %1").arg(QString::fromStdString(hint.fix));
}

QVariant HintsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case SeverityColumn: return tr("Severity");
    case RuleColumn: return tr("Rule");
    case SavingColumn: return tr("Est. saving");
    case MessageColumn: return tr("Finding");
    default: return {};
    }
}

} // namespace fusescope
