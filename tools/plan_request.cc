#include "tessera/tools/plan_request.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/batch.h"
#include "tessera/partitioner/planner.h"
#include "tessera/tools/model_loader.h"

namespace tessera::tools {

void AddPlanRequestOptions(ArgParser& p, PlanRequest& r, const PlanRequestHelp& help) {
  p.AddPositional("MODEL", "an .onnx file, a graph .json file, zoo:NAME, nmt or ocr", &r.model);
  p.AddInt("--devices", "N", help.devices, &r.devices, 1);
  p.AddString("--cluster", "NAME|FILE", help.cluster, &r.cluster);
  p.AddInt("--batch", "B", "global batch in place of the model's own; must divide by N",
           &r.batch, 1)
      .Default("the model's");
  p.AddChoice("--optimizer", {"sgd", "momentum", "adam"}, "optimizer state kept per parameter",
              &r.optimizer);
  p.AddChoice("--strategy", {"auto", "data", "model", "late", "optimal"}, help.strategy, &r.strategy);
  AddBucketSizeOptions(p, &r.bucket_bytes, &r.first_bucket_bytes);
}

void AddBucketSizeOptions(ArgParser& p, int64_t* bucket_bytes, int64_t* first_bucket_bytes) {
  p.AddByteSize("--bucket-size", "SIZE",
                "gradient buckets after the first hold up to SIZE, e.g. 4MiB", bucket_bytes)
      .Default("the planner's, the fastest in its simulation");
  p.AddByteSize("--first-bucket-size", "SIZE",
                "the first gradient bucket, launched first, holds up to SIZE", first_bucket_bytes)
      .Default("the planner's");
}

absl::StatusOr<PlannedModel> PlanRequestedModel(
    const PlanRequest& r, const absl::flat_hash_map<std::string, int64_t>& dims) {
  TS_ASSIGN_OR_RETURN(costmodel::ClusterSpec cluster, costmodel::LoadCluster(r.cluster));
  PlannedModel m;
  TS_ASSIGN_OR_RETURN(m.graph, LoadModel(r.model, {.batch = r.batch, .data_inputs = r.inputs,
                                                    .symbolic_dims = dims}));
  const int64_t batch = graph::GraphBatch(m.graph);
  if (batch % r.devices != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the global batch ", batch, " of model '", r.model, "' does not divide over ", r.devices,
        " devices; pass a --batch that is a multiple of ", r.devices));
  }
  TS_ASSIGN_OR_RETURN(partitioner::PlannerKind kind, partitioner::ParsePlannerKind(r.strategy));
  TS_ASSIGN_OR_RETURN(m.optimizer, costmodel::ParseOptimizerKind(r.optimizer));
  const costmodel::ClusterSpec sized = cluster.WithDevices(static_cast<int>(r.devices));
  const costmodel::RooflineCostModel cost(sized);
  TS_ASSIGN_OR_RETURN(m.plan, partitioner::PlanModel(m.graph, sized, cost,
                                                     {.devices = static_cast<int>(r.devices),
                                                      .optimizer = m.optimizer,
                                                      .planner = kind,
                                                      .bucket_bytes = r.bucket_bytes,
                                                      .first_bucket_bytes = r.first_bucket_bytes,
                                                      .executable = r.executable}));
  m.cluster = sized;
  return m;
}

}  // namespace tessera::tools
