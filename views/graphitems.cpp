#include "views/graphitems.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <cmath>

namespace fusescope {
namespace {

constexpr qreal kPadX = 8;
constexpr qreal kPadY = 4;
constexpr qreal kArrowSize = 7;

QFont titleFont()
{
    QFont f;
    f.setPointSizeF(9);
    f.setBold(true);
    return f;
}

QFont detailFont()
{
    QFont f;
    f.setPointSizeF(8);
    return f;
}

QColor styleColor(GraphBoxItem::Style style)
{
    switch (style) {
    case GraphBoxItem::Gemm: return QColor(0xc6, 0xdb, 0xf7);
    case GraphBoxItem::Reduction: return QColor(0xfb, 0xdc, 0xb4);
    case GraphBoxItem::View: return QColor(0xee, 0xee, 0xee);
    case GraphBoxItem::Io: return QColor(0xe4, 0xd7, 0xf5);
    case GraphBoxItem::Module: return QColor(0xf4, 0xf1, 0xe4);
    case GraphBoxItem::Op: break;
    }
    return QColor(0xd5, 0xf0, 0xd0);
}

QColor markColor(ItemMark mark)
{
    switch (mark) {
    case ItemMark::Added: return QColor(0x2e, 0x9e, 0x44);
    case ItemMark::Changed: return QColor(0xd9, 0x8c, 0x00);
    case ItemMark::Removed: return QColor(0xc6, 0x28, 0x28);
    case ItemMark::None: break;
    }
    return {};
}

} // namespace

GraphBoxItem::GraphBoxItem(int index, Style style, QStringList lines, const QSizeF &size)
    : m_index(index), m_style(style), m_lines(std::move(lines)), m_size(size)
{
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(false);
    setToolTip(m_lines.join(QLatin1Char('\n')));
}

QSizeF GraphBoxItem::sizeFor(const QStringList &lines, Style style)
{
    const QFontMetricsF title(titleFont());
    const QFontMetricsF detail(detailFont());
    qreal width = 0;
    qreal height = 2 * kPadY;
    for (int i = 0; i < lines.size(); ++i) {
        const QFontMetricsF &fm = i == 0 ? title : detail;
        width = std::max(width, fm.horizontalAdvance(lines[i]));
        height += fm.height();
    }
    const qreal extra = style == Module ? 6 : 0;
    return {std::ceil(width + 2 * kPadX + extra), std::ceil(height + extra)};
}

void GraphBoxItem::setHeat(const QColor &color)
{
    m_heat = color;
    update();
}

void GraphBoxItem::setHighlighted(bool on)
{
    if (m_highlighted == on)
        return;
    m_highlighted = on;
    setZValue(on ? 2 : 1);
    update();
}

void GraphBoxItem::setMatched(bool on)
{
    if (m_matched != on) {
        m_matched = on;
        update();
    }
}

void GraphBoxItem::setMark(ItemMark mark)
{
    m_mark = mark;
    update();
}

QRectF GraphBoxItem::boundingRect() const
{
    // Room for the thickest outline (selection) around the box.
    return QRectF(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height()).adjusted(-3, -3, 3, 3);
}

QColor GraphBoxItem::fillColor() const
{
    return m_heat.isValid() ? m_heat : styleColor(m_style);
}

void GraphBoxItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const QRectF box(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height());
    QPen pen(m_mark != ItemMark::None ? markColor(m_mark) : QColor(0x55, 0x55, 0x55), m_mark != ItemMark::None ? 2 : 1);
    if (m_style == View)
        pen.setStyle(Qt::DashLine);
    if (m_matched)
        pen = QPen(QColor(0xe0, 0x9f, 0x00), 3);
    if (m_highlighted)
        pen = QPen(QColor(0xd0, 0x30, 0xd0), 3);
    if (isSelected())
        pen = QPen(QColor(0x10, 0x60, 0xe0), 3);
    painter->setPen(pen);
    painter->setBrush(fillColor());
    painter->drawRoundedRect(box, 4, 4);
    if (m_style == Module)
        painter->drawRoundedRect(box.adjusted(3, 3, -3, -3), 3, 3);
    // Text is unreadable below this scale: skip it, the boxes still show the shape of the graph.
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < 0.35)
        return;
    painter->setPen(Qt::black);
    qreal y = box.top() + kPadY + (m_style == Module ? 3 : 0);
    for (int i = 0; i < m_lines.size(); ++i) {
        const QFont font = i == 0 ? titleFont() : detailFont();
        painter->setFont(font);
        const qreal h = QFontMetricsF(font).height();
        painter->drawText(QRectF(box.left(), y, box.width(), h), Qt::AlignCenter, m_lines[i]);
        y += h;
    }
}

GraphEdgeItem::GraphEdgeItem(const QList<QPointF> &points, bool bezier)
{
    QPainterPath path(points.value(0));
    if (bezier && points.size() >= 4) {
        for (qsizetype i = 1; i + 2 < points.size(); i += 3)
            path.cubicTo(points[i], points[i + 1], points[i + 2]);
    } else {
        for (qsizetype i = 1; i < points.size(); ++i)
            path.lineTo(points[i]);
    }
    setPath(path);
    setZValue(0);
    if (points.size() >= 2) {
        const QPointF tip = points.back();
        const QPointF from = points[points.size() - 2] == tip && points.size() > 2 ? points[points.size() - 3]
                                                                                    : points[points.size() - 2];
        const qreal angle = std::atan2(tip.y() - from.y(), tip.x() - from.x());
        const QPointF a = tip - QPointF(std::cos(angle - 0.4), std::sin(angle - 0.4)) * kArrowSize;
        const QPointF b = tip - QPointF(std::cos(angle + 0.4), std::sin(angle + 0.4)) * kArrowSize;
        m_arrow = QPolygonF({tip, a, b});
    }
}

QRectF GraphEdgeItem::boundingRect() const
{
    return QGraphicsPathItem::boundingRect().united(m_arrow.boundingRect()).adjusted(-2, -2, 2, 2);
}

void GraphEdgeItem::setHighlighted(bool on)
{
    m_highlighted = on;
    setZValue(on ? 1.5 : 0);
    update();
}

void GraphEdgeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    const QColor color = m_highlighted ? QColor(0xd0, 0x30, 0xd0) : QColor(0x70, 0x70, 0x70);
    painter->setPen(QPen(color, m_highlighted ? 2 : 1));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path());
    painter->setBrush(color);
    painter->drawPolygon(m_arrow);
}

GraphClusterItem::GraphClusterItem(int index, Kind kind, const QString &label, const QRectF &rect)
    : m_index(index), m_kind(kind), m_label(label), m_rect(rect)
{
    setZValue(-1);
    setToolTip(kind == Kernel ? QObject::tr("fused kernel %1").arg(label)
                              : QObject::tr("module %1 (double-click to collapse)").arg(label));
}

void GraphClusterItem::setHighlighted(bool on)
{
    m_highlighted = on;
    update();
}

void GraphClusterItem::setHeat(const QColor &color)
{
    m_heat = color;
    update();
}

void GraphClusterItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    QColor fill = m_kind == Kernel ? QColor(0xdc, 0xe8, 0xfa, 110) : QColor(0xf2, 0xf2, 0xea, 90);
    if (m_heat.isValid())
        fill = QColor(m_heat.red(), m_heat.green(), m_heat.blue(), 110);
    QPen pen(m_highlighted ? QColor(0xd0, 0x30, 0xd0) : QColor(0x4a, 0x6f, 0xa5), m_highlighted ? 3 : 1);
    if (m_kind == Module)
        pen.setStyle(Qt::DotLine);
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(m_rect, 6, 6);
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < 0.35)
        return;
    QFont f;
    f.setPointSizeF(8);
    f.setItalic(true);
    painter->setFont(f);
    painter->setPen(QColor(0x2a, 0x45, 0x70));
    painter->drawText(m_rect.adjusted(6, 2, -6, 0), Qt::AlignTop | Qt::AlignLeft, m_label);
}

} // namespace fusescope
