#include "fake_vpic/gzip.h"

#include <zlib.h>

#include <cstdlib>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fakevpic {
namespace {

// The q of one Accept-Encoding item ("gzip;q=0.5"); 1 when it gives none,
// 0 when it is unreadable.
double QualityOf(absl::string_view params) {
  for (absl::string_view p : absl::StrSplit(params, ';')) {
    p = absl::StripAsciiWhitespace(p);
    if (!absl::StartsWithIgnoreCase(p, "q=")) continue;
    double q = 0;
    return absl::SimpleAtod(p.substr(2), &q) ? q : 0;
  }
  return 1;
}

}  // namespace

bool AcceptsGzip(absl::string_view accept_encoding) {
  std::optional<double> gzip, star;
  for (absl::string_view item : absl::StrSplit(accept_encoding, ',')) {
    const size_t semi = item.find(';');
    const absl::string_view name =
        absl::StripAsciiWhitespace(item.substr(0, semi));
    const double q =
        semi == absl::string_view::npos ? 1 : QualityOf(item.substr(semi + 1));
    if (absl::EqualsIgnoreCase(name, "gzip") ||
        absl::EqualsIgnoreCase(name, "x-gzip")) {
      gzip = q;
    } else if (name == "*") {
      star = q;
    }
  }
  if (gzip) return *gzip > 0;
  return star && *star > 0;
}

std::string Gzip(absl::string_view data) {
  z_stream z{};
  // 15 window bits, +16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    std::abort();  // only out of memory; a test fake may stop there
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  // deflateBound's room takes the whole stream in one call.
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

bool GzipAnswer(std::string* answer) {
  const size_t head_end = answer->find("\r\n\r\n");
  if (head_end == std::string::npos ||
      !absl::StartsWith(*answer, "HTTP/1.1 200 ")) {
    return false;
  }
  std::string head = answer->substr(0, head_end + 2);  // ends in one CRLF
  const std::string body = answer->substr(head_end + 4);
  // The fake spells its own headers in this case.
  if (body.empty() || absl::StrContains(head, "\r\nContent-Encoding:")) {
    return false;
  }
  const std::string kLength = "\r\nContent-Length: ";
  const size_t at = head.find(kLength);
  if (at == std::string::npos) return false;
  const size_t value = at + kLength.size();
  const size_t line_end = head.find("\r\n", value);
  const std::string gz = Gzip(body);
  head.replace(value, line_end - value, absl::StrCat(gz.size()));
  *answer = absl::StrCat(head, "Content-Encoding: gzip\r\n",
                         "Vary: Accept-Encoding\r\n\r\n", gz);
  return true;
}

}  // namespace fakevpic
