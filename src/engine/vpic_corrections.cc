#include "engine/vpic_corrections.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "snapshot/vpic_codes.h"

namespace engine {
namespace {

// vPIC's notes are numbered; ours ("snapshot", "check_digit") are not.
int NumberOf(const domain::Note& n) {
  int code = 0;
  return absl::SimpleAtoi(n.code, &code) ? code : -1;
}

}  // namespace

void AddVpicCorrections(const std::string& vin17,
                        const std::vector<std::string>& suggestions,
                        domain::DecodeResult* r) {
  // Position (0-based) -> the characters suggested there.
  std::map<size_t, std::string> positions;
  for (const std::string& s : suggestions) {
    if (s.size() != vin17.size()) continue;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != vin17[i] && positions[i].find(s[i]) == std::string::npos) {
        positions[i].push_back(s[i]);
      }
    }
  }
  if (positions.empty()) return;
  auto& attrs = r->vehicle.attributes;
  int code = snapshot::code::kCorrected;
  std::string suggested = suggestions.front();
  std::string possible;
  if (suggestions.size() > 1) {
    code = positions.size() == 1 ? snapshot::code::kCorrectedSeveral
                                 : snapshot::code::kErrorsInPositions;
    suggested = vin17;
    for (const auto& [i, chars] : positions) suggested[i] = '!';
  }
  for (auto& [i, chars] : positions) {
    std::sort(chars.begin(), chars.end());
    absl::StrAppend(&possible, "(", i + 1, ":", chars, ")");
  }
  attrs["SuggestedVIN"] = suggested;
  attrs["PossibleValues"] = possible;
  const std::string help = snapshot::VpicErrorHelp(code);
  if (!help.empty()) {
    auto it = attrs.find("AdditionalErrorText");
    attrs["AdditionalErrorText"] = it == attrs.end() || it->second.empty()
                                       ? help
                                       : absl::StrCat(help, " ", it->second);
  }
  domain::Note note{absl::StrCat(code), snapshot::VpicErrorText(code)};
  auto at = std::find_if(r->notes.begin(), r->notes.end(),
                         [code](const domain::Note& n) {
                           const int c = NumberOf(n);
                           return c < 0 || c > code;
                         });
  r->notes.insert(at, std::move(note));
}

}  // namespace engine
