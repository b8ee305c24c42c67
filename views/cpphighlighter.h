#pragma once

#include <QHash>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

#include <array>

namespace fusescope {

// Colours generated C++ and CUDA code. A small lexer rather than a list of
// regular expressions, so "//" inside a string or a keyword inside a comment
// is not coloured as what it looks like.
class CppHighlighter : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    enum class Category { Keyword, Type, Cuda, Number, String, Comment, Preprocessor, Count };

    explicit CppHighlighter(QTextDocument *document);

    QTextCharFormat categoryFormat(Category category) const;

protected:
    void highlightBlock(const QString &text) override;

private:
    enum BlockState { Normal = 0, InBlockComment = 1 };

    // Each returns the position just past what it coloured.
    qsizetype highlightBlockComment(const QString &text, qsizetype from, qsizetype searchFrom);
    qsizetype highlightString(const QString &text, qsizetype from);
    qsizetype highlightNumber(const QString &text, qsizetype from);
    qsizetype highlightWord(const QString &text, qsizetype from);
    void apply(qsizetype from, qsizetype to, Category category);

    QHash<QString, Category> m_words;
    std::array<QTextCharFormat, size_t(Category::Count)> m_formats;
};

} // namespace fusescope
