// A gRPC call's deadline, for the engine.
#ifndef VIN_SERVER_CALL_DEADLINE_H_
#define VIN_SERVER_CALL_DEADLINE_H_

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "engine/waiter_deadlines.h"

namespace server {

// The caller's deadline as an absl::Time (InfiniteFuture when none).
absl::Time DeadlineOf(const grpc::CallbackServerContext* context);
// The time left until `deadline` (wall time) for the engine, which measures
// it on its own monotonic clock; InfiniteDuration for no deadline.
absl::Duration TimeoutOf(absl::Time deadline);
// The time a DecodeBatch item has to decode: until a moment before its
// stream's deadline (engine::ItemTimeout, the rule's one place), so that
// the item's FAILED (DEADLINE_EXCEEDED) event is written before gRPC ends
// the stream. InfiniteDuration for no deadline.
absl::Duration ItemTimeoutOf(absl::Time stream_deadline);

}  // namespace server

#endif  // VIN_SERVER_CALL_DEADLINE_H_
