#include "export/shell_args.h"

#include "export/read_values.h"
#include "spec/error.h"

namespace tp::exporting {

std::optional<std::string> ShellArgs::value(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

long ShellArgs::whole(const std::string& name, long min, long max, long fallback, const std::string& file) const {
  const auto v = value(name);
  return v ? whole_number(*v, file, name, min, max) : fallback;
}

double ShellArgs::real(const std::string& name, double fallback, const std::string& file) const {
  const auto v = value(name);
  return v ? real_number(*v, file, name) : fallback;
}

std::string ArgList::render() const {
  std::string out;
  for (const auto& [name, value] : items) out += "  " + name + (value.empty() ? "" : " " + shell_quote(value)) + " \\\n";
  return out;
}

ShellArgs parse_shell_args(const std::string& text, const std::string& file) {
  ShellArgs out;
  std::string word;
  bool in_word = false;
  std::size_t i = 0;
  auto end_word = [&] {
    if (in_word) out.words.push_back(word);
    word.clear();
    in_word = false;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] != '\n') {
        word += text[i + 1];
        in_word = true;
      }
      i += 2;
    } else if (c == '\'' || c == '"') {
      const std::size_t close = text.find(c, i + 1);
      if (close == std::string::npos)
        throw spec::SpecError(file, "", std::string("a closing ") + c + " for the quote opened at byte " + std::to_string(i));
      word += text.substr(i + 1, close - i - 1);
      in_word = true;
      i = close + 1;
    } else if (c == '#' && !in_word) {
      const std::size_t eol = text.find('\n', i);
      out.comments.push_back(text.substr(i + 1, (eol == std::string::npos ? text.size() : eol) - i - 1));
      i = eol == std::string::npos ? text.size() : eol;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '\r') {
      end_word();
      ++i;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  end_word();
  for (std::size_t w = 0; w < out.words.size(); ++w) {
    const std::string& s = out.words[w];
    if (s.size() < 3 || s.rfind("--", 0) != 0) continue;
    if (const std::size_t eq = s.find('='); eq != std::string::npos) {
      out.options[s.substr(0, eq)] = s.substr(eq + 1);
    } else if (w + 1 < out.words.size() && out.words[w + 1].rfind("--", 0) != 0) {
      out.options[s] = out.words[w + 1];
    } else {
      out.options[s] = "";
    }
  }
  return out;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\n'\"\\$`;&|<>()*?#") == std::string::npos) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace tp::exporting
