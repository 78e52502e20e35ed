// The Python module `trainplan`: each function parses its keywords (spelled as the long
// options in snake_case) with the subcommand's own CLI11 options, as the program does,
// then calls the run the command's callback calls and returns its --format json document
// (cli/command_output.h) as a dict. Notes the program prints on stderr go to sys.stderr;
// errors raise trainplan.SpecError, PlanRefused or ArgumentError (all trainplan.Error), else RuntimeError.
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/command_output.h"
#include "spec/error.h"

namespace py = pybind11;

namespace {

const char* const kModuleDoc = R"doc(trainplan: which tensor / pipeline / sequence / data-parallel layout trains this
model fastest and cheapest on these instances, from the same step model as the
`trainplan` program.

Each function runs the subcommand of the same name and returns its versioned
--format json document as a dict: {"schema": "trainplan/<command>/1",
"query": {...}, ...}, as data/schema/<command>.schema.json describes; tables
are under "tables", each {"key", "title", "scope", "rows", "notes"}.
Keywords are the command's long options in snake_case (seq_len=4096 is
--seq-len 4096); help(trainplan.<command>) lists them, as does
`trainplan <command> --help`.

    doc = trainplan.search(model="llama2-70b", hardware=["trn1.32xlarge", "p5.48xlarge"],
                           instances="1..256", objective="tokens-per-dollar", top=10)
    pandas.DataFrame(trainplan.rows(doc, "best_plans"))

Errors: SpecError (a bad descriptor or path: .file, .field, .expected),
PlanRefused (a plan that cannot run: .message, .document), ArgumentError
(an unknown keyword or a bad value; also a ValueError); all are trainplan.Error.
)doc";

// Exception classes and rows(), run once in the module's namespace. `list` there is
// trainplan.list once the functions are added, so this code keeps the builtin as _list.
const char* const kPythonPart = R"py(
_list = list

class Error(Exception):
    """Base of the errors trainplan raises; .message is the line the CLI prints after 'trainplan: '."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class SpecError(Error):
    """A descriptor, config or path trainplan cannot use: .file names it, .field is the
    JSON path of the bad field (empty when the whole file is at fault) and .expected
    says what was expected there."""

    def __init__(self, message, file, field, expected):
        super().__init__(message)
        self.file = file
        self.field = field
        self.expected = expected


class PlanRefused(Error):
    """A plan that cannot run (does not fit in HBM, TP not dividing the heads, a ZeRO
    stage the stack lacks ...): .message says why; .document is the estimate's document
    when one was made before the refusal (a plan short of memory), else None."""

    def __init__(self, message, document=None):
        super().__init__(message)
        self.document = document


class ArgumentError(Error, ValueError):
    """An unknown keyword or a value the command does not take."""


def rows(document, key):
    """The rows of every table whose "key" is `key` (search prints one per
    hardware), as a list of dicts that pandas.DataFrame takes as it is; each
    row carries its table's scope ({"hardware": ...}) as keys of its own.
    A document without such a table but with a top-level list under `key`
    (estimate's "prices") gives that list.
    Raises KeyError naming the keys the document has."""
    tables = document.get("tables", [])
    found = [t for t in tables if t.get("key") == key]
    if found:
        return [{**t.get("scope", {}), **row} for t in found for row in t["rows"]]
    if isinstance(document.get(key), _list):
        return document[key]
    have = [t.get("key") for t in tables] or sorted(k for k, v in document.items() if isinstance(v, _list))
    raise KeyError(f"no table {key!r} in this {document.get('schema', 'document')}; it has {', '.join(map(str, have)) or 'none'}")


__all__ = ["estimate", "search", "sweep", "compare", "validate", "rows",
           "Error", "SpecError", "PlanRefused", "ArgumentError"]  # not `list`: it would hide the builtin
)py";

[[noreturn]] void raise(const py::object& exception) {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  throw py::error_already_set();
}

[[noreturn]] void raise_argument_error(const py::module_& module, const std::string& message) {
  raise(module.attr("ArgumentError")(message));
}

// The program's commands on `app`, none printing: the runs of the module's by name.
std::map<std::string, trainplan::cli::CommandRun> make_app(CLI::App& app) {
  app.require_subcommand(1);
  return trainplan::cli::add_all_commands(app, false);
}

// What an option takes: CLI11 names its type and check as "INT:INT in 1..8" or
// "TEXT:{on,off}", and the check says more.
std::string value_text(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const std::size_t colon = type.find(':');
  return colon == std::string::npos ? type : type.substr(colon + 1);
}

// Options the module sets itself: the caller may not. quiet is always on (no
// progress bar in a library); quiet=True or False is taken and changes nothing.
bool reserved(const std::string& key) { return key == "format" || key == "help" || key == "help_all"; }

// A keyword's value (or name) as the UTF-8 text the command reads. Bytes are
// refused rather than read as their repr ("b'x'"), and a str UTF-8 cannot hold
// (a lone surrogate) as an ArgumentError rather than Python's UnicodeEncodeError.
std::string utf8_text(const py::module_& module, const std::string& key, const py::handle value) {
  if (py::isinstance<py::bytes>(value) || py::isinstance<py::bytearray>(value))
    raise_argument_error(module, key + ": a str, number or list of them, not bytes (decode it first)");
  try {
    return std::string(py::str(value));
  } catch (const py::error_already_set&) {
    raise_argument_error(module, key + ": text UTF-8 can encode (it holds a lone surrogate or similar)");
  }
}

// "--seq-len=4096", "--sp", "--hardware=a,b": one token per keyword; None and False give none.
std::vector<std::string> arguments_of(const py::module_& module, const CLI::App& command, const py::kwargs& kwargs) {
  std::vector<std::string> tokens;
  for (const auto& [key_handle, value] : kwargs) {
    const std::string key = utf8_text(module, "a keyword", key_handle);
    if (key == "quiet") continue;
    if (reserved(key))
      raise_argument_error(module, key + ": set by the module (the document is always --format json, with no progress "
                                         "bar); help(trainplan." + command.get_name() + ") lists the keywords");
    std::string name = "--" + key;
    for (char& c : name)
      if (c == '_') c = '-';
    if (value.is_none()) continue;
    const CLI::Option* option = command.get_option_no_throw(name);
    if (py::isinstance<py::bool_>(value)) {
      if (option && option->get_expected_max() != 0)
        raise_argument_error(module, key + ": " + name + " takes a value (" + value_text(*option) +
                                         "), not True or False");
      // False is the flag's "no" twin where the command has one (sp=False is --no-sp, as the stack's
      // default may turn SP on), else no token.
      const std::string negated = "--no-" + name.substr(2);
      if (value.cast<bool>()) tokens.push_back(name);
      else if (command.get_option_no_throw(negated)) tokens.push_back(negated);
      continue;
    }
    std::string text;
    if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      for (const py::handle item : value) {
        if (!text.empty()) text += ',';
        text += utf8_text(module, key, item);
      }
    } else {
      text = utf8_text(module, key, value);
    }
    // A NUL would end the string the command reads: 'llama2-7b\0evil' ran as llama2-7b.
    if (text.find('\0') != std::string::npos)
      raise_argument_error(module, key + ": a value without NUL characters");
    tokens.push_back(name + "=" + text);
  }
  return tokens;
}

// Every line of the command's stderr without the program's "trainplan: " prefix.
std::string without_prefix(const std::string& text) {
  std::istringstream lines(text);
  std::string line, out;
  const std::string prefix = "trainplan: ";
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    if (!line.empty()) out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

py::dict run_command(const std::string& name, const py::kwargs& kwargs) {
  const py::module_ module = py::module_::import("trainplan");
  CLI::App app{"trainplan"};
  const trainplan::cli::CommandRun run = make_app(app).at(name);
  CLI::App* command = app.get_subcommand(name);
  std::vector<std::string> argv_text{"trainplan", name};
  for (std::string& token : arguments_of(module, *command, kwargs)) argv_text.push_back(std::move(token));
  argv_text.push_back("--format=json");
  if (command->get_option_no_throw("--quiet")) argv_text.push_back("--quiet");
  std::vector<const char*> argv;
  for (const std::string& a : argv_text) argv.push_back(a.c_str());

  std::ostringstream notes;  // what the program says on stderr
  trainplan::cli::CommandOutput output;
  std::string document, message;  // the document as --format json prints it (unindented); empty where none
  try {
    app.parse(int(argv.size()), argv.data());
    output = run(notes);
    if (const nlohmann::ordered_json made = json_document_of(output); !made.is_null()) document = made.dump();
  } catch (const CLI::ParseError& e) {
    raise_argument_error(module, e.what());
  } catch (const trainplan::spec::SpecError& e) {
    raise(module.attr("SpecError")(e.what(), e.file(), e.json_path(), e.expected()));
  } catch (const std::exception& e) {
    output.exit_code = 1;
    message = e.what();
  }
  // json.loads of the printed text, not a walk over the document: the dict must hold what
  // the program prints, non-finite numbers as None included.
  const auto dict_of = [](const std::string& text) { return py::module_::import("json").attr("loads")(text); };
  const std::string told = without_prefix(notes.str());
  if (output.exit_code == 0) {
    if (!notes.str().empty()) py::module_::import("sys").attr("stderr").attr("write")(notes.str());
    if (!document.empty()) return dict_of(document);
    message = "printed no JSON document" + (output.printed.empty() ? "" : ", but: " + output.printed.substr(0, 200));
  } else if (output.exit_code == 2) {
    raise(module.attr("PlanRefused")(told, document.empty() ? py::none() : dict_of(document)));
  }
  if (message.empty()) message = told;
  throw std::runtime_error("trainplan " + name + " failed: " + (message.empty() ? "no reason given" : message));
}

// The keywords of one command in Python terms, from its CLI options: the docstring.
std::string docstring_of(const CLI::App& command) {
  const std::string name = command.get_name();
  std::string doc = command.get_description() + ".\n\n" +
                    "Runs `trainplan " + name + "` and returns its --format json document\n"
                    "(schema trainplan/" + name + "/1, data/schema/" + name + ".schema.json) as a dict.\n"
                    "Keywords are the long options in snake_case: True gives a bare flag, False its --no-\n"
                    "twin where there is one (sp=False is --no-sp) else leaves it out, None leaves it out,\n"
                    "a list is joined with commas. `trainplan " + name + " --help` says the\n"
                    "same in command-line terms. Raises SpecError, PlanRefused or ArgumentError.\n\n"
                    "Keywords (default in brackets):\n";
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_lnames().empty()) continue;
    std::string key = option->get_lnames().front();
    for (char& c : key)
      if (c == '-') c = '_';
    if (reserved(key) || key == "quiet") continue;  // quiet: always on, nothing to teach
    std::string line = "  " + key + ": " + (option->get_expected_max() == 0 ? "bool" : value_text(*option));
    if (!option->get_default_str().empty()) line += " [" + option->get_default_str() + "]";
    std::string description = option->get_description();
    for (std::size_t at = description.find('\n'); at != std::string::npos; at = description.find('\n', at))
      description.replace(at, 1, " ");
    doc += line + "\n      " + description + "\n";
  }
  return doc;
}

}  // namespace

PYBIND11_MODULE(trainplan, m) {
  m.doc() = kModuleDoc;
  py::exec(kPythonPart, m.attr("__dict__"));
  CLI::App app{"trainplan"};
  make_app(app);
  for (const char* name : {"estimate", "search", "sweep", "compare", "list", "validate"}) {
    const std::string command = name;
    m.def(
        name, [command](const py::kwargs& kwargs) { return run_command(command, kwargs); },
        docstring_of(*app.get_subcommand(command)).c_str());
  }
}
