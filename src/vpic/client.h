// The vPIC HTTP client: one libcurl multi handle, a pool of reusable easy
// handles (so connections are kept alive and reused), a per-attempt timeout.
//
// Not thread-safe except Wakeup(): Start, Cancel and Poll are called from the
// engine's loop thread only, and callbacks run on it inside Poll().
#ifndef VIN_VPIC_CLIENT_H_
#define VIN_VPIC_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "vpic/classify.h"

namespace vpic {

struct ClientOptions {
  // e.g. "https://vpic.nhtsa.dot.gov/api/vehicles" (no trailing slash needed)
  std::string base_url;
  // Whole-transfer limit for one attempt (connect + request + body).
  absl::Duration attempt_timeout = absl::Seconds(15);
  std::string user_agent = "vin-decode-service/1";
};

// {base}/DecodeVinValues/{vin}?format=json[&modelyear=Y]
std::string DecodeVinValuesUrl(const std::string& base_url,
                               const std::string& vin, int model_year);

class Client {
 public:
  using RequestId = uint64_t;
  using Callback = std::function<void(HttpResult)>;

  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);
  ~Client();

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Starts GET DecodeVinValues for `vin`; `done` runs inside a later Poll().
  RequestId Start(const std::string& vin, int model_year, Callback done);
  // Aborts a transfer; its callback never runs. Unknown ids are a no-op.
  void Cancel(RequestId id);
  // Drives transfers: waits up to `timeout` for socket activity or Wakeup(),
  // then runs the callbacks of finished transfers.
  void Poll(absl::Duration timeout);
  // Makes a concurrent or next Poll() return at once. Thread-safe.
  void Wakeup();

  size_t active() const { return transfers_.size(); }

 private:
  struct Transfer;
  explicit Client(ClientOptions options, void* multi);
  void* AcquireHandle();
  void Finish(Transfer* t, int curl_code);

  const ClientOptions options_;
  void* const multi_;             // CURLM*
  std::vector<void*> idle_;       // CURL* kept for reuse
  RequestId next_id_ = 1;
  absl::flat_hash_map<RequestId, std::unique_ptr<Transfer>> transfers_;
};

}  // namespace vpic

#endif  // VIN_VPIC_CLIENT_H_
