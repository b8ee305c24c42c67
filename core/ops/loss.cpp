#include "core/ops/loss.h"

#include "core/ops/builtin.h"
#include "core/ops/registry.h"

namespace fusescope {

void registerLossOps(OpRegistry &)
{
}

} // namespace fusescope
