// The markdown report of `trainplan validate --report`: the headline, every
// table, the plots, and the Trainium and Gaudi section (per family the held-out
// error, each stack's own fit beside the family's, the runs still missed most).
// Renders validate's results; the stack fits come computed (validate::own_stack_fits).
#pragma once
#include <string>
#include <vector>

#include "report/table.h"
#include "validate/validation.h"

namespace trainplan::report {

// Written to `path` + ".partial" and renamed over `path` once complete.
void write_validation_markdown(const validate::ValidationResult& v, const std::vector<validate::StackFit>& stack_fits,
                               const std::vector<Table>& tables, const std::vector<std::string>& plots,
                               const std::string& path, const std::string& measured);

}  // namespace trainplan::report
