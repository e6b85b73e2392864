// The fake vPIC's server, behind FakeVpic (fake_vpic.h). Internal to
//   fake_vpic.cc  the public FakeVpic, forwarding here
//   listener.cc   the socket, the accept loop, connections and their threads
//   handlers.cc   answering a request: scripts, chaos draws, single and
//                 batch decodes
#ifndef VIN_TESTS_FAKE_VPIC_FAKE_VPIC_IMPL_H_
#define VIN_TESTS_FAKE_VPIC_FAKE_VPIC_IMPL_H_

#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fake_vpic/answers.h"
#include "fake_vpic/fake_vpic.h"
#include "fake_vpic/http.h"

namespace fakevpic {

// How a connection goes on after one request.
enum class Disposition { kKeepOpen, kClose, kReset };

// Threads: one accept loop, plus one thread per connection that reads a
// request, answers it (or not, per the script) and loops while the connection
// is kept alive. A finished connection thread is joined by the accept loop at
// its next accept, the others by the destructor, which first shuts down every
// open socket so that blocking reads, writes and hangs return at once.
class FakeVpic::Impl {
 public:
  Impl(Options options, Answers answers)
      : options_(std::move(options)), answers_(std::move(answers)) {
    for (const WeightedStep& w : options_.chaos) chaos_total_weight_ += w.weight;
  }
  ~Impl();

  absl::Status Listen();
  void StartAccepting() {
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  int port() const { return port_; }
  const Options& options() const { return options_; }

  void Script(const std::string& vin, std::vector<Step> steps) {
    absl::MutexLock lock(&mu_);
    scripts_[vin] = std::deque<Step>(steps.begin(), steps.end());
  }
  void ScriptEveryVin(std::vector<Step> steps) {
    absl::MutexLock lock(&mu_);
    every_vin_ = std::move(steps);
    every_vin_count_.clear();
  }
  void Hold(bool held) {
    absl::MutexLock lock(&stop_mu_);
    held_ = held;
  }
  void ScriptBatch(std::vector<Step> steps) {
    absl::MutexLock lock(&mu_);
    batch_script_ = std::deque<Step>(steps.begin(), steps.end());
  }
  // Every request (no filter), those for one VIN, or the batch requests.
  std::vector<RequestRecord> Requests(std::optional<absl::string_view> vin,
                                      bool batches_only = false) const {
    absl::MutexLock lock(&mu_);
    if (!vin && !batches_only) return log_;
    std::vector<RequestRecord> out;
    for (const RequestRecord& r : log_) {
      bool match = batches_only ? r.is_batch() : r.vin == *vin;
      if (!match && vin && r.is_batch()) {
        for (const auto& [v, year] : r.batch) match = match || v == *vin;
      }
      if (match) out.push_back(r);
    }
    return out;
  }
  int TotalRequests() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(log_.size());
  }
  bool WaitForRequests(int n, absl::Duration timeout) const {
    absl::MutexLock lock(&mu_);
    auto arrived = [this, n]() {
      mu_.AssertReaderHeld();
      return static_cast<int>(log_.size()) >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&arrived), timeout);
  }
  bool WaitUntilIdle(absl::Duration timeout) const {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() {
      mu_.AssertReaderHeld();
      return active_ == 0;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
  }
  int MaxConcurrentRequests() const {
    absl::MutexLock lock(&mu_);
    return peak_;
  }
  int ActiveRequests() const {
    absl::MutexLock lock(&mu_);
    return active_;
  }

 private:
  void AcceptLoop();
  void ServeConnection(int fd, uint64_t id);
  Disposition Handle(Connection& conn, const HttpRequest& req,
                     absl::Time arrival);
  Disposition HandleBatch(Connection& conn, const HttpRequest& req,
                          absl::Time arrival);
  // A batch request's answer to the whole, and each VIN's step when the
  // whole is left to them.
  struct BatchPlan {
    Step whole;
    std::vector<Step> steps;
  };
  // Draws the steps of a batch request for `entries` and notes them in
  // `record` (its VINs, what is served).
  BatchPlan PlanBatch(const std::vector<DecodeTarget>& entries,
                      RequestRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How long the answer to `plan` waits: the latency, the whole's delay and
  // the longest VIN's.
  absl::Duration BatchDelay(const BatchPlan& plan) const;
  // The HTTP answer to a batch request planned as `plan`.
  std::string BatchAnswer(const std::vector<DecodeTarget>& entries,
                          const BatchPlan& plan, bool close_after) const;
  // Logs the request and counts it as being answered; returns its place in
  // the log.
  size_t Log(const RequestRecord& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `answer` to the request logged at `entry`, gzip-compressed when
  // the request accepts it (and Options::gzip), and notes that it was
  // written; false when it could not be.
  bool Send(Connection& conn, const HttpRequest& req, std::string answer,
            size_t entry);
  // The scripted step for `vin`; without one, a chaos draw when `chaos`
  // (else the normal answer). `scripted`, when given, says whether a script
  // answered.
  Step NextStep(const std::string& vin, bool chaos = true,
                bool* scripted = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A step drawn from Options::chaos (the normal answer without chaos).
  Step DrawChaos() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits `d`; returns false when the server stopped meanwhile.
  bool Pause(absl::Duration d);

  const Options options_;
  const Answers answers_;
  int listen_fd_ = -1;
  int port_ = 0;
  int wake_fds_[2] = {-1, -1};  // a pipe that wakes the accept loop on stop
  std::thread accept_thread_;
  // Connection threads; touched by the accept loop, then by the destructor.
  std::map<uint64_t, std::thread> conn_threads_;

  // Protects the script, the request log, and the connection bookkeeping.
  mutable absl::Mutex mu_;
  std::unordered_map<std::string, std::deque<Step>> scripts_
      ABSL_GUARDED_BY(mu_);
  std::vector<Step> every_vin_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> every_vin_count_ ABSL_GUARDED_BY(mu_);
  std::deque<Step> batch_script_ ABSL_GUARDED_BY(mu_);
  std::mt19937_64 chaos_rng_ ABSL_GUARDED_BY(mu_){options_.chaos_seed};
  int chaos_total_weight_ = 0;  // set by the constructor
  std::vector<RequestRecord> log_ ABSL_GUARDED_BY(mu_);
  int active_ ABSL_GUARDED_BY(mu_) = 0;
  int peak_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::set<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> finished_ ABSL_GUARDED_BY(mu_);  // threads to join

  // Separate from mu_ so that waiting delays do not burden the hot mutex.
  absl::Mutex stop_mu_;
  bool stop_ ABSL_GUARDED_BY(stop_mu_) = false;
  bool held_ ABSL_GUARDED_BY(stop_mu_) = false;  // HoldAnswers()
};

}  // namespace fakevpic

#endif  // VIN_TESTS_FAKE_VPIC_FAKE_VPIC_IMPL_H_
