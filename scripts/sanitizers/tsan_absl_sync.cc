// ThreadSanitizer annotations for a prebuilt (uninstrumented) Abseil: linked into every program
// of the TSan build by scripts/ci_sanitizers.sh, never into a normal build.
//
// Why: absl::Mutex locks with atomics inside libabsl_synchronization.so. Debian builds that
// library without -fsanitize=thread, so TSan sees neither the lock nor the unlock, and every
// access guarded by an absl::Mutex (most of comm/) would be reported as a race. Abseil built
// with TSan annotates its own Mutex (ABSL_TSAN_MUTEX_* in mutex.cc); this file adds the same
// annotations from outside: each definition below takes the place of the library's function of
// the same name (a program's definition wins over a shared library's), tells TSan what the call
// does, and calls the library's function, found with dlsym(RTLD_NEXT).
//
// Between __tsan_mutex_pre_* and __tsan_mutex_post_* TSan ignores memory accesses, which covers
// the Condition functions Abseil evaluates while it locks, unlocks or waits, and Abseil's
// deadlock-detection graph (guarded by a spin lock TSan cannot see either).
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

// The mangled names spell Abseil's inline namespace (Debian's "debian3").
#define TS_STR2(x) #x
#define TS_STR(x) TS_STR2(x)
static_assert(__builtin_strcmp(TS_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME), "debian3") == 0,
              "update TS_ABSL to Abseil's inline namespace");
#define TS_ABSL "_ZN4absl7debian3"
#define TS_ABSL_CONST "_ZNK4absl7debian3"  // const member functions

// TSan's dynamic annotations (exported by its runtime, as in absl/base/dynamic_annotations.h).
extern "C" {
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
void AnnotateIgnoreSyncBegin(const char* file, int line);
void AnnotateIgnoreSyncEnd(const char* file, int line);
}

namespace {

// The library's definition of the function with mangled name `name`.
template <typename Fn>
Fn Real(const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found in Abseil (%s)\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

// Abseil's functions call each other through the PLT, so they land here too (LockWhenWithTimeout
// calls LockWhenWithDeadline, ~Notification calls Lock): only the outermost call is annotated.
thread_local int t_depth = 0;

// call() as a lock of `mu`; with __tsan_mutex_try_lock in `flags`, call() says if it locked.
template <typename Call>
bool Locking(void* mu, unsigned flags, Call call) {
  if (t_depth > 0) return call();
  ++t_depth;
  __tsan_mutex_pre_lock(mu, flags);
  const bool result = call();
  const bool failed = (flags & __tsan_mutex_try_lock) && !result;
  __tsan_mutex_post_lock(mu, failed ? flags | __tsan_mutex_try_lock_failed : flags, 0);
  --t_depth;
  return result;
}

// call() as an unlock of `mu`.
template <typename Call>
void Unlocking(void* mu, unsigned flags, Call call) {
  if (t_depth > 0) return call();
  ++t_depth;
  __tsan_mutex_pre_unlock(mu, flags);
  call();
  __tsan_mutex_post_unlock(mu, flags);
  --t_depth;
}

// call() as a wait: `mu`, held, is released meanwhile and held again on return.
template <typename Call>
bool Waiting(void* mu, Call call) {
  if (t_depth > 0) return call();
  ++t_depth;
  __tsan_mutex_pre_unlock(mu, 0);
  __tsan_mutex_post_unlock(mu, 0);
  __tsan_mutex_pre_lock(mu, 0);
  const bool result = call();
  __tsan_mutex_post_lock(mu, 0, 0);
  --t_depth;
  return result;
}

// call() with every memory access and synchronisation ignored (Abseil's own bookkeeping).
template <typename Call>
void Ignoring(Call call) {
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
  ++t_depth;
  call();
  --t_depth;
  AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}

using Cond = absl::Condition;
using absl::Duration;
using absl::Mutex;
using absl::Time;

}  // namespace

namespace absl {

Mutex::~Mutex() {
  static auto real = Real<void (*)(Mutex*)>(TS_ABSL "5MutexD1Ev");
  Ignoring([&] { real(this); });  // removes the mutex from the deadlock graph
  __tsan_mutex_destroy(this, __tsan_mutex_not_static);
}

void Mutex::Lock() {
  static auto real = Real<void (*)(Mutex*)>(TS_ABSL "5Mutex4LockEv");
  Locking(this, 0, [&] { return real(this), true; });
}

void Mutex::Unlock() {
  static auto real = Real<void (*)(Mutex*)>(TS_ABSL "5Mutex6UnlockEv");
  Unlocking(this, 0, [&] { real(this); });
}

bool Mutex::TryLock() {
  static auto real = Real<bool (*)(Mutex*)>(TS_ABSL "5Mutex7TryLockEv");
  return Locking(this, __tsan_mutex_try_lock, [&] { return real(this); });
}

void Mutex::ReaderLock() {
  static auto real = Real<void (*)(Mutex*)>(TS_ABSL "5Mutex10ReaderLockEv");
  Locking(this, __tsan_mutex_read_lock, [&] { return real(this), true; });
}

void Mutex::ReaderUnlock() {
  static auto real = Real<void (*)(Mutex*)>(TS_ABSL "5Mutex12ReaderUnlockEv");
  Unlocking(this, __tsan_mutex_read_lock, [&] { real(this); });
}

bool Mutex::ReaderTryLock() {
  static auto real = Real<bool (*)(Mutex*)>(TS_ABSL "5Mutex13ReaderTryLockEv");
  return Locking(this, __tsan_mutex_try_read_lock, [&] { return real(this); });
}

// LockWhen*: the mutex is held on return whatever the result.
void Mutex::LockWhen(const Cond& cond) {
  static auto real = Real<void (*)(Mutex*, const Cond*)>(TS_ABSL "5Mutex8LockWhenERKNS0_9ConditionE");
  Locking(this, 0, [&] { return real(this, &cond), true; });
}

bool Mutex::LockWhenWithDeadline(const Cond& cond, Time deadline) {
  static auto real = Real<bool (*)(Mutex*, const Cond*, Time)>(
      TS_ABSL "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  bool met = false;
  Locking(this, 0, [&] { return met = real(this, &cond, deadline), true; });
  return met;
}

bool Mutex::LockWhenWithTimeout(const Cond& cond, Duration timeout) {
  static auto real = Real<bool (*)(Mutex*, const Cond*, Duration)>(
      TS_ABSL "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  bool met = false;
  Locking(this, 0, [&] { return met = real(this, &cond, timeout), true; });
  return met;
}

void Mutex::Await(const Cond& cond) {
  static auto real = Real<void (*)(Mutex*, const Cond*)>(TS_ABSL "5Mutex5AwaitERKNS0_9ConditionE");
  Waiting(this, [&] { return real(this, &cond), true; });
}

bool Mutex::AwaitWithDeadline(const Cond& cond, Time deadline) {
  static auto real = Real<bool (*)(Mutex*, const Cond*, Time)>(
      TS_ABSL "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Waiting(this, [&] { return real(this, &cond, deadline); });
}

bool Mutex::AwaitWithTimeout(const Cond& cond, Duration timeout) {
  static auto real = Real<bool (*)(Mutex*, const Cond*, Duration)>(
      TS_ABSL "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Waiting(this, [&] { return real(this, &cond, timeout); });
}

void CondVar::Wait(Mutex* mu) {
  static auto real = Real<void (*)(CondVar*, Mutex*)>(TS_ABSL "7CondVar4WaitEPNS0_5MutexE");
  Waiting(mu, [&] { return real(this, mu), true; });
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static auto real = Real<bool (*)(CondVar*, Mutex*, Time)>(
      TS_ABSL "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  return Waiting(mu, [&] { return real(this, mu, deadline); });
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  static auto real = Real<bool (*)(CondVar*, Mutex*, Duration)>(
      TS_ABSL "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  return Waiting(mu, [&] { return real(this, mu, timeout); });
}

// Notification: Notify releases, a wait that saw the notification acquires. Its internal mutex
// is annotated by the functions above.
void Notification::Notify() {
  static auto real = Real<void (*)(Notification*)>(TS_ABSL "12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  static auto real =
      Real<void (*)(const Notification*)>(TS_ABSL_CONST "12Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  static auto real = Real<bool (*)(const Notification*, Duration)>(
      TS_ABSL_CONST "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE");
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  static auto real = Real<bool (*)(const Notification*, Time)>(
      TS_ABSL_CONST "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE");
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

}  // namespace absl
