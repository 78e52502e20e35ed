// Checks and fields shared by the two model readers (spec/load.cpp's trainplan
// model files, spec/hf_config.cpp's Hugging Face config.json): a MoE's experts
// against each other and the layers, and RoPE's base. Each problem fails through
// the reader, naming the file and the key as that file spells it.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "spec/json_reader.h"
#include "spec/model_spec.h"

namespace trainplan::spec {

// A MoE figure's key, as the file spells it.
struct MoeKeys {
  const char* experts; const char* top_k; const char* expert_ffn; const char* shared_ffn;
  const char* first_dense; const char* capacity;
};
// The experts and routing of a MoE model, checked against each other and the
// layers; `at` prefixes each key ("$.moe." or "$.").
void check_moe(const JsonReader& r, const ModelSpec& m, const std::string& at, const MoeKeys& k);
// RoPE's base: a rotary model's only, from 1 to 1e12 (published: 1e4 to 5e7).
void read_rope_theta(const JsonReader& r, const nlohmann::json& j, const char* key, ModelSpec& m);

}  // namespace trainplan::spec
