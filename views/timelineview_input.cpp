// TimelineView's mouse and keys: zoom, pan, select, ranges, headers, tooltips.
#include "views/timelineview.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace fusescope {

using profiler::Event;
using profiler::EventId;

namespace {

constexpr double kZoomStep = 2.0;   // W/S: half or double the visible span
constexpr double kPanFraction = 0.2; // A/D: a fifth of the window
constexpr int kClickSlop = 3;        // pixels a press may move and still be a click

} // namespace

// ---- mouse ----

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !m_model.run())
        return QAbstractScrollArea::mousePressEvent(event);
    const QPoint pos = event->position().toPoint();
    m_pressPos = pos;
    m_pressT0 = m_t0;
    m_pressScrollY = verticalScrollBar()->value();
    m_moved = false;
    if (handleHeaderClick(pos)) {
        m_drag = Drag::None;
        return;
    }
    const bool range = (event->modifiers() & Qt::ShiftModifier) || pos.y() < kRulerHeight;
    m_drag = range ? Drag::Range : Drag::Pan;
    m_rangeAnchor = timeAt(pos.x());
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    const QPoint pos = event->position().toPoint();
    m_hoverX = pos.x();
    m_moved = m_moved || (pos - m_pressPos).manhattanLength() > kClickSlop;
    if (m_drag == Drag::Pan && m_moved) {
        m_t0 = m_pressT0;
        panPixels(m_pressPos.x() - pos.x());
        verticalScrollBar()->setValue(m_pressScrollY + m_pressPos.y() - pos.y());
    } else if (m_drag == Drag::Range && m_moved) {
        setSelectedRange(m_rangeAnchor, timeAt(pos.x()));
    }
    viewport()->update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent *event)
{
    const QPoint pos = event->position().toPoint();
    const Drag drag = std::exchange(m_drag, Drag::None);
    if (drag == Drag::Range && m_moved)
        emitRange();
    else if (drag != Drag::None && !m_moved)
        finishClick(pos);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent *event)
{
    const int index = rowIndexAt(event->position().toPoint());
    if (index >= 0 && rowAt(index).kind == Row::Header)
        setTrackCollapsed(rowAt(index).track, !m_collapsed[size_t(rowAt(index).track)]);
}

void TimelineView::leaveEvent(QEvent *event)
{
    m_hoverX = -1;
    viewport()->update();
    QAbstractScrollArea::leaveEvent(event);
}

// The triangle collapses, the pin pins; true when the press was one of them.
bool TimelineView::handleHeaderClick(QPoint pos)
{
    const int index = rowIndexAt(pos);
    if (index < 0 || rowAt(index).kind != Row::Header || pos.x() >= 30)
        return false;
    const int track = rowAt(index).track;
    if (pos.x() < 16)
        setTrackCollapsed(track, !m_collapsed[size_t(track)]);
    else
        setTrackPinned(track, !m_pinned[size_t(track)]);
    return true;
}

// A click on an event selects it; on a folded run zooms into the run, where
// its events come apart; on nothing clears the selection.
void TimelineView::finishClick(QPoint pos)
{
    if (pos.y() < kRulerHeight) {
        clearSelectedRange();
        return;
    }
    const TimelineDrawItem *item = itemAt(pos);
    if (item && item->folded()) {
        const int64_t pad = (item->end - item->start) / 20 + 1;
        zoomToRange(item->start - pad, item->end + pad);
        return;
    }
    m_selected = item ? item->event : EventId();
    viewport()->update();
    emit eventSelected(run(), m_selected);
}

void TimelineView::emitRange()
{
    if (m_range && m_range->second > m_range->first)
        emit rangeSelected(m_range->first, m_range->second);
}

// What was drawn under `pos`: the frame's items, so a click hits what the eye sees.
const TimelineDrawItem *TimelineView::itemAt(QPoint pos) const
{
    const int index = rowIndexAt(pos);
    if (index < 0 || rowAt(index).kind != Row::Lane || !m_frame.valid)
        return nullptr;
    auto lane = std::find_if(m_frame.lanes.begin(), m_frame.lanes.end(), [&](const auto &l) { return l.first == index; });
    if (lane == m_frame.lanes.end())
        return nullptr;
    const QRect rect = rowRect(index);
    const std::vector<TimelineDrawItem> &items = lane->second;
    auto it = std::lower_bound(items.begin(), items.end(), double(pos.x()), [&](const TimelineDrawItem &item, double x) {
        return itemRect(rect, item.start, item.end).right() < x;
    });
    if (it == items.end() || itemRect(rect, it->start, it->end).left() > pos.x() + 1)
        return nullptr;
    return &*it;
}

void TimelineView::wheelEvent(QWheelEvent *event)
{
    const QPoint delta = event->angleDelta();
    const double steps = (delta.y() != 0 ? delta.y() : delta.x()) / 120.0;
    if (event->modifiers() & Qt::ControlModifier) {
        zoomBy(std::pow(1.25, steps), event->position().x());
    } else if (event->modifiers() & Qt::ShiftModifier) {
        panPixels(-steps * viewport()->width() * 0.1);
    } else {
        QAbstractScrollArea::wheelEvent(event);
        return;
    }
    event->accept();
}

// ---- keys ----

void TimelineView::keyPressEvent(QKeyEvent *event)
{
    // Zoom keys act around the mouse when it is over the view, as Ctrl+wheel does.
    const double anchor = m_hoverX >= 0 ? m_hoverX : viewport()->width() / 2.0;
    if (event->matches(QKeySequence::Find)) {
        showSearch();
        return;
    }
    switch (event->key()) {
    case Qt::Key_W: zoomBy(kZoomStep, anchor); break;
    case Qt::Key_S: zoomBy(1 / kZoomStep, anchor); break;
    case Qt::Key_A: panPixels(-viewport()->width() * kPanFraction); break;
    case Qt::Key_D: panPixels(viewport()->width() * kPanFraction); break;
    case Qt::Key_0: resetZoom(); break;
    case Qt::Key_F:
        if (m_range)
            zoomToRange(m_range->first, m_range->second);
        else if (m_selected.valid())
            zoomToRange(m_model.event(m_selected).start, m_model.event(m_selected).end());
        break;
    case Qt::Key_F3:
        (event->modifiers() & Qt::ShiftModifier) ? findPrevious() : findNext();
        break;
    case Qt::Key_Escape:
        m_searchBar->hide();
        clearSelectedRange();
        break;
    default: QAbstractScrollArea::keyPressEvent(event); return;
    }
    event->accept();
}

// ---- tooltips ----

bool TimelineView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, viewport());
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

QString TimelineView::toolTipAt(QPoint pos) const
{
    const TimelineDrawItem *item = itemAt(pos);
    if (!item)
        return {};
    if (item->folded())
        return tr("<b>%1 events</b> folded over %2<br>longest looked at: %3<br><i>click to zoom in</i>")
            .arg(item->count)
            .arg(QString::fromStdString(formatDuration(item->end - item->start)))
            .arg(QString::fromStdString(m_model.name(item->event)).toHtmlEscaped());
    return eventToolTip(item->event);
}

QString TimelineView::eventToolTip(EventId id) const
{
    const Event &e = m_model.event(id);
    const int track = m_model.trackIndex(e.track);
    QString text = tr("<b>%1</b><br>%2 · %3<br>start %4, duration %5")
                       .arg(QString::fromStdString(m_model.name(id)).toHtmlEscaped())
                       .arg(QString::fromLatin1(profiler::eventKindName(e.kind)))
                       .arg(track >= 0 ? QString::fromStdString(m_model.tracks()[size_t(track)].name).toHtmlEscaped() : QString())
                       .arg(QString::fromStdString(formatDuration(e.start)))
                       .arg(QString::fromStdString(formatDuration(e.duration)));
    const std::string &detail = m_model.trace()->strings[e.detail];
    if (!detail.empty())
        text += tr("<br>detail: %1").arg(QString::fromStdString(detail).toHtmlEscaped());
    return text + argsToolTip(e);
}

QString TimelineView::argsToolTip(const Event &e) const
{
    const profiler::Run &run = *m_model.run();
    if (!e.args.valid() || e.args.value >= run.args.size())
        return {};
    const profiler::EventArgs &a = run.args[e.args.value];
    QString text;
    if (a.device >= 0 || a.stream >= 0)
        text += tr("<br>device %1, stream %2").arg(a.device).arg(a.stream);
    if (a.grid[0] > 0)
        text += tr("<br>grid [%1, %2, %3], block [%4, %5, %6]")
                    .arg(a.grid[0]).arg(a.grid[1]).arg(a.grid[2]).arg(a.block[0]).arg(a.block[1]).arg(a.block[2]);
    if (a.copyKind != profiler::CopyKind::Unknown)
        text += tr("<br>%1%2").arg(QString::fromLatin1(profiler::copyKindName(a.copyKind)), a.pinned ? tr(", pinned") : QString());
    if (a.correlation >= 0)
        text += tr("<br>correlation %1").arg(a.correlation);
    if (a.externalId >= 0)
        text += tr("<br>external id %1").arg(a.externalId);
    const std::string &extra = m_model.trace()->strings[a.extra];
    if (!extra.empty())
        text += tr("<br>%1").arg(QString::fromStdString(extra.size() > 400 ? extra.substr(0, 400) + "…" : extra).toHtmlEscaped());
    return text;
}

} // namespace fusescope
