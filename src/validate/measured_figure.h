// The measured figure of a run as seq/s of its whole cluster, from the unit
// the source stated: seq/s, tokens/s per device (x devices / seq len), seconds
// per step (global batch / s), or model TFLOP/s per device under the source's
// own FLOP count (x devices / FLOPs per sequence). 0 for a run without one.
#pragma once
#include "spec/model_spec.h"
#include "validate/measured_run.h"

namespace trainplan::validate {

// FLOPs per sequence as a source counted them. "megatron-2021": Narayanan et
// al. 2021 (SC21), eq. 3, 96 s l h^2 (1 + s/(6h) + V/(16 l h)), counting the
// recompute forward; "megatron-core-2024": Megatron-LM's
// num_floating_point_operations (training.py, 2024), 12 s l h^2 ((1 + g/a +
// s/h) q/h + f/h x 3/2 for SwiGLU + V/(2 l h)), no recompute. Throws
// spec::SpecError naming `file` for another name.
double source_flops_per_sequence(const std::string& formula, const spec::ModelSpec& model, int seq_len,
                                 const std::string& file);

// `run.workload.global_batch_seqs` must be resolved.
double measured_seqs_per_s(const MeasuredRun& run, const spec::ModelSpec& model, int devices);

}  // namespace trainplan::validate
