// Self-test of the sanitizer builds (scripts/ci_sanitizers.sh runs it before the suite): each
// mode makes one known error, or one known non-error, so the script can check that a real
// report lands in its log files -- the reports that fail CI -- and that a correct program
// writes none. Without it a misconfigured build (flags dropped, log_path wrong, the Abseil
// annotations missing) would pass every time.
//
//   tessera_sanitizer_selftest overflow   ASan: heap-buffer-overflow       (report expected)
//   tessera_sanitizer_selftest ub         UBSan: signed integer overflow   (report expected)
//   tessera_sanitizer_selftest race       TSan: data race                  (report expected)
//   tessera_sanitizer_selftest mutex      TSan: the same counter under an absl::Mutex and an
//                                         absl::Notification (no report: scripts/sanitizers/
//                                         tsan_absl_sync.cc makes them visible to TSan)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace {

// Opaque to the optimiser, so the errors below are not folded away at compile time.
volatile int g_opaque = 1;

int Overflow() {
  std::vector<int>* v = new std::vector<int>(4, 0);
  const int i = 4 * g_opaque;  // one past the end
  const int value = v->data()[i];
  delete v;
  return value;
}

int SignedOverflow() {
  int x = 0x7fffffff;
  x += g_opaque;
  return x;
}

int Race() {
  int counter = 0;
  std::thread a([&] { for (int i = 0; i < 1000; ++i) ++counter; });
  std::thread b([&] { for (int i = 0; i < 1000; ++i) ++counter; });
  a.join();
  b.join();
  return counter > 0 ? 0 : 1;
}

int Guarded() {
  absl::Mutex mu;
  int counter = 0;
  auto work = [&] {
    for (int i = 0; i < 1000; ++i) {
      absl::MutexLock lock(&mu);
      ++counter;
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  // Handing data over with a Notification: written before Notify, read after the wait.
  int handed = 0;
  absl::Notification ready;
  std::thread producer([&] { handed = counter; ready.Notify(); });
  ready.WaitForNotification();
  const int seen = handed;
  producer.join();
  return seen == 2000 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc == 2 ? argv[1] : "";
  // The values are printed so that the faulty reads and sums are not removed as unused.
  if (std::strcmp(mode, "overflow") == 0) return std::printf("%d\n", Overflow()) < 0;
  if (std::strcmp(mode, "ub") == 0) return std::printf("%d\n", SignedOverflow()) < 0;
  if (std::strcmp(mode, "race") == 0) return Race();
  if (std::strcmp(mode, "mutex") == 0) return Guarded();
  std::fprintf(stderr, "usage: %s overflow|ub|race|mutex\n", argv[0]);
  return 2;
}
