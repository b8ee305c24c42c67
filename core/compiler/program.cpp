#include "core/compiler/program.h"

#include "core/compiler/executable.h"
#include "core/compiler/tracer.h"
#include "core/nn/module.h"

#include <map>
#include <memory>
#include <unordered_map>

namespace fusescope::compiler {

TensorList runBreak(const GraphBreak &b, const std::function<Tensor(const Source &)> &valueOf)
{
    Args args(b.args.size());
    for (size_t i = 0; i < args.size(); ++i) {
        const BreakArg &a = b.args[i];
        if (a.sources.empty() && !a.list) {
            args[i] = a.constant;
        } else if (!a.list) {
            args[i] = Value(valueOf(a.sources.front()));
        } else {
            TensorList list;
            for (const Source &s : a.sources)
                list.push_back(valueOf(s));
            args[i] = Value(std::move(list));
        }
    }
    TracerScope noTracer(nullptr);
    return callOp(b.op, std::move(args));
}

namespace {

class ProgramTracer final : public DispatchTracer
{
public:
    ProgramTracer(const TensorList &realInputs, const NamedTensors &parameters)
        : m_real(realInputs)
        , m_parameters(parameters)
    {
        startSegment();
    }

    void addInput(const CaptureInput &in, const Tensor &meta, int index)
    {
        Segment &s = m_segments.front();
        Node *n = s.graph->add(NodeKind::Placeholder, in.name, {}, {metaOf(meta)}, in.name);
        s.tracer->bind(meta, n->out());
        s.inputs.push_back({Source::Kind::Input, index, 0});
        m_origin[meta.implPtr().get()] = {Source{Source::Kind::Input, index, 0}, 0, n->out()};
        m_keep.push_back(meta);
    }

    void record(const OpDef &op, const Args &args, const TensorList &outputs) override
    {
        Segment &s = m_segments.back();
        s.tracer->record(op, args, outputs);
        for (const Tensor &t : outputs) {
            m_origin[t.implPtr().get()] = {Source{Source::Kind::Segment, current(), -1}, current(), s.tracer->refOf(t)};
            m_keep.push_back(t);
        }
    }

    TensorList breakGraph(const OpDef &op, const Args &args) override
    {
        GraphBreak b;
        b.op = op.name();
        b.reason = op.name() + ": its output shape depends on the input values";
        b.modulePath = nn::currentModulePath();
        Args real(args.size());
        for (size_t i = 0; i < args.size(); ++i) {
            b.args.push_back(breakArg(args[i]));
            real[i] = realArg(b.args.back());
        }
        TensorList outs;
        {
            TracerScope noTracer(nullptr);
            outs = callOp(op, real);
        }
        b.outputs = static_cast<int>(outs.size());
        const int index = static_cast<int>(m_breaks.size());
        m_breaks.push_back(std::move(b));
        m_breakValues.push_back(outs);
        startSegment();
        TensorList metas;
        for (size_t i = 0; i < outs.size(); ++i) {
            Tensor m = Tensor::empty(outs[i].sizes(), outs[i].dtype(), kMeta);
            m_origin[m.implPtr().get()] = {Source{Source::Kind::Break, index, static_cast<int>(i)}, -1, {}};
            m_keep.push_back(m);
            metas.push_back(m);
        }
        return metas;
    }

    CapturedProgram finish(const TensorList &results)
    {
        CapturedProgram p;
        for (const Tensor &t : results)
            p.outputs.push_back(sourceOf(t, -1));
        for (Segment &s : m_segments) {
            s.graph->add(NodeKind::Output, "output", {Arg::list(s.exports)}, {}, "output");
            s.graph->lint();
            p.segments.push_back(std::move(*s.graph));
            p.inputsOf.push_back(s.inputs);
        }
        p.breaks = std::move(m_breaks);
        return p;
    }

private:
    struct Segment {
        std::unique_ptr<Graph> graph;
        std::unique_ptr<GraphTracer> tracer;
        std::vector<Source> inputs;
        std::vector<NodeRef> exports;
        std::map<Source, NodeRef> imported;
    };
    struct Origin {
        Source source; // Segment sources carry output -1 until exported
        int segment = -1;
        NodeRef ref;
    };

    int current() const { return static_cast<int>(m_segments.size()) - 1; }

    void startSegment()
    {
        Segment s;
        s.graph = std::make_unique<Graph>();
        s.tracer = std::make_unique<GraphTracer>(*s.graph, m_parameters);
        const int index = static_cast<int>(m_segments.size());
        s.tracer->setForeignResolver([this, index](const Tensor &t) { return importInto(index, t); });
        m_segments.push_back(std::move(s));
    }

    // The source of a tensor as seen from outside segment `from` (-1: from
    // the function's end): values of a segment become its exports.
    Source sourceOf(const Tensor &t, int from)
    {
        auto it = m_origin.find(t.implPtr().get());
        if (it == m_origin.end())
            throw Error("capture: a tensor of shape " + shapeStr(t.sizes()) + " did not come from an op or an input");
        Origin &o = it->second;
        if (o.source.kind != Source::Kind::Segment || o.segment == from)
            return o.source;
        Segment &s = m_segments[static_cast<size_t>(o.segment)];
        auto e = std::find(s.exports.begin(), s.exports.end(), o.ref);
        if (e == s.exports.end())
            e = s.exports.insert(s.exports.end(), o.ref);
        return {Source::Kind::Segment, o.segment, static_cast<int>(e - s.exports.begin())};
    }

    std::optional<NodeRef> importInto(int segment, const Tensor &t)
    {
        if (!m_origin.count(t.implPtr().get()))
            return std::nullopt;
        const Source src = sourceOf(t, segment);
        Segment &s = m_segments[static_cast<size_t>(segment)];
        if (auto it = s.imported.find(src); it != s.imported.end())
            return it->second;
        const std::string name = "input_" + std::to_string(s.inputs.size());
        Node *n = s.graph->add(NodeKind::Placeholder, name, {}, {metaOf(t)}, name);
        // Placeholders lead the graph, whatever was captured before this import.
        const std::vector<Node *> nodes = s.graph->nodes();
        for (Node *first : nodes) {
            if (first->kind != NodeKind::Placeholder) {
                s.graph->moveBefore(n, first);
                break;
            }
        }
        s.inputs.push_back(src);
        s.imported[src] = n->out();
        return n->out();
    }

    BreakArg breakArg(const Value &v)
    {
        BreakArg a;
        if (v.isTensor() && v.toTensor().isMeta()) {
            a.sources = {sourceOf(v.toTensor(), -1)};
        } else if (v.isTensorList()) {
            a.list = true;
            for (const Tensor &t : v.toTensorList())
                a.sources.push_back(sourceOf(t, -1));
        } else {
            a.constant = v; // numbers, options and real tensors (parameters)
        }
        return a;
    }

    Value realArg(const BreakArg &a)
    {
        if (a.sources.empty() && !a.list)
            return a.constant;
        if (!a.list)
            return Value(realValue(a.sources.front()));
        TensorList list;
        for (const Source &s : a.sources)
            list.push_back(realValue(s));
        return Value(std::move(list));
    }

    // Runs what segment `src.index` has captured so far on real values.
    Tensor realValue(const Source &src)
    {
        if (src.kind == Source::Kind::Input)
            return m_real.at(static_cast<size_t>(src.index));
        if (src.kind == Source::Kind::Break)
            return m_breakValues.at(static_cast<size_t>(src.index)).at(static_cast<size_t>(src.output));
        Segment &s = m_segments[static_cast<size_t>(src.index)];
        Graph g = *s.graph;
        std::vector<NodeRef> outs;
        for (const NodeRef &r : s.exports)
            outs.push_back({g.findById(r.node->id), r.index});
        g.add(NodeKind::Output, "output", {Arg::list(outs)}, {}, "output");
        TensorList inputs;
        for (const Source &in : s.inputs)
            inputs.push_back(realValue(in));
        TracerScope noTracer(nullptr);
        return runGraph(g, inputs).at(static_cast<size_t>(src.output));
    }

    TensorList m_real;
    NamedTensors m_parameters;
    std::vector<Segment> m_segments;
    std::vector<GraphBreak> m_breaks;
    std::vector<TensorList> m_breakValues;
    std::unordered_map<const TensorImpl *, Origin> m_origin;
    std::vector<Tensor> m_keep; // no impl address is reused while capturing
};

} // namespace

CapturedProgram captureProgram(const TensorFn &fn, const std::vector<CaptureInput> &inputs,
                               const TensorList &realInputs, const NamedTensors &parameters)
{
    ProgramTracer tracer(realInputs, parameters);
    TensorList metaInputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const CaptureInput &in = inputs[i];
        const Shape strides = in.strides.empty() ? contiguousStrides(in.sizes) : in.strides;
        Tensor t = Tensor::emptyStrided(in.sizes, strides, in.dtype, kMeta);
        tracer.addInput(in, t, static_cast<int>(i));
        metaInputs.push_back(t);
    }
    TensorList results;
    {
        TracerScope scope(&tracer);
        results = fn(metaInputs);
    }
    return tracer.finish(results);
}

} // namespace fusescope::compiler
