// Habana hccl_demo output into LogRuns: the bandwidth summary table (time in
// ms, GB/s = 1e9 B/s) or a single-size [BENCHMARK] block; ranks and ranks per
// node from the HCCL_NRANKS= / HCCL_RANKS_PER_NODE= command lines that
// run_hccl_demo.py logs. size is one rank's input (per_rank_input).

// Format: HabanaAI/hccl_demo@f623d692 hccl_demo.cpp: printReport
// ("[BANDWIDTH SUMMARY REPORT]", "(src!=dst, collective=all_reduce,
// iterations=N)", columns size count type [redop] time algoBW nw_bw with
// common.h formatTime " ms" / formatBW " GB/s"), describeStat ("[BENCHMARK]
// hcclAllReduce(dataSize=S, count=C, dtype=T, iterations=N)", "NW Bandwidth",
// "Algo Bandwidth"), prepareBuffers (input = size), collectiveTestDriver (nw_bw
// factors: nccl-tests', all_gather (n-1) on the per-rank size).
#pragma once
#include <string>
#include <vector>

#include "calib/collective_log.h"

namespace trainplan::calib {

std::vector<LogRun> parse_hccl_demo_log(const std::vector<LogLine>& lines, const std::string& file);

}  // namespace trainplan::calib
