#pragma once
// The drawn pieces of a graph: nodes, collapsed modules, edges with
// arrowheads and labelled clusters. Custom-painted QGraphicsItems, so a
// scene of thousands stays cheap and every piece can be clicked.

#include <QColor>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QStringList>

namespace fusescope {

// What an item shows besides its text, set by the GraphView.
enum class ItemMark { None, Added, Changed, Removed };

class GraphBoxItem : public QGraphicsItem
{
public:
    enum Style { Op, Gemm, Reduction, View, Io, Module };
    // `lines`: the title first (bold), then details; `index` is the presented item's.
    GraphBoxItem(int index, Style style, QStringList lines, const QSizeF &size);

    static QSizeF sizeFor(const QStringList &lines, Style style);
    int index() const { return m_index; }
    Style style() const { return m_style; }
    const QStringList &lines() const { return m_lines; }

    // A fill from the heat overlay; invalid = the style's own colour.
    void setHeat(const QColor &color);
    void setHighlighted(bool on);
    void setMatched(bool on);
    void setMark(ItemMark mark);
    bool isHighlighted() const { return m_highlighted; }
    ItemMark mark() const { return m_mark; }

    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    QColor fillColor() const;

    int m_index;
    Style m_style;
    QStringList m_lines;
    QSizeF m_size;
    QColor m_heat;
    bool m_highlighted = false;
    bool m_matched = false;
    ItemMark m_mark = ItemMark::None;
};

class GraphEdgeItem : public QGraphicsPathItem
{
public:
    // `points`: a polyline, or cubic Bezier control points (1 + 3k of them).
    GraphEdgeItem(const QList<QPointF> &points, bool bezier);
    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;
    void setHighlighted(bool on);

private:
    QPolygonF m_arrow;
    bool m_highlighted = false;
};

class GraphClusterItem : public QGraphicsItem
{
public:
    enum Kind { Kernel, Module };
    GraphClusterItem(int index, Kind kind, const QString &label, const QRectF &rect);
    int index() const { return m_index; }
    Kind kind() const { return m_kind; }
    const QString &label() const { return m_label; }
    void setHighlighted(bool on);
    void setHeat(const QColor &color);

    QRectF boundingRect() const override { return m_rect; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    int m_index;
    Kind m_kind;
    QString m_label;
    QRectF m_rect;
    QColor m_heat;
    bool m_highlighted = false;
};

} // namespace fusescope
