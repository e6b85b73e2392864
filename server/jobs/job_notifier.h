// The end of a job told to its notify_url (DESIGN rule 20): one POST of the
// final Job as JSON, answered 2xx once; otherwise tried again after the
// service's own decorrelated jitter (1 s base, 5 min cap) until an hour
// after the job ended, then given up (logged, counted). Never follows a
// redirect; only http and https. The hosts were checked at creation
// (--job_notify_hosts). A job's notification state is kept in the store, so
// a restart goes on with the ones still due.
//
// Its own thread (the POST blocks up to 10 s) or, in tests, RunOnce.
#ifndef VIN_SERVER_JOBS_JOB_NOTIFIER_H_
#define VIN_SERVER_JOBS_JOB_NOTIFIER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "retry/jitter.h"

namespace server {

class JobManager;

class JobNotifier {
 public:
  // POSTs `json` to `url`; the HTTP status, or 0 when none came (the
  // connection failed, the time ran out).
  using Post =
      std::function<int(const std::string& url, const std::string& json)>;
  // libcurl: 10 s, no redirects, http and https only.
  static Post CurlPost();

  static constexpr absl::Duration kGiveUpAfter = absl::Hours(1);

  JobNotifier(JobManager* manager, Post post,
              retry::Jitter::Uniform uniform = {});
  ~JobNotifier();

  void Start();  // the thread
  void Wake();   // a job ended
  void Stop();
  // One pass: POSTs what is due now, gives up what is an hour old.
  void RunOnce();

  int64_t sent() const { return sent_.load(); }
  int64_t failed() const { return failed_.load(); }

 private:
  struct Plan {
    absl::Time next = absl::InfinitePast();  // the clock's Now()
    absl::Duration prev = absl::ZeroDuration();
  };
  void Loop();
  // Whether this process tells job `seq`'s end now: always, with a store
  // of its own; in a fleet, while it holds the job's lease and the job is
  // still due.
  bool Claimed(int64_t seq, const std::string& id);

  JobManager* const m_;
  const Post post_;
  retry::Jitter jitter_;
  std::map<int64_t, Plan> plans_;  // by job seq; RunOnce's only
  absl::Time next_wake_ = absl::InfinitePast();
  std::atomic<int64_t> sent_{0};
  std::atomic<int64_t> failed_{0};

  absl::Mutex mu_;
  absl::CondVar cv_;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace server

#endif  // VIN_SERVER_JOBS_JOB_NOTIFIER_H_
