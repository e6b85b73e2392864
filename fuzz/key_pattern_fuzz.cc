// The snapshot's key patterns on any bytes: the first line is a vPIC key
// pattern, the rest a VIN; compiling and matching never crash or read past
// the mask pool, and the text order of keys is a strict order.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "snapshot/key_pattern.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nl = input.find('\n');
  const std::string key = input.substr(0, nl);
  std::string vin = nl == std::string::npos ? std::string() : input.substr(nl + 1);
  vin.resize(17, '0');
  std::vector<uint64_t> pool;
  const snapshot::CompiledKey compiled = snapshot::CompileKey(key, &pool);
  if (compiled.kind != snapshot::CompiledKey::Kind::kNever &&
      compiled.mask_offset + compiled.tokens > pool.size()) {
    __builtin_trap();
  }
  const snapshot::Descriptor d = snapshot::MakeDescriptor(vin);
  if (!pool.empty() || compiled.kind == snapshot::CompiledKey::Kind::kNever) {
    (void)snapshot::KeyMatches(compiled, pool.data(), d);
  }
  const std::string stripped = snapshot::StripBrackets(key);
  if (snapshot::KeyTextLess(key, stripped) && snapshot::KeyTextLess(stripped, key)) {
    __builtin_trap();
  }
  if (snapshot::KeyTextLess(key, key)) __builtin_trap();
  return 0;
}
