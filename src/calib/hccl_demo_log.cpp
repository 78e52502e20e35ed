#include "calib/hccl_demo_log.h"

#include <algorithm>
#include <map>

#include "calib/log_fields.h"
#include "spec/error.h"

namespace trainplan::calib {
namespace {

constexpr double kHcclDemoGB = 1e9;   // common.h formatBW: bytesPerSec / 1e9
constexpr double kHcclDemoMs = 1e-3;  // common.h formatTime: timeInSec * 1e3

// hccl_demo's test types (--test) and stat names (collectiveTestDriver, sendRecvTestDriver).
const std::map<std::string, std::string> kTests = {{"all_reduce", "all_reduce"},
                                                   {"all_gather", "all_gather"},
                                                   {"reduce_scatter", "reduce_scatter"},
                                                   {"send_recv", "sendrecv"},
                                                   {"hcclAllReduce", "all_reduce"},
                                                   {"hcclAllGather", "all_gather"},
                                                   {"hcclReduceScatter", "reduce_scatter"},
                                                   {"hcclSendRecv", "sendrecv"}};

net::Collective op_of(const std::string& name, const std::string& file, int line) {
  net::Collective op{};
  const auto it = kTests.find(name);
  if (it == kTests.end() || !parse_collective_name(it->second, op))
    throw spec::SpecError(log_where(file, line), "collective",
                          "all_reduce, all_gather, reduce_scatter or send_recv (broadcast, reduce and all2all are "
                          "not read), got " + log_excerpt(name));
  return op;
}

// "key=value" inside a token list, e.g. HCCL_NRANKS=8 or dataSize=33554432,
std::string value_of(const std::vector<std::string>& tokens, const std::string& key) {
  for (std::string w : tokens) {
    while (!w.empty() && (w.back() == ',' || w.back() == ')')) w.pop_back();
    if (const std::size_t at = w.find(key + "="); at != std::string::npos && (at == 0 || w[at - 1] == '('))
      return w.substr(at + key.size() + 1);
  }
  return {};
}

double dtype_bytes(const std::string& dtype, const std::string& file, int line) {
  if (dtype == "float") return 4;
  if (dtype == "bfloat16") return 2;
  throw spec::SpecError(log_where(file, line), "dtype", "float or bfloat16, got " + log_excerpt(dtype));
}

// "[BENCHMARK]     Algo Bandwidth : 12.345678 GB/s" -> B/s
double bandwidth_line(const LogLine& l, const std::string& file) {
  const auto colon = std::find(l.tokens.begin(), l.tokens.end(), ":");
  if (colon == l.tokens.end() || colon + 1 == l.tokens.end() || (colon + 2 != l.tokens.end() && colon[2] != "GB/s"))
    throw spec::SpecError(log_where(file, l.number), "bandwidth",
                          "'[BENCHMARK]     ... Bandwidth : X GB/s', got " + log_excerpt(l.text));
  return log_number(colon[1], file, l.number, "bandwidth") * kHcclDemoGB;
}

LogRun new_run(const std::string& file, net::Collective op, int line) {
  LogRun run;
  run.run.source = file;
  run.run.tool = "hccl_demo";
  run.run.op = op;
  run.op_known = true;
  run.header_line = line;
  run.per_rank_input = true;
  return run;
}

class HcclDemoReader {
 public:
  explicit HcclDemoReader(std::string file) : file_(std::move(file)) {}

  void read(const std::vector<LogLine>& lines) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const LogLine& l = lines[i];
      const auto& t = l.tokens;
      if (t.empty()) continue;
      remember_ranks(t, l.number);
      if (t[0] == "[LATENCY")
        throw spec::SpecError(log_where(file_, l.number), "report",
                              "a bandwidth report (hccl_demo --measure bw); a latency report has no bandwidth");
      if ((t[0] == "[BANDWIDTH" && t.size() > 1 && t[1] == "SUMMARY") || (t[0] == "[SUMMARY" && t.size() > 1)) {
        i = summary(lines, i);
      } else if (t[0] == "[BENCHMARK]" && t.size() > 1 && t[1].rfind("hccl", 0) == 0) {
        i = benchmark(lines, i);
      }
    }
  }

  std::vector<LogRun> finish() {
    for (LogRun& r : runs_) {
      r.run.ranks = ranks_;
      if (ranks_ > 0 && per_node_ > 0 && ranks_ % per_node_ == 0) r.run.instances = ranks_ / per_node_;
    }
    std::erase_if(runs_, [](const LogRun& r) { return r.run.samples.empty(); });
    return std::move(runs_);
  }

 private:
  // run_hccl_demo.py logs one command per rank: ... HCCL_NRANKS=16 HCCL_RANKS_PER_NODE=8 ... ./hccl_demo
  void remember_ranks(const std::vector<std::string>& t, int line) {
    if (const std::string n = value_of(t, "HCCL_NRANKS"); is_whole_token(n) && ranks_ == 0)
      ranks_ = log_count(n, file_, line, "HCCL_NRANKS");
    if (const std::string m = value_of(t, "HCCL_RANKS_PER_NODE"); is_whole_token(m) && per_node_ == 0)
      per_node_ = log_count(m, file_, line, "HCCL_RANKS_PER_NODE");
  }

  const LogLine* next_nonempty(const std::vector<LogLine>& lines, std::size_t& i) {
    while (++i < lines.size())
      if (!lines[i].tokens.empty()) return &lines[i];
    return nullptr;
  }

  // [BANDWIDTH SUMMARY REPORT] / (src!=dst, collective=all_reduce, iterations=1) / header / units / rows.
  std::size_t summary(const std::vector<LogLine>& lines, std::size_t i) {
    const int start = lines[i].number;
    const LogLine* stat = next_nonempty(lines, i);
    const std::string test = stat ? value_of(stat->tokens, "collective") : "";
    if (test.empty())
      throw spec::SpecError(log_where(file_, stat ? stat->number : start), "collective",
                            "'(src!=dst, collective=NAME, iterations=N)' after the summary title");
    LogRun run = new_run(file_, op_of(test, file_, stat->number), start);
    const LogLine* header = next_nonempty(lines, i);
    std::vector<std::string> names = header ? header->tokens : std::vector<std::string>{};
    for (auto& w : names)
      if (w == "algo_bw") w = "algoBW";
    const auto col = [&](const char* name) {
      const auto it = std::find(names.begin(), names.end(), name);
      return it == names.end() ? std::ptrdiff_t(-1) : it - names.begin();
    };
    const std::ptrdiff_t time = col("time"), algbw = col("algoBW"), busbw = col("nw_bw");
    if (col("size") != 0 || time < 0 || algbw < 0 || busbw < 0)
      throw spec::SpecError(log_where(file_, header ? header->number : stat->number), "header",
                            "the hccl_demo header 'size count type redop time algoBW nw_bw', got " +
                                log_excerpt(header ? header->text : ""));
    std::size_t last = i;
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      const LogLine& l = lines[j];
      if (l.tokens.empty()) break;
      if (l.tokens[0] == "(B)") {
        last = j;
        continue;
      }
      if (!is_whole_token(l.tokens[0])) break;
      std::vector<std::string> values;  // without the " ms" and " GB/s" that formatTime / formatBW append
      for (const auto& w : l.tokens)
        if (w != "ms" && w != "GB/s") values.push_back(w);
      if (values.size() != names.size())
        throw spec::SpecError(log_where(file_, l.number), "row",
                              "an hccl_demo summary row of " + std::to_string(names.size()) + " values (" +
                                  header->text.substr(header->text.find_first_not_of(' ')) + "), got " +
                                  log_excerpt(l.text));
      const double bytes = double(log_whole(values[0], file_, l.number, "size"));
      const double ms = log_number(values[time], file_, l.number, "time");
      const double alg = log_number(values[algbw], file_, l.number, "algoBW");
      const double bus = log_number(values[busbw], file_, l.number, "nw_bw");
      if (!(ms > 0)) throw spec::SpecError(log_where(file_, l.number), "time", "a positive time in ms");
      if (bytes > 0) run.run.samples.push_back({bytes, ms * kHcclDemoMs, alg * kHcclDemoGB, bus * kHcclDemoGB, l.number});
      last = j;
    }
    runs_.push_back(std::move(run));
    return last;
  }

  // [BENCHMARK] hcclAllReduce(dataSize=S, count=C, dtype=float, iterations=N) + two bandwidth lines.
  std::size_t benchmark(const std::vector<LogLine>& lines, std::size_t i) {
    const LogLine& head = lines[i];
    const std::string stat = head.tokens[1].substr(0, head.tokens[1].find('('));
    LogRun run = new_run(file_, op_of(stat, file_, head.number), head.number);
    const std::string size = value_of(head.tokens, "dataSize"), count = value_of(head.tokens, "count");
    double bytes = 0;
    if (!size.empty()) {
      bytes = double(log_whole(size, file_, head.number, "dataSize"));
    } else if (!count.empty()) {  // older releases print the element count only
      bytes = double(log_whole(count, file_, head.number, "count")) * dtype_bytes(value_of(head.tokens, "dtype"), file_, head.number);
    } else {
      throw spec::SpecError(log_where(file_, head.number), "dataSize",
                            "'hcclX(dataSize=S, count=C, dtype=T, iterations=N)', got " + log_excerpt(head.text));
    }
    double nw = -1, algo = -1;
    std::size_t j = i;
    while (j + 1 < lines.size() && !lines[j + 1].tokens.empty() && lines[j + 1].tokens[0] == "[BENCHMARK]" &&
           lines[j + 1].tokens.size() > 1 && lines[j + 1].tokens[1].rfind("hccl", 0) != 0) {
      const LogLine& l = lines[++j];
      if (l.tokens[1] == "NW") nw = bandwidth_line(l, file_);
      if (l.tokens[1] == "Algo") algo = bandwidth_line(l, file_);
      if (l.tokens[1] == "Host")
        throw spec::SpecError(log_where(file_, l.number), "report",
                              "a bandwidth report (hccl_demo --measure bw); a latency report has no bandwidth");
    }
    if (nw < 0 || algo <= 0)
      throw spec::SpecError(log_where(file_, head.number), "Algo Bandwidth",
                            "'NW Bandwidth : X GB/s' and 'Algo Bandwidth : Y GB/s' (Y > 0) lines after the [BENCHMARK] title");
    run.run.samples.push_back({bytes, bytes / algo, algo, nw, head.number});  // algoBW = size / time (describeStat)
    runs_.push_back(std::move(run));
    return j;
  }

  std::string file_;
  std::vector<LogRun> runs_;
  int ranks_ = 0, per_node_ = 0;
};

}  // namespace

std::vector<LogRun> parse_hccl_demo_log(const std::vector<LogLine>& lines, const std::string& file) {
  HcclDemoReader reader(file);
  reader.read(lines);
  return reader.finish();
}

}  // namespace trainplan::calib
