#include "cli/output_paths.h"

#include <filesystem>
#include <system_error>

#include "spec/error.h"

namespace trainplan::cli {

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw spec::SpecError(option + " " + path, "", "an output file in an existing folder; " + folder.string() +
                                                      " does not exist");
  if (std::filesystem::is_directory(path, ec))
    throw spec::SpecError(option + " " + path, "", "an output file, not a folder");
}

void check_plot_path(const std::string& path, const std::string& option) {
  check_output_path(path, option);
  if (!path.empty() && !path.ends_with(".png") && !path.ends_with(".svg"))
    throw spec::SpecError(option + " " + path, "", "a plot file ending in .png or .svg");
}

}  // namespace trainplan::cli
