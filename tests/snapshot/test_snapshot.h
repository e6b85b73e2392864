// Finds and loads the vPIC snapshot for the tests that need the real data.
// The path is $VIN_SNAPSHOT_PATH, else the VIN_SNAPSHOT_PATH compile
// definition (the build's .data/vpic.lite.db). Tests skip, saying why, only
// when the file is absent; a file that is present but fails to load fails.
#ifndef VIN_TESTS_SNAPSHOT_TEST_SNAPSHOT_H_
#define VIN_TESTS_SNAPSHOT_TEST_SNAPSHOT_H_

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "snapshot/snapshot.h"

#ifndef VIN_SNAPSHOT_PATH
#define VIN_SNAPSHOT_PATH ".data/vpic.lite.db"
#endif

namespace snapshot::testing {

inline std::string SnapshotPath() {
  const char* env = std::getenv("VIN_SNAPSHOT_PATH");
  return env != nullptr && *env != '\0' ? env : VIN_SNAPSHOT_PATH;
}

inline bool SnapshotPresent() {
  struct stat st;
  return stat(SnapshotPath().c_str(), &st) == 0;
}

// The snapshot, loaded once per test binary.
inline std::shared_ptr<const Snapshot> SharedSnapshot() {
  static const auto* loaded =
      new absl::StatusOr<std::shared_ptr<const Snapshot>>(
          Snapshot::Load(SnapshotPath()));
  EXPECT_TRUE(loaded->ok()) << loaded->status();
  return loaded->ok() ? **loaded : nullptr;
}

// Runs `sql` on the snapshot file, read-only, calling `row` with the
// statement at each row it gives. The tests that check an answer against
// the snapshot's own tables read them with it; a file that does not open
// or SQL that does not prepare fails the test.
inline void ForEachRow(const std::string& sql,
                       const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(SnapshotPath().c_str(), &db, SQLITE_OPEN_READONLY,
                      nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open the snapshot " << SnapshotPath();
    sqlite3_close(db);
    return;
  }
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db) << ": " << sql;
  while (st != nullptr && sqlite3_step(st) == SQLITE_ROW) row(st);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

}  // namespace snapshot::testing

// Skips the current test when the snapshot file is absent.
#define SKIP_WITHOUT_SNAPSHOT()                                              \
  do {                                                                       \
    if (!::snapshot::testing::SnapshotPresent()) {                           \
      GTEST_SKIP() << "vPIC snapshot not found at "                          \
                   << ::snapshot::testing::SnapshotPath()                    \
                   << " (run scripts/fetch_snapshot.sh, or set "             \
                      "VIN_SNAPSHOT_PATH)";                                  \
    }                                                                        \
  } while (0)

#endif  // VIN_TESTS_SNAPSHOT_TEST_SNAPSHOT_H_
