#include "core/ops/movement.h"

#include "core/ops/builtin.h"
#include "core/ops/registry.h"

namespace fusescope {

void registerMovementOps(OpRegistry &)
{
}

} // namespace fusescope
