// The generated-code view: the C++/CUDA highlighter, the line-numbered
// editor, the kernel list and the view that joins them.
#include "core/compiler/compile.h"
#include "core/zoo/zoo.h"
#include "tests/viewtest.h"
#include "views/codeeditor.h"
#include "views/codeview.h"
#include "views/cpphighlighter.h"
#include "views/kernellistmodel.h"

#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>

#include <cstdlib>

using namespace fusescope;
using namespace fusescope::compiler;

namespace {

using Category = CppHighlighter::Category;


// The format the highlighter gave the character at `column` of `line`.
QTextCharFormat formatAt(const QTextDocument &doc, int line, qsizetype column)
{
    const QTextBlock block = doc.findBlockByNumber(line);
    for (const QTextLayout::FormatRange &range : block.layout()->formats()) {
        if (column >= range.start && column < range.start + range.length)
            return range.format;
    }
    return {};
}

// Built from plain literals: moc does not read raw strings that hold quotes and comments.
const char *const kSample = "#include <cmath> // why\n"
                            "int x = 42; // note \"not a string\"\n"
                            "/* open\n"
                            "   still int */ float y = 1.5e-3f;\n"
                            "const char *s = \"// not a comment\";\n"
                            "__global__ void k() { __syncthreads(); int i = threadIdx.x; }\n";

} // namespace

Q_DECLARE_METATYPE(CppHighlighter::Category)

class TestViewsCode : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        viewtest::useTestCache();
        m_doc = viewtest::compiledZooModel("encoder");
        m_fuse = m_doc->graph("fuse");
        QVERIFY(m_fuse && !m_fuse->kernels.empty());
    }

    // --- highlighter ------------------------------------------------------------------

    void highlighterColoursTokens_data()
    {
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("token");
        QTest::addColumn<Category>("category");
        QTest::newRow("directive") << 0 << "include" << Category::Preprocessor;
        QTest::newRow("comment after a directive") << 0 << "why" << Category::Comment;
        QTest::newRow("type") << 1 << "int" << Category::Type;
        QTest::newRow("number") << 1 << "42" << Category::Number;
        QTest::newRow("line comment") << 1 << "note" << Category::Comment;
        QTest::newRow("quote inside a comment") << 1 << "not a string" << Category::Comment;
        QTest::newRow("block comment opens") << 2 << "open" << Category::Comment;
        QTest::newRow("block comment goes on") << 3 << "still" << Category::Comment;
        QTest::newRow("type in a block comment") << 3 << "int" << Category::Comment;
        QTest::newRow("after the block comment") << 3 << "float" << Category::Type;
        QTest::newRow("float literal") << 3 << "1.5e-3f" << Category::Number;
        QTest::newRow("keyword") << 4 << "const" << Category::Keyword;
        QTest::newRow("comment inside a string") << 4 << "// not" << Category::String;
        QTest::newRow("cuda qualifier") << 5 << "__global__" << Category::Cuda;
        QTest::newRow("cuda builtin") << 5 << "threadIdx" << Category::Cuda;
        QTest::newRow("cuda barrier") << 5 << "__syncthreads" << Category::Cuda;
    }
    void highlighterColoursTokens()
    {
        QFETCH(int, line);
        QFETCH(QString, token);
        QFETCH(Category, category);
        QTextDocument doc;
        CppHighlighter highlighter(&doc);
        doc.setPlainText(QString::fromLatin1(kSample));
        highlighter.rehighlight(); // a new highlighter's first pass waits for the event loop
        const qsizetype column = doc.findBlockByNumber(line).text().indexOf(token);
        QVERIFY(column >= 0);
        const QTextCharFormat expected = highlighter.categoryFormat(category);
        for (qsizetype c = column; c < column + token.size(); ++c)
            QCOMPARE(formatAt(doc, line, c).foreground(), expected.foreground());
    }

    void plainIdentifiersStayPlain()
    {
        QTextDocument doc;
        CppHighlighter highlighter(&doc);
        doc.setPlainText(QStringLiteral("value = other; // note"));
        highlighter.rehighlight();
        const QList<QTextLayout::FormatRange> formats = doc.firstBlock().layout()->formats();
        QCOMPARE(formats.size(), 1); // the comment only
        QCOMPARE(formats[0].start, 15);
    }

    // --- editor -------------------------------------------------------------------------

    void lineNumberAreaGrowsWithLineCount()
    {
        CodeEditor editor;
        editor.setPlainText(QStringLiteral("a\n").repeated(8));
        const int narrow = editor.lineNumberAreaWidth();
        editor.setPlainText(QStringLiteral("a\n").repeated(1200));
        QVERIFY(editor.lineNumberAreaWidth() > narrow);
        QVERIFY(editor.isReadOnly());
        QVERIFY(editor.viewport()->x() >= editor.lineNumberAreaWidth()); // the margin follows the width
    }

    void showRangeSelectsAndScrolls()
    {
        CodeEditor editor;
        editor.resize(400, 200);
        editor.setPlainText(QStringLiteral("line\n").repeated(300) + QStringLiteral("target {\n}\n"));
        const qsizetype start = editor.toPlainText().indexOf(QStringLiteral("target"));
        editor.showRange(start, start + 10);
        QCOMPARE(editor.markedText(), QStringLiteral("target {\u2029}"));
        QVERIFY(!editor.textCursor().hasSelection());
        QCOMPARE(editor.textCursor().position(), int(start));
        QCOMPARE(editor.verticalScrollBar()->value(), 300);
        QCOMPARE(editor.extraSelections().size(), 1);
        editor.clearRange();
        QVERIFY(editor.extraSelections().isEmpty());
        QVERIFY(!editor.textCursor().hasSelection());
    }

    // --- finding a kernel in the source -----------------------------------------------------

    void kernelSourceRangeFindsTheFunction_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expected"); // "" when absent
        QTest::newRow("first") << "k_1" << "// k_1: pointwise\nstatic void k_1_body() {}\nextern \"C\" void k_1(int a)\n{\n    if (a) { }\n}";
        QTest::newRow("a longer name sharing the prefix") << "k_10" << "// k_10: gemm\nextern \"C\" void k_10()\n{\n}";
        QTest::newRow("absent") << "k_2" << "";
    }
    void kernelSourceRangeFindsTheFunction()
    {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        const QString code = QStringLiteral("#include <x>\n// k_1: pointwise\nstatic void k_1_body() {}\n"
                                            "extern \"C\" void k_1(int a)\n{\n    if (a) { }\n}\n\n"
                                            "// k_10: gemm\nextern \"C\" void k_10()\n{\n}\n");
        const auto range = kernelSourceRange(code, name);
        QCOMPARE(range.has_value(), !expected.isEmpty());
        if (range)
            QCOMPARE(code.mid(range->first, range->second - range->first), expected);
    }

    // --- kernel list ------------------------------------------------------------------------

    void kernelListHasTheFuseKernels()
    {
        KernelListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDocument(m_doc);
        QCOMPARE(model.rowCount(), int(m_fuse->kernels.size()));
        for (int row = 0; row < model.rowCount(); ++row) {
            const GraphKernel &k = m_fuse->kernels[size_t(row)];
            QCOMPARE(model.index(row, KernelListModel::NameColumn).data().toString(), QString::fromStdString(k.name));
            QCOMPARE(model.index(row, KernelListModel::NodesColumn).data().toInt(), int(k.nodes.size()));
            QCOMPARE(model.index(row, KernelListModel::TimeColumn).data().toString(), QString());
        }
        QCOMPARE(model.rowOf(QStringLiteral("no such kernel")), -1);
        model.setDocument(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void kernelListShowsMeasuredTime()
    {
        auto profiled = std::make_shared<Document>(*m_doc);
        profiled->profiled = true;
        profiled->kernelTimeNs[m_fuse->kernels[0].name] = 2'500'000;
        KernelListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDocument(profiled);
        QCOMPARE(model.index(0, KernelListModel::TimeColumn).data(KernelListModel::SortRole).toDouble(), 2.5e6);
        QCOMPARE(model.index(0, KernelListModel::TimeColumn).data().toString(), formatKernelTime(2.5e6));
        QCOMPARE(model.index(1, KernelListModel::TimeColumn).data().toString(), QString()); // not measured
    }

    void kernelTimeText_data()
    {
        QTest::addColumn<double>("ns");
        QTest::addColumn<QString>("text");
        QTest::newRow("ns") << 640.0 << "640 ns";
        QTest::newRow("us") << 12'340.0 << "12.3 µs";
        QTest::newRow("ms") << 4'561'000.0 << "4.56 ms";
        QTest::newRow("s") << 1.2e9 << "1.20 s";
    }
    void kernelTimeText()
    {
        QFETCH(double, ns);
        QFETCH(QString, text);
        QCOMPARE(formatKernelTime(ns), text);
    }

    // --- the view -------------------------------------------------------------------------------

    void codeViewEmptyWithoutCodegen()
    {
        CodeView view;
        QVERIFY(view.isEmptyState());
        auto doc = std::make_shared<Document>(*m_doc);
        const int codegen = doc->stageIndex("codegen");
        doc->stages.erase(doc->stages.begin() + codegen);
        doc->graphs.erase(doc->graphs.begin() + codegen);
        view.setDocument(doc);
        QVERIFY(view.isEmptyState());
        view.setDocument(m_doc);
        QVERIFY(!view.isEmptyState());
        QCOMPARE(view.editor()->toPlainText(), QString::fromStdString(m_doc->stages[size_t(m_doc->stageIndex("codegen"))].code));
    }

    void selectingAKernelShowsItsFunction()
    {
        CodeView view;
        view.setDocument(m_doc);
        QSignalSpy selected(&view, &CodeView::kernelSelected);
        int withCode = 0;
        for (const GraphKernel &k : m_fuse->kernels) {
            const QString name = QString::fromStdString(k.name);
            QVERIFY(view.selectKernel(name));
            QCOMPARE(view.currentKernel(), name);
            QCOMPARE(selected.last().at(0).toString(), name);
            QCOMPARE(selected.last().at(1).value<QList<int>>(), QList<int>(k.nodes.begin(), k.nodes.end()));
            if (view.editor()->markedText().isEmpty())
                continue; // an extern kernel: no generated function
            ++withCode;
            const QString text = view.editor()->markedText();
            QVERIFY2(text.startsWith(QStringLiteral("// %1:").arg(name)), qPrintable(text.left(80)));
            QVERIFY(text.contains(QStringLiteral("extern \"C\" void %1(").arg(name)));
            QVERIFY(text.endsWith(QLatin1Char('}')));
        }
        QVERIFY(withCode > 0);
        QCOMPARE(selected.size(), qsizetype(m_fuse->kernels.size()));
        QVERIFY(!view.selectKernel(QStringLiteral("no_such_kernel")));
        QCOMPARE(selected.size(), qsizetype(m_fuse->kernels.size()));
    }

    void clickingTheListSelectsTheKernel()
    {
        CodeView view;
        view.resize(1000, 600);
        view.setDocument(m_doc);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy selected(&view, &CodeView::kernelSelected);
        QTableView *list = view.kernelView();
        const QModelIndex second = list->model()->index(1, KernelListModel::NameColumn);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(second).center());
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected.first().at(0).toString(), second.data().toString());
        QVERIFY(view.kernelInfo().startsWith(second.data().toString()));
    }

    void ctrlFFindsInTheCode()
    {
        CodeView view;
        view.setDocument(m_doc);
        view.show();
        QVERIFY(QTest::qWaitForWindowActive(&view));
        view.editor()->setFocus();
        QVERIFY(view.findBar()->isHidden());
        QTest::keyClick(view.editor(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(!view.findBar()->isHidden());
        QTest::keyClicks(view.findBar(), QStringLiteral("fusescope_call"));
        QTest::keyClick(view.findBar(), Qt::Key_Return);
        QCOMPARE(view.editor()->textCursor().selectedText(), QStringLiteral("fusescope_call"));
        QTest::keyClick(view.findBar(), Qt::Key_Escape);
        QVERIFY(view.findBar()->isHidden());
    }

private:
    std::shared_ptr<const Document> m_doc;
    const StageGraph *m_fuse = nullptr;
};

QTEST_MAIN(TestViewsCode)
#include "tst_views_code.moc"
