#include "calib/collective_log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "calib/bus_bandwidth.h"
#include "calib/hccl_demo_log.h"
#include "calib/log_fields.h"
#include "calib/nccl_tests_log.h"
#include "calib/nccom_test_log.h"
#include "spec/error.h"
#include "spec/text_file.h"

namespace trainplan::calib {
namespace {

// Printed figures carry 2-3 significant digits at worst; ratios of them agree to this.
constexpr double kRatioTolerance = 0.03;
// Below this printed algbw (B/s) rounding to 0.01 GB/s can exceed the tolerance; such rows are not checked.
constexpr double kCheckedAlgbw = 1e9;
// Every tool prints bandwidth to 0.01 GB/s (nccom-test GiB/s): a printed algbw
// more than one such unit (and the ratio tolerance) away from size / time
// cannot come from that row's size and time, at any bandwidth.
constexpr double kPrintedBandwidthUnit = 1.1e7;
// What a collective benchmark can print: a size from one byte to a petabyte, a
// time from 10 ns to a day, a bandwidth up to 100 TB/s per rank.
constexpr double kMaxBytes = 1e15, kMinSeconds = 1e-8, kMaxSeconds = 86400, kMaxBandwidth = 1e14;

std::string fixed(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string general(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string ranks_text(int n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); }

std::string factor_text(net::Collective op) {
  switch (op) {
    case net::Collective::all_reduce: return "2(n-1)/n";
    case net::Collective::all_gather:
    case net::Collective::reduce_scatter: return "(n-1)/n";
    case net::Collective::point_to_point: return "1";
  }
  return "?";
}

// The sample whose printed algbw is largest: the most significant digits.
const CollectiveSample* best_printed(const CollectiveRun& run) {
  const CollectiveSample* best = nullptr;
  for (const auto& s : run.samples)
    if (!best || s.algbw_bytes_per_s > best->algbw_bytes_per_s) best = &s;
  return best;
}

void resolve_ranks(LogRun& r, const LogHints& hints, const std::string& where) {
  CollectiveRun& run = r.run;
  if (run.ranks > 0 && hints.ranks > 0 && run.ranks != hints.ranks)
    throw spec::SpecError(where, "ranks", "agreement: the log says " + ranks_text(run.ranks) + ", --ranks says " +
                                              std::to_string(hints.ranks));
  if (run.ranks == 0) {
    if (hints.ranks == 0)
      throw spec::SpecError(where, "ranks",
                            "the number of ranks, which this " + run.tool + " log does not state (" +
                                (run.tool == "nccl-tests" ? "no '#  Rank N ...' lines"
                                 : run.tool == "nccom-test" ? "no 'nccom-test -r N ...' command line"
                                                             : "no HCCL_NRANKS= command line") +
                                "): give --ranks N");
    run.ranks = hints.ranks;
  }
  if (run.ranks < 2) throw spec::SpecError(where, "ranks", "at least 2 ranks (a collective on one rank moves nothing)");
  if (run.instances > 0 && hints.instances > 0 && run.instances != hints.instances)
    throw spec::SpecError(where, "instances", "agreement: the log says " + std::to_string(run.instances) +
                                                  " instances, --instances says " + std::to_string(hints.instances));
  if (run.instances == 0) {
    run.instances = hints.instances > 0 ? hints.instances : 1;
    if (hints.instances == 0)
      run.notes.push_back("the log does not say how many instances the " + ranks_text(run.ranks) +
                          " span: one assumed (--instances M says otherwise)");
  }
  if (run.ranks % run.instances != 0)
    throw spec::SpecError(where, "instances", "a count that divides the " + ranks_text(run.ranks) + ", got " +
                                                  std::to_string(run.instances));
}

void resolve_op(LogRun& r, const LogHints& hints, const std::string& where) {
  CollectiveRun& run = r.run;
  if (r.op_known) {
    if (hints.op && *hints.op != run.op)
      throw spec::SpecError(where, "op", std::string("agreement: the log is ") + collective_name(run.op) +
                                             ", --op says " + collective_name(*hints.op));
    return;
  }
  if (hints.op) {
    run.op = *hints.op;
    return;
  }
  // nccl-tests before 2025 does not print the program's name: its redop column ("sum" for
  // all-reduce and reduce-scatter, "none" for all-gather and sendrecv) and the busbw/algbw
  // ratio (nccl-tests' factor) tell the four apart.
  std::vector<net::Collective> candidates;
  if (r.redop == "none") {
    candidates = {net::Collective::all_gather, net::Collective::point_to_point};
  } else if (!r.redop.empty()) {
    candidates = {net::Collective::all_reduce, net::Collective::reduce_scatter};
  }
  const CollectiveSample* s = best_printed(run);
  std::vector<net::Collective> fits;
  if (s && s->algbw_bytes_per_s >= kCheckedAlgbw)
    for (net::Collective c : candidates)
      if (std::abs(s->busbw_bytes_per_s / s->algbw_bytes_per_s / bus_factor(c, run.ranks) - 1) <= kRatioTolerance)
        fits.push_back(c);
  if (fits.size() != 1)
    throw spec::SpecError(where, "op",
                          "the operation, which this log does not name (no '# Collective test starting:' line, nor a "
                          "redop column and busbw/algbw ratio that single it out): give --op all_reduce, all_gather, "
                          "reduce_scatter or sendrecv");
  run.op = fits.front();
  run.notes.push_back(std::string("operation ") + collective_name(run.op) + " told from redop '" + r.redop +
                      "' and busbw/algbw = " + fixed(s->busbw_bytes_per_s / s->algbw_bytes_per_s));
}

// The printed bandwidths must follow from the printed time and size with nccl-tests' factor.
void check_consistent(const CollectiveRun& run, const std::string& file) {
  for (const CollectiveSample& row : run.samples) {
    const std::string where = log_where(file, row.line);
    if (!(row.bytes >= 1 && row.bytes <= kMaxBytes))
      throw spec::SpecError(where, "size", "1 B to 1 PB, got " + fixed(row.bytes, 0) + " B");
    if (!(row.seconds >= kMinSeconds && row.seconds <= kMaxSeconds))
      throw spec::SpecError(where, "time", "10 ns to a day, got " + general(row.seconds) + " s");
    if (!(row.algbw_bytes_per_s >= 0 && row.algbw_bytes_per_s <= kMaxBandwidth &&
          row.busbw_bytes_per_s >= 0 && row.busbw_bytes_per_s <= kMaxBandwidth))
      throw spec::SpecError(where, "algbw", "0 to 100 TB/s, got " + general(row.algbw_bytes_per_s / 1e9) +
                                                " GB/s (busbw " + general(row.busbw_bytes_per_s / 1e9) + ")");
    const double computed = algbw_bytes_per_s(row.bytes, row.seconds);
    if (std::abs(row.algbw_bytes_per_s - computed) > kPrintedBandwidthUnit + kRatioTolerance * computed)
      throw spec::SpecError(where, "time", "a time that gives the row's algbw (" + fixed(row.algbw_bytes_per_s / 1e9) +
                                               " GB/s) from its size, got size / time = " +
                                               general(computed / 1e9) + " GB/s");
  }
  const CollectiveSample* s = best_printed(run);
  if (!s || s->algbw_bytes_per_s < kCheckedAlgbw) return;
  const double algbw = algbw_bytes_per_s(s->bytes, s->seconds);
  if (std::abs(s->algbw_bytes_per_s / algbw - 1) > kRatioTolerance)
    throw spec::SpecError(log_where(file, s->line), "algbw",
                          "size / time = " + fixed(algbw / 1e9) + " GB/s as the log's algbw column (" +
                              run.tool + " units), got " + fixed(s->algbw_bytes_per_s / 1e9) + " GB/s");
  const double ratio = s->busbw_bytes_per_s / s->algbw_bytes_per_s, factor = bus_factor(run.op, run.ranks);
  if (std::abs(ratio / factor - 1) > kRatioTolerance)
    throw spec::SpecError(log_where(file, s->line), "busbw",
                          "busbw / algbw = " + factor_text(run.op) + " = " + fixed(factor) + " for " +
                              collective_name(run.op) + " on " + ranks_text(run.ranks) + ", got " + fixed(ratio) +
                              ": are the operation (--op) and ranks (--ranks) right?");
}

CollectiveRun resolve(LogRun r, const LogHints& hints, const std::string& file) {
  const std::string where = log_where(file, r.header_line);
  resolve_ranks(r, hints, where);
  resolve_op(r, hints, where);
  if (r.per_rank_input && r.run.op == net::Collective::all_gather)
    for (auto& s : r.run.samples) {  // hccl_demo: size and algoBW count one rank's input
      s.bytes *= r.run.ranks;
      s.algbw_bytes_per_s *= r.run.ranks;
    }
  check_consistent(r.run, file);
  return std::move(r.run);
}

bool is_hccl_demo_header(const LogLine& l) {
  const auto& t = l.tokens;
  return t.size() >= 2 && (((t[0] == "[BANDWIDTH" || t[0] == "[LATENCY") && t[1] == "SUMMARY") ||
                           (t[0] == "[SUMMARY" && t[1] == "REPORT]") ||
                           (t[0] == "[BENCHMARK]" && t[1].rfind("hccl", 0) == 0));
}
bool is_nccom_test_header(const LogLine& l) { return !l.tokens.empty() && l.tokens[0] == "size(B)"; }
bool is_nccl_tests_header(const LogLine& l) {
  return !l.tokens.empty() && l.tokens[0][0] == '#' && l.text.find("size") != std::string::npos &&
         l.text.find("busbw") != std::string::npos;
}

}  // namespace

const char* to_string(LogFormat format) {
  switch (format) {
    case LogFormat::nccl_tests: return "nccl-tests";
    case LogFormat::nccom_test: return "nccom-test";
    case LogFormat::hccl_demo: return "hccl_demo";
  }
  return "?";
}

LogFormat detect_log_format(const std::vector<LogLine>& lines, const std::string& file) {
  bool hccl_demo = false, nccom_test = false, nccl_tests = false;
  for (const LogLine& l : lines) {
    hccl_demo = hccl_demo || is_hccl_demo_header(l);
    nccom_test = nccom_test || is_nccom_test_header(l);
    nccl_tests = nccl_tests || is_nccl_tests_header(l);
  }
  std::vector<LogFormat> found;
  if (hccl_demo) found.push_back(LogFormat::hccl_demo);
  if (nccom_test) found.push_back(LogFormat::nccom_test);
  if (nccl_tests) found.push_back(LogFormat::nccl_tests);
  // A file of two tools' output (logs concatenated) would be read as the first
  // alone, the rest dropped: one tool's log per file.
  if (found.size() > 1)
    throw spec::SpecError(file, "", std::string("one tool's log per file, found the table headers of both ") +
                                        to_string(found[0]) + " and " + to_string(found[1]) +
                                        " (give each log as its own file)");
  if (found.size() == 1) return found.front();
  throw spec::SpecError(file, "",
                        "nccl-tests, nccom-test or hccl_demo output; found no result table header (nccl-tests "
                        "'# size count type redop root time algbw busbw', nccom-test 'size(B) ... busbw(GB/s)', "
                        "hccl_demo '[BANDWIDTH SUMMARY REPORT]' or '[BENCHMARK] hccl...')");
}

std::vector<CollectiveRun> read_collective_log(const std::string& text, const std::string& file,
                                               const LogHints& hints) {
  if (!is_utf8(file))  // each run's source in the calibration file
    throw spec::SpecError(file, "", "a file name in UTF-8 (the calibration file records where its runs came from)");
  const std::vector<LogLine> lines = log_lines(text);  // split once: a log can be 16 MiB
  const LogFormat format = detect_log_format(lines, file);
  std::vector<LogRun> found = format == LogFormat::nccl_tests   ? parse_nccl_tests_log(lines, file)
                              : format == LogFormat::nccom_test ? parse_nccom_test_log(lines, file)
                                                                : parse_hccl_demo_log(lines, file);
  if (found.empty())
    throw spec::SpecError(file, "", std::string("at least one result row under the ") + to_string(format) +
                                        " table header");
  // Tables of the same operation on the same ranks (a sweep split over several invocations) join.
  std::vector<CollectiveRun> runs;
  for (LogRun& r : found) {
    CollectiveRun run = resolve(std::move(r), hints, file);
    auto same = std::find_if(runs.begin(), runs.end(), [&](const CollectiveRun& o) {
      return o.op == run.op && o.ranks == run.ranks && o.instances == run.instances;
    });
    if (same == runs.end()) {
      runs.push_back(std::move(run));
    } else {
      same->samples.insert(same->samples.end(), run.samples.begin(), run.samples.end());
      for (auto& n : run.notes)
        if (std::find(same->notes.begin(), same->notes.end(), n) == same->notes.end()) same->notes.push_back(n);
    }
  }
  for (auto& run : runs)
    std::stable_sort(run.samples.begin(), run.samples.end(),
                     [](const CollectiveSample& a, const CollectiveSample& b) { return a.bytes < b.bytes; });
  return runs;
}

std::vector<CollectiveRun> load_collective_log(const std::string& path, const LogHints& hints) {
  return read_collective_log(spec::read_text_file(path), path, hints);
}

}  // namespace trainplan::calib
