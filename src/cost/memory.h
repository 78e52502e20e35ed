// Memory per device for a Plan: weights, gradients and optimizer state by
// precision mode, sharded by TP, PP and ZeRO; activations after Korthikanti
// et al. 2022 ("Reducing Activation Recomputation in Large Transformer
// Models", Table 2) for the micro-batches in flight on the first stage under
// 1F1B; logits workspace on the last stage. Plan must be completed (dp set).
#pragma once
#include "cost/estimate.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/workload.h"

namespace tp::cost {

// Bytes per parameter held on a device before ZeRO sharding.
struct StateBytes {
  double weights = 0, gradients = 0, optimizer = 0;
};
StateBytes state_bytes_per_parameter(spec::Precision precision);

// Parameters held by one device of the heaviest pipeline stage (before ZeRO).
double parameters_per_device(const spec::ModelSpec& model, const spec::Plan& plan);

// Activation bytes of one layer for one micro-batch on one device.
double layer_activation_bytes(const spec::ModelSpec& model, const spec::Workload& workload,
                              const spec::Plan& plan);

MemoryBreakdown memory_per_device(const spec::ModelSpec& model, const spec::HardwareSpec& hardware,
                                  const spec::Workload& workload, const spec::Plan& plan);

}  // namespace tp::cost
