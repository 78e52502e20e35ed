// Neuron nccom-test output into LogRuns: time (us), algbw and busbw in GiB/s
// (2^30 B/s); the operation, ranks (-r) and nodes (-N) from the nccom-test
// command line when the log holds it, else left to LogHints. Bad rows (a
// "Failure running neuron-bench" line among them) throw SpecError.

// Format: the NCCOM-TEST user guide, aws-neuron/aws-neuron-sdk@81ce03ae
// tools/neuron-sys-tools/nccom-test.rst: header "size(B) count(elems) type
// time(us) algbw(GB/s) busbw(GB/s)" (later releases: "time:avg(us)", optional
// total_input/output_size(B), percentile and "algorithm" columns), rows under
// it, "Avg bus bandwidth: ..." after; "gibibytes (1GiB = 1,073,741,824 bytes)".
#pragma once
#include <string>
#include <vector>

#include "calib/collective_log.h"

namespace trainplan::calib {

std::vector<LogRun> parse_nccom_test_log(const std::vector<LogLine>& lines, const std::string& file);

}  // namespace trainplan::calib
