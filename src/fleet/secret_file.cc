#include "fleet/secret_file.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "util/read_file.h"

namespace fleet {
namespace {

// The file's bytes without one trailing "\n" or "\r\n".
absl::StatusOr<std::string> ReadTrimmed(const std::string& path,
                                        absl::string_view flag) {
  // Bounded before it is read, a regular file only (util/read_file.h).
  auto text = util::ReadSmallFile(path, std::string(flag), kMaxSecretFileBytes);
  if (!text.ok()) return text.status();
  std::string s = *std::move(text);
  if (absl::EndsWith(s, "\r\n")) {
    s.resize(s.size() - 2);
  } else if (absl::EndsWith(s, "\n")) {
    s.pop_back();
  }
  return s;
}

}  // namespace

absl::StatusOr<std::string> ReadPasswordFile(const std::string& path,
                                             absl::string_view flag) {
  auto read = ReadTrimmed(path, flag);
  if (!read.ok()) return read.status();
  std::string password = *std::move(read);
  if (password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, " holds no password"));
  }
  if (password.find_first_of(std::string("\r\n\0", 3)) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " ", path,
        " holds more than one line (or a NUL byte): the password is the "
        "file's one line"));
  }
  return password;
}

absl::StatusOr<std::string> ReadFleetSecretFile(const std::string& path,
                                                absl::string_view flag) {
  auto read = ReadTrimmed(path, flag);
  if (!read.ok()) return read.status();
  std::string secret = *std::move(read);
  if (secret.size() < kMinFleetSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, " holds ", secret.size(),
                     " bytes; a fleet secret "
                     "needs at least ",
                     kMinFleetSecretBytes,
                     " (e.g. head -c 32 /dev/urandom | base64 > FILE)"));
  }
  return secret;
}

}  // namespace fleet
