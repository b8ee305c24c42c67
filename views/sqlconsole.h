#pragma once
// The SQL console dock: read-only queries over the open `.fstrace`, or over a
// store built on demand from an imported trace, results in a table. A query
// runs in a worker thread with its own read-only connection; Cancel
// interrupts it, a newer query makes an older one's result stale.

#include "views/document.h"
#include "views/sqleventstable.h"
#include "views/workerthreads.h"

#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>

class QAbstractItemModel;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTableView;
class QTemporaryDir;
class QTreeWidget;

namespace fusescope {

class SqlQuery;
class SqlResultModel;
struct SqlResult;

class SqlConsole : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kDefaultRowLimit = 10000;

    explicit SqlConsole(QWidget *parent = nullptr);
    ~SqlConsole() override; // cancels and waits for a running query

    // Null, or a document without a trace, shows the empty state.
    void setDocument(std::shared_ptr<const Document> document);
    void setQuery(const QString &sql);
    QString query() const;
    void runQuery(); // asynchronous; emits queryFinished
    void cancel();
    bool isRunning() const;

    QAbstractItemModel *resultModel() const;
    QString statusText() const;
    bool isStatusError() const;
    bool isEmptyStateShown() const;
    QStringList exampleQueries() const;
    QStringList history() const;
    // Table names of the schema list, filled when the store is first read.
    QStringList schemaTables() const;
    void setRowLimit(int rows);

    // The selected cells as TSV, the columns' names first; "" when none.
    QString selectionAsTsv() const;
    void copySelection() const;
    QPlainTextEdit *editor() const { return m_editor; }
    QTableView *resultView() const { return m_table; }

signals:
    void queryFinished(bool ok);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QWidget *createToolbar();
    QWidget *createContent();
    QTreeWidget *createSchemaTree();
    void fillExamples();
    void stopWorkers();
    void startSchemaLoad();
    void startConversion();
    void conversionDone(bool ok, bool cancelled, const QString &error);
    void startQuery(const QString &sql);
    void queryDone(std::shared_ptr<const SqlResult> result);
    void showSchema(const SqlResult &result);
    void showResult(const SqlResult &result);
    void remember(const QString &sql);
    void stepHistory(int delta);
    std::function<void(double)> conversionProgress(std::shared_ptr<std::atomic<bool>> cancelFlag);
    void setStatus(const QString &text, bool error = false);
    void setBusy(bool busy);
    void fitColumns();
    void showEmptyState(const QString &message);

    // The document and the store it is queried through.
    std::shared_ptr<const Document> m_document;
    QString m_storePath;                     // "" until the store exists
    std::shared_ptr<QTemporaryDir> m_storeDir; // an imported trace's store; shared with its workers
    std::shared_ptr<std::atomic<bool>> m_conversionCancel; // set while a conversion runs
    QString m_pendingSql;                    // runs once the conversion is done
    std::shared_ptr<SqlQuery> m_query;       // the running query; a finished older one is stale
    std::shared_ptr<SqlQuery> m_schemaQuery;
    std::shared_ptr<const SqlEventRuns> m_eventRuns; // the `events` table's rows
    WorkerThreads m_workers{this};
    int m_rowLimit = kDefaultRowLimit;
    int m_historyPosition = -1; // Ctrl+Up/Down's place in the history; -1 = not in it
    bool m_statusError = false;
    bool m_haveSchema = false;

    QStackedWidget *m_stack = nullptr;
    QLabel *m_emptyLabel = nullptr;
    QComboBox *m_examples = nullptr;
    QComboBox *m_history = nullptr;
    QPushButton *m_runButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QTreeWidget *m_schema = nullptr;
    QPlainTextEdit *m_editor = nullptr;
    QTableView *m_table = nullptr;
    SqlResultModel *m_model = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;
};

} // namespace fusescope
