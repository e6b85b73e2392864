// LoadSnapshotIndex(): one read of the SQLite snapshot into SnapshotIndex.
// The loader's steps over the Element, Make/Model, EngineModel and
// Conversion tables; WMIs and patterns have files of their own
// (index_loader.h lists them).
#include "snapshot/index_loader.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {
namespace {

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

}  // namespace

absl::Status IndexLoader::Run(const std::string& path) {
  RETURN_IF_ERROR(db_.Open(path, limit_));
  RETURN_IF_ERROR(CheckTables(path));
  // Each step's queries stop at the limit; the work between them is
  // bounded by the rows read, and checked here.
  for (absl::Status (IndexLoader::*step)() :
       {&IndexLoader::LoadElements, &IndexLoader::LoadMakesAndModels,
        &IndexLoader::LoadWmis, &IndexLoader::LoadPatterns,
        &IndexLoader::LoadEngineModels, &IndexLoader::LoadConversions,
        &IndexLoader::LoadReference}) {
    RETURN_IF_ERROR((this->*step)());
    RETURN_IF_ERROR(limit_.Check());
  }
  return absl::OkStatus();
}

absl::Status IndexLoader::CheckTables(const std::string& path) {
  absl::StatusOr<std::vector<SchemaObject>> schema = db_.ReadSchema();
  if (!schema.ok()) {
    return absl::Status(schema.status().code(),
                        absl::StrCat("cannot read the schema of ", path, ": ",
                                     schema.status().message()));
  }
  absl::Status s = CheckSchema(*schema, kRequiredTables);
  if (!s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat(path, " is not a vPIC snapshot: ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status IndexLoader::LoadElements() {
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
  RankElementCodes();
  return absl::OkStatus();
}

void IndexLoader::RankElementCodes() {
  std::vector<size_t> order(ix_.elements.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ix_.elements[a].code < ix_.elements[b].code;
  });
  for (size_t i = 0; i < order.size(); ++i) {
    ix_.elements[order[i]].code_rank = static_cast<int>(i);
  }
}

absl::Status IndexLoader::LoadMakesAndModels() {
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

absl::Status IndexLoader::LoadEngineModels() {
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

absl::Status IndexLoader::LoadReference() {
  return LoadReferenceData(db_, &ix_.reference);
}

absl::Status IndexLoader::LoadConversions() {
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
    const std::string& path, const LoadLimit& limit) {
  auto index = std::make_unique<SnapshotIndex>();
  IndexLoader loader(index.get(), limit);
  absl::Status s = loader.Run(path);
  if (!s.ok()) return s;
  if (index->wmis.empty() || index->pattern_id.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " holds no WMI or no pattern rows"));
  }
  return std::unique_ptr<const SnapshotIndex>(std::move(index));
}

}  // namespace snapshot
