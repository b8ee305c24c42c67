#pragma once

#include <QWidget>

class QPushButton;

namespace fusescope {

// What the main window shows while no document is open: says what can be
// done instead of showing empty panes that look broken.
class EmptyStateWidget : public QWidget
{
    Q_OBJECT
public:
    explicit EmptyStateWidget(QWidget *parent = nullptr);

    // The demo button stays disabled (with a tooltip saying why) until the
    // app wires a working demo to it.
    void setDemoAvailable(bool available, const QString &reason = {});
    QString message() const;

signals:
    void openRequested();
    void demoRequested();

private:
    QString m_message;
    QPushButton *m_openButton = nullptr;
    QPushButton *m_demoButton = nullptr;
};

} // namespace fusescope
