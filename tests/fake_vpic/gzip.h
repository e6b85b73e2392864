// Content negotiation of the fake vPIC: gzip-compressed answers for
// requests that accept them. Internal to the fake.
#ifndef FAKE_VPIC_GZIP_H_
#define FAKE_VPIC_GZIP_H_

#include <string>

#include "absl/strings/string_view.h"

namespace fakevpic {

// Whether an Accept-Encoding value accepts gzip: "gzip" or "x-gzip" with a
// q above 0, or "*" (with q above 0) when gzip is not named.
bool AcceptsGzip(absl::string_view accept_encoding);

// `data` as one gzip member (RFC 1952), compressed with zlib.
std::string Gzip(absl::string_view data);

// Compresses the body of `answer` (a whole HTTP answer the fake wrote) when
// it is a 200 with a body and no Content-Encoding yet: the body becomes its
// gzip, Content-Length follows, and Content-Encoding: gzip and
// Vary: Accept-Encoding are added. Returns whether it did.
bool GzipAnswer(std::string* answer);

}  // namespace fakevpic

#endif  // FAKE_VPIC_GZIP_H_
