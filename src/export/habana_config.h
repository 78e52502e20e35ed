// Intel Gaudi's Megatron-DeepSpeed fork (HabanaAI/Megatron-DeepSpeed, the 1.19.0
// branch): a bash script that exports the HL_* settings scripts/run_llama.sh reads
// and runs it. run_llama.sh builds a Llama from its own table of sizes, writes its
// own ds_config and launches pretrain_gpt.py under DeepSpeed's pipeline engine, so
// a plan goes through only where an HL_* setting reaches; the rest is refused.
// Reading takes a script's (or a command's environment's) HL_* assignments before
// it runs run_llama.sh, with run_llama.sh's own default where one is absent.
#pragma once
#include <string>

#include "export/launch_job.h"
#include "export/shell_args.h"

namespace trainplan::exporting {

std::string write_habana(const LaunchJob& job);

// Whether a script runs Intel's run_llama.sh with HL_* settings.
bool runs_habana_llama(const ShellArgs& script);

// Throws spec::SpecError naming `file` and the HL_* setting for what run_llama.sh
// would refuse or trainplan does not price.
LaunchJob read_habana(const ShellArgs& script, const std::string& text, const std::string& file);

}  // namespace trainplan::exporting
