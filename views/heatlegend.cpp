#include "views/heatlegend.h"

#include "views/timelinemodel.h"
#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace fusescope {

QColor heatColor(double fraction)
{
    const double f = std::clamp(fraction, 0.0, 1.0);
    // Pale yellow through orange to red: readable with black text at every step.
    const QColor cold(0xff, 0xf7, 0xc8), mid(0xfd, 0xae, 0x61), hot(0xe0, 0x3a, 0x2e);
    auto mix = [](const QColor &a, const QColor &b, double t) {
        return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                                float(a.greenF() + (b.greenF() - a.greenF()) * t),
                                float(a.blueF() + (b.blueF() - a.blueF()) * t));
    };
    return f < 0.5 ? mix(cold, mid, f * 2) : mix(mid, hot, (f - 0.5) * 2);
}

QString formatDuration(double ns)
{
    return QString::fromStdString(formatDuration(static_cast<int64_t>(std::llround(ns))));
}

HeatLegend::HeatLegend(QWidget *parent)
    : QWidget(parent)
{
    setToolTip(tr("Measured time per node: the compiled kernels' time attributed to the nodes they computed"));
}

void HeatLegend::setMaximum(double ns)
{
    m_maxNs = ns;
    update();
}

QSize HeatLegend::sizeHint() const
{
    return {260, fontMetrics().height() + 8};
}

void HeatLegend::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QString left = tr("time: 0");
    const QString right = formatDuration(m_maxNs);
    const int lw = fontMetrics().horizontalAdvance(left) + 6;
    const int rw = fontMetrics().horizontalAdvance(right) + 6;
    const QRect bar(lw, 3, std::max(20, width() - lw - rw), height() - 6);
    QLinearGradient g(bar.topLeft(), bar.topRight());
    for (double t : {0.0, 0.5, 1.0})
        g.setColorAt(t, heatColor(t));
    p.fillRect(bar, g);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawRect(bar.adjusted(0, 0, -1, -1));
    p.drawText(QRect(0, 0, lw, height()), Qt::AlignVCenter | Qt::AlignLeft, left);
    p.drawText(QRect(bar.right() + 4, 0, rw, height()), Qt::AlignVCenter | Qt::AlignLeft, right);
}

} // namespace fusescope
