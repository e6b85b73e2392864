#include "util/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace util {

absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string why =
        absl::StrCat("cannot read ", what, " from ", path, ": ", std::strerror(err));
    return err == EACCES ? absl::PermissionDeniedError(why)
                         : absl::NotFoundError(why);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " file ", path, " is empty"));
  }
  return text.str();
}

}  // namespace util
