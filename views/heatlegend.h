#pragma once
// The colour scale of measured time on a graph, and its legend.

#include <QColor>
#include <QWidget>

namespace fusescope {

// 0 = coolest (pale yellow) … 1 = hottest (deep red).
QColor heatColor(double fraction);
// formatDuration(int64_t) of timelinemodel.h as a QString: "412.0 µs", "3.200 ms".
QString formatDuration(double ns);

class HeatLegend : public QWidget
{
    Q_OBJECT
public:
    explicit HeatLegend(QWidget *parent = nullptr);
    void setMaximum(double ns);
    double maximum() const { return m_maxNs; }
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    double m_maxNs = 0;
};

} // namespace fusescope
