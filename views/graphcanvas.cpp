#include "views/graphcanvas.h"

#include <QGraphicsItem>
#include <QKeyEvent>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>

namespace fusescope {
namespace {

constexpr double kMinZoom = 0.02;
constexpr double kMaxZoom = 8.0;
constexpr double kStep = 1.25;
constexpr double kReadableZoom = 0.6;

} // namespace

GraphCanvas::GraphCanvas(QWidget *parent)
    : QGraphicsView(parent)
{
    setDragMode(ScrollHandDrag);
    setTransformationAnchor(AnchorUnderMouse);
    setResizeAnchor(AnchorViewCenter);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    // Items never move, so the scene index stays valid and only exposed parts repaint.
    setViewportUpdateMode(SmartViewportUpdate);
    setOptimizationFlags(DontSavePainterState | DontAdjustForAntialiasing);
    setBackgroundBrush(QColor(0xfb, 0xfb, 0xfb));
    setFocusPolicy(Qt::StrongFocus);
}

void GraphCanvas::zoomBy(double factor)
{
    const double target = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
    const double applied = target / zoom();
    scale(applied, applied);
}

void GraphCanvas::fitAll()
{
    if (!scene() || scene()->items().isEmpty())
        return;
    fitInView(scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
    // Never blow a tiny graph up past natural size: text would look out of place.
    if (zoom() > 1.0)
        zoomBy(1.0 / zoom());
}

void GraphCanvas::fitReadable()
{
    fitAll();
    if (!scene() || zoom() >= kReadableZoom)
        return;
    setTransform(QTransform::fromScale(kReadableZoom, kReadableZoom));
    const QRectF r = scene()->itemsBoundingRect();
    centerOn(r.center().x(), r.top() + viewport()->height() / (2 * kReadableZoom) - 10);
}

void GraphCanvas::wheelEvent(QWheelEvent *event)
{
    const int delta = event->angleDelta().y();
    if (delta == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(kStep, delta / 120.0));
    event->accept();
}

void GraphCanvas::keyPressEvent(QKeyEvent *event)
{
    const bool ctrl = event->modifiers() & Qt::ControlModifier;
    if (ctrl && (event->key() == Qt::Key_Plus || event->key() == Qt::Key_Equal)) {
        const ViewportAnchor anchor = transformationAnchor();
        setTransformationAnchor(AnchorViewCenter);
        zoomBy(kStep);
        setTransformationAnchor(anchor);
    } else if (ctrl && event->key() == Qt::Key_Minus) {
        const ViewportAnchor anchor = transformationAnchor();
        setTransformationAnchor(AnchorViewCenter);
        zoomBy(1 / kStep);
        setTransformationAnchor(anchor);
    } else if (!ctrl && event->key() == Qt::Key_F) {
        fitAll();
    } else {
        // Arrow keys and Page Up/Down scroll (pan) through QAbstractScrollArea.
        QGraphicsView::keyPressEvent(event);
        return;
    }
    event->accept();
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent *event)
{
    const QList<QGraphicsItem *> hits = items(event->pos());
    if (!hits.isEmpty())
        emit itemDoubleClicked(hits.front());
    event->accept();
}

void GraphCanvas::mousePressEvent(QMouseEvent *event)
{
    m_pressPos = event->pos();
    QGraphicsView::mousePressEvent(event);
}

void GraphCanvas::mouseReleaseEvent(QMouseEvent *event)
{
    QGraphicsView::mouseReleaseEvent(event);
    const bool click = (event->pos() - m_pressPos).manhattanLength() < 4;
    if (click && event->button() == Qt::LeftButton && !itemAt(event->pos()))
        emit backgroundClicked();
}

} // namespace fusescope
