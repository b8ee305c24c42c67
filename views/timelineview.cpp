#include "views/timelineview.h"

#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QToolButton>

#include <algorithm>
#include <cmath>

namespace fusescope {

using profiler::EventId;

namespace {

constexpr int kGroupHeight = 22;
constexpr int kHeaderHeight = 18;
constexpr int kLaneHeight = 18;
constexpr int kCounterHeight = 40;
// Finer than this the ns timestamps would draw as wide blocks of nothing.
constexpr double kMinNsPerPixel = 0.01;

} // namespace

TimelineView::TimelineView(QWidget *parent)
    : QAbstractScrollArea(parent)
{
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    // Every pixel is painted each frame: skip Qt's background fill.
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    verticalScrollBar()->setSingleStep(kLaneHeight);
    buildSearchBox();
}

TimelineView::~TimelineView() = default;

void TimelineView::setTrace(std::shared_ptr<const profiler::Trace> trace, int run)
{
    m_model.setRun(std::move(trace), run);
    const size_t tracks = m_model.tracks().size();
    m_collapsed.assign(tracks, false);
    m_pinned.assign(tracks, false);
    m_selected = {};
    m_range.reset();
    m_matches.clear();
    m_isMatch.clear();
    m_matchIndex = -1;
    m_flowsByEvent.clear();
    if (const profiler::Run *r = m_model.run()) {
        for (uint32_t i = 0; i < r->flows.size(); ++i) {
            m_flowsByEvent.push_back({r->flows[i].from, i});
            m_flowsByEvent.push_back({r->flows[i].to, i});
        }
        std::sort(m_flowsByEvent.begin(), m_flowsByEvent.end());
    }
    rebuildLayout();
    resetZoom();
}

// ---- layout ----

void TimelineView::rebuildLayout()
{
    m_pinnedRows.clear();
    m_rows.clear();
    int pinnedY = 0, y = 0;
    for (size_t t = 0; t < m_model.tracks().size(); ++t)
        if (m_pinned[t])
            appendTrackRows(m_pinnedRows, int(t), pinnedY);
    for (size_t g = 0; g < m_model.groups().size(); ++g) {
        m_rows.push_back({Row::Group, int(g), -1, -1, y, kGroupHeight});
        y += kGroupHeight;
        for (int t : m_model.groups()[g].tracks)
            if (!m_pinned[size_t(t)])
                appendTrackRows(m_rows, t, y);
    }
    ++m_layoutGeneration;
    updateScrollBars();
    viewport()->update();
}

void TimelineView::appendTrackRows(std::vector<Row> &rows, int track, int &y) const
{
    const TimelineTrack &t = m_model.tracks()[size_t(track)];
    rows.push_back({Row::Header, t.group, track, -1, y, kHeaderHeight});
    y += kHeaderHeight;
    if (m_collapsed[size_t(track)])
        return;
    if (t.kind == profiler::TrackKind::Counter) {
        rows.push_back({Row::Counter, t.group, track, -1, y, kCounterHeight});
        y += kCounterHeight;
        return;
    }
    for (int l = t.firstLane; l < t.firstLane + t.laneCount; ++l) {
        rows.push_back({Row::Lane, t.group, track, l, y, kLaneHeight});
        y += kLaneHeight;
    }
}

int TimelineView::pinnedHeight() const
{
    return m_pinnedRows.empty() ? 0 : m_pinnedRows.back().y + m_pinnedRows.back().height + 2;
}

void TimelineView::updateScrollBars()
{
    const int content = m_rows.empty() ? 0 : m_rows.back().y + m_rows.back().height;
    const int page = std::max(0, viewport()->height() - kRulerHeight - pinnedHeight());
    verticalScrollBar()->setPageStep(page);
    verticalScrollBar()->setRange(0, std::max(0, content - page));
}

const TimelineView::Row &TimelineView::rowAt(int index) const
{
    const int pinned = int(m_pinnedRows.size());
    return index < pinned ? m_pinnedRows[size_t(index)] : m_rows[size_t(index - pinned)];
}

QRect TimelineView::rowRect(int index) const
{
    const Row &row = rowAt(index);
    const bool pinned = index < int(m_pinnedRows.size());
    const int top = pinned ? kRulerHeight + row.y
                           : kRulerHeight + pinnedHeight() + row.y - verticalScrollBar()->value();
    return QRect(0, top, viewport()->width(), row.height);
}

// The pinned rows cover the scrolled ones, so they are looked at first.
int TimelineView::rowIndexAt(QPoint pos) const
{
    if (pos.y() < kRulerHeight)
        return -1;
    const int pinned = int(m_pinnedRows.size());
    if (pos.y() < kRulerHeight + pinnedHeight()) {
        for (int i = 0; i < pinned; ++i)
            if (rowRect(i).contains(pos))
                return i;
        return -1;
    }
    const int y = pos.y() - kRulerHeight - pinnedHeight() + verticalScrollBar()->value();
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y, [](int v, const Row &r) { return v < r.y; });
    if (it == m_rows.begin())
        return -1;
    --it;
    return y < it->y + it->height ? pinned + int(it - m_rows.begin()) : -1;
}

QRect TimelineView::trackHeaderRect(int track) const
{
    for (int i = 0; i < rowCount(); ++i)
        if (rowAt(i).kind == Row::Header && rowAt(i).track == track)
            return rowRect(i);
    return {};
}

QRect TimelineView::laneRect(int lane) const
{
    for (int i = 0; i < rowCount(); ++i)
        if (rowAt(i).kind == Row::Lane && rowAt(i).lane == lane)
            return rowRect(i);
    return {};
}

void TimelineView::setTrackCollapsed(int track, bool collapsed)
{
    m_collapsed[size_t(track)] = collapsed;
    rebuildLayout();
}

void TimelineView::setTrackPinned(int track, bool pinned)
{
    m_pinned[size_t(track)] = pinned;
    rebuildLayout();
}

// ---- the time axis ----

double TimelineView::xForTime(int64_t t) const
{
    return double(t - m_t0) / m_nsPerPixel;
}

int64_t TimelineView::timeAt(double x) const
{
    return m_t0 + int64_t(std::llround(x * m_nsPerPixel));
}

std::pair<int64_t, int64_t> TimelineView::visibleRange() const
{
    return {m_t0, timeAt(viewport()->width())};
}

void TimelineView::resetZoom()
{
    zoomToRange(m_model.begin(), m_model.end());
}

void TimelineView::zoomToRange(int64_t t0, int64_t t1)
{
    const int64_t span = std::max<int64_t>(1, t1 - t0);
    m_nsPerPixel = double(span) / std::max(1, viewport()->width());
    m_t0 = t0;
    clampView();
}

void TimelineView::zoomBy(double factor, double anchorX)
{
    const double anchorTime = double(m_t0) + anchorX * m_nsPerPixel;
    m_nsPerPixel /= factor;
    clampView();
    m_t0 = int64_t(std::llround(anchorTime - anchorX * m_nsPerPixel));
    clampView();
}

void TimelineView::panPixels(double dx)
{
    m_t0 += int64_t(std::llround(dx * m_nsPerPixel));
    clampView();
}

// Zoomed out at most to four times the run, and never panned so far that
// the run leaves the window.
void TimelineView::clampView()
{
    const double width = std::max(1, viewport()->width());
    const double span = double(m_model.end() - m_model.begin());
    m_nsPerPixel = std::clamp(m_nsPerPixel, kMinNsPerPixel, std::max(kMinNsPerPixel, 4 * span / width));
    const int64_t visible = int64_t(width * m_nsPerPixel);
    m_t0 = std::clamp(m_t0, m_model.begin() - visible / 2, std::max(m_model.begin(), m_model.end() - visible / 2));
    viewport()->update();
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    const auto [t0, t1] = visibleRange();
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
    placeSearchBox();
    // Keep the time span, not the scale: a wider window shows the same range sharper.
    if (m_model.run() && t1 > t0)
        zoomToRange(t0, t1);
}

void TimelineView::scrollContentsBy(int, int)
{
    viewport()->update();
}

// ---- selection ----

void TimelineView::selectEvent(EventId id)
{
    if (!m_model.run() || id.value >= m_model.run()->events.size())
        return;
    m_selected = id;
    ensureEventVisible(id);
    viewport()->update();
}

void TimelineView::ensureEventVisible(EventId id)
{
    const profiler::Event &e = m_model.event(id);
    const auto [t0, t1] = visibleRange();
    if (e.duration > t1 - t0)
        zoomToRange(e.start - e.duration / 10, e.end() + e.duration / 10);
    else if (e.start < t0 || e.end() > t1)
        panPixels(xForTime(e.start + e.duration / 2) - viewport()->width() / 2.0);
    const int track = m_model.trackIndex(e.track);
    if (track >= 0 && m_collapsed[size_t(track)])
        setTrackCollapsed(track, false);
    const int lane = m_model.laneOf(id);
    for (const Row &row : m_rows)
        if (row.lane == lane && lane >= 0) {
            const int page = verticalScrollBar()->pageStep();
            const int value = verticalScrollBar()->value();
            if (row.y < value || row.y + row.height > value + page)
                verticalScrollBar()->setValue(row.y - page / 2);
        }
}

void TimelineView::setSelectedRange(int64_t t0, int64_t t1)
{
    m_range = std::make_pair(std::min(t0, t1), std::max(t0, t1));
    viewport()->update();
}

void TimelineView::clearSelectedRange()
{
    m_range.reset();
    viewport()->update();
}

// ---- the frame ----

// Recomputed only when the window, the scroll or the layout moved; a frame
// computed for an older view is dropped whole, never patched.
const TimelineView::Frame &TimelineView::frame()
{
    Frame &f = m_frame;
    const int scrollY = verticalScrollBar()->value();
    const QSize size = viewport()->size();
    if (f.valid && f.t0 == m_t0 && f.nsPerPixel == m_nsPerPixel && f.width == size.width() &&
        f.height == size.height() && f.scrollY == scrollY && f.layout == m_layoutGeneration)
        return f;
    f = {m_t0, m_nsPerPixel, size.width(), size.height(), scrollY, m_layoutGeneration, {}, true};
    const auto [t0, t1] = visibleRange();
    // Half a fold's width on each side, so an item cut by the edge keeps its size.
    const int64_t margin = int64_t(kTimelineFoldPixels * m_nsPerPixel) + 1;
    for (int i = 0; i < rowCount(); ++i) {
        const Row &row = rowAt(i);
        const QRect rect = rowRect(i);
        if (row.kind != Row::Lane || rect.bottom() < kRulerHeight || rect.top() > size.height())
            continue;
        f.lanes.push_back({i, {}});
        m_model.drawItems(row.lane, t0 - margin, t1 + margin, m_nsPerPixel, f.lanes.back().second);
    }
    return f;
}

// ---- search ----

int TimelineView::find(const QString &text)
{
    m_matches.clear();
    m_matchIndex = -1;
    const profiler::Run *run = m_model.run();
    m_isMatch.assign(run ? run->events.size() : 0, false);
    if (run && !text.isEmpty()) {
        // Names are matched once per string, then events by their StringId.
        const profiler::StringTable &strings = m_model.trace()->strings;
        std::vector<bool> nameMatches(strings.size());
        for (size_t s = 0; s < strings.size(); ++s)
            nameMatches[s] = QString::fromStdString(strings[profiler::StringId(uint32_t(s))]).contains(text, Qt::CaseInsensitive);
        for (uint32_t i = 0; i < run->events.size(); ++i)
            if (run->events[i].name.value < nameMatches.size() && nameMatches[run->events[i].name.value]) {
                m_matches.push_back(EventId(i));
                m_isMatch[i] = true;
            }
        std::stable_sort(m_matches.begin(), m_matches.end(),
                         [&](EventId a, EventId b) { return m_model.event(a).start < m_model.event(b).start; });
    }
    if (!m_matches.empty())
        selectMatch(0);
    if (m_searchCount)
        m_searchCount->setText(m_matches.empty() ? tr("no match") : tr("1 of %1").arg(m_matches.size()));
    viewport()->update();
    return int(m_matches.size());
}

void TimelineView::findNext()
{
    if (!m_matches.empty())
        selectMatch((m_matchIndex + 1) % int(m_matches.size()));
}

void TimelineView::findPrevious()
{
    if (!m_matches.empty())
        selectMatch((m_matchIndex + int(m_matches.size()) - 1) % int(m_matches.size()));
}

void TimelineView::selectMatch(int index)
{
    m_matchIndex = index;
    selectEvent(m_matches[size_t(index)]);
    if (m_searchCount)
        m_searchCount->setText(tr("%1 of %2").arg(index + 1).arg(m_matches.size()));
    emit eventSelected(run(), m_selected);
}

void TimelineView::buildSearchBox()
{
    m_searchBar = new QWidget(viewport());
    m_searchBar->setAutoFillBackground(true);
    auto *layout = new QHBoxLayout(m_searchBar);
    layout->setContentsMargins(4, 2, 4, 2);
    m_searchEdit = new QLineEdit(m_searchBar);
    m_searchEdit->setPlaceholderText(tr("Find event by name"));
    m_searchEdit->setClearButtonEnabled(true);
    m_searchCount = new QLabel(m_searchBar);
    auto *previous = new QToolButton(m_searchBar);
    previous->setText(QStringLiteral("▲"));
    previous->setToolTip(tr("Previous match (Shift+Enter)"));
    auto *next = new QToolButton(m_searchBar);
    next->setText(QStringLiteral("▼"));
    next->setToolTip(tr("Next match (Enter)"));
    layout->addWidget(m_searchEdit);
    layout->addWidget(m_searchCount);
    layout->addWidget(previous);
    layout->addWidget(next);
    connect(m_searchEdit, &QLineEdit::returnPressed, this, &TimelineView::applySearchText);
    connect(previous, &QToolButton::clicked, this, &TimelineView::findPrevious);
    connect(next, &QToolButton::clicked, this, &TimelineView::findNext);
    m_searchBar->hide();
}

// Enter on new text searches; Enter again steps to the next match.
void TimelineView::applySearchText()
{
    if (m_searchEdit->property("searched").toString() == m_searchEdit->text()) {
        if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier)
            findPrevious();
        else
            findNext();
        return;
    }
    m_searchEdit->setProperty("searched", m_searchEdit->text());
    find(m_searchEdit->text());
}

void TimelineView::showSearch()
{
    placeSearchBox();
    m_searchBar->show();
    m_searchBar->raise();
    m_searchEdit->setFocus();
    m_searchEdit->selectAll();
}

void TimelineView::placeSearchBox()
{
    if (!m_searchBar)
        return;
    m_searchBar->adjustSize();
    const int width = std::min(viewport()->width(), 360);
    m_searchBar->setGeometry(viewport()->width() - width, kRulerHeight, width, m_searchBar->sizeHint().height());
}

} // namespace fusescope
