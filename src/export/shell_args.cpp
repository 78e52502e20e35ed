#include "export/shell_args.h"

#include <algorithm>
#include <string_view>

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
  for (const auto& [name, value] : items) {
    // Appended piece by piece: GCC 12 misreads `" " + std::string&&` as an overlapping memcpy (-Wrestrict).
    out += "  ";
    out += name;
    if (!value.empty()) {
      out += ' ';
      out += shell_quote(value);
    }
    out += " \\\n";
  }
  return out;
}

namespace {

bool identifier_char(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

// `NAME=value` (also after `export`): the name, or "" when the word is not an assignment.
std::string assigned_name(const std::string& word) {
  const std::size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return "";
  for (std::size_t i = 0; i < eq; ++i)
    if (!identifier_char(word[i], i == 0)) return "";
  return word.substr(0, eq);
}

using Variables = std::map<std::string, std::string>;

// Bounds that keep a hostile script (A=$A$A repeated; defaults nested deep)
// from taking the memory or the stack: far past any real launch script.
constexpr std::size_t kMaxExpandedChars = 1 << 16;
constexpr int kMaxDefaultDepth = 8;

// $NAME, ${NAME}, ${NAME:-default} and ${N:-default} (positional: unset, so the
// default) as the shell expands them, from the script's own assignments; a
// variable the script never sets, and any other form ($(...), arrays), stays as written.

std::string expand(const std::string& word, const Variables& vars, const std::string& file, int depth = 0) {
  if (depth > kMaxDefaultDepth) return word;
  std::string out;
  for (std::size_t i = 0; i < word.size();) {
    if (out.size() > kMaxExpandedChars)
      throw spec::SpecError(file, "", "shell variables expanding to at most " + std::to_string(kMaxExpandedChars) +
                                          " characters a word (this file's grow past it)");
    if (word[i] != '$' || i + 1 >= word.size()) {
      out += word[i++];
      continue;
    }
    if (word[i + 1] == '{') {
      std::size_t close = i + 2;  // the brace that closes this one, past nested ${...}
      for (int open = 1; close < word.size(); ++close) {
        if (word[close] == '{') ++open;
        if (word[close] == '}' && --open == 0) break;
      }
      if (close >= word.size()) {  // unclosed: as written
        out += word.substr(i);
        break;
      }
      const std::string inner = word.substr(i + 2, close - i - 2);
      const std::size_t dash = inner.find(":-");
      const std::string name = inner.substr(0, dash);
      bool plain = !name.empty();
      for (std::size_t k = 0; k < name.size(); ++k) plain = plain && identifier_char(name[k], false);
      const auto it = plain ? vars.find(name) : vars.end();
      if (it != vars.end()) out += it->second;
      else if (plain && dash != std::string::npos) out += expand(inner.substr(dash + 2), vars, file, depth + 1);
      else out += word.substr(i, close + 1 - i);
      i = close + 1;
      continue;
    }
    std::size_t end = i + 1;
    while (end < word.size() && identifier_char(word[end], end == i + 1)) ++end;
    const auto it = end > i + 1 ? vars.find(word.substr(i + 1, end - i - 1)) : vars.end();
    out += it != vars.end() ? it->second : word.substr(i, end - i);
    i = end;
  }
  return out;
}

// Launch scripts keep options in bash arrays whose quoted items hold an option
// and its value ("--fp8-format hybrid"); the unquoted ${ARR[@]} splits them.
std::vector<std::string> split_option_items(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const std::string& w : words) {
    const std::size_t space = w.find_first_of(" \t");
    // "--name=two words" is one option with its value; "--name value" an item to split.
    if (w.rfind("--", 0) != 0 || space == std::string::npos || w.find('=') < space) {
      out.push_back(w);
      continue;
    }
    std::size_t start = 0;
    while (start < w.size()) {
      const std::size_t begin = w.find_first_not_of(" \t", start);
      if (begin == std::string::npos) break;
      const std::size_t end = w.find_first_of(" \t", begin);
      out.push_back(w.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
      start = end == std::string::npos ? w.size() : end;
    }
  }
  return out;
}

}  // namespace

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
  Variables vars;
  for (const std::string& w : out.words)
    if (const std::string name = assigned_name(w); !name.empty() && w.find("=(") == std::string::npos)
      vars[name] = expand(w.substr(name.size() + 1), vars, file);
  for (std::string& w : out.words) w = expand(w, vars, file);
  out.words = split_option_items(out.words);
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
  // Bare only where every byte is one no shell reads specially (shlex.quote's set).
  const auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), safe)) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace tp::exporting
