#include "views/codeview.h"

#include "views/codeeditor.h"
#include "views/cpphighlighter.h"
#include "views/kernellistmodel.h"

#include <QAction>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace fusescope {
namespace {

qsizetype lineStartingWith(const QString &code, const QString &prefix)
{
    for (qsizetype at = code.indexOf(prefix); at >= 0; at = code.indexOf(prefix, at + 1)) {
        if (at == 0 || code[at - 1] == QLatin1Char('\n'))
            return at;
    }
    return -1;
}

qsizetype closingBrace(const QString &code, qsizetype open)
{
    int depth = 0;
    for (qsizetype i = open; i < code.size(); ++i) {
        if (code[i] == QLatin1Char('{'))
            ++depth;
        else if (code[i] == QLatin1Char('}') && --depth == 0)
            return i;
    }
    return -1;
}

QString codeOf(const Document &doc, int segment)
{
    const int codegen = doc.stageIndex("codegen", segment);
    return codegen < 0 ? QString() : QString::fromStdString(doc.stages[size_t(codegen)].code);
}

} // namespace

std::optional<std::pair<qsizetype, qsizetype>> kernelSourceRange(const QString &code, const QString &name)
{
    const qsizetype begin = lineStartingWith(code, QStringLiteral("// %1:").arg(name));
    if (begin < 0)
        return std::nullopt;
    const qsizetype entry = code.indexOf(QStringLiteral("extern \"C\" void %1(").arg(name), begin);
    const qsizetype open = entry < 0 ? -1 : code.indexOf(QLatin1Char('{'), entry);
    const qsizetype close = open < 0 ? -1 : closingBrace(code, open);
    if (close < 0)
        return std::nullopt;
    return std::make_pair(begin, close + 1);
}

CodeView::CodeView(QWidget *parent)
    : QWidget(parent), m_kernels(new KernelListModel(this)), m_kernelProxy(new QSortFilterProxyModel(this))
{
    m_kernelProxy->setSourceModel(m_kernels);
    m_kernelProxy->setSortRole(KernelListModel::SortRole);
    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->addWidget(createKernelList());
    m_splitter->addWidget(createCodePane());
    m_splitter->setStretchFactor(1, 1);
    auto *empty = new QLabel(tr("This file holds no generated code: profile with --compile"), this);
    empty->setAlignment(Qt::AlignCenter);
    empty->setWordWrap(true);
    m_stack = new QStackedWidget(this);
    m_stack->addWidget(empty);
    m_stack->addWidget(m_splitter);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
}

QWidget *CodeView::createKernelList()
{
    m_kernelView = new QTableView(this);
    m_kernelView->setModel(m_kernelProxy);
    m_kernelView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_kernelView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_kernelView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_kernelView->setSortingEnabled(true);
    m_kernelView->sortByColumn(-1, Qt::AscendingOrder); // run order until the user sorts
    m_kernelView->verticalHeader()->hide();
    connect(m_kernelView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showKernel(m_kernelProxy->mapToSource(current).row()); });
    return m_kernelView;
}

QWidget *CodeView::createCodePane()
{
    auto *pane = new QWidget(this);
    m_info = new QLabel(pane);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_editor = new CodeEditor(pane);
    m_highlighter = new CppHighlighter(m_editor->document());
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_info);
    layout->addWidget(m_editor);
    layout->addWidget(createFindBar(pane));
    return pane;
}

QLineEdit *CodeView::createFindBar(QWidget *parent)
{
    m_find = new QLineEdit(parent);
    m_find->setPlaceholderText(tr("Find in the generated code (Enter: next, Shift+Enter: previous)"));
    m_find->setClearButtonEnabled(true);
    m_find->hide();
    auto *show = new QAction(tr("Find"), this);
    show->setShortcut(QKeySequence::Find);
    show->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(show, &QAction::triggered, this, [this] {
        m_find->show();
        m_find->setFocus();
        m_find->selectAll();
    });
    addAction(show);
    auto *hide = new QAction(m_find);
    hide->setShortcut(Qt::Key_Escape);
    hide->setShortcutContext(Qt::WidgetShortcut);
    connect(hide, &QAction::triggered, m_find, &QWidget::hide);
    m_find->addAction(hide);
    connect(m_find, &QLineEdit::returnPressed, this,
            [this] { findNext(QGuiApplication::keyboardModifiers() & Qt::ShiftModifier); });
    return m_find;
}

// Wraps around once, so a search from the middle still finds an earlier hit.
void CodeView::findNext(bool backward)
{
    const QTextDocument::FindFlags flags = backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    if (m_find->text().isEmpty() || m_editor->find(m_find->text(), flags))
        return;
    QTextCursor wrap = m_editor->textCursor();
    wrap.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
    m_editor->setTextCursor(wrap);
    m_editor->find(m_find->text(), flags);
}

// The list gets what its columns need; the code pane's stretch takes the
// rest whatever size the view has when it is shown.
void CodeView::fitKernelList()
{
    m_kernelView->resizeColumnsToContents();
    const int list = m_kernelView->horizontalHeader()->length() + 2 * m_kernelView->frameWidth()
        + m_kernelView->verticalScrollBar()->sizeHint().width();
    m_splitter->setSizes({list, 3 * list});
}

void CodeView::setDocument(std::shared_ptr<const Document> document, int segment)
{
    m_code = document ? codeOf(*document, segment) : QString();
    m_kernels->setDocument(document, segment);
    m_kernelView->setColumnHidden(KernelListModel::TimeColumn, !m_kernels->isProfiled());
    fitKernelList();
    m_editor->setPlainText(m_code);
    m_info->clear();
    m_stack->setCurrentIndex(isEmptyState() ? 0 : 1);
}

bool CodeView::selectKernel(const QString &name)
{
    const int row = m_kernels->rowOf(name);
    if (row < 0)
        return false;
    if (row == currentRow()) {
        showKernel(row);
        return true;
    }
    const QModelIndex index = m_kernelProxy->mapFromSource(m_kernels->index(row, 0));
    m_kernelView->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect
                                                               | QItemSelectionModel::Rows);
    m_kernelView->scrollTo(index);
    return true;
}

QString CodeView::currentKernel() const
{
    return m_kernels->kernelName(currentRow());
}

bool CodeView::isEmptyState() const
{
    return m_code.isEmpty();
}

QString CodeView::kernelInfo() const
{
    return m_info->text();
}

int CodeView::currentRow() const
{
    return m_kernelProxy->mapToSource(m_kernelView->selectionModel()->currentIndex()).row();
}

void CodeView::showKernel(int row)
{
    if (row < 0) {
        m_editor->clearRange();
        m_info->clear();
        return;
    }
    const QString name = m_kernels->kernelName(row);
    const auto range = kernelSourceRange(m_code, name);
    if (range) {
        m_editor->showRange(range->first, range->second);
        m_info->setText(tr("%1: %2, %n nodes", nullptr, int(m_kernels->kernel(row).nodes.size()))
                            .arg(name, QString::fromStdString(m_kernels->kernel(row).kind)));
    } else {
        m_editor->clearRange();
        m_info->setText(tr("%1 has no generated code: it runs the eager kernel").arg(name));
    }
    emit kernelSelected(name, m_kernels->nodeIds(row));
}

} // namespace fusescope
