// What a decode is of: a normalised VIN and a model-year hint, or (rule 18)
// one of vPIC's other requests. The key of one flight (rule 5), of one cache
// entry (rule 8) and of the fleet's shared state.
#ifndef VIN_DOMAIN_DECODE_KEY_H_
#define VIN_DOMAIN_DECODE_KEY_H_

#include <string>
#include <utility>

namespace domain {

struct DecodeKey {
  std::string vin;     // normalised; empty for a reference request
  int model_year = 0;  // 0 = no hint
  // Rule 18: a reference request (GetAllMakes, GetModelsForMake, ...): vPIC's
  // path below /api/vehicles/ and its query, normalised by the gateway
  // (vPIC's endpoint name, lower-case values, parameters sorted, no
  // `format`), e.g. "GetModelsForMakeYear/make/honda/modelyear/2015". Empty
  // for a VIN decode. One flight and one cache entry per distinct string.
  std::string reference;

  bool is_reference() const { return !reference.empty(); }
  // What the key names, for logs and the disk cache's key column.
  const std::string& text() const { return is_reference() ? reference : vin; }

  bool operator==(const DecodeKey& o) const {
    return model_year == o.model_year && vin == o.vin &&
           reference == o.reference;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DecodeKey& k) {
    return H::combine(std::move(h), k.vin, k.model_year, k.reference);
  }
};

}  // namespace domain

#endif  // VIN_DOMAIN_DECODE_KEY_H_
