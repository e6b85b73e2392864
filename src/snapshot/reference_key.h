// A reference request's key as the gateway wrote it
// (domain::DecodeKey::reference: "Endpoint/arg?name=value"), read back for
// the snapshot's answers, and the answers' shared pieces. Internal to
// src/snapshot/.
#ifndef VIN_SNAPSHOT_REFERENCE_KEY_H_
#define VIN_SNAPSHOT_REFERENCE_KEY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "snapshot/reference_data.h"

namespace snapshot {
namespace reference {

struct Key {
  std::string endpoint;
  std::vector<std::string> path;  // after the endpoint, decoded
  std::vector<std::pair<std::string, std::string>> query;  // decoded
  std::string arg;     // the path argument ("" when none)
  bool is_id = false;  // the argument is a number: `id`
  int id = 0;

  // The query parameter `name`'s value, "" when absent.
  std::string Param(absl::string_view name) const;
};

Key ParseKey(absl::string_view key);

// vPIC's LIKE on names: `arg` anywhere in `name`, without case.
bool Like(absl::string_view name, absl::string_view arg);

// The answers of reference_manufacturers.cc (manufacturers and WMIs).
std::string MakesOfManufacturer(const ReferenceData& d, const Key& k);
std::string MakesOfManufacturerInYear(const ReferenceData& d, const Key& k);
std::string AllManufacturers(const ReferenceData& d, const Key& k);
std::string Wmi(const ReferenceData& d, const Key& k);
std::string WmisOf(const ReferenceData& d, const Key& k);

}  // namespace reference
}  // namespace snapshot

#endif  // VIN_SNAPSHOT_REFERENCE_KEY_H_
