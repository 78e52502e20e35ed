// GEMM timings from a CSV file (tools/measure_gemm.py writes one): a header
// naming the columns m, n, k, dtype, seconds and device in any order (label
// and spread optional; other columns are skipped and listed), then one GEMM per
// line. Lines starting with '#' are comments; "# key: value" ones are kept as
// metadata (threads, tool, model, plan). A bad line throws
// SpecError("<file>:<line>", <column>, what was expected): one line of text.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace trainplan::calib {

struct GemmTiming {
  double m = 0, n = 0, k = 0;  // C (m x n) = A (m x k) * B (k x n), as the cost model names them
  std::string dtype;           // bf16, fp32 or fp8
  double seconds = 0;          // one call, median of the repetitions
  double spread = 0;           // (p90 - p10) / median where the file gives it
  std::string label;           // "qkv forward", "mlp-down wgrad"
  int line = 0;                // in the file, 1-based
  double flops() const { return 2 * m * n * k; }
};

struct GemmCsv {
  std::string file;
  std::string device;  // the device every row names
  std::vector<GemmTiming> rows;
  std::map<std::string, std::string> meta;  // from "# key: value" comments
  std::vector<std::string> skipped_columns;
};

// The dtypes a row may name: those a hardware descriptor states a peak for.
const std::vector<std::string>& gemm_dtypes();

// Files above this are refused before reading (a sweep of every shape of every model is far smaller).
inline constexpr unsigned long long kMaxGemmCsvBytes = 16ull << 20;

GemmCsv parse_gemm_csv(const std::string& text, const std::string& file);
GemmCsv read_gemm_csv(const std::string& path);

}  // namespace trainplan::calib
