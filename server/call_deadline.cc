#include "server/call_deadline.h"

#include <algorithm>
#include <chrono>

namespace server {

absl::Time DeadlineOf(const grpc::CallbackServerContext* context) {
  const auto deadline = context->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

absl::Duration TimeoutOf(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return absl::InfiniteDuration();
  return deadline - absl::Now();
}

absl::Duration ItemTimeoutOf(absl::Time stream_deadline) {
  return engine::ItemTimeout(TimeoutOf(stream_deadline));
}

}  // namespace server
