// --quantize and --double-quant, for the tools that load a model to score or
// sample it (nss_eval, nss_generate); eval/quantize_request.h decides what
// they mean.
#pragma once

#include <CLI/CLI.hpp>

#include "eval/quantize_request.h"

namespace nss {

inline void add_quantize_options(CLI::App& cli, eval::QuantizeRequest& request) {
  cli.add_option("--quantize", request.mode,
                 "auto (a checkpoint step as its run trained it: NF4 for a QLoRA step), none, "
                 "or nf4 (the projections as a QLoRA run computes with them)")
      ->capture_default_str();
  cli.add_flag("--double-quant", request.double_quant,
               "With --quantize nf4: double quantisation (a QLoRA step's own setting applies)");
}

}  // namespace nss
