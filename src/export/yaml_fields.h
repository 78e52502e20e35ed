// Typed reads of dotted key paths ("model.micro_batch_size") in a YAML launcher
// config. A malformed document, a wrong type or a value out of range is refused
// with the file and the key path (spec::SpecError); a missing key takes the
// fallback the stack itself would use, which the caller states. A value that is
// one OmegaConf interpolation is resolved as the NeMo launcher resolves it.
#pragma once
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace trainplan::exporting {

class YamlFields {
 public:
  YamlFields(const std::string& text, const std::string& file);

  bool has(const std::string& path) const;      // present and not null
  long whole(const std::string& path, long min, long max, long fallback) const;
  double real(const std::string& path, double fallback) const;
  bool flag(const std::string& path, bool fallback) const;
  std::string text(const std::string& path, const std::string& fallback) const;
  // Hydra's `+path=value` (a key the base config lacks): sets it, making the mappings on the way.
  void add(const std::string& path, const std::string& value);
  // One command-line override as Hydra 1.3 applies it to a config in struct mode (facebookresearch/
  // hydra@v1.3.2 hydra/_internal/config_loader_impl.py:336-397): `key=value` replaces a key the
  // file has, `+key=value` adds one it lacks or holds null (a list or mapping always), `++key=value`
  // does either, `~key` deletes one holding a value (`~key=value` only while it holds that value).
  // The value is read as YAML flow text (8, true, null, [1, 2]). Anything else is refused naming
  // the file and `ORIGIN SHOWN` (SHOWN: the item as the user wrote it, default `item`).
  void apply_override(const std::string& item, const std::string& shown = "", const std::string& origin = "--set");
  const std::string& file() const { return file_; }
  // The leaf key paths (scalars, lists, nulls) under `sections` that no read asked about, in
  // document order, those under a path of `skip` left out; said with unread_options_note (launch_job.h).
  std::vector<std::string> unconsulted(const std::vector<std::string>& sections, const std::vector<std::string>& skip) const;

 private:
  YAML::Node find(const std::string& path) const;  // an undefined node when missing
  YAML::Node lookup(const std::string& path) const;  // as find, without counting the path as read
  std::string scalar(const std::string& path) const;
  // `value` read at `path`: itself, or what ${...} names (see yaml_fields.cpp).
  std::string resolved(const std::string& value, const std::string& path, int depth) const;
  YAML::Node root_;
  std::string file_;
  mutable std::set<std::string> consulted_;  // every path find() was asked for
};

// trainer.num_nodes (default 1) and trainer.devices (0: silent), as NeMo and
// NxD Training both state the cluster; fills job.instances, devices and plan.instances.
struct LaunchJob;
void read_yaml_cluster(const YamlFields& fields, LaunchJob& job);
// model.num_layers, hidden_size, num_attention_heads, ffn_hidden_size and num_moe_experts where
// stated (NeMo and NxD Training name them alike) into job.model, 0 where silent:
// a partial architecture a named model is held against (LaunchJob::has_architecture stays false).
void read_yaml_layer_shape(const YamlFields& fields, LaunchJob& job);
// Key names of the layer's properties in one format (an empty name: the format has none).
struct YamlLayerKeys {
  const char *kv_heads, *norm, *activation, *position, *rope_base, *bias, *qkv_bias, *top_k;
};
// The properties the file states of its layer (present keys only: an absent one takes the
// client's base config, which trainplan's exports state in full) into job.stated.
void read_yaml_stated_layer(const YamlFields& fields, const YamlLayerKeys& keys, LaunchJob& job);

// A YAML document as text: the header comment, then `root` in block style.
std::string yaml_text(const std::string& header, const YAML::Node& root);

}  // namespace trainplan::exporting
