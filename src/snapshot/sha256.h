// A small self-contained SHA-256 (FIPS 180-4), used to fingerprint the
// snapshot file at load time. Not constant-time; not for secrets.
#ifndef VIN_SNAPSHOT_SHA256_H_
#define VIN_SNAPSHOT_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace snapshot {

// Incremental hasher. Not thread-safe; one owner at a time.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(absl::string_view data) { Update(data.data(), data.size()); }
  // Finishes the hash and returns it as 64 lower-case hex digits. The object
  // must not be updated afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* p);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The sha256 of a whole file, as hex. NOT_FOUND / INTERNAL on I/O failure.
absl::StatusOr<std::string> Sha256File(const std::string& path);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SHA256_H_
