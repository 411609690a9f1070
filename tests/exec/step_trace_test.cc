// The measured timeline of training: StepTrace's spans, names and ring of kept steps; the
// Chrome trace TrainingTrace writes; and, on thread ranks, every node's spans and collectives
// whose bytes add up, per rank and step, to what the step measured.
#include "tessera/exec/step_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/exec/hybrid_training.h"
#include "tessera/exec/training_trace.h"
#include "tessera/graph/builder.h"

namespace tessera::exec {
namespace {

using Clock = StepTrace::Clock;
using std::chrono::milliseconds;

comm::CollectiveEvent Collective(absl::string_view name, int64_t sequence, int64_t bytes,
                                 Clock::time_point start, Clock::time_point end) {
  return {.collective = name, .sequence = sequence, .payload_bytes = bytes, .start = start,
          .end = end};
}

// One step of a fake rank: fc1's forward with an all-gather inside, two gradient buckets
// ending out of order, the agreement after EndCommunication (left out), the update.
void FakeStep(StepTrace& t, int64_t step) {
  t.BeginStep(step);
  const Clock::time_point t0 = Clock::now();
  std::this_thread::sleep_for(milliseconds(3));
  t.activations().OnCollective(Collective("all_gather", 4 * step, 100, t0 + milliseconds(1),
                                          t0 + milliseconds(2)));
  t.OnNode(0, /*backward=*/false, std::chrono::duration<double>(Clock::now() - t0).count());
  t.OnNode(1, /*backward=*/true, 1e-4);
  const Clock::time_point t1 = Clock::now();
  t.gradients().OnCollective(Collective("all_reduce", 2 * step + 1, 30, t1, t1));
  t.gradients().OnCollective(Collective("all_reduce", 2 * step, 20, t1, t1));
  t.EndCommunication();
  t.activations().OnCollective(Collective("all_reduce", 4 * step + 1, 8, t1, t1));
  t.AddComputeSpan("optimizer update", t1, Clock::now());
  t.EndStep();
}

TEST(StepTraceTest, NamesSpansAndKeepsTheLastSteps) {
  StepTrace t(/*steps_kept=*/2, {"fc1", "fc2"});
  t.activations().OnCollective(Collective("all_reduce", 0, 8, Clock::now(), Clock::now()));
  FakeStep(t, 0);
  const Clock::time_point step1 = Clock::now();
  FakeStep(t, 1);
  FakeStep(t, 2);
  const std::vector<TraceEvent> events = t.Events(step1);
  std::map<int64_t, std::map<std::string, TraceEvent>> by_step;
  for (const TraceEvent& e : events) {
    EXPECT_TRUE(by_step[e.step].emplace(e.name, e).second) << "twice: " << e.name;
  }
  ASSERT_EQ(by_step.size(), 2u);  // steps 1 and 2
  ASSERT_TRUE(by_step.contains(1) && by_step.contains(2));
  for (auto& [step, spans] : by_step) {
    std::set<std::string> names;
    for (const auto& [name, e] : spans) names.insert(name);
    EXPECT_EQ(names, (std::set<std::string>{"fc1 forward", "fc1 forward all_gather",
                                            "fc2 backward", "gradient bucket 0",
                                            "gradient bucket 1", "optimizer update"}))
        << "step " << step;
    const TraceEvent& gather = spans.at("fc1 forward all_gather");
    EXPECT_EQ(gather.track, kActivationsTrack);
    EXPECT_EQ(gather.collective, "all_gather");
    EXPECT_EQ(gather.bytes, 100);
    EXPECT_NEAR(gather.duration_s, 1e-3, 1e-9);
    EXPECT_EQ(spans.at("gradient bucket 0").bytes, 20);  // the lower sequence
    EXPECT_EQ(spans.at("gradient bucket 1").bytes, 30);
    EXPECT_EQ(spans.at("gradient bucket 0").track, kGradientsTrack);
    EXPECT_EQ(spans.at("fc1 forward").track, kComputeTrack);
    EXPECT_TRUE(spans.at("fc1 forward").collective.empty());
    EXPECT_GE(spans.at("fc1 forward").duration_s, 3e-3);
  }
  // Times from the origin given, each step's spans by start.
  EXPECT_EQ(events.front().step, 1);
  EXPECT_GE(events.front().start_s, 0);
  EXPECT_LT(events.front().start_s, 1e-3);
  EXPECT_GT(by_step[2].at("fc1 forward").start_s, by_step[1].at("optimizer update").start_s);
}

TEST(TrainingTraceTest, ProcessPerWorkerTracksAndArgs) {
  const std::vector<std::vector<TraceEvent>> workers = {
      {{.name = "fc1 forward", .track = kComputeTrack, .step = 4, .start_s = -1e-3,
        .duration_s = 2e-3},
       {.name = "gradient bucket 0", .track = kGradientsTrack, .step = 4, .start_s = 1e-3,
        .duration_s = 5e-4, .collective = "all_reduce", .bytes = 4096}},
      {{.name = "fc1 forward all_gather", .track = kActivationsTrack, .step = 5,
        .start_s = 0.25, .duration_s = 1e-6, .collective = "all_gather", .bytes = 12}}};
  const nlohmann::json t = TrainingTrace(workers, {.model = "mlp", .backend = "thread"});
  EXPECT_EQ(t["otherData"]["model"], "mlp");
  EXPECT_EQ(t["otherData"]["workers"], 2);
  EXPECT_EQ(t["otherData"]["first_step"], 4);
  EXPECT_EQ(t["otherData"]["last_step"], 5);
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::vector<nlohmann::json> spans;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e["ph"] == "X") spans.push_back(e);
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{0, "worker 0"}, {1, "worker 1"}}));
  EXPECT_EQ(threads, (std::map<std::pair<int, int>, std::string>{
                         {{0, 0}, "compute"}, {{0, 2}, "gradients"}, {{1, 1}, "activations"}}));
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0]["name"], "fc1 forward");
  EXPECT_DOUBLE_EQ(spans[0]["dur"].get<double>(), 2000);
  EXPECT_EQ(spans[0]["args"], (nlohmann::json{{"step", 4}}));
  EXPECT_EQ(spans[1]["args"],
            (nlohmann::json{{"step", 4}, {"collective", "all_reduce"}, {"bytes", 4096}}));
  // Shifted so that the earliest span starts at 0.
  EXPECT_DOUBLE_EQ(spans[0]["ts"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(spans[1]["ts"].get<double>(), 2000);
  EXPECT_EQ(spans[2]["pid"], 1);
  EXPECT_EQ(spans[2]["tid"], 1);
  EXPECT_NEAR(spans[2]["ts"].get<double>(), 251000, 1e-6);
  EXPECT_EQ(spans[2]["args"]["collective"], "all_gather");
}

TEST(TrainingTraceTest, EventsTravelAsTextAndBack) {
  const std::vector<TraceEvent> events = {
      {.name = "a \"quoted\" name", .track = kComputeTrack, .step = 7, .start_s = 1.0 / 3,
       .duration_s = 1e-7},
      {.name = "gradient bucket 2", .track = kGradientsTrack, .step = 8, .start_s = 2,
       .duration_s = 0.5, .collective = "all_reduce", .bytes = int64_t{1} << 40}};
  absl::StatusOr<std::vector<TraceEvent>> back = DecodeTraceEvents(EncodeTraceEvents(events));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ((*back)[i].name, events[i].name);
    EXPECT_EQ((*back)[i].track, events[i].track);
    EXPECT_EQ((*back)[i].step, events[i].step);
    EXPECT_EQ((*back)[i].start_s, events[i].start_s);
    EXPECT_EQ((*back)[i].duration_s, events[i].duration_s);
    EXPECT_EQ((*back)[i].collective, events[i].collective);
    EXPECT_EQ((*back)[i].bytes, events[i].bytes);
  }
  EXPECT_TRUE(DecodeTraceEvents("[]")->empty());
  for (const char* bad : {"", "{}", "[[\"a\", \"compute\", 1]]", "[1]"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(DecodeTraceEvents(bad).status())) << bad;
  }
}

graph::Graph Classifier() {
  graph::GraphBuilder b("classifier");
  graph::Value x = b.Input("x", {8, 6});
  graph::Value labels = b.Input("labels", {8}, graph::DType::kI64);
  graph::Value h = b.Linear(x, 16, "fc1").Relu("relu1");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 8, "fc2"), labels, "loss"));
  return *std::move(b).Build();
}

// Per rank and traced step, the collectives' bytes equal the bytes the step measured (the
// agreement on the loss is left out of both); every node has its forward span.
TEST(TrainingTraceTest, TracedBytesEqualEachStepsMeasure) {
  const graph::Graph g = Classifier();
  for (const char* planner : {"data", "model", "late"}) {
    absl::StatusOr<partitioner::PlannerKind> kind = partitioner::ParsePlannerKind(planner);
    ASSERT_TRUE(kind.ok());
    absl::StatusOr<partitioner::Plan> plan =
        PlanForWorkers(g, 2, "v100-vpc32", {.planner = *kind});
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::mutex mu;
    std::map<int, WorkerResult> results;
    const absl::Status status = comm::RunRanksWithChannels(
        {.backend = comm::Backend::kThread}, 2, 2,
        [&](absl::Span<comm::Communicator* const> ch) -> absl::Status {
          RandomDataSource data(g, {.seed = 9, .classes = 8});
          TS_ASSIGN_OR_RETURN(WorkerResult r,
                              RunHybridWorker(g, *plan, ch, data,
                                              {.steps = 4, .seed = 3, .trace_steps = 2}));
          std::lock_guard<std::mutex> lock(mu);
          results[r.rank] = std::move(r);
          return absl::OkStatus();
        });
    ASSERT_TRUE(status.ok()) << planner << ": " << status;
    EXPECT_TRUE(results[1].trace.empty()) << "only rank 0 keeps the gathered trace";
    const std::vector<std::vector<TraceEvent>>& trace = results[0].trace;
    ASSERT_EQ(trace.size(), 2u) << planner;
    int64_t collectives = 0;
    for (int r = 0; r < 2; ++r) {
      std::map<int64_t, int64_t> bytes;
      std::map<int64_t, std::set<std::string>> names;
      for (const TraceEvent& e : trace[r]) {
        bytes[e.step] += e.bytes;
        names[e.step].insert(e.name);
        collectives += !e.collective.empty();
      }
      ASSERT_EQ(names.size(), 2u) << planner << " rank " << r;
      for (int64_t step : {2, 3}) {
        const StepMeasure& m = results[r].steps[step];
        EXPECT_EQ(bytes[step], m.activation_bytes + m.gradient_bytes)
            << planner << " rank " << r << " step " << step;
        for (const char* n : {"fc1 forward", "fc1 backward", "loss forward", "optimizer update"}) {
          EXPECT_TRUE(names[step].contains(n)) << planner << " rank " << r << ": no " << n;
        }
      }
    }
    EXPECT_GT(collectives, 0) << planner;
  }
}

}  // namespace
}  // namespace tessera::exec
