#include "disk_cache/row_key.h"

#include <zlib.h>

namespace disk_cache {

int64_t KeyId(absl::string_view key, int model_year) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  auto mix = [&h](unsigned char byte) {
    h ^= byte;
    h *= 1099511628211ull;
  };
  for (char c : key) mix(static_cast<unsigned char>(c));
  mix(0xff);  // no VIN byte is 0xff after validation: a clean separator
  const uint32_t year = static_cast<uint32_t>(model_year);
  for (int shift = 0; shift < 32; shift += 8) mix((year >> shift) & 0xff);
  // splitmix64's finaliser spreads FNV's weak low bits.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<int64_t>(h);
}

uint32_t Checksum(absl::string_view value) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed values over 4 GiB in pieces.
  while (!value.empty()) {
    const size_t n = value.size() < (1u << 30) ? value.size() : (1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(value.data()),
                static_cast<uInt>(n));
    value.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace disk_cache
