// The options of a launch script: the words of a POSIX shell script (quotes,
// backslash-newline continuations and # comments honoured; $VAR, ${VAR} and
// ${VAR:-default} expanded from the script's own assignments where they stand,
// $(( integer arithmetic )) evaluated, the script run without arguments ($# 0)
// from its own path ($0; dirname, basename, realpath of a path), others left as
// written; words in an if/elif/else branch or a while/until loop whose [ test ]
// is false dropped; quoted "--option value"
// array items split; here-documents kept by the file they are written to; a
// template edited through a `sed "s/A/B/" TEMPLATE | sed ... > FILE` pipeline
// kept as the template's name and its edits) and every `--name value`, `--name=value` or bare `--flag` among them. A name given
// twice keeps its last value, as argparse does.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace trainplan::exporting {

// One `s/PATTERN/REPLACEMENT/[g]` of sed on a literal word (no regular expression; no & or backslash
// in the replacement): Microsoft's Megatron-DeepSpeed examples fill their ds_config
// templates so (examples_deepspeed/rebase/ds_pretrain_gpt_1.3B.sh:290-295 at f4157bea).
struct SedEdit {
  std::string pattern, replacement;
  bool global = false;  // the g flag: every occurrence on a line, not the first
};
// A file a script writes by running sed over a template: the template's name as the
// script gives it, and the edits in pipeline order. `unsupported` names the first sed
// expression trainplan does not apply (then no edit is to be trusted).
struct SedTemplate {
  std::string input;
  std::vector<SedEdit> edits;
  std::string unsupported;
};
// The template's text with the edits applied line by line, as sed does.
std::string apply_sed(const SedTemplate& t, const std::string& text);

struct ShellArgs {
  std::map<std::string, std::string> options;  // "--seq-length" -> "4096"; a bare flag -> ""
  std::vector<std::string> comments;           // each "# ..." line, without the '#'
  std::vector<std::string> words;
  // Here-documents the script writes to a file (`cat <<EOF > $DS_CONFIG`), by that file's expanded name.
  std::map<std::string, std::string> written_files;
  // Files written by a sed pipeline over a template (`sed "s/GBSIZE/512/" T | sed ... > F`), by F's expanded name.
  std::map<std::string, SedTemplate> templated_files;
  // Options whose value came from the caller's environment (${SLURM_NNODES:-1},
  // directly or through the script's variables): a default the job overrides.
  std::set<std::string> from_environment;
  // The script's variables as its last assignment in a taken branch left them
  // (`NAME=value`, `export NAME=value`, and a command's `NAME=value` prefixes).
  std::map<std::string, std::string> variables;
  // Of those, the ones `export` hands to every command run after it.
  std::set<std::string> exported;
  // Each command the script runs (in a taken branch), by its first word as expanded,
  // with the `NAME=value` words before it, which set that command's environment alone:
  // Intel's run_llama.sh reads its HL_* settings from its environment so.
  struct Command {
    std::string name;
    std::map<std::string, std::string> environment;
  };
  std::vector<Command> commands;
  // What a command sees of the script's variables: the exported ones and its own prefixes.
  std::map<std::string, std::string> environment_of(const Command& command) const;

  // Every option a reader asked about (has, value, whole, real), present or not.
  mutable std::set<std::string> consulted;

  bool has(const std::string& name) const {
    consulted.insert(name);
    return options.count(name) > 0;
  }
  // The script's options no reader asked about, in name order, the launcher's own rendezvous
  // options (--node_rank, --master_addr, --master_port, --hostfile, ...) left out.
  std::vector<std::string> unconsulted() const;
  std::optional<std::string> value(const std::string& name) const;
  // The option as a whole number in [min, max] (refused naming `file`), or `fallback` when absent.
  long whole(const std::string& name, long min, long max, long fallback, const std::string& file) const;
  // The option as a real number (refused naming `file`), or `fallback` when absent.
  double real(const std::string& name, double fallback, const std::string& file) const;
};

// Options to write, in order: each rendered as "  --name value \\\n" (a flag without value).
struct ArgList {
  std::vector<std::pair<std::string, std::string>> items;
  void flag(const std::string& name) { items.emplace_back(name, ""); }
  void text(const std::string& name, const std::string& value) { items.emplace_back(name, value); }
  void number(const std::string& name, long long value) { items.emplace_back(name, std::to_string(value)); }
  std::string render() const;
};

// `NAME=value` (also after `export`): the name, or "" when the word is not an assignment.
std::string assigned_name(const std::string& word);

// Throws spec::SpecError naming `file` for an unterminated quote.
ShellArgs parse_shell_args(const std::string& text, const std::string& file);

// One shell word, quoted only where it must be.
std::string shell_quote(const std::string& word);

}  // namespace trainplan::exporting
