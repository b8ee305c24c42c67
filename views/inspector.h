#pragma once
// Everything known about the selected node or module: op, target, outputs
// (shape, dtype, strides), module path, fused kernel, origins in the captured
// graph, inputs and users (click to go there), measured time when profiled.

#include "views/document.h"

#include <QWidget>

class QTreeWidget;
class QTreeWidgetItem;

namespace fusescope {

class Inspector : public QWidget
{
    Q_OBJECT
public:
    explicit Inspector(QWidget *parent = nullptr);

    void clear();
    void showNode(std::shared_ptr<const Document> document, int stage, int nodeId);
    void showModule(std::shared_ptr<const Document> document, int stage, const QString &module,
                    const QList<int> &members);
    // An event of a trace's run: name, kind, track, start, duration, args,
    // flows, and the graph nodes a compiled kernel computed (click to go there).
    void showTraceEvent(std::shared_ptr<const Document> document, int run, profiler::EventId event);
    // "name" → "value" of the top-level rows, for tests and copy.
    QString value(const QString &key) const;
    QTreeWidget *tree() const { return m_tree; }

signals:
    // An input, user or origin row was activated: go to that node.
    void nodeActivated(int stage, int nodeId);

private:
    QTreeWidgetItem *addRow(const QString &key, const QString &value, QTreeWidgetItem *parent = nullptr);
    void addNodeList(const QString &title, const std::vector<int> &ids, int stage);
    void addOutputs(const GraphNode &node);
    void addTiming(const StageGraph &graph, const GraphNode &node);
    void addEventArgs(const profiler::Run &run, const profiler::Event &event);
    void addEventOrigins(const profiler::Event &event);

    QTreeWidget *m_tree = nullptr;
    std::shared_ptr<const Document> m_document;
};

} // namespace fusescope
