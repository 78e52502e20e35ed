// NxD Training's HF model path (model_source: hf) as trainplan writes and reads it: a plan
// whose TP does not divide the model's KV heads (the megatron model divides them over TP)
// goes out as examples/conf/hf_llama3_70B_config.yaml@ff83d7bd runs Llama 3 70B at TP 32:
// the YAML, with kv_replicator = TP / KV heads, and the model's HF config.json beside it,
// which model.model_config names; reading takes the architecture back from that file.
#pragma once
#include <string>

#include "export/launch_job.h"
#include "export/yaml_fields.h"

namespace trainplan::exporting {

// Whether launch_files writes the job through the HF path: its TP does not divide the KV heads,
// its stack recomputes the whole MLP, or its stack prices flash attention and the model is a
// dense Llama (the megatron model has no flash path).
bool nxd_hf_path(const LaunchJob& job);

// Empty where the HF path's Llama layer builds `m`; else what differs, in words.
std::string unlike_hf_llama(const spec::ModelSpec& m);

struct NxdHfFiles {
  std::string yaml, config_json;
};

// The YAML (model.model_config: `config_name`) and the config.json. Throws spec::SpecError
// ("nxd format", the option, what it needs) for what the HF path cannot express.
NxdHfFiles write_nxd_hf(const LaunchJob& job, const std::string& config_name);

// The HF path's keys of a file read_nxd reads (model_source: hf): kv_replicator and
// qkv_linear, and the architecture from model.model_config where that file exists
// (a relative path from the YAML's folder), with the YAML's overrides; else a note.
void read_nxd_hf(const YamlFields& fields, LaunchJob& job);

// An HF-path job's kv_replicator against the model's KV heads (no-op for other jobs):
// what the client raises on, or a replication other than priced, throws spec::SpecError
// naming `file`; a file silent where the client would need one gets a note.
void check_nxd_kv_replicator(LaunchJob& job, const spec::ModelSpec& model, const std::string& file);

}  // namespace trainplan::exporting
