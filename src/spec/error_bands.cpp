#include "spec/error_bands.h"

#include "spec/json_reader.h"
#include "spec/load.h"
#include "spec/text_file.h"

namespace trainplan::spec {
namespace {

// A quantile of a relative error: more than -100% (a prediction of nothing).
double error_quantile(const JsonReader& r, const nlohmann::json& band, const std::string& path, const std::string& key) {
  const nlohmann::json& v = r.field(band, path, key);
  if (!v.is_number() || v.get<double>() <= -1.0 || v.get<double>() > 100.0)
    r.fail(path + "." + key, "a relative error above -1 and at most 100 ((predicted - measured) / measured)");
  return v.get<double>();
}

ErrorBand band_from_json(const JsonReader& r, const nlohmann::json& parent, const std::string& path,
                         const std::string& key) {
  const nlohmann::json& j = r.object(parent, path, key);
  const std::string at = path + "." + key;
  r.only_keys(j, at, {"runs", "low", "median", "high"});
  ErrorBand b;
  b.runs = r.positive_int(j, at, "runs", /*allow_zero=*/true);  // a corpus (or --stack) with no such run
  b.low = error_quantile(r, j, at, "low");
  b.median = error_quantile(r, j, at, "median");
  b.high = error_quantile(r, j, at, "high");
  if (!(b.low <= b.median && b.median <= b.high)) r.fail(at, "low <= median <= high");
  return b;
}

nlohmann::json band_to_json(const ErrorBand& b) {
  return {{"runs", b.runs}, {"low", b.low}, {"median", b.median}, {"high", b.high}};
}

}  // namespace

ErrorBands error_bands_from_json(const nlohmann::json& j, const std::string& file) {
  const JsonReader r(file);
  if (!j.is_object()) r.fail("$", "an object with coverage, computed_on, throughput, throughput_by_family and memory");
  r.only_keys(j, "$", {"coverage", "computed_on", "throughput", "throughput_by_family", "memory", "memory_families", "ranking"});
  ErrorBands bands;
  bands.coverage = r.positive(j, "$", "coverage");
  if (bands.coverage >= 1) r.fail("$.coverage", "a share between 0 and 1 (0.8: the central 80% of the runs)");
  bands.computed_on = r.string(j, "$", "computed_on");
  bands.throughput = band_from_json(r, j, "$", "throughput");
  const nlohmann::json& families = r.object(j, "$", "throughput_by_family");
  for (auto it = families.begin(); it != families.end(); ++it)
    bands.throughput_by_family[it.key()] = band_from_json(r, families, "$.throughput_by_family", it.key());
  bands.memory = band_from_json(r, j, "$", "memory");
  if (r.has(j, "ranking")) bands.ranking = band_from_json(r, j, "$", "ranking");
  const nlohmann::json& families_of_memory = r.field(j, "$", "memory_families");
  if (!families_of_memory.is_array()) r.fail("$.memory_families", "an array of accelerator family names");
  for (const auto& f : families_of_memory) {
    if (!f.is_string()) r.fail("$.memory_families", "an array of accelerator family names");
    bands.memory_families.push_back(f.get<std::string>());
  }
  return bands;
}

nlohmann::json error_bands_to_json(const ErrorBands& bands) {
  nlohmann::json j;
  j["coverage"] = bands.coverage;
  j["computed_on"] = bands.computed_on;
  j["throughput"] = band_to_json(bands.throughput);
  nlohmann::json families = nlohmann::json::object();
  for (const auto& [family, band] : bands.throughput_by_family) families[family] = band_to_json(band);
  j["throughput_by_family"] = families;
  j["memory"] = band_to_json(bands.memory);
  j["memory_families"] = bands.memory_families;
  j["ranking"] = band_to_json(bands.ranking);
  return j;
}

std::string default_error_bands_file() { return data_root() + "/data/error-bands.json"; }

ErrorBands load_error_bands(const std::string& path) { return error_bands_from_json(read_json_file(path), path); }

void save_error_bands(const ErrorBands& bands, const std::string& path) {
  write_text_file(path, error_bands_to_json(bands).dump(2) + "\n", "error bands file");
}

}  // namespace trainplan::spec
