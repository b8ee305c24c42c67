#include "views/codeeditor.h"

#include <QFontDatabase>
#include <QPaintEvent>
#include <QPainter>
#include <QScrollBar>
#include <QTextBlock>

#include <algorithm>

namespace fusescope {

// The margin widget; the editor paints it, since only the editor knows
// where its blocks are.
class LineNumberArea : public QWidget
{
public:
    explicit LineNumberArea(CodeEditor *editor) : QWidget(editor), m_editor(editor) {}
    QSize sizeHint() const override { return {m_editor->lineNumberAreaWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent *event) override { m_editor->paintLineNumbers(event); }

private:
    CodeEditor *m_editor;
};

namespace {
constexpr int kMargin = 4;
}

CodeEditor::CodeEditor(QWidget *parent) : QPlainTextEdit(parent), m_lineNumbers(new LineNumberArea(this))
{
    setReadOnly(true);
    setLineWrapMode(NoWrap);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    connect(this, &QPlainTextEdit::blockCountChanged, this, &CodeEditor::updateMargins);
    connect(this, &QPlainTextEdit::updateRequest, this, &CodeEditor::followScroll);
    updateMargins();
}

int CodeEditor::lineNumberAreaWidth() const
{
    const int digits = int(QString::number(std::max(1, blockCount())).size());
    return 2 * kMargin + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits;
}

void CodeEditor::showRange(qsizetype start, qsizetype end)
{
    QTextCursor range(document());
    range.setPosition(int(start));
    range.setPosition(int(end), QTextCursor::KeepAnchor);
    QTextEdit::ExtraSelection mark;
    mark.cursor = range;
    mark.format.setBackground(QColor(0xff, 0xf4, 0xc2)); // pale, so the syntax colours stay readable
    mark.format.setProperty(QTextFormat::FullWidthSelection, true);
    setExtraSelections({mark});
    // The cursor goes to the start without selecting: a selection would paint
    // over the syntax colours of the very code the user asked to read.
    QTextCursor at(document());
    at.setPosition(int(start));
    setTextCursor(at);
    // Without wrapping, the scroll bar counts lines: this puts the range's first line on top.
    verticalScrollBar()->setValue(document()->findBlock(int(start)).blockNumber());
}

QString CodeEditor::markedText() const
{
    const QList<QTextEdit::ExtraSelection> marks = extraSelections();
    return marks.isEmpty() ? QString() : marks.front().cursor.selectedText();
}

void CodeEditor::clearRange()
{
    setExtraSelections({});
    QTextCursor cursor = textCursor();
    cursor.clearSelection();
    setTextCursor(cursor);
}

void CodeEditor::resizeEvent(QResizeEvent *event)
{
    QPlainTextEdit::resizeEvent(event);
    const QRect area = contentsRect();
    m_lineNumbers->setGeometry(area.left(), area.top(), lineNumberAreaWidth(), area.height());
}

void CodeEditor::updateMargins()
{
    setViewportMargins(lineNumberAreaWidth(), 0, 0, 0);
}

void CodeEditor::followScroll(const QRect &rect, int dy)
{
    if (dy)
        m_lineNumbers->scroll(0, dy);
    else
        m_lineNumbers->update(0, rect.y(), m_lineNumbers->width(), rect.height());
}

void CodeEditor::paintLineNumbers(QPaintEvent *event)
{
    QPainter painter(m_lineNumbers);
    painter.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
    painter.setPen(palette().color(QPalette::PlaceholderText));
    const int width = m_lineNumbers->width() - kMargin;
    const int lineHeight = fontMetrics().height();
    QTextBlock block = firstVisibleBlock();
    qreal top = blockBoundingGeometry(block).translated(contentOffset()).top();
    while (block.isValid() && top <= event->rect().bottom()) {
        if (block.isVisible() && top + blockBoundingRect(block).height() >= event->rect().top())
            painter.drawText(0, int(top), width, lineHeight, Qt::AlignRight, QString::number(block.blockNumber() + 1));
        top += blockBoundingRect(block).height();
        block = block.next();
    }
}

} // namespace fusescope
