// The seal on every value a replica writes to Redis (vin.fleet.v1.Seal in
// proto/vin/fleet/v1/fleet.proto): appended to the value's bytes as one
// last length-delimited protobuf field (number kSealField), it names the
// key or channel the value was written for and when, and with the fleet's
// secret (--fleet_secret_file) carries an HMAC-SHA256 of all of it, so
// that a client that can write to Redis but does not hold the secret
// cannot forge a value, nor move one to another key. A protobuf reader
// that knows nothing of it skips it as an unknown field.
//
// Pure functions, and an immutable secret: any thread.
#ifndef VIN_FLEET_SEAL_H_
#define VIN_FLEET_SEAL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleet {

inline constexpr int kSealField = 2047;

// The fleet's HMAC key.
class FleetSecret {
 public:
  // INVALID_ARGUMENT when shorter than kMinFleetSecretBytes
  // (fleet/secret_file.h).
  static absl::StatusOr<std::shared_ptr<const FleetSecret>> Create(
      std::string key);

  // The seal's MAC of `payload` written for `key` at `issued_unix_ms`.
  std::string Mac(absl::string_view key, int64_t issued_unix_ms,
                  absl::string_view payload) const;

 private:
  explicit FleetSecret(std::string key) : key_(std::move(key)) {}
  const std::string key_;
};

// `payload` followed by its seal for `key`, written at `issued`; signed
// when `secret` is given.
std::string Seal(absl::string_view payload, absl::string_view key,
                 absl::Time issued, const FleetSecret* secret);

// A value read back, split from its seal.
struct Opened {
  absl::string_view payload;  // the bytes before the seal (all when none)
  bool sealed = false;
  std::string key;  // the seal's key
  int64_t issued_unix_ms = 0;
  std::string mac;  // empty when not signed
};

// Splits `bytes` (which must outlive the result). INVALID_ARGUMENT when
// they are not a protobuf message's fields, or the seal is not the last
// field, comes twice, or is not a Seal.
absl::StatusOr<Opened> OpenSeal(absl::string_view bytes);

// Whether `opened` carries the MAC `secret` makes for it written for `key`
// (compared in constant time).
bool MacMatches(const Opened& opened, absl::string_view key,
                const FleetSecret& secret);

}  // namespace fleet

#endif  // VIN_FLEET_SEAL_H_
