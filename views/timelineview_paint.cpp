// TimelineView's drawing: every frame paints the items TimelineView::frame()
// computed, so the work here follows the pixels, not the events.
#include "views/timelineview.h"

#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>

#include <algorithm>
#include <cmath>

namespace fusescope {

using profiler::Event;
using profiler::EventId;
using profiler::EventKind;

namespace {

constexpr int kTextMinWidth = 36; // narrower items get no label: it would be "…"

const QColor kBackground(0xff, 0xff, 0xff);
const QColor kBackgroundOdd(0xf6, 0xf7, 0xf9);
const QColor kGroupFill(0x3a, 0x3f, 0x4b);
const QColor kHeaderFill(0xe9, 0xec, 0xf0);
const QColor kRulerFill(0xfa, 0xfa, 0xfa);
const QColor kSelection(0x10, 0x10, 0x10);
const QColor kMatch(0xff, 0x8c, 0x00);
const QColor kRangeFill(0x33, 0x88, 0xff, 0x30);
const QColor kFlow(0xd0, 0x20, 0x60);

// A stable hue per name, spread by the golden ratio so neighbours differ.
int hueOf(profiler::StringId name, int from, int span)
{
    const double f = std::fmod(name.value * 0.6180339887, 1.0);
    return from + int(f * span);
}

QColor copyColor(profiler::CopyKind kind)
{
    switch (kind) {
    case profiler::CopyKind::HostToDevice: return QColor(0xf0, 0x8a, 0x24);
    case profiler::CopyKind::DeviceToHost: return QColor(0xe0, 0x5a, 0x2b);
    case profiler::CopyKind::DeviceToDevice: return QColor(0xe8, 0xb8, 0x30);
    default: return QColor(0xd9, 0x75, 0x3c);
    }
}

} // namespace

void TimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    p.fillRect(viewport()->rect(), kBackground);
    if (!m_model.run()) {
        p.setPen(Qt::gray);
        p.drawText(viewport()->rect(), Qt::AlignCenter, tr("No trace"));
        return;
    }
    const Frame &f = frame();
    paintRows(p, f);
    paintSelection(p);
    paintFlows(p);
    paintRange(p);
    paintRuler(p);
    paintMatchMarks(p);
    paintCursor(p);
}

// Scrolled rows first, then the pinned ones on top of them.
void TimelineView::paintRows(QPainter &p, const Frame &frame)
{
    const int pinned = int(m_pinnedRows.size());
    const QRect scrolledArea(0, kRulerHeight + pinnedHeight(), viewport()->width(), viewport()->height());
    for (int pass = 0; pass < 2; ++pass) {
        p.setClipRect(pass == 0 ? scrolledArea : viewport()->rect());
        for (int i = pass == 0 ? pinned : 0; i < (pass == 0 ? rowCount() : pinned); ++i) {
            const Row &row = rowAt(i);
            const QRect rect = rowRect(i);
            if (rect.bottom() < kRulerHeight || rect.top() > viewport()->height())
                continue;
            if (row.kind == Row::Group)
                paintGroupRow(p, row, rect);
            else if (row.kind == Row::Header)
                paintHeaderRow(p, row, rect);
            else if (row.kind == Row::Counter)
                paintCounter(p, row, rect);
            else {
                auto items = std::find_if(frame.lanes.begin(), frame.lanes.end(), [&](const auto &l) { return l.first == i; });
                p.fillRect(rect, row.lane % 2 ? kBackgroundOdd : kBackground);
                if (items != frame.lanes.end())
                    paintLane(p, rect, items->second);
            }
        }
    }
    p.setClipping(false);
    if (pinned > 0) {
        p.setPen(QPen(QColor(0x80, 0x80, 0x80), 2));
        p.drawLine(0, kRulerHeight + pinnedHeight() - 1, viewport()->width(), kRulerHeight + pinnedHeight() - 1);
    }
}

void TimelineView::paintGroupRow(QPainter &p, const Row &row, const QRect &rect) const
{
    p.fillRect(rect, kGroupFill);
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(Qt::white);
    p.drawText(rect.adjusted(8, 0, -8, 0), Qt::AlignVCenter | Qt::AlignLeft,
               QString::fromStdString(m_model.groups()[size_t(row.group)].name));
    p.setFont(font());
}

// A triangle (collapse), a pin, then the track's name and what it holds.
void TimelineView::paintHeaderRow(QPainter &p, const Row &row, const QRect &rect) const
{
    const TimelineTrack &track = m_model.tracks()[size_t(row.track)];
    p.fillRect(rect, kHeaderFill);
    const double cy = rect.center().y() + 0.5;
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x50, 0x50, 0x50));
    const bool collapsed = m_collapsed[size_t(row.track)];
    const QPolygonF triangle = collapsed ? QPolygonF({QPointF(5, cy - 5), QPointF(12, cy), QPointF(5, cy + 5)})
                                         : QPolygonF({QPointF(4, cy - 3), QPointF(13, cy - 3), QPointF(8.5, cy + 4)});
    p.drawPolygon(triangle);
    p.setBrush(m_pinned[size_t(row.track)] ? QColor(0xd0, 0x30, 0x30) : Qt::transparent);
    p.setPen(QPen(QColor(0x70, 0x70, 0x70), 1.2));
    p.drawEllipse(QPointF(23, cy), 4, 4);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(Qt::black);
    const QString detail = track.kind == profiler::TrackKind::Counter
                               ? tr("counter, max %1").arg(track.counterMax, 0, 'g', 4)
                               : QStringLiteral("%1, %2").arg(QString::fromLatin1(profiler::trackKindName(track.kind)),
                                                              track.laneCount == 1 ? tr("1 lane") : tr("%1 lanes").arg(track.laneCount));
    p.drawText(rect.adjusted(34, 0, -8, 0), Qt::AlignVCenter | Qt::AlignLeft,
               QString::fromStdString(track.name) + QStringLiteral("   ") + detail);
}

void TimelineView::paintLane(QPainter &p, const QRect &rect, const std::vector<TimelineDrawItem> &items) const
{
    for (const TimelineDrawItem &item : items)
        paintItem(p, rect, item);
}

QRectF TimelineView::itemRect(const QRect &lane, int64_t start, int64_t end) const
{
    double x0 = xForTime(start), x1 = xForTime(end);
    // A lone narrow item still shows, at the fold width.
    if (x1 - x0 < kTimelineFoldPixels) {
        const double mid = (x0 + x1) / 2;
        x0 = mid - kTimelineFoldPixels / 2;
        x1 = mid + kTimelineFoldPixels / 2;
    }
    x0 = std::max(x0, -2.0);
    x1 = std::min(x1, double(viewport()->width()) + 2);
    return QRectF(x0, lane.top() + 1, x1 - x0, lane.height() - 2);
}

void TimelineView::paintItem(QPainter &p, const QRect &lane, const TimelineDrawItem &item) const
{
    const Event &e = m_model.event(item.event);
    const QRectF r = itemRect(lane, item.start, item.end);
    const QColor color = colorOf(e);
    if (item.folded()) {
        // Folded: the dominant colour, darker, framed by a lighter band (a
        // hatch pattern would cost more than all the rest of the frame).
        p.fillRect(r, color.darker(140));
        p.fillRect(QRectF(r.left(), r.top(), r.width(), 2), color);
        if (r.width() >= kTextMinWidth) {
            p.setPen(Qt::white);
            p.drawText(r, Qt::AlignCenter, QString::number(item.count));
        }
        return;
    }
    p.fillRect(r, color);
    const bool selected = item.event == m_selected;
    const bool match = !m_isMatch.empty() && m_isMatch[item.event.value];
    if (selected || match) {
        p.setPen(QPen(selected ? kSelection : kMatch, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(1, 1, -1, -1));
    }
    if (r.width() >= kTextMinWidth) {
        p.setPen(color.lightness() > 140 ? Qt::black : Qt::white);
        const QRectF text = r.adjusted(3, 0, -3, 0);
        p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                   fontMetrics().elidedText(QString::fromStdString(m_model.name(item.event)), Qt::ElideRight, int(text.width())));
    }
}

QColor TimelineView::colorOf(const Event &e) const
{
    switch (e.kind) {
    case EventKind::Kernel: return QColor::fromHsv(hueOf(e.name, 190, 60), 140, 225);
    case EventKind::Memcpy: {
        const profiler::Run &run = *m_model.run();
        return copyColor(e.args.valid() && e.args.value < run.args.size() ? run.args[e.args.value].copyKind
                                                                          : profiler::CopyKind::Unknown);
    }
    case EventKind::Memset: return QColor(0xa0, 0x60, 0xd0);
    case EventKind::Runtime: return QColor::fromHsv(hueOf(e.name, 80, 40), 70, 200);
    case EventKind::CompileStage: return QColor::fromHsv(hueOf(e.name, 160, 30), 120, 200);
    case EventKind::Step: return QColor(0x9a, 0xa0, 0xa8);
    case EventKind::Instant: return QColor(0xe0, 0x30, 0x30);
    case EventKind::Op:
    case EventKind::UserRange: break;
    }
    return QColor::fromHsv(hueOf(e.name, 0, 360), 90, 235);
}

// A step line scaled to the track's maximum; a column that hides several
// samples draws their range as a vertical bar.
void TimelineView::paintCounter(QPainter &p, const Row &row, const QRect &rect) const
{
    p.fillRect(rect, kBackground);
    const TimelineTrack &track = m_model.tracks()[size_t(row.track)];
    if (track.counter.empty() || track.counterMax <= 0)
        return;
    std::vector<CounterStep> steps;
    const auto [t0, t1] = visibleRange();
    m_model.counterSteps(row.track, t0, t1, m_nsPerPixel, steps);
    const double scale = (rect.height() - 4) / track.counterMax;
    auto yOf = [&](double v) { return rect.bottom() - 1 - v * scale; };
    // Polylines and lines with a one-pixel pen: a QPainterPath or a wider
    // pen goes through the stroker, which cost most of a whole-run frame.
    QPolygonF line;
    std::vector<QLineF> bars;
    line.reserve(qsizetype(steps.size() * 2 + 2));
    for (size_t i = 0; i < steps.size(); ++i) {
        const double x = std::max(-1.0, xForTime(steps[i].time));
        const double xNext = i + 1 < steps.size() ? xForTime(steps[i + 1].time) : viewport()->width() + 1.0;
        line << QPointF(x, yOf(steps[i].last)) << QPointF(xNext, yOf(steps[i].last));
        if (steps[i].max > steps[i].min)
            bars.emplace_back(x, yOf(steps[i].min), x, yOf(steps[i].max));
    }
    if (line.isEmpty())
        return;
    QPolygonF fill = line;
    fill << QPointF(line.back().x(), rect.bottom()) << QPointF(line.front().x(), rect.bottom());
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x2e, 0x8b, 0x57, 0x40));
    p.drawPolygon(fill);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(QColor(0x2e, 0x8b, 0x57), 1));
    p.drawPolyline(line);
    p.drawLines(bars.data(), int(bars.size()));
}

void TimelineView::paintRuler(QPainter &p) const
{
    const QRect ruler(0, 0, viewport()->width(), kRulerHeight);
    p.fillRect(ruler, kRulerFill);
    p.setPen(QColor(0xb0, 0xb0, 0xb0));
    p.drawLine(0, kRulerHeight - 1, ruler.width(), kRulerHeight - 1);
    const auto [t0, t1] = visibleRange();
    const TimeTicks ticks = timeTicks(t0, t1, ruler.width());
    p.setPen(QColor(0x40, 0x40, 0x40));
    for (int64_t t = ticks.firstNs; t <= t1; t += ticks.stepNs) {
        const double x = xForTime(t);
        p.drawLine(QPointF(x, kRulerHeight - 8), QPointF(x, kRulerHeight - 1));
        p.drawText(QRectF(x + 3, 0, 200, kRulerHeight - 6), Qt::AlignLeft | Qt::AlignVCenter,
                   QString::fromStdString(formatTick(t, ticks)));
        for (int minor = 1; minor < 5; ++minor) {
            const double xm = xForTime(t + ticks.stepNs * minor / 5);
            p.drawLine(QPointF(xm, kRulerHeight - 4), QPointF(xm, kRulerHeight - 1));
        }
    }
}

// Every match in view as a tick under the ruler, one per pixel column at
// most: matches inside folded runs stay findable at any zoom.
void TimelineView::paintMatchMarks(QPainter &p) const
{
    if (m_matches.empty())
        return;
    const auto [t0, t1] = visibleRange();
    auto startBefore = [&](EventId id, int64_t t) { return m_model.event(id).start < t; };
    auto it = std::lower_bound(m_matches.begin(), m_matches.end(), t0, startBefore);
    p.setPen(QPen(kMatch, 2));
    while (it != m_matches.end() && m_model.event(*it).start <= t1) {
        const double x = std::floor(xForTime(m_model.event(*it).start));
        p.drawLine(QPointF(x, kRulerHeight - 5), QPointF(x, kRulerHeight - 1));
        it = std::lower_bound(it + 1, m_matches.end(), timeAt(x + 1), startBefore);
    }
}

void TimelineView::paintRange(QPainter &p) const
{
    if (!m_range)
        return;
    const double x0 = xForTime(m_range->first), x1 = xForTime(m_range->second);
    const QRectF band(x0, 0, std::max(1.0, x1 - x0), viewport()->height());
    p.fillRect(band, kRangeFill);
    p.setPen(QColor(0x33, 0x88, 0xff));
    p.drawLine(QPointF(x0, 0), QPointF(x0, viewport()->height()));
    p.drawLine(QPointF(x1, 0), QPointF(x1, viewport()->height()));
    const QString label = QString::fromStdString(formatDuration(m_range->second - m_range->first));
    p.fillRect(QRectF(x0, kRulerHeight, std::max(60.0, x1 - x0), 16), QColor(0x33, 0x88, 0xff));
    p.setPen(Qt::white);
    p.drawText(QRectF(x0, kRulerHeight, std::max(60.0, x1 - x0), 16), Qt::AlignCenter, label);
}

// The time under the mouse, in the ruler's unit with two more decimals.
void TimelineView::paintCursor(QPainter &p) const
{
    if (m_hoverX < 0)
        return;
    p.setPen(QPen(QColor(0, 0, 0, 90), 1, Qt::DashLine));
    p.drawLine(m_hoverX, 0, m_hoverX, viewport()->height());
    const auto [t0, t1] = visibleRange();
    TimeTicks ticks = timeTicks(t0, t1, viewport()->width());
    ticks.decimals += 2;
    const QString text = QString::fromStdString(formatTick(timeAt(m_hoverX), ticks));
    const QRect box = fontMetrics().boundingRect(text).adjusted(-4, -2, 4, 2);
    const QRect placed(std::min(m_hoverX + 4, viewport()->width() - box.width()), 2, box.width(), kRulerHeight - 6);
    p.fillRect(placed, QColor(0xff, 0xf5, 0xc0));
    p.setPen(Qt::black);
    p.drawText(placed, Qt::AlignCenter, text);
}

QRect TimelineView::eventRect(EventId id) const
{
    const QRect lane = laneRect(m_model.laneOf(id));
    if (lane.isNull())
        return {};
    const Event &e = m_model.event(id);
    return itemRect(lane, e.start, e.end()).toAlignedRect();
}

// Drawn again on top: at a zoom where it sits inside a folded run, the
// selection must still show.
void TimelineView::paintSelection(QPainter &p) const
{
    if (!m_selected.valid())
        return;
    const QRect r = eventRect(m_selected);
    if (r.isNull() || r.bottom() < kRulerHeight)
        return;
    p.fillRect(r, colorOf(m_model.event(m_selected)));
    p.setPen(QPen(kSelection, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r.adjusted(1, 1, -1, -1));
}

// Arrows from and to the selected event: from the end of the source to the start of the target.
void TimelineView::paintFlows(QPainter &p) const
{
    if (!m_selected.valid() || m_flowsByEvent.empty())
        return;
    const QRect selected = eventRect(m_selected);
    auto range = std::equal_range(m_flowsByEvent.begin(), m_flowsByEvent.end(), std::make_pair(m_selected, 0u),
                                  [](const auto &a, const auto &b) { return a.first < b.first; });
    p.setRenderHint(QPainter::Antialiasing);
    for (auto it = range.first; it != range.second; ++it) {
        const profiler::Flow &flow = m_model.run()->flows[it->second];
        const QRect from = flow.from == m_selected ? selected : eventRect(flow.from);
        const QRect to = flow.to == m_selected ? selected : eventRect(flow.to);
        if (!from.isNull() && !to.isNull())
            paintArrow(p, QPointF(from.right(), from.center().y()), QPointF(to.left(), to.center().y()));
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelineView::paintArrow(QPainter &p, QPointF from, QPointF to) const
{
    QPainterPath path(from);
    const double dx = std::max(20.0, std::abs(to.x() - from.x()) / 2);
    path.cubicTo(from + QPointF(dx, 0), to - QPointF(dx, 0), to);
    p.setPen(QPen(kFlow, 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    p.setBrush(kFlow);
    p.drawPolygon(QPolygonF({to, to + QPointF(-7, -4), to + QPointF(-7, 4)}));
}

} // namespace fusescope
