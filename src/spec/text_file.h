// Whole text files in and out. A write goes to PATH.partial beside the target
// and is renamed over it once complete, so an interrupted run leaves the old
// file whole. Problems throw SpecError naming the path.
#pragma once
#include <string>

namespace tp::spec {

std::string read_text_file(const std::string& path);  // refuses a folder or an unreadable path
void write_text_file(const std::string& path, const std::string& text, const std::string& what);

}  // namespace tp::spec
