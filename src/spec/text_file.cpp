#include "spec/text_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "spec/error.h"

namespace tp::spec {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw SpecError(path, "", "a file, not a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path, "", "a readable file");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw SpecError(path, "", "a readable file");
  return s.str();
}

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    if (!out) throw SpecError(path, "", "a writable path for the " + what);
    out << text;
    if (!out) throw SpecError(path, "", "a complete write of the " + what);
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) throw SpecError(path, "", "a path the finished " + what + " can be moved onto (" + ec.message() + ")");
}

}  // namespace tp::spec
