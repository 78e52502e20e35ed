// Output paths checked before any work, so that a long run never ends in
// "cannot write": each throws spec::SpecError (exit 2) naming the option.
#pragma once
#include <string>

namespace trainplan::cli {

// `path`'s folder must exist and `path` must not be a folder. Empty: nothing to check.
void check_output_path(const std::string& path, const std::string& option);
// The same for a plot, which must also end in .png or .svg.
void check_plot_path(const std::string& path, const std::string& option);

}  // namespace trainplan::cli
