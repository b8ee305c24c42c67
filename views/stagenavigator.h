#pragma once

#include "views/document.h"

#include <QWidget>

#include <memory>

class QAction;
class QLabel;
class QModelIndex;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;

namespace fusescope {

class DecisionModel;
class StageListModel;

// Steps through the compile stages: the stage table, Prev/Next (Alt+Left,
// Alt+Right anywhere in the window), what the selected stage changed, its
// log, and from fuse on the fusion decisions that shaped the kernels.
class StageNavigator : public QWidget
{
    Q_OBJECT
public:
    explicit StageNavigator(QWidget *parent = nullptr);

    // Selects the first stage, or shows the empty state when there is none.
    void setDocument(std::shared_ptr<const Document> document);
    void selectStage(int index);
    int currentStage() const; // -1 when no stage is selected
    bool isEmptyState() const;
    QString diffSummary() const;
    bool decisionsVisible() const;

    StageListModel *stageModel() const { return m_stages; }
    DecisionModel *decisionModel() const { return m_decisions; }
    QTableView *stageView() const { return m_stageView; }
    QTableView *decisionView() const { return m_decisionView; }
    QAction *previousAction() const { return m_previousAction; }
    QAction *nextAction() const { return m_nextAction; }

public slots:
    void next();
    void previous();

signals:
    void stageSelected(int index);
    // The producer and consumer of the decision clicked.
    void decisionActivated(const QStringList &nodeNames);

private:
    QWidget *createStagePane();
    QWidget *createDetailPane();
    QAction *createStepAction(const QString &text, QKeySequence shortcut, void (StageNavigator::*step)());
    void showStage(int index);
    void updateActions();
    // The graph whose decisions explain `index`: its segment's fuse stage, from fuse on.
    std::shared_ptr<const StageGraph> decisionGraph(int index) const;
    void onDecisionClicked(const QModelIndex &index);

    std::shared_ptr<const Document> m_document;
    StageListModel *m_stages = nullptr;
    DecisionModel *m_decisions = nullptr;
    QSortFilterProxyModel *m_decisionProxy = nullptr;
    QStackedWidget *m_stack = nullptr;
    QTableView *m_stageView = nullptr;
    QTableView *m_decisionView = nullptr;
    QPlainTextEdit *m_log = nullptr;
    QLabel *m_summary = nullptr;
    QAction *m_previousAction = nullptr;
    QAction *m_nextAction = nullptr;
};

} // namespace fusescope
