// Progress, step records and evaluations during hybrid training (run_monitor_impl.h).
#include "tessera/exec/run_monitor_impl.h"

#include <algorithm>
#include <future>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/axis_collectives.h"
#include "tessera/exec/cpu/gemm.h"

namespace tessera::exec::internal {
namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// The heartbeat's states, broadcast by rank 0.
constexpr int64_t kRunning = 0, kDone = 1;

}  // namespace

absl::StatusOr<std::map<std::string, std::vector<float>>> GatherParameters(
    const RankPlan& r, TrainingProgram& program, comm::Communicator& comm) {
  std::map<std::string, std::vector<float>> out;
  for (TrainingProgram::Parameter& p : program.parameters()) {
    const ParamShard& s = r.params.at(p.name);
    TS_ASSIGN_OR_RETURN(std::vector<float> whole, ReadFloats(program.backend(), p.value));
    if (s.sharded) {
      graph::Shape local = s.global_shape;
      local[s.axis] = s.count;
      const std::vector<float> mine = std::move(whole);
      whole.assign(graph::NumElements(s.global_shape), 0.f);
      TS_RETURN_IF_ERROR(AllGatherAxis(comm, mine.data(), local, s.axis, whole.data()));
    }
    if (r.rank == 0) out[p.name] = std::move(whole);
  }
  return out;
}

std::map<std::string, std::vector<float>> FloatingConstants(const TrainingProgram& program) {
  std::map<std::string, std::vector<float>> out;
  for (const graph::Tensor& t : program.graph().tensors()) {
    if (t.role != graph::TensorRole::kConstant) continue;
    std::vector<float> v = program.PersistentValue(t.name);
    if (!v.empty()) out[t.name] = std::move(v);
  }
  return out;
}

absl::StatusOr<std::string> RunOnRank0WhileOthersWait(
    comm::Communicator& comm, const std::function<absl::StatusOr<std::string>()>& work) {
  if (comm.size() == 1) return work();
  std::vector<int64_t> state = {kRunning};
  if (comm.rank() != 0) {
    while (state[0] == kRunning) TS_RETURN_IF_ERROR(comm.Broadcast(state, 0));
    return std::string();
  }
  const auto beat = std::max(std::chrono::milliseconds(1),
                             absl::ToChronoMilliseconds(comm.options().timeout / 4));
  std::future<absl::StatusOr<std::string>> result = std::async(std::launch::async, work);
  while (result.wait_for(beat) != std::future_status::ready) {
    TS_RETURN_IF_ERROR(comm.Broadcast(state, 0));  // (the future waits for `work` on return)
  }
  absl::StatusOr<std::string> done = result.get();
  // A failure is not announced: rank 0 returns it first, and the others' waits end as rank 0
  // leaves (a departed thread rank, or the MPI job ending), so rank 0's error is the run's.
  if (!done.ok()) return done.status();
  state[0] = kDone;
  TS_RETURN_IF_ERROR(comm.Broadcast(state, 0));
  return done;
}

RunMonitor::RunMonitor(const HybridOptions& options, int rank, int64_t global_batch,
                       int64_t first_step)
    : options_(options),
      rank_(rank),
      global_batch_(global_batch),
      progress_(rank == 0 ? options.progress : nullptr,
                {.is_terminal = options.progress_is_terminal, .total_steps = options.steps,
                 .first_step = first_step, .batch = global_batch,
                 .log_every = options.log_every}),
      start_(Clock::now()),
      step_start_(start_) {}

absl::Status RunMonitor::AfterStep(int64_t step, double loss, double lr, bool stopping,
                                   const RankPlan& r, TrainingProgram& program,
                                   comm::Communicator& act) {
  const Clock::time_point now = Clock::now();
  const double step_s = Seconds(now - step_start_);
  step_start_ = now;
  progress_.Update(step + 1, loss, Seconds(now - start_) - eval_s_);
  if (rank_ == 0 && options_.on_step) {
    options_.on_step({.step = step + 1, .loss = loss, .lr = lr,
                      .samples_per_s = step_s > 0 ? static_cast<double>(global_batch_) / step_s : 0,
                      .time_s = Seconds(now - start_)});
  }
  const int64_t done = step + 1;
  if (options_.eval_every <= 0 || !options_.on_eval || done % options_.eval_every != 0 ||
      done >= options_.steps || stopping) {
    return absl::OkStatus();
  }
  TS_RETURN_IF_ERROR(Evaluate(done, r, program, act));
  step_start_ = Clock::now();  // the next step's throughput leaves the evaluation out
  return absl::OkStatus();
}

absl::Status RunMonitor::Evaluate(int64_t steps_done, const RankPlan& r,
                                  TrainingProgram& program, comm::Communicator& act) {
  const Clock::time_point begin = Clock::now();
  WholeModel model{.step = steps_done};
  TS_ASSIGN_OR_RETURN(model.parameters, GatherParameters(r, program, act));
  if (rank_ == 0) model.buffers = FloatingConstants(program);
  absl::StatusOr<std::string> note = RunOnRank0WhileOthersWait(act, [&] {
    absl::StatusOr<std::string> text = options_.on_eval(model);
    // An evaluation's CPU program sets the process's BLAS threads to its own count; the
    // workers' is set back before any rank multiplies again, or training's products (their
    // summation order) could change.
    cpu::SetBlasThreads(options_.threads);
    return text;
  });
  eval_s_ += Seconds(Clock::now() - begin);
  TS_RETURN_IF_ERROR(note.status());
  if (!note->empty()) progress_.Note(*note);
  return absl::OkStatus();
}

}  // namespace tessera::exec::internal
