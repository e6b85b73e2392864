#include "util/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace util {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          const std::string& what,
                                          size_t max_bytes) {
  const auto not_regular = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " file ", path, " is not a regular file"));
  };
  // Its type is checked before it is opened (opening a device may do
  // something), and again on what was opened (it may have been swapped
  // meanwhile); O_NONBLOCK: opening a FIFO for reading would wait for a
  // writer.
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return not_regular();
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    const std::string why = absl::StrCat("cannot read ", what, " from ", path,
                                         ": ", std::strerror(err));
    return err == EACCES ? absl::PermissionDeniedError(why)
                         : absl::NotFoundError(why);
  }
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return not_regular();
  const auto too_large = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " file ", path, " is larger than ", max_bytes, " bytes"));
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_large();
  std::string out;
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::UnavailableError(absl::StrCat(
          "cannot read ", what, " from ", path, ": ", std::strerror(errno)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) return too_large();
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " file ", path, " is empty"));
  }
  return out;
}

}  // namespace util
