#pragma once
// The C++ API of every built-in op: thin typed wrappers over callOp, so a
// call from C++ is observed, captured and checked exactly like any other.

#include "core/ops/conv.h"
#include "core/ops/linalg.h"
#include "core/ops/loss.h"
#include "core/ops/movement.h"
#include "core/ops/attention.h"
#include "core/ops/norm.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduction.h"
#include "core/ops/views.h"
