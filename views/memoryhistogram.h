#pragma once
// The Memory view's allocation-size histogram: one bar per power-of-two size
// bucket, its count above it. Hovering or the arrow keys pick a bar, whose
// range, count and total the caption line (and the tooltip) spell out.

#include "profiler/memoryanalysis.h"

#include <QWidget>

namespace fusescope {

class SizeHistogramWidget : public QWidget
{
    Q_OBJECT
public:
    explicit SizeHistogramWidget(QWidget *parent = nullptr);

    void setHistogram(profiler::SizeHistogram histogram);
    const profiler::SizeHistogram &histogram() const { return m_histogram; }

    int currentBucket() const { return m_current; } // -1: none
    void setCurrentBucket(int bucket);
    // "4 KiB – 8 KiB: 12 allocations, 60.0 KiB in total (3.1 % of them)"
    QString describeBucket(int bucket) const;
    QString caption() const;
    QRectF barRect(int bucket) const;
    int bucketAt(QPointF pos) const; // -1: none

    QSize sizeHint() const override { return {360, 220}; }
    QSize minimumSizeHint() const override { return {200, 120}; }

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    QRectF plotArea() const;
    void paintBar(QPainter &p, int bucket, int64_t maxCount) const;
    void paintLabels(QPainter &p) const;

    profiler::SizeHistogram m_histogram;
    int m_current = -1;
};

} // namespace fusescope
