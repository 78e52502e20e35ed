// Loading specs from disk. A name ("llama2-7b", "trn1.32xlarge", "nemo") is looked
// up as models/, hardware/ or stacks/<name>.json under data_root(); anything
// with a '/' or ending in .json is a path. A Hugging Face config.json (has
// "architectures") maps to the same ModelSpec. Every problem throws SpecError
// naming the file, the JSON path and what was expected.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/stack.h"

namespace trainplan::spec {

// The folder holding models/, hardware/ and data/: $TRAINPLAN_ROOT if set,
// else the source tree the binary was built from.
std::string data_root();

// Throws SpecError if unreadable, not a regular file, over spec/text_file.h's
// kMaxInputFileBytes, or malformed (spec/json_text.h).
nlohmann::json read_json_file(const std::string& path);

HardwareSpec load_hardware(const std::string& name_or_path);
ModelSpec load_model(const std::string& name_or_path);
Stack load_stack(const std::string& name_or_path);
// The shipped stacks of one release line (`--stack LINE@VERSION`), in name
// order; empty when no stack lists releases on LINE.
std::vector<Stack> stacks_of_line(const std::string& line);
// "2.15-2.19 (neuronx-distributed), 2.20-2.24 (neuronx-distributed-2.20)": each stack's release range.
std::string release_ranges_text(const std::vector<Stack>& stacks);
Stack stack_from_json(const nlohmann::json& j, const std::string& file);
HardwareSpec hardware_from_json(const nlohmann::json& j, const std::string& file);
ModelSpec model_from_json(const nlohmann::json& j, const std::string& file);
ModelSpec model_from_hf_config(const nlohmann::json& j, const std::string& file);

// Names of the descriptors shipped under data_root(), sorted. Models: the
// catalogue (models/); the corpus-only models (data/measured/models/) load by
// name as well but are listed apart.
std::vector<std::string> list_model_names();
std::vector<std::string> list_corpus_model_names();
std::vector<std::string> list_hardware_names();
std::vector<std::string> list_stack_names();

}  // namespace trainplan::spec
