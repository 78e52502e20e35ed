// One entry for launcher configs: the files a plan becomes in a format, and a
// job read back from any of them (the format told by the file's content).
// Reading touches only the files named (and those they name: a ds_config, an HF
// config.json); writing is left to the caller.
#pragma once
#include <string>
#include <vector>

#include "export/launch_format.h"
#include "export/launch_job.h"

namespace trainplan::exporting {

struct LaunchFile {
  std::string path;
  std::string text;
};

// deepspeed: the launch script at `path` and its ds_config beside it (<stem>.ds_config.json);
// nxd through NxD Training's HF path (nxd_hf_config.h): the YAML and <stem>.config.json beside it.
// Throws spec::SpecError naming "FORMAT format" and the option when the plan cannot be expressed.
std::vector<LaunchFile> launch_files(LaunchFormat format, const LaunchJob& job, const std::string& path);

struct ReadLaunch {
  LaunchFormat format;
  LaunchJob job;
};

// A Megatron-LM or Megatron-DeepSpeed launch script, a script running Intel's run_llama.sh,
// a NeMo-Framework-Launcher run script (nemo_launcher_script.h), a NeMo or NxD YAML, or a ds_config JSON.
// `stack`: the stack the caller prices the file under (--stack), or empty; it decides which
// Megatron-DeepSpeed fork a script that passes no fork's own options is read as (read_deepspeed).
// `overrides` (--set): what the launch adds on its command line, as its launcher takes it: Hydra
// overrides of a YAML (YamlFields::apply_override), NAME=VALUE in a script's environment (as
// `NAME=VALUE bash script.sh`); a ds_config JSON takes none. Each applied one is noted on the job.
ReadLaunch read_launch_config(const std::string& path, const std::string& stack = "",
                              const std::vector<std::string>& overrides = {});

// A file that states part of an architecture (no vocabulary: LaunchJob::has_architecture
// false) against the model named for it: throws spec::SpecError naming `file` and the
// format's own key for the first layer count, width, heads, FFN or experts that differs,
// an NxD HF-path file's kv_replicator against the named model's KV heads (a note where silent),
// and an NxD megatron-path file's MoE (experts, top_k, capacity, expert width) against the model's.
void check_stated_architecture(ReadLaunch& read, const spec::ModelSpec& named, const std::string& file);

}  // namespace trainplan::exporting
