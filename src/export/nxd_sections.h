// What NxD Training's two model paths share as trainplan writes them (the megatron
// model: nxd_config.cpp; the HF Llama model: nxd_hf_config.cpp): the refusals of
// plans neither path runs, the precision section as priced, the sections no plan
// decides (example values), and the YAML text with the precision environment quoted.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

#include "export/launch_job.h"

namespace trainplan::exporting {

// Throws spec::SpecError ("nxd format", the option, what it needs) for a plan or
// model neither model path writes (before either path's own rules).
void refuse_what_no_nxd_path_runs(const LaunchJob& job);

// precision.type as priced: mixed_precision, bf16SR, fp32, or 'manual' for mixed
// BF16 without FP32 master weights or FP32 gradients.
// The root both model paths open with: the job's name and model source, the
// trainer's devices and nodes, the parallel layout, and the data's micro- and global batch.
YAML::Node nxd_job_root(const LaunchJob& job, const std::string& name, const std::string& model_source);
void write_nxd_precision(YAML::Node root, const LaunchJob& job);

// seed, trainer, runtime, exp_manager and model.optim sections with the example
// config's values; exp_manager.name `name`; data.data_impl and splits_string
// (MegatronDataModule's keys) where `megatron_data`.
void write_nxd_example_sections(YAML::Node& root, const std::string& name, bool megatron_data);

// The document as text, the manual precision's environment values quoted as strings.
std::string nxd_yaml_text(const std::string& header, const YAML::Node& root);

}  // namespace trainplan::exporting
