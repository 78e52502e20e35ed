#include "calib/json_fields.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "spec/error.h"

namespace trainplan::calib {

using json = nlohmann::json;

const json& member(const json& j, const char* key, const std::string& file, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) throw spec::SpecError(file, path + "." + key, "a required field, missing");
  return j[key];
}

double positive_number(const json& j, const char* key, const std::string& file, const std::string& path) {
  const json& v = member(j, key, file, path);
  if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
    throw spec::SpecError(file, path + "." + key, "a positive number");
  return v.get<double>();
}

int whole(const json& j, const char* key, const std::string& file, const std::string& path, int lo) {
  const json& v = member(j, key, file, path);
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > (1 << 24))
    throw spec::SpecError(file, path + "." + key, "a whole number from " + std::to_string(lo) + " to 2^24");
  return v.get<int>();
}

std::string text(const json& j, const char* key, const std::string& file, const std::string& path) {
  const json& v = member(j, key, file, path);
  if (!v.is_string()) throw spec::SpecError(file, path + "." + key, "a string");
  return v.get<std::string>();
}

}  // namespace trainplan::calib
