#include "spec/json_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "spec/closest_name.h"
#include "spec/error.h"

namespace trainplan::spec {
namespace {

bool is_annotation(const std::string& key) { return key.ends_with("note") || key.ends_with("notes"); }

}  // namespace

bool JsonReader::has(const nlohmann::json& object, const std::string& key) const {
  return object.is_object() && object.contains(key);
}

void check_known_keys(const nlohmann::json& object, const std::string& file, const std::string& path,
                      const std::vector<std::string>& known) {
  if (!object.is_object()) return;
  for (const auto& [key, value] : object.items()) {
    if (is_annotation(key) || std::find(known.begin(), known.end(), key) != known.end()) continue;
    // Only the refused key is measured against the known ones, and only a short
    // one: a key of a megabyte is no typo, and its table took minutes.
    std::string closest;
    size_t best = std::string::npos;
    if (key.size() <= 256)
      for (const std::string& k : known)
        if (const size_t d = edit_distance(key, k); d < best) best = d, closest = k;
    std::string expected = "an unknown field";
    if (best <= 3) expected += "; did you mean " + closest + "?";
    throw SpecError(file, path + "." + key, expected);
  }
}

void JsonReader::fail(const std::string& path, const std::string& expected) const {
  throw SpecError(file_, path, expected);
}

const nlohmann::json& JsonReader::field(const nlohmann::json& object, const std::string& path,
                                        const std::string& key) const {
  if (!object.is_object()) fail(path, "expected an object");
  auto it = object.find(key);
  if (it == object.end()) fail(path + "." + key, "missing field");
  return *it;
}

const nlohmann::json& JsonReader::object(const nlohmann::json& parent, const std::string& path,
                                         const std::string& key) const {
  const auto& value = field(parent, path, key);
  if (!value.is_object()) fail(path + "." + key, "expected an object");
  return value;
}

std::string JsonReader::string(const nlohmann::json& object, const std::string& path,
                               const std::string& key) const {
  const auto& value = field(object, path, key);
  if (!value.is_string()) fail(path + "." + key, "expected a string");
  return value.get<std::string>();
}

bool JsonReader::boolean(const nlohmann::json& object, const std::string& path,
                         const std::string& key) const {
  const auto& value = field(object, path, key);
  if (!value.is_boolean()) fail(path + "." + key, "expected true or false");
  return value.get<bool>();
}

double JsonReader::number_at(const nlohmann::json& value, const std::string& path, bool allow_zero) const {
  if (!value.is_number()) fail(path, "expected a number");
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < 0 || (!allow_zero && x == 0))
    fail(path, std::string("expected a number ") + (allow_zero ? ">= 0" : "> 0") + ", got " + value.dump());
  return x;
}

double JsonReader::positive(const nlohmann::json& object, const std::string& path, const std::string& key,
                            bool allow_zero) const {
  const auto& value = field(object, path, key);
  if (value.is_object()) return number_at(field(value, path + "." + key, "value"), path + "." + key + ".value", allow_zero);
  return number_at(value, path + "." + key, allow_zero);
}

int JsonReader::positive_int(const nlohmann::json& object, const std::string& path, const std::string& key,
                             bool allow_zero) const {
  const auto& raw = field(object, path, key);
  const auto& value = raw.is_object() ? field(raw, path + "." + key, "value") : raw;
  const std::string where = path + "." + key + (raw.is_object() ? ".value" : "");
  if (!value.is_number_integer()) fail(where, "expected an integer");
  const auto x = value.get<long long>();
  if (x < 0 || (!allow_zero && x == 0) || x > (1LL << 31) - 1)
    fail(where, std::string("expected an integer ") + (allow_zero ? ">= 0" : "> 0") + ", got " + value.dump());
  return int(x);
}

double JsonReader::number(const nlohmann::json& object, const std::string& path, const std::string& key, double lo,
                          double hi, bool lo_inclusive) const {
  const auto& value = field(object, path, key);
  const std::string where = path + "." + key;
  if (!value.is_number()) fail(where, "expected a number");
  const double x = value.get<double>();
  if (std::isfinite(x) && (lo_inclusive ? x >= lo : x > lo) && x <= hi) return x;
  char range[96];
  if (std::isinf(hi))
    std::snprintf(range, sizeof range, "%s %.15g", lo_inclusive ? ">=" : ">", lo);
  else
    std::snprintf(range, sizeof range, "in %s%.15g, %.15g]", lo_inclusive ? "[" : "(", lo, hi);
  fail(where, std::string("expected a number ") + range + ", got " + value.dump());
}

int JsonReader::whole(const nlohmann::json& object, const std::string& path, const std::string& key, int lo,
                      int hi) const {
  const auto& value = field(object, path, key);
  const bool in_range =
      value.is_number_unsigned()
          ? hi >= 0 && value.get<unsigned long long>() <= static_cast<unsigned long long>(hi) &&
                static_cast<long long>(value.get<unsigned long long>()) >= lo
          : value.is_number_integer() && value.get<long long>() >= lo && value.get<long long>() <= hi;
  if (!in_range)
    fail(path + "." + key, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                               ", got " + value.dump());
  return int(value.get<long long>());
}

double JsonReader::sourced(const nlohmann::json& object, const std::string& path, const std::string& key,
                           bool allow_zero) const {
  const auto& value = field(object, path, key);
  const std::string where = path + "." + key;
  if (!value.is_object()) fail(where, "expected {\"value\": number, \"source\": \"...\"}: a published figure carries its source");
  const auto& source = field(value, where, "source");
  if (!source.is_string() || source.get<std::string>().empty()) fail(where + ".source", "expected a non-empty string");
  return number_at(field(value, where, "value"), where + ".value", allow_zero);
}

std::string JsonReader::choice(const nlohmann::json& object, const std::string& path, const std::string& key,
                               std::initializer_list<const char*> allowed) const {
  const std::string value = string(object, path, key);
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return value;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  fail(path + "." + key, "expected one of " + list + ", got \"" + value + "\"");
}

}  // namespace trainplan::spec
