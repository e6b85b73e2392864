// A fake of NHTSA's vPIC HTTP API for tests, demos and benchmarks.
//
// Serves GET {base}/DecodeVinValues/{VIN}?format=json[&modelyear=Y],
// POST {base}/DecodeVINValuesBatch/ (form body format=json&data=VIN[,YEAR];...)
// and GET of every other endpoint with a captured answer
// (tests/fixtures/vpic/json/: the same answer whatever the arguments)
// over HTTP/1.1 with keep-alive on a loopback port. Known fixture VINs are
// answered with the captured vPIC bodies; any other VIN gets a generated
// vPIC-shaped answer. Per-VIN scripts replace the next answers with faults;
// batch-wide scripts replace the next batch answers. Every request is logged
// with its arrival time (a batch request with its VINs).
//
// Compression is negotiated as a web server or CDN in front of vPIC does it:
// a 200 answer goes gzip-compressed (Content-Encoding: gzip, Vary:
// Accept-Encoding) when the request's Accept-Encoding accepts gzip, and
// plain otherwise; short error texts (4xx, 5xx, 429) and redirects always go
// plain. Options::gzip = false makes a server that never compresses. The
// `badgzip` step labels a body gzip that is not (a broken proxy), whatever
// the request accepts.
//
// In a batch request each VIN takes the next step of its own script, as a
// single request would: `sparse` gives that VIN a sparse result, `missing`
// leaves it out of the answer, `delay:` delays the whole answer, and a fault
// of the whole answer (a status, 429, reset, hang, html, truncated, empty)
// becomes the answer to the batch, for every VIN in it, since an HTTP answer
// cannot fail for one VIN alone.
//
// Thread-safe: tests script and read the log from any thread while the
// server's own threads serve connections.
#ifndef FAKE_VPIC_FAKE_VPIC_H_
#define FAKE_VPIC_FAKE_VPIC_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fakevpic {

// One scripted answer.
struct Step {
  enum class Kind {
    kOk,      // the normal answer (fixture or generated)
    kStatus,  // HTTP `status` with a short text body (503, 502, 404, ...)
    kTooManyRequests,  // 429 with `Retry-After: retry_after` (seconds or HTTP
                       // date)
    kReset,            // read the request, then reset the connection (RST)
    kHang,             // read the request, never answer; the connection stays
                       // open until the client closes it or the server stops
    kHtml,             // 200 text/html maintenance page, with `Retry-After:
                       // retry_after` when that is set ("html:120")
    kSparse,        // 200 valid vPIC JSON, every variable empty but ErrorCode 8
    kTruncated,     // 200 whose JSON body is cut in the middle (Content-Length
                    // matches what is sent)
    kEmptyResults,  // 200 vPIC JSON with "Results": []
    kDelay,         // wait `delay`, then the normal answer
    kMissing,       // 200 without a result for this VIN (single: "Results": [])
    kHuge,          // 200 valid vPIC JSON of 2 MiB (a padded normal answer)
    kRedirect,      // 302 to `location`
    kBadGzip,       // 200 with Content-Encoding: gzip, but the body is the
                    // plain JSON answer, not gzip
    kSet,           // the normal answer with vPIC variable `variable` set to
                    // `value` ("" empties it): an answer that differs in one
  };
  Kind kind = Kind::kOk;
  int status = 0;
  std::string retry_after;  // kTooManyRequests, kHtml
  std::string location;
  absl::Duration delay;
  std::string variable;  // kSet
  std::string value;     // kSet

  // Parses the textual form used by the fake-vpic binary and handy in tests:
  // "ok", "503" (any 3-digit status), "429:<Retry-After value>", "reset",
  // "hang", "html", "html:<Retry-After value>", "sparse", "truncated",
  // "empty", "missing", "huge", "badgzip",
  // "delay:<duration>" (e.g. "delay:500ms"), "redirect:<url>",
  // "set:<Variable>=<value>" (e.g. "set:Model=F-550").
  static absl::StatusOr<Step> Parse(absl::string_view text);
  // Parses a comma-separated list of steps ("503,503,ok").
  static absl::StatusOr<std::vector<Step>> ParseList(absl::string_view text);
};

// A step drawn at random with this weight (Options::chaos).
struct WeightedStep {
  int weight = 1;
  Step step;
  // Parses "WEIGHT*STEP,WEIGHT*STEP,..." ("60*ok,10*503,2*429:1,5*reset");
  // a step without "WEIGHT*" weighs 1.
  static absl::StatusOr<std::vector<WeightedStep>> ParseList(
      absl::string_view text);
};

struct RequestRecord {
  absl::Time time;     // when the request line arrived
  std::string vin;     // the VIN in the path ("" when the path is not DecodeVinValues)
  // A reference endpoint's (rule 18: GetAllMakes, ...), lower case: its
  // scripts are keyed by it (Script("getmodelsformake", ...)).
  std::string endpoint;
  int model_year = 0;  // the modelyear query parameter, 0 when absent
  std::string target;  // the request target as sent ("/api/vehicles/...")
  std::string served;  // what was served: "ok", "503", "reset", "hang", ...
  // When the answer was written in full (InfinitePast when none was).
  absl::Time answered = absl::InfinitePast();
  // The request's Accept-Encoding header ("" when none), and whether the
  // answer went gzip-compressed.
  std::string accept_encoding;
  bool gzipped = false;
  // DecodeVINValuesBatch requests: the VINs (and model years, 0 for none)
  // of the form body, in order. Empty for other requests.
  std::vector<std::pair<std::string, int>> batch;
  bool is_batch() const { return !batch.empty(); }
};

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 picks a free port
  // Directory with captured vPIC answers (*.json with request/status/body).
  std::string fixtures_dir = VIN_FIXTURE_DIR;
  // Generated answers with every variable a fixture fills (Answers::Load).
  bool full_answers = false;
  // Added before every answer (simulates a slow upstream for benchmarks).
  absl::Duration latency = absl::ZeroDuration();
  // Compress 200 answers for requests that accept gzip (see above).
  bool gzip = true;
  // Called for every request as it arrives, on a connection thread, outside
  // the fake's locks (the fake-vpic binary's --log_requests uses it).
  std::function<void(const RequestRecord&)> on_request;
  // Chaos: every request that no script answers (no per-VIN, every-VIN or
  // batch script step left for it) gets a step drawn at random from these,
  // by weight, with a generator seeded by `chaos_seed`. One draw per request:
  // in a batch request a whole-answer fault or a delay is the answer's, and
  // `sparse` or `missing` applies to every VIN of it. Empty: no chaos.
  std::vector<WeightedStep> chaos;
  uint64_t chaos_seed = 1;
};

class FakeVpic {
 public:
  static absl::StatusOr<std::unique_ptr<FakeVpic>> Start(Options options = {});
  ~FakeVpic();  // stops serving, closes every connection, joins its threads

  FakeVpic(const FakeVpic&) = delete;
  FakeVpic& operator=(const FakeVpic&) = delete;

  int port() const;
  // "http://127.0.0.1:<port>/api/vehicles", the value for --vpic_base_url.
  std::string base_url() const;

  // The next requests for `vin` get these answers in order; afterwards the
  // normal answer. Replaces any script left for `vin`.
  void Script(const std::string& vin, std::vector<Step> steps);
  // Every VIN without a script of its own gets these answers for its first
  // requests (counted per VIN from this call on), then the normal answer.
  // Used for outages.
  void ScriptEveryVin(std::vector<Step> steps);
  // The next batch requests get these answers as a whole, whatever their
  // VINs' scripts say (their VINs' scripts are not consumed). `ok` leaves a
  // batch request to its VINs' scripts.
  void ScriptBatch(std::vector<Step> steps);

  // Until ReleaseAnswers(), requests are read and logged but not answered
  // (for tests that need many callers waiting on one request).
  void HoldAnswers();
  void ReleaseAnswers();

  std::vector<RequestRecord> Requests() const;
  // The requests that asked for `vin`: single ones, and batches holding it.
  std::vector<RequestRecord> RequestsFor(absl::string_view vin) const;
  int RequestCount(absl::string_view vin) const;
  // DecodeVINValuesBatch requests only.
  std::vector<RequestRecord> BatchRequests() const;
  int TotalRequests() const;
  // VINs asked for, over every request: one per DecodeVinValues request,
  // each VIN of a batch.
  int TotalVinsRequested() const;
  // Blocks until at least `n` requests have arrived or `timeout` passes;
  // returns whether they arrived.
  bool WaitForRequests(int n, absl::Duration timeout) const;
  // Blocks until no request is being answered (hangs end when their client
  // closes the connection) or `timeout` passes; returns whether idle.
  bool WaitUntilIdle(absl::Duration timeout) const;
  // The highest number of requests that were being answered at once.
  int MaxConcurrentRequests() const;
  // Number of requests currently being answered (hangs and delays included).
  int ActiveRequests() const;

 private:
  class Impl;
  explicit FakeVpic(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fakevpic

#endif  // FAKE_VPIC_FAKE_VPIC_H_
