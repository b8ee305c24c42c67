#include "app/runnable.h"

#include "core/zoo/zoo.h"
#include "fusescope_config.h"

#if FUSESCOPE_HAVE_ONNX
#include "core/onnx/onnxprogram.h"
#endif

#include <QDir>
#include <QFileInfo>

namespace fusescope {

namespace {

#if !FUSESCOPE_HAVE_ONNX
[[noreturn]] void noOnnx(const QString &what)
{
    throw Error(what.toStdString() + ": this build has no ONNX support (configure with libonnx-dev and protobuf)");
}
#endif

#if FUSESCOPE_HAVE_ONNX
// input_0.pb, input_1.pb … as many as the folder holds, in order.
TensorList readInputDir(const QString &dir)
{
    if (!QFileInfo(dir).isDir())
        throw Error(dir.toStdString() + ": no such folder");
    TensorList inputs;
    for (int i = 0;; ++i) {
        const QString file = QDir(dir).filePath(QStringLiteral("input_%1.pb").arg(i));
        if (!QFileInfo::exists(file))
            break;
        inputs.push_back(onnx::readTensorFile(file.toStdString()).tensor);
    }
    if (inputs.empty())
        throw Error(dir.toStdString() + ": holds no input_0.pb");
    return inputs;
}

Runnable onnxRunnable(const QString &path, const QString &inputDir)
{
    auto model = std::make_shared<onnx::OnnxModel>(onnx::loadOnnxModel(path.toStdString()));
    onnx::OnnxProgram program = onnx::makeProgram(*model);
    TensorList inputs = inputDir.isEmpty() ? onnx::randomInputs(*model, 0) : readInputDir(inputDir);
    onnx::checkInputs(*model, inputs); // its message names the file
    return {path, program.fn, program.parameters, std::move(inputs), program.outputNames, model};
}
#endif

Runnable zooRunnable(const QString &name, const QString &inputDir)
{
    zoo::Instance instance = zoo::create(name.toStdString(), 0);
    std::shared_ptr<nn::Module> module = instance.model;
    Runnable r{name, [module](const TensorList &in) { return TensorList{(*module)(in)}; },
               compiler::moduleTensors(*module), std::move(instance.inputs), {"output_0"}, module};
    if (!inputDir.isEmpty()) {
#if FUSESCOPE_HAVE_ONNX
        r.inputs = readInputDir(inputDir);
#else
        noOnnx(inputDir);
#endif
    }
    return r;
}

} // namespace

bool isOnnxPath(const QString &model)
{
    return model.endsWith(QLatin1String(".onnx"), Qt::CaseInsensitive);
}

Runnable loadRunnable(const QString &model, const QString &inputDir)
{
    if (!isOnnxPath(model))
        return zooRunnable(model, inputDir);
#if FUSESCOPE_HAVE_ONNX
    return onnxRunnable(model, inputDir);
#else
    noOnnx(model);
#endif
}

void writeOutputs(const QString &dir, const Runnable &runnable, const TensorList &outputs)
{
#if FUSESCOPE_HAVE_ONNX
    if (!QDir().mkpath(dir))
        throw Error(dir.toStdString() + ": cannot create the folder");
    for (size_t i = 0; i < outputs.size(); ++i) {
        const std::string name = i < runnable.outputNames.size() ? runnable.outputNames[i] : "output_" + std::to_string(i);
        const QString file = QDir(dir).filePath(QStringLiteral("output_%1.pb").arg(i));
        onnx::writeTensorFile(file.toStdString(), name, outputs[i].contiguous());
    }
#else
    (void)runnable;
    (void)outputs;
    noOnnx(dir);
#endif
}

} // namespace fusescope
