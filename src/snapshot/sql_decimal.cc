#include "snapshot/sql_decimal.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"

namespace snapshot {
namespace {

using int128 = __int128;

constexpr int kMaxScale = 30;

struct Decimal {
  int128 mantissa = 0;  // value = mantissa / 10^scale
  int precision = 1;
  int scale = 0;
};

int128 Pow10(int n) {
  int128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// Parses [+-]digits[.digits] into a decimal with SQL Server literal
// precision and scale. Returns false on anything else.
bool ParseDecimal(absl::string_view text, Decimal* out) {
  text = absl::StripAsciiWhitespace(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  int int_digits = 0, frac_digits = 0;
  bool seen_point = false, any_digit = false, leading = true;
  int128 m = 0;
  for (char c : text) {
    if (c == '.') {
      if (seen_point) return false;
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    any_digit = true;
    if (seen_point) {
      if (++frac_digits > kMaxScale) return false;
    } else if (!(leading && c == '0')) {
      leading = false;
      ++int_digits;
    }
    if (int_digits + frac_digits > 30) return false;
    m = m * 10 + (c - '0');
  }
  if (!any_digit) return false;
  out->mantissa = negative ? -m : m;
  out->scale = frac_digits;
  out->precision = std::max(1, int_digits + frac_digits);
  return true;
}

// round(n / d) half away from zero; d > 0.
int128 DivideRounded(int128 n, int128 d) {
  const bool negative = n < 0;
  if (negative) n = -n;
  int128 q = n / d;
  if ((n % d) * 2 >= d) ++q;
  return negative ? -q : q;
}

std::string Format(int128 mantissa, int scale) {
  const bool negative = mantissa < 0;
  if (negative) mantissa = -mantissa;
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(mantissa % 10)));
    mantissa /= 10;
  } while (mantissa > 0);
  while (static_cast<int>(digits.size()) <= scale) digits.push_back('0');
  std::reverse(digits.begin(), digits.end());
  if (scale > 0) digits.insert(digits.end() - scale, '.');
  return negative ? "-" + digits : digits;
}

}  // namespace

std::string ApplyDecimalFormula(absl::string_view x, char op,
                                absl::string_view constant) {
  Decimal a, b;
  if (!ParseDecimal(x, &a) || !ParseDecimal(constant, &b)) return "0";
  if (op == '*') {
    return Format(a.mantissa * b.mantissa, a.scale + b.scale);
  }
  if (op != '/' || b.mantissa == 0) return "0";
  const int scale = std::min(kMaxScale, std::max(6, a.scale + b.precision + 1));
  // a/b at `scale`: (ma / 10^sa) / (mb / 10^sb) * 10^scale.
  const int shift = scale - a.scale + b.scale;
  int128 numerator = a.mantissa;
  int128 denominator = b.mantissa;
  if (shift >= 0) {
    numerator *= Pow10(shift);
  } else {
    denominator *= Pow10(-shift);
  }
  if (denominator < 0) {
    numerator = -numerator;
    denominator = -denominator;
  }
  return Format(DivideRounded(numerator, denominator), scale);
}

}  // namespace snapshot
