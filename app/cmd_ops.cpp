// `fusescope ops`: the op registry, as the compiler and runtime see it.
#include "app/cmdline.h"
#include "app/commands.h"

#include "core/ops/registry.h"

#include <QJsonArray>
#include <QJsonObject>

namespace fusescope {
namespace {

// Pointwise and reduction ops fuse into loops, views become index arithmetic,
// GEMMs and convolutions take a pointwise epilogue.
bool compilerFuses(const OpDef &op)
{
    return op.kind != OpKind::Composite && op.kind != OpKind::Opaque;
}

QStringList backends(const OpDef &op)
{
    QStringList list;
    if (op.cpu || op.view)
        list << QStringLiteral("cpu");
    else if (op.decompose)
        list << QStringLiteral("cpu (decomposed)");
    if (op.cudaKernel)
        list << QStringLiteral("cuda");
    return list;
}

QJsonObject opJson(const OpDef &op)
{
    return {{QStringLiteral("name"), QString::fromStdString(op.name())},
            {QStringLiteral("schema"), QString::fromStdString(op.schema.text)},
            {QStringLiteral("kind"), QString::fromUtf8(opKindName(op.kind))},
            {QStringLiteral("backends"), QJsonArray::fromStringList(backends(op))},
            {QStringLiteral("decomposes"), bool(op.decompose)},
            {QStringLiteral("fuses"), compilerFuses(op)},
            {QStringLiteral("custom"), op.custom}};
}

void printTable(const std::vector<const OpDef *> &ops)
{
    printLine(QStringLiteral("%1 %2 %3 %4 %5  %6")
                  .arg(QStringLiteral("NAME"), -30)
                  .arg(QStringLiteral("KIND"), -12)
                  .arg(QStringLiteral("BACKENDS"), -18)
                  .arg(QStringLiteral("DECOMPOSES"), -10)
                  .arg(QStringLiteral("FUSES"), -5)
                  .arg(QStringLiteral("SCHEMA")));
    for (const OpDef *op : ops) {
        printLine(QStringLiteral("%1 %2 %3 %4 %5  %6")
                      .arg(QString::fromStdString(op->name()), -30)
                      .arg(QString::fromUtf8(opKindName(op->kind)), -12)
                      .arg(backends(*op).join(QLatin1Char(',')), -18)
                      .arg(op->decompose ? QStringLiteral("yes") : QStringLiteral("no"), -10)
                      .arg(compilerFuses(*op) ? QStringLiteral("yes") : QStringLiteral("no"), -5)
                      .arg(QString::fromStdString(op->schema.text)));
    }
    printLine(QStringLiteral("%1 ops").arg(ops.size()));
}

} // namespace

int runOpsCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("ops"), QStringLiteral("[--json]"),
                    QStringLiteral("Lists the op registry: name, schema, kind, the backends that implement each op, "
                                   "whether it decomposes and whether the compiler fuses it."));
    cmd.parser().addOption({QStringLiteral("json"), QStringLiteral("One JSON document on stdout.")});
    if (auto exit = cmd.parse(args, 0, 0))
        return *exit;
    const auto ops = OpRegistry::instance().all();
    if (cmd.parser().isSet(QStringLiteral("json"))) {
        QJsonArray list;
        for (const OpDef *op : ops)
            list.append(opJson(*op));
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("ops"), list}}));
    } else {
        printTable(ops);
    }
    return ExitOk;
}

} // namespace fusescope
