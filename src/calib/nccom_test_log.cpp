#include "calib/nccom_test_log.h"

#include <algorithm>
#include <map>

#include "calib/log_fields.h"
#include "spec/error.h"

namespace trainplan::calib {
namespace {

constexpr double kGiB = 1073741824.0;  // the guide: "gibibytes (1GiB = 1,073,741,824 bytes) per second"
constexpr double kNccomUs = 1e-6;

// The operation words nccom-test takes (the guide's <cc operation> list).
const std::map<std::string, std::string> kOps = {
    {"all_reduce", "all_reduce"}, {"allr", "all_reduce"},         {"all_gather", "all_gather"},
    {"allg", "all_gather"},       {"reduce_scatter", "reduce_scatter"}, {"redsct", "reduce_scatter"},
    {"sendrecv", "sendrecv"}};
const char* const kOtherOps[] = {"all_gatherv", "allgv", "alltoall", "alltoallv", "permute", "all_to_all", "a2a"};

struct Command {
  bool seen = false, op_known = false;
  net::Collective op = net::Collective::all_reduce;
  int ranks = 0, nodes = 1;  // -N defaults to 1 (the guide's CLI table)
};

// The value of an option given as "-r 32", "--nworkers 32" or "--nworkers=32".
bool option_value(const std::vector<std::string>& t, std::size_t& i, const char* short_name, const char* long_name,
                  std::string& value) {
  const std::string& w = t[i];
  const std::string long_eq = std::string(long_name) + "=";
  if (w.rfind(long_eq, 0) == 0) {
    value = w.substr(long_eq.size());
    return true;
  }
  if ((w == short_name || w == long_name) && i + 1 < t.size()) {
    value = t[++i];
    return true;
  }
  return false;
}

Command read_command(const LogLine& l, std::size_t program, const std::string& file) {
  Command c;
  c.seen = true;
  const auto& t = l.tokens;
  for (std::size_t i = program + 1; i < t.size(); ++i) {
    std::string value;
    if (option_value(t, i, "-r", "--nworkers", value)) {
      c.ranks = log_count(value, file, l.number, "-r");
    } else if (option_value(t, i, "-N", "--nnodes", value)) {
      c.nodes = log_count(value, file, l.number, "-N");
    } else if (auto it = kOps.find(t[i]); it != kOps.end()) {
      c.op_known = parse_collective_name(it->second, c.op);
    } else if (std::find(std::begin(kOtherOps), std::end(kOtherOps), t[i]) != std::end(kOtherOps)) {
      throw spec::SpecError(log_where(file, l.number), "operation",
                            "allr, allg, redsct or sendrecv (all_reduce, all_gather, reduce_scatter, sendrecv), got " +
                                log_excerpt(t[i]));
    }
  }
  return c;
}

struct NccomColumns {
  std::size_t count = 0;
  std::ptrdiff_t size = -1, time = -1, algbw = -1, busbw = -1;
};

NccomColumns read_header(const LogLine& l, const std::string& file) {
  NccomColumns c;
  c.count = l.tokens.size();
  for (std::size_t i = 0; i < l.tokens.size(); ++i) {
    const std::string& w = l.tokens[i];
    if (w == "size(B)") c.size = std::ptrdiff_t(i);
    if (w == "algbw(GB/s)") c.algbw = std::ptrdiff_t(i);
    if (w == "busbw(GB/s)") c.busbw = std::ptrdiff_t(i);
    // time(us) (P50, then the average in later releases) or the first of time:avg(us), time:p50(us), ...
    if (c.time < 0 && w.rfind("time", 0) == 0 && w.ends_with("(us)")) c.time = std::ptrdiff_t(i);
  }
  if (c.size != 0 || c.time < 0 || c.algbw < 0 || c.busbw < 0)
    throw spec::SpecError(log_where(file, l.number), "header",
                          "the nccom-test header 'size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)', got " +
                              log_excerpt(l.text));
  return c;
}

}  // namespace

std::vector<LogRun> parse_nccom_test_log(const std::vector<LogLine>& lines, const std::string& file) {
  std::vector<LogRun> runs;
  Command command;
  NccomColumns columns;
  bool table_open = false;
  for (const LogLine& l : lines) {
    const auto& t = l.tokens;
    if (t.empty()) continue;
    const auto program = std::find_if(t.begin(), t.end(), [](const std::string& w) {
      return w == "nccom-test" || w.ends_with("/nccom-test");
    });
    if (program != t.end()) {
      command = read_command(l, std::size_t(program - t.begin()), file);
      table_open = false;
      continue;
    }
    if (t[0] == "size(B)") {
      columns = read_header(l, file);
      LogRun run;
      run.run.source = file;
      run.run.tool = "nccom-test";
      run.header_line = l.number;
      if (command.seen) {
        run.op_known = command.op_known;
        run.run.op = command.op;
        run.run.ranks = command.ranks;
        run.run.instances = command.nodes;
      }
      runs.push_back(std::move(run));
      table_open = true;
      continue;
    }
    if (t[0] == "Avg") {
      table_open = false;
      continue;
    }
    if (!table_open) continue;  // messages around the table
    if (t.size() != columns.count || !is_whole_token(t[0]))
      throw spec::SpecError(log_where(file, l.number), "row",
                            "an nccom-test result row of " + std::to_string(columns.count) +
                                " columns under the size(B) ... busbw(GB/s) header, got " + log_excerpt(l.text));
    const double bytes = double(log_whole(t[0], file, l.number, "size(B)"));
    const double us = log_number(t[columns.time], file, l.number, "time(us)");
    const double algbw = log_number(t[columns.algbw], file, l.number, "algbw(GB/s)");
    const double busbw = log_number(t[columns.busbw], file, l.number, "busbw(GB/s)");
    if (bytes == 0) continue;
    if (!(us > 0)) throw spec::SpecError(log_where(file, l.number), "time(us)", "a positive time in microseconds");
    if (algbw < 0 || busbw < 0) throw spec::SpecError(log_where(file, l.number), "busbw(GB/s)", "a bandwidth >= 0");
    runs.back().run.samples.push_back({bytes, us * kNccomUs, algbw * kGiB, busbw * kGiB, l.number});
  }
  std::erase_if(runs, [](const LogRun& r) { return r.run.samples.empty(); });
  return runs;
}

}  // namespace trainplan::calib
