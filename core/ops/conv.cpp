#include "core/ops/conv.h"

#include "core/ops/builtin.h"
#include "core/ops/registry.h"

namespace fusescope {

void registerConvOps(OpRegistry &)
{
}

} // namespace fusescope
