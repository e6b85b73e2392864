// What the engine needs of the vPIC HTTP client, as an interface, so that
// the engine can be driven by a scripted upstream (and a fake clock) in
// tests. vpic::Client is the real implementation; tests script their own.
//
// Not thread-safe except Wakeup(): the engine's loop thread calls the rest,
// and callbacks run on that thread inside Poll().
#ifndef VIN_VPIC_UPSTREAM_CLIENT_H_
#define VIN_VPIC_UPSTREAM_CLIENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
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

  // GET DecodeVinValues for one VIN; `done` runs inside a later Poll().
  virtual RequestId Start(const std::string& vin, int model_year,
                          Callback done) = 0;
  // POST DecodeVINValuesBatch for several VINs (at most 50, as vPIC allows).
  virtual RequestId StartBatch(const std::vector<BatchEntry>& entries,
                               Callback done) = 0;
  // Aborts a request; its callback never runs. Unknown ids are a no-op.
  virtual void Cancel(RequestId id) = 0;
  // Waits up to `timeout` for progress or Wakeup(), then runs the callbacks
  // of finished requests.
  virtual void Poll(absl::Duration timeout) = 0;
  // Makes a concurrent or next Poll() return at once. Thread-safe.
  virtual void Wakeup() = 0;
  // Requests in progress.
  virtual size_t active() const = 0;
};

}  // namespace vpic

#endif  // VIN_VPIC_UPSTREAM_CLIENT_H_
