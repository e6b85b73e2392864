// Files the service writes hold what its callers asked (the cache file:
// every VIN decoded, with when): they are for this user alone, whatever
// the umask. Used by the disk cache (src/disk_cache/store_file.cc); the
// durable jobs store is to use the same.
//
// Each function names the path and what is wrong in a FAILED_PRECONDITION
// (INTERNAL for a system call that fails otherwise).
#ifndef VIN_UTIL_PRIVATE_FILES_H_
#define VIN_UTIL_PRIVATE_FILES_H_

#include <string>

#include "absl/status/status.h"

namespace util {

// Makes `dir` a directory only this user can change: a missing one is
// created with mode 0700 (missing parents too, each 0700); an existing one
// must be owned by this user (effective uid) and writable by no one else
// (mode & 022 == 0, which refuses /tmp and other sticky shared
// directories: another user could plant the file's -wal or -shm there).
// "" is the current directory.
absl::Status EnsurePrivateDirectory(const std::string& dir);

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
