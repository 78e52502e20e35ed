#include "spec/text_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "spec/error.h"
#include "spec/utf8.h"

namespace trainplan::spec {
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
  // Every reader takes UTF-8 text (a Latin-1 or UTF-16 file would pass its bytes on unread).
  if (const std::size_t at = first_non_utf8_byte(text); at != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[at]));
    throw SpecError(path, "", "UTF-8 text; byte " + std::to_string(at + 1) + " (" + byte + ") is not valid UTF-8");
  }
  return text;
}

namespace {

// Through a link, the file it names; refuses to replace anything but a regular file.
fs::path write_target(const std::string& path, const std::string& what) {
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
  return target;
}

void remove_partials(const std::vector<fs::path>& targets) {
  std::error_code ignored;
  for (const fs::path& t : targets) fs::remove(t.string() + ".partial", ignored);
}

}  // namespace

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  write_text_files({{path, text}}, what);
}

void write_text_files(const std::vector<std::pair<std::string, std::string>>& files, const std::string& what) {
  std::vector<fs::path> targets;
  for (const auto& [path, text] : files) targets.push_back(write_target(path, what));  // every one before any write
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto fail = [&](const std::string& expected) {
      remove_partials(targets);
      throw SpecError(files[i].first, "", expected);
    };
    std::ofstream out(targets[i].string() + ".partial", std::ios::binary);
    if (!out) fail("a writable path for the " + what);
    out << files[i].second;
    out.flush();
    if (!out) fail("a complete write of the " + what);
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    fs::rename(targets[i].string() + ".partial", targets[i], ec);
    if (ec) {
      remove_partials(targets);
      throw SpecError(files[i].first, "", "a path the finished " + what + " can be moved onto (" + ec.message() + ")");
    }
  }
}

}  // namespace trainplan::spec
