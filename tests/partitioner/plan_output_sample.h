// A hand-built Plan for the plan-output tests (no planner needed): 4 devices on one
// node, one layer of each strategy, a name with HTML metacharacters; and the cluster
// it is for.
#pragma once

#include "tessera/costmodel/cluster.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner::testing_sample {

inline LayerPlan Layer(const char* name, const char* op, Strategy s, int64_t params,
                       double compute_s, double comm_s, int64_t comm_bytes) {
  LayerPlan l;
  l.name = name;
  l.op = op;
  l.strategy = s;
  l.params = params;
  if (params > 0) l.param_names = {std::string(name) + ".weight", std::string(name) + ".bias"};
  l.forward_flops = 1e9 * (params + 1);
  l.reason = std::string("because ") + name;
  l.compute_s = compute_s;
  l.comm_s = comm_s;
  l.comm_bytes = comm_bytes;
  l.memory_bytes = params * 16;
  return l;
}

inline Plan SamplePlan() {
  Plan p;
  p.model_name = "tiny<net>";
  p.model_params = 1000;
  p.model_forward_flops = 5e12;
  p.model_ops = 4;
  p.batch = 64;
  p.cluster_name = "v100-vpc32";
  p.devices = 4;
  p.nodes = 1;
  p.planner = "heuristic";
  p.layers = {Layer("conv1", "Conv", Strategy::kDataParallel, 100, 0.004, 0.001, 1 << 20),
              Layer("fc<script>&", "Gemm", Strategy::kModelParallel, 800, 0.002, 0.0005, 4096),
              Layer("fc2", "Gemm", Strategy::kLateMultiply, 100, 0.001, 0.0002, 2048),
              Layer("softmax", "Softmax", Strategy::kReplicated, 0, 0.0001, 0, 0)};
  // The model-parallel layer reads conv1's output whole and leaves its own split by feature.
  LayerPlan& fc = p.layers[1];
  fc.output_layout = Layout::kFeature;
  fc.input_tensors = {7};
  fc.input_tensor_names = {"conv1.out"};
  fc.input_layouts = {Layout::kReplicated};
  fc.partial_dx = true;
  p.predicted = {.step_time_s = 0.008, .compute_s = 0.0071, .comm_s = 0.0017,
                 .exposed_comm_s = 0.0009, .samples_per_s = 8000};
  p.memory.device_capacity_bytes = int64_t{16} << 30;
  p.memory.peak_bytes = {int64_t{3} << 30, int64_t{3} << 30, int64_t{2} << 30, int64_t{20} << 30};
  p.memory.fits = false;
  // The breakdown is the largest device's (device 3): its parts add up to 20 GiB.
  p.memory.params_bytes = 4000;
  p.memory.grads_bytes = 4000;
  p.memory.optimizer_bytes = 8000;
  p.memory.workspace_bytes = 1 << 20;
  p.memory.comm_buffer_bytes = 25 << 20;
  p.memory.activation_bytes = p.memory.peak_bytes[3] - 16000 - (26 << 20);
  p.buckets = {.first_bytes = 512 << 10, .bytes = 4 << 20, .tuned = true, .count = 3};
  p.data_parallel = {.step_time_s = 0.012, .peak_bytes = int64_t{5} << 30, .fits = true};
  p.model_parallel = {.step_time_s = 0.02, .peak_bytes = int64_t{1} << 30, .fits = true};
  p.timeline = {{"forward conv1", "compute", 0, 0.0, 0.001},
                {"forward fc<script>&", "compute", 0, 0.001, 0.0005},
                {"allreduce bucket 0", "comm", 0, 0.002, 0.0007},
                {"forward conv1", "compute", 1, 0.0, 0.001}};
  return p;
}

// The 4-device node of SamplePlan, with figures each written differently, a device name with
// HTML metacharacters and a price.
inline costmodel::ClusterSpec SampleCluster() {
  costmodel::ClusterSpec c;
  c.name = "v100-vpc32";
  c.devices_per_node = 8;
  c.nodes = 1;
  c.partial_devices = 4;
  c.device = {.name = "V100<SXM2>", .peak_flops_f32 = 15.7e12, .peak_flops_f16 = 125e12,
              .memory_bytes = int64_t{16} << 30, .memory_bandwidth = 900e9};
  c.intra_node = {.bandwidth = 150e9, .latency = 3e-6};
  c.inter_node = {.bandwidth = 4e9, .latency = 40e-6};
  c.price_per_device_hour = 3.06;
  c.source = "data sheets & <guesses>";
  return c;
}

}  // namespace tessera::partitioner::testing_sample
