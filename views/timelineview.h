#pragma once
// The timeline of one run: tracks grouped by process (or rank), CPU threads
// with their nested ranges one lane per depth, GPU streams, compile stages
// and counters (memory as a step line). Tracy-style level of detail through
// TimelineModel, so a frame costs what its pixels hold. Ctrl+wheel, W/S zoom
// around the mouse; drag, A/D and Shift+wheel pan; F zooms to the selection,
// 0 resets; click selects, Shift-drag (or a drag on the ruler) selects a range;
// Ctrl+F searches by name.
//
// Split by feature: timelineview.cpp (state, layout, zoom, search),
// timelineview_paint.cpp (drawing), timelineview_input.cpp (mouse, keys).

#include "views/timelinemodel.h"

#include <QAbstractScrollArea>
#include <QPointer>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QLabel;
class QLineEdit;
class QPainter;

namespace fusescope {

class TimelineView : public QAbstractScrollArea
{
    Q_OBJECT
public:
    explicit TimelineView(QWidget *parent = nullptr);
    ~TimelineView() override;

    void setTrace(std::shared_ptr<const profiler::Trace> trace, int run);
    const TimelineModel &model() const { return m_model; }
    int run() const { return m_model.runIndex(); }

    // Selects and brings into view (expands its track, scrolls to its lane); emits nothing.
    void selectEvent(profiler::EventId id);
    profiler::EventId selectedEvent() const { return m_selected; }
    void zoomToRange(int64_t t0, int64_t t1);
    void resetZoom();
    // Zooms by `factor` (> 1 zooms in) keeping the time under viewport x `anchorX` in place.
    void zoomBy(double factor, double anchorX);
    void panPixels(double dx);
    std::pair<int64_t, int64_t> visibleRange() const;
    void setSelectedRange(int64_t t0, int64_t t1);
    void clearSelectedRange();
    std::optional<std::pair<int64_t, int64_t>> selectedRange() const { return m_range; }

    // Searches event names (case-insensitive substring): selects the first
    // match and returns how many there are. Next/previous wrap around and emit
    // eventSelected, as a user's step through the matches should.
    int find(const QString &text);
    void findNext();
    void findPrevious();
    const std::vector<profiler::EventId> &matches() const { return m_matches; }
    void showSearch();

    // Tracks are display indices into model().tracks().
    void setTrackCollapsed(int track, bool collapsed);
    bool isTrackCollapsed(int track) const { return m_collapsed[size_t(track)]; }
    void setTrackPinned(int track, bool pinned);
    bool isTrackPinned(int track) const { return m_pinned[size_t(track)]; }

    // Geometry in viewport coordinates, for tests and the main window; empty when not shown.
    QRect trackHeaderRect(int track) const;
    QRect laneRect(int lane) const;
    double xForTime(int64_t t) const;
    int64_t timeAt(double x) const;
    static constexpr int kRulerHeight = 26;

signals:
    void eventSelected(int run, profiler::EventId id);
    void rangeSelected(int64_t t0, int64_t t1);

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;
    bool viewportEvent(QEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    // One horizontal band of the layout: a group title, a track's header, one
    // lane of events, or a counter's plot.
    struct Row {
        enum Kind { Group, Header, Lane, Counter } kind = Lane;
        int group = -1;
        int track = -1;
        int lane = -1;
        int y = 0; // within the pinned area or the scrolled content
        int height = 0;
    };
    // What one frame draws: the draw items of every visible lane, computed
    // before painting and kept while the view does not move.
    struct Frame {
        int64_t t0 = 0;
        double nsPerPixel = 0;
        int width = 0;
        int height = 0;
        int scrollY = 0;
        uint64_t layout = 0;
        std::vector<std::pair<int, std::vector<TimelineDrawItem>>> lanes; // row index (pinned first) → items
        bool valid = false;
    };
    enum class Drag { None, Pan, Range };

    // timelineview.cpp
    void rebuildLayout();
    void appendTrackRows(std::vector<Row> &rows, int track, int &y) const;
    void updateScrollBars();
    void clampView();
    int pinnedHeight() const;
    int rowCount() const { return int(m_pinnedRows.size() + m_rows.size()); }
    const Row &rowAt(int index) const;
    QRect rowRect(int index) const;
    int rowIndexAt(QPoint pos) const;
    const Frame &frame();
    void ensureEventVisible(profiler::EventId id);
    void selectMatch(int index);
    void applySearchText();
    void buildSearchBox();
    void placeSearchBox();

    // timelineview_paint.cpp
    void paintRows(QPainter &p, const Frame &frame);
    void paintGroupRow(QPainter &p, const Row &row, const QRect &rect) const;
    void paintHeaderRow(QPainter &p, const Row &row, const QRect &rect) const;
    void paintLane(QPainter &p, const QRect &rect, const std::vector<TimelineDrawItem> &items) const;
    void paintItem(QPainter &p, const QRect &lane, const TimelineDrawItem &item) const;
    void paintCounter(QPainter &p, const Row &row, const QRect &rect) const;
    void paintSelection(QPainter &p) const;
    void paintRuler(QPainter &p) const;
    void paintMatchMarks(QPainter &p) const;
    void paintRange(QPainter &p) const;
    void paintCursor(QPainter &p) const;
    void paintFlows(QPainter &p) const;
    void paintArrow(QPainter &p, QPointF from, QPointF to) const;
    QColor colorOf(const profiler::Event &e) const;
    QRectF itemRect(const QRect &lane, int64_t start, int64_t end) const;
    QRect eventRect(profiler::EventId id) const;

    // timelineview_input.cpp
    const TimelineDrawItem *itemAt(QPoint pos) const;
    bool handleHeaderClick(QPoint pos);
    void finishClick(QPoint pos);
    void emitRange();
    QString toolTipAt(QPoint pos) const;
    QString eventToolTip(profiler::EventId id) const;
    QString argsToolTip(const profiler::Event &e) const;

    TimelineModel m_model;
    int64_t m_t0 = 0;
    double m_nsPerPixel = 1;
    std::vector<Row> m_pinnedRows;
    std::vector<Row> m_rows;
    uint64_t m_layoutGeneration = 0;
    std::vector<bool> m_collapsed;
    std::vector<bool> m_pinned;
    std::vector<std::pair<profiler::EventId, uint32_t>> m_flowsByEvent; // (either end, index into run.flows), sorted
    Frame m_frame;

    profiler::EventId m_selected;
    std::optional<std::pair<int64_t, int64_t>> m_range;

    Drag m_drag = Drag::None;
    QPoint m_pressPos;
    int64_t m_pressT0 = 0;
    int m_pressScrollY = 0;
    int64_t m_rangeAnchor = 0;
    bool m_moved = false;
    int m_hoverX = -1;

    QWidget *m_searchBar = nullptr;
    QLineEdit *m_searchEdit = nullptr;
    QLabel *m_searchCount = nullptr;
    std::vector<profiler::EventId> m_matches; // by start time
    std::vector<bool> m_isMatch;              // by EventId
    int m_matchIndex = -1;
};

} // namespace fusescope
