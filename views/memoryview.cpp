#include "views/memoryview.h"

#include "views/memorychart.h"
#include "views/memoryhistogram.h"
#include "views/memorymodel.h"
#include "views/sortabletable.h"
#include "views/timelinemodel.h"

#include "profiler/memoryanalysis.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace fusescope {

namespace {

QString deviceName(int device)
{
    return device < 0 ? MemoryView::tr("CPU") : MemoryView::tr("GPU %1").arg(device);
}

QString timeText(int64_t ns)
{
    return QString::fromStdString(formatDuration(ns));
}

} // namespace

MemoryView::MemoryView(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_emptyLabel = new QLabel(this);
    m_emptyLabel->setAlignment(Qt::AlignCenter);
    m_emptyLabel->setWordWrap(true);
    layout->addWidget(m_emptyLabel);
    m_content = createContent();
    layout->addWidget(m_content);
    showEmptyState(tr("This file holds no recorded run"));
}

MemoryView::~MemoryView() = default;

QWidget *MemoryView::createContent()
{
    auto *content = new QWidget(this);
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(createTopBar(content));
    auto *vertical = new QSplitter(Qt::Vertical, content);
    m_chart = new MemoryChart(vertical);
    connect(m_chart, &MemoryChart::timeSelected, this, [this](qint64 t) { selectTime(t); });
    connect(m_chart, &MemoryChart::timeActivated, this, &MemoryView::frameTime);
    vertical->addWidget(m_chart);
    auto *horizontal = new QSplitter(Qt::Horizontal, vertical);
    horizontal->addWidget(createLivePane(horizontal));
    m_histogram = new SizeHistogramWidget(horizontal);
    horizontal->addWidget(m_histogram);
    horizontal->setStretchFactor(0, 3);
    horizontal->setStretchFactor(1, 2);
    vertical->addWidget(horizontal);
    vertical->setStretchFactor(0, 1);
    vertical->setStretchFactor(1, 1);
    layout->addWidget(vertical, 1);
    setTabOrder(m_deviceBox, m_chart);
    setTabOrder(m_chart, m_filter);
    setTabOrder(m_filter, m_table);
    setTabOrder(m_table, m_histogram);
    return content;
}

QWidget *MemoryView::createTopBar(QWidget *parent)
{
    auto *bar = new QWidget(parent);
    auto *layout = new QHBoxLayout(bar);
    layout->setContentsMargins(4, 2, 4, 2);
    m_deviceLabel = new QLabel(tr("&Device:"), bar);
    m_deviceBox = new QComboBox(bar);
    m_deviceBox->setToolTip(tr("The device whose allocator is shown: the CPU or one GPU"));
    m_deviceLabel->setBuddy(m_deviceBox);
    connect(m_deviceBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setDevice(m_deviceBox->itemData(i).toInt()); });
    m_summary = new QLabel(bar);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);
    layout->addWidget(m_deviceLabel);
    layout->addWidget(m_deviceBox);
    layout->addWidget(m_summary, 1);
    return bar;
}

QWidget *MemoryView::createLivePane(QWidget *parent)
{
    auto *pane = new QWidget(parent);
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *row = new QHBoxLayout;
    m_liveCaption = new QLabel(pane);
    m_filter = new QLineEdit(pane);
    m_filter->setPlaceholderText(tr("Filter by op or kernel"));
    m_filter->setClearButtonEnabled(true);
    row->addWidget(m_liveCaption, 1);
    row->addWidget(m_filter);
    layout->addLayout(row);
    m_model = new LiveAllocationModel(this);
    const SortableTable table = createSortableTable(m_model, LiveAllocationModel::SortRole, pane, LiveAllocationModel::MadeByColumn);
    m_proxy = table.proxy;
    m_table = table.view;
    m_proxy->setFilterKeyColumn(LiveAllocationModel::MadeByColumn);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    m_table->sortByColumn(LiveAllocationModel::SizeColumn, Qt::DescendingOrder);
    // Fixed widths: sizing to contents would measure every row of a large table.
    const QFontMetrics fm(m_table->font());
    m_table->setColumnWidth(LiveAllocationModel::SizeColumn, fm.horizontalAdvance(QStringLiteral("1023.5 MiB")) + 24);
    m_table->setColumnWidth(LiveAllocationModel::AddressColumn,
                            fm.horizontalAdvance(QStringLiteral("0x7fffffffffff")) + 40);
    m_table->setColumnWidth(LiveAllocationModel::MadeByColumn, fm.horizontalAdvance(QLatin1Char('m')) * 14);
    m_table->setToolTip(tr("Double-click or Enter: show the op or kernel that made the block on the timeline"));
    // activated: a double-click, or Enter for the keyboard.
    connect(m_table, &QTableView::activated, this, &MemoryView::activateRow);
    layout->addWidget(m_table);
    return pane;
}

const profiler::Run *MemoryView::run() const
{
    if (!m_document || !m_document->trace || m_document->trace->runs.empty())
        return nullptr;
    return &m_document->trace->runs.front();
}

std::vector<int> MemoryView::devices() const
{
    std::vector<int> result;
    if (!run() || !m_document->stats)
        return result;
    for (const profiler::MemoryStats &m : m_document->stats->memory)
        if (!m.timeline.empty())
            result.push_back(m.device);
    return result;
}

// Shares the document's ownership, so the chart keeps it alive.
std::shared_ptr<const profiler::MemoryStats> MemoryView::memoryOf(int device) const
{
    for (const profiler::MemoryStats &m : m_document->stats->memory)
        if (m.device == device)
            return {m_document->stats, &m};
    return nullptr;
}

void MemoryView::setDocument(std::shared_ptr<const Document> document)
{
    m_document = std::move(document);
    m_model->clear();
    m_chart->setMemory(nullptr, 1, -1);
    m_histogram->setHistogram({});
    m_plannedPeak = -1;
    if (!run())
        return showEmptyState(tr("This file holds no recorded run"));
    if (!m_document->stats)
        return showEmptyState(tr("The statistics of this run are not available"));
    const std::vector<int> all = devices();
    if (all.empty())
        return showEmptyState(tr("This run recorded no memory: profile with --profile-memory"));
    m_plannedPeak = profiler::plannedPeak(*run());
    fillDevices();
    // A GPU's memory is what limits a GPU run; the CPU's is the rest.
    const auto gpu = std::find_if(all.begin(), all.end(), [](int d) { return d >= 0; });
    m_device = gpu != all.end() ? *gpu : all.front();
    showEmptyState({});
    showDevice();
}

void MemoryView::fillDevices()
{
    const QSignalBlocker blocker(m_deviceBox);
    m_deviceBox->clear();
    for (int d : devices())
        m_deviceBox->addItem(deviceName(d), d);
    // One device needs no choice.
    m_deviceBox->setVisible(m_deviceBox->count() > 1);
    m_deviceLabel->setVisible(m_deviceBox->count() > 1);
}

void MemoryView::setDevice(int device)
{
    const std::vector<int> all = devices();
    if (isEmptyStateShown() || std::find(all.begin(), all.end(), device) == all.end())
        return;
    const bool changed = device != m_device;
    m_device = device;
    if (changed)
        showDevice();
}

void MemoryView::showDevice()
{
    {
        const QSignalBlocker blocker(m_deviceBox);
        m_deviceBox->setCurrentIndex(m_deviceBox->findData(m_device));
    }
    const std::shared_ptr<const profiler::MemoryStats> memory = memoryOf(m_device);
    m_chart->setMemory(memory, run()->summary.durationNs, m_plannedPeak);
    m_histogram->setHistogram(profiler::sizeHistogram(*run(), m_device));
    showSummary();
    // What was live at the peak is what one wants to see first.
    selectTime(memory->peakAllocatedTime);
}

void MemoryView::showSummary()
{
    const std::shared_ptr<const profiler::MemoryStats> m = memoryOf(m_device);
    QString text = tr("Peak allocated <b>%1</b> at %2 · peak reserved %3")
                       .arg(formatBytes(double(m->peakAllocated)), timeText(m->peakAllocatedTime),
                            formatBytes(double(m->peakReserved)));
    if (m_plannedPeak >= 0) {
        // The plan covers the graph's buffers only; what was live before the
        // run (parameters, inputs) is left out of the measured side too.
        text += tr(" · planned by the compiler <b>%1</b>, measured above the run's start %2")
                    .arg(formatBytes(double(m_plannedPeak)), formatBytes(double(m->peakAllocated - allocatedAtStart())));
    }
    text += QStringLiteral(" · ") + allocationCount(m_histogram->histogram().allocations);
    m_summary->setText(text);
    m_summary->setToolTip(tr("The planned peak is what the compiler's memory plan needs for the graph's buffers; "
                             "the measured peak above the run's start also holds its outputs and the allocator's "
                             "rounding, and the peak allocated also what was live before (parameters, inputs)"));
}

// What the device's allocator held when the run began: before its first event.
int64_t MemoryView::allocatedAtStart() const
{
    for (const profiler::Allocation &a : run()->allocations) {
        if (a.device == m_device)
            return a.allocatedAfter - a.bytes;
    }
    return 0;
}

QString MemoryView::summaryText() const
{
    return m_summary->text();
}

void MemoryView::selectTime(int64_t timeNs)
{
    if (isEmptyStateShown())
        return;
    m_chart->setCursorTime(timeNs);
    const int64_t t = m_chart->cursorTime();
    m_model->setAllocations(profiler::liveAllocationsAt(*m_document->trace, *run(), m_device, t), t);
    showLiveCaption();
}

void MemoryView::showLiveCaption()
{
    QString text = tr("Live at %1: %2, %3")
                       .arg(timeText(m_model->timeNs()), allocationCount(m_model->rowCount()),
                            formatBytes(double(m_model->totalBytes())));
    // The allocator's total also counts blocks from before the recording
    // (parameters, inputs), which no event names: say how much that is.
    const profiler::MemorySample *s = m_chart->sampleAt(m_model->timeNs());
    const int64_t unseen = s ? s->allocated - m_model->totalBytes() : 0;
    if (unseen > 0)
        text += tr(" (+ %1 allocated before recording started)").arg(formatBytes(double(unseen)));
    m_liveCaption->setText(text);
    m_liveCaption->setToolTip(tr("Double-click a row to show the op or kernel that made it on the timeline"));
}

void MemoryView::frameTime(qint64 timeNs)
{
    selectTime(timeNs);
    // A window of 1/50 of the run around the moment, at least 1 µs.
    const int64_t half = std::max<int64_t>(500, m_chart->endNs() / 100);
    emit timeRangeRequested(std::max<int64_t>(0, timeNs - half), timeNs + half);
}

void MemoryView::activateRow(const QModelIndex &proxyIndex)
{
    if (!proxyIndex.isValid())
        return;
    const profiler::EventId op(m_proxy->mapToSource(proxyIndex).data(LiveAllocationModel::EventIdRole).toUInt());
    if (op.valid())
        emit eventRequested(op.value);
}

void MemoryView::showEmptyState(const QString &why)
{
    m_emptyLabel->setText(why);
    m_emptyLabel->setVisible(!why.isEmpty());
    m_content->setVisible(why.isEmpty());
}

bool MemoryView::isEmptyStateShown() const
{
    return !m_emptyLabel->isHidden();
}

QString MemoryView::emptyStateText() const
{
    return isEmptyStateShown() ? m_emptyLabel->text() : QString();
}

QAbstractItemModel *MemoryView::liveModel() const
{
    return m_model;
}

QString MemoryView::selectionAsTsv() const
{
    return selectedRowsAsTsv(*m_table);
}

} // namespace fusescope
