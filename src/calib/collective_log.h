// Vendor collective benchmark logs in (nccl-tests, nccom-test, hccl_demo), the
// format told from the content, each table a CollectiveRun in nccl-tests' terms.
// What a log does not state (operation, ranks, hosts) comes from LogHints; a hint
// that contradicts the log, a malformed line, or a busbw/algbw ratio that is not
// the operation's factor throws SpecError naming file:line and the column.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "calib/collective_run.h"
#include "calib/log_fields.h"

namespace trainplan::calib {

struct LogHints {
  std::optional<net::Collective> op;  // --op
  int ranks = 0;                      // --ranks; 0: none given
  int instances = 0;                  // --instances; 0: none given
};

// One table as a parser found it, before hints fill the gaps.
struct LogRun {
  CollectiveRun run;            // source, tool, samples; op/ranks/instances where the log states them
  bool op_known = false;        // the log names the operation
  std::string redop;            // nccl-tests' redop column ("sum", "none"): narrows an unnamed operation
  int header_line = 0;          // where the table starts, for messages
  // hccl_demo's size column (and algbw) count one rank's input: an all-gather moves n times that.
  bool per_rank_input = false;
};

enum class LogFormat { nccl_tests, nccom_test, hccl_demo };
const char* to_string(LogFormat format);
// Which tool wrote the lines (calib::log_lines); throws SpecError(file, ...) when none fits.
LogFormat detect_log_format(const std::vector<LogLine>& lines, const std::string& file);

std::vector<CollectiveRun> read_collective_log(const std::string& text, const std::string& file,
                                               const LogHints& hints = {});
std::vector<CollectiveRun> load_collective_log(const std::string& path, const LogHints& hints = {});

}  // namespace trainplan::calib
