#include "server/staged_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace server {

namespace {

// A new memfd named `name` holding `contents`, its modification time the
// next after `*last_mtime` (whole seconds apart: a reader compares
// seconds), which it updates.
absl::StatusOr<int> NewMemfd(const std::string& name,
                             absl::string_view contents,
                             std::time_t* last_mtime) {
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("memfd_create: ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n =
        ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(
          absl::StrCat("writing ", name, " in memory: ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  *last_mtime = std::max(std::time(nullptr), *last_mtime + 1);
  const timespec times[2] = {{*last_mtime, 0}, {*last_mtime, 0}};
  if (::futimens(fd, times) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(
        absl::StrCat("futimens on ", name, ": ", std::strerror(err)));
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StagedFile>> StagedFile::Create(
    absl::string_view name, absl::string_view contents) {
  std::time_t mtime = 0;
  auto fd = NewMemfd(std::string(name), contents, &mtime);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<StagedFile>(
      new StagedFile(std::string(name), *fd, mtime));
}

StagedFile::StagedFile(std::string name, int fd, std::time_t mtime)
    : name_(std::move(name)),
      fd_(fd),
      path_(absl::StrCat("/proc/self/fd/", fd)),
      last_mtime_(mtime) {}

StagedFile::~StagedFile() { ::close(fd_); }

absl::Status StagedFile::Replace(absl::string_view contents) {
  auto fd = NewMemfd(name_, contents, &last_mtime_);
  if (!fd.ok()) return fd.status();
  // Atomic: fd_ names the old file until it names the new one.
  const int rc = ::dup3(*fd, fd_, O_CLOEXEC);
  const int err = errno;
  ::close(*fd);
  if (rc < 0) {
    return absl::InternalError(
        absl::StrCat("dup3 over ", path_, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace server
