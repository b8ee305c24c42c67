#pragma once

#include "profiler/hints.h"
#include "views/document.h"

#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;
class QTextBrowser;

namespace fusescope {

class HintsModel;

// The hints engine's findings on the document's run: a table ranked by
// estimated saving above a detail pane with the selected finding's fix,
// thresholds and evidence. Selecting a finding publishes its evidence; the
// timeline and the graph subscribe (this view reaches into neither).
class HintsView : public QWidget
{
    Q_OBJECT
public:
    explicit HintsView(QWidget *parent = nullptr);
    ~HintsView() override;

    // Computes the hints of run 0 of the document's trace, synchronously.
    void setDocument(std::shared_ptr<const Document> document);
    const std::vector<profiler::Hint> &hints() const;
    // Selects the hint at `row` of hints() and publishes its evidence.
    void selectHint(int row);
    // What the view says instead of a table, or empty while it shows hints.
    QString emptyMessage() const;

signals:
    void evidenceSelected(std::vector<profiler::EventId> events, std::vector<int> nodes);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void showEmpty(const QString &message);
    void onCurrentRowChanged(const QModelIndex &current);
    void onClicked(const QModelIndex &index);
    void showDetail(int row);
    void publishEvidence(int row);
    QString detailHtml(const profiler::Hint &hint) const;

    std::shared_ptr<const Document> m_document;
    HintsModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QStackedWidget *m_stack = nullptr;
    QLabel *m_emptyLabel = nullptr;
    QTableView *m_table = nullptr;
    QTextBrowser *m_detail = nullptr;
    int m_rowBeforePress = -1; // tells a click that changed the row from a re-click on it
};

} // namespace fusescope
