// --model, --base, --quantize and --double-quant, for the tools that load a
// model to score or sample it (nss_eval, nss_generate); eval/inference_model.h
// decides what they mean.
#pragma once

#include <CLI/CLI.hpp>

#include "eval/inference_model.h"
#include "tool_cli.h"

namespace nss {

inline void add_model_options(CLI::App& cli, eval::ModelSource& source) {
  cli.add_option("--model", source.path,
                 "Local Hugging Face model directory (config.json + safetensors), a checkpoint "
                 "step directory (checkpoints/step_NNNNNNNN), or a PEFT adapter directory (with "
                 "--base)")
      ->required();
  cli.add_option("--base", source.base,
                 "The base model's Hugging Face directory, for a PEFT adapter directory");
  add_choice_option(cli, "--quantize", source.quantize.mode,
                    "auto: a checkpoint step as its run trained it (NF4 for a QLoRA step); none; "
                    "nf4: the projections as a QLoRA run computes with them");
  cli.add_flag("--double-quant", source.quantize.double_quant,
               "With --quantize nf4: double quantisation (a QLoRA step's own setting applies)");
}

}  // namespace nss
