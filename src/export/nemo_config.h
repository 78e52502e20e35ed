// NeMo (2.0.0, megatron_gpt_pretraining.py) as its Hydra YAML: trainer nodes,
// devices and precision; model parallel sizes, batch, recompute, optimizer
// (the ZeRO stage) and architecture under the keys of megatron_gpt_config.yaml.
// The vocabulary is the tokenizer's in NeMo, so a file read back names its
// model by trainplan's header or by --model.
#pragma once
#include <string>
#include <vector>

#include "export/launch_job.h"

namespace trainplan::exporting {

std::string write_nemo(const LaunchJob& job);
// `overrides`: the command line's Hydra overrides (YamlFields::apply_override), applied after the
// file's own, said in refusals as `origin ITEM`; on a NeMo-Framework-Launcher training file (its
// `run` section) an item's `training.` is the launcher's group prefix and dropped, as the launcher does.
LaunchJob read_nemo(const std::string& text, const std::string& file, const std::vector<std::string>& overrides = {},
                    const std::string& origin = "--set");

}  // namespace trainplan::exporting
