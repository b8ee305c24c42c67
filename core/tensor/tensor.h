#pragma once

#include "core/tensor/allocator.h"
#include "core/tensor/dtype.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusescope {

using Shape = std::vector<int64_t>;

// Raised for every user error in the core: a wrong shape, dtype or argument.
// The message names the op and the shapes involved.
class Error : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

std::string shapeStr(const Shape &shape); // "[8,256]"
int64_t numelOf(const Shape &shape);
Shape contiguousStrides(const Shape &sizes);
// a / b rounded up, for a >= 0 and b > 0 (chunk and tile counts).
inline int64_t ceilDiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

// A refcounted buffer. Meta tensors have a data-less one (null data, 0 bytes);
// zero-byte buffers have a null data pointer.
class StorageImpl
{
public:
    StorageImpl(size_t bytes, Allocator *allocator);
    // Wraps memory owned elsewhere; the caller keeps it alive.
    StorageImpl(void *external, size_t bytes, Device device);
    ~StorageImpl();
    StorageImpl(const StorageImpl &) = delete;
    StorageImpl &operator=(const StorageImpl &) = delete;

    void *data() const { return m_data; }
    size_t bytes() const { return m_bytes; }
    Device device() const { return m_device; }

private:
    void *m_data = nullptr;
    size_t m_bytes = 0;
    Device m_device;
    Allocator *m_allocator = nullptr;
};

struct TensorImpl {
    std::shared_ptr<StorageImpl> storage; // data-less for meta tensors
    Shape sizes;
    Shape strides; // in elements
    int64_t offset = 0; // in elements
    DType dtype = DType::F32;
    Device device = kCPU;
    int64_t numel = 0;
    bool contiguous = true;
    // A Python-number operand wrapped as a 0-d tensor: it takes part in
    // type promotion only by category (int/float), as in PyTorch.
    bool wrappedNumber = false;
};

// A strided view over shared storage. Copying a Tensor copies the handle;
// view ops share storage; ops produce new tensors.
class Tensor
{
public:
    Tensor() = default;
    explicit Tensor(std::shared_ptr<TensorImpl> impl);

    // Uninitialized contiguous tensor. On the meta device nothing is allocated.
    static Tensor empty(const Shape &sizes, DType dtype = DType::F32, Device device = kCPU);
    static Tensor emptyStrided(const Shape &sizes, const Shape &strides, DType dtype, Device device = kCPU);
    // An alias with new geometry over the same storage (no checks: ops check).
    Tensor alias(const Shape &sizes, const Shape &strides, int64_t offset) const;
    // Wraps external memory without copying; the caller keeps it alive.
    static Tensor fromBlob(void *data, const Shape &sizes, DType dtype);
    // A 0-d tensor holding a number operand (see TensorImpl::wrappedNumber).
    static Tensor wrapScalar(double value, DType dtype);

    bool defined() const { return m_impl != nullptr; }
    const TensorImpl &impl() const { return *m_impl; }
    const std::shared_ptr<TensorImpl> &implPtr() const { return m_impl; }

    const Shape &sizes() const { return m_impl->sizes; }
    const Shape &strides() const { return m_impl->strides; }
    int64_t offset() const { return m_impl->offset; }
    DType dtype() const { return m_impl->dtype; }
    Device device() const { return m_impl->device; }
    bool isMeta() const { return m_impl->device.type == DeviceType::Meta; }
    bool isWrappedNumber() const { return m_impl->wrappedNumber; }
    int64_t dim() const { return static_cast<int64_t>(m_impl->sizes.size()); }
    int64_t numel() const { return m_impl->numel; }
    int64_t size(int64_t d) const;
    int64_t stride(int64_t d) const;
    size_t itemSize() const { return fusescope::itemSize(m_impl->dtype); }
    size_t nbytes() const { return static_cast<size_t>(numel()) * itemSize(); }
    bool isContiguous() const { return m_impl->contiguous; }
    bool sharesStorageWith(const Tensor &other) const;
    const std::shared_ptr<StorageImpl> &storage() const { return m_impl->storage; }

    // Address of element [0,...,0]; throws on meta tensors.
    void *rawData() const;
    template <typename T> T *data() const { return static_cast<T *>(rawData()); }
    // The single value of a one-element tensor, converted to T.
    template <typename T> T item() const;
    double itemDouble() const;

    // Views (share storage; go through the op registry so they are observed and captured).
    Tensor view(const Shape &sizes) const;
    Tensor reshape(const Shape &sizes) const;
    Tensor permute(const Shape &dims) const;
    Tensor transpose(int64_t d0, int64_t d1) const;
    Tensor t() const;
    Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
    Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
    Tensor select(int64_t dim, int64_t index) const;
    Tensor expand(const Shape &sizes) const;
    Tensor squeeze() const;
    Tensor squeeze(int64_t dim) const;
    Tensor unsqueeze(int64_t dim) const;
    Tensor flatten(int64_t startDim = 0, int64_t endDim = -1) const;

    Tensor contiguous() const;
    Tensor clone() const;
    Tensor to(DType dtype) const;

    // Elements in row-major order as doubles (tests, printing).
    std::vector<double> toDoubleVector() const;
    std::string toString(int64_t maxElements = 64) const;

private:
    std::shared_ptr<TensorImpl> m_impl;
};

// Normalizes a possibly negative dim against rank; throws naming `op`.
int64_t wrapDim(int64_t dim, int64_t rank, const char *op);
bool computeContiguous(const Shape &sizes, const Shape &strides);

template <typename T>
T Tensor::item() const
{
    return static_cast<T>(itemDouble());
}

} // namespace fusescope
