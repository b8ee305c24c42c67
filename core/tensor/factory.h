#pragma once

#include "core/tensor/tensor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace fusescope {

// Deterministic random numbers (xoshiro256**, seeded through splitmix64):
// the same seed gives the same tensors on every machine.
class Generator
{
public:
    explicit Generator(uint64_t seed = 0);
    uint64_t next();
    double uniform();  // [0, 1)
    double normal();   // standard normal (Box-Muller)
    // n of normal()'s values, the same ones in the same order, their
    // transcendentals computed on the thread pool.
    void normals(double *out, int64_t n);

private:
    uint64_t m_s[4];
    double m_spare = 0;
    bool m_hasSpare = false;
};

Tensor zeros(const Shape &sizes, DType dtype = DType::F32);
Tensor ones(const Shape &sizes, DType dtype = DType::F32);
Tensor full(const Shape &sizes, double value, DType dtype = DType::F32);
// [start, end) by step; dtype defaults to i64 for integral arguments, f32 otherwise.
Tensor arange(double start, double end, double step = 1, std::optional<DType> dtype = std::nullopt);
Tensor arange(int64_t end);
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::F32);
Tensor randn(const Shape &sizes, Generator &gen, DType dtype = DType::F32);
Tensor rand(const Shape &sizes, Generator &gen, DType dtype = DType::F32);
// Uniform integers in [low, high).
Tensor randint(int64_t low, int64_t high, const Shape &sizes, Generator &gen, DType dtype = DType::I64);
// Copies values (row-major) into a new tensor of the given shape.
Tensor fromVector(const std::vector<double> &values, const Shape &sizes, DType dtype = DType::F32);
// Fills an existing tensor in place (any strides).
void fill_(const Tensor &t, double value);

} // namespace fusescope
