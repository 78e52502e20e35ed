// Plausible ranges for descriptor figures: a value outside its range is a typo
// or a unit slip (1e-300 GiB/s of HBM, a 1e300 TFLOP/s peak), refused with the
// file, the JSON path, the range and the value. The ranges are wide on purpose:
// from well below any accelerator sold to far above any announced.
//   peak BF16 per chip 0.1..100000 TFLOP/s, FP32 0.01..100000; HBM 0.5..4096 GiB
//   per chip at 10..100000 GB/s; fabric links 1..100000 GB/s; latencies
//   0.01..10000 us; network 1..1000000 Gb/s per instance; up to 1024 chips and
//   4096 devices per instance; prices 0.01..10000 USD per instance-hour; failures
//   0..1 per instance-hour; checkpoint storage 0.01..100000 GB/s.
//   Models: 1..10000 layers, hidden 8..1000000, 1..10000 heads, FFN
//   1..10000000, vocabulary 2..10000000, positions 1..100000000.
//   Stacks: DP buckets 0..100000 MB, loss 1..64 bytes per logit, runtime
//   reserve 0..1024 GiB, allocator overhead 0..0.9, host overhead 0..60 s.
#pragma once
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/stack.h"

namespace trainplan::spec {

// Throw SpecError(spec.source_file, JSON path, range and value) on the first
// figure out of range. `hf_names` names model fields as a Hugging Face config does.
void check_plausible(const HardwareSpec& hardware);
void check_plausible(const ModelSpec& model, bool hf_names);
void check_plausible(const Stack& stack);

}  // namespace trainplan::spec
