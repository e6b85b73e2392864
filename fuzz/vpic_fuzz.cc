// vPIC answers on any bytes: the single and batch parsers, the reference
// document check and the classifier never crash, and a 200 is never retried
// for what it says (DESIGN: a 200 is a finished decode or a rejection,
// unless it is not JSON); a reference answer the check accepts is answered,
// with its bytes as sent (rule 18).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "vpic/classify.h"
#include "vpic/parse.h"
#include "vpic/reference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  (void)vpic::ParseDecodeVinValues(body);
  (void)vpic::ParseDecodeVinValuesBatch(body);
  vpic::HttpResult r;
  r.http_status = 200;
  r.body = body;
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  (void)vpic::Classify(r, now);
  const std::vector<std::string> vins = {"1HGCM82633A004352", "5YJ3E1EA7KF317000"};
  const std::vector<vpic::Outcome> outcomes = vpic::ClassifyBatch(r, now, vins);
  if (outcomes.size() != vins.size()) __builtin_trap();  // one per VIN asked
  const vpic::RequestOutcome ref = vpic::ClassifyReferenceRequest(r, now);
  const bool is_document = vpic::CheckReferenceDocument(body).ok();
  if (ref.outcomes.size() != 1) __builtin_trap();
  const vpic::Outcome& o = ref.outcomes.front();
  if (is_document != (o.verdict == vpic::Outcome::Verdict::kDecoded)) {
    __builtin_trap();
  }
  if (is_document && *o.decoded.document != body) __builtin_trap();
  r.http_status = 503;
  (void)vpic::Classify(r, now);
  return 0;
}
