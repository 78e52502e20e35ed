// Tables and plots of a validate::ValidationResult: the numbers come from
// validate::validate_runs, the rendering from report::render_table and plot_*;
// nothing here computes a model figure.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "report/table.h"
#include "validate/error_bands.h"
#include "validate/validation.h"

namespace trainplan::report {

Table runs_table(const validate::ValidationResult& v);
Table mape_table(const validate::ValidationResult& v);
// One row per source, stack or accelerator family (`what` names which).
Table group_table(const std::map<std::string, validate::GroupError>& groups, const std::string& what);
// Leave-one-source-out MAPE by the family fit and as estimate would price the
// source: by its stack's own fit on the stack's other sources where it has one.
Table as_priced_table(const validate::ValidationResult& v);
Table memory_table(const validate::ValidationResult& v);
Table unexpressed_table(const validate::ValidationResult& v);
Table fit_table(const validate::ValidationResult& v);
// The collective shares that measurements bound (hardware collective_share),
// and, where a fit presses on a band's edge, the runs that pull it out.
Table band_table(const validate::ValidationResult& v);
// The held-out error bands, and how the memory band sorts runs that ran and published OOMs.
Table error_bands_table(const spec::ErrorBands& bands, const validate::HeldOutVerdicts& verdicts);
// Writes predicted-against-measured (cross-source and in-sample, coloured by
// stack) and memory plots under `dir`; returns the files written and, in
// `errors`, what failed.
std::vector<std::string> write_validation_plots(const validate::ValidationResult& v, const std::string& dir,
                                                std::vector<std::string>& errors);

}  // namespace trainplan::report
