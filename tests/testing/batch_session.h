// Runs one DecodeBatch stream from a test: a writer thread sends the
// requests (then half-closes) while the caller's thread reads every event.
#ifndef VIN_TESTS_TESTING_BATCH_SESSION_H_
#define VIN_TESTS_TESTING_BATCH_SESSION_H_

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "vin/v1/vin.grpc.pb.h"

namespace testing_util {

struct BatchOutcome {
  grpc::Status status;
  std::vector<vin::v1::DecodeBatchResponse> events;
};

// `on_event` (optional) runs on the reading thread for each event, before
// the next read; `context_hook` may keep the context to cancel it.
inline BatchOutcome RunBatch(
    vin::v1::VinDecoderService::Stub* stub,
    const std::vector<vin::v1::DecodeBatchRequest>& requests,
    std::function<void(const vin::v1::DecodeBatchResponse&)> on_event = {},
    std::function<void(grpc::ClientContext*)> context_hook = {},
    absl::Duration timeout = absl::Seconds(120)) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  if (context_hook) context_hook(&ctx);
  auto stream = stub->DecodeBatch(&ctx);
  std::thread writer([&] {
    for (const auto& r : requests) {
      if (!stream->Write(r)) break;  // the stream ended early
    }
    stream->WritesDone();
  });
  BatchOutcome out;
  vin::v1::DecodeBatchResponse event;
  while (stream->Read(&event)) {
    if (on_event) on_event(event);
    out.events.push_back(event);
  }
  writer.join();
  out.status = stream->Finish();
  return out;
}

inline vin::v1::DecodeBatchRequest Item(const std::string& vin,
                                        const std::string& request_id = "") {
  vin::v1::DecodeBatchRequest r;
  r.set_vin(vin);
  r.set_request_id(request_id);
  return r;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_BATCH_SESSION_H_
