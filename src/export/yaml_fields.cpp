#include "export/yaml_fields.h"

#include "export/launch_job.h"
#include "export/read_values.h"
#include "spec/error.h"

namespace tp::exporting {

YamlFields::YamlFields(const std::string& text, const std::string& file) : file_(file) {
  try {
    root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw spec::SpecError(file, "", "valid YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
  }
  if (!root_.IsMap()) throw spec::SpecError(file, "", "a YAML mapping of trainer, model and other sections");
}

YAML::Node YamlFields::find(const std::string& path) const {
  YAML::Node node;
  node.reset(root_);  // rebinds; operator= would overwrite the node it refers to
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    YAML::Node child = node[key];
    if (!child.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    node.reset(child);
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

void YamlFields::add(const std::string& path, const std::string& value) {
  YAML::Node node;
  node.reset(root_);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty() || (node.IsDefined() && !node.IsNull() && !node.IsMap()))
      throw spec::SpecError(file_, path, "a key path of mappings (a.b.c)");
    if (dot == std::string::npos) {
      node[key] = value;
      return;
    }
    YAML::Node child = node[key];
    node.reset(child);
    start = dot + 1;
  }
}

bool YamlFields::has(const std::string& path) const {
  const YAML::Node n = find(path);
  return n.IsDefined() && !n.IsNull();
}

std::string YamlFields::scalar(const std::string& path) const {
  const YAML::Node n = find(path);
  if (!n.IsScalar()) throw spec::SpecError(file_, path, "a single value, not a list or a mapping");
  return n.Scalar();
}

long YamlFields::whole(const std::string& path, long min, long max, long fallback) const {
  return has(path) ? whole_number(scalar(path), file_, path, min, max) : fallback;
}

double YamlFields::real(const std::string& path, double fallback) const {
  return has(path) ? real_number(scalar(path), file_, path) : fallback;
}

bool YamlFields::flag(const std::string& path, bool fallback) const {
  return has(path) ? boolean(scalar(path), file_, path) : fallback;
}

std::string YamlFields::text(const std::string& path, const std::string& fallback) const {
  return has(path) ? scalar(path) : fallback;
}

void read_yaml_cluster(const YamlFields& y, LaunchJob& job) {
  job.instances = int(y.whole("trainer.num_nodes", 1, 1L << 30, 1));
  job.devices_per_instance = int(y.whole("trainer.devices", 1, 1024, 0));
  job.plan.instances = job.instances;
}

void read_yaml_layer_shape(const YamlFields& y, LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  job.model.layers = int(y.whole("model.num_layers", 1, kBig, 0));
  job.model.hidden = int(y.whole("model.hidden_size", 1, kBig, 0));
  job.model.heads = int(y.whole("model.num_attention_heads", 1, kBig, 0));
  job.model.ffn_hidden = int(y.whole("model.ffn_hidden_size", 1, kBig, 0));
}

std::string yaml_text(const std::string& header, const YAML::Node& root) {
  YAML::Emitter out;
  out << root;
  return header + out.c_str() + "\n";
}

}  // namespace tp::exporting
