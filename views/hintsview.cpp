#include "views/hintsview.h"

#include "profiler/statistics.h"
#include "views/hintsmodel.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace fusescope {
namespace {

const profiler::HintRule *ruleById(const std::string &id)
{
    const std::vector<profiler::HintRule> &rules = profiler::hintRules();
    auto it = std::find_if(rules.begin(), rules.end(), [&id](const profiler::HintRule &r) { return r.id == id; });
    return it == rules.end() ? nullptr : &*it;
}

QString html(const std::string &text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

HintsView::HintsView(QWidget *parent)
    : QWidget(parent), m_model(new HintsModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_stack(new QStackedWidget(this)), m_emptyLabel(new QLabel(this)), m_table(new QTableView(this)),
      m_detail(new QTextBrowser(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(HintsModel::SortRole);

    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Descending saving is the engine's rank; the proxy's sort is stable, so ties keep it too.
    m_table->horizontalHeader()->setSortIndicator(HintsModel::SavingColumn, Qt::DescendingOrder);
    m_table->setSortingEnabled(true);
    m_table->viewport()->installEventFilter(this);

    m_detail->setReadOnly(true);
    m_detail->setOpenLinks(false);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_detail);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);

    m_emptyLabel->setAlignment(Qt::AlignCenter);
    m_emptyLabel->setWordWrap(true);
    m_stack->addWidget(m_emptyLabel);
    m_stack->addWidget(splitter);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);

    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { onCurrentRowChanged(current); });
    connect(m_table, &QAbstractItemView::clicked, this, [this](const QModelIndex &index) { onClicked(index); });
    showEmpty(tr("This file holds no recorded run"));
}

HintsView::~HintsView() = default;

void HintsView::setDocument(std::shared_ptr<const Document> document)
{
    m_document = std::move(document);
    if (!m_document || !m_document->stats) {
        m_model->setHints({});
        showEmpty(tr("This file holds no recorded run"));
        return;
    }
    m_model->setHints(m_document->hints); // computed with the load, off the GUI thread
    if (m_model->rowCount() == 0) {
        showEmpty(tr("No rule's threshold was crossed — nothing to fix here"));
        return;
    }
    m_stack->setCurrentIndex(1);
    m_detail->clear();
    // Show the top finding's detail without publishing it: opening a file selects nothing elsewhere.
    const QSignalBlocker blocker(this);
    m_table->setCurrentIndex(m_proxy->mapFromSource(m_model->index(0, 0)));
}

const std::vector<profiler::Hint> &HintsView::hints() const
{
    return m_model->hints();
}

void HintsView::selectHint(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
    if (m_table->currentIndex().row() != index.row())
        m_table->setCurrentIndex(index); // publishes through onCurrentRowChanged
    else
        publishEvidence(row);
}

QString HintsView::emptyMessage() const
{
    return m_stack->currentIndex() == 0 ? m_emptyLabel->text() : QString();
}

bool HintsView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_table->viewport() && event->type() == QEvent::MouseButtonPress)
        m_rowBeforePress = m_table->currentIndex().row();
    return QWidget::eventFilter(watched, event);
}

void HintsView::showEmpty(const QString &message)
{
    m_emptyLabel->setText(message);
    m_detail->clear();
    m_stack->setCurrentIndex(0);
}

void HintsView::onCurrentRowChanged(const QModelIndex &current)
{
    if (!current.isValid())
        return m_detail->clear();
    const int row = m_proxy->mapToSource(current).row();
    showDetail(row);
    publishEvidence(row);
}

void HintsView::onClicked(const QModelIndex &index)
{
    // A click that changed the row has published already; a click on the
    // current row publishes again, so the user can bring the evidence back.
    if (index.isValid() && index.row() == m_rowBeforePress)
        publishEvidence(m_proxy->mapToSource(index).row());
    m_rowBeforePress = -1;
}

void HintsView::showDetail(int row)
{
    m_detail->setHtml(detailHtml(m_model->hint(row)));
}

void HintsView::publishEvidence(int row)
{
    const profiler::Hint &hint = m_model->hint(row);
    emit evidenceSelected(hint.events, hint.nodes);
}

QString HintsView::detailHtml(const profiler::Hint &hint) const
{
    const profiler::HintRule *rule = ruleById(hint.rule);
    QString text = QStringLiteral("<h3>%1</h3>").arg(rule ? html(rule->title) : html(hint.rule));
    text += QStringLiteral("<p><b>%1</b> · %2 · %3</p>")
                .arg(hintSeverityText(hint.severity), html(hint.rule),
                     tr("estimated saving %1").arg(formatHintSaving(hint.savingUs)));
    text += QStringLiteral("<p>%1</p>").arg(html(hint.message));
    text += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("Fix:"), html(hint.fix));
    if (rule && !rule->thresholds.empty())
        text += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("Thresholds:"), html(rule->thresholds));
    text += QStringLiteral("<p><b>%1</b> %2</p>")
                .arg(tr("Evidence:"), tr("%n event(s)", nullptr, int(hint.events.size())) + QStringLiteral(", ")
                                          + tr("%n graph node(s)", nullptr, int(hint.nodes.size())));
    return text;
}

} // namespace fusescope
