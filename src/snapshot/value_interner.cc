// The loader's values (index_loader.h): each (element, AttributeId) pair
// once in SnapshotIndex::values, its text resolved through the element's
// lookup table (and, for models, the model's make).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "snapshot/index_loader.h"

namespace snapshot {

uint32_t IndexLoader::InternValue(uint16_t slot,
                                  absl::string_view attribute_id) {
  // Most attribute ids are small numbers: look those up by integer.
  uint64_t numeric_key = 0;
  const bool small_number =
      !attribute_id.empty() && attribute_id.size() <= 9 &&
      attribute_id[0] != '0' &&
      std::all_of(attribute_id.begin(), attribute_id.end(),
                  [](char c) { return c >= '0' && c <= '9'; });
  if (small_number) {
    uint64_t n = 0;
    for (char c : attribute_id) n = n * 10 + static_cast<uint64_t>(c - '0');
    numeric_key = (uint64_t{slot} << 32) | n;
    if (auto found = numeric_ids_.find(numeric_key);
        found != numeric_ids_.end()) {
      return found->second;
    }
  }
  if (value_ids_.size() <= slot) value_ids_.resize(ix_.elements.size());
  auto& ids = value_ids_[slot];
  if (auto found = ids.find(attribute_id); found != ids.end()) {
    return found->second;
  }
  if (small_number) {
    numeric_ids_.emplace(numeric_key, static_cast<uint32_t>(ix_.values.size()));
  }
  auto it = ids.emplace(std::string(attribute_id),
                        static_cast<uint32_t>(ix_.values.size()))
                .first;
  ValueInfo v = ResolveValue(slot, attribute_id);
  const uint32_t index = it->second;
  ix_.values.push_back(std::move(v));
  return index;
}

ValueInfo IndexLoader::ResolveValue(uint16_t slot,
                                    absl::string_view attribute_id) {
  ValueInfo v;
  v.attribute_id = std::string(attribute_id);
  v.text = v.attribute_id;
  if (const Lookup* lookup = LookupFor(lookup_table_[slot])) {
    int id = 0;
    const bool numeric = absl::SimpleAtoi(attribute_id, &id);
    auto found = numeric ? lookup->names.find(id) : lookup->names.end();
    // NHTSA's fElementAttributeValue yields NULL for a missing row.
    v.text = found == lookup->names.end() ? std::string() : found->second;
    if (ix_.elements[slot].id == element::kModel && numeric) {
      if (auto m = model_make_.find(id); m != model_make_.end()) {
        v.make = m->second;
      }
    }
  }
  return v;
}

const IndexLoader::Lookup* IndexLoader::LookupFor(const std::string& table) {
  if (table.empty()) return nullptr;
  auto [it, inserted] = lookups_.try_emplace(table);
  if (inserted) {
    if (!db_.HasTable(table)) {
      it->second = nullptr;
    } else {
      it->second = std::make_unique<Lookup>();
      Lookup* lookup = it->second.get();
      absl::Status s = db_.Query(
          absl::StrCat("SELECT Id, Name FROM ", QuoteIdentifier(table)),
          [&](sqlite3_stmt* st) {
            lookup->names[Int(st, 0)] =
                std::string(absl::StripAsciiWhitespace(Text(st, 1)));
          });
      (void)s;  // a broken lookup table resolves nothing, like missing rows
    }
  }
  return it->second.get();
}

}  // namespace snapshot
