// Text escapes that both the gateway and the snapshot write or read: JSON
// strings, and URL percent-encoding. Pure functions.
#ifndef VIN_UTIL_ESCAPE_H_
#define VIN_UTIL_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace util {

// `text` as a JSON string (quoted; '"', '\' and control characters
// escaped; other bytes as they are), appended to `out`.
void AppendJsonString(absl::string_view text, std::string* out);

// Percent-decoding (and '+' as a space when `plus_is_space`, for forms) into
// `out`; false on a bad escape.
bool PercentDecode(absl::string_view in, bool plus_is_space, std::string* out);

}  // namespace util

#endif  // VIN_UTIL_ESCAPE_H_
