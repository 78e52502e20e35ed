// trainplan's header in a launcher config: comment lines that say what wrote
// the file and one machine line, "# trainplan: model=M hardware=H stack=S",
// that a reader takes as the model, hardware and stack where the file is silent.
#pragma once
#include <string>

#include "export/launch_format.h"
#include "export/launch_job.h"

namespace tp::exporting {

// Comment lines ("# ..."), each ending in '\n'.
std::string header_comment(const LaunchJob& job, const FormatInfo& format);

// Fills job.model_name, hardware_name and stack_name from the "# trainplan:" line of `text`, if any.
void read_header(const std::string& text, LaunchJob& job);

}  // namespace tp::exporting
