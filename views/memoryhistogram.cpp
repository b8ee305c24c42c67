#include "views/memoryhistogram.h"

#include "views/memorymodel.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace fusescope {

namespace {
const QColor kBar(52, 120, 198);
}

SizeHistogramWidget::SizeHistogramWidget(QWidget *parent)
    : QWidget(parent)
{
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAccessibleName(tr("Allocation sizes"));
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void SizeHistogramWidget::setHistogram(profiler::SizeHistogram histogram)
{
    m_histogram = std::move(histogram);
    m_current = -1;
    update();
}

void SizeHistogramWidget::setCurrentBucket(int bucket)
{
    m_current = bucket >= 0 && bucket < int(m_histogram.buckets.size()) ? bucket : -1;
    setAccessibleDescription(caption());
    update();
}

QString SizeHistogramWidget::describeBucket(int bucket) const
{
    if (bucket < 0 || bucket >= int(m_histogram.buckets.size()))
        return {};
    const profiler::SizeBucket &b = m_histogram.buckets[size_t(bucket)];
    const double share = m_histogram.allocations ? 100.0 * double(b.count) / double(m_histogram.allocations) : 0.0;
    return tr("%1 – %2: %3, %4 in total (%5 % of them)")
        .arg(formatBytes(double(b.lowerBytes)), formatBytes(double(b.upperBytes())), allocationCount(b.count),
             formatBytes(double(b.totalBytes)))
        .arg(share, 0, 'f', 1);
}

QString SizeHistogramWidget::caption() const
{
    if (m_current >= 0)
        return describeBucket(m_current);
    return tr("Allocation sizes: %1").arg(allocationCount(m_histogram.allocations));
}

QRectF SizeHistogramWidget::plotArea() const
{
    const QFontMetricsF fm(font());
    return QRectF(8, fm.height() * 2.6, std::max(10.0, width() - 16.0), std::max(10.0, height() - fm.height() * 4.0));
}

QRectF SizeHistogramWidget::barRect(int bucket) const
{
    const QRectF plot = plotArea();
    const double w = plot.width() / double(std::max<size_t>(1, m_histogram.buckets.size()));
    return QRectF(plot.left() + w * bucket, plot.top(), w, plot.height());
}

int SizeHistogramWidget::bucketAt(QPointF pos) const
{
    for (int b = 0; b < int(m_histogram.buckets.size()); ++b)
        if (barRect(b).contains(pos))
            return b;
    return -1;
}

bool SizeHistogramWidget::event(QEvent *event)
{
    if (event->type() != QEvent::ToolTip)
        return QWidget::event(event);
    const auto *help = static_cast<QHelpEvent *>(event);
    const int b = bucketAt(help->pos());
    if (b >= 0)
        QToolTip::showText(help->globalPos(), describeBucket(b), this);
    else
        QToolTip::hideText();
    return true;
}

void SizeHistogramWidget::mouseMoveEvent(QMouseEvent *event)
{
    const int b = bucketAt(event->position());
    if (b != m_current)
        setCurrentBucket(b);
    QWidget::mouseMoveEvent(event);
}

void SizeHistogramWidget::keyPressEvent(QKeyEvent *event)
{
    const int n = int(m_histogram.buckets.size());
    if (n == 0)
        return QWidget::keyPressEvent(event);
    switch (event->key()) {
    case Qt::Key_Left:
        setCurrentBucket(std::max(0, m_current - 1));
        break;
    case Qt::Key_Right:
        setCurrentBucket(std::min(n - 1, m_current + 1));
        break;
    case Qt::Key_Home:
        setCurrentBucket(0);
        break;
    case Qt::Key_End:
        setCurrentBucket(n - 1);
        break;
    default:
        return QWidget::keyPressEvent(event);
    }
}

void SizeHistogramWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    p.setPen(palette().color(QPalette::Text));
    const QFontMetricsF fm(font());
    p.drawText(QRectF(8, 2, width() - 16, fm.height() * 1.2), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(caption(), Qt::ElideRight, width() - 16));
    int64_t maxCount = 1;
    for (const profiler::SizeBucket &b : m_histogram.buckets)
        maxCount = std::max(maxCount, b.count);
    for (int b = 0; b < int(m_histogram.buckets.size()); ++b)
        paintBar(p, b, maxCount);
    paintLabels(p);
    if (hasFocus()) {
        p.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DotLine));
        p.setBrush(Qt::NoBrush);
        p.drawRect(rect().adjusted(0, 0, -1, -1));
    }
}

void SizeHistogramWidget::paintBar(QPainter &p, int bucket, int64_t maxCount) const
{
    const profiler::SizeBucket &b = m_histogram.buckets[size_t(bucket)];
    const QRectF slot = barRect(bucket);
    const double h = slot.height() * double(b.count) / double(maxCount);
    const QRectF bar(slot.left() + 1, slot.bottom() - h, std::max(1.0, slot.width() - 2), h);
    p.fillRect(bar, bucket == m_current ? palette().color(QPalette::Highlight) : kBar);
    if (b.count == 0)
        return;
    p.setPen(palette().color(QPalette::Text));
    const QFontMetricsF fm(font());
    p.drawText(QRectF(slot.left(), bar.top() - fm.height(), slot.width(), fm.height()), Qt::AlignCenter,
               QString::number(b.count));
}

// Lower bounds under the bars, thinned so the labels never overlap.
void SizeHistogramWidget::paintLabels(QPainter &p) const
{
    const int n = int(m_histogram.buckets.size());
    if (n == 0)
        return;
    const QFontMetricsF fm(font());
    const double slot = barRect(0).width();
    const double labelWidth = fm.horizontalAdvance(QStringLiteral("512 KiB")) + 6;
    const int every = std::max(1, int(std::ceil(labelWidth / std::max(1.0, slot))));
    const QRectF plot = plotArea();
    p.setPen(palette().color(QPalette::Text));
    for (int b = 0; b < n; b += every) {
        const QRectF r = barRect(b);
        const double left = std::clamp(r.center().x() - labelWidth / 2, 0.0, std::max(0.0, width() - labelWidth));
        p.drawText(QRectF(left, plot.bottom() + 2, labelWidth, fm.height()), Qt::AlignCenter,
                   formatBytes(double(m_histogram.buckets[size_t(b)].lowerBytes)));
    }
}

} // namespace fusescope
