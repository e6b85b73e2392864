#include "snapshot/key_pattern.h"

#include <algorithm>

namespace snapshot {
namespace {

constexpr int kBarCode = 36;
constexpr int kOtherCode = 37;
constexpr uint64_t kAny = ~uint64_t{0};

uint64_t Bit(char c) { return uint64_t{1} << DescriptorCharCode(c); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsDigit(c) || (c >= 'A' && c <= 'Z'); }

// Parses the class body between '[' and ']' into a mask of the VIN
// characters it accepts. `X-Y` is a range in character order, as in a regex.
uint64_t ClassMask(absl::string_view body) {
  uint64_t mask = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (i + 2 < body.size() && body[i + 1] == '-') {
      const char hi = body[i + 2];
      for (int x = static_cast<unsigned char>(c);
           x <= static_cast<unsigned char>(hi); ++x) {
        if (IsAlnum(static_cast<char>(x))) mask |= Bit(static_cast<char>(x));
      }
      i += 2;
      continue;
    }
    // '_' and other punctuation are literals no VIN contains.
    if (IsAlnum(c)) mask |= Bit(c);
  }
  return mask;
}

int CollationWeight(char c) {
  if (IsDigit(c)) return 100 + (c - '0');
  if (c >= 'A' && c <= 'Z') return 200 + (c - 'A');
  switch (c) {
    case '_':
      return 1;
    case '-':
      return 2;
    case '*':
      return 3;
    case '#':
      return 4;
    case '|':
      return 5;
    default:
      return 10 + static_cast<unsigned char>(c) % 80;
  }
}

}  // namespace

int DescriptorCharCode(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'A' && c <= 'Z') return 10 + (c - 'A');
  if (c == '|') return kBarCode;
  return kOtherCode;
}

Descriptor MakeDescriptor(absl::string_view vin17) {
  Descriptor d;
  for (int i = 0; i < kDescriptorLength; ++i) {
    // Positions 4-8, then '|', then positions 10-17.
    // Descriptor index i holds VIN index i + 3 (index 5 is position 9).
    char c = '|';
    if (i != 5) {
      c = i + 3 < static_cast<int>(vin17.size()) ? vin17[i + 3] : '\0';
    }
    d.text[i] = c;
    d.codes[i] = static_cast<uint8_t>(DescriptorCharCode(c));
    // In the folded descriptor a digit reads as '#', which formula keys
    // compile to the digit class; any other character keeps its code, and a
    // literal digit in a formula key therefore never matches.
    d.formula_codes[i] = IsDigit(c) ? static_cast<uint8_t>(kOtherCode + 1)
                                    : d.codes[i];
  }
  return d;
}

CompiledKey CompileKey(absl::string_view key,
                       std::vector<uint64_t>* mask_pool) {
  CompiledKey out;
  out.mask_offset = static_cast<uint32_t>(mask_pool->size());
  out.non_star_length = static_cast<uint8_t>(std::min<size_t>(
      255, key.size() - std::count(key.begin(), key.end(), '*')));
  const bool formula = key.find('#') != absl::string_view::npos;
  const bool has_class = key.find('[') != absl::string_view::npos;
  if (formula && has_class) return out;  // kNever

  std::vector<uint64_t> masks;
  int first_hash = -1, last_hash = -1;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    uint64_t mask;
    if (c == '[') {
      const size_t close = key.find(']', i + 1);
      if (close == absl::string_view::npos) return out;  // kNever
      mask = ClassMask(key.substr(i + 1, close - i - 1));
      i = close;
    } else if (c == '*' || c == '_') {
      mask = kAny;  // LIKE '_' accepts any one character, '|' included
    } else if (c == '#') {
      if (first_hash < 0) first_hash = static_cast<int>(masks.size());
      last_hash = static_cast<int>(masks.size());
      mask = uint64_t{1} << (kOtherCode + 1);
    } else if (formula && IsDigit(c)) {
      mask = 0;
    } else {
      mask = Bit(c);
    }
    masks.push_back(mask);
  }
  if (masks.size() > static_cast<size_t>(kDescriptorLength)) return out;
  out.tokens = static_cast<uint8_t>(masks.size());
  out.kind = formula ? CompiledKey::Kind::kFormula : CompiledKey::Kind::kPattern;
  if (formula) {
    out.formula_begin = static_cast<uint8_t>(first_hash);
    out.formula_length = static_cast<uint8_t>(last_hash - first_hash + 1);
  }
  mask_pool->insert(mask_pool->end(), masks.begin(), masks.end());
  return out;
}

bool KeyTextLess(absl::string_view a, absl::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const int wa = CollationWeight(a[i]);
    const int wb = CollationWeight(b[i]);
    if (wa != wb) return wa < wb;
  }
  return a.size() < b.size();
}

std::string StripBrackets(absl::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c != '[' && c != ']') out.push_back(c);
  }
  return out;
}

}  // namespace snapshot
