#pragma once

#include "views/document.h"

#include <QWidget>

#include <memory>
#include <optional>
#include <utility>

class QLabel;
class QLineEdit;
class QModelIndex;
class QSplitter;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;

namespace fusescope {

class CodeEditor;
class CppHighlighter;
class KernelListModel;

// The generated source beside the fused kernels: picking a kernel scrolls to
// its function and marks it, and says which graph nodes it runs.
class CodeView : public QWidget
{
    Q_OBJECT
public:
    explicit CodeView(QWidget *parent = nullptr);

    // Shows the codegen stage of `segment`, or the empty state when there is none.
    void setDocument(std::shared_ptr<const Document> document, int segment = 0);
    // Selects the kernel in the list and shows its code; false for an unknown name.
    bool selectKernel(const QString &name);
    QString currentKernel() const;
    bool isEmptyState() const;

    CodeEditor *editor() const { return m_editor; }
    KernelListModel *kernelModel() const { return m_kernels; }
    QTableView *kernelView() const { return m_kernelView; }
    // What the line above the code says about the selected kernel.
    QString kernelInfo() const;
    // The find bar, shown by Ctrl+F, hidden by Escape.
    QLineEdit *findBar() const { return m_find; }

signals:
    void kernelSelected(const QString &name, const QList<int> &nodeIds);

private:
    QWidget *createKernelList();
    QWidget *createCodePane();
    QLineEdit *createFindBar(QWidget *parent);
    void findNext(bool backward);
    void fitKernelList();
    void showKernel(int row);
    int currentRow() const; // in the kernel model, -1 when none

    KernelListModel *m_kernels = nullptr;
    QSortFilterProxyModel *m_kernelProxy = nullptr;
    QStackedWidget *m_stack = nullptr;
    QTableView *m_kernelView = nullptr;
    CodeEditor *m_editor = nullptr;
    CppHighlighter *m_highlighter = nullptr;
    QLabel *m_info = nullptr;
    QLineEdit *m_find = nullptr;
    QSplitter *m_splitter = nullptr;
    QString m_code;
};

// Where kernel `name` lies in generated code: from its "// name:" comment line
// through the closing brace of its extern "C" entry point; [begin, end).
std::optional<std::pair<qsizetype, qsizetype>> kernelSourceRange(const QString &code, const QString &name);

} // namespace fusescope
