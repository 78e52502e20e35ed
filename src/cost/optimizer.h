// Optimizer: one Adam step over the parameters this device updates (its ZeRO
// shard), streaming master weights, both moments, the gradient and the new
// compute-dtype weights through HBM, in the dtypes the stack keeps them in.
#pragma once
#include "cost/step_context.h"

namespace trainplan::cost {

// Bytes read and written per updated parameter.
double optimizer_bytes_per_parameter(const spec::Stack& stack, spec::Precision precision);
double optimizer_s(const StepContext& ctx);

}  // namespace trainplan::cost
