#pragma once

namespace fusescope {

class OpRegistry;

// One registration function per op family (core/ops/*.cpp).
void registerViewOps(OpRegistry &r);
void registerPointwiseOps(OpRegistry &r);
void registerReductionOps(OpRegistry &r);
void registerNormOps(OpRegistry &r);
void registerAttentionOps(OpRegistry &r);
void registerLinalgOps(OpRegistry &r);
void registerConvOps(OpRegistry &r);
void registerWinogradOps(OpRegistry &r);
void registerAmxOps(OpRegistry &r);
void registerMovementOps(OpRegistry &r);
void registerLossOps(OpRegistry &r);
void registerCreationOps(OpRegistry &r);

inline void registerBuiltinOps(OpRegistry &r)
{
    registerViewOps(r);
    registerPointwiseOps(r);
    registerReductionOps(r);
    registerNormOps(r);
    registerAttentionOps(r);
    registerLinalgOps(r);
    registerConvOps(r);
    registerWinogradOps(r);
    registerAmxOps(r);
    registerMovementOps(r);
    registerLossOps(r);
    registerCreationOps(r);
}

} // namespace fusescope
