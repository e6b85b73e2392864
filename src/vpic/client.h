// The vPIC HTTP client: one libcurl multi handle, a pool of reusable easy
// handles (so connections are kept alive and reused), a per-attempt timeout.
//
// libcurl's multi socket API over the engine's event loop: libcurl's
// sockets are watched by the loop, its timeout is a timer of the loop's.
// Not thread-safe: called from the loop's thread only, after Attach();
// callbacks run on it.
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
#include "vpic/upstream_client.h"

namespace vpic {

struct ClientOptions {
  // e.g. "https://vpic.nhtsa.dot.gov/api/vehicles" (no trailing slash needed)
  std::string base_url;
  // Whole-transfer limit for one attempt (connect + request + body).
  absl::Duration attempt_timeout = absl::Seconds(15);
  std::string user_agent = "vin-decode-service/1";
  // A longer answer body is abandoned (a retryable bad_response): vPIC's
  // answers are ~6 KB a VIN, a batch of 50 under 400 KB.
  size_t max_body_bytes = 1 << 20;
  // Tests only: stands in for curl_multi_add_handle(multi, easy) (CURLM*,
  // CURL*; returns a CURLMcode), to make it fail. Empty: libcurl's.
  std::function<int(void* multi, void* easy)> add_handle;
};

// How a failed libcurl transfer is classified (CURLcode as int).
Transport TransportOf(int curl_code);

// {base}/DecodeVinValues/{vin}?format=json[&modelyear=Y]
std::string DecodeVinValuesUrl(const std::string& base_url,
                               const std::string& vin, int model_year);
// {base}/DecodeVINValuesBatch/
std::string DecodeVinValuesBatchUrl(const std::string& base_url);
// The form body of a batch request: format=json&data=VIN[,YEAR];VIN[,YEAR]
// (form-encoded, so ',' and ';' travel as %2C and %3B).
std::string DecodeVinValuesBatchBody(const std::vector<BatchEntry>& entries);

class Client final : public UpstreamClient {
 public:
  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);
  ~Client() override;

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  RequestId Start(const std::string& vin, int model_year,
                  Callback done) override;
  RequestId StartBatch(const std::vector<BatchEntry>& entries,
                       Callback done) override;
  RequestId StartReference(const std::string& reference,
                           Callback done) override;
  void Cancel(RequestId id) override;
  void Attach(loop::EventLoop* loop) override;

  size_t active() const override { return transfers_.size(); }

  struct Transfer;  // one request in progress (public for libcurl's callbacks)

 private:
  explicit Client(ClientOptions options, void* multi);
  void* AcquireHandle();
  // Sets up a transfer of `url` with the common options; the caller adds
  // method-specific options, then calls Add().
  Transfer* Begin(const std::string& url, Callback done);
  // Hands the transfer to libcurl. When libcurl refuses it, the transfer
  // stays counted in active() and fails (retryable) in the loop's next turn.
  RequestId Add(Transfer* t);
  void Finish(Transfer* t, int curl_code);
  void FailRefused(Transfer* t);

  const ClientOptions options_;
  void* const multi_;             // CURLM*
  std::vector<void*> idle_;       // CURL* kept for reuse
  RequestId next_id_ = 1;
  absl::flat_hash_map<RequestId, std::unique_ptr<Transfer>> transfers_;
  std::unique_ptr<Transfer> starting_;  // between Begin() and Add()
  // Called by libcurl (CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION).
  static int OnSocket(void* easy, int fd, int what, void* client, void*);
  static int OnTimer(void* multi, long timeout_ms, void* client);
  // Lets libcurl act on `fd` (or on its timeout: CURL_SOCKET_TIMEOUT), then
  // finishes the transfers that are done.
  void Drive(int fd, int curl_events);
  void FinishDone();

  loop::EventLoop* loop_ = nullptr;
  retry::Scheduler::TimerId curl_timer_ = 0;
};

}  // namespace vpic

#endif  // VIN_VPIC_CLIENT_H_
