// Files the service writes hold what its callers asked (the cache file:
// every VIN decoded, with when): they are for this user alone, whatever
// the umask. Used by the disk cache (src/disk_cache/store_file.cc); the
// durable jobs store is to use the same.
//
// Each function names the path and what is wrong in a FAILED_PRECONDITION
// (INTERNAL for a system call that fails otherwise).
#ifndef VIN_UTIL_PRIVATE_FILES_H_
#define VIN_UTIL_PRIVATE_FILES_H_

#include <functional>
#include <string>

#include "absl/status/status.h"

namespace util {

// Makes `dir` a directory other users cannot change: a missing one is
// created with mode 0700 (missing parents too, each 0700). An existing one
// is refused when it is not owned by this user (effective uid) or when
// every user may write to it (mode o+w: /tmp and other sticky shared
// directories, where another user could plant the file's -wal or -shm).
// One its group may write to is only warned about through `warn` (may be
// empty): with Debian's user private groups and umask 002 a directory is
// group-writable and the group is the user alone. "" is the current
// directory.
using Warn = std::function<void(const std::string&)>;
absl::Status EnsurePrivateDirectory(const std::string& dir, const Warn& warn);

// Gives `path` mode 0600 when it exists with more (a file of an older
// version, created 0644); a missing one is left alone. Fails when it is
// not this user's to change.
absl::Status RestrictToOwner(const std::string& path);

// Creates `path` empty with mode 0600 whatever the umask (O_CREAT|O_EXCL,
// then fchmod); an existing file is left alone. SQLite gives a database's
// -wal, -shm and -journal the mode of the database file, so they are 0600
// too.
absl::Status CreatePrivateFile(const std::string& path);

}  // namespace util

#endif  // VIN_UTIL_PRIVATE_FILES_H_
