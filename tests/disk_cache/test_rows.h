// Rows for the disk cache's tests and its crash helper: row i has a VIN, a
// value and a decode time that depend on i alone, so that a reader can tell
// a whole row from anything else.
#ifndef VIN_TESTS_DISK_CACHE_TEST_ROWS_H_
#define VIN_TESTS_DISK_CACHE_TEST_ROWS_H_

#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "disk_cache/row.h"

namespace disk_cache_test {

// 17 characters, as the engine's keys are.
inline std::string TestVin(int i) { return absl::StrFormat("TESTVIN%010d", i); }

// The index of a TestVin, or -1.
inline int IndexOf(const std::string& vin) {
  int i;
  if (vin.size() != 17 || vin.compare(0, 7, "TESTVIN") != 0 ||
      !absl::SimpleAtoi(vin.substr(7), &i)) {
    return -1;
  }
  return i;
}

// 500 to 3000 bytes, spanning pages, different for every i.
inline std::string TestValue(int i) {
  std::string v = absl::StrCat("value of row ", i, ":");
  const size_t size = 500 + (static_cast<size_t>(i) * 37) % 2500;
  for (size_t k = 0; v.size() < size; ++k) {
    v.push_back(static_cast<char>((i * 31 + k * 7) & 0xff));
  }
  return v;
}

inline disk_cache::Row TestRow(int i, absl::Time base, int model_year = 0) {
  return disk_cache::Row{TestVin(i), model_year, TestValue(i),
                         base + absl::Milliseconds(i)};
}

}  // namespace disk_cache_test

#endif  // VIN_TESTS_DISK_CACHE_TEST_ROWS_H_
