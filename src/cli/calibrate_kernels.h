// `trainplan calibrate kernels`: time this host's BF16 kernels, fit the
// efficiency model, write the calibration file and print its error on every
// point and on the points left out of the fit (print_check, shared with
// `calibrate check`).
#pragma once
#include <CLI/CLI.hpp>
#include <vector>

#include "calib/fit.h"

namespace trainplan::cli {

void add_kernels_command(CLI::App& calibrate);
// The error of a kernel calibration per op kind, as a fixed-width table on stdout.
void print_check(const std::vector<calib::CheckRow>& rows);

}  // namespace trainplan::cli
