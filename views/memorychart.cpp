#include "views/memorychart.h"

#include "views/memorymodel.h"
#include "views/timelinemodel.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace fusescope {

MemoryChart::MemoryChart(QWidget *parent)
    : QWidget(parent)
{
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setToolTip(tr("Click a time to list the allocations live then. Left/Right: previous/next allocation or free, "
                  "Page Up/Down: a larger step, P: the peak, Enter: show that moment on the timeline"));
    setAccessibleName(tr("Memory over time"));
}

void MemoryChart::setMemory(std::shared_ptr<const profiler::MemoryStats> memory, int64_t endNs, int64_t plannedPeak)
{
    m_memory = std::move(memory);
    m_plannedPeak = plannedPeak;
    m_endNs = std::max<int64_t>(1, endNs);
    double top = double(std::max<int64_t>(plannedPeak, 1));
    if (m_memory) {
        if (!m_memory->timeline.empty())
            m_endNs = std::max(m_endNs, m_memory->timeline.back().time);
        top = std::max({top, double(m_memory->peakAllocated), double(m_memory->peakReserved)});
    }
    m_maxBytes = top * 1.1; // headroom for the peak's label
    m_cursorNs = -1;
    m_curvesStale = true;
    update();
}

void MemoryChart::setCursorTime(int64_t timeNs)
{
    m_cursorNs = std::clamp<int64_t>(timeNs, startNs(), m_endNs);
    // What a screen reader says for the cursor the keys move.
    setAccessibleDescription(describeTime(m_cursorNs));
    update();
}

// Cached per size: the curves map a million samples through it.
QRectF MemoryChart::plotArea() const
{
    if (m_plotFor != size())
        m_plot = computePlotArea();
    m_plotFor = size();
    return m_plot;
}

QRectF MemoryChart::computePlotArea() const
{
    const QFontMetrics fm(font());
    const double left = fm.horizontalAdvance(QStringLiteral("1023.5 MiB")) + 12;
    const double top = fm.height() * 2.0; // the legend's line
    const double bottom = fm.height() + 10;
    return QRectF(left, top, std::max(10.0, width() - left - 16), std::max(10.0, height() - top - bottom));
}

int64_t MemoryChart::timeAt(double x) const
{
    const QRectF plot = plotArea();
    const double f = std::clamp((x - plot.left()) / plot.width(), 0.0, 1.0);
    return startNs() + std::llround(f * double(m_endNs - startNs()));
}

double MemoryChart::xOf(int64_t timeNs) const
{
    const QRectF plot = plotArea();
    return plot.left() + double(timeNs - startNs()) / double(m_endNs - startNs()) * plot.width();
}

double MemoryChart::yOf(double bytes) const
{
    const QRectF plot = plotArea();
    return plot.bottom() - bytes / m_maxBytes * plot.height();
}

QString MemoryChart::peakLabel() const
{
    if (!hasSamples())
        return {};
    return tr("peak %1 at %2")
        .arg(formatBytes(double(m_memory->peakAllocated)),
             QString::fromStdString(formatDuration(m_memory->peakAllocatedTime)));
}

QString MemoryChart::plannedPeakLabel() const
{
    return m_plannedPeak < 0 ? QString() : tr("planned peak %1 (compiler)").arg(formatBytes(double(m_plannedPeak)));
}

const profiler::MemorySample *MemoryChart::sampleAt(int64_t timeNs) const
{
    if (!hasSamples())
        return nullptr;
    const auto &t = m_memory->timeline;
    const auto it = std::upper_bound(t.begin(), t.end(), timeNs,
                                     [](int64_t time, const profiler::MemorySample &s) { return time < s.time; });
    return it == t.begin() ? nullptr : &*std::prev(it);
}

QString MemoryChart::describeTime(int64_t timeNs) const
{
    const profiler::MemorySample *s = sampleAt(timeNs);
    const QString at = QString::fromStdString(formatDuration(timeNs));
    if (!s)
        return tr("%1: before the first recorded allocation").arg(at);
    return tr("%1\nallocated: %2\nreserved: %3\nClick to list the allocations live then")
        .arg(at, formatBytes(double(s->allocated)), formatBytes(double(s->reserved)));
}

// The next sample time after `timeNs` (or the last before it): the arrow keys
// step from one allocation or free to the next.
int64_t MemoryChart::neighbourSampleTime(int64_t timeNs, bool forward) const
{
    if (!hasSamples())
        return timeNs;
    const auto &t = m_memory->timeline;
    const auto byTime = [](const profiler::MemorySample &s, int64_t time) { return s.time < time; };
    if (forward) {
        const auto it = std::upper_bound(t.begin(), t.end(), timeNs,
                                         [](int64_t time, const profiler::MemorySample &s) { return time < s.time; });
        return it == t.end() ? timeNs : it->time;
    }
    const auto it = std::lower_bound(t.begin(), t.end(), timeNs, byTime);
    return it == t.begin() ? timeNs : std::prev(it)->time;
}

bool MemoryChart::event(QEvent *event)
{
    if (event->type() != QEvent::ToolTip)
        return QWidget::event(event);
    const auto *help = static_cast<QHelpEvent *>(event);
    if (hasSamples() && plotArea().contains(help->pos()))
        QToolTip::showText(help->globalPos(), describeTime(timeAt(help->pos().x())), this);
    else
        QToolTip::showText(help->globalPos(), toolTip(), this);
    return true;
}

void MemoryChart::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange) {
        m_plotFor = QSize();
        m_curvesStale = true;
    }
    QWidget::changeEvent(event);
}

void MemoryChart::resizeEvent(QResizeEvent *event)
{
    m_curvesStale = true;
    QWidget::resizeEvent(event);
}

void MemoryChart::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !hasSamples())
        return QWidget::mousePressEvent(event);
    // The list is filled on release: a drag only moves the cursor.
    m_dragging = true;
    setCursorTime(timeAt(event->position().x()));
}

void MemoryChart::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragging)
        setCursorTime(timeAt(event->position().x()));
    QWidget::mouseMoveEvent(event);
}

void MemoryChart::mouseReleaseEvent(QMouseEvent *event)
{
    if (!m_dragging || event->button() != Qt::LeftButton)
        return QWidget::mouseReleaseEvent(event);
    m_dragging = false;
    setCursorTime(timeAt(event->position().x()));
    emit timeSelected(m_cursorNs);
}

void MemoryChart::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !hasSamples())
        return QWidget::mouseDoubleClickEvent(event);
    emit timeActivated(timeAt(event->position().x()));
}

void MemoryChart::selectByKey(int64_t timeNs)
{
    setCursorTime(timeNs);
    emit timeSelected(m_cursorNs);
}

void MemoryChart::keyPressEvent(QKeyEvent *event)
{
    if (!hasSamples())
        return QWidget::keyPressEvent(event);
    const int64_t now = std::max<int64_t>(m_cursorNs, 0);
    const int64_t page = std::max<int64_t>(1, (m_endNs - startNs()) / 20);
    switch (event->key()) {
    case Qt::Key_Left:
        selectByKey(neighbourSampleTime(now, false));
        break;
    case Qt::Key_Right:
        selectByKey(neighbourSampleTime(now, true));
        break;
    case Qt::Key_PageUp:
        selectByKey(now - page);
        break;
    case Qt::Key_PageDown:
        selectByKey(now + page);
        break;
    case Qt::Key_Home:
        selectByKey(startNs());
        break;
    case Qt::Key_End:
        selectByKey(m_endNs);
        break;
    case Qt::Key_P:
        selectByKey(m_memory->peakAllocatedTime);
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        emit timeActivated(now);
        break;
    default:
        return QWidget::keyPressEvent(event);
    }
}

} // namespace fusescope
