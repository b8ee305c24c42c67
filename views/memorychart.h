#pragma once
// The Memory view's chart: bytes allocated and reserved over the run as step
// plots, the measured peak marked, the compiler's planned peak as a dashed
// line, and a cursor at the chosen time. A click (or the arrow keys) picks a
// time; the view lists what was live then. Painting folds the samples into
// one vertical span per pixel column, so 1 M samples cost what 1 k do.

#include "profiler/statistics.h"

#include <QPolygonF>
#include <QWidget>

#include <memory>

namespace fusescope {

class MemoryChart : public QWidget
{
    Q_OBJECT
public:
    explicit MemoryChart(QWidget *parent = nullptr);

    // `memory` is one device's timeline (null: nothing to draw); the time axis
    // runs from 0 to the later of `endNs` and the last sample. `plannedPeak`
    // < 0: the run was not compiled.
    void setMemory(std::shared_ptr<const profiler::MemoryStats> memory, int64_t endNs, int64_t plannedPeak);
    void setCursorTime(int64_t timeNs); // no signal
    int64_t cursorTime() const { return m_cursorNs; }

    // The axis mapping, in widget coordinates.
    QRectF plotArea() const;
    int64_t startNs() const { return 0; }
    int64_t endNs() const { return m_endNs; }
    int64_t timeAt(double x) const; // clamped to the axis
    double xOf(int64_t timeNs) const;
    double yOf(double bytes) const;
    double maxBytes() const { return m_maxBytes; }
    int64_t plannedPeak() const { return m_plannedPeak; }

    // Points in the folded curves for the current size: at most four per
    // pixel column however many samples there are.
    int foldedPointCount();

    // The texts drawn beside the peak marker and the planned-peak line ("" when none).
    QString peakLabel() const;
    QString plannedPeakLabel() const;
    // The last sample at or before `timeNs`, or null before the first.
    const profiler::MemorySample *sampleAt(int64_t timeNs) const;
    // What the tooltip at `timeNs` says: the totals then.
    QString describeTime(int64_t timeNs) const;

    QSize sizeHint() const override { return {600, 240}; }
    QSize minimumSizeHint() const override { return {240, 140}; }

signals:
    void timeSelected(qint64 timeNs); // click, drag release, keys
    void timeActivated(qint64 timeNs); // double-click, Enter

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    QRectF computePlotArea() const;
    bool hasSamples() const { return m_memory && !m_memory->timeline.empty(); }
    int64_t neighbourSampleTime(int64_t timeNs, bool forward) const;
    void selectByKey(int64_t timeNs);
    void buildCurves();
    void paintAxes(QPainter &p) const;
    void paintYAxis(QPainter &p) const;
    void paintXAxis(QPainter &p) const;
    void paintCurves(QPainter &p);
    void paintPeak(QPainter &p) const;
    void paintPlannedPeak(QPainter &p) const;
    void paintCursor(QPainter &p) const;
    void paintLegend(QPainter &p) const;

    std::shared_ptr<const profiler::MemoryStats> m_memory;
    int64_t m_endNs = 1;
    int64_t m_plannedPeak = -1;
    double m_maxBytes = 1;
    int64_t m_cursorNs = -1; // -1: none
    bool m_dragging = false;
    mutable QRectF m_plot;
    mutable QSize m_plotFor; // the size m_plot was computed for
    // Folded curves for the current size; rebuilt when stale.
    bool m_curvesStale = true;
    QPolygonF m_allocated;
    QPolygonF m_reserved;
};

} // namespace fusescope
