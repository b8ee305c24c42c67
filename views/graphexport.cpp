#include "views/graphexport.h"

#include "views/graphview.h"

#include <QFile>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextStream>

namespace fusescope {
namespace {

// Graph sizes past this would make a PNG of hundreds of megabytes.
constexpr qreal kMaxPngSide = 16000;

QString dotQuote(const QString &s)
{
    QString q = s;
    q.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('"'), QLatin1String("\\\""));
    q.replace(QLatin1Char('\n'), QLatin1String("\\n"));
    return QLatin1Char('"') + q + QLatin1Char('"');
}

bool fail(QString *error, const QString &message)
{
    *error = message;
    return false;
}

QRectF drawnRect(const GraphView &view)
{
    return view.scene()->itemsBoundingRect().adjusted(-16, -16, 16, 16);
}

void writeClusters(QTextStream &out, const GraphView &view, int parent, const QString &indent)
{
    const PresentedGraph &g = view.presented();
    for (size_t c = 0; c < g.clusters.size(); ++c) {
        if (g.clusters[c].parent != parent)
            continue;
        out << indent << "subgraph cluster_" << c << " {\n"
            << indent << "  label=" << dotQuote(QString::fromStdString(g.clusters[c].name)) << ";\n";
        for (size_t i = 0; i < g.items.size(); ++i) {
            if (g.items[i].cluster == int(c))
                out << indent << "  n" << i << ";\n";
        }
        writeClusters(out, view, int(c), indent + QStringLiteral("  "));
        out << indent << "}\n";
    }
}

} // namespace

bool exportGraphDot(const GraphView &view, const QString &path, QString *error)
{
    const PresentedGraph &g = view.presented();
    if (g.items.empty())
        return fail(error, QObject::tr("%1: there is no graph to export").arg(path));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return fail(error, QObject::tr("cannot write %1: %2").arg(path, file.errorString()));
    QTextStream out(&file);
    out << "digraph " << dotQuote(view.graph() ? QString::fromStdString(view.graph()->stageName) : QStringLiteral("graph"))
        << " {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#d5f0d0\", fontsize=10];\n";
    for (size_t i = 0; i < g.items.size(); ++i) {
        const GraphBoxItem *box = view.boxItem(int(i));
        const QString label = box ? box->lines().join(QLatin1Char('\n')) : QString::number(i);
        out << "  n" << i << " [label=" << dotQuote(label)
            << (g.items[i].kind == PresentedItem::Kind::Module ? ", peripheries=2" : "") << "];\n";
    }
    writeClusters(out, view, -1, QStringLiteral("  "));
    for (const LayoutEdge &e : g.edges)
        out << "  n" << e.from << " -> n" << e.to << ";\n";
    out << "}\n";
    if (!file.commit())
        return fail(error, QObject::tr("cannot write %1: %2").arg(path, file.errorString()));
    return true;
}

bool exportGraphSvg(const GraphView &view, const QString &path, QString *error)
{
    if (view.presented().items.empty())
        return fail(error, QObject::tr("%1: there is no graph to export").arg(path));
    const QRectF rect = drawnRect(view);
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(rect.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), rect.size()));
    svg.setTitle(view.graph() ? QString::fromStdString(view.graph()->stageName) : QString());
    svg.setDescription(QObject::tr("Graph exported by Fusescope"));
    QPainter painter;
    if (!painter.begin(&svg))
        return fail(error, QObject::tr("cannot write %1").arg(path));
    view.scene()->render(&painter, QRectF(QPointF(0, 0), rect.size()), rect);
    painter.end();
    if (!QFileInfo(path).isFile() || QFileInfo(path).size() == 0)
        return fail(error, QObject::tr("cannot write %1").arg(path));
    return true;
}

bool exportGraphPng(const GraphView &view, const QString &path, QString *error)
{
    if (view.presented().items.empty())
        return fail(error, QObject::tr("%1: there is no graph to export").arg(path));
    const QRectF rect = drawnRect(view);
    const qreal scale = std::min(2.0, kMaxPngSide / std::max(rect.width(), rect.height()));
    QImage image((rect.size() * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    view.scene()->render(&painter, QRectF(QPointF(0, 0), rect.size() * scale), rect);
    painter.end();
    if (!image.save(path, "PNG"))
        return fail(error, QObject::tr("cannot write %1").arg(path));
    return true;
}

bool exportGraph(const GraphView &view, const QString &path, QString *error)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("dot") || suffix == QLatin1String("gv"))
        return exportGraphDot(view, path, error);
    if (suffix == QLatin1String("svg"))
        return exportGraphSvg(view, path, error);
    if (suffix == QLatin1String("png"))
        return exportGraphPng(view, path, error);
    return fail(error, QObject::tr("%1: unknown format '%2' (use .dot, .svg or .png)").arg(path, suffix));
}

} // namespace fusescope
