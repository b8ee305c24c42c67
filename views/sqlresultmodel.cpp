#include "views/sqlresultmodel.h"

#include <QBrush>
#include <QPalette>

namespace fusescope {
namespace {

// Long text (a graph's JSON, generated code) would make rows unreadably tall.
constexpr qsizetype kDisplayChars = 200;

bool isNumber(const QVariant &v)
{
    return v.typeId() == QMetaType::LongLong || v.typeId() == QMetaType::Double;
}

QString blobText(const QByteArray &bytes)
{
    return QStringLiteral("x'%1%2' (%3 bytes)")
        .arg(QString::fromLatin1(bytes.left(16).toHex()), bytes.size() > 16 ? QStringLiteral("…") : QString())
        .arg(bytes.size());
}

QString displayText(const QVariant &v)
{
    if (v.isNull())
        return QStringLiteral("NULL");
    if (v.typeId() == QMetaType::QByteArray)
        return blobText(v.toByteArray());
    QString text = v.toString();
    const qsizetype newline = text.indexOf(QLatin1Char('\n'));
    if (newline >= 0 || text.size() > kDisplayChars)
        text = text.left(std::min(newline < 0 ? text.size() : newline, kDisplayChars)) + QStringLiteral("…");
    return text;
}

} // namespace

void SqlResultModel::setResult(std::shared_ptr<const SqlResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    endResetModel();
}

void SqlResultModel::clear()
{
    setResult(nullptr);
}

int SqlResultModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_result ? 0 : int(m_result->rows.size());
}

int SqlResultModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_result ? 0 : int(m_result->columns.size());
}

const QVariant &SqlResultModel::value(const QModelIndex &index) const
{
    return m_result->rows[size_t(index.row())][index.column()];
}

QString SqlResultModel::cellText(const QModelIndex &index) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const QVariant &v = value(index);
    if (v.isNull())
        return {};
    QString text = v.typeId() == QMetaType::QByteArray ? blobText(v.toByteArray()) : v.toString();
    text.replace(QLatin1Char('\t'), QLatin1Char(' ')).replace(QLatin1Char('\n'), QLatin1Char(' '));
    return text.remove(QLatin1Char('\r'));
}

QVariant SqlResultModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const QVariant &v = value(index);
    switch (role) {
    case Qt::DisplayRole:
        return displayText(v);
    case Qt::EditRole:
        return v;
    case Qt::ToolTipRole:
        return v.typeId() == QMetaType::QString && v.toString().size() > kDisplayChars ? v.toString().left(4000) : QVariant();
    case Qt::TextAlignmentRole:
        return isNumber(v) ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case Qt::ForegroundRole:
        return v.isNull() ? QVariant(QPalette().brush(QPalette::Disabled, QPalette::Text)) : QVariant();
    default:
        return {};
    }
}

QVariant SqlResultModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || !m_result)
        return {};
    if (orientation == Qt::Vertical)
        return section + 1;
    return section >= 0 && section < m_result->columns.size() ? QVariant(m_result->columns[section]) : QVariant();
}

} // namespace fusescope
