#include "snapshot/pass_items.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "snapshot/sql_decimal.h"

namespace snapshot {
namespace {

using Source = PassItem::Source;

constexpr int kWmiPriority = 100;
constexpr int kModelMakePriority = 1000;

// Adds a WMI-level item whose value is `text`, or `*ref` (index-owned).
void AddText(const SnapshotIndex& ix, int element_id, std::string text,
             bool has_pattern, PassResult* result, uint32_t make = kNone,
             const std::string* ref = nullptr) {
  const int slot = ix.SlotOf(element_id);
  if (slot < 0) return;
  PassItem item;
  item.slot = static_cast<uint16_t>(slot);
  item.source = Source::kWmi;
  item.own_text = true;
  item.text = std::move(text);
  item.ref = ref;
  item.priority = kWmiPriority;
  item.has_pattern = has_pattern;
  item.make = make;
  result->items.push_back(std::move(item));
}

}  // namespace

int AddWmiItems(const SnapshotIndex& ix, const WmiInfo& wmi,
                PassResult* result) {
  int vehicle_type_id = 0;
  if (!wmi.vehicle_type.empty()) {
    AddText(ix, element::kVehicleType, "", false, result, kNone,
            &wmi.vehicle_type);
    vehicle_type_id = wmi.vehicle_type_id;
  }
  AddText(ix, element::kManufacturer, "", false, result, kNone,
          &wmi.manufacturer);
  AddText(ix, element::kManufacturerId,
          wmi.manufacturer_id == 0 ? std::string()
                                   : absl::StrCat(wmi.manufacturer_id),
          false, result);
  if (result->pass.year != 0) {
    AddText(ix, element::kModelYear, absl::StrCat(result->pass.year), false,
            result);
  }
  return vehicle_type_id;
}

void AddMake(const SnapshotIndex& ix, const WmiInfo& wmi, PassResult* result) {
  const PassItem* model = result->Find(ix.SlotOf(element::kModel));
  if (model != nullptr) {
    const uint32_t make = ix.values[model->value].make;
    if (make != kNone) {
      // `model` may move.
      const uint32_t pattern_id = model->pattern_id;
      const uint32_t schema = model->schema;
      const uint32_t key = model->key;
      AddText(ix, element::kMake, "", true, result, make, &ix.makes[make].name);
      PassItem& item = result->items.back();
      item.source = Source::kMakeFromModel;
      item.priority = kModelMakePriority;
      item.pattern_id = pattern_id;
      item.schema = schema;
      item.key = key;
    }
  } else if (wmi.only_make != kNone) {
    AddText(ix, element::kMake, "", false, result, wmi.only_make,
            &ix.makes[wmi.only_make].name);
  }
}

void ApplyConversions(const SnapshotIndex& ix, PassResult* result) {
  struct Step {
    size_t item;
    const ConversionRule* rule;
  };
  std::vector<Step> steps;
  for (size_t i = 0; i < result->items.size(); ++i) {
    for (const ConversionRule& rule : ix.conversions) {
      if (rule.from_slot == result->items[i].slot) steps.push_back({i, &rule});
    }
  }
  if (steps.empty()) return;
  std::stable_sort(steps.begin(), steps.end(), [&](const Step& a, const Step& b) {
    const PassItem& x = result->items[a.item];
    const PassItem& y = result->items[b.item];
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.changed != y.changed) return x.changed > y.changed;
    return a.rule->id < b.rule->id;
  });
  for (const Step& step : steps) {
    if (result->Find(step.rule->to_slot) != nullptr) continue;
    const PassItem& from = result->items[step.item];
    PassItem item;
    item.slot = step.rule->to_slot;
    item.source = Source::kConversion;
    item.own_text = true;
    item.text = ApplyDecimalFormula(from.AttributeId(ix), step.rule->op,
                                    step.rule->constant);
    item.priority = kWmiPriority;
    item.pattern_id = from.pattern_id;
    item.source_slot = from.slot;
    item.has_pattern = from.has_pattern;
    result->items.push_back(std::move(item));  // `from` is not used after
  }
}

}  // namespace snapshot
