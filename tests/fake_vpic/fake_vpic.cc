#include "fake_vpic/fake_vpic.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "fake_vpic/answers.h"
#include "fake_vpic/gzip.h"
#include "fake_vpic/http.h"
#include "fake_vpic/steps.h"

namespace fakevpic {
namespace {

// How a connection goes on after one request.
enum class Disposition { kKeepOpen, kClose, kReset };

}  // namespace

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

absl::Status FakeVpic::Impl::Listen() {
  if (pipe2(wake_fds_, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(options_.port);
  if (int rc = getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("resolve ", options_.host, ": ", gai_strerror(rc)));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        listen(fd, SOMAXCONN) == 0) {
      listen_fd_ = fd;
      break;
    }
    error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options_.host, ":", options_.port, ": ", error));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return absl::OkStatus();
}

FakeVpic::Impl::~Impl() {
  {
    absl::MutexLock lock(&stop_mu_);
    stop_ = true;
  }
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    // Wakes every blocking recv/send; each thread closes its own socket.
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  }
  if (wake_fds_[1] >= 0) {
    ssize_t ignored = write(wake_fds_[1], "x", 1);
    (void)ignored;
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  for (auto& [id, thread] : conn_threads_) thread.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  for (int fd : wake_fds_) {
    if (fd >= 0) close(fd);
  }
}

void FakeVpic::Impl::AcceptLoop() {
  uint64_t next_id = 0;
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;  // stopping
    if ((fds[0].revents & POLLIN) == 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::vector<uint64_t> finished;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) {
        close(fd);
        return;
      }
      open_fds_.insert(fd);
      finished.swap(finished_);
    }
    for (uint64_t done : finished) {
      conn_threads_[done].join();
      conn_threads_.erase(done);
    }
    const uint64_t id = next_id++;
    conn_threads_[id] =
        std::thread([this, fd, id] { ServeConnection(fd, id); });
  }
}

void FakeVpic::Impl::ServeConnection(int fd, uint64_t id) {
  Connection conn(fd);
  while (true) {
    absl::Time arrival;
    bool too_large = false;
    std::optional<std::string> head = conn.ReadHead(&arrival, &too_large);
    if (!head) {
      if (too_large) conn.WriteAll(TextResponse(431, /*close=*/true));
      break;
    }
    std::optional<HttpRequest> req = ParseHead(*head);
    if (!req) {
      conn.WriteAll(TextResponse(400, /*close=*/true));
      break;
    }
    if (req->content_length > kMaxBodyBytes) {
      conn.WriteAll(TextResponse(413, /*close=*/true));
      break;
    }
    if (!conn.ReadBody(req->content_length, &req->body)) break;
    const Disposition disposition = Handle(conn, *req, arrival);
    if (disposition == Disposition::kReset) {
      linger reset{1, 0};  // close() then sends RST instead of FIN
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    }
    if (disposition != Disposition::kKeepOpen) {
      absl::MutexLock lock(&mu_);
      open_fds_.erase(fd);
      close(fd);
      fd = -1;
    }
    {
      absl::MutexLock lock(&mu_);
      --active_;  // answered, or its connection ended
    }
    if (fd < 0) break;
  }
  absl::MutexLock lock(&mu_);
  if (fd >= 0) {
    open_fds_.erase(fd);
    close(fd);
  }
  finished_.push_back(id);
}

Step FakeVpic::Impl::NextStep(const std::string& vin, bool chaos,
                               bool* scripted) {
  if (scripted != nullptr) *scripted = true;
  if (auto it = scripts_.find(vin); it != scripts_.end()) {
    if (!it->second.empty()) {
      Step step = std::move(it->second.front());
      it->second.pop_front();
      return step;
    }
  } else if (!every_vin_.empty()) {
    size_t& used = every_vin_count_[vin];
    if (used < every_vin_.size()) return every_vin_[used++];
  }
  if (scripted != nullptr) *scripted = false;
  return chaos ? DrawChaos() : Step{};
}

Step FakeVpic::Impl::DrawChaos() {
  if (chaos_total_weight_ <= 0) return Step{};
  int pick = std::uniform_int_distribution<int>(0, chaos_total_weight_ - 1)(
      chaos_rng_);
  for (const WeightedStep& w : options_.chaos) {
    if (pick < w.weight) return w.step;
    pick -= w.weight;
  }
  return Step{};
}

bool FakeVpic::Impl::Pause(absl::Duration d) {
  absl::MutexLock lock(&stop_mu_);
  if (d > absl::ZeroDuration()) {
    stop_mu_.AwaitWithTimeout(absl::Condition(&stop_), d);
  }
  auto released = [this]() ABSL_SHARED_LOCKS_REQUIRED(stop_mu_) {
    return stop_ || !held_;
  };
  stop_mu_.Await(absl::Condition(&released));
  return !stop_;
}

size_t FakeVpic::Impl::Log(const RequestRecord& record) {
  log_.push_back(record);
  peak_ = std::max(peak_, ++active_);
  return log_.size() - 1;
}

bool FakeVpic::Impl::Send(Connection& conn, const HttpRequest& req,
                          std::string answer, size_t entry) {
  if (options_.gzip && AcceptsGzip(req.accept_encoding) &&
      GzipAnswer(&answer)) {
    // Logged before it is sent: the client may read the log once it has
    // the answer.
    absl::MutexLock lock(&mu_);
    log_[entry].gzipped = true;
  }
  if (!conn.WriteAll(answer)) return false;
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  log_[entry].answered = now;
  return true;
}

Disposition FakeVpic::Impl::Handle(Connection& conn, const HttpRequest& req,
                                   absl::Time arrival) {
  if (req.method == "POST" && IsBatchTarget(req.target)) {
    return HandleBatch(conn, req, arrival);
  }
  RequestRecord record;
  record.time = arrival;
  record.target = req.target;
  record.accept_encoding = req.accept_encoding;
  std::optional<DecodeTarget> decode;
  if (req.method == "GET") decode = ParseDecodeTarget(req.target);
  Step step;
  size_t entry = 0;
  {
    absl::MutexLock lock(&mu_);
    if (req.method != "GET") {
      record.served = "405";
    } else if (!decode) {
      record.served = "404";
    } else {
      record.vin = decode->vin;
      record.model_year = decode->model_year;
      step = NextStep(decode->vin);
      record.served = ServedName(step);
    }
    entry = Log(record);
  }
  if (options_.on_request) options_.on_request(record);

  if (step.kind == Step::Kind::kHang) {
    conn.WaitForClose();
    return Disposition::kClose;
  }
  if (!Pause(options_.latency)) return Disposition::kClose;
  const bool close_after = req.close;
  std::string answer;
  if (!decode) {
    answer = req.method != "GET"
                 ? TextResponse(405, close_after, "Allow: GET\r\n")
                 : TextResponse(404, close_after);
  } else {
    const std::string& vin = decode->vin;
    const int year = decode->model_year;
    switch (step.kind) {
      case Step::Kind::kReset:
        return Disposition::kReset;
      case Step::Kind::kSparse:
        answer = HttpResponse(200, kJson, answers_.Sparse(vin), close_after);
        break;
      case Step::Kind::kMissing:
        answer =
            HttpResponse(200, kJson, answers_.EmptyResults(vin), close_after);
        break;
      case Step::Kind::kDelay:
        if (!Pause(step.delay)) return Disposition::kClose;
        [[fallthrough]];
      case Step::Kind::kOk:
      case Step::Kind::kHang:
        answer =
            HttpResponse(200, kJson, answers_.Normal(vin, year), close_after);
        break;
      default:
        answer = FaultAnswer(step, close_after, answers_.Normal(vin, year),
                             answers_.EmptyResults(vin));
        break;
    }
  }
  if (!Send(conn, req, std::move(answer), entry)) return Disposition::kClose;
  return close_after ? Disposition::kClose : Disposition::kKeepOpen;
}

Disposition FakeVpic::Impl::HandleBatch(Connection& conn,
                                        const HttpRequest& req,
                                        absl::Time arrival) {
  RequestRecord record;
  record.time = arrival;
  record.target = req.target;
  record.accept_encoding = req.accept_encoding;
  std::optional<std::vector<DecodeTarget>> entries = ParseBatchForm(req.body);
  const bool valid = entries && !entries->empty();
  Step whole;  // the answer to the request as a whole
  std::vector<Step> steps;  // each VIN's, when the whole is left to them
  size_t entry = 0;
  {
    absl::MutexLock lock(&mu_);
    if (valid) {
      for (const DecodeTarget& e : *entries) {
        record.batch.emplace_back(e.vin, e.model_year);
      }
      bool batch_scripted = !batch_script_.empty();
      if (batch_scripted) {
        whole = std::move(batch_script_.front());
        batch_script_.pop_front();
      }
      if (!FailsWholeAnswer(whole.kind)) {
        for (const DecodeTarget& e : *entries) {
          bool scripted = false;
          steps.push_back(NextStep(e.vin, /*chaos=*/false, &scripted));
          batch_scripted |= scripted;
          if (!FailsWholeAnswer(whole.kind) &&
              FailsWholeAnswer(steps.back().kind)) {
            whole = steps.back();  // the first VIN whose step fails it all
          }
        }
      }
      if (!batch_scripted && chaos_total_weight_ > 0) {
        // One draw for the request (Options::chaos).
        const Step drawn = DrawChaos();
        if (drawn.kind == Step::Kind::kSparse ||
            drawn.kind == Step::Kind::kMissing) {
          steps.assign(entries->size(), drawn);
        } else {
          whole = drawn;
        }
        record.served = ServedName(drawn);
      } else {
        record.served = ServedName(whole);
      }
    } else {
      record.served = "400";
    }
    entry = Log(record);
  }
  if (options_.on_request) options_.on_request(record);

  const bool close_after = req.close;
  if (!valid) {
    return conn.WriteAll(TextResponse(400, close_after)) && !close_after
               ? Disposition::kKeepOpen
               : Disposition::kClose;
  }
  if (whole.kind == Step::Kind::kHang) {
    conn.WaitForClose();
    return Disposition::kClose;
  }
  absl::Duration delay = options_.latency;
  if (whole.kind == Step::Kind::kDelay) delay += whole.delay;
  absl::Duration longest_vin_delay = absl::ZeroDuration();
  for (const Step& step : steps) {
    if (step.kind == Step::Kind::kDelay) {
      longest_vin_delay = std::max(longest_vin_delay, step.delay);
    }
  }
  if (!Pause(delay + longest_vin_delay)) return Disposition::kClose;
  if (whole.kind == Step::Kind::kReset) return Disposition::kReset;
  std::vector<std::string> results;
  for (size_t i = 0; i < entries->size(); ++i) {
    const DecodeTarget& e = (*entries)[i];
    const Step::Kind kind = i < steps.size() ? steps[i].kind : Step::Kind::kOk;
    if (kind == Step::Kind::kMissing) continue;
    results.push_back(kind == Step::Kind::kSparse
                          ? answers_.SparseResult(e.vin)
                          : answers_.NormalResult(e.vin, e.model_year));
  }
  const std::string body = answers_.BatchBody(results);
  const std::string answer =
      FailsWholeAnswer(whole.kind)
          ? FaultAnswer(whole, close_after, body, answers_.BatchBody({}))
          : HttpResponse(200, kJson, body, close_after);
  if (!Send(conn, req, answer, entry)) return Disposition::kClose;
  return close_after ? Disposition::kClose : Disposition::kKeepOpen;
}

absl::StatusOr<std::unique_ptr<FakeVpic>> FakeVpic::Start(Options options) {
  absl::StatusOr<Answers> answers = Answers::Load(options.fixtures_dir);
  if (!answers.ok()) return answers.status();
  auto impl = std::make_unique<Impl>(std::move(options), *std::move(answers));
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  impl->StartAccepting();
  return std::unique_ptr<FakeVpic>(new FakeVpic(std::move(impl)));
}

FakeVpic::FakeVpic(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeVpic::~FakeVpic() = default;

int FakeVpic::port() const { return impl_->port(); }
std::string FakeVpic::base_url() const {
  return absl::StrCat("http://", impl_->options().host, ":", impl_->port(),
                      "/api/vehicles");
}
void FakeVpic::Script(const std::string& vin, std::vector<Step> steps) {
  impl_->Script(vin, std::move(steps));
}
void FakeVpic::ScriptEveryVin(std::vector<Step> steps) {
  impl_->ScriptEveryVin(std::move(steps));
}
void FakeVpic::HoldAnswers() { impl_->Hold(true); }
void FakeVpic::ReleaseAnswers() { impl_->Hold(false); }
void FakeVpic::ScriptBatch(std::vector<Step> steps) {
  impl_->ScriptBatch(std::move(steps));
}
std::vector<RequestRecord> FakeVpic::BatchRequests() const {
  return impl_->Requests(std::nullopt, /*batches_only=*/true);
}
std::vector<RequestRecord> FakeVpic::Requests() const {
  return impl_->Requests(std::nullopt);
}
std::vector<RequestRecord> FakeVpic::RequestsFor(absl::string_view vin) const {
  return impl_->Requests(vin);
}
int FakeVpic::RequestCount(absl::string_view vin) const {
  return static_cast<int>(impl_->Requests(vin).size());
}
int FakeVpic::TotalRequests() const { return impl_->TotalRequests(); }
int FakeVpic::TotalVinsRequested() const {
  int vins = 0;
  for (const RequestRecord& r : impl_->Requests(std::nullopt)) {
    vins += r.is_batch() ? static_cast<int>(r.batch.size()) : !r.vin.empty();
  }
  return vins;
}
bool FakeVpic::WaitForRequests(int n, absl::Duration timeout) const {
  return impl_->WaitForRequests(n, timeout);
}
bool FakeVpic::WaitUntilIdle(absl::Duration timeout) const {
  return impl_->WaitUntilIdle(timeout);
}
int FakeVpic::MaxConcurrentRequests() const {
  return impl_->MaxConcurrentRequests();
}
int FakeVpic::ActiveRequests() const { return impl_->ActiveRequests(); }

}  // namespace fakevpic
