#pragma once
// The scrollable, zoomable surface a GraphView draws on: wheel zooms around
// the mouse, a drag pans, arrow keys pan, Ctrl +/- zoom, F fits, and a double
// click reports the item under the mouse.

#include <QGraphicsView>

namespace fusescope {

class GraphCanvas : public QGraphicsView
{
    Q_OBJECT
public:
    explicit GraphCanvas(QWidget *parent = nullptr);

    void zoomBy(double factor);
    void fitAll();
    // Fits the graph when its text stays readable; else shows its top at the
    // smallest readable zoom, as a first view of a long graph should.
    void fitReadable();
    double zoom() const { return transform().m11(); }

signals:
    void itemDoubleClicked(QGraphicsItem *item);
    void backgroundClicked();

protected:
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;

private:
    QPoint m_pressPos;
};

} // namespace fusescope
