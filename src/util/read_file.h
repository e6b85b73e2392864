// Reading a whole small file (certificates, keys, passwords, secrets) as
// untrusted input: a regular file of bounded size, with an error that names
// the file and what it was for.
#ifndef VIN_UTIL_READ_FILE_H_
#define VIN_UTIL_READ_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace util {

// Larger than any certificate chain or CA bundle a server is given (a
// system bundle of every public CA is about 200 KiB).
inline constexpr size_t kMaxSmallFileBytes = 1 << 20;

// The file's bytes. NOT_FOUND / PERMISSION_DENIED when it cannot be opened;
// INVALID_ARGUMENT when it is not a regular file (a FIFO, a device: never
// waited on, the open does not block), is larger than `max_bytes` (checked
// while reading: it may grow meanwhile) or is empty. Errors name `path` and
// `what` ("the TLS certificate (--tls_cert_file)").
absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          const std::string& what,
                                          size_t max_bytes = kMaxSmallFileBytes);

}  // namespace util

#endif  // VIN_UTIL_READ_FILE_H_
