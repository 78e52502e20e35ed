// NeuronX Distributed Training (Neuron SDK 2.20) YAML on its megatron model path: trainer,
// distributed_strategy (TP, PP, VP, ZeRO-1, SP), batches, sequence, recompute, architecture,
// precision (launch_files sends a plan whose TP does not divide the KV heads to the HF path,
// nxd_hf_config.h). No TP overlap; DP overlap is read as asked for, the stack saying NxD
// reduces after the accumulation loop. read_nxd reads either path's file.
#pragma once
#include <string>
#include <vector>

#include "export/launch_job.h"

namespace trainplan::exporting {

std::string write_nxd(const LaunchJob& job);
// `overrides`: the command line's Hydra overrides (YamlFields::apply_override).
LaunchJob read_nxd(const std::string& text, const std::string& file, const std::vector<std::string>& overrides = {});
// A file's trainer.lnc against the hardware it is priced on: refused on Trn2 at 1 (trainplan
// describes trn2.48xlarge at LNC=2 only), a note on Trn1 where NxD Training ignores it.
void check_nxd_logical_cores(LaunchJob& job, const std::string& family, const std::string& hardware, const std::string& file);

}  // namespace trainplan::exporting
