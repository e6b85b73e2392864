#include "util/private_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace util {
namespace {

constexpr mode_t kPrivateDir = 0700;
constexpr mode_t kPrivateFile = 0600;

absl::Status Errno(const std::string& what, int err) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, ": ", std::strerror(err)));
}

std::string Mode(mode_t mode) { return absl::StrFormat("%04o", mode & 07777); }

// Creates `dir` and its missing parents, each with mode 0700 (chmod after
// mkdir: the umask only takes bits away, and may take the owner's).
absl::Status MakeDirectories(const std::string& dir) {
  const size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string parent = dir.substr(0, slash);
    struct stat st;
    if (stat(parent.c_str(), &st) != 0) {
      if (errno != ENOENT) {
        return Errno(absl::StrCat("cannot stat ", parent), errno);
      }
      if (absl::Status s = MakeDirectories(parent); !s.ok()) return s;
    }
  }
  if (mkdir(dir.c_str(), kPrivateDir) != 0 && errno != EEXIST) {
    return Errno(absl::StrCat("cannot create directory ", dir), errno);
  }
  if (chmod(dir.c_str(), kPrivateDir) != 0) {
    return Errno(absl::StrCat("cannot chmod 0700 new directory ", dir), errno);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EnsurePrivateDirectory(const std::string& dir, const Warn& warn) {
  const std::string path = dir.empty() ? "." : dir;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return Errno(absl::StrCat("cannot stat ", path), errno);
    }
    return MakeDirectories(path);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a directory"));
  }
  constexpr char kWhy[] = ": the file holds what callers asked";
  if (st.st_uid != geteuid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("directory ", path, " belongs to uid ", st.st_uid,
                     ", not to this user (uid ", geteuid(), ")", kWhy,
                     "; use a directory of this user's own"));
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("directory ", path, " is writable by every user (mode ",
                     Mode(st.st_mode), ")", kWhy,
                     "; use a directory of this user's own (or chmod o-w it)"));
  }
  if ((st.st_mode & S_IWGRP) != 0 && warn) {
    warn(absl::StrCat("directory ", path, " is writable by its group (mode ",
                      Mode(st.st_mode), ", gid ", st.st_gid,
                      "): its members could replace files in it; chmod g-w "
                      "it unless the group is this user alone"));
  }
  return absl::OkStatus();
}

absl::Status RestrictToOwner(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return Errno(absl::StrCat("cannot stat ", path), errno);
  }
  if (!S_ISREG(st.st_mode) || (st.st_mode & 0777 & ~kPrivateFile) == 0) {
    return absl::OkStatus();
  }
  if (chmod(path.c_str(), kPrivateFile) != 0) {
    return Errno(absl::StrCat("cannot make ", path,
                              " private (chmod 0600; it "
                              "has mode ",
                              Mode(st.st_mode), ")"),
                 errno);
  }
  return absl::OkStatus();
}

absl::Status CreatePrivateFile(const std::string& path) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
           kPrivateFile);
  if (fd < 0) {
    if (errno == EEXIST) return absl::OkStatus();
    return Errno(absl::StrCat("cannot create ", path), errno);
  }
  // The umask may have taken the owner's bits too (umask 0277).
  const int rc = fchmod(fd, kPrivateFile);
  const int err = errno;
  close(fd);
  if (rc != 0) return Errno(absl::StrCat("cannot chmod 0600 ", path), err);
  return absl::OkStatus();
}

}  // namespace util
