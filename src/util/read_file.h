// Reading a whole small file (certificates, keys) with an error that names
// the file and what it was for.
#ifndef VIN_UTIL_READ_FILE_H_
#define VIN_UTIL_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace util {

// The file's bytes. NOT_FOUND / PERMISSION_DENIED / INVALID_ARGUMENT (empty
// file) name `path` and `what` ("the TLS certificate (--tls_cert_file)").
absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          const std::string& what);

}  // namespace util

#endif  // VIN_UTIL_READ_FILE_H_
