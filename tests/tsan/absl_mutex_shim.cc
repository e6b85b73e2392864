// ThreadSanitizer builds only (VIN_SANITIZE=thread).
//
// Debian's abseil is not built with TSan, so TSan cannot see absl::Mutex or
// absl::CondVar as synchronisation and would report every properly locked
// access (ours and, through the same shared library, gRPC's) as a race. This
// file interposes the exported Mutex/CondVar entry points: each wrapper calls
// the real function (found with dlsym(RTLD_NEXT)) and tells TSan about the
// acquire/release with its public mutex annotations. Between pre_* and post_*
// TSan ignores memory accesses, which covers abseil evaluating Conditions
// inside Lock/Unlock/Await on behalf of other threads.
//
// The mangled names carry Debian's inline namespace (absl::debian3), so this
// is tied to Debian 12's libabsl-dev 20220623, the one this project builds
// against.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"

namespace {

void* RealOrDie(const char* mangled) {
  void* p = dlsym(RTLD_NEXT, mangled);
  if (p == nullptr) {
    fprintf(stderr, "tsan absl shim: %s not found\n", mangled);
    abort();
  }
  return p;
}

#define REAL(type, mangled) \
  static const auto real = reinterpret_cast<type>(RealOrDie(mangled))

constexpr unsigned kRead = __tsan_mutex_read_lock;
constexpr unsigned kTry = __tsan_mutex_try_lock;
constexpr unsigned kTryFailed = __tsan_mutex_try_lock_failed;

// abseil's entry points call each other (AwaitWithTimeout ->
// AwaitWithDeadline, Notification -> LockWhen...), through the same
// interposed symbols: only the outermost call is annotated.
thread_local int depth = 0;
struct Nesting {
  Nesting() { ++depth; }
  ~Nesting() { --depth; }
  bool outer() const { return depth == 1; }
};

// The caller holds `mu` (as writer or reader, per `flags`) and is about to
// release it inside abseil and get it back before returning.
struct ReleasedWhileWaiting : Nesting {
  ReleasedWhileWaiting(void* mu, unsigned flags) : mu(mu), flags(flags) {
    if (!outer()) return;
    __tsan_mutex_pre_unlock(mu, flags);
    __tsan_mutex_post_unlock(mu, flags);
    __tsan_mutex_pre_lock(mu, flags);
  }
  ~ReleasedWhileWaiting() {
    if (outer()) __tsan_mutex_post_lock(mu, flags, 0);
  }
  void* mu;
  unsigned flags;
};

struct Acquiring : Nesting {
  Acquiring(void* mu, unsigned flags) : mu(mu), flags(flags) {
    if (outer()) __tsan_mutex_pre_lock(mu, flags);
  }
  ~Acquiring() {
    if (outer()) __tsan_mutex_post_lock(mu, flags, 0);
  }
  void* mu;
  unsigned flags;
};

struct Releasing : Nesting {
  Releasing(void* mu, unsigned flags) : mu(mu), flags(flags) {
    if (outer()) __tsan_mutex_pre_unlock(mu, flags);
  }
  ~Releasing() {
    if (outer()) __tsan_mutex_post_unlock(mu, flags);
  }
  void* mu;
  unsigned flags;
};

// TryLock variants: annotated with the outcome once it is known.
struct Trying : Nesting {
  Trying(void* mu, unsigned flags) : mu(mu), flags(flags) {
    if (outer()) __tsan_mutex_pre_lock(mu, flags | kTry);
  }
  bool Done(bool ok) {
    if (outer()) {
      __tsan_mutex_post_lock(mu, ok ? flags | kTry : flags | kTry | kTryFailed,
                             0);
    }
    return ok;
  }
  void* mu;
  unsigned flags;
};

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex4LockEv");
  Acquiring a(this, 0);
  real(this);
}
void Mutex::Unlock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex6UnlockEv");
  Releasing r(this, 0);
  real(this);
}
bool Mutex::TryLock() {
  REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex7TryLockEv");
  Trying t(this, 0);
  return t.Done(real(this));
}
void Mutex::ReaderLock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex10ReaderLockEv");
  Acquiring a(this, kRead);
  real(this);
}
void Mutex::ReaderUnlock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  Releasing r(this, kRead);
  real(this);
}
bool Mutex::ReaderTryLock() {
  REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex13ReaderTryLockEv");
  Trying t(this, kRead);
  return t.Done(real(this));
}
void Mutex::LockWhen(const Condition& c) {
  REAL(void (*)(Mutex*, const Condition&),
       "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  Acquiring a(this, 0);
  real(this, c);
}
bool Mutex::LockWhenWithTimeout(const Condition& c, absl::Duration t) {
  REAL(bool (*)(Mutex*, const Condition&, absl::Duration),
       "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_"
       "8DurationE");
  Acquiring a(this, 0);
  return real(this, c, t);
}
bool Mutex::LockWhenWithDeadline(const Condition& c, absl::Time t) {
  REAL(bool (*)(Mutex*, const Condition&, absl::Time),
       "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_"
       "4TimeE");
  Acquiring a(this, 0);
  return real(this, c, t);
}
void Mutex::Await(const Condition& c) {
  REAL(void (*)(Mutex*, const Condition&),
       "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  ReleasedWhileWaiting w(this, 0);
  real(this, c);
}
bool Mutex::AwaitWithTimeout(const Condition& c, absl::Duration t) {
  REAL(bool (*)(Mutex*, const Condition&, absl::Duration),
       "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_"
       "8DurationE");
  ReleasedWhileWaiting w(this, 0);
  return real(this, c, t);
}
bool Mutex::AwaitWithDeadline(const Condition& c, absl::Time t) {
  REAL(bool (*)(Mutex*, const Condition&, absl::Time),
       "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_"
       "4TimeE");
  ReleasedWhileWaiting w(this, 0);
  return real(this, c, t);
}

void CondVar::Wait(Mutex* mu) {
  REAL(void (*)(CondVar*, Mutex*),
       "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  ReleasedWhileWaiting w(mu, 0);
  real(this, mu);
}
bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration t) {
  REAL(bool (*)(CondVar*, Mutex*, absl::Duration),
       "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  ReleasedWhileWaiting w(mu, 0);
  return real(this, mu, t);
}
bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time t) {
  REAL(bool (*)(CondVar*, Mutex*, absl::Time),
       "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  ReleasedWhileWaiting w(mu, 0);
  return real(this, mu, t);
}

ABSL_NAMESPACE_END
}  // namespace absl
