// Secrets of fleet mode kept in files (--redis_password_file,
// --fleet_secret_file), read like any other input: the size is bounded
// before anything is read, and the text is checked. Errors name the flag
// and the file, never the secret.
#ifndef VIN_FLEET_SECRET_FILE_H_
#define VIN_FLEET_SECRET_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleet {

inline constexpr size_t kMaxSecretFileBytes = 4096;
// A shorter fleet secret is refused: an HMAC key is only as strong as it.
inline constexpr size_t kMinFleetSecretBytes = 16;

// A password: one line of at most kMaxSecretFileBytes, its trailing "\n"
// (or "\r\n") trimmed; not empty, no other line break, no NUL.
absl::StatusOr<std::string> ReadPasswordFile(const std::string& path,
                                             absl::string_view flag);

// The fleet's HMAC key: the file's bytes (any bytes: `head -c 32
// /dev/urandom` will do), one trailing "\n" or "\r\n" trimmed; at least
// kMinFleetSecretBytes and at most kMaxSecretFileBytes.
absl::StatusOr<std::string> ReadFleetSecretFile(const std::string& path,
                                                absl::string_view flag);

}  // namespace fleet

#endif  // VIN_FLEET_SECRET_FILE_H_
