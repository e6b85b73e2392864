// Conversions between the vin.v1 wire messages and the engine's types.
#ifndef VIN_SERVER_COMMON_PROTO_MAPPING_H_
#define VIN_SERVER_COMMON_PROTO_MAPPING_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/types/optional.h"
#include "engine/engine.h"
#include "engine_api/types.h"
#include "vin/v1/vin.pb.h"

namespace server {

// From the result's encoded bytes when it has them, else field by field.
void ToProto(const engine::DecodeResult& in, vin::v1::DecodeResult* out);
// The wire bytes of a result (the engine's encoder): field by field.
std::string EncodeResult(const engine::DecodeResult& in);
// A live result's bytes (EncodeResult's) made the bytes of its cache answer
// (the engine's recoder): the same fields but source CACHE and attempts 0,
// in EncodeResult's order, without expanding the vehicle. Nullopt when
// `live` does not parse.
absl::optional<std::string> CacheAnswerBytes(const std::string& live);
// The other way (the engine's decoder): false when `bytes` is not a
// vin.v1.DecodeResult with a VIN and a decode time.
bool DecodeResultBytes(const std::string& bytes, engine::DecodeResult* out);
// The same check (the bytes parse whole, with a VIN and a decode time), for
// bytes read from Redis (fleet::Trust::read_result): fills only `out`'s VIN,
// model year and decode time, at half DecodeResultBytes' cost.
bool CheckResultBytes(const std::string& bytes, engine::DecodeResult* out);
// Every field but the provenance, which only callers asking to explain
// get (AddProvenance).
void BuildProto(const engine::DecodeResult& in, vin::v1::DecodeResult* out);
// Rule 21: `out`'s provenance (`out` made from `in`): the snapshot's
// sources, or "vpic" for each attribute of a live or cache answer.
void AddProvenance(const engine::DecodeResult& in, vin::v1::DecodeResult* out);
void ToProto(const engine::Queued& in, vin::v1::QueuedEvent* out);
void ToProto(const engine::Retrying& in, vin::v1::RetryingEvent* out);
void ToProto(const engine::Failure& in, vin::v1::FailedEvent* out);
void ToProto(const vpic::UpstreamError& in, vin::v1::UpstreamError* out);
void ToProto(absl::Duration in, google::protobuf::Duration* out);
vin::v1::FailureReason ToProto(engine::FailureReason reason);

// The engine request for the wire fields (VIN, model year, check-digit
// policy, source preference, allow_partial); deadline, stagger, priority
// and tenant are the caller's to set.
// Rule 21: a VIN read from a barcode (vin::BarcodeRead) is read as the 17
// characters after its 'I'.
engine::DecodeRequest FromProto(const vin::v1::DecodeRequest& request);
engine::DecodeRequest FromProto(const vin::v1::DecodeBatchRequest& request);

// What one caller's answer has that the shared result has not (rule 21):
// the provenance when it asked to explain, and a note that its VIN was read
// from a barcode.
struct CallerExtras {
  bool explain = false;
  std::vector<domain::Note> notes;
};
CallerExtras ExtrasOf(const vin::v1::DecodeRequest& request);
CallerExtras ExtrasOf(const vin::v1::DecodeBatchRequest& request);
// `in` as this caller gets it: `in` itself without extras, else a result
// whose encoded bytes (where its vehicle and notes then are) carry them.
std::shared_ptr<const engine::DecodeResult> ForCaller(
    std::shared_ptr<const engine::DecodeResult> in, const CallerExtras& extras);
engine::SourcePreference FromProto(vin::v1::SourcePreference source);

}  // namespace server

#endif  // VIN_SERVER_COMMON_PROTO_MAPPING_H_
