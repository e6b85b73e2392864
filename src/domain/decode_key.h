// What a decode is of: a normalised VIN and a model-year hint. The key of
// one flight (rule 5), of one cache entry (rule 8) and of the fleet's
// shared state.
#ifndef VIN_DOMAIN_DECODE_KEY_H_
#define VIN_DOMAIN_DECODE_KEY_H_

#include <string>
#include <utility>

namespace domain {

struct DecodeKey {
  std::string vin;     // normalised
  int model_year = 0;  // 0 = no hint

  bool operator==(const DecodeKey& o) const {
    return model_year == o.model_year && vin == o.vin;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DecodeKey& k) {
    return H::combine(std::move(h), k.vin, k.model_year);
  }
};

}  // namespace domain

#endif  // VIN_DOMAIN_DECODE_KEY_H_
