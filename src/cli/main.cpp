// trainplan: plan distributed LLM training layouts and their cost.
#include <iostream>

#include "cli/commands.h"
#include "spec/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "trainplan: which tensor / pipeline / sequence / data-parallel layout trains this model\n"
      "fastest and cheapest on these instances, from an analytical step model calibrated\n"
      "by measured kernels and published runs.\n\n"
      "Start with:  trainplan list\n"
      "             trainplan estimate --model llama2-7b --hardware trn1.32xlarge --instances 128 --tp 8 --sp\n"
      "             trainplan search --model llama2-70b --hardware trn1.32xlarge,p5.48xlarge --instances 1..256\n"
      "             trainplan sweep --instances 1..128 --plot reports/scaling.png\n"
      "Every command takes --help; tables take --format text|markdown|csv|json.\n"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  trainplan::cli::add_all_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's own refusal, already explained on stderr
  } catch (const CLI::ExtrasError& e) {
    // An unknown flag: name the command's option it most likely meant.
    if (const std::string guess = trainplan::cli::closest_option(app, e.what()); !guess.empty()) {
      std::cerr << "trainplan: " << e.what() << "; did you mean " << guess << "?\n";
      return 2;
    }
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const trainplan::spec::SpecError& e) {
    std::cerr << "trainplan: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "trainplan: " << trainplan::spec::one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}
