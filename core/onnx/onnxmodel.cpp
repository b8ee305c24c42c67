#include "core/onnx/onnxmodel.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

namespace fusescope::onnx {
namespace {

namespace fs = std::filesystem;
using ::onnx::TensorProto;

// Protobuf refuses messages past INT_MAX bytes; bigger models keep their
// weights in external data files.
constexpr uint64_t kMaxProtoBytes = INT_MAX;
// Bounds a tensor's claimed geometry so that byte counts and the contiguous
// strides Tensor::empty computes cannot overflow int64.
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 62;
constexpr int64_t kMinIrVersion = 3; // the first with opset imports
constexpr int64_t kMaxIrVersion = 10;

// The ONNX element types Fusescope has a DType for; the others are reported
// as unsupported by name.
constexpr std::pair<DType, int> kElemTypes[] = {
    {DType::F32, TensorProto::FLOAT}, {DType::F16, TensorProto::FLOAT16}, {DType::BF16, TensorProto::BFLOAT16},
    {DType::F64, TensorProto::DOUBLE}, {DType::I32, TensorProto::INT32},  {DType::I64, TensorProto::INT64},
    {DType::Bool, TensorProto::BOOL},
};

std::optional<DType> dtypeOf(int elemType)
{
    for (const auto &[dtype, onnxType] : kElemTypes) {
        if (onnxType == elemType)
            return dtype;
    }
    return std::nullopt;
}

int elemTypeOf(DType dtype)
{
    const auto *it = std::find_if(std::begin(kElemTypes), std::end(kElemTypes),
                                  [dtype](const auto &entry) { return entry.first == dtype; });
    return it->second; // every DType has an entry
}

std::string elemTypeName(int elemType)
{
    const std::string &name = ::onnx::TensorProto_DataType_Name(elemType);
    return name.empty() ? "unknown (" + std::to_string(elemType) + ")" : name;
}

// ---- files -----------------------------------------------------------------

// The size of a regular file; `what` names it in the messages.
uint64_t regularFileSize(const fs::path &file, const std::string &what)
{
    std::error_code ec;
    const fs::file_status status = fs::status(file, ec);
    if (status.type() == fs::file_type::not_found)
        throw Error(what + " does not exist");
    if (ec)
        throw Error(what + " cannot be examined: " + ec.message());
    if (fs::is_directory(status))
        throw Error(what + " is a directory");
    if (!fs::is_regular_file(status))
        throw Error(what + " is not a regular file");
    return fs::file_size(file);
}

// Reads [offset, offset + length) of a file whose size was checked to hold it.
void readInto(const fs::path &file, uint64_t offset, uint64_t length, void *dst)
{
    std::ifstream in(file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(static_cast<char *>(dst), static_cast<std::streamsize>(length));
    if (!in || static_cast<uint64_t>(in.gcount()) != length)
        throw Error("cannot read " + std::to_string(length) + " bytes at offset " + std::to_string(offset) + " of '"
                    + file.string() + "'");
}

std::string readProtoFile(const std::string &path)
{
    const uint64_t size = regularFileSize(path, "the file");
    if (size == 0)
        throw Error("the file is empty");
    if (size > kMaxProtoBytes)
        throw Error("the file holds " + std::to_string(size)
                    + " bytes; protobuf messages are limited to 2 GiB (keep the weights in external data)");
    std::string bytes(size, '\0');
    readInto(path, 0, size, bytes.data());
    return bytes;
}

// The canonical folder of a file, which its external data must lie inside.
fs::path folderOf(const std::string &path)
{
    return fs::canonical(fs::absolute(path).parent_path());
}

// Runs a reading step and names the file in whatever it throws.
template <typename Fn>
auto namingFile(const std::string &path, Fn &&fn)
{
    try {
        return fn();
    } catch (const Error &e) {
        throw Error(path + ": " + e.what());
    } catch (const fs::filesystem_error &e) {
        throw Error(path + ": " + e.what());
    } catch (const std::bad_alloc &) {
        throw Error(path + ": out of memory while reading it");
    }
}

// ---- tensors ---------------------------------------------------------------

// A TensorProto's type and geometry, checked before any data is touched.
struct TensorSpec {
    std::string label; // "tensor 'w'", for messages
    Shape dims;
    DType dtype = DType::F32;
    uint64_t numel = 0;

    uint64_t bytes() const { return numel * itemSize(dtype); }
    Tensor allocate() const { return Tensor::empty(dims, dtype); }

    void checkBytes(uint64_t held) const
    {
        if (held != bytes())
            throw Error(label + " claims " + std::to_string(numel) + " elements but holds " + std::to_string(held)
                        + " bytes, not " + std::to_string(bytes()));
    }
    void checkCount(uint64_t held, const char *field) const
    {
        if (held != numel)
            throw Error(label + " claims " + std::to_string(numel) + " elements but holds " + std::to_string(held)
                        + " values in " + field);
    }
};

std::string tensorLabel(const std::string &name)
{
    return name.empty() ? "an unnamed tensor" : "tensor '" + name + "'";
}

// The element count, refusing negative dims and geometries whose byte count
// (zero dims aside) would overflow.
uint64_t checkedNumel(const Shape &dims, DType dtype, const std::string &label)
{
    uint64_t span = itemSize(dtype);
    bool empty = false;
    for (int64_t d : dims) {
        if (d < 0)
            throw Error(label + " has a negative dimension: " + shapeStr(dims));
        empty = empty || d == 0;
        if (d > 1 && span > kMaxTensorBytes / static_cast<uint64_t>(d))
            throw Error(label + " has an impossibly large shape " + shapeStr(dims));
        span *= std::max<uint64_t>(static_cast<uint64_t>(d), 1);
    }
    return empty ? 0 : span / itemSize(dtype);
}

TensorSpec tensorSpec(const TensorProto &proto, const std::string &label)
{
    const std::optional<DType> dtype = dtypeOf(proto.data_type());
    if (!dtype)
        throw Error(label + " has element type " + elemTypeName(proto.data_type())
                    + ", which Fusescope does not support");
    if (proto.has_segment())
        throw Error(label + " is segmented, which Fusescope does not support");
    TensorSpec spec{label, Shape(proto.dims().begin(), proto.dims().end()), *dtype};
    spec.numel = checkedNumel(spec.dims, spec.dtype, label);
    return spec;
}

// Raw bool bytes other than 0 and 1 are not valid C++ bools.
void canonicalizeBools(Tensor &t)
{
    if (t.dtype() != DType::Bool)
        return;
    auto *bytes = static_cast<uint8_t *>(t.rawData());
    for (int64_t i = 0; i < t.numel(); ++i)
        bytes[i] = bytes[i] != 0;
}

Tensor rawTensor(const std::string &raw, const TensorSpec &spec)
{
    spec.checkBytes(raw.size());
    Tensor t = spec.allocate();
    if (!raw.empty())
        std::memcpy(t.rawData(), raw.data(), raw.size());
    canonicalizeBools(t);
    return t;
}

template <typename Out, typename Field>
Tensor fromValues(const Field &values, const TensorSpec &spec, const char *field)
{
    spec.checkCount(static_cast<uint64_t>(values.size()), field);
    Tensor t = spec.allocate();
    std::transform(values.begin(), values.end(), static_cast<Out *>(t.rawData()),
                   [](auto v) { return static_cast<Out>(v); });
    return t;
}

// The typed repeated fields: int32_data also carries bool, and f16/bf16 as
// bit patterns in the low 16 bits.
Tensor typedTensor(const TensorProto &proto, const TensorSpec &spec)
{
    switch (spec.dtype) {
    case DType::F32: return fromValues<float>(proto.float_data(), spec, "float_data");
    case DType::F64: return fromValues<double>(proto.double_data(), spec, "double_data");
    case DType::I64: return fromValues<int64_t>(proto.int64_data(), spec, "int64_data");
    case DType::I32: return fromValues<int32_t>(proto.int32_data(), spec, "int32_data");
    case DType::Bool: return fromValues<bool>(proto.int32_data(), spec, "int32_data");
    case DType::F16:
    case DType::BF16: break;
    }
    return fromValues<uint16_t>(proto.int32_data(), spec, "int32_data");
}

// ---- external data ---------------------------------------------------------

struct ExternalData {
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length; // absent: to the end of the file
};

uint64_t parseCount(const std::string &text, const std::string &what)
{
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        throw Error(what + " '" + text + "' is not a byte count");
    return value;
}

ExternalData externalData(const TensorProto &proto, const std::string &label)
{
    ExternalData ext;
    for (const auto &entry : proto.external_data()) {
        if (entry.key() == "location")
            ext.location = entry.value();
        else if (entry.key() == "offset")
            ext.offset = parseCount(entry.value(), label + ": external data offset");
        else if (entry.key() == "length")
            ext.length = parseCount(entry.value(), label + ": external data length");
    }
    return ext;
}

// The external file, which must resolve (symlinks included) inside `dir`, so
// a model cannot make Fusescope read files elsewhere on the machine.
fs::path resolveInside(const fs::path &dir, const std::string &location, const std::string &label)
{
    const fs::path relative(location);
    if (location.empty() || relative.has_root_path())
        throw Error(label + ": external data location '" + location
                    + "' must be a relative path inside the model's folder");
    const fs::path file = fs::weakly_canonical(dir / relative);
    if (std::mismatch(dir.begin(), dir.end(), file.begin(), file.end()).first != dir.end())
        throw Error(label + ": external data location '" + location + "' leads outside the model's folder "
                    + dir.string());
    return file;
}

uint64_t checkedLength(const ExternalData &ext, uint64_t fileSize, const std::string &label)
{
    const std::string beyond =
        " lies beyond the end of '" + ext.location + "' (" + std::to_string(fileSize) + " bytes)";
    if (ext.offset > fileSize)
        throw Error(label + ": external data offset " + std::to_string(ext.offset) + beyond);
    const uint64_t length = ext.length.value_or(fileSize - ext.offset);
    if (length > fileSize - ext.offset)
        throw Error(label + ": external data (offset " + std::to_string(ext.offset) + ", length "
                    + std::to_string(length) + ")" + beyond);
    return length;
}

Tensor externalTensor(const TensorProto &proto, const TensorSpec &spec, const fs::path &dir)
{
    const ExternalData ext = externalData(proto, spec.label);
    const fs::path file = resolveInside(dir, ext.location, spec.label);
    const uint64_t fileSize = regularFileSize(file, spec.label + ": external data file '" + ext.location + "'");
    const uint64_t length = checkedLength(ext, fileSize, spec.label);
    spec.checkBytes(length);
    Tensor t = spec.allocate();
    if (length > 0)
        readInto(file, ext.offset, length, t.rawData());
    canonicalizeBools(t);
    return t;
}

Tensor readTensor(const TensorProto &proto, const fs::path &dir, const std::string &label)
{
    const TensorSpec spec = tensorSpec(proto, label);
    if (proto.data_location() == TensorProto::EXTERNAL)
        return externalTensor(proto, spec, dir);
    if (proto.has_raw_data())
        return rawTensor(proto.raw_data(), spec);
    return typedTensor(proto, spec);
}

// ---- graph -----------------------------------------------------------------

std::string nonTensorKind(const ::onnx::TypeProto &type)
{
    switch (type.value_case()) {
    case ::onnx::TypeProto::kSequenceType: return "sequence";
    case ::onnx::TypeProto::kMapType: return "map";
    case ::onnx::TypeProto::kOptionalType: return "optional";
    case ::onnx::TypeProto::kSparseTensorType: return "sparse tensor";
    default: return "non-tensor type";
    }
}

void readShape(const ::onnx::TensorShapeProto &shape, OnnxValueInfo &info)
{
    info.hasShape = true;
    for (const auto &dim : shape.dim()) {
        const bool fixed = dim.has_dim_value() && dim.dim_value() >= 0;
        info.dims.push_back(fixed ? dim.dim_value() : -1);
        info.dimNames.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    }
}

// A value without any type reads as a tensor of UNDEFINED element type.
OnnxValueInfo readValueInfo(const ::onnx::ValueInfoProto &value)
{
    OnnxValueInfo info;
    info.name = value.name();
    const ::onnx::TypeProto &type = value.type();
    const auto kind = type.value_case();
    if (kind != ::onnx::TypeProto::kTensorType && kind != ::onnx::TypeProto::VALUE_NOT_SET) {
        info.tensor = false;
        info.dtypeSupported = false;
        info.dtypeName = nonTensorKind(type);
        return info;
    }
    const std::optional<DType> dtype = dtypeOf(type.tensor_type().elem_type());
    info.dtype = dtype.value_or(DType::F32);
    info.dtypeSupported = dtype.has_value();
    info.dtypeName = elemTypeName(type.tensor_type().elem_type());
    if (type.tensor_type().has_shape())
        readShape(type.tensor_type().shape(), info);
    return info;
}

OnnxAttribute::Kind attributeKind(::onnx::AttributeProto::AttributeType type)
{
    using A = ::onnx::AttributeProto;
    using K = OnnxAttribute::Kind;
    switch (type) {
    case A::FLOAT: return K::Float;
    case A::INT: return K::Int;
    case A::STRING: return K::String;
    case A::TENSOR: return K::Tensor;
    case A::FLOATS: return K::Floats;
    case A::INTS: return K::Ints;
    case A::STRINGS: return K::Strings;
    case A::GRAPH:
    case A::GRAPHS: return K::Graph;
    default: return K::Other;
    }
}

OnnxAttribute readAttribute(const ::onnx::AttributeProto &proto, const fs::path &dir, const OnnxNode &node)
{
    OnnxAttribute a;
    a.kind = attributeKind(proto.type());
    a.f = proto.f();
    a.i = proto.i();
    a.s = proto.s();
    a.floats.assign(proto.floats().begin(), proto.floats().end());
    a.ints.assign(proto.ints().begin(), proto.ints().end());
    a.strings.assign(proto.strings().begin(), proto.strings().end());
    if (a.kind == OnnxAttribute::Kind::Tensor)
        a.t = readTensor(proto.t(), dir, "attribute '" + proto.name() + "' of '" + node.label() + "'");
    return a;
}

OnnxNode readNode(const ::onnx::NodeProto &proto, size_t index, const fs::path &dir)
{
    OnnxNode node;
    node.name = proto.name();
    node.opType = proto.op_type();
    node.domain = proto.domain();
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    node.index = index;
    for (const auto &attribute : proto.attribute())
        node.attributes[attribute.name()] = readAttribute(attribute, dir, node);
    return node;
}

void readInitializers(const ::onnx::GraphProto &graph, const fs::path &dir, OnnxModel &model)
{
    if (graph.sparse_initializer_size() > 0)
        throw Error("the graph has sparse initializers, which Fusescope does not support");
    for (const TensorProto &proto : graph.initializer())
        model.initializers.emplace_back(proto.name(), readTensor(proto, dir, tensorLabel(proto.name())));
}

// Models exported before IR version 4 list the initializers among the
// inputs too; those are parameters, not inputs.
void readInputs(const ::onnx::GraphProto &graph, OnnxModel &model)
{
    std::set<std::string> initializers;
    for (const TensorProto &proto : graph.initializer())
        initializers.insert(proto.name());
    for (const auto &input : graph.input()) {
        if (!initializers.count(input.name()))
            model.inputs.push_back(readValueInfo(input));
    }
}

void readGraph(const ::onnx::GraphProto &graph, const fs::path &dir, OnnxModel &model)
{
    readInitializers(graph, dir, model);
    readInputs(graph, model);
    for (const auto &output : graph.output())
        model.outputs.push_back(readValueInfo(output));
    for (int i = 0; i < graph.node_size(); ++i)
        model.nodes.push_back(readNode(graph.node(i), static_cast<size_t>(i), dir));
}

// ---- model -----------------------------------------------------------------

::onnx::ModelProto parseModel(const std::string &bytes)
{
    ::onnx::ModelProto proto;
    // Exporters write ir_version (field 1, varint: tag 0x08) first, so a
    // file that starts so but does not parse was most likely cut short.
    if (!proto.ParseFromString(bytes))
        throw Error(bytes[0] == 0x08 ? "the file is truncated or corrupt: protobuf cannot parse it"
                                     : "the file is not an ONNX model: protobuf cannot parse it");
    if (!proto.has_graph())
        throw Error("the file is not an ONNX model: it has no graph");
    return proto;
}

void checkIrVersion(int64_t version)
{
    if (version < kMinIrVersion || version > kMaxIrVersion)
        throw Error("IR version " + std::to_string(version) + " is " + (version > kMaxIrVersion ? "newer" : "older")
                    + " than Fusescope reads (" + std::to_string(kMinIrVersion) + " to "
                    + std::to_string(kMaxIrVersion) + ")");
}

int64_t defaultOpset(const ::onnx::ModelProto &proto)
{
    for (const auto &opset : proto.opset_import()) {
        if (opset.domain().empty() || opset.domain() == "ai.onnx")
            return opset.version();
    }
    throw Error("the model imports no opset of the default domain ('' or 'ai.onnx')");
}

std::string producerOf(const ::onnx::ModelProto &proto)
{
    if (proto.producer_version().empty())
        return proto.producer_name();
    return proto.producer_name() + " " + proto.producer_version();
}

OnnxModel readModel(const std::string &path)
{
    const ::onnx::ModelProto proto = parseModel(readProtoFile(path));
    checkIrVersion(proto.ir_version());
    OnnxModel model;
    model.path = path;
    model.irVersion = proto.ir_version();
    model.opset = defaultOpset(proto);
    model.producer = producerOf(proto);
    readGraph(proto.graph(), folderOf(path), model);
    return model;
}

NamedTensor readNamedTensor(const std::string &path)
{
    TensorProto proto;
    if (!proto.ParseFromString(readProtoFile(path)))
        throw Error("the file is not a TensorProto: protobuf cannot parse it (truncated or corrupt)");
    return {proto.name(), readTensor(proto, folderOf(path), tensorLabel(proto.name()))};
}

} // namespace

std::string OnnxNode::label() const
{
    return name.empty() ? "node #" + std::to_string(index) : name;
}

OnnxModel loadOnnxModel(const std::string &path)
{
    return namingFile(path, [&] { return readModel(path); });
}

NamedTensor readTensorFile(const std::string &path)
{
    return namingFile(path, [&] { return readNamedTensor(path); });
}

void writeTensorFile(const std::string &path, const std::string &name, const Tensor &tensor)
{
    if (!tensor.defined() || tensor.device().type != DeviceType::CPU)
        throw Error(path + ": writeTensorFile needs a CPU tensor with data");
    const Tensor dense = tensor.contiguous();
    TensorProto proto;
    proto.set_name(name);
    proto.set_data_type(elemTypeOf(dense.dtype()));
    for (int64_t d : dense.sizes())
        proto.add_dims(d);
    proto.set_raw_data(dense.nbytes() ? static_cast<const char *>(dense.rawData()) : "", dense.nbytes());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out || !proto.SerializeToOstream(&out) || !out.flush())
        throw Error(path + ": cannot write the tensor file");
}

} // namespace fusescope::onnx
