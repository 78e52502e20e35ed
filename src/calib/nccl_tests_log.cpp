#include "calib/nccl_tests_log.h"

#include <algorithm>
#include <set>

#include "calib/log_fields.h"
#include "spec/error.h"

namespace trainplan::calib {
namespace {

constexpr double kNcclTestsGB = 1e9;  // nccl-tests' GetBw functions divide by 1.0E9
constexpr double kNcclTestsUs = 1e-6;

// The tokens of a '#' line without its leading '#'s.
std::vector<std::string> comment_words(const LogLine& line) {
  std::vector<std::string> words = line.tokens;
  while (!words.empty() && words.front().find_first_not_of('#') == std::string::npos) words.erase(words.begin());
  if (!words.empty() && words.front()[0] == '#') words.front() = words.front().substr(words.front().find_first_not_of('#'));
  return words;
}

std::ptrdiff_t index_of(const std::vector<std::string>& words, const std::string& w) {
  const auto it = std::find(words.begin(), words.end(), w);
  return it == words.end() ? -1 : it - words.begin();
}

struct Layout {
  std::ptrdiff_t redop = -1, root = -1, time = -1;  // column of the out-of-place time; algbw, busbw follow
};

class NcclTestsReader {
 public:
  explicit NcclTestsReader(std::string file) : file_(std::move(file)) { start(); }

  void line(const LogLine& l) {
    if (l.tokens.empty()) return;
    if (l.tokens.front()[0] == '#') return comment(l);
    if (!table_open_) return;  // launcher and library messages around the table
    if (l.text.find(" NCCL INFO ") != std::string::npos || l.text.find(" NCCL WARN ") != std::string::npos) return;
    row(l);
  }

  std::vector<LogRun> finish() {
    flush();
    return std::move(runs_);
  }

 private:
  void start() {
    current_ = LogRun{};
    current_.run.source = file_;
    current_.run.tool = "nccl-tests";
    ranks_.clear();
    hosts_.clear();
    layout_ = {};
    table_open_ = false;
  }

  void flush() {
    if (current_.run.samples.empty()) return;
    if (!ranks_.empty()) current_.run.ranks = static_cast<int>(ranks_.size());
    if (!hosts_.empty()) current_.run.instances = static_cast<int>(hosts_.size());
    runs_.push_back(std::move(current_));
  }

  // A marker of a new run starts one when the current run already has rows.
  void new_run_marker() {
    if (current_.run.samples.empty()) return;
    flush();
    start();
  }

  void comment(const LogLine& l) {
    const std::vector<std::string> w = comment_words(l);
    if (w.empty()) return;
    if (w.size() >= 4 && w[0] == "Collective" && w[1] == "test" && w[2] == "starting:") {
      new_run_marker();
      program(w[3], l.number);
    } else if (w[0] == "nThread") {
      new_run_marker();
    } else if (w[0] == "Rank" && w.size() >= 2 && is_whole_token(w[1])) {
      new_run_marker();
      rank(w, l);
    } else if (index_of(w, "size") == 0 && index_of(w, "busbw") > 0) {
      header(w, l);
    } else if (w[0] == "Avg" || w[0] == "Out" || (w[0] == "Collective" && w.size() > 2 && w[2] == "concluded:")) {
      table_open_ = false;
    }
  }

  void program(const std::string& path, int line) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    if (name.size() > 5 && name.ends_with("_perf")) name.resize(name.size() - 5);
    if (name.ends_with("_mpi")) name.resize(name.size() - 4);
    if (!parse_collective_name(name, current_.run.op))
      throw spec::SpecError(log_where(file_, line), "program",
                            "all_reduce_perf, all_gather_perf, reduce_scatter_perf or sendrecv_perf, got " +
                                log_excerpt(path));
    current_.op_known = true;
  }

  // "Rank 0 Group 0 Pid 123 on host device 0 [0x..] NVIDIA H100" (older: no Group).
  void rank(const std::vector<std::string>& w, const LogLine& l) {
    ranks_.insert(log_whole(w[1], file_, l.number, "Rank"));
    const std::ptrdiff_t on = index_of(w, "on");
    if (on < 0 || on + 1 >= static_cast<std::ptrdiff_t>(w.size()))
      throw spec::SpecError(log_where(file_, l.number), "Rank",
                            "a rank line '#  Rank N Group G Pid P on HOST device D [bus] NAME', got " + log_excerpt(l.text));
    hosts_.insert(w[on + 1]);
    if (current_.run.device.empty()) {
      const std::size_t bracket = l.text.find(']');
      if (bracket != std::string::npos) {
        std::string name = l.text.substr(bracket + 1);
        name.erase(0, name.find_first_not_of(' '));
        if (!is_utf8(name))  // the calibration file stores it
          throw spec::SpecError(log_where(file_, l.number), "device", "a device name in UTF-8, got " + log_excerpt(name));
        current_.run.device = name;
      }
    }
  }

  void header(const std::vector<std::string>& w, const LogLine& l) {
    layout_ = {};
    layout_.redop = index_of(w, "redop");
    layout_.root = index_of(w, "root");
    layout_.time = index_of(w, "time");
    if (layout_.time < 0) layout_.time = index_of(w, "cputime");
    const std::ptrdiff_t algbw = index_of(w, "algbw");
    if (index_of(w, "count") != 1 || index_of(w, "type") != 2 || layout_.time < 3 || algbw != layout_.time + 1 ||
        index_of(w, "busbw") != layout_.time + 2)
      throw spec::SpecError(log_where(file_, l.number), "header",
                            "the nccl-tests header '# size count type redop root time algbw busbw #wrong ...', got " +
                                log_excerpt(l.text));
    table_open_ = true;
    if (current_.header_line == 0) current_.header_line = l.number;
  }

  void row(const LogLine& l) {
    const auto& t = l.tokens;
    const std::size_t need = static_cast<std::size_t>(layout_.time) + 3;
    if (t.size() < need || !is_whole_token(t[0]))
      throw spec::SpecError(log_where(file_, l.number), "row",
                            "a nccl-tests result row 'size count type redop root time algbw busbw #wrong ...' with " +
                                std::to_string(need) + " or more columns, got " + log_excerpt(l.text));
    const double bytes = double(log_whole(t[0], file_, l.number, "size"));
    log_whole(t[1], file_, l.number, "count");
    if (layout_.root >= 0 && t[layout_.root] != "-1")
      throw spec::SpecError(log_where(file_, l.number), "root",
                            "-1 (a collective without a root; broadcast and reduce logs are not read), got " +
                                log_excerpt(t[layout_.root]));
    if (layout_.redop >= 0 && current_.redop.empty()) {
      if (!is_utf8(t[layout_.redop]))  // a note in the calibration file names it
        throw spec::SpecError(log_where(file_, l.number), "redop",
                              "a reduction name in UTF-8 (sum, none), got " + log_excerpt(t[layout_.redop]));
      current_.redop = t[layout_.redop];
    }
    const double us = log_number(t[layout_.time], file_, l.number, "time");
    const double algbw = log_number(t[layout_.time + 1], file_, l.number, "algbw");
    const double busbw = log_number(t[layout_.time + 2], file_, l.number, "busbw");
    if (bytes == 0) return;  // -b 0: nothing moved
    if (!(us > 0)) throw spec::SpecError(log_where(file_, l.number), "time", "a positive time in microseconds, got " + log_excerpt(t[layout_.time]));
    if (algbw < 0 || busbw < 0)
      throw spec::SpecError(log_where(file_, l.number), algbw < 0 ? "algbw" : "busbw", "a bandwidth >= 0 GB/s");
    current_.run.samples.push_back({bytes, us * kNcclTestsUs, algbw * kNcclTestsGB, busbw * kNcclTestsGB, l.number});
  }

  std::string file_;
  LogRun current_;
  std::vector<LogRun> runs_;
  std::set<long long> ranks_;
  std::set<std::string> hosts_;
  Layout layout_;
  bool table_open_ = false;
};

}  // namespace

std::vector<LogRun> parse_nccl_tests_log(const std::vector<LogLine>& lines, const std::string& file) {
  NcclTestsReader reader(file);
  for (const LogLine& l : lines) reader.line(l);
  return reader.finish();
}

}  // namespace trainplan::calib
