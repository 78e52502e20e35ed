// The options a Megatron-LM launch script may pass: those Megatron-LM
// core_r0.13.0's argument parser defines (megatron/training/arguments.py) and
// torchrun's own (torch/distributed/run.py). Another option stops that release
// with argparse's "unrecognized arguments"; a later release may define it.
#pragma once
#include <string_view>

namespace trainplan::exporting {

bool megatron_lm_or_torchrun_parses(std::string_view option);

}  // namespace trainplan::exporting
