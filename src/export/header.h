// trainplan's header in a launcher config: comment lines that say what wrote
// the file and one machine line, "# trainplan: model=M hardware=H stack=S",
// that a reader takes as the model, hardware and stack where the file is silent
// (each name %-encoded where it holds a control character, a space or %).
#pragma once
#include <string>

#include "export/launch_format.h"
#include "export/launch_job.h"

namespace trainplan::exporting {

// A name as one word of a comment line: bytes that could end the comment or
// split the word (control characters, space, DEL) and '%' itself as %XX, so a
// model file's name cannot put a command on a line of its own, and the machine
// line reads back the exact name (a model path with a space included).
std::string comment_word(const std::string& name);

// Comment lines ("# ..."), each ending in '\n'.
std::string header_comment(const LaunchJob& job, const FormatInfo& format);

// Fills job.model_name, hardware_name and stack_name from the "# trainplan:" line of `text`, if any.
void read_header(const std::string& text, LaunchJob& job);

}  // namespace trainplan::exporting
