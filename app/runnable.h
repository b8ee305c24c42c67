#pragma once
// What `run`, `profile` and `stages` execute: a zoo model or an ONNX file,
// as one function with its parameters and inputs, so every command treats
// both alike (eager, compiled, profiled, stages).

#include "core/compiler/compile.h"

#include <QString>

#include <memory>

namespace fusescope {

struct Runnable {
    QString name;                      // the zoo name or the file as given
    compiler::TensorFn fn;
    compiler::NamedTensors parameters; // get_attr names when compiled
    TensorList inputs;
    std::vector<std::string> outputNames; // "output_0" … for zoo models
    std::shared_ptr<const void> owner;    // keeps the model behind fn alive
};

// A zoo model by name or an .onnx file. Inputs come from `inputDir`
// (input_0.pb …, ONNX TensorProto files) when it is not empty, otherwise they
// are random with a fixed seed. Throws Error naming the model or file.
Runnable loadRunnable(const QString &model, const QString &inputDir = {});
bool isOnnxPath(const QString &model);
// Writes output_0.pb … into `dir` (created if missing). Throws Error.
void writeOutputs(const QString &dir, const Runnable &runnable, const TensorList &outputs);

} // namespace fusescope
