#include "views/cpphighlighter.h"

#include <algorithm>

namespace fusescope {
namespace {

const char *const kKeywords[] = {
    "alignas", "alignof", "auto", "break", "case", "catch", "class", "const", "constexpr", "const_cast",
    "continue", "decltype", "default", "delete", "do", "dynamic_cast", "else", "enum", "explicit", "extern",
    "false", "for", "friend", "goto", "if", "inline", "mutable", "namespace", "new", "noexcept", "nullptr",
    "operator", "private", "protected", "public", "reinterpret_cast", "return", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
    "typename", "union", "using", "virtual", "volatile", "while", "__restrict", "__restrict__"};

const char *const kTypes[] = {"void", "bool", "char", "short", "int", "long", "float", "double", "signed",
                              "unsigned", "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t",
                              "uint8_t", "uint16_t", "uint32_t", "uint64_t", "half", "__half", "__nv_bfloat16",
                              "float2", "float4", "dim3"};

const char *const kCuda[] = {"__global__", "__device__", "__host__", "__shared__", "__constant__",
                             "__forceinline__", "__launch_bounds__", "threadIdx", "blockIdx", "blockDim",
                             "gridDim", "warpSize", "__syncthreads", "__syncwarp", "atomicAdd", "__shfl_down_sync",
                             "__shfl_xor_sync"};

QTextCharFormat colored(const QColor &color, bool bold = false, bool italic = false)
{
    QTextCharFormat format;
    format.setForeground(color);
    if (bold)
        format.setFontWeight(QFont::Bold);
    format.setFontItalic(italic);
    return format;
}

bool isWordStart(QChar c)
{
    return c.isLetter() || c == QLatin1Char('_');
}

bool isPreprocessorLine(const QString &text)
{
    for (QChar c : text) {
        if (!c.isSpace())
            return c == QLatin1Char('#');
    }
    return false;
}

} // namespace

CppHighlighter::CppHighlighter(QTextDocument *document) : QSyntaxHighlighter(document)
{
    for (const char *word : kKeywords)
        m_words.insert(QLatin1String(word), Category::Keyword);
    for (const char *word : kTypes)
        m_words.insert(QLatin1String(word), Category::Type);
    for (const char *word : kCuda)
        m_words.insert(QLatin1String(word), Category::Cuda);
    m_formats[size_t(Category::Keyword)] = colored(QColor(0x1f, 0x4e, 0xb4), true);
    m_formats[size_t(Category::Type)] = colored(QColor(0x8a, 0x3f, 0xb0));
    m_formats[size_t(Category::Cuda)] = colored(QColor(0xb3, 0x5c, 0x00), true);
    m_formats[size_t(Category::Number)] = colored(QColor(0x0b, 0x7f, 0x86));
    m_formats[size_t(Category::String)] = colored(QColor(0x2e, 0x8b, 0x2e));
    m_formats[size_t(Category::Comment)] = colored(QColor(0x80, 0x80, 0x80), false, true);
    m_formats[size_t(Category::Preprocessor)] = colored(QColor(0xa0, 0x40, 0x40));
}

QTextCharFormat CppHighlighter::categoryFormat(Category category) const
{
    return m_formats[size_t(category)];
}

void CppHighlighter::highlightBlock(const QString &text)
{
    setCurrentBlockState(Normal);
    qsizetype i = previousBlockState() == InBlockComment ? highlightBlockComment(text, 0, 0) : 0;
    // Directives keep their own colour; only strings and comments inside them stand out.
    const bool directive = isPreprocessorLine(text);
    if (directive)
        apply(i, text.size(), Category::Preprocessor);
    while (i < text.size()) {
        const QChar c = text[i];
        if (text.mid(i, 2) == QLatin1String("/*")) {
            i = highlightBlockComment(text, i, i + 2);
        } else if (text.mid(i, 2) == QLatin1String("//")) {
            apply(i, text.size(), Category::Comment);
            return;
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            i = highlightString(text, i);
        } else if (!directive && c.isDigit()) {
            i = highlightNumber(text, i);
        } else if (!directive && isWordStart(c)) {
            i = highlightWord(text, i);
        } else {
            ++i;
        }
    }
}

qsizetype CppHighlighter::highlightBlockComment(const QString &text, qsizetype from, qsizetype searchFrom)
{
    const qsizetype close = text.indexOf(QLatin1String("*/"), searchFrom);
    const qsizetype end = close < 0 ? text.size() : close + 2;
    if (close < 0)
        setCurrentBlockState(InBlockComment);
    apply(from, end, Category::Comment);
    return end;
}

qsizetype CppHighlighter::highlightString(const QString &text, qsizetype from)
{
    const QChar quote = text[from];
    qsizetype i = from + 1;
    while (i < text.size() && text[i] != quote)
        i += text[i] == QLatin1Char('\\') ? 2 : 1;
    const qsizetype end = std::min(i + 1, text.size());
    apply(from, end, Category::String);
    return end;
}

// Digits, hex digits, a point, an exponent with its sign and suffixes (1.5e-3f, 0xffu).
qsizetype CppHighlighter::highlightNumber(const QString &text, qsizetype from)
{
    qsizetype i = from;
    while (i < text.size()) {
        const QChar c = text[i];
        const bool sign = (c == QLatin1Char('+') || c == QLatin1Char('-')) && i > from
            && (text[i - 1] == QLatin1Char('e') || text[i - 1] == QLatin1Char('E'))
            && !text.mid(from, 2).startsWith(QLatin1String("0x"), Qt::CaseInsensitive);
        if (!c.isLetterOrNumber() && c != QLatin1Char('.') && !sign)
            break;
        ++i;
    }
    apply(from, i, Category::Number);
    return i;
}

qsizetype CppHighlighter::highlightWord(const QString &text, qsizetype from)
{
    qsizetype i = from;
    while (i < text.size() && (text[i].isLetterOrNumber() || text[i] == QLatin1Char('_')))
        ++i;
    const auto it = m_words.constFind(text.mid(from, i - from));
    if (it != m_words.constEnd())
        apply(from, i, it.value());
    return i;
}

void CppHighlighter::apply(qsizetype from, qsizetype to, Category category)
{
    if (to > from)
        setFormat(int(from), int(to - from), m_formats[size_t(category)]);
}

} // namespace fusescope
