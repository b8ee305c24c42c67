// MemoryChart's painting: axes with adaptive units, the folded step curves,
// the peak, the planned peak, the cursor and the legend.
#include "views/memorychart.h"

#include "views/memorymodel.h"
#include "views/timelinemodel.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace fusescope {

namespace {

const QColor kAllocated(52, 120, 198);
const QColor kReserved(226, 128, 30);
const QColor kPeak(200, 40, 40);
const QColor kPlanned(30, 140, 70);

// Folds a step curve into one pixel column at a time: a horizontal line in
// at the previous level, then the column's low and high, ending at its last
// value, so the drawn line visits every extreme however many samples share
// the column.
class StepFolder
{
public:
    explicit StepFolder(QPolygonF &line)
        : m_line(line)
    { }
    void add(double x, double y)
    {
        if (m_open && x != m_x)
            flush();
        if (!m_open) {
            m_x = x;
            m_low = m_high = y;
            m_open = true;
        }
        m_low = std::min(m_low, y);
        m_high = std::max(m_high, y);
        m_exit = y;
    }
    void finish(double xEnd)
    {
        flush();
        if (!m_line.isEmpty() && xEnd > m_line.last().x())
            m_line << QPointF(xEnd, m_line.last().y());
    }

private:
    void flush()
    {
        if (!m_open)
            return;
        if (!m_line.isEmpty())
            m_line << QPointF(m_x, m_line.last().y());
        m_line << QPointF(m_x, m_low);
        if (m_high != m_low)
            m_line << QPointF(m_x, m_high);
        if (m_exit != m_high)
            m_line << QPointF(m_x, m_exit);
        m_open = false;
    }

    QPolygonF &m_line;
    bool m_open = false;
    double m_x = 0, m_low = 0, m_high = 0, m_exit = 0;
};

// Nice 1-2-5 steps in the largest binary unit that keeps the top at >= 1.
struct ByteTicks {
    double stepBytes = 1;
    double unitBytes = 1;
    const char *unit = "B";
};

ByteTicks byteTicks(double maxBytes, double pixels)
{
    static constexpr std::pair<double, const char *> kUnits[]
        = {{1024.0 * 1024 * 1024, "GiB"}, {1024.0 * 1024, "MiB"}, {1024.0, "KiB"}, {1.0, "B"}};
    ByteTicks ticks;
    for (const auto &[bytes, unit] : kUnits)
        if (maxBytes >= bytes) {
            ticks.unitBytes = bytes;
            ticks.unit = unit;
            break;
        }
    const double wanted = maxBytes / ticks.unitBytes / std::max(1.0, pixels / 40.0);
    const double decade = std::pow(10.0, std::floor(std::log10(std::max(wanted, 1e-9))));
    double step = decade * 10;
    for (double m : {1.0, 2.0, 5.0})
        if (m * decade >= wanted) {
            step = m * decade;
            break;
        }
    ticks.stepBytes = std::max(step * ticks.unitBytes, 1.0); // no fractions of a byte
    return ticks;
}

} // namespace

void MemoryChart::buildCurves()
{
    m_allocated.clear();
    m_reserved.clear();
    m_curvesStale = false;
    if (!hasSamples())
        return;
    StepFolder allocated(m_allocated);
    StepFolder reserved(m_reserved);
    for (const profiler::MemorySample &s : m_memory->timeline) {
        const double x = std::floor(xOf(s.time)) + 0.5; // one column per pixel
        allocated.add(x, yOf(double(s.allocated)));
        reserved.add(x, yOf(double(s.reserved)));
    }
    allocated.finish(xOf(m_endNs));
    reserved.finish(xOf(m_endNs));
}

int MemoryChart::foldedPointCount()
{
    if (m_curvesStale)
        buildCurves();
    return int(m_allocated.size() + m_reserved.size());
}

void MemoryChart::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!hasSamples()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No memory samples on this device"));
        return;
    }
    if (m_curvesStale)
        buildCurves();
    paintAxes(p);
    paintCurves(p);
    paintPlannedPeak(p);
    paintPeak(p);
    paintCursor(p);
    paintLegend(p);
    if (hasFocus()) {
        p.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DotLine));
        p.setBrush(Qt::NoBrush);
        p.drawRect(rect().adjusted(0, 0, -1, -1));
    }
}

void MemoryChart::paintAxes(QPainter &p) const
{
    const QRectF plot = plotArea();
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    p.drawLine(plot.bottomLeft(), plot.topLeft());
    paintYAxis(p);
    paintXAxis(p);
}

void MemoryChart::paintYAxis(QPainter &p) const
{
    const QRectF plot = plotArea();
    const ByteTicks ticks = byteTicks(m_maxBytes, plot.height());
    const QColor grid = palette().color(QPalette::Midlight);
    for (double v = 0; v <= m_maxBytes; v += ticks.stepBytes) {
        const double y = yOf(v);
        p.setPen(grid);
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(palette().color(QPalette::Text));
        const QString label
            = QStringLiteral("%1 %2").arg(v / ticks.unitBytes, 0, 'g', 4).arg(QLatin1String(ticks.unit));
        p.drawText(QRectF(0, y - 10, plot.left() - 6, 20), Qt::AlignRight | Qt::AlignVCenter, label);
    }
}

void MemoryChart::paintXAxis(QPainter &p) const
{
    const QRectF plot = plotArea();
    const TimeTicks ticks = timeTicks(startNs(), m_endNs, plot.width());
    p.setPen(palette().color(QPalette::Text));
    for (int64_t t = ticks.firstNs; t <= m_endNs; t += ticks.stepNs) {
        const double x = xOf(t);
        p.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4));
        const QString label = QString::fromStdString(formatTick(t, ticks));
        p.drawText(QRectF(x - 45, plot.bottom() + 4, 90, height() - plot.bottom() - 4), Qt::AlignHCenter | Qt::AlignTop,
                   label);
    }
}

void MemoryChart::paintCurves(QPainter &p)
{
    if (m_allocated.isEmpty())
        return;
    p.save();
    p.setClipRect(plotArea().adjusted(0, -1, 1, 1));
    QPolygonF area = m_allocated;
    const double bottom = plotArea().bottom();
    area << QPointF(area.last().x(), bottom) << QPointF(area.first().x(), bottom);
    QColor fill = kAllocated;
    fill.setAlpha(70);
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    p.drawPolygon(area);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(kAllocated, 1.5));
    p.drawPolyline(m_allocated);
    p.setPen(QPen(kReserved, 1.5));
    p.drawPolyline(m_reserved);
    p.restore();
}

void MemoryChart::paintPeak(QPainter &p) const
{
    const QPointF at(xOf(m_memory->peakAllocatedTime), yOf(double(m_memory->peakAllocated)));
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(QPen(kPeak, 1.5));
    p.setBrush(kPeak);
    p.drawEllipse(at, 3.5, 3.5);
    p.setBrush(Qt::NoBrush);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QString label = peakLabel();
    const double w = QFontMetricsF(font()).horizontalAdvance(label) + 4;
    // Right of the marker unless that would leave the plot.
    const double x = at.x() + 6 + w > plotArea().right() ? at.x() - 6 - w : at.x() + 6;
    p.drawText(QRectF(x, at.y() - 18, w, 16), Qt::AlignLeft | Qt::AlignVCenter, label);
}

void MemoryChart::paintPlannedPeak(QPainter &p) const
{
    if (m_plannedPeak < 0)
        return;
    const QRectF plot = plotArea();
    const double y = yOf(double(m_plannedPeak));
    p.setPen(QPen(kPlanned, 1.5, Qt::DashLine));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.drawText(QRectF(plot.left() + 4, y + 2, plot.width() - 8, 16), Qt::AlignRight | Qt::AlignTop, plannedPeakLabel());
}

void MemoryChart::paintCursor(QPainter &p) const
{
    if (m_cursorNs < 0)
        return;
    const QRectF plot = plotArea();
    const double x = xOf(m_cursorNs);
    const QColor c = palette().color(QPalette::Highlight);
    p.setPen(QPen(c, 1));
    p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    const QString label = QString::fromStdString(formatDuration(m_cursorNs));
    const double w = QFontMetricsF(font()).horizontalAdvance(label) + 8;
    // At the foot of the line, clear of the peak's label near the top.
    const double h = QFontMetricsF(font()).height() + 2;
    const QRectF box(std::min(x + 2, plot.right() - w), plot.bottom() - h - 2, w, h);
    p.fillRect(box, c);
    p.setPen(palette().color(QPalette::HighlightedText));
    p.drawText(box, Qt::AlignCenter, label);
}

void MemoryChart::paintLegend(QPainter &p) const
{
    const QFontMetricsF fm(font());
    double x = plotArea().left();
    const double y = fm.height() * 0.4;
    auto item = [&](const QColor &color, Qt::PenStyle style, const QString &text) {
        p.setPen(QPen(color, 2, style));
        p.drawLine(QPointF(x, y + fm.height() / 2), QPointF(x + 18, y + fm.height() / 2));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QPointF(x + 22, y + fm.ascent()), text);
        x += 22 + fm.horizontalAdvance(text) + 16;
    };
    item(kAllocated, Qt::SolidLine, tr("allocated"));
    item(kReserved, Qt::SolidLine, tr("reserved"));
    item(kPeak, Qt::SolidLine, tr("measured peak"));
    if (m_plannedPeak >= 0)
        item(kPlanned, Qt::DashLine, tr("planned peak (compiler)"));
}

} // namespace fusescope
