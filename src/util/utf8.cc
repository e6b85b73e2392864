#include "util/utf8.h"

#include <algorithm>

namespace util {
namespace {

constexpr absl::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool InRange(unsigned char c, unsigned char lo, unsigned char hi) {
  return c >= lo && c <= hi;
}

}  // namespace

size_t Utf8CharLength(absl::string_view s, size_t i) {
  if (i >= s.size()) return 0;
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  auto at = [&](size_t k) -> int {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : -1;
  };
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    const int b = at(k);
    return b >= 0 && InRange(static_cast<unsigned char>(b), lo, hi);
  };
  if (InRange(b0, 0xC2, 0xDF)) return cont(1) ? 2 : 0;
  if (b0 == 0xE0) return cont(1, 0xA0, 0xBF) && cont(2) ? 3 : 0;
  if (b0 == 0xED)
    return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (InRange(b0, 0xE1, 0xEF)) return cont(1) && cont(2) ? 3 : 0;
  if (b0 == 0xF0) return cont(1, 0x90, 0xBF) && cont(2) && cont(3) ? 4 : 0;
  if (InRange(b0, 0xF1, 0xF3)) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

bool IsValidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8CharLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string SafeText(absl::string_view s, size_t max_bytes,
                     absl::string_view control_replacement) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8CharLength(s, i);
    absl::string_view piece = s.substr(i, std::max<size_t>(n, 1));
    if (n == 0) {
      piece = kReplacement;
    } else if (n == 1 &&
               (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7F)) {
      piece = control_replacement;
    } else if (n == 2 && static_cast<unsigned char>(s[i]) == 0xC2 &&
               static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      piece = control_replacement;  // C1 controls, U+0080-U+009F
    }
    if (out.size() + piece.size() > max_bytes) break;
    out.append(piece.data(), piece.size());
    i += std::max<size_t>(n, 1);
  }
  return out;
}

}  // namespace util
