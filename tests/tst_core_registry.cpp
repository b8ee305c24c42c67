// The op registry: schema parsing, argument binding, custom ops registered at
// run time, observers and the capture tracer.
#include "optest.h"

#include "core/ops/registry.h"
#include "core/runtime/observer.h"

#include <mutex>

using namespace fusescope;
using namespace fusescope::test;

namespace {

struct RecordingObserver : Observer {
    std::vector<std::string> events;
    std::vector<OpCost> costs;
    std::vector<AllocationEvent> allocations;
    void opBegin(const OpEvent &e) override { events.push_back("begin " + e.op->name()); }
    void opEnd(const OpEvent &e) override
    {
        events.push_back("end " + e.op->name());
        costs.push_back(e.cost);
    }
    void allocation(const AllocationEvent &e) override { allocations.push_back(e); }
};

struct RecordingTracer : DispatchTracer {
    std::vector<std::string> calls;
    void record(const OpDef &op, const Args &args, const TensorList &outputs) override
    {
        std::string line = op.name() + "(";
        for (size_t i = 0; i < args.size(); ++i)
            line += (i ? ", " : "") + args[i].repr();
        line += ") -> " + std::to_string(outputs.size());
        calls.push_back(line);
    }
};

// y = x * scale + 1, registered the way an application would.
void registerScaleShift()
{
    if (OpRegistry::instance().find("myapp.scale_shift"))
        return;
    OpDef def;
    def.kind = OpKind::Pointwise;
    def.custom = true;
    def.shape = [](const Args &a) {
        return std::vector<TensorSpec>{{a[0].toTensor().sizes(), a[0].toTensor().dtype()}};
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) {
        const Tensor x = a[0].toTensor().contiguous().to(DType::F32);
        const double scale = a[1].toDouble();
        float *o = outs[0].data<float>();
        const float *in = x.data<float>();
        for (int64_t i = 0; i < x.numel(); ++i)
            o[i] = in[i] * static_cast<float>(scale) + 1.0f;
    };
    def.decompose = [](const Args &a) { return TensorList{ops::add(ops::mul(a[0], a[1]), 1.0)}; };
    def.cost = [](const Args &, std::span<const Tensor> outs) {
        return OpCost{2.0 * double(outs[0].numel()), double(outs[0].nbytes()), double(outs[0].nbytes())};
    };
    OpRegistry::instance().add("myapp.scale_shift(Tensor self, float scale=2.0) -> Tensor", std::move(def));
}

} // namespace

class TestRegistry : public QObject
{
    Q_OBJECT
private slots:
    void schemaParses()
    {
        const Schema s = Schema::parse(
            "aten.x(Tensor self, Tensor? w=None, int[] dims=[0, 1], *, float eps=1e-5, str mode='a', bool k=False, "
            "ScalarType? dtype=None) -> (Tensor, Tensor)");
        QCOMPARE(s.name, std::string("aten.x"));
        QCOMPARE(int(s.args.size()), 7);
        QVERIFY(s.args[1].optional && s.args[1].defaultValue.isNone());
        QCOMPARE(s.args[2].defaultValue.toIntList(), (IntList{0, 1}));
        QVERIFY(s.args[3].kwargOnly);
        QCOMPARE(s.args[3].defaultValue.toDouble(), 1e-5);
        QCOMPARE(s.args[4].defaultValue.toStringRef(), std::string("a"));
        QCOMPARE(s.args[5].defaultValue.toBool(), false);
        QCOMPARE(s.numTensorReturns(), 2);
        QCOMPARE(s.indexOf("eps"), 3);
    }

    void malformedSchemasAreRefused_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("why");
        QTest::newRow("no parens") << "aten.x -> Tensor" << "expected 'name(args) -> returns'";
        QTest::newRow("bad type") << "aten.x(Tensr self) -> Tensor" << "unknown type 'Tensr'";
        QTest::newRow("no name") << "aten.x(Tensor) -> Tensor" << "needs a type and a name";
        QTest::newRow("bad return") << "aten.x(Tensor self) -> int" << "ops return Tensor or Tensor[]";
        QTest::newRow("bare int list default") << "aten.x(Tensor self, int[] p=0) -> Tensor"
                                               << "an int[] default must be a list";
    }
    void malformedSchemasAreRefused()
    {
        QFETCH(QString, text);
        QFETCH(QString, why);
        try {
            Schema::parse(text.toStdString());
            QFAIL("no error");
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(why), e.what());
        }
    }

    void everyBuiltinOpIsComplete()
    {
        const auto ops = OpRegistry::instance().all();
        QVERIFY(ops.size() > 60);
        for (const OpDef *op : ops) {
            QVERIFY2(op->view || op->shape, op->name().c_str());
            QVERIFY2(op->view || op->cpu || op->decompose, op->name().c_str());
            if (op->kind == OpKind::Pointwise)
                QVERIFY2(!op->scalarFn.empty(), op->name().c_str());
        }
    }

    void duplicateRegistrationIsRefused()
    {
        OpDef def;
        def.shape = [](const Args &) { return std::vector<TensorSpec>{}; };
        def.cpu = [](const Args &, std::span<Tensor>) {};
        FS_EXPECT_ERROR(OpRegistry::instance().add("aten.add(Tensor self) -> Tensor", def),
                        "aten.add: an op of this name is already registered");
        OpDef incomplete;
        FS_EXPECT_ERROR(OpRegistry::instance().add("myapp.nothing(Tensor self) -> Tensor", incomplete),
                        "needs a shape rule");
        FS_EXPECT_ERROR(OpRegistry::instance().get("aten.nonexistent"), "aten.nonexistent: no such op");
    }

    void argumentBinding()
    {
        FS_EXPECT_ERROR(callOp("aten.add", {ones({1}), ones({1}), 1, 2}), "aten.add: takes at most 3 arguments, got 4");
        FS_EXPECT_ERROR(callOp("aten.gelu", {ones({1}), 3}), "aten.gelu: argument 'approximate' expects str");
        FS_EXPECT_ERROR(callOp("aten.leaky_relu", {ones({1}), "x"}),
                        "aten.leaky_relu: argument 'negative_slope' expects Scalar");
        // An int where int[] is expected becomes a one-element list.
        QCOMPARE(callOp1("aten.squeeze", {ones({1, 3}), int64_t(0)}).sizes(), Shape{3});
    }

    void customOpRunsEagerlyAndDecomposes()
    {
        registerScaleShift();
        const Tensor x = fromVector({1, 2, 3}, {3});
        FS_COMPARE_VALUES(callOp1("myapp.scale_shift", {x}), Shape{3}, (std::vector<double>{3, 5, 7}), 0, 0);
        FS_COMPARE_VALUES(callOp1("myapp.scale_shift", {x, 0.5}), Shape{3}, (std::vector<double>{1.5, 2, 2.5}), 0, 0);
        const OpDef &op = OpRegistry::instance().get("myapp.scale_shift");
        QVERIFY(op.custom);
        const TensorList viaDecomposition = op.decompose({x, 0.5});
        FS_COMPARE_VALUES(viaDecomposition[0], Shape{3}, (std::vector<double>{1.5, 2, 2.5}), 0, 0);
        // Meta tensors only run the shape rule.
        QCOMPARE(callOp1("myapp.scale_shift", {Tensor::empty({4, 5}, DType::F32, kMeta)}).sizes(), (Shape{4, 5}));
    }

    void tracerRecordsOutermostCalls()
    {
        registerScaleShift();
        RecordingTracer tracer;
        DispatchTracer *previous = setDispatchTracer(&tracer);
        const Tensor m = Tensor::empty({2, 3}, DType::F32, kMeta);
        const Tensor y = ops::relu(callOp1("myapp.scale_shift", {m.t()}));
        setDispatchTracer(previous);
        QCOMPARE(y.sizes(), (Shape{3, 2}));
        QCOMPARE(int(tracer.calls.size()), 3);
        QCOMPARE(tracer.calls[0], std::string("aten.transpose(Tensor[2,3]:f32, 0, 1) -> 1"));
        QCOMPARE(tracer.calls[1], std::string("myapp.scale_shift(Tensor[3,2]:f32, 2) -> 1"));
        QCOMPARE(tracer.calls[2], std::string("aten.relu(Tensor[3,2]:f32) -> 1"));
    }

    void observersSeeOpsCostsAndAllocations()
    {
        RecordingObserver obs;
        observers::add(&obs);
        QVERIFY(observers::active());
        const Tensor a = ones({256});
        const Tensor y = ops::mul(a, 2.0);
        observers::remove(&obs);
        QVERIFY(!observers::active());
        const std::vector<std::string> expected{"begin aten.full", "end aten.full", "begin aten.mul", "end aten.mul"};
        QCOMPARE(obs.events, expected);
        QCOMPARE(obs.costs[1].bytesWritten, 256.0 * 4);
        QCOMPARE(obs.costs[1].bytesRead, 256.0 * 4);
        QCOMPARE(obs.costs[1].flops, 256.0);
        // Both outputs and the temporaries (the wrapped scalars, freed again).
        int64_t net = 0;
        int positives = 0;
        for (const AllocationEvent &e : obs.allocations) {
            QVERIFY(e.bytes != 0 && e.address != nullptr && e.reservedAfter >= e.allocatedAfter);
            net += e.bytes;
            positives += e.bytes > 0;
        }
        QVERIFY(positives >= 2);
        QCOMPARE(net, int64_t(2 * 1024)); // what is still alive: a and y
        ops::mul(a, 3.0); // not observed any more
        QCOMPARE(int(obs.events.size()), 4);
    }
};

QTEST_GUILESS_MAIN(TestRegistry)
#include "tst_core_registry.moc"
