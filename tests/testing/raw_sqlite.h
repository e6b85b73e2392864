// SQL on a SQLite file from a test, on a connection of its own, to build or
// spoil the files the code under test reads.
#ifndef VIN_TESTS_TESTING_RAW_SQLITE_H_
#define VIN_TESTS_TESTING_RAW_SQLITE_H_

#include <sqlite3.h>

#include <string>

namespace testing_util {

// Runs `sql` (any number of statements) on `path`, creating the file when
// missing; "" or SQLite's error.
inline std::string RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_busy_timeout(db, 5000);
  char* error = nullptr;
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  std::string out = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  return out;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_RAW_SQLITE_H_
