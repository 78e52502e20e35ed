// `trainplan list`: the models and hardware trainplan knows, with key figures.
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "spec/load.h"

namespace tp::cli {

void add_list_command(CLI::App& app) {
  CLI::App* c = app.add_subcommand("list", "List the known models and hardware with their key figures");
  c->callback([] {
    std::cout << "models (models/*.json)\n";
    std::cout << "  " << std::left << std::setw(14) << "name" << std::right << std::setw(10) << "params" << std::setw(8)
              << "layers" << std::setw(8) << "hidden" << std::setw(7) << "heads" << std::setw(5) << "kv" << std::setw(8)
              << "ffn" << std::setw(8) << "vocab" << "  kind, mlp\n";
    for (const auto& name : spec::list_model_names()) {
      const auto m = spec::load_model(name);
      std::cout << "  " << std::left << std::setw(14) << m.name << std::right << std::setw(9) << std::fixed
                << std::setprecision(2) << m.total_parameters() / 1e9 << "B" << std::setw(8) << m.layers << std::setw(8)
                << m.hidden << std::setw(7) << m.heads << std::setw(5) << m.kv_heads << std::setw(8) << m.ffn_hidden
                << std::setw(8) << m.vocab << "  " << spec::to_string(m.kind) << ", " << spec::to_string(m.mlp) << "\n";
    }
    std::cout << "\nhardware (hardware/*.json); per device: BF16 peak, HBM, HBM bandwidth\n";
    std::cout << "  " << std::left << std::setw(16) << "name" << std::right << std::setw(8) << "devices" << std::setw(12)
              << "TFLOP/s" << std::setw(9) << "GiB" << std::setw(9) << "GB/s" << std::setw(12) << "fabric"
              << std::setw(9) << "EFA Gb/s" << "  prices (USD per instance-hour)\n";
    for (const auto& name : spec::list_hardware_names()) {
      const auto h = spec::load_hardware(name);
      std::cout << "  " << std::left << std::setw(16) << h.name << std::right << std::setw(8) << h.devices_per_instance()
                << std::setw(12) << std::setprecision(1) << h.peak_bf16_flops_per_s / 1e12 << std::setw(9)
                << h.hbm_bytes / 1073741824.0 << std::setw(9) << std::setprecision(0) << h.hbm_bytes_per_s / 1e9
                << std::setw(12) << spec::to_string(h.fabric) << std::setw(9) << h.efa_gbps << "  ";
      for (size_t i = 0; i < h.prices.size(); ++i)
        std::cout << (i ? ", " : "") << h.prices[i].kind << " " << std::setprecision(2) << h.prices[i].usd_per_instance_hour;
      std::cout << "\n";
    }
  });
}

}  // namespace tp::cli
