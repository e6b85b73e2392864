#include "server/fleet_join.h"

#include <cstring>
#include <utility>

#include "absl/time/clock.h"
#include "server/common/log.h"

namespace server {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::InterceptorBatchMethods;

// The calls held: those of the decode service (health and reflection never).
constexpr char kHeldPrefix[] = "/vin.v1.VinDecoderService/";

}  // namespace

// One held call's interceptor: keeps its first batch (the initial metadata,
// with the request of a unary call) until the gate opens; every later
// batch goes on at once.
class FleetJoin::Interceptor final : public grpc::experimental::Interceptor {
 public:
  explicit Interceptor(FleetJoin* join) : join_(join) {}

  void Intercept(InterceptorBatchMethods* methods) override {
    if (!tried_ && methods->QueryInterceptionHookPoint(
                       InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      tried_ = true;
      if (join_->Hold(methods)) return;  // Proceed() when the gate opens
    }
    methods->Proceed();
  }

 private:
  FleetJoin* const join_;
  bool tried_ = false;  // a call's batches are intercepted one at a time
};

class FleetJoin::Factory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit Factory(FleetJoin* join) : join_(join) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (join_->open_fast_.load(std::memory_order_acquire)) return nullptr;
    const char* method = info->method();
    if (method == nullptr ||
        std::strncmp(method, kHeldPrefix, sizeof(kHeldPrefix) - 1) != 0) {
      return nullptr;
    }
    return new Interceptor(join_);
  }

 private:
  FleetJoin* const join_;
};

FleetJoin::FleetJoin(std::string redis_url, absl::Duration timeout,
                     HealthService* health)
    : redis_url_(std::move(redis_url)),
      timeout_(timeout),
      health_(health),
      started_(absl::Now()) {
  health_->SetReady(false);
  waiter_ = std::thread([this] { Wait(); });
}

FleetJoin::~FleetJoin() { Stop(); }

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
FleetJoin::HoldCalls() {
  return std::make_unique<Factory>(this);
}

bool FleetJoin::Hold(InterceptorBatchMethods* methods) {
  size_t held = 0;
  {
    absl::MutexLock lock(&mu_);
    if (open_) return false;
    held_.push_back(methods);
    held = held_.size();
  }
  log::Event(log::Level::kDebug,
             "decode call held until the replica joins its fleet",
             {{"calls_held", held}});
  return true;
}

size_t FleetJoin::held() const {
  absl::MutexLock lock(&mu_);
  return held_.size();
}

void FleetJoin::Joined() {
  bool late = false;
  {
    absl::MutexLock lock(&mu_);
    joined_ = true;
    late = timed_out_;
  }
  if (late) {
    log::Event(log::Level::kInfo,
               "redis answered: joined the fleet (cache, flights and the "
               "upstream budget are shared from now on)",
               {{"redis", redis_url_},
                {"since_start", absl::FormatDuration(absl::Now() - started_)}});
  }
}

void FleetJoin::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (waiter_.joinable()) waiter_.join();
}

bool FleetJoin::ShouldLogRedisState(bool up) const {
  absl::MutexLock lock(&mu_);
  return open_ && !stop_ && (!up || joined_);
}

void FleetJoin::Wait() {
  std::vector<InterceptorBatchMethods*> held;
  bool joined = false;
  bool stopping = false;
  {
    absl::MutexLock lock(&mu_);
    auto decided = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return joined_ || stop_;
    };
    mu_.AwaitWithDeadline(absl::Condition(&decided), started_ + timeout_);
    joined = joined_;
    stopping = stop_;
    timed_out_ = !joined_ && !stop_;
    open_ = true;
    open_fast_.store(true, std::memory_order_release);
    held.swap(held_);
  }
  // Health first, so that a caller answered next sees SERVING too.
  if (!stopping) health_->SetReady(true);
  for (InterceptorBatchMethods* m : held) m->Proceed();
  if (stopping) return;  // the shutdown speaks for itself
  const std::string waited = absl::FormatDuration(absl::Now() - started_);
  if (joined) {
    log::Event(log::Level::kInfo, "joined the fleet: redis answered; serving",
               {{"redis", redis_url_},
                {"waited", waited},
                {"calls_held", held.size()}});
  } else {
    log::Event(log::Level::kWarn,
               "redis did not answer within --redis_connect_timeout: serving "
               "in local mode (local cache, flights and bucket) until it does",
               {{"redis", redis_url_},
                {"redis_connect_timeout", absl::FormatDuration(timeout_)},
                {"calls_held", held.size()}});
  }
}

}  // namespace server
