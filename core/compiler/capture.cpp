#include "core/compiler/capture.h"

#include "core/compiler/tracer.h"
#include "core/nn/module.h"
#include "core/zoo/zoo.h"

namespace fusescope::compiler {

Graph capture(const TensorFn &fn, const std::vector<CaptureInput> &inputs, const NamedTensors &parameters)
{
    Graph graph;
    GraphTracer tracer(graph, parameters);
    TensorList metaInputs;
    for (const CaptureInput &in : inputs) {
        const Shape strides = in.strides.empty() ? contiguousStrides(in.sizes) : in.strides;
        Tensor t = Tensor::emptyStrided(in.sizes, strides, in.dtype, kMeta);
        Node *n = graph.add(NodeKind::Placeholder, in.name, {}, {metaOf(t)}, in.name);
        tracer.bind(t, n->out());
        metaInputs.push_back(t);
    }
    TensorList results;
    {
        TracerScope scope(&tracer);
        results = fn(metaInputs);
    }
    std::vector<NodeRef> outs;
    for (const Tensor &t : results)
        outs.push_back(tracer.refOf(t));
    graph.add(NodeKind::Output, "output", {Arg::list(std::move(outs))}, {}, "output");
    graph.lint();
    return graph;
}

NamedTensors moduleTensors(const nn::Module &module)
{
    NamedTensors tensors = module.namedParameters();
    for (const auto &b : module.namedBuffers())
        tensors.push_back(b);
    return tensors;
}

Graph captureModule(nn::Module &module, const std::vector<CaptureInput> &inputs)
{
    return capture([&](const TensorList &in) { return TensorList{module(in)}; }, inputs, moduleTensors(module));
}

std::vector<CaptureInput> zooInputs(const std::string &model)
{
    std::vector<CaptureInput> out;
    for (const zoo::InputSpec &in : zoo::info(model).inputs)
        out.push_back({in.name, in.shape, {}, in.dtype});
    return out;
}

} // namespace fusescope::compiler
