// The wire form of a flight's event on the fleet's channel: the protobuf
// message vin.fleet.v1.FleetEvent (proto/vin/fleet/v1/fleet.proto), and
// back. Every enum is mapped value by value, never cast.
#ifndef VIN_FLEET_EVENT_MAPPING_H_
#define VIN_FLEET_EVENT_MAPPING_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine_api/fleet_backend.h"

namespace fleet {

// The serialized vin.fleet.v1.FleetEvent of `e`.
std::string EncodeEvent(const engine::FleetEvent& e);

// The event in `bytes`; INVALID_ARGUMENT (saying why) when they are not a
// FleetEvent, or one this replica cannot act on: no kind or key, a kind,
// source or failure reason it does not know, or a kind without its part.
absl::StatusOr<engine::FleetEvent> DecodeEvent(absl::string_view bytes);

// A reference answer's document as the shared cache holds it
// (vin.fleet.v1.ReferenceAnswer), and back: nullopt when `bytes` are not
// one (the document itself is checked by the caller).
std::string EncodeReferenceAnswer(const std::string& document);
absl::optional<std::string> DecodeReferenceAnswer(absl::string_view bytes);

}  // namespace fleet

#endif  // VIN_FLEET_EVENT_MAPPING_H_
