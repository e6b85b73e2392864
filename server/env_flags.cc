#include "server/env_flags.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace server {

std::vector<std::string> FlagsFromEnvironment(
    const char* const* environment,
    const std::function<bool(absl::string_view)>& is_flag) {
  std::vector<std::string> flags;
  if (environment == nullptr) return flags;
  for (const char* const* e = environment; *e != nullptr; ++e) {
    absl::string_view entry(*e);
    if (!absl::StartsWith(entry, kEnvPrefix)) continue;
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) continue;
    const std::string name = absl::AsciiStrToLower(
        entry.substr(sizeof(kEnvPrefix) - 1, eq - (sizeof(kEnvPrefix) - 1)));
    if (name.empty() || !is_flag(name)) continue;
    flags.push_back(absl::StrCat("--", name, "=", entry.substr(eq + 1)));
  }
  return flags;
}

}  // namespace server
