// nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// sendrecv_perf) into LogRuns: out-of-place time (us), algbw and busbw (GB/s =
// 1e9 B/s), ranks and hosts from the rank lines, the program's name when printed.
// Several runs in one file split at "# nThread"; bad rows throw SpecError.

// Format: NVIDIA/nccl-tests@c6afef0b (v2.13.9) src/common.cu (header "# size count
// type redop root time algbw busbw #wrong" x out-of-place / in-place; rows
// "%12li %12li %8s %6s %6s" then time, algbw, busbw; "#  Rank %2d Group %2d Pid
// %6d on %10s device %2d [..] name") and NVIDIA/nccl-tests@a0b82b22 src/util.cu
// (writeResultHeader, writeBenchmarkLinePreamble/Body, "# Collective test
// starting: <program>"). Older logs without the root column read too.
#pragma once
#include <string>
#include <vector>

#include "calib/collective_log.h"

namespace trainplan::calib {

std::vector<LogRun> parse_nccl_tests_log(const std::vector<LogLine>& lines, const std::string& file);

}  // namespace trainplan::calib
