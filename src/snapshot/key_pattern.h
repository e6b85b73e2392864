// vPIC pattern keys ("*B[CF]1|*M"), compiled for matching against a VIN's
// descriptor the way NHTSA's spVinDecode_Core matches them.
//
// The descriptor is `pos4-8 + "|" + pos10-17` (14 characters). A key matches
// when it matches a prefix of the descriptor token by token (SQL
// `descriptor LIKE replace(key, '*', '_') || '%'`, or the key's regex when it
// has `[...]` classes). Tokens: a literal, `*` (any one character, `|`
// included), or a class `[...]` of literals and `X-Y` ranges.
//
// Keys with `#` are NHTSA "formula" keys: they are matched against the
// descriptor with every digit replaced by `#`, and the digits under the `#`s
// become the value (for example `**#` -> engine cylinders from position 6).
#ifndef VIN_SNAPSHOT_KEY_PATTERN_H_
#define VIN_SNAPSHOT_KEY_PATTERN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace snapshot {

// Descriptor length: positions 4-8, '|', positions 10-17.
inline constexpr int kDescriptorLength = 14;

// Codes of descriptor characters: 0-9 digits, 10-35 letters, 36 '|', 37 for
// anything else. Bit `code` of a token mask says whether the token accepts it.
int DescriptorCharCode(char c);

// The descriptor of a 17-character VIN as character codes.
struct Descriptor {
  uint8_t codes[kDescriptorLength];
  uint8_t formula_codes[kDescriptorLength];  // digits folded onto '#'
  char text[kDescriptorLength];
};
Descriptor MakeDescriptor(absl::string_view vin17);

struct CompiledKey {
  enum class Kind : uint8_t {
    kNever,    // can never match a VIN (malformed, or a formula key with `[`)
    kPattern,  // an ordinary key
    kFormula,  // a `#` key, matched against the folded descriptor
  };
  Kind kind = Kind::kNever;
  uint8_t tokens = 0;           // positions constrained, from position 4
  uint8_t non_star_length = 0;  // LENGTH(REPLACE(key, '*', '')): NHTSA rank
  uint8_t formula_begin = 0;    // kFormula: 0-based descriptor offset
  uint8_t formula_length = 0;   // kFormula: characters taken as the value
  uint32_t mask_offset = 0;     // index of the first token mask in the pool
  uint32_t order = 0;           // rank of the key among all keys (see below)
};

// Compiles `key`, appending its token masks to `mask_pool`.
CompiledKey CompileKey(absl::string_view key, std::vector<uint64_t>* mask_pool);

// Whether the compiled key's tokens from `first` on match the descriptor.
inline bool KeyMatchesFrom(int first, const CompiledKey& key,
                           const uint64_t* mask_pool, const Descriptor& d) {
  if (key.kind == CompiledKey::Kind::kNever) return false;
  const uint8_t* codes =
      key.kind == CompiledKey::Kind::kFormula ? d.formula_codes : d.codes;
  const uint64_t* masks = mask_pool + key.mask_offset;
  uint64_t ok = 1;
  for (int i = first; i < key.tokens; ++i) ok &= masks[i] >> codes[i];
  return (ok & 1) != 0;
}

// Whether the compiled key matches the descriptor.
inline bool KeyMatches(const CompiledKey& key, const uint64_t* mask_pool,
                       const Descriptor& d) {
  return KeyMatchesFrom(0, key, mask_pool, d);
}

// NHTSA's fourth tie-breaker orders keys by their text without brackets.
// vPIC's own server compares under a SQL Server collation; this comparison
// puts punctuation first (`_` `-` `*` `#` `|`), then digits, then letters,
// which is that order over the characters keys use.
bool KeyTextLess(absl::string_view a, absl::string_view b);
// The key text without `[` and `]`.
std::string StripBrackets(absl::string_view key);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_KEY_PATTERN_H_
