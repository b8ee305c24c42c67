#pragma once
// Shared plumbing of the headless sub-commands: option parsing with the exit
// codes of shared/CLI.md, and JSON/text output helpers.

#include "app/cli.h"

#include <QCommandLineParser>
#include <QJsonDocument>
#include <QString>

#include <optional>

namespace fusescope {

class CommandLine
{
public:
    // usage: "MODEL [--compile] ..." (after "fusescope <name> ")
    CommandLine(const QString &name, const QString &usage, const QString &description);
    QCommandLineParser &parser() { return m_parser; }

    // Parses args; returns an exit code when the command must stop now
    // (--help: 0; a bad option or argument count: 2 with the reason on stderr).
    std::optional<int> parse(const QStringList &args, int minPositional, int maxPositional);

    // Reads an integer option >= minimum; on error prints and returns nullopt.
    std::optional<int> intOption(const QString &option, int fallback, int minimum);
    // The --device option: cpu runs; cuda refuses (no CUDA backend yet); anything
    // else is a usage error. Returns the exit code when the command must stop.
    std::optional<int> refuseDevice();

    int usageError(const QString &message) const;
    int badInput(const QString &message) const;

private:
    QString m_name;
    QString m_usage;
    QString m_description;
    QCommandLineParser m_parser;
};

// Writes a JSON document as the only thing on stdout.
void printJson(const QJsonDocument &doc);
void printLine(const QString &line);
// Writes text as is (it carries its own newlines).
void printText(const QString &text);

} // namespace fusescope
