#include "export/shell_args.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>

#include "export/read_values.h"
#include "export/shell_arithmetic.h"
#include "spec/error.h"

namespace trainplan::exporting {

std::optional<std::string> ShellArgs::value(const std::string& name) const {
  consulted.insert(name);
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

std::vector<std::string> ShellArgs::unconsulted() const {
  static const std::set<std::string> launcher = {
      "--node_rank", "--node-rank", "--master_addr", "--master-addr", "--master_port", "--master-port",
      "--rdzv_id", "--rdzv-id", "--rdzv_backend", "--rdzv-backend", "--rdzv_endpoint", "--rdzv-endpoint",
      "--hostfile", "--force_multi", "--force-multi", "--include", "--exclude", "--launcher"};
  std::vector<std::string> out;
  for (const auto& [name, value] : options)
    if (!consulted.count(name) && !launcher.count(name)) out.push_back(name);
  return out;
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

std::string assigned_name(const std::string& word) {
  const std::size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return "";
  for (std::size_t i = 0; i < eq; ++i)
    if (!shell_name_char(word[i], i == 0)) return "";
  return word.substr(0, eq);
}

namespace {

using Variables = std::map<std::string, std::string>;

// The script's own path, as $0 and ${BASH_SOURCE[0]} give it: held in the
// variables under a name no assignment can take.
constexpr const char* kScriptPath = "0";

// The path commands a script runs on its own location to find the files beside it
// (`script_dir=$(dirname $(realpath $0))`): dirname, basename, realpath and
// readlink -f of one word that has no $ left in it. Anything else stays as written.
std::optional<std::string> path_command(const std::string& command) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : command) {
    if (c == ' ' || c == '\t') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else if (c != '"') {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  if (parts.size() == 3 && parts[0] == "readlink" && parts[1] == "-f") parts.erase(parts.begin() + 1);
  if (parts.size() != 2 || parts[1].empty() || parts[1].find('$') != std::string::npos || parts[1].find('`') != std::string::npos)
    return std::nullopt;
  const std::filesystem::path path(parts[1]);
  if (parts[0] == "dirname") {
    const std::string parent = path.parent_path().string();
    return parent.empty() ? "." : parent;
  }
  if (parts[0] == "basename") return path.filename().string();
  if (parts[0] == "realpath" || parts[0] == "readlink") {
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::weakly_canonical(path, error);
    return error ? std::nullopt : std::optional<std::string>(absolute.string());
  }
  return std::nullopt;
}

// Bounds that keep a hostile script (A=$A$A repeated; defaults nested deep)
// from taking the memory or the stack: far past any real launch script.
constexpr std::size_t kMaxExpandedChars = 1 << 16;
constexpr int kMaxDefaultDepth = 8;

// $NAME, ${NAME}, ${NAME:-default} and ${N:-default} (positional: unset, so the
// default) as the shell expands them, from the script's own assignments; $0 and
// ${BASH_SOURCE[0]} the script's path, $# 0 and $1..$9, $@, $* empty (no arguments);
// the path commands of path_command. A variable the script never sets, and any
// other form (other commands, arrays), stays as written.

// `environment`, when given, is set where a value came from the caller's
// environment: a ${NAME:-default} whose NAME the script does not set, or a
// variable in `from_environment` (assigned from one).
std::string expand(const std::string& word, const Variables& vars, const std::string& file, int depth = 0,
                   const std::set<std::string>* from_environment = nullptr, bool* environment = nullptr) {
  if (depth > kMaxDefaultDepth) return word;
  auto note = [&](const std::string& name, bool defaulted) {
    if (environment && (defaulted || (from_environment && from_environment->count(name)))) *environment = true;
  };
  std::string out;
  for (std::size_t i = 0; i < word.size();) {
    if (out.size() > kMaxExpandedChars)
      throw spec::SpecError(file, "", "shell variables expanding to at most " + std::to_string(kMaxExpandedChars) +
                                          " characters a word (this file's grow past it)");
    if (word[i] != '$' || i + 1 >= word.size()) {
      out += word[i++];
      continue;
    }
    if (word[i + 1] == '(' && (i + 2 >= word.size() || word[i + 2] != '(')) {  // $(command), not $((arithmetic))
      std::size_t close = i + 1;
      for (int open = 0; close < word.size(); ++close) {
        if (word[close] == '(') ++open;
        if (word[close] == ')' && --open == 0) break;
      }
      if (close < word.size()) {
        const std::string inner = word.substr(i + 2, close - i - 2);
        const std::optional<std::string> result =
            path_command(expand(inner, vars, file, depth + 1, from_environment, environment));
        out += result ? *result : word.substr(i, close + 1 - i);
        i = close + 1;
        continue;
      }
    }
    if (word[i + 1] == '0') {  // the script's path
      const auto it = vars.find(kScriptPath);
      out += it != vars.end() ? it->second : "$0";
      i += 2;
      continue;
    }
    // The script runs without arguments: $# is 0, and $1..$9, $@ and $* are empty.
    if (word[i + 1] == '#' || word[i + 1] == '@' || word[i + 1] == '*' || (word[i + 1] >= '1' && word[i + 1] <= '9')) {
      if (word[i + 1] == '#') out += '0';
      i += 2;
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
      const std::string name = inner == "BASH_SOURCE[0]" || inner == "BASH_SOURCE" ? kScriptPath : inner.substr(0, dash);
      bool plain = !name.empty();
      for (std::size_t k = 0; k < name.size(); ++k) plain = plain && shell_name_char(name[k], false);
      const auto it = plain ? vars.find(name) : vars.end();
      if (it != vars.end()) {
        out += it->second;
        note(name, false);
      } else if (plain && dash != std::string::npos) {
        out += expand(inner.substr(dash + 2), vars, file, depth + 1, from_environment, environment);
        note(name, true);
      } else {
        out += word.substr(i, close + 1 - i);
      }
      i = close + 1;
      continue;
    }
    std::size_t end = i + 1;
    while (end < word.size() && shell_name_char(word[end], end == i + 1)) ++end;
    const auto it = end > i + 1 ? vars.find(word.substr(i + 1, end - i - 1)) : vars.end();
    out += it != vars.end() ? it->second : word.substr(i, end - i);
    if (it != vars.end()) note(it->first, false);
    i = end;
  }
  return out;
}

// Launch scripts keep options in bash arrays whose quoted items hold an option
// and its value ("--fp8-format hybrid"), or in strings run unquoted or by eval;
// the shell splits them at whitespace.
// `origin[p]` names the word that piece p came from.
std::vector<std::string> split_option_items(const std::vector<std::string>& words, std::vector<std::size_t>& origin) {
  std::vector<std::string> out;
  origin.clear();
  for (std::size_t index = 0; index < words.size(); ++index) {
    const std::string& word = words[index];
    // An unquoted "$OPTIONS" holding " --a 1 --b 2" splits the same way.
    const std::size_t first = word.find_first_not_of(" \t\n");
    const std::string w = first == std::string::npos ? word : word.substr(first);
    const std::size_t space = w.find_first_of(" \t\n");
    // "--name=two words" is one option with its value; "--name value" an item to split;
    // so is a command kept in a variable and run with eval ("deepspeed x.py --a 1").
    const bool holds_options = w.rfind("--", 0) == 0 || w.find(" --") != std::string::npos ||
                               w.find("\t--") != std::string::npos || w.find("\n--") != std::string::npos;
    if (!holds_options || space == std::string::npos || (w.rfind("--", 0) == 0 && w.find('=') < space)) {
      out.push_back(word);
      origin.push_back(index);
      continue;
    }
    std::size_t start = 0;
    while (start < w.size()) {
      const std::size_t begin = w.find_first_not_of(" \t\n", start);
      if (begin == std::string::npos) break;
      const std::size_t end = w.find_first_of(" \t\n", begin);
      out.push_back(w.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
      start = end == std::string::npos ? w.size() : end;
    }
    origin.resize(out.size(), index);
  }
  return out;
}

// `cat <<EOF > FILE` ... `EOF`: the body (expanded unless the delimiter is quoted)
// and the file the line writes it to, met before word `word_index`.
struct PendingHeredoc {
  std::size_t word_index = 0;
  std::string target, body;
  bool expand = true;
};

// Reads the heredoc whose "<<" is at `at`; returns where scanning goes on (past
// its closing delimiter line).
std::size_t read_heredoc(const std::string& text, std::size_t at, const std::string& file, std::size_t word_index,
                         std::vector<PendingHeredoc>& heredocs) {
  std::size_t i = at + 2;
  const bool strip_tabs = i < text.size() && text[i] == '-';
  if (strip_tabs) ++i;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  PendingHeredoc h;
  h.word_index = word_index;
  std::string delimiter;
  while (i < text.size() && text[i] != '\n' && text[i] != ' ' && text[i] != '\t' && text[i] != ';' && text[i] != '>') {
    if (text[i] == '\'' || text[i] == '"') h.expand = false;
    else delimiter += text[i];
    ++i;
  }
  const std::size_t eol = std::min(text.find('\n', i), text.size());
  const std::string rest = text.substr(i, eol - i);
  if (const std::size_t gt = rest.find('>'); gt != std::string::npos) {
    std::size_t b = rest.find_first_not_of(" \t>", gt);
    std::size_t e = b == std::string::npos ? b : rest.find_first_of(" \t;|&", b);
    if (b != std::string::npos) h.target = rest.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (h.target.size() >= 2 && (h.target.front() == '"' || h.target.front() == '\''))
      h.target = h.target.substr(1, h.target.size() - 2);
  }
  if (delimiter.empty()) throw spec::SpecError(file, "", "a delimiter after the << at byte " + std::to_string(at));
  std::size_t line_start = eol + 1;
  while (line_start < text.size()) {
    std::size_t line_end = std::min(text.find('\n', line_start), text.size());
    std::string line = text.substr(line_start, line_end - line_start);
    if (strip_tabs) line.erase(0, line.find_first_not_of('\t') == std::string::npos ? line.size() : line.find_first_not_of('\t'));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == delimiter) {
      heredocs.push_back(h);
      return line_end;
    }
    h.body += line + "\n";
    line_start = line_end + 1;
  }
  throw spec::SpecError(file, "", "a line '" + delimiter + "' closing the here-document opened at byte " + std::to_string(at));
}

// if / elif / else / fi around the words: which branches run.
class Branches {
 public:
  bool active() const { return levels_.empty() || levels_.back().active; }
  void open(bool holds) {
    const bool outer = active();
    levels_.push_back({outer, outer && holds, holds});
  }
  void elif(bool holds) {
    if (levels_.empty()) return;
    Level& l = levels_.back();
    l.active = l.outer && !l.taken && holds;
    l.taken = l.taken || holds;
  }
  void otherwise() {
    if (levels_.empty()) return;
    Level& l = levels_.back();
    l.active = l.outer && !l.taken;
    l.taken = true;
  }
  void close() {
    if (!levels_.empty()) levels_.pop_back();
  }

 private:
  struct Level {
    bool outer, active, taken;
  };
  std::vector<Level> levels_;
};

// A test condition ([ a = b ], [[ a -eq b ]], [ -z a ], [ -n a ]) on expanded words.
// One the reader cannot judge (a command, a file test, && chains) counts as true:
// its branch is read, as a reader without branches would.
bool test_holds(std::vector<std::string> w) {
  if (w.size() >= 2 && ((w.front() == "[" && w.back() == "]") || (w.front() == "[[" && w.back() == "]]"))) {
    w.erase(w.begin());
    w.pop_back();
  } else {
    return true;
  }
  bool negate = false;
  if (!w.empty() && w.front() == "!") {
    negate = true;
    w.erase(w.begin());
  }
  std::optional<bool> holds;
  if (w.size() == 2 && w[0] == "-z") holds = w[1].empty();
  else if (w.size() == 2 && w[0] == "-n") holds = !w[1].empty();
  else if (w.size() == 1) holds = !w[0].empty();
  else if (w.size() == 3) {
    const std::string& op = w[1];
    if (op == "=" || op == "==") holds = w[0] == w[2];
    else if (op == "!=") holds = w[0] != w[2];
    else {
      const auto a = shell_integer(w[0]), b = shell_integer(w[2]);
      if (a && b) {
        if (op == "-eq") holds = *a == *b;
        else if (op == "-ne") holds = *a != *b;
        else if (op == "-gt") holds = *a > *b;
        else if (op == "-lt") holds = *a < *b;
        else if (op == "-ge") holds = *a >= *b;
        else if (op == "-le") holds = *a <= *b;
      }
    }
  }
  if (!holds) return true;
  return negate ? !*holds : *holds;
}

// One sed expression as `s<d>PATTERN<d>REPLACEMENT<d>[g]`, kept where the pattern is a literal
// word and the replacement plain text: else `unsupported` names the expression.
void read_sed_expression(const std::string& expr, SedTemplate& t) {
  auto refuse = [&] {
    if (t.unsupported.empty()) t.unsupported = expr;
  };
  if (expr.size() < 4 || expr[0] != 's') return refuse();
  const char d = expr[1];
  const std::size_t mid = expr.find(d, 2), end = mid == std::string::npos ? mid : expr.find(d, mid + 1);
  if (end == std::string::npos) return refuse();
  SedEdit e{expr.substr(2, mid - 2), expr.substr(mid + 1, end - mid - 1), false};
  const std::string flags = expr.substr(end + 1);
  if (flags == "g") e.global = true;
  else if (!flags.empty()) return refuse();
  // A pattern of letters, digits and _ matches itself; anything else is a regular expression.
  const bool literal = !e.pattern.empty() && std::all_of(e.pattern.begin(), e.pattern.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!literal || e.replacement.find_first_of("&\\\n") != std::string::npos) return refuse();
  t.edits.push_back(e);
}

// `sed EXPR TEMPLATE | sed EXPR ... > FILE` among the expanded words: the file and its template.
void collect_sed_pipelines(const std::vector<std::string>& w, std::map<std::string, SedTemplate>& out) {
  for (std::size_t i = 0; i + 2 < w.size(); ++i) {
    if (w[i] != "sed") continue;
    SedTemplate t;
    std::size_t k = i + 1;
    read_sed_expression(w[k++], t);
    if (k >= w.size() || w[k] == "|" || w[k].rfind('>', 0) == 0) continue;  // no template: not a file edit
    t.input = w[k++];
    while (k + 2 < w.size() && w[k] == "|" && w[k + 1] == "sed") {
      read_sed_expression(w[k + 2], t);
      k += 3;
    }
    if (k >= w.size() || w[k].rfind('>', 0) != 0 || w[k].rfind(">>", 0) == 0) continue;
    const std::string target = w[k].size() > 1 ? w[k].substr(1) : (k + 1 < w.size() ? w[k + 1] : "");
    if (!target.empty()) out[target] = t;
    i = k;
  }
}

}  // namespace

std::string apply_sed(const SedTemplate& t, const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t eol = text.find('\n', start);
    std::string line = text.substr(start, eol == std::string::npos ? std::string::npos : eol - start);
    // Each sed in the pipeline reads what the previous one wrote: the edits apply in order.
    for (const SedEdit& e : t.edits) {
      for (std::size_t at = line.find(e.pattern); at != std::string::npos; at = line.find(e.pattern, at)) {
        line.replace(at, e.pattern.size(), e.replacement);
        if (!e.global) break;
        at += e.replacement.size();
      }
    }
    out += line;
    if (eol == std::string::npos) break;
    out += '\n';
    start = eol + 1;
  }
  return out;
}

std::map<std::string, std::string> ShellArgs::environment_of(const Command& command) const {
  std::map<std::string, std::string> env;
  for (const std::string& name : exported)
    if (const auto it = variables.find(name); it != variables.end()) env[name] = it->second;
  for (const auto& [name, value] : command.environment) env[name] = value;
  return env;
}

// A word that ends one command and starts the next on the same line.
static bool is_control_operator(const std::string& word) { return word == "&&" || word == "||" || word == "|" || word == "&"; }

ShellArgs parse_shell_args(const std::string& text, const std::string& file) {
  ShellArgs out;
  std::vector<std::string> words;
  std::vector<bool> starts_command;  // per word: the first after a newline or ';' (or the script's start)
  bool at_command_start = true;
  std::vector<PendingHeredoc> heredocs;
  std::string word;
  bool in_word = false;
  std::size_t i = 0;
  auto end_word = [&] {
    if (in_word) {
      words.push_back(word);
      starts_command.push_back(at_command_start);
      at_command_start = false;
    }
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
    } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '(') {
      // $(...) and $((...)): one word up to the matching parenthesis, spaces and all.
      std::size_t close = i + 1;
      for (int open = 0; close < text.size(); ++close) {
        if (text[close] == '(') ++open;
        if (text[close] == ')' && --open == 0) break;
      }
      if (close >= text.size())
        throw spec::SpecError(file, "", "a closing ) for the $( opened at byte " + std::to_string(i));
      word += text.substr(i, close + 1 - i);
      in_word = true;
      i = close + 1;
    } else if (c == '<' && !in_word && text.compare(i, 2, "<<") == 0 && text.compare(i, 3, "<<<") != 0) {
      end_word();
      i = read_heredoc(text, i, file, words.size(), heredocs);
    } else if (c == '\'') {
      const std::size_t close = text.find(c, i + 1);
      if (close == std::string::npos)
        throw spec::SpecError(file, "", std::string("a closing ") + c + " for the quote opened at byte " + std::to_string(i));
      word += text.substr(i + 1, close - i - 1);
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      // Inside double quotes a backslash escapes $ ` " \ and the newline (a continuation: both go).
      std::size_t k = i + 1;
      for (; k < text.size() && text[k] != '"'; ++k) {
        if (text[k] == '\\' && k + 1 < text.size() && std::string_view("$`\"\\\n").find(text[k + 1]) != std::string_view::npos) {
          if (text[k + 1] != '\n') word += text[k + 1];
          ++k;
        } else {
          word += text[k];
        }
      }
      if (k >= text.size())
        throw spec::SpecError(file, "", std::string("a closing \" for the quote opened at byte ") + std::to_string(i));
      in_word = true;
      i = k + 1;
    } else if (c == '#' && !in_word) {
      const std::size_t eol = text.find('\n', i);
      out.comments.push_back(text.substr(i + 1, (eol == std::string::npos ? text.size() : eol) - i - 1));
      i = eol == std::string::npos ? text.size() : eol;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '\r') {
      end_word();
      if (c == '\n' || c == ';') at_command_start = true;
      ++i;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  end_word();
  // One pass in order, as the shell runs it: assignments take effect where they
  // stand, and words inside an if branch not taken are dropped.
  Variables vars{{kScriptPath, file}};
  std::set<std::string> from_environment;  // variables assigned from the caller's environment
  std::vector<bool> word_environment;      // per out.words entry
  std::vector<bool> word_begins_command;   // per out.words entry: a command's first word, never an option's value
  bool in_array = false;                   // inside NAME=( ... ), where a newline ends no command
  Branches branches;
  std::size_t next_heredoc = 0;
  auto emit_heredocs_before = [&](std::size_t index) {
    for (; next_heredoc < heredocs.size() && heredocs[next_heredoc].word_index <= index; ++next_heredoc) {
      const PendingHeredoc& h = heredocs[next_heredoc];
      if (!branches.active() || h.target.empty()) continue;
      out.written_files[expand(h.target, vars, file)] = h.expand ? evaluate_arithmetic(expand(h.body, vars, file), vars) : h.body;
    }
  };
  // The command being read: whether only assignments (and `export`) came before, and its prefixes.
  bool in_prefix = true, exporting = false;
  std::map<std::string, std::string> prefix;
  for (std::size_t w = 0; w < words.size(); ++w) {
    emit_heredocs_before(w);
    const std::string& raw = words[w];
    const bool begins_command =
        (starts_command[w] && !in_array) || is_control_operator(raw) || (w > 0 && is_control_operator(words[w - 1]));
    if (!assigned_name(raw).empty() && raw.find("=(") != std::string::npos) in_array = raw.back() != ')';
    else if (in_array && !raw.empty() && raw.back() == ')') in_array = false;
    if (starts_command[w] || is_control_operator(raw)) {
      in_prefix = true;
      exporting = false;
      prefix.clear();
    }
    if (raw == "if" || raw == "elif") {
      std::vector<std::string> condition;
      std::size_t k = w + 1;
      for (; k < words.size() && words[k] != "then"; ++k) condition.push_back(expand(words[k], vars, file));
      if (raw == "if") branches.open(test_holds(condition));
      else branches.elif(test_holds(condition));
      w = k;  // past "then"
      continue;
    }
    if (raw == "else") { branches.otherwise(); continue; }
    if (raw == "fi") { branches.close(); continue; }
    // Loops: a while or until body runs where its test holds (once, as far as its
    // assignments go; the argument parser's `while [[ $# -gt 0 ]]` never, with no
    // arguments), a for body once; each ends at its done.
    if (raw == "while" || raw == "until") {
      std::vector<std::string> condition;
      std::size_t k = w + 1;
      for (; k < words.size() && words[k] != "do"; ++k) condition.push_back(expand(words[k], vars, file));
      const bool holds = test_holds(condition);
      branches.open(raw == "while" ? holds : !holds);
      w = k;  // past "do"
      continue;
    }
    if (raw == "for") { branches.open(true); continue; }
    if (raw == "done") { branches.close(); continue; }
    if (!branches.active()) continue;
    const std::string assigned = assigned_name(raw);
    bool starts_a_command = false;
    if (!assigned.empty() && raw.find("=(") == std::string::npos) {
      bool environment = false;
      vars[assigned] = evaluate_arithmetic(expand(raw.substr(assigned.size() + 1), vars, file, 0, &from_environment, &environment), vars);
      if (environment) from_environment.insert(assigned);
      else from_environment.erase(assigned);
      if (exporting) out.exported.insert(assigned);
      else if (in_prefix) prefix[assigned] = vars[assigned];
    } else if (in_prefix && raw == "export" && prefix.empty()) {
      exporting = true;
    } else if (exporting && raw.rfind('-', 0) != 0) {
      out.exported.insert(raw);  // `export NAME`
    } else {
      starts_a_command = in_prefix && !exporting && !is_control_operator(raw);
    }
    bool environment = false;
    out.words.push_back(evaluate_arithmetic(expand(raw, vars, file, 0, &from_environment, &environment), vars));
    word_environment.push_back(environment);
    word_begins_command.push_back(begins_command);
    if (starts_a_command) {  // its first word as expanded, with the NAME=value words before it
      out.commands.push_back({out.words.back(), prefix});
      in_prefix = false;
    }
  }
  emit_heredocs_before(words.size());
  for (const auto& [name, value] : vars)
    if (name != kScriptPath) out.variables[name] = value;
  collect_sed_pipelines(out.words, out.templated_files);
  std::vector<std::size_t> origin;
  out.words = split_option_items(out.words, origin);
  // A bare flag ending one command takes no value from the next command's first word.
  const auto begins_command = [&](std::size_t piece) {
    return word_begins_command[origin[piece]] && (piece == 0 || origin[piece - 1] != origin[piece]);
  };
  for (std::size_t w = 0; w < out.words.size(); ++w) {
    const std::string& s = out.words[w];
    if (s.size() < 3 || s.rfind("--", 0) != 0) continue;
    std::string name = s;
    bool environment = word_environment[origin[w]];
    if (const std::size_t eq = s.find('='); eq != std::string::npos) {
      name = s.substr(0, eq);
      out.options[name] = s.substr(eq + 1);
    } else if (w + 1 < out.words.size() && out.words[w + 1].rfind("--", 0) != 0 && !begins_command(w + 1)) {
      out.options[s] = out.words[w + 1];
      environment = word_environment[origin[w + 1]];
    } else {
      out.options[s] = "";
    }
    if (environment) out.from_environment.insert(name);
    else out.from_environment.erase(name);
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

}  // namespace trainplan::exporting
