// Whole text files in and out, the one way the tool opens a file. A read takes
// a regular file (or a link to one) of at most kMaxInputFileBytes, so a FIFO,
// a device or a huge file is refused at once instead of hanging or exhausting
// memory, and its text must be UTF-8. A write goes to PATH.partial beside the target (through a link, to
// the file it names) and is renamed over it once complete; it never replaces a
// FIFO, device or folder, and a failed write leaves no .partial behind.
// Problems throw SpecError naming the path.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trainplan::spec {

inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t(16) << 20;

std::string read_text_file(const std::string& path);
void write_text_file(const std::string& path, const std::string& text, const std::string& what);
// Several files that belong together (a launch script and its ds_config): each
// path is checked, then all are written beside their targets, then moved onto
// them; a refusal or a failed write leaves every target as it was.
void write_text_files(const std::vector<std::pair<std::string, std::string>>& files, const std::string& what);

}  // namespace trainplan::spec
