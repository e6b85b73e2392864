// Text from outside (a header, a tenant, a path) made safe to put in a
// metric label, a log line or a header (DESIGN rule 19): valid UTF-8,
// without control characters, bounded and cut on a character boundary.
// Pure functions, safe from any thread.
#ifndef VIN_UTIL_UTF8_H_
#define VIN_UTIL_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace util {

// The length of the valid UTF-8 character starting at `s[i]` (1 to 4), or
// 0 when the bytes there are not one (a stray continuation byte, an
// overlong form, a surrogate, a code point past U+10FFFF, a cut sequence).
size_t Utf8CharLength(absl::string_view s, size_t i);

// Whether all of `s` is valid UTF-8.
bool IsValidUtf8(absl::string_view s);

// `s` with each byte that starts no valid character replaced by U+FFFD,
// each control character (U+0000-U+001F, U+007F-U+009F) by
// `control_replacement`, and cut to at most `max_bytes` bytes without
// splitting a character. Valid UTF-8 without controls and short enough
// comes back as it is.
std::string SafeText(absl::string_view s, size_t max_bytes,
                     absl::string_view control_replacement = "\xEF\xBF\xBD");

}  // namespace util

#endif  // VIN_UTIL_UTF8_H_
