#include "fleet/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fleet {
namespace {

// The file's bytes, refused beyond kMaxSecretFileBytes (checked on the
// open file, and again while reading: it may grow meanwhile).
absl::StatusOr<std::string> ReadBounded(const std::string& path,
                                        absl::string_view flag) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string why =
        absl::StrCat("cannot read ", flag, " ", path, ": ", std::strerror(err));
    return err == EACCES ? absl::PermissionDeniedError(why)
                         : absl::NotFoundError(why);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, " is not a regular file"));
  }
  std::string out;
  char buf[1024];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::UnavailableError(absl::StrCat(
          "cannot read ", flag, " ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxSecretFileBytes) {
      close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " ", path, " is larger than ", kMaxSecretFileBytes,
                       " bytes: not a secret of ours"));
    }
  }
  close(fd);
  return out;
}

// The file's bytes without one trailing "\n" or "\r\n".
absl::StatusOr<std::string> ReadTrimmed(const std::string& path,
                                        absl::string_view flag) {
  auto text = ReadBounded(path, flag);
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
