// LoadSnapshotIndex(): one read of the SQLite snapshot into SnapshotIndex.
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {
namespace {

// Elements NHTSA never takes from patterns (they come from the WMI, the
// model or the input): Make, Manufacturer, Model Year, Vehicle Type.
bool IsWmiElement(int id) {
  return id == element::kMake || id == element::kManufacturer ||
         id == element::kModelYear || id == element::kVehicleType;
}

// NHTSA keeps every value of these elements instead of one winner.
bool IsMultiValued(int id) {
  switch (id) {
    case 114: case 121: case 129: case 150:
    case 154: case 155: case 169: case 186:
      return true;
    default:
      return false;
  }
}

class Db {
 public:
  ~Db() {
    if (db_ != nullptr) sqlite3_close(db_);
  }
  absl::Status Open(const std::string& path) {
    const int rc = sqlite3_open_v2(
        path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot open snapshot ", path, ": ", sqlite3_errstr(rc)));
    }
    return absl::OkStatus();
  }
  bool HasTable(absl::string_view name) {
    bool found = false;
    absl::Status s = Query(
        absl::StrCat("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                     "name='",
                     name, "'"),
        [&](sqlite3_stmt*) { found = true; });
    return s.ok() && found;
  }
  // Runs `sql` and calls `row` for every result row.
  template <typename F>
  absl::Status Query(const std::string& sql, F&& row) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) !=
        SQLITE_OK) {
      return absl::FailedPreconditionError(
          absl::StrCat("snapshot query failed (", sqlite3_errmsg(db_),
                       "): ", sql));
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
      return absl::InternalError(
          absl::StrCat("reading the snapshot failed: ", sqlite3_errstr(rc)));
    }
    return absl::OkStatus();
  }

 private:
  sqlite3* db_ = nullptr;
};

absl::string_view Text(sqlite3_stmt* s, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
  if (p == nullptr) return absl::string_view();
  return absl::string_view(p, sqlite3_column_bytes(s, col));
}
bool IsNull(sqlite3_stmt* s, int col) {
  return sqlite3_column_type(s, col) == SQLITE_NULL;
}
int Int(sqlite3_stmt* s, int col) { return sqlite3_column_int(s, col); }

#define RETURN_IF_ERROR(expr)          \
  do {                                 \
    absl::Status _status = (expr);     \
    if (!_status.ok()) return _status; \
  } while (0)

class Loader {
 public:
  explicit Loader(SnapshotIndex* index) : ix_(*index) {}

  absl::Status Run(const std::string& path) {
    RETURN_IF_ERROR(db_.Open(path));
    for (const char* table : {"Element", "Wmi", "Wmi_VinSchema", "Pattern",
                              "Make", "Model", "Make_Model", "VinSchema"}) {
      if (!db_.HasTable(table)) {
        return absl::FailedPreconditionError(absl::StrCat(
            path, " is not a vPIC snapshot: it has no ", table, " table"));
      }
    }
    RETURN_IF_ERROR(LoadElements());
    RETURN_IF_ERROR(LoadMakesAndModels());
    RETURN_IF_ERROR(LoadWmis());
    RETURN_IF_ERROR(LoadPatterns());
    RETURN_IF_ERROR(LoadEngineModels());
    RETURN_IF_ERROR(LoadConversions());
    return absl::OkStatus();
  }

 private:
  absl::Status LoadElements() {
    RETURN_IF_ERROR(db_.Query(
        "SELECT Id, Code, weight, LookupTable, Decode IS NOT NULL, "
        "coalesce(IsPrivate, 0) FROM Element ORDER BY Id",
        [&](sqlite3_stmt* s) {
          ElementInfo e;
          e.id = Int(s, 0);
          e.code = std::string(Text(s, 1));
          e.weight = IsNull(s, 2) ? -1 : Int(s, 2);
          e.multi_valued = IsMultiValued(e.id);
          const uint16_t slot = static_cast<uint16_t>(ix_.elements.size());
          ix_.slot_of_element[e.id] = slot;
          ix_.elements.push_back(std::move(e));
          lookup_table_.push_back(std::string(Text(s, 3)));
          decodable_.push_back(Int(s, 4) != 0 && Int(s, 5) == 0);
        }));
    if (ix_.elements.empty() || ix_.elements.size() > 0xFFFF) {
      return absl::FailedPreconditionError("snapshot has no usable Element rows");
    }
    std::vector<size_t> order(ix_.elements.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return ix_.elements[a].code < ix_.elements[b].code;
    });
    for (size_t i = 0; i < order.size(); ++i) {
      ix_.elements[order[i]].code_rank = static_cast<int>(i);
    }
    return absl::OkStatus();
  }

  absl::Status LoadMakesAndModels() {
    RETURN_IF_ERROR(db_.Query("SELECT Id, Name FROM Make", [&](sqlite3_stmt* s) {
      make_index_[Int(s, 0)] = static_cast<uint32_t>(ix_.makes.size());
      ix_.makes.push_back(
          {Int(s, 0), absl::AsciiStrToUpper(absl::StripAsciiWhitespace(Text(s, 1)))});
    }));
    return db_.Query("SELECT ModelId, MakeId FROM Make_Model ORDER BY Id",
                     [&](sqlite3_stmt* s) {
                       auto it = make_index_.find(Int(s, 1));
                       if (it != make_index_.end()) {
                         model_make_.emplace(Int(s, 0), it->second);
                       }
                     });
  }

  absl::Status LoadWmis() {
    absl::flat_hash_map<int, std::string> manufacturers, vehicle_types;
    RETURN_IF_ERROR(db_.Query("SELECT Id, Name FROM Manufacturer",
                              [&](sqlite3_stmt* s) {
                                manufacturers[Int(s, 0)] = absl::AsciiStrToUpper(
                                    absl::StripAsciiWhitespace(Text(s, 1)));
                              }));
    RETURN_IF_ERROR(db_.Query("SELECT Id, Name FROM VehicleType",
                              [&](sqlite3_stmt* s) {
                                vehicle_types[Int(s, 0)] = absl::AsciiStrToUpper(
                                    absl::StripAsciiWhitespace(Text(s, 1)));
                              }));
    absl::flat_hash_map<int, std::vector<uint32_t>> makes_of_wmi;
    RETURN_IF_ERROR(db_.Query("SELECT WmiId, MakeId FROM Wmi_Make",
                              [&](sqlite3_stmt* s) {
                                auto it = make_index_.find(Int(s, 1));
                                if (it != make_index_.end()) {
                                  makes_of_wmi[Int(s, 0)].push_back(it->second);
                                }
                              }));
    // Schemas NHTSA would hide (TobeQCed) get no index entry.
    RETURN_IF_ERROR(db_.Query(
        "SELECT Id FROM VinSchema WHERE coalesce(TobeQCed, 0) = 0 ORDER BY Id",
        [&](sqlite3_stmt* s) {
          schema_index_[Int(s, 0)] = static_cast<uint32_t>(schema_index_.size());
        }));
    absl::flat_hash_map<int, std::vector<SchemaLink>> links_of_wmi;
    RETURN_IF_ERROR(db_.Query(
        "SELECT WmiId, VinSchemaId, YearFrom, YearTo FROM Wmi_VinSchema "
        "ORDER BY Id",
        [&](sqlite3_stmt* s) {
          auto it = schema_index_.find(Int(s, 1));
          if (it == schema_index_.end()) return;
          SchemaLink link;
          link.schema = it->second;
          link.year_from = static_cast<int16_t>(Int(s, 2));
          link.year_to =
              static_cast<int16_t>(IsNull(s, 3) ? kOpenYear : Int(s, 3));
          links_of_wmi[Int(s, 0)].push_back(link);
        }));
    return db_.Query(
        "SELECT Id, Wmi, ManufacturerId, VehicleTypeId, TruckTypeId, "
        "PublicAvailabilityDate FROM Wmi ORDER BY Id",
        [&](sqlite3_stmt* s) {
          const int id = Int(s, 0);
          WmiInfo w;
          w.manufacturer_id = IsNull(s, 2) ? 0 : Int(s, 2);
          if (auto it = manufacturers.find(w.manufacturer_id);
              it != manufacturers.end()) {
            w.manufacturer = it->second;
          }
          w.vehicle_type_id = IsNull(s, 3) ? 0 : Int(s, 3);
          if (auto it = vehicle_types.find(w.vehicle_type_id);
              it != vehicle_types.end()) {
            w.vehicle_type = it->second;
          }
          w.truck_type_id = IsNull(s, 4) ? 0 : Int(s, 4);
          if (auto it = makes_of_wmi.find(id);
              it != makes_of_wmi.end() && it->second.size() == 1) {
            w.only_make = it->second.front();
          }
          const int64_t published = ParseVpicTime(Text(s, 5));
          w.public_year = published == 0
                              ? kNeverPublic
                              : static_cast<int>(published / 10000000000000);
          w.links_begin = static_cast<uint32_t>(ix_.links.size());
          if (auto it = links_of_wmi.find(id); it != links_of_wmi.end()) {
            ix_.links.insert(ix_.links.end(), it->second.begin(),
                             it->second.end());
          }
          w.links_end = static_cast<uint32_t>(ix_.links.size());
          const std::string code = absl::AsciiStrToUpper(Text(s, 1));
          if (code.size() != 3 && code.size() != 6) return;
          ix_.wmi_by_code[PackWmi(code)] = static_cast<uint32_t>(ix_.wmis.size());
          ix_.wmis.push_back(std::move(w));
        });
  }

  // The index of the value (element slot, AttributeId), interned.
  uint32_t InternValue(uint16_t slot, absl::string_view attribute_id) {
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
    const uint32_t index = it->second;
    ix_.values.push_back(std::move(v));
    return index;
  }

  struct Lookup {
    absl::flat_hash_map<int, std::string> names;
  };

  // The lookup table `table` (Id -> Name), or nullptr when the element has no
  // lookup table or the snapshot lacks it (the value is then the raw id).
  const Lookup* LookupFor(const std::string& table) {
    if (table.empty()) return nullptr;
    auto [it, inserted] = lookups_.try_emplace(table);
    if (inserted) {
      if (!db_.HasTable(table)) {
        it->second = nullptr;
      } else {
        it->second = std::make_unique<Lookup>();
        Lookup* lookup = it->second.get();
        absl::Status s = db_.Query(
            absl::StrCat("SELECT Id, Name FROM \"", table, "\""),
            [&](sqlite3_stmt* st) {
              lookup->names[Int(st, 0)] =
                  std::string(absl::StripAsciiWhitespace(Text(st, 1)));
            });
        (void)s;  // a broken lookup table resolves nothing, like missing rows
      }
    }
    return it->second.get();
  }

  uint32_t InternKey(absl::string_view key) {
    if (auto it = key_ids_.find(key); it != key_ids_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(ix_.keys.size());
    key_ids_.emplace(std::string(key), id);
    ix_.keys.push_back(CompileKey(key, &ix_.key_masks));
    key_texts_.push_back(StripBrackets(key));
    return id;
  }

  absl::Status LoadPatterns() {
    struct Row {
      uint32_t schema, key, value, id;
      uint16_t slot;
      int64_t changed;
    };
    std::vector<Row> rows;
    rows.reserve(800000);
    int64_t newest_nhtsa = 0;
    RETURN_IF_ERROR(db_.Query(
        "SELECT Id, VinSchemaId, Keys, ElementId, AttributeId, CreatedOn, "
        "UpdatedOn FROM Pattern",
        [&](sqlite3_stmt* s) {
          ++ix_.pattern_rows_read;
          const absl::string_view created = Text(s, 5);
          const absl::string_view updated = Text(s, 6);
          const int64_t created_time = ParseVpicTime(created);
          const int64_t updated_time = ParseVpicTime(updated);
          // Community rows (ISO "T...Z" stamps) are not NHTSA data.
          if (created.find('T') == absl::string_view::npos) {
            newest_nhtsa = std::max(newest_nhtsa, created_time);
          }
          if (updated.find('T') == absl::string_view::npos) {
            newest_nhtsa = std::max(newest_nhtsa, updated_time);
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
          Row row;
          row.schema = schema->second;
          row.key = key_id;
          row.slot = static_cast<uint16_t>(slot);
          row.value = InternValue(row.slot, Text(s, 4));
          row.id = static_cast<uint32_t>(Int(s, 0));
          row.changed = updated.empty() ? created_time : updated_time;
          rows.push_back(row);
        }));
    if (newest_nhtsa > 0) {
      const std::string digits = absl::StrCat(newest_nhtsa);
      ix_.data_date = absl::StrCat(digits.substr(0, 4), "-", digits.substr(4, 2),
                                   "-", digits.substr(6, 2));
    }
    // Group by schema, Pattern.Id order within a schema: rows arrive in Id
    // (rowid) order, so a counting sort by schema keeps that order.
    const bool id_ordered = std::is_sorted(
        rows.begin(), rows.end(),
        [](const Row& a, const Row& b) { return a.id < b.id; });
    if (!id_ordered) {
      std::sort(rows.begin(), rows.end(),
                [](const Row& a, const Row& b) { return a.id < b.id; });
    }
    const size_t schemas = schema_index_.size();
    ix_.schema_patterns_begin.assign(schemas + 1, 0);
    for (const Row& r : rows) ++ix_.schema_patterns_begin[r.schema + 1];
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
    for (const Row& r : rows) {
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
    // Rank keys by NHTSA's text tie-breaker; equal texts share a rank.
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
    return absl::OkStatus();
  }

  absl::Status LoadEngineModels() {
    if (!db_.HasTable("EngineModel") || !db_.HasTable("EngineModelPattern")) {
      return absl::OkStatus();
    }
    return db_.Query(
        "SELECT em.Name, p.ElementId, p.AttributeId, "
        "coalesce(p.UpdatedOn, p.CreatedOn), p.Id FROM EngineModel em "
        "JOIN EngineModelPattern p ON p.EngineModelId = em.Id "
        "JOIN Element e ON e.Id = p.ElementId ORDER BY p.Id",
        [&](sqlite3_stmt* s) {
          const int slot = ix_.SlotOf(Int(s, 1));
          if (slot < 0) return;
          EngineModelRow row;
          row.slot = static_cast<uint16_t>(slot);
          row.value = InternValue(row.slot, Text(s, 2));
          row.changed = ParseVpicTime(Text(s, 3));
          row.id = static_cast<uint32_t>(Int(s, 4));
          ix_.engine_models[absl::AsciiStrToLower(
                                absl::StripAsciiWhitespace(Text(s, 0)))]
              .push_back(row);
        });
  }

  absl::Status LoadConversions() {
    if (!db_.HasTable("Conversion")) return absl::OkStatus();
    return db_.Query(
        "SELECT Id, FromElementId, ToElementId, Formula FROM Conversion "
        "ORDER BY Id",
        [&](sqlite3_stmt* s) {
          // Only the "#x# <op> <number>" shape is understood.
          absl::string_view f = absl::StripAsciiWhitespace(Text(s, 3));
          if (!absl::ConsumePrefix(&f, "#x#")) return;
          f = absl::StripLeadingAsciiWhitespace(f);
          if (f.empty() || (f[0] != '*' && f[0] != '/')) return;
          ConversionRule rule;
          rule.op = f[0];
          rule.constant =
              std::string(absl::StripAsciiWhitespace(f.substr(1)));
          const int from = ix_.SlotOf(Int(s, 1));
          const int to = ix_.SlotOf(Int(s, 2));
          if (from < 0 || to < 0 || rule.constant.empty()) return;
          rule.id = Int(s, 0);
          rule.from_slot = static_cast<uint16_t>(from);
          rule.to_slot = static_cast<uint16_t>(to);
          ix_.conversions.push_back(std::move(rule));
        });
  }

  SnapshotIndex& ix_;
  Db db_;
  std::vector<std::string> lookup_table_;  // by slot
  std::vector<bool> decodable_;            // by slot
  absl::flat_hash_map<int, uint32_t> make_index_;
  absl::flat_hash_map<int, uint32_t> model_make_;
  absl::flat_hash_map<int, uint32_t> schema_index_;
  // By element slot: AttributeId -> index into values.
  std::vector<absl::flat_hash_map<std::string, uint32_t>> value_ids_;
  absl::flat_hash_map<uint64_t, uint32_t> numeric_ids_;  // (slot, number)
  absl::flat_hash_map<std::string, std::unique_ptr<Lookup>> lookups_;
  absl::flat_hash_map<std::string, uint32_t> key_ids_;
  std::vector<std::string> key_texts_;
};

}  // namespace

uint64_t PackWmi(absl::string_view wmi) {
  uint64_t packed = 0;
  for (char c : wmi) packed = (packed << 8) | static_cast<unsigned char>(c);
  return packed;
}

int64_t ParseVpicTime(absl::string_view text) {
  int64_t value = 0;
  int digits = 0;
  for (char c : text) {
    if (c < '0' || c > '9') continue;
    value = value * 10 + (c - '0');
    if (++digits == 17) break;
  }
  if (digits < 8) return 0;
  for (; digits < 17; ++digits) value *= 10;
  return value;
}

absl::StatusOr<std::unique_ptr<const SnapshotIndex>> LoadSnapshotIndex(
    const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("snapshot file ", path,
                                            " not found (run "
                                            "scripts/fetch_snapshot.sh)"));
  }
  std::fclose(f);
  auto index = std::make_unique<SnapshotIndex>();
  Loader loader(index.get());
  absl::Status s = loader.Run(path);
  if (!s.ok()) return s;
  if (index->wmis.empty() || index->pattern_id.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " holds no WMI or no pattern rows"));
  }
  return std::unique_ptr<const SnapshotIndex>(std::move(index));
}

}  // namespace snapshot
