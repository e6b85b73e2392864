#include "snapshot/reference_key.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "util/escape.h"

namespace snapshot {
namespace reference {
namespace {

// The gateway wrote it (vpic_endpoints.cc): a value that does not decode
// cannot come from there, and is read as written.
std::string Decoded(absl::string_view in) {
  std::string out;
  return util::PercentDecode(in, false, &out) ? out : std::string(in);
}

}  // namespace

std::string Key::Param(absl::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return v;
  }
  return "";
}

Key ParseKey(absl::string_view key) {
  Key k;
  const size_t q = key.find('?');
  std::vector<absl::string_view> parts =
      absl::StrSplit(key.substr(0, q), '/', absl::SkipEmpty());
  if (!parts.empty()) k.endpoint = std::string(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) k.path.push_back(Decoded(parts[i]));
  if (q != absl::string_view::npos) {
    for (absl::string_view pair :
         absl::StrSplit(key.substr(q + 1), '&', absl::SkipEmpty())) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(pair, absl::MaxSplits('=', 1));
      k.query.emplace_back(std::string(kv.first), Decoded(kv.second));
    }
  }
  if (!k.path.empty()) k.arg = k.path[0];
  k.is_id = absl::SimpleAtoi(k.arg, &k.id);
  return k;
}

bool Like(absl::string_view name, absl::string_view arg) {
  return absl::StrContains(absl::AsciiStrToLower(name),
                           absl::AsciiStrToLower(arg));
}

}  // namespace reference
}  // namespace snapshot
