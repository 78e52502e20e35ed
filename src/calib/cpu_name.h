// This CPU's model name as /proc/cpuinfo gives it ("AMD EPYC 9B45"), or
// "unknown CPU" where the file or the line is missing. Names the host in
// calibration files written by `calibrate kernels` and `calibrate import --gemm`.
#pragma once
#include <string>

namespace trainplan::calib {

std::string cpu_name();

}  // namespace trainplan::calib
