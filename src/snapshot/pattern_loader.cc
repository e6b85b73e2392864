// The loader's patterns (index_loader.h): the Pattern rows a decode can use,
// grouped by schema in Pattern.Id order, their keys compiled and ranked by
// NHTSA's text tie-breaker; and the snapshot's data date.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "snapshot/index_loader.h"
#include "snapshot/key_pattern.h"

namespace snapshot {
namespace {

// Elements NHTSA never takes from patterns (they come from the WMI, the
// model or the input): Make, Manufacturer, Model Year, Vehicle Type.
bool IsWmiElement(int id) {
  return id == element::kMake || id == element::kManufacturer ||
         id == element::kModelYear || id == element::kVehicleType;
}

}  // namespace

absl::Status IndexLoader::LoadPatterns() {
  std::vector<PatternRow> rows;
  RETURN_IF_ERROR(ReadPatternRows(&rows));
  GroupPatternsBySchema(std::move(rows));
  RankKeysByText();
  return absl::OkStatus();
}

absl::Status IndexLoader::ReadPatternRows(std::vector<PatternRow>* rows) {
  rows->reserve(800000);
  int64_t newest_nhtsa = 0;
  RETURN_IF_ERROR(db_.Query(
      "SELECT Id, VinSchemaId, Keys, ElementId, AttributeId, CreatedOn, "
      "UpdatedOn FROM Pattern",
      [&](sqlite3_stmt* s) { AddPatternRow(s, rows, &newest_nhtsa); }));
  NoteDataDate(newest_nhtsa);
  return absl::OkStatus();
}

void IndexLoader::AddPatternRow(sqlite3_stmt* s, std::vector<PatternRow>* rows,
                                int64_t* newest_nhtsa) {
  ++ix_.pattern_rows_read;
  const absl::string_view created = Text(s, 5);
  const absl::string_view updated = Text(s, 6);
  const int64_t created_time = ParseVpicTime(created);
  const int64_t updated_time = ParseVpicTime(updated);
  // Community rows (ISO "T...Z" stamps) are not NHTSA data.
  if (created.find('T') == absl::string_view::npos) {
    *newest_nhtsa = std::max(*newest_nhtsa, created_time);
  }
  if (updated.find('T') == absl::string_view::npos) {
    *newest_nhtsa = std::max(*newest_nhtsa, updated_time);
  }
  const int element_id = Int(s, 3);
  const int slot = ix_.SlotOf(element_id);
  if (slot < 0 || IsWmiElement(element_id) || !decodable_[slot]) return;
  auto schema = schema_index_.find(Int(s, 1));
  if (schema == schema_index_.end()) return;
  absl::string_view key = Text(s, 2);
  std::string upper;
  if (std::any_of(key.begin(), key.end(), absl::ascii_islower)) {
    upper = absl::AsciiStrToUpper(key);
    key = upper;
  }
  const uint32_t key_id = InternKey(key);
  if (ix_.keys[key_id].kind == CompiledKey::Kind::kNever) return;
  PatternRow row;
  row.schema = schema->second;
  row.key = key_id;
  row.slot = static_cast<uint16_t>(slot);
  row.value = InternValue(row.slot, Text(s, 4));
  row.id = static_cast<uint32_t>(Int(s, 0));
  row.changed = updated.empty() ? created_time : updated_time;
  rows->push_back(row);
}

// "YYYY-MM-DD" of the newest NHTSA change, when there is one.
void IndexLoader::NoteDataDate(int64_t newest_nhtsa) {
  if (newest_nhtsa <= 0) return;
  const std::string digits = absl::StrCat(newest_nhtsa);
  ix_.data_date = absl::StrCat(digits.substr(0, 4), "-", digits.substr(4, 2),
                               "-", digits.substr(6, 2));
}

void IndexLoader::GroupPatternsBySchema(std::vector<PatternRow> rows) {
  // Group by schema, Pattern.Id order within a schema: rows arrive in Id
  // (rowid) order, so a counting sort by schema keeps that order.
  const auto by_id = [](const PatternRow& a, const PatternRow& b) {
    return a.id < b.id;
  };
  if (!std::is_sorted(rows.begin(), rows.end(), by_id)) {
    std::sort(rows.begin(), rows.end(), by_id);
  }
  const size_t schemas = schema_index_.size();
  ix_.schema_patterns_begin.assign(schemas + 1, 0);
  for (const PatternRow& r : rows) ++ix_.schema_patterns_begin[r.schema + 1];
  for (size_t i = 0; i < schemas; ++i) {
    ix_.schema_patterns_begin[i + 1] += ix_.schema_patterns_begin[i];
  }
  const size_t n = rows.size();
  ix_.pattern_scan.resize(n);
  ix_.pattern_value.resize(n);
  ix_.pattern_changed.resize(n);
  ix_.pattern_id.resize(n);
  std::vector<uint32_t> next(ix_.schema_patterns_begin.begin(),
                             ix_.schema_patterns_begin.end() - 1);
  for (const PatternRow& r : rows) {
    const uint32_t i = next[r.schema]++;
    const CompiledKey& key = ix_.keys[r.key];
    SnapshotIndex::PatternScan& scan = ix_.pattern_scan[i];
    scan.mask0 = key.tokens > 0 ? ix_.key_masks[key.mask_offset] : ~uint64_t{0};
    scan.mask1 =
        key.tokens > 1 ? ix_.key_masks[key.mask_offset + 1] : ~uint64_t{0};
    scan.key = r.key;
    scan.slot = r.slot;
    scan.formula = key.kind == CompiledKey::Kind::kFormula ? 1 : 0;
    ix_.pattern_value[i] = r.value;
    ix_.pattern_changed[i] = r.changed;
    ix_.pattern_id[i] = r.id;
  }
}

// Rank keys by NHTSA's text tie-breaker; equal texts share a rank.
void IndexLoader::RankKeysByText() {
  std::vector<uint32_t> order(ix_.keys.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return KeyTextLess(key_texts_[a], key_texts_[b]);
  });
  uint32_t rank = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && KeyTextLess(key_texts_[order[i - 1]], key_texts_[order[i]])) {
      ++rank;
    }
    ix_.keys[order[i]].order = rank;
  }
}

uint32_t IndexLoader::InternKey(absl::string_view key) {
  if (auto it = key_ids_.find(key); it != key_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(ix_.keys.size());
  key_ids_.emplace(std::string(key), id);
  ix_.keys.push_back(CompileKey(key, &ix_.key_masks));
  ix_.key_text.emplace_back(key);
  key_texts_.push_back(StripBrackets(key));
  return id;
}

}  // namespace snapshot
