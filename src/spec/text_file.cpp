#include "spec/text_file.h"

#include <filesystem>
#include <fstream>

#include "spec/error.h"

namespace tp::spec {
namespace fs = std::filesystem;

namespace {

std::string kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    default: return "not a regular file";
  }
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows links
  if (ec || !fs::exists(status)) throw SpecError(path, "", "cannot read the file (does it exist?)");
  if (!fs::is_regular_file(status)) throw SpecError(path, "", "a regular file, got " + kind_of(status.type()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path, "", "a readable file");
  // In chunks, stopping one past the cap whatever size the file system reports.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, std::size_t(in.gcount()));
    if (text.size() > kMaxInputFileBytes)
      throw SpecError(path, "", "a file of at most " + std::to_string(kMaxInputFileBytes >> 20) + " MiB");
  }
  if (in.bad()) throw SpecError(path, "", "a readable file");
  return text;
}

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  // Through a link, write the file it names; refuse to replace anything but a regular file.
  std::error_code ec;
  fs::path target = path;
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (ec) throw SpecError(path, "", "a link to a file the " + what + " can be written to");
    target = resolved;
  }
  const fs::file_status status = fs::status(target, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw SpecError(path, "", "a regular file to write the " + what + " to, got " + kind_of(status.type()));
  const fs::path partial = target.string() + ".partial";
  const auto fail = [&](const std::string& expected) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw SpecError(path, "", expected);
  };
  {
    std::ofstream out(partial, std::ios::binary);
    if (!out) fail("a writable path for the " + what);
    out << text;
    out.flush();
    if (!out) fail("a complete write of the " + what);
  }
  fs::rename(partial, target, ec);
  if (ec) fail("a path the finished " + what + " can be moved onto (" + ec.message() + ")");
}

}  // namespace tp::spec
