// How far the model's predictions fell from published measurements it was not
// fitted on: per figure, quantiles of (predicted - measured) / measured. Written
// by `trainplan validate --write-error-bands`, read by estimate to put a range
// on a new prediction. Plain data and its JSON file; a bad field throws
// SpecError naming the file and the JSON path.
#pragma once
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace trainplan::spec {

// Quantiles of the signed relative error over `runs` runs: `low` and `high`
// bound the central `coverage` share of them (ErrorBands::coverage).
struct ErrorBand {
  int runs = 0;
  double low = 0, median = 0, high = 0;
};

inline constexpr int kMinRunsForRanking = 4;

struct ErrorBands {
  double coverage = 0.8;  // share of the runs between low and high
  std::string computed_on;  // the corpus and the hold-out, in words
  ErrorBand throughput;    // every timed run, each priced as estimate would with its own source left out of the fit
  std::map<std::string, ErrorBand> throughput_by_family;  // accelerator family -> band
  ErrorBand memory;        // every run with measured memory (no fitted term: in and out of sample alike)
  // Between two runs of one source: each timed run's held-out error less its
  // source's median, over sources with kMinRunsForRanking runs or more. How far
  // apart two plans of one job must be predicted before their order means
  // something; optional in files (runs 0: not known).
  ErrorBand ranking;
  std::vector<std::string> memory_families;  // the accelerator families those memory runs ran on
};

// data/error-bands.json under spec::data_root(): the bands shipped with the corpus.
std::string default_error_bands_file();

ErrorBands error_bands_from_json(const nlohmann::json& j, const std::string& file);
nlohmann::json error_bands_to_json(const ErrorBands& bands);
ErrorBands load_error_bands(const std::string& path);
void save_error_bands(const ErrorBands& bands, const std::string& path);

}  // namespace trainplan::spec
