#pragma once
// The whole nn module system in one include.

#include "core/nn/activation.h"
#include "core/nn/attention.h"
#include "core/nn/container.h"
#include "core/nn/conv.h"
#include "core/nn/embedding.h"
#include "core/nn/init.h"
#include "core/nn/linear.h"
#include "core/nn/module.h"
#include "core/nn/normalization.h"
