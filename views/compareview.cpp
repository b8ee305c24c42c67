#include "views/compareview.h"

#include "views/heatlegend.h" // formatDuration
#include "views/sortabletable.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>


namespace fusescope {

namespace {

QString tableTitle(CompareModel::Table table)
{
    static const char *const titles[] = {QT_TRANSLATE_NOOP("CompareView", "Graph nodes"),
                                         QT_TRANSLATE_NOOP("CompareView", "Ops"),
                                         QT_TRANSLATE_NOOP("CompareView", "Kernels")};
    return CompareView::tr(titles[table]);
}

bool hasRun(const Document *doc)
{
    return doc && doc->trace && !doc->trace->runs.empty() && doc->stats;
}

profiler::CompareSide sideOf(const Document &doc)
{
    return {doc.trace.get(), &doc.trace->runs.front(), doc.stats.get(), compareLabel(doc)};
}

QString html(const std::string &text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

std::string compareLabel(const Document &doc)
{
    if (doc.trace && !doc.trace->runs.empty()) {
        const profiler::RunInfo &info = doc.trace->runs.front().info;
        if (!info.name.empty())
            return info.name;
        if (!info.mode.empty())
            return info.mode;
    }
    return doc.title;
}

CompareView::CompareView(QWidget *parent) : QWidget(parent), m_workers(this)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_message = new QLabel(this);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    layout->addWidget(m_message);
    m_content = createContent();
    layout->addWidget(m_content);
    setDocument(nullptr);
}

CompareView::~CompareView() = default;

QWidget *CompareView::createContent()
{
    auto *content = new QWidget(this);
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel(content);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_filter = new QLineEdit(content);
    m_filter->setPlaceholderText(tr("Filter by name"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, &CompareView::applyFilter);
    layout->addWidget(m_filter);
    m_tabs = new QTabWidget(content);
    for (int t = 0; t < CompareModel::TableCount; ++t) {
        const auto table = CompareModel::Table(t);
        m_models[size_t(t)] = new CompareModel(table, this);
        const SortableTable view = createSortableTable(m_models[size_t(t)], CompareModel::SortRole, m_tabs);
        connect(view.view, &QTableView::doubleClicked, this,
                [this, table](const QModelIndex &i) { activateRow(table, i); });
        m_proxies[size_t(t)] = view.proxy;
        m_tables[size_t(t)] = view.view;
        m_tabs->addTab(view.view, tableTitle(table));
    }
    connect(m_tabs, &QTabWidget::currentChanged, this, &CompareView::applyFilter);
    layout->addWidget(m_tabs);
    return content;
}

void CompareView::setDocument(std::shared_ptr<const Document> document)
{
    setRuns(document ? document->baseline : nullptr, document);
}

void CompareView::setRuns(std::shared_ptr<const Document> base, std::shared_ptr<const Document> other)
{
    const quint64 job = ++m_job;
    m_comparison.reset();
    for (CompareModel *model : m_models)
        model->setComparison(nullptr);
    m_empty = !hasRun(base.get()) || !hasRun(other.get());
    m_busy = !m_empty;
    if (m_empty) {
        showMessage(tr("Nothing to compare. Record a model with <tt>fusescope profile MODEL --compare</tt> "
                       "to see its eager and compiled runs side by side, or choose File ▸ Compare With… "
                       "to set another file's run against this one."));
        return;
    }
    showMessage(tr("Comparing %1 with %2…")
                    .arg(QString::fromStdString(compareLabel(*base)), QString::fromStdString(compareLabel(*other))));
    QPointer<CompareView> self(this);
    m_workers.start([self, job, base, other] {
        std::shared_ptr<const profiler::RunComparison> result;
        QString error;
        try {
            result = std::make_shared<const profiler::RunComparison>(
                profiler::compareRuns(sideOf(*base), sideOf(*other)));
        } catch (const std::exception &e) {
            error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            qApp, [self, job, result = std::move(result), error]() mutable {
                if (self)
                    self->showComparison(job, std::move(result), error);
            },
            Qt::QueuedConnection);
    });
}

void CompareView::showComparison(quint64 job, std::shared_ptr<const profiler::RunComparison> comparison,
                                 QString error)
{
    if (job != m_job)
        return; // a newer pair of runs replaced these
    m_busy = false;
    if (!comparison) {
        showMessage(tr("The runs cannot be compared: %1").arg(error.toHtmlEscaped()));
        return;
    }
    m_comparison = std::move(comparison);
    for (CompareModel *model : m_models)
        model->setComparison(m_comparison);
    m_tables[CompareModel::NodesTable]->sortByColumn(CompareModel::DeltaColumn, Qt::AscendingOrder);
    m_tables[CompareModel::OpsTable]->sortByColumn(CompareModel::DeltaColumn, Qt::AscendingOrder);
    m_tables[CompareModel::KernelsTable]->sortByColumn(CompareModel::DeltaColumn, Qt::AscendingOrder);
    // Graph nodes first when there are any: the comparison through origins is the one no other tool makes.
    m_tabs->setTabEnabled(CompareModel::NodesTable, !m_comparison->nodes.empty());
    if (m_comparison->nodes.empty() && m_tabs->currentIndex() == CompareModel::NodesTable)
        m_tabs->setCurrentIndex(m_comparison->ops.empty() ? CompareModel::KernelsTable : CompareModel::OpsTable);
    m_summary->setText(summaryText());
    m_message->hide();
    m_content->show();
    applyFilter();
    emit comparisonReady();
}

QString CompareView::summaryText() const
{
    if (!m_comparison)
        return {};
    const profiler::RunComparison &c = *m_comparison;
    const QString base = html(c.baseLabel), other = html(c.otherLabel);
    const bool steps = c.baseSteps > 0 && c.otherSteps > 0;
    QString text = tr("<b>%1</b> → <b>%2</b>: %3 %4 → %5")
                       .arg(base, other, steps ? tr("median step") : tr("run"), formatDuration(c.baseStepNs),
                            formatDuration(c.otherStepNs));
    if (c.speedup > 0)
        text += QStringLiteral(", <b>%1</b>").arg(formatSpeedup(c.speedup));
    text += tr(". Kernel time%1 %2 → %3.")
                .arg(c.perStep ? tr(" per step") : QString(), formatDuration(c.baseKernelNs),
                     formatDuration(c.otherKernelNs));
    for (const std::string &note : c.notes)
        text += QStringLiteral("<br><span style='color:gray'>%1</span>").arg(html(note));
    return text;
}

void CompareView::showMessage(const QString &text)
{
    m_message->setText(text);
    m_message->show();
    m_content->hide();
}

bool CompareView::isEmptyStateShown() const
{
    return m_empty;
}

void CompareView::applyFilter()
{
    const int current = m_tabs->currentIndex();
    for (int t = 0; t < CompareModel::TableCount; ++t)
        m_proxies[size_t(t)]->setFilterFixedString(t == current ? m_filter->text() : QString());
}

void CompareView::activateRow(CompareModel::Table table, const QModelIndex &proxyIndex)
{
    if (!proxyIndex.isValid())
        return;
    const QModelIndex source = m_proxies[size_t(table)]->mapToSource(proxyIndex);
    if (table == CompareModel::NodesTable) {
        emit nodeRequested(source.data(CompareModel::NodeIdRole).toInt());
        return;
    }
    // Only the shown run is on the timeline.
    if (source.data(CompareModel::InOtherRole).toBool())
        emit eventsRequested(source.data(CompareModel::NameRole).toString(), table == CompareModel::OpsTable ? 0 : 1);
}

} // namespace fusescope
