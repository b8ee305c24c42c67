#pragma once
// The Memory view: one device's bytes allocated and reserved over the run,
// the measured peak beside the compiler's planned one, the allocations live
// at a chosen moment (largest first) and the allocation-size histogram.

#include "views/document.h"

#include <QWidget>

#include <map>
#include <memory>
#include <vector>

class QAbstractItemModel;
class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace fusescope {

class LiveAllocationModel;
class MemoryChart;
class SizeHistogramWidget;

class MemoryView : public QWidget
{
    Q_OBJECT
public:
    explicit MemoryView(QWidget *parent = nullptr);
    ~MemoryView() override;

    void setDocument(std::shared_ptr<const Document> document);
    void selectTime(int64_t timeNs); // as a click at that time
    void setDevice(int device); // -1 = CPU; ignored when the run did not allocate there
    int device() const { return m_device; }
    std::vector<int> devices() const;

    bool isEmptyStateShown() const;
    QString emptyStateText() const;
    QAbstractItemModel *liveModel() const;
    QTableView *liveTable() const { return m_table; }
    QSortFilterProxyModel *liveProxy() const { return m_proxy; }
    MemoryChart *chart() const { return m_chart; }
    SizeHistogramWidget *histogram() const { return m_histogram; }
    QComboBox *deviceSelector() const { return m_deviceBox; }
    QLineEdit *filterEdit() const { return m_filter; }
    QString summaryText() const;

    // The live table's selected rows as TSV, header line first; "" when none.
    QString selectionAsTsv() const;

signals:
    void eventRequested(quint32 eventId); // double-click on a live allocation
    void timeRangeRequested(qint64 startNs, qint64 endNs); // double-click or Enter in the chart

private:
    QWidget *createContent();
    QWidget *createTopBar(QWidget *parent);
    QWidget *createLivePane(QWidget *parent);
    void showEmptyState(const QString &why);
    void fillDevices();
    void showDevice();
    int64_t allocatedAtStart() const;
    void showSummary();
    void showLiveCaption();
    void activateRow(const QModelIndex &proxyIndex);
    void frameTime(qint64 timeNs);
    const profiler::Run *run() const;
    std::shared_ptr<const profiler::MemoryStats> memoryOf(int device) const;

    QLabel *m_emptyLabel = nullptr;
    QWidget *m_content = nullptr;
    QLabel *m_deviceLabel = nullptr;
    QComboBox *m_deviceBox = nullptr;
    QLabel *m_summary = nullptr;
    MemoryChart *m_chart = nullptr;
    QLabel *m_liveCaption = nullptr;
    QLineEdit *m_filter = nullptr;
    LiveAllocationModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QTableView *m_table = nullptr;
    SizeHistogramWidget *m_histogram = nullptr;

    std::shared_ptr<const Document> m_document;
    int m_device = -1;
    int64_t m_plannedPeak = -1;
};

} // namespace fusescope
