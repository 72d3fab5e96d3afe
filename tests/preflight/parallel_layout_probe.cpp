// Prints the layout advice's C++ model (preflight/parallel_layout_advice.h)
// as JSON, for tests/preflight/test_layout_advice.py to compare with
// scripts/bench/scale_model.py on the same inputs: the units at the
// configured shard group, the compute time (given, or calibrated on
// torchtitan's rate), a prediction per group size, and the advice for
// parallel.shard_group_size and parallel.tensor_parallel_size.
// usage: parallel_layout_probe CONFIG_YAML WORLD RANKS_PER_NODE COMPUTE_S|calibrate GROUPS
//          [--single-nic] [--replica-stream separate|shared|blocking] [--overlap F]
//          [--tensors T,...]
//   GROUPS: comma-separated group sizes in ranks to predict at the configured
//   T (and the advice's candidates); --tensors: the T the advice tries (1)
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/derived.h"
#include "config/load.h"
#include "preflight/parallel_layout_advice.h"

namespace {

using nss::preflight::LayoutPrediction;

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> groups;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) groups.push_back(std::stoi(item));
  return groups;
}

nlohmann::ordered_json prediction_json(const LayoutPrediction& p) {
  return {{"g", p.shard_group},
          {"t", p.tensor},
          {"tensor_s", p.tensor_s},
          {"step_s", p.step_s},
          {"overlapped_s", p.overlapped_s},
          {"serial_s", p.serial_s},
          {"compute_s", p.compute_s},
          {"comm_s", p.comm_s},
          {"exposed_comm_s", p.exposed_comm_s},
          {"optimizer_s", p.optimizer_s},
          {"gather_s", p.gather_s},
          {"reduce_scatter_s", p.reduce_scatter_s},
          {"all_reduce_s", p.all_reduce_s},
          {"state_bytes_per_rank", p.state_bytes_per_rank},
          {"tokens_per_s_per_gpu", p.tokens_per_s_per_rank},
          {"efficiency", p.efficiency},
          {"shard_group", {p.shard_span.nodes, p.shard_span.per_node}},
          {"replica_group", {p.replica_span.nodes, p.replica_span.per_node}}};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nss::preflight;
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: parallel_layout_probe CONFIG_YAML WORLD RANKS_PER_NODE "
                 "COMPUTE_S|calibrate GROUPS [--single-nic] [--replica-stream S] [--overlap F] "
                 "[--tensors T,...]\n");
    return 2;
  }
  try {
    const nss::config::Config config = nss::config::parse_config_text(argv[1], "argv[1]");
    const int n = std::atoi(argv[2]);
    LinkModel links = configured_links(config.preflight, std::atoi(argv[3]));
    StepWorkload workload = configured_workload(config, n);
    std::vector<int> tensors{1};
    for (int i = 6; i < argc; ++i) {
      const std::string option = argv[i];
      if (option == "--single-nic") {
        links.single_nic = true;
      } else if (option == "--replica-stream" && i + 1 < argc) {
        const std::string stream = argv[++i];
        workload.replica_stream = stream == "shared"     ? ReplicaStream::kShared
                                  : stream == "blocking" ? ReplicaStream::kBlocking
                                                         : ReplicaStream::kSeparate;
      } else if (option == "--overlap" && i + 1 < argc) {
        workload.overlap = std::atof(argv[++i]);
      } else if (option == "--tensors" && i + 1 < argc) {
        tensors = parse_list(argv[++i]);
      } else {
        std::fprintf(stderr, "parallel_layout_probe: unknown option %s\n", option.c_str());
        return 2;
      }
    }
    const StepTimeModel model(config, nss::DeviceKind::kCuda, workload, links);
    const std::string compute_arg = argv[4];
    const double compute_s =
        compute_arg == "calibrate" ? model.calibrate_on_torchtitan() : std::atof(argv[4]);
    const std::vector<int> groups = parse_list(argv[5]);
    const int g = nss::config::shard_group_ranks(config.parallel, n);
    const int t = workload.tensor;

    nlohmann::ordered_json units = nlohmann::ordered_json::array();
    for (const auto& u : unit_costs(config, nss::DeviceKind::kCuda, g, t))
      units.push_back({{"gathered_bytes", u.gathered_bytes},
                       {"reduced_bytes", u.reduced_bytes},
                       {"replica_reduced_bytes", u.replica_reduced_bytes},
                       {"shard_parameters", u.shard_parameters},
                       {"flops_weight", u.flops_weight},
                       {"backward", u.backward}});
    nlohmann::ordered_json predictions = nlohmann::ordered_json::array();
    for (const int group : groups)
      if (group >= t && group % t == 0 && n % group == 0)
        predictions.push_back(prediction_json(model.predict(n, group / t, compute_s)));
    const LayoutAdvice advice = advise_layout(
        model, n, g, compute_s, candidate_layouts(model, n, groups, tensors, nullptr));
    const nlohmann::ordered_json out = {{"tokens_per_rank", workload.tokens_per_rank},
                                        {"micro_steps", workload.micro_steps},
                                        {"compute_s", compute_s},
                                        {"units", units},
                                        {"predictions", predictions},
                                        {"advice",
                                         {{"g", advice.mine.shard_group},
                                          {"t", advice.mine.tensor},
                                          {"best_g", advice.best.shard_group},
                                          {"best_t", advice.best.tensor},
                                          {"step_s", advice.mine.step_s},
                                          {"best_step_s", advice.best.step_s},
                                          {"efficiency", advice.mine.efficiency},
                                          {"best_efficiency", advice.best.efficiency},
                                          {"slower", advice.slower},
                                          {"far", advice.far}}}};
    std::printf("%s\n", out.dump(1).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parallel_layout_probe: %s\n", e.what());
    return 2;
  }
  return 0;
}
