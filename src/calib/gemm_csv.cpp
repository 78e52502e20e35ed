#include "calib/gemm_csv.h"

#include <filesystem>
#include <string_view>

#include "calib/log_fields.h"
#include "spec/error.h"
#include "spec/text_file.h"

namespace trainplan::calib {
namespace {

const char* const kRequired[] = {"m", "n", "k", "dtype", "seconds", "device"};
const char* const kOptional[] = {"label", "spread"};

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// One CSV line into cells: commas separate, a cell in double quotes may hold commas and "" for a quote.
std::vector<std::string> split_cells(const std::string& line, const std::string& file, int number) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"' && trim(cell).empty()) {
      quoted = was_quoted = true;
      cell.clear();
    } else if (c == ',') {
      cells.push_back(was_quoted ? cell : trim(cell));
      cell.clear();
      was_quoted = false;
    } else {
      cell += c;
    }
  }
  if (quoted) throw spec::SpecError(log_where(file, number), "row", "a closing double quote");
  cells.push_back(was_quoted ? cell : trim(cell));
  return cells;
}

double whole_dimension(const std::string& token, const std::string& file, int line, const std::string& column) {
  const long long v = log_whole(token, file, line, column);
  if (v < 1 || v > (1LL << 31))
    throw spec::SpecError(log_where(file, line), column, "a whole number from 1 to 2^31, got " + log_excerpt(token));
  return double(v);
}

}  // namespace

const std::vector<std::string>& gemm_dtypes() {
  static const std::vector<std::string> dtypes = {"bf16", "fp32", "fp8"};
  return dtypes;
}

GemmCsv parse_gemm_csv(const std::string& text, const std::string& file) {
  GemmCsv out;
  out.file = file;
  std::map<std::string, std::size_t> column;  // name -> index
  std::size_t width = 0;
  int header_line = 0;
  std::string first_device;
  int first_device_line = 0;
  // Spreadsheets save CSV as UTF-8 with a byte-order mark: it is not part of the first cell.
  const std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  const std::string body_text = text.rfind(kUtf8Bom, 0) == 0 ? text.substr(kUtf8Bom.size()) : text;
  for (const LogLine& l : log_lines(body_text)) {
    const std::string line = trim(l.text);
    if (line.empty()) continue;
    if (line[0] == '#') {
      const std::string body = trim(line.substr(1));
      const auto colon = body.find(':');
      if (colon != std::string::npos && colon > 0 && body.find(' ') > colon)
        out.meta[body.substr(0, colon)] = trim(body.substr(colon + 1));
      continue;
    }
    const std::vector<std::string> cells = split_cells(line, file, l.number);
    if (!header_line) {
      header_line = l.number;
      width = cells.size();
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (column.count(cells[i]))
          throw spec::SpecError(log_where(file, l.number), "header", "each column once; '" + cells[i] + "' repeats");
        column[cells[i]] = i;
      }
      for (const char* name : kRequired)
        if (!column.count(name))
          throw spec::SpecError(log_where(file, l.number), "header",
                                std::string("a column named '") + name +
                                    "' (a GEMM CSV names m, n, k, dtype, seconds and device), got " + log_excerpt(line));
      for (const auto& [name, index] : column) {
        bool known = false;
        for (const char* r : kRequired) known = known || name == r;
        for (const char* o : kOptional) known = known || name == o;
        if (!known) out.skipped_columns.push_back(name);
      }
      continue;
    }
    if (cells.size() != width)
      throw spec::SpecError(log_where(file, l.number), "row",
                            std::to_string(width) + " cells as the header on line " + std::to_string(header_line) +
                                " names, got " + std::to_string(cells.size()));
    auto cell = [&](const char* name) { return cells[column.at(name)]; };
    GemmTiming t;
    t.line = l.number;
    t.m = whole_dimension(cell("m"), file, l.number, "m");
    t.n = whole_dimension(cell("n"), file, l.number, "n");
    t.k = whole_dimension(cell("k"), file, l.number, "k");
    t.dtype = cell("dtype");
    bool known_dtype = false;
    for (const auto& d : gemm_dtypes()) known_dtype = known_dtype || d == t.dtype;
    if (!known_dtype)
      throw spec::SpecError(log_where(file, l.number), "dtype",
                            "bf16, fp32 or fp8 (the dtypes hardware descriptors state peaks for), got " +
                                log_excerpt(t.dtype));
    t.seconds = log_number(cell("seconds"), file, l.number, "seconds");
    // A GEMM takes at least a nanosecond and at most a day: outside that the
    // unit is wrong, and its rate would print as "inf%" of the peak.
    if (!(t.seconds >= 1e-9 && t.seconds <= 86400))
      throw spec::SpecError(log_where(file, l.number), "seconds",
                            "a time from 1e-9 to 86400 seconds, got " + log_excerpt(cell("seconds")));
    const std::string device = cell("device");
    if (device.empty()) throw spec::SpecError(log_where(file, l.number), "device", "the device the GEMM ran on, got ''");
    if (first_device.empty()) {
      first_device = device;
      first_device_line = l.number;
    } else if (device != first_device) {
      throw spec::SpecError(log_where(file, l.number), "device",
                            "one device per file (line " + std::to_string(first_device_line) + " names " +
                                log_excerpt(first_device) + "), got " + log_excerpt(device));
    }
    if (column.count("label")) t.label = cell("label");
    if (column.count("spread") && !cell("spread").empty()) {
      t.spread = log_number(cell("spread"), file, l.number, "spread");
      if (t.spread < 0)
        throw spec::SpecError(log_where(file, l.number), "spread", "a share >= 0, got " + log_excerpt(cell("spread")));
    }
    out.rows.push_back(t);
  }
  if (!header_line)
    throw spec::SpecError(file, "", "a GEMM CSV: a header naming m, n, k, dtype, seconds, device and one row per GEMM; "
                                    "the file has no header");
  if (out.rows.empty())
    throw spec::SpecError(log_where(file, header_line), "rows", "at least one GEMM row after the header, got none");
  out.device = first_device;
  return out;
}

GemmCsv read_gemm_csv(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) && std::filesystem::exists(path, ec) &&
      std::filesystem::file_size(path, ec) > kMaxGemmCsvBytes)
    throw spec::SpecError(path, "", "a GEMM CSV of at most 16 MiB");
  return parse_gemm_csv(spec::read_text_file(path), path);
}

}  // namespace trainplan::calib
