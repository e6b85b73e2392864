#include "snapshot/decode_pass.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "snapshot/key_pattern.h"
#include "snapshot/pass_codes.h"
#include "snapshot/pass_items.h"

namespace snapshot {
namespace {

using Source = PassItem::Source;

constexpr int kFormulaPriority = 100;
constexpr int kEngineModelPriority = 50;

// A candidate before ranking: compact, copied often.
struct Candidate {
  int priority = 0;
  int64_t changed = 0;
  uint32_t key = kNone;
  uint32_t key_order = 0;
  uint32_t pattern_id = 0;
  uint32_t sequence = 0;
  uint32_t value = kNone;
  uint32_t schema = kNone;  // index into SnapshotIndex::schema_ids
  uint16_t slot = 0;
  uint8_t non_star = 0;
  Source source = Source::kPattern;
  bool valid = false;
};

// NHTSA's rank: YearFrom desc, change time desc, fewer non-'*' key
// characters, key text without brackets, then insertion order.
bool RanksBefore(const Candidate& a, const Candidate& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.changed != b.changed) return a.changed > b.changed;
  if (a.non_star != b.non_star) return a.non_star < b.non_star;
  if (a.key_order != b.key_order) return a.key_order < b.key_order;
  if (a.pattern_id != b.pattern_id) return a.pattern_id < b.pattern_id;
  return a.sequence < b.sequence;
}

// The order in which vPIC picks the Engine Model whose EngineModelPattern
// rows it adds: priority desc, change time desc, latest row first.
bool EngineModelBefore(const Candidate& a, const Candidate& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.changed != b.changed) return a.changed > b.changed;
  return a.pattern_id > b.pattern_id;
}

class Pass {
 public:
  Pass(const SnapshotIndex& ix, absl::string_view vin, const WmiInfo* wmi,
       const WmiInfo* raw_wmi, const PlannedPass& plan)
      : ix_(ix), vin_(vin), wmi_(wmi), raw_wmi_(raw_wmi) {
    result_.pass = plan;
    result_.items.reserve(48);
  }

  PassResult Run() {
    int vehicle_type_id = 0;
    if (wmi_ != nullptr) {
      MatchPatterns();
      AddEngineModelRows();
      CollectWinners();
      vehicle_type_id = AddWmiItems(ix_, *wmi_, &result_);
      AddMake(ix_, *wmi_, &result_);
      ApplyConversions(ix_, &result_);
    }
    ComputeCodes(ix_, vin_, wmi_, raw_wmi_, vehicle_type_id, &result_);
    ComputeScores(ix_, &result_);
    return std::move(result_);
  }

 private:
  void Consider(const Candidate& c) {
    if (ix_.elements[c.slot].multi_valued) {
      multi_.push_back(c);
      return;
    }
    int32_t& index = best_of_slot_[c.slot];
    if (index < 0) {
      index = static_cast<int32_t>(best_.size());
      best_.push_back(c);
    } else if (RanksBefore(c, best_[index])) {
      best_[index] = c;
    }
  }

  // The WMI's schemas for the pass's year, with their YearFrom; a schema
  // linked twice counts with its latest YearFrom (the better of its
  // duplicate rows in vPIC).
  std::vector<std::pair<uint32_t, int>> SchemasOfYear() const {
    const int year = result_.pass.year;
    std::vector<std::pair<uint32_t, int>> schemas;
    for (uint32_t i = wmi_->links_begin; i < wmi_->links_end; ++i) {
      const SchemaLink& link = ix_.links[i];
      if (year != 0 && (year < link.year_from || year > link.year_to)) continue;
      auto it = std::find_if(schemas.begin(), schemas.end(),
                             [&](const auto& s) { return s.first == link.schema; });
      if (it == schemas.end()) {
        schemas.emplace_back(link.schema, link.year_from);
      } else {
        it->second = std::max<int>(it->second, link.year_from);
      }
    }
    return schemas;
  }

  void MatchPatterns() {
    best_of_slot_.assign(ix_.elements.size(), -1);
    const Descriptor d = MakeDescriptor(vin_);
    const std::vector<std::pair<uint32_t, int>> schemas = SchemasOfYear();
    const int engine_slot = ix_.SlotOf(element::kEngineModel);
    const uint64_t* masks = ix_.key_masks.data();
    for (const auto& [schema, priority] : schemas) {
      const uint32_t end = ix_.schema_patterns_begin[schema + 1];
      for (uint32_t i = ix_.schema_patterns_begin[schema]; i < end; ++i) {
        const SnapshotIndex::PatternScan& scan = ix_.pattern_scan[i];
        const uint8_t* codes = scan.formula ? d.formula_codes : d.codes;
        if ((((scan.mask0 >> codes[0]) & (scan.mask1 >> codes[1])) & 1) == 0) {
          continue;
        }
        const CompiledKey& key = ix_.keys[scan.key];
        if (key.tokens > 2 && !KeyMatchesFrom(2, key, masks, d)) continue;
        Candidate c;
        c.valid = true;
        c.key = scan.key;
        c.key_order = key.order;
        c.non_star = key.non_star_length;
        c.pattern_id = ix_.pattern_id[i];
        c.schema = schema;
        c.value = ix_.pattern_value[i];
        c.slot = scan.slot;
        c.changed = ix_.pattern_changed[i];
        if (key.kind == CompiledKey::Kind::kFormula) {
          c.priority = kFormulaPriority;
          c.source = Source::kFormula;
        } else {
          c.priority = priority;
          c.source = Source::kPattern;
          if (c.slot == engine_slot &&
              (!engine_.valid || EngineModelBefore(c, engine_))) {
            engine_ = c;
          }
        }
        Consider(c);
      }
    }
  }

  void AddEngineModelRows() {
    if (!engine_.valid) return;
    const std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(
        ix_.values[engine_.value].attribute_id));
    auto it = ix_.engine_models.find(name);
    if (it == ix_.engine_models.end()) return;
    for (const EngineModelRow& row : it->second) {
      Candidate c = engine_;
      c.priority = kEngineModelPriority;
      c.changed = row.changed;
      c.sequence = row.id;
      c.value = row.value;
      c.slot = row.slot;
      c.source = Source::kEngineModel;
      Consider(c);
    }
  }

  PassItem ItemFrom(const Candidate& c) const {
    PassItem item;
    item.slot = c.slot;
    item.source = c.source;
    item.value = c.value;
    item.priority = c.priority;
    item.changed = c.changed;
    item.key = c.key;
    item.pattern_id = c.pattern_id;
    item.sequence = c.sequence;
    item.schema = c.schema;
    item.has_pattern = true;
    if (c.source == Source::kFormula) {
      const CompiledKey& key = ix_.keys[c.key];
      const Descriptor d = MakeDescriptor(vin_);
      item.own_text = true;
      item.text.assign(d.text + key.formula_begin, key.formula_length);
    }
    return item;
  }

  void CollectWinners() {
    // In slot order, as the index lists elements.
    for (int32_t index : best_of_slot_) {
      if (index >= 0) result_.items.push_back(ItemFrom(best_[index]));
    }
    std::sort(multi_.begin(), multi_.end(), RanksBefore);
    for (const Candidate& c : multi_) result_.items.push_back(ItemFrom(c));
  }

  const SnapshotIndex& ix_;
  absl::string_view vin_;
  const WmiInfo* wmi_;
  const WmiInfo* raw_wmi_;
  PassResult result_;
  std::vector<int32_t> best_of_slot_;  // element slot -> index into best_
  std::vector<Candidate> best_;
  std::vector<Candidate> multi_;
  Candidate engine_;
};

}  // namespace

PassResult RunPass(const SnapshotIndex& index, absl::string_view vin17,
                   const WmiInfo* wmi, const WmiInfo* raw_wmi,
                   const PlannedPass& pass) {
  return Pass(index, vin17, wmi, raw_wmi, pass).Run();
}

}  // namespace snapshot
