#include "core/tensor/tensor.h"

#include "core/ops/functional.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace fusescope {

std::string shapeStr(const Shape &shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ",";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

int64_t numelOf(const Shape &shape)
{
    int64_t n = 1;
    for (int64_t s : shape)
        n *= s;
    return n;
}

Shape contiguousStrides(const Shape &sizes)
{
    Shape strides(sizes.size());
    int64_t stride = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= std::max<int64_t>(sizes[i], 1);
    }
    return strides;
}

bool computeContiguous(const Shape &sizes, const Shape &strides)
{
    int64_t expected = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        if (sizes[i] == 1)
            continue;
        if (sizes[i] == 0)
            return true;
        if (strides[i] != expected)
            return false;
        expected *= sizes[i];
    }
    return true;
}

int64_t wrapDim(int64_t dim, int64_t rank, const char *op)
{
    const int64_t r = std::max<int64_t>(rank, 1); // a 0-d tensor accepts dim 0 and -1
    if (dim < -r || dim >= r)
        throw Error(std::string(op) + ": dimension " + std::to_string(dim) + " is out of range for a tensor of rank "
                    + std::to_string(rank));
    return dim < 0 ? dim + r : dim;
}

// --- storage -------------------------------------------------------------------

StorageImpl::StorageImpl(size_t bytes, Allocator *allocator)
    : m_bytes(bytes)
    , m_device(allocator->device())
    , m_allocator(allocator)
{
    m_data = allocator->allocate(bytes);
}

StorageImpl::StorageImpl(void *external, size_t bytes, Device device)
    : m_data(external)
    , m_bytes(bytes)
    , m_device(device)
{
}

StorageImpl::~StorageImpl()
{
    if (m_allocator)
        m_allocator->deallocate(m_data, m_bytes);
}

// --- tensor --------------------------------------------------------------------

Tensor::Tensor(std::shared_ptr<TensorImpl> impl)
    : m_impl(std::move(impl))
{
}

Tensor Tensor::emptyStrided(const Shape &sizes, const Shape &strides, DType dtype, Device device)
{
    for (int64_t s : sizes) {
        if (s < 0)
            throw Error("empty: negative size in shape " + shapeStr(sizes));
    }
    auto impl = std::make_shared<TensorImpl>();
    impl->sizes = sizes;
    impl->strides = strides;
    impl->dtype = dtype;
    impl->device = device;
    impl->numel = numelOf(sizes);
    impl->contiguous = computeContiguous(sizes, strides);
    if (device.type == DeviceType::CPU) {
        int64_t extent = impl->numel ? 1 : 0;
        for (size_t i = 0; i < sizes.size() && impl->numel; ++i)
            extent += (sizes[i] - 1) * strides[i];
        impl->storage = std::make_shared<StorageImpl>(static_cast<size_t>(extent) * fusescope::itemSize(dtype),
                                                      &hostAllocator());
    } else if (device.type == DeviceType::Meta) {
        // A data-less storage still gives views an identity to share, so the
        // compiler's capture can tell an alias from a copy.
        impl->storage = std::make_shared<StorageImpl>(nullptr, 0, device);
    } else if (device.type == DeviceType::CUDA) {
        throw Error("empty: the CUDA device is not available in this build");
    }
    return Tensor(std::move(impl));
}

Tensor Tensor::empty(const Shape &sizes, DType dtype, Device device)
{
    return emptyStrided(sizes, contiguousStrides(sizes), dtype, device);
}

Tensor Tensor::alias(const Shape &sizes, const Shape &strides, int64_t offset) const
{
    auto impl = std::make_shared<TensorImpl>(*m_impl);
    impl->sizes = sizes;
    impl->strides = strides;
    impl->offset = offset;
    impl->numel = numelOf(sizes);
    impl->contiguous = computeContiguous(sizes, strides);
    impl->wrappedNumber = false;
    return Tensor(std::move(impl));
}

Tensor Tensor::fromBlob(void *data, const Shape &sizes, DType dtype)
{
    auto impl = std::make_shared<TensorImpl>();
    impl->sizes = sizes;
    impl->strides = contiguousStrides(sizes);
    impl->dtype = dtype;
    impl->numel = numelOf(sizes);
    impl->storage = std::make_shared<StorageImpl>(data, static_cast<size_t>(impl->numel) * fusescope::itemSize(dtype),
                                                  kCPU);
    return Tensor(std::move(impl));
}

Tensor Tensor::wrapScalar(double value, DType dtype)
{
    Tensor t = empty({}, dtype);
    visitDType(dtype, [&](auto tag) {
        using T = decltype(tag);
        *t.data<T>() = static_cast<T>(static_cast<compute_t<T>>(value));
    });
    t.m_impl->wrappedNumber = true;
    return t;
}

int64_t Tensor::size(int64_t d) const
{
    return m_impl->sizes[static_cast<size_t>(wrapDim(d, dim(), "size"))];
}

int64_t Tensor::stride(int64_t d) const
{
    return m_impl->strides[static_cast<size_t>(wrapDim(d, dim(), "stride"))];
}

bool Tensor::sharesStorageWith(const Tensor &other) const
{
    return m_impl->storage && m_impl->storage == other.m_impl->storage;
}

void *Tensor::rawData() const
{
    if (isMeta())
        throw Error("data: a meta tensor has no data");
    char *base = static_cast<char *>(m_impl->storage->data());
    return base ? base + m_impl->offset * static_cast<int64_t>(itemSize()) : nullptr;
}

double Tensor::itemDouble() const
{
    if (numel() != 1)
        throw Error("item: a tensor with " + std::to_string(numel()) + " elements cannot be converted to a number");
    return visitDType(dtype(), [&](auto tag) {
        using T = decltype(tag);
        return static_cast<double>(static_cast<compute_t<T>>(*data<T>()));
    });
}

std::vector<double> Tensor::toDoubleVector() const
{
    std::vector<double> out;
    out.reserve(static_cast<size_t>(numel()));
    if (numel() == 0)
        return out;
    Shape index(sizes().size(), 0);
    visitDType(dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T *base = data<T>();
        for (int64_t n = 0; n < numel(); ++n) {
            int64_t off = 0;
            for (size_t d = 0; d < index.size(); ++d)
                off += index[d] * strides()[d];
            out.push_back(static_cast<double>(static_cast<compute_t<T>>(base[off])));
            for (size_t d = index.size(); d-- > 0;) {
                if (++index[d] < sizes()[d])
                    break;
                index[d] = 0;
            }
        }
    });
    return out;
}

std::string Tensor::toString(int64_t maxElements) const
{
    std::ostringstream out;
    out << "Tensor(" << shapeStr(sizes()) << ", " << dtypeName(dtype());
    if (isMeta()) {
        out << ", meta)";
        return out.str();
    }
    out << ", [";
    const std::vector<double> values = (numel() <= maxElements ? *this : flatten().slice(0, 0, maxElements))
                                           .toDoubleVector();
    for (size_t i = 0; i < values.size(); ++i) {
        if (i)
            out << ", ";
        if (dtype() == DType::Bool)
            out << (values[i] != 0 ? "true" : "false");
        else
            out << values[i];
    }
    if (numel() > maxElements)
        out << ", ...";
    out << "])";
    return out.str();
}

Tensor Tensor::view(const Shape &s) const { return ops::view(*this, s); }
Tensor Tensor::reshape(const Shape &s) const { return ops::reshape(*this, s); }
Tensor Tensor::permute(const Shape &dims) const { return ops::permute(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ops::transpose(*this, d0, d1); }
Tensor Tensor::t() const { return ops::transpose(*this, 0, dim() < 2 ? 0 : 1); }
Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const
{
    return ops::slice(*this, d, start, end, step);
}
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const { return ops::narrow(*this, d, start, length); }
Tensor Tensor::select(int64_t d, int64_t index) const { return ops::select(*this, d, index); }
Tensor Tensor::expand(const Shape &s) const { return ops::expand(*this, s); }
Tensor Tensor::squeeze() const { return ops::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return ops::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return ops::unsqueeze(*this, d); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return ops::flatten(*this, s, e); }
Tensor Tensor::contiguous() const { return isContiguous() ? *this : ops::clone(*this); }
Tensor Tensor::clone() const { return ops::clone(*this); }
Tensor Tensor::to(DType t) const { return t == dtype() ? *this : ops::cast(*this, t); }

} // namespace fusescope
