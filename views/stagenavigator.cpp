#include "views/stagenavigator.h"

#include "views/decisionmodel.h"
#include "views/stagelistmodel.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>

#include <algorithm>

namespace fusescope {
namespace {

QTableView *createTable(QAbstractItemModel *model, QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setModel(model);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    return view;
}

QToolButton *createButton(QAction *action, QWidget *parent)
{
    auto *button = new QToolButton(parent);
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);
    return button;
}

} // namespace

StageNavigator::StageNavigator(QWidget *parent)
    : QWidget(parent), m_stages(new StageListModel(this)), m_decisions(new DecisionModel(this)),
      m_decisionProxy(new QSortFilterProxyModel(this))
{
    m_decisionProxy->setSourceModel(m_decisions);
    m_decisionProxy->setSortRole(DecisionModel::SortRole);
    m_previousAction = createStepAction(tr("Previous stage"), QKeySequence(Qt::ALT | Qt::Key_Left),
                                        &StageNavigator::previous);
    m_nextAction = createStepAction(tr("Next stage"), QKeySequence(Qt::ALT | Qt::Key_Right), &StageNavigator::next);

    auto *content = new QSplitter(Qt::Vertical, this);
    content->addWidget(createStagePane());
    content->addWidget(createDetailPane());
    auto *empty = new QLabel(tr("This file holds no compile stages: profile with --compile"), this);
    empty->setAlignment(Qt::AlignCenter);
    empty->setWordWrap(true);
    m_stack = new QStackedWidget(this);
    m_stack->addWidget(empty);
    m_stack->addWidget(content);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
    updateActions();
}

// Window-wide, so stepping works from the graph beside the navigator too; an
// action of a hidden navigator does not fire.
QAction *StageNavigator::createStepAction(const QString &text, QKeySequence shortcut, void (StageNavigator::*step)())
{
    auto *action = new QAction(text, this);
    action->setShortcut(shortcut);
    action->setShortcutContext(Qt::WindowShortcut);
    action->setToolTip(tr("%1 (%2)").arg(text, shortcut.toString(QKeySequence::NativeText)));
    connect(action, &QAction::triggered, this, step);
    addAction(action);
    return action;
}

QWidget *StageNavigator::createStagePane()
{
    auto *pane = new QWidget(this);
    m_stageView = createTable(m_stages, pane);
    connect(m_stageView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showStage(current.isValid() ? current.row() : -1); });
    m_summary = new QLabel(pane);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *bar = new QHBoxLayout;
    bar->addWidget(createButton(m_previousAction, pane));
    bar->addWidget(createButton(m_nextAction, pane));
    bar->addWidget(m_summary, 1);
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_stageView);
    return pane;
}

QWidget *StageNavigator::createDetailPane()
{
    auto *pane = new QSplitter(Qt::Vertical, this);
    m_log = new QPlainTextEdit(pane);
    m_log->setReadOnly(true);
    m_log->setPlaceholderText(tr("The selected stage logged nothing"));
    m_decisionView = createTable(m_decisionProxy, pane);
    m_decisionView->setSortingEnabled(true);
    m_decisionView->sortByColumn(DecisionModel::BytesSavedColumn, Qt::DescendingOrder);
    m_decisionView->hide();
    connect(m_decisionView, &QAbstractItemView::clicked, this, &StageNavigator::onDecisionClicked);
    pane->addWidget(m_log);
    pane->addWidget(m_decisionView);
    return pane;
}

void StageNavigator::setDocument(std::shared_ptr<const Document> document)
{
    m_document = std::move(document);
    m_stages->setDocument(m_document);
    m_stack->setCurrentIndex(isEmptyState() ? 0 : 1);
    showStage(-1);
    selectStage(0);
}

void StageNavigator::selectStage(int index)
{
    if (index < 0 || index >= m_stages->rowCount())
        return;
    m_stageView->selectionModel()->setCurrentIndex(m_stages->index(index, 0),
                                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

int StageNavigator::currentStage() const
{
    const QModelIndex current = m_stageView->selectionModel()->currentIndex();
    return current.isValid() ? current.row() : -1;
}

bool StageNavigator::isEmptyState() const
{
    return m_stages->rowCount() == 0;
}

QString StageNavigator::diffSummary() const
{
    return m_summary->text();
}

bool StageNavigator::decisionsVisible() const
{
    return !m_decisionView->isHidden();
}

void StageNavigator::next()
{
    selectStage(currentStage() + 1);
}

void StageNavigator::previous()
{
    if (currentStage() > 0)
        selectStage(currentStage() - 1);
}

void StageNavigator::showStage(int index)
{
    const bool valid = index >= 0 && index < m_stages->rowCount();
    m_summary->setText(valid ? m_stages->diffSummary(index) : QString());
    m_log->setPlainText(m_stages->logText(index));
    std::shared_ptr<const StageGraph> decisions = valid ? decisionGraph(index) : nullptr;
    if (decisions.get() != m_decisions->graph()) {
        m_decisions->setGraph(decisions);
        m_decisionView->resizeColumnsToContents();
    }
    m_decisionView->setVisible(decisions != nullptr);
    updateActions();
    if (valid)
        emit stageSelected(index);
}

void StageNavigator::updateActions()
{
    const int current = currentStage();
    m_previousAction->setEnabled(current > 0);
    m_nextAction->setEnabled(current + 1 < m_stages->rowCount());
}

std::shared_ptr<const StageGraph> StageNavigator::decisionGraph(int index) const
{
    const int segment = m_document->stages[size_t(index)].segment;
    for (int i = std::min(index, int(m_document->graphs.size()) - 1); i >= 0; --i) {
        const std::shared_ptr<const StageGraph> &graph = m_document->graphs[size_t(i)];
        if (m_document->stages[size_t(i)].segment == segment && graph && !graph->decisions.empty())
            return graph;
    }
    return nullptr;
}

void StageNavigator::onDecisionClicked(const QModelIndex &index)
{
    const QModelIndex source = m_decisionProxy->mapToSource(index);
    if (source.isValid())
        emit decisionActivated(m_decisions->nodeNames(source.row()));
}

} // namespace fusescope
