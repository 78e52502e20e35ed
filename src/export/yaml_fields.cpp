#include "export/yaml_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "export/launch_job.h"
#include "export/read_values.h"
#include "spec/error.h"

namespace trainplan::exporting {

namespace {

// Walks a document's events and keeps the first key a mapping repeats, or a YAML
// merge key: yaml-cpp keeps one of two equal keys silently and does not merge
// `<<: *anchor`, where Hydra refuses the first and PyYAML merges the second.
class RepeatedKeyFinder : public YAML::EventHandler {
 public:
  std::string found_path, found_what;
  int found_line = 0;
  std::vector<YAML::Mark> documents;  // where each document starts

  void OnDocumentStart(const YAML::Mark& mark) override { documents.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, ""); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, ""); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    node(mark, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, "");
    frames_.push_back({false, true, {}, ""});
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    const std::string at = node(mark, "");
    frames_.push_back({true, true, {}, at});
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  struct Frame {
    bool map, expecting_key;
    std::set<std::string> keys;
    std::string path;
  };
  // A node in the current frame: a key or a value of a mapping, or an item; returns its key path.
  std::string node(const YAML::Mark& mark, const std::string& scalar) {
    if (frames_.empty()) return "";
    Frame& f = frames_.back();
    if (!f.map) return f.path;
    if (!f.expecting_key) {
      f.expecting_key = true;
      return f.path.empty() ? last_key_ : f.path + "." + last_key_;
    }
    f.expecting_key = false;
    last_key_ = scalar;
    const std::string path = f.path.empty() ? scalar : f.path + "." + scalar;
    if (found_path.empty() && (scalar == "<<" || !f.keys.insert(scalar).second)) {
      found_path = path;
      found_line = mark.line + 1;
      found_what = scalar == "<<" ? "keys written out: a YAML merge key (<<) is not read"
                                  : "each key once, as Hydra requires (this one is given again)";
    }
    return path;
  }
  std::vector<Frame> frames_;
  std::string last_key_;
};

// yaml-cpp's DepthGuard limit (yaml-cpp/depthguard.h: DepthGuard<max_depth = 2000>).
constexpr int kYamlMaxDepth = 2000;

}  // namespace

YamlFields::YamlFields(const std::string& text, const std::string& file) : file_(file) {
  RepeatedKeyFinder finder;
  try {
    root_ = YAML::Load(text);
    std::istringstream in(text);
    YAML::Parser parser(in);
    // Three documents at most: yaml-cpp 0.7 hands back a token no value starts with (a stray
    // ',') as endless empty documents, all at that token (jbeder/yaml-cpp#1040), and Hydra
    // reads one document only.
    for (int i = 0; i < 3 && parser.HandleNextDocument(finder); ++i) {
    }
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp says only "bad file"
    throw spec::SpecError(file, "", "YAML nested at most " + std::to_string(kYamlMaxDepth) +
                                        " levels deep, as yaml-cpp reads it (deeper at line " +
                                        std::to_string(e.mark.line + 1) + ")");
  } catch (const YAML::Exception& e) {
    throw spec::SpecError(file, "", "valid YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
  }
  const std::vector<YAML::Mark>& starts = finder.documents;
  for (std::size_t i = 1; i < starts.size(); ++i)
    if (starts[i].pos == starts[i - 1].pos)
      throw spec::SpecError(file, "", "valid YAML (line " + std::to_string(starts[i].line + 1) +
                                          ": a token no value starts with, such as a ',' outside [ ] or { })");
  if (starts.size() > 1)
    throw spec::SpecError(file, "", "one YAML document, as Hydra reads a config (another starts at line " +
                                        std::to_string(starts[1].line + 1) + ")");
  if (!finder.found_path.empty())
    throw spec::SpecError(file, finder.found_path, finder.found_what + " (line " + std::to_string(finder.found_line) + ")");
  if (!root_.IsMap()) throw spec::SpecError(file, "", "a YAML mapping of trainer, model and other sections");
}

std::vector<std::string> YamlFields::unconsulted(const std::vector<std::string>& sections,
                                                 const std::vector<std::string>& skip) const {
  std::vector<std::string> out;
  const auto skipped = [&](const std::string& path) {
    for (const std::string& s : skip)
      if (path == s || path.rfind(s + ".", 0) == 0) return true;
    return false;
  };
  const auto walk = [&](const auto& self, const YAML::Node& node, const std::string& path) -> void {
    if (skipped(path) || consulted_.count(path)) return;
    if (!node.IsMap()) {
      out.push_back(path);
      return;
    }
    for (const auto& item : node) {
      if (!item.first.IsScalar()) continue;
      self(self, item.second, path + "." + item.first.Scalar());
    }
  };
  for (const std::string& section : sections) {
    const YAML::Node node = root_[section];
    if (node.IsDefined() && node.IsMap())
      for (const auto& item : node)
        if (item.first.IsScalar()) walk(walk, item.second, section + "." + item.first.Scalar());
  }
  return out;
}

YAML::Node YamlFields::find(const std::string& path) const {
  consulted_.insert(path);
  return lookup(path);
}

YAML::Node YamlFields::lookup(const std::string& path) const {
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

namespace {

// Hydra's marks before an override's key: 2 for ++, 1 for + or ~, else 0.
std::size_t override_marks(const std::string& item) {
  return item.rfind("++", 0) == 0 ? 2 : (item.rfind('+', 0) == 0 || item.rfind('~', 0) == 0) ? 1 : 0;
}

// The values a ~key=value names and the file holds, equal as Hydra compares them (a bool in any case).
bool same_value(const YAML::Node& held, const YAML::Node& given) {
  if (!held.IsScalar() || !given.IsScalar()) return false;
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string a = lower(held.Scalar()), b = lower(given.Scalar());
  return held.Scalar() == given.Scalar() || (a == b && (a == "true" || a == "false"));
}

}  // namespace

void YamlFields::apply_override(const std::string& item, const std::string& shown, const std::string& origin) {
  const std::string& said = shown.empty() ? item : shown;
  const std::string option = origin + " " + said;
  const std::string said_body = said.substr(override_marks(said));
  const std::size_t marks = override_marks(item);
  const bool removing = marks == 1 && item[0] == '~';
  const std::string body = item.substr(marks);
  const std::size_t eq = body.find('=');
  const std::string path = body.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : body.substr(eq + 1);
  bool path_ok = !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos;
  for (char c : path) path_ok = path_ok && c != ' ' && c != '=' && c != '+' && c != '~';
  if (!path_ok || (eq == std::string::npos && !removing))
    throw spec::SpecError(file_, option,
                          "a Hydra override: key.path=value, +key.path=value (a key the file lacks), "
                          "++key.path=value (either) or ~key.path (delete)");
  YAML::Node parsed;
  try {
    parsed = value.empty() ? YAML::Node(std::string()) : YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw spec::SpecError(file_, option, "a value Hydra reads (a number, true/false, null, a string, [a, b] or {k: v}): " + e.msg);
  }
  const YAML::Node existing = lookup(path);
  const bool present = existing.IsDefined(), holds = present && !existing.IsNull();
  if (marks == 0 && !present)
    throw spec::SpecError(file_, option,
                          "a key the file has (Hydra refuses to override a missing key in struct mode); add it with +" +
                              said_body);
  // Hydra's + fills a missing or null key, and merges a list or mapping into any.
  if (marks == 1 && !removing && holds && !parsed.IsSequence() && !parsed.IsMap())
    throw spec::SpecError(file_, option,
                          "a key the file lacks (Hydra refuses to append over an existing one); replace it with " + said_body +
                              ", or add or replace it with +" + said.substr(override_marks(said) == 1 ? 0 : 1));
  const std::size_t dot = path.rfind('.');
  YAML::Node parent = dot == std::string::npos ? YAML::Node(root_) : lookup(path.substr(0, dot));
  const std::string key = path.substr(dot == std::string::npos ? 0 : dot + 1);
  if (removing) {
    if (!holds) throw spec::SpecError(file_, option, "a key the file holds a value at (Hydra cannot delete a missing or null one)");
    if (eq != std::string::npos && !same_value(existing, parsed))
      throw spec::SpecError(file_, option, "the value the file holds at " + path + " (Hydra deletes a key only while it holds the value given)");
    parent.remove(key);
    return;
  }
  if (!present && !(parent.IsDefined() && parent.IsMap())) {
    add(path, "");  // makes the mappings on the way, as Hydra's + does
    parent.reset(dot == std::string::npos ? root_ : lookup(path.substr(0, dot)));  // reset rebinds, = would overwrite
  }
  parent[key] = parsed;
}

bool YamlFields::has(const std::string& path) const {
  const YAML::Node n = find(path);
  return n.IsDefined() && !n.IsNull();
}

std::string YamlFields::scalar(const std::string& path) const {
  const YAML::Node n = find(path);
  if (!n.IsScalar()) throw spec::SpecError(file_, path, "a single value, not a list or a mapping");
  return resolved(n.Scalar(), path, 0);
}

namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The arguments of a resolver call "a, ${b.c}, 2", split at top-level commas.
std::vector<std::string> resolver_arguments(const std::string& text) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : text) {
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == ',' && depth == 0) out.emplace_back();
    else out.back() += c;
  }
  for (auto& a : out) a = trimmed(a);
  return out;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string((long long)v);
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

}  // namespace

// OmegaConf interpolations as the NeMo launcher's training files write them
// (NVIDIA/NeMo-Framework-Launcher@26e42fa9 launcher_scripts/conf/training/*.yaml):
// ${a.b} an absolute key (the launcher mounts a training file under `training.`,
// so ${training.model.x} is this file's model.x), ${.b} a sibling, ${..b} the
// parent's sibling, and the resolvers launcher_scripts/main.py:55-61 registers:
// multiply, divide_ceil, divide_floor. A value with text around an interpolation
// is kept as written; an interpolation to a missing key, another resolver or a
// cycle is refused.
std::string YamlFields::resolved(const std::string& value, const std::string& path, int depth) const {
  if (value.size() < 3 || value.rfind("${", 0) != 0 || value.back() != '}') return value;
  int open = 0;
  for (std::size_t i = 0; i + 1 < value.size(); ++i) {  // the first ${ must close at the end
    if (value[i] == '{') ++open;
    if (value[i] == '}' && --open == 0) return value;
  }
  if (depth > 8) throw spec::SpecError(file_, path, "interpolations at most 8 deep, not a cycle: '" + value + "'");
  const std::string inner = value.substr(2, value.size() - 3);
  auto number_of = [&](const std::string& arg) {
    const std::string text = resolved(arg, path, depth + 1);
    return real_number(text, file_, path);
  };
  if (const std::size_t colon = inner.find(':'); colon != std::string::npos && inner.find('{') > colon) {
    const std::string resolver = inner.substr(0, colon);
    const std::vector<std::string> args = resolver_arguments(inner.substr(colon + 1));
    if (args.size() != 2 || (resolver != "multiply" && resolver != "divide_ceil" && resolver != "divide_floor"))
      throw spec::SpecError(file_, path, "an interpolation the NeMo launcher resolves (multiply, divide_ceil or "
                                         "divide_floor of two values), found '" + value + "'");
    const double a = number_of(args[0]), b = number_of(args[1]);
    if (resolver == "multiply") return number_text(a * b);
    if (b == 0) throw spec::SpecError(file_, path, "a non-zero divisor in '" + value + "'");
    return number_text(resolver == "divide_ceil" ? std::ceil(a / b) : std::floor(a / b));
  }
  std::string target = trimmed(inner);
  if (target.rfind('.', 0) == 0) {  // relative: one dot is this node's mapping, each more one level up
    std::string base = path.substr(0, path.rfind('.') == std::string::npos ? 0 : path.rfind('.'));
    std::size_t dots = 0;
    while (dots < target.size() && target[dots] == '.') ++dots;
    for (std::size_t up = 1; up < dots; ++up) base = base.substr(0, base.rfind('.') == std::string::npos ? 0 : base.rfind('.'));
    target = (base.empty() ? "" : base + ".") + target.substr(dots);
  } else if (target.rfind("training.", 0) == 0 && !find("training").IsDefined()) {
    target = target.substr(9);
  }
  const YAML::Node n = find(target);
  if (!n.IsDefined() || n.IsNull() || !n.IsScalar())
    throw spec::SpecError(file_, path, "an interpolation to a value this file sets, found '" + value + "' (" + target +
                                           " is not set)");
  return resolved(n.Scalar(), target, depth + 1);
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
  if (y.has("trainer.devices")) job.devices_per_instance_option = "trainer.devices";
  job.plan.instances = job.instances;
}

void read_yaml_layer_shape(const YamlFields& y, LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  job.model.layers = int(y.whole("model.num_layers", 1, kBig, 0));
  job.model.hidden = int(y.whole("model.hidden_size", 1, kBig, 0));
  job.model.heads = int(y.whole("model.num_attention_heads", 1, kBig, 0));
  job.model.ffn_hidden = int(y.whole("model.ffn_hidden_size", 1, kBig, 0));
  job.model.experts = int(y.whole("model.num_moe_experts", 1, kBig, 0));
}

void read_yaml_stated_layer(const YamlFields& y, const YamlLayerKeys& k, LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  auto state = [&](const char* key, const std::string& value, std::string (*of_model)(const spec::ModelSpec&)) {
    job.stated.push_back({key, value, of_model});
  };
  auto present = [&](const char* key) { return key[0] != '\0' && y.has(key); };
  if (present(k.kv_heads)) state(k.kv_heads, std::to_string(y.whole(k.kv_heads, 1, kBig, 1)), stated_kv_heads);
  else if (k.kv_heads[0] != '\0' && job.model.heads > 0)  // null or absent: one KV head per query head (both clients)
    state(k.kv_heads, std::to_string(job.model.heads), stated_kv_heads);
  if (present(k.norm)) {
    const std::string norm = y.text(k.norm, "");
    state(k.norm, norm == "layernorm1p" ? "layernorm" : norm, stated_norm);
  }
  if (present(k.activation)) {
    const std::string act = y.text(k.activation, "");
    state(k.activation, act == "fast-swiglu" ? "swiglu" : act == "fast-gelu" ? "gelu" : act, stated_mlp);
  }
  const bool rope = present(k.position) ? y.text(k.position, "") == "rope" : true;
  if (present(k.position)) state(k.position, y.text(k.position, ""), stated_position);
  if (rope && present(k.rope_base)) {
    const double base = y.real(k.rope_base, 10000);
    state(k.rope_base, std::to_string((long long)std::llround(base)), stated_rope_base);
  }
  const bool bias = present(k.bias) ? y.flag(k.bias, true) : false;
  if (present(k.bias)) state(k.bias, bias ? "true" : "false", stated_bias);
  if (present(k.qkv_bias)) state(k.qkv_bias, y.flag(k.qkv_bias, false) && !bias ? "true" : "false", stated_qkv_bias);
  if (present(k.top_k)) state(k.top_k, std::to_string(y.whole(k.top_k, 1, kBig, 2)), stated_top_k);
}

namespace {

// yaml-cpp turns a double into its scalar text with max_digits10 (17)
// significant digits when it is assigned, so a learning rate of 3e-4 reads
// 0.00029999999999999997. Such a scalar (a decimal point and 16 or more digits,
// which no person writes) becomes the shortest text that reads back to the same
// double; integers are left as written.
void shorten_doubles(YAML::Node node) {
  if (node.IsMap()) {
    for (auto entry : node) shorten_doubles(entry.second);
    return;
  }
  if (node.IsSequence()) {
    for (auto item : node) shorten_doubles(item);
    return;
  }
  if (!node.IsScalar()) return;
  const std::string& text = node.Scalar();
  if (text.find('.') == std::string::npos ||
      std::count_if(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) < 16)
    return;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return;
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, value);
    if (std::strtod(shorter, nullptr) == value) {
      node = std::string(shorter);
      return;
    }
  }
}

}  // namespace

std::string yaml_text(const std::string& header, const YAML::Node& root) {
  YAML::Node tidy = YAML::Clone(root);
  shorten_doubles(tidy);
  YAML::Emitter out;
  out << tidy;
  return header + out.c_str() + "\n";
}

}  // namespace trainplan::exporting
