// Generates syntactically valid VINs (correct check digit) for tests and
// benchmarks.
#ifndef VIN_TESTS_TESTING_VIN_GEN_H_
#define VIN_TESTS_TESTING_VIN_GEN_H_

#include <cstdint>
#include <string>

#include "vin/vin.h"

namespace testing_util {

// The n-th of a deterministic family of valid VINs: WMI "1HG", model-year
// code 'J', and n spelled in the serial positions. Distinct n give distinct
// VINs for n < 10^6.
inline std::string ValidVin(uint64_t n) {
  static constexpr char kChars[] = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789";
  std::string v = "1HG";
  uint64_t x = n / 1000000;
  for (int i = 0; i < 5; ++i) {  // positions 4-8
    v += kChars[x % 33];
    x /= 33;
  }
  v += '0';  // position 9, replaced below
  v += 'J';  // position 10: model year
  v += 'A';  // position 11: plant
  char serial[7];
  snprintf(serial, sizeof(serial), "%06llu",
           static_cast<unsigned long long>(n % 1000000));
  v += serial;
  v[8] = vin::ComputeCheckDigit(v);
  return v;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_VIN_GEN_H_
