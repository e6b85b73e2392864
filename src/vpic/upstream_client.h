// What the engine needs of the vPIC HTTP client, as an interface, so that
// the engine can be driven by a scripted upstream (and a fake clock) in
// tests. vpic::Client is the real implementation; tests script their own.
//
// Not thread-safe: the engine's loop thread calls it, after Attach(), and
// callbacks run on that thread, in a later turn of the loop.
#ifndef VIN_VPIC_UPSTREAM_CLIENT_H_
#define VIN_VPIC_UPSTREAM_CLIENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "loop/event_loop.h"
#include "vpic/classify.h"

namespace vpic {

// One VIN of a DecodeVINValuesBatch request.
struct BatchEntry {
  std::string vin;
  int model_year = 0;  // 0 = no hint
};

class UpstreamClient {
 public:
  using RequestId = uint64_t;  // never 0
  using Callback = std::function<void(HttpResult)>;

  virtual ~UpstreamClient() = default;

  // Binds the client to `loop` (not owned; outlives the client): its I/O
  // and timers are sources of that loop. Called once, before any request.
  virtual void Attach(loop::EventLoop* loop) = 0;
  // GET DecodeVinValues for one VIN; `done` runs in a later turn of the
  // loop, never inside Start.
  virtual RequestId Start(const std::string& vin, int model_year,
                          Callback done) = 0;
  // POST DecodeVINValuesBatch for several VINs (at most 50, as vPIC allows).
  virtual RequestId StartBatch(const std::vector<BatchEntry>& entries,
                               Callback done) = 0;
  // GET a reference request (rule 18; reference.h's ReferenceUrl) as JSON.
  virtual RequestId StartReference(const std::string& reference,
                                   Callback done) = 0;
  // Aborts a request; its callback never runs. Unknown ids are a no-op.
  virtual void Cancel(RequestId id) = 0;
  // Requests in progress.
  virtual size_t active() const = 0;
};

}  // namespace vpic

#endif  // VIN_VPIC_UPSTREAM_CLIENT_H_
