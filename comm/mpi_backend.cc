// The MPI back-end: our ring collectives over MPI point-to-point (MPI_Isend/MPI_Irecv polled
// with MPI_Test, so every wait has a deadline). One rank per process; MPI decides the wire, so
// the same program runs on one machine or many.
#include <mpi.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/backends_impl.h"
#include "tessera/comm/launch.h"
#include "tessera/comm/ring_communicator_impl.h"

namespace tessera::comm {
namespace {

// Under `mpiexec -disable-auto-cleanup`, Hydra tells the surviving processes that a rank died
// by sending SIGUSR1, whose default action would kill them. MpiSession catches it; waits then
// end at once with Unavailable instead of running into their timeout.
std::atomic<bool> g_rank_died{false};
extern "C" void OnRankDied(int) { g_rank_died.store(true); }

void CatchRankDeathSignal() {
  struct sigaction current {};
  if (sigaction(SIGUSR1, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction action {};
  action.sa_handler = OnRankDied;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, nullptr);
}

// An MPI return code as a Status carrying the call's text and MPI's own message.
absl::Status MpiStatus(int code, absl::string_view call) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(code, text, &length);
  int error_class = 0;
  MPI_Error_class(code, &error_class);
  const std::string message = absl::StrCat(call, " failed: ", absl::string_view(text, length));
  if (error_class == MPI_ERR_TRUNCATE) return absl::InvalidArgumentError(message);
  // Otherwise the transport failed: in practice a peer that died or a broken connection.
  return absl::UnavailableError(message);
}

#define TS_MPI_RETURN_IF_ERROR(call) TS_RETURN_IF_ERROR(MpiStatus((call), #call))

class MpiRequest : public internal::TransportRequest {
 public:
  MpiRequest(MPI_Request request, absl::Status posted, int64_t expected_bytes, bool receive)
      : request_(request), status_(std::move(posted)), expected_(expected_bytes),
        receive_(receive), done_(!status_.ok() || request == MPI_REQUEST_NULL) {}
  ~MpiRequest() override {
    if (!done_ && request_ != MPI_REQUEST_NULL) {
      // Stop MPI from writing into (receive) or waiting on (send) a buffer we hand back.
      MPI_Cancel(&request_);
      MPI_Request_free(&request_);
    }
  }

  bool Test() override {
    if (!done_) Poll();
    return done_;
  }

  absl::Status Wait(absl::Time deadline) override {
    // Spin briefly, then yield the core (ranks may share cores), then sleep in short naps.
    const absl::Time start = absl::Now();
    for (int polls = 0; !Poll(); ++polls) {
      const absl::Time now = absl::Now();
      if (now >= deadline) return absl::DeadlineExceededError("MPI request did not complete");
      if (g_rank_died.load(std::memory_order_relaxed)) {
        return absl::UnavailableError(
            "mpiexec reported that a process of the job died (SIGUSR1); the job cannot go on");
      }
      if (polls < 64) continue;
      if (now - start < absl::Milliseconds(5)) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return status_;
  }

 private:
  // True once complete (status_ set).
  bool Poll() {
    if (done_) return true;
    int flag = 0;
    MPI_Status mpi_status{};
    const int code = MPI_Test(&request_, &flag, &mpi_status);
    if (code != MPI_SUCCESS) {
      done_ = true;
      status_ = MpiStatus(code, "MPI_Test");
      return true;
    }
    if (!flag) return false;
    done_ = true;
    if (receive_) {
      MPI_Count got = 0;
      MPI_Get_count_c(&mpi_status, MPI_BYTE, &got);
      if (got != expected_) {
        status_ = absl::InvalidArgumentError(absl::StrCat(
            "received a message of ", got, " bytes, expected ", expected_));
      }
    }
    return true;
  }

  MPI_Request request_;
  absl::Status status_;
  int64_t expected_;
  bool receive_;
  bool done_;
};

class MpiTransport : public internal::Transport {
 public:
  MpiTransport(MPI_Comm collective, MPI_Comm user, int rank, int size, int64_t tag_ub)
      : collective_(collective), user_(user), rank_(rank), size_(size), tag_ub_(tag_ub) {}
  ~MpiTransport() override {
    MPI_Comm_free(&collective_);
    MPI_Comm_free(&user_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int64_t max_tag() const override { return tag_ub_; }

  std::unique_ptr<internal::TransportRequest> Isend(int peer, internal::Lane lane, int64_t tag,
                                                    const void* data, int64_t bytes) override {
    MPI_Request request = MPI_REQUEST_NULL;
    const int code = MPI_Isend_c(data, bytes, MPI_BYTE, peer, static_cast<int>(tag), Comm(lane),
                                 &request);
    return std::make_unique<MpiRequest>(request, MpiStatus(code, "MPI_Isend_c"), bytes, false);
  }
  std::unique_ptr<internal::TransportRequest> Irecv(int peer, internal::Lane lane, int64_t tag,
                                                    void* data, int64_t bytes) override {
    MPI_Request request = MPI_REQUEST_NULL;
    const int code = MPI_Irecv_c(data, bytes, MPI_BYTE, peer, static_cast<int>(tag), Comm(lane),
                                 &request);
    return std::make_unique<MpiRequest>(request, MpiStatus(code, "MPI_Irecv_c"), bytes, true);
  }

 private:
  MPI_Comm Comm(internal::Lane lane) const {
    return lane == internal::Lane::kUser ? user_ : collective_;
  }
  MPI_Comm collective_, user_;
  int rank_, size_;
  int64_t tag_ub_;
};

absl::StatusOr<std::unique_ptr<internal::Transport>> MakeTransport() {
  int initialized = 0, finalized = 0, provided = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return absl::FailedPreconditionError(
        "the mpi back-end needs MPI initialized: create a tessera::comm::MpiSession first and run "
        "the program under mpiexec");
  }
  MPI_Query_thread(&provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    return absl::FailedPreconditionError(
        "the mpi back-end needs MPI initialized with MPI_THREAD_MULTIPLE (its async collectives "
        "run on communication threads); MpiSession::Start does that");
  }
  // MPICH reports some request errors on MPI_COMM_WORLD: make those return codes too, so a
  // failure becomes a Status instead of aborting the job.
  TS_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Comm collective = MPI_COMM_NULL, user = MPI_COMM_NULL;
  TS_MPI_RETURN_IF_ERROR(MPI_Comm_dup(MPI_COMM_WORLD, &collective));
  TS_MPI_RETURN_IF_ERROR(MPI_Comm_dup(MPI_COMM_WORLD, &user));
  TS_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(collective, MPI_ERRORS_RETURN));
  TS_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(user, MPI_ERRORS_RETURN));
  int rank = 0, size = 1, flag = 0;
  int* tag_ub = nullptr;
  MPI_Comm_rank(collective, &rank);
  MPI_Comm_size(collective, &size);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  const int64_t max_tag = flag && tag_ub != nullptr ? *tag_ub : 32767;
  return std::make_unique<MpiTransport>(collective, user, rank, size, max_tag);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MpiSession>> MpiSession::Start(int* argc, char*** argv) {
  std::unique_ptr<MpiSession> session(new MpiSession());
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    TS_MPI_RETURN_IF_ERROR(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    session->finalize_ = true;
    if (provided != MPI_THREAD_MULTIPLE) {
      return absl::FailedPreconditionError(absl::StrCat(
          "this MPI library gives thread level ", provided,
          ", the mpi back-end needs MPI_THREAD_MULTIPLE (", MPI_THREAD_MULTIPLE, ")"));
    }
  }
  CatchRankDeathSignal();
  MPI_Comm_rank(MPI_COMM_WORLD, &session->world_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &session->world_size_);
  return session;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalize_ && !finalized) MPI_Finalize();
}

namespace internal {

bool MpiCompiled() { return true; }

absl::StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(const CommOptions& options) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, MakeTransport());
  std::unique_ptr<Communicator> comm =
      std::make_unique<RingCommunicator>(std::move(transport), options, Backend::kMpi);
  return comm;
}

}  // namespace internal
}  // namespace tessera::comm
