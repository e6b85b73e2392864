// A finished decode as every layer sees it, and where it may come from.
#ifndef VIN_DOMAIN_DECODE_RESULT_H_
#define VIN_DOMAIN_DECODE_RESULT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "domain/provenance.h"
#include "domain/vehicle.h"

namespace domain {

enum class Source { kVpic, kCache, kSnapshot };

// Which decoders may answer a request.
enum class SourcePreference {
  kUnspecified,       // the server's default
  kLiveOnly,          // vPIC or the cache of vPIC answers
  kSnapshotOnly,      // the offline snapshot only; vPIC is never asked
  kLiveThenSnapshot,  // the snapshot once the live path has failed for good
};

struct DecodeResult {
  std::string vin;  // normalised
  Vehicle vehicle;
  Source source = Source::kVpic;
  int attempts = 0;  // upstream attempts behind this result; 0 from the cache
  std::vector<Note> notes;
  absl::Time decode_time;
  // Rule 21: the model years position 10 leaves open (encoded with the
  // result), and, for a snapshot answer, where each variable came from
  // (never encoded: the server adds it for callers who ask to explain).
  std::vector<ModelYearCandidate> model_year_candidates;
  std::vector<FieldSource> provenance;
  // The bytes callers are sent for this result (the server's wire encoding,
  // made once per result by the engine's encoder), or null when there is
  // no encoder. A cache answer that has them keeps its vehicle and notes
  // only there: `vehicle` and `notes` are then empty.
  std::shared_ptr<const std::string> encoded;
  // Rule 18: the answer to a reference request (DecodeKey::reference):
  // vPIC's JSON document as vPIC sent it (Count, Message, SearchCriteria,
  // Results), which callers render in the format they asked. `vin`,
  // `vehicle` and `encoded` are then empty. Null for a VIN decode.
  std::shared_ptr<const std::string> document;
};

}  // namespace domain

#endif  // VIN_DOMAIN_DECODE_RESULT_H_
