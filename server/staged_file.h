// A file in memory with a path (an anonymous memfd read through
// /proc/self/fd/N), for a library that reads its input from a path on its
// own schedule: gRPC's FileWatcherCertificateProvider (server/tls.h).
// Replace swaps in new contents atomically (a new memfd dup2'ed over the
// same descriptor: an open of the path sees the old file or the new one,
// never half of one) and gives every version a modification time of its
// own, in whole seconds, so that a reader that compares the time before and
// after reading (as gRPC's does) notices a swap between two reads. The
// contents never touch a disk (a private key stays out of /tmp).
//
// Thread contract: Replace from one thread at a time; the path may be read
// from any thread, any time while the object lives.
#ifndef VIN_SERVER_STAGED_FILE_H_
#define VIN_SERVER_STAGED_FILE_H_

#include <ctime>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace server {

class StagedFile {
 public:
  // A file holding `contents`; `name` shows in /proc/self/fd.
  static absl::StatusOr<std::unique_ptr<StagedFile>> Create(
      absl::string_view name, absl::string_view contents);
  ~StagedFile();

  const std::string& path() const { return path_; }
  absl::Status Replace(absl::string_view contents);

 private:
  StagedFile(std::string name, int fd, std::time_t mtime);

  const std::string name_;
  const int fd_;
  const std::string path_;
  std::time_t last_mtime_;  // of the version in place
};

}  // namespace server

#endif  // VIN_SERVER_STAGED_FILE_H_
