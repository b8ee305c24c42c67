#include "core/ops/linalg.h"

#include "core/ops/builtin.h"
#include "core/ops/registry.h"

namespace fusescope {

void registerLinalgOps(OpRegistry &)
{
}

} // namespace fusescope
