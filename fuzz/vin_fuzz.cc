// VIN normalisation and validation on any bytes: no crash, and what passes
// is a 17-character VIN whose check digit (when enforced) is right.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vin/vin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string normal = vin::Normalize(input);
  if (vin::Normalize(normal) != normal) std::abort();  // idempotent
  auto strict = vin::Validate(input, vin::CheckDigitPolicy::kEnforce);
  auto lenient = vin::Validate(input, vin::CheckDigitPolicy::kWarn);
  if (strict.ok()) {
    if (strict->vin.size() != 17) std::abort();
    if (vin::ComputeCheckDigit(strict->vin) != strict->vin[8]) std::abort();
    if (!lenient.ok() || lenient->vin != strict->vin) std::abort();
  } else if (strict.status().message().empty()) {
    std::abort();  // a refusal always names the rule broken
  }
  return 0;
}
