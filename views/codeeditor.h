#pragma once

#include <QPlainTextEdit>

namespace fusescope {

class LineNumberArea;

// A read-only source viewer: monospace, no wrapping, line numbers in the
// left margin, and one marked range (the function being looked at).
class CodeEditor : public QPlainTextEdit
{
    Q_OBJECT
public:
    explicit CodeEditor(QWidget *parent = nullptr);

    int lineNumberAreaWidth() const;
    // Selects [start, end) of the text, scrolls its first line to the top and
    // keeps the range marked after the selection goes.
    void showRange(qsizetype start, qsizetype end);
    // The text of the range showRange() marked ("" when none).
    QString markedText() const;
    void clearRange();

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    friend class LineNumberArea;
    void paintLineNumbers(QPaintEvent *event);
    void updateMargins();
    void followScroll(const QRect &rect, int dy);

    LineNumberArea *m_lineNumbers = nullptr;
};

} // namespace fusescope
