// A directory of its own for one test, under the system's temporary
// directory, removed with everything in it when the TempDir goes (also when
// an assertion ends the test early).
#ifndef VIN_TESTS_TESTING_TEMP_DIR_H_
#define VIN_TESTS_TESTING_TEMP_DIR_H_

#include <filesystem>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace testing_util {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "vin-test") {
    std::random_device seed;
    std::mt19937_64 rng(seed());
    const auto root = std::filesystem::temp_directory_path();
    for (;;) {  // a fresh name: create_directory is false when it exists
      path_ = root / absl::StrCat(prefix, "-", rng() % 1000000000);
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // `name` inside the directory.
  std::string File(const std::string& name) const {
    return (path_ / name).string();
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_TEMP_DIR_H_
