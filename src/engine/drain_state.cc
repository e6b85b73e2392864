#include "engine/drain_state.h"

#include "absl/strings/str_cat.h"

namespace engine {

Failure DrainState::ShuttingDown(absl::string_view detail, int attempts) {
  Failure f;
  f.reason = FailureReason::kShuttingDown;
  f.message = detail.empty()
                  ? std::string("the server is shutting down; try again later")
                  : absl::StrCat("the server is shutting down; ", detail,
                                 "; try again later");
  f.retryable = true;
  f.attempts = attempts;
  return f;
}

}  // namespace engine
