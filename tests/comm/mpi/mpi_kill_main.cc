// Fault drill for the MPI back-end (run by run_kill_test.sh under mpiexec -disable-auto-cleanup):
// rank 1 kills itself (SIGKILL) in the middle of a stream of 32 MiB all-reduces; every other
// rank must leave its all-reduce with an error naming the collective within the timeout (3 s)
// and exit, instead of hanging. Each survivor prints "rank R: error after S s: STATUS".
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"

int main(int argc, char** argv) {
  using namespace tessera::comm;
  auto mpi = MpiSession::Start(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "%s\n", mpi.status().ToString().c_str());
    return 2;
  }
  CommOptions options;
  options.backend = Backend::kMpi;
  options.timeout = absl::Seconds(3);
  auto comm = CreateCommunicator(options);
  if (!comm.ok()) {
    std::fprintf(stderr, "%s\n", comm.status().ToString().c_str());
    return 2;
  }
  const int rank = (*comm)->rank();
  std::vector<float> data(8 << 20, 1.0f);
  absl::Status status = (*comm)->AllReduce(data, ReduceOp::kSum);  // everyone alive
  if (!status.ok()) {
    std::printf("rank %d: warm-up failed: %s\n", rank, status.ToString().c_str());
    return 2;
  }
  std::printf("rank %d: warm-up ok (%g)\n", rank, data[0]);
  std::fflush(stdout);
  if (rank == 1) {
    std::thread([] {
      absl::SleepFor(absl::Milliseconds(30));
      kill(getpid(), SIGKILL);
    }).detach();
  }
  const absl::Time start = absl::Now();
  for (int i = 0; i < 10000 && status.ok(); ++i) status = (*comm)->AllReduce(data, ReduceOp::kSum);
  if (status.ok()) {
    std::printf("rank %d: finished without an error\n", rank);
    return 0;
  }
  std::printf("rank %d: error after %.2f s: %s\n", rank, absl::ToDoubleSeconds(absl::Now() - start),
              status.ToString().c_str());
  std::fflush(stdout);
  std::_Exit(3);  // no MPI_Finalize: it would wait for the dead rank
}
