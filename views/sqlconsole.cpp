#include "views/sqlconsole.h"

#include "views/sqlexamples.h"
#include "views/sqlresultmodel.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <set>

namespace fusescope {
namespace {

const QString kLastQueryKey = QStringLiteral("sqlConsole/lastQuery");
const QString kHistoryKey = QStringLiteral("sqlConsole/history");
constexpr int kHistorySize = 50;

} // namespace

SqlConsole::SqlConsole(QWidget *parent)
    : QWidget(parent)
    , m_model(new SqlResultModel(this))
{
    m_stack = new QStackedWidget(this);
    m_emptyLabel = new QLabel(m_stack);
    m_emptyLabel->setAlignment(Qt::AlignCenter);
    m_emptyLabel->setWordWrap(true);
    m_stack->addWidget(m_emptyLabel);
    m_stack->addWidget(createContent());
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
    const QSettings settings;
    m_editor->setPlainText(settings.value(kLastQueryKey, QString::fromUtf8(sqlExamples().front().sql)).toString());
    m_history->addItems(settings.value(kHistoryKey).toStringList());
    showEmptyState(tr("Open a trace to query it with SQL."));
}

QWidget *SqlConsole::createToolbar()
{
    auto *bar = new QWidget;
    auto *row = new QHBoxLayout(bar);
    row->setContentsMargins(0, 0, 0, 0);
    m_examples = new QComboBox;
    m_examples->setToolTip(tr("Example queries over the trace's tables"));
    fillExamples();
    m_history = new QComboBox;
    m_history->addItem(tr("History"));
    m_history->setMaximumWidth(320);
    m_history->setToolTip(tr("The queries run before, the latest first (Ctrl+Up / Ctrl+Down in the editor)"));
    m_runButton = new QPushButton(tr("Run"));
    m_runButton->setToolTip(tr("Run the query (Ctrl+Enter)"));
    m_cancelButton = new QPushButton(tr("Cancel"));
    m_cancelButton->setEnabled(false);
    row->addWidget(m_examples);
    row->addWidget(m_history, 1);
    row->addStretch();
    row->addWidget(m_runButton);
    row->addWidget(m_cancelButton);
    connect(m_examples, &QComboBox::activated, this, [this](int i) {
        if (i > 0)
            setQuery(m_examples->itemData(i).toString());
        m_examples->setCurrentIndex(0);
    });
    connect(m_history, &QComboBox::activated, this, [this](int i) {
        if (i > 0)
            setQuery(m_history->itemText(i));
        m_history->setCurrentIndex(0);
    });
    connect(m_runButton, &QPushButton::clicked, this, &SqlConsole::runQuery);
    connect(m_cancelButton, &QPushButton::clicked, this, &SqlConsole::cancel);
    return bar;
}

void SqlConsole::fillExamples()
{
    m_examples->addItem(tr("Example queries"));
    for (const SqlExample &e : sqlExamples())
        m_examples->addItem(tr(e.title), QString::fromUtf8(e.sql));
}

QWidget *SqlConsole::createContent()
{
    auto *page = new QWidget;
    auto *column = new QVBoxLayout(page);
    column->addWidget(createToolbar());
    m_editor = new QPlainTextEdit;
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setPlaceholderText(tr("SELECT … FROM runs   (Ctrl+Enter runs; the trace opens read-only)"));
    m_editor->installEventFilter(this);
    m_table = new QTableView;
    m_table->setModel(m_model);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->installEventFilter(this);
    auto *queryAndResult = new QSplitter(Qt::Vertical);
    queryAndResult->addWidget(m_editor);
    queryAndResult->addWidget(m_table);
    queryAndResult->setStretchFactor(1, 3);
    auto *split = new QSplitter(Qt::Horizontal);
    split->addWidget(createSchemaTree());
    split->addWidget(queryAndResult);
    split->setStretchFactor(1, 4);
    column->addWidget(split, 1);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(160);
    m_progress->hide();
    m_status = new QLabel;
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *statusRow = new QHBoxLayout;
    statusRow->addWidget(m_progress);
    statusRow->addWidget(m_status, 1);
    column->addLayout(statusRow);
    return page;
}

QTreeWidget *SqlConsole::createSchemaTree()
{
    m_schema = new QTreeWidget;
    m_schema->setHeaderLabel(tr("Tables"));
    m_schema->setToolTip(tr("Double-click a table or column to insert its name"));
    connect(m_schema, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem *item) {
        const QString name = item->data(0, Qt::UserRole).toString();
        if (!name.isEmpty())
            m_editor->insertPlainText(name);
    });
    return m_schema;
}

void SqlConsole::showSchema(const SqlResult &result)
{
    m_schema->clear();
    for (const SqlTableSchema &t : result.schema) {
        auto *table = new QTreeWidgetItem(m_schema, {t.name});
        table->setData(0, Qt::UserRole, t.name);
        table->setToolTip(0, t.columns.join(QLatin1Char('\n')));
        for (const QString &column : t.columns) {
            auto *item = new QTreeWidgetItem(table, {column});
            item->setData(0, Qt::UserRole, column.section(QLatin1Char(' '), 0, 0));
        }
    }
    m_haveSchema = !result.schema.empty();
}

bool SqlConsole::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::KeyPress) {
        const auto *key = static_cast<QKeyEvent *>(event);
        const bool enter = key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
        const bool ctrl = key->modifiers().testFlag(Qt::ControlModifier);
        if (watched == m_editor && enter && ctrl) {
            runQuery();
            return true;
        }
        if (watched == m_editor && ctrl && (key->key() == Qt::Key_Up || key->key() == Qt::Key_Down)) {
            stepHistory(key->key() == Qt::Key_Up ? 1 : -1);
            return true;
        }
        if (watched == m_table && key->matches(QKeySequence::Copy)) {
            copySelection();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString SqlConsole::selectionAsTsv() const
{
    const QModelIndexList selected = m_table->selectionModel()->selectedIndexes();
    if (selected.isEmpty())
        return {};
    std::set<int> rows, columns;
    std::set<std::pair<int, int>> cells;
    for (const QModelIndex &i : selected) {
        rows.insert(i.row());
        columns.insert(i.column());
        cells.insert({i.row(), i.column()});
    }
    QStringList lines, header;
    for (int c : columns)
        header << m_model->headerData(c, Qt::Horizontal).toString();
    lines << header.join(QLatin1Char('\t'));
    for (int r : rows) {
        QStringList line;
        for (int c : columns)
            line << (cells.count({r, c}) ? m_model->cellText(m_model->index(r, c)) : QString());
        lines << line.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void SqlConsole::copySelection() const
{
    const QString tsv = selectionAsTsv();
    if (!tsv.isEmpty())
        QApplication::clipboard()->setText(tsv);
}

void SqlConsole::remember(const QString &sql)
{
    QStringList entries = history();
    entries.removeAll(sql);
    entries.prepend(sql);
    while (entries.size() > kHistorySize)
        entries.removeLast();
    while (m_history->count() > 1)
        m_history->removeItem(1);
    m_history->addItems(entries);
    m_historyPosition = -1;
    QSettings settings;
    settings.setValue(kLastQueryKey, sql);
    settings.setValue(kHistoryKey, entries);
}

// Ctrl+Up goes back through the history, Ctrl+Down forward again.
void SqlConsole::stepHistory(int delta)
{
    const QStringList entries = history();
    if (entries.isEmpty())
        return;
    m_historyPosition = std::clamp(m_historyPosition + delta, 0, int(entries.size()) - 1);
    setQuery(entries[m_historyPosition]);
}

void SqlConsole::setQuery(const QString &sql)
{
    m_editor->setPlainText(sql);
}

QString SqlConsole::query() const
{
    return m_editor->toPlainText();
}

QStringList SqlConsole::history() const
{
    QStringList entries;
    for (int i = 1; i < m_history->count(); ++i)
        entries << m_history->itemText(i);
    return entries;
}

QStringList SqlConsole::exampleQueries() const
{
    QStringList queries;
    for (const SqlExample &e : sqlExamples())
        queries << QString::fromUtf8(e.sql);
    return queries;
}

QStringList SqlConsole::schemaTables() const
{
    QStringList tables;
    for (int i = 0; i < m_schema->topLevelItemCount(); ++i)
        tables << m_schema->topLevelItem(i)->data(0, Qt::UserRole).toString();
    tables.removeAll(QString());
    return tables;
}

QAbstractItemModel *SqlConsole::resultModel() const
{
    return m_model;
}

QString SqlConsole::statusText() const
{
    return m_status->text();
}

bool SqlConsole::isStatusError() const
{
    return m_statusError;
}

void SqlConsole::setStatus(const QString &text, bool error)
{
    m_status->setText(text);
    m_statusError = error;
    m_status->setStyleSheet(error ? QStringLiteral("color: #c62828;") : QString());
}

void SqlConsole::setBusy(bool busy)
{
    m_cancelButton->setEnabled(busy);
    if (!busy)
        m_progress->hide();
}

void SqlConsole::showEmptyState(const QString &message)
{
    m_emptyLabel->setText(message);
    m_stack->setCurrentIndex(0);
}

bool SqlConsole::isEmptyStateShown() const
{
    return m_stack->currentIndex() == 0;
}

void SqlConsole::setRowLimit(int rows)
{
    m_rowLimit = std::max(1, rows);
}

} // namespace fusescope
