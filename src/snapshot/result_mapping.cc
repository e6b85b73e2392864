#include "snapshot/result_mapping.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "snapshot/vpic_codes.h"

namespace snapshot {
namespace {

// As vPIC prints values: tabs and line breaks become spaces; the service's
// parser then trims them.
std::string Clean(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  std::string out(text);
  for (char& c : out) {
    if (c == '\t' || c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

constexpr char kOffRoadNote[] =
    " NOTE: Disregard if this is an off-road vehicle PIN, as check digit "
    "calculation may not be accurate.";

// Where `item` came from, as rule 21 names it.
domain::FieldSource SourceOf(const SnapshotIndex& ix, const PassItem& item,
                             const std::string& variable,
                             absl::string_view vin) {
  using Source = PassItem::Source;
  domain::FieldSource out;
  out.variable = variable;
  const auto pattern = [&](const char* name) {
    out.source = name;
    out.pattern_id = item.pattern_id;
    if (item.schema != kNone && item.schema < ix.schema_ids.size()) {
      out.schema_id = ix.schema_ids[item.schema];
    }
    if (item.key != kNone && item.key < ix.key_text.size()) {
      out.key = ix.key_text[item.key];
    }
  };
  switch (item.source) {
    case Source::kPattern:
      pattern("pattern");
      break;
    case Source::kFormula:
      pattern("formula");
      break;
    case Source::kEngineModel:
      pattern("engine_model");
      out.pattern_id = item.sequence;  // the EngineModelPattern row
      break;
    case Source::kMakeFromModel:
      pattern("model");
      break;
    case Source::kConversion:
      out.source = "conversion";
      if (item.source_slot < ix.elements.size()) {
        out.key = ix.elements[item.source_slot].code;
      }
      break;
    case Source::kWmi:
      if (item.slot == ix.SlotOf(element::kModelYear)) {
        out.source = "model_year_rule";
        if (vin.size() >= 10) out.key = std::string(1, vin[9]);
      } else {
        out.source = "wmi";
        out.key = std::string(vin.substr(0, 3));
        if (vin.size() >= 14 && vin[2] == '9') {
          absl::StrAppend(&out.key, vin.substr(11, 3));
        }
      }
      break;
  }
  return out;
}

}  // namespace

MappedValues MapValues(const SnapshotIndex& ix, const PassResult& pass,
                       absl::string_view vin,
                       std::vector<domain::FieldSource>* provenance) {
  MappedValues out;
  const int make_slot = ix.SlotOf(element::kMake);
  const int model_slot = ix.SlotOf(element::kModel);
  // In variable-name order, so that each element's values are adjacent.
  std::vector<const PassItem*> items;
  items.reserve(pass.items.size());
  for (const PassItem& item : pass.items) items.push_back(&item);
  std::stable_sort(items.begin(), items.end(),
                   [&ix](const PassItem* a, const PassItem* b) {
                     return ix.elements[a->slot].code_rank <
                            ix.elements[b->slot].code_rank;
                   });
  out.by_slot.reserve(items.size());
  for (const PassItem* item : items) {
    std::string value = Clean(item->Text(ix));
    if (value.empty()) continue;
    const ElementInfo& element = ix.elements[item->slot];
    bool used = true;
    if (!out.by_slot.empty() && out.by_slot.back().first == item->slot) {
      used = false;
      if (element.multi_valued) {
        // vPIC keeps every value of these elements; list them in rank order.
        std::string& all = out.by_slot.back().second;
        if (all != value && all.find("; " + value) == std::string::npos &&
            all.rfind(value + ";", 0) != 0) {
          absl::StrAppend(&all, "; ", value);
          used = true;
        }
      }
    } else {
      out.by_slot.emplace_back(item->slot, std::move(value));
    }
    if (!used) continue;
    if (provenance != nullptr) {
      provenance->push_back(SourceOf(ix, *item, element.code, vin));
    }
    if (item->slot == make_slot && item->make != kNone) {
      out.make_id = absl::StrCat(ix.makes[item->make].id);
      if (provenance != nullptr) {
        provenance->push_back(SourceOf(ix, *item, "MakeID", vin));
      }
    }
    if (item->slot == model_slot) {
      out.model_id = Clean(item->AttributeId(ix));
      if (provenance != nullptr) {
        provenance->push_back(SourceOf(ix, *item, "ModelID", vin));
      }
    }
  }
  return out;
}

SnapshotDecode MapResult(const SnapshotIndex& ix, const PassResult& pass,
                         absl::string_view vin, bool explain) {
  SnapshotDecode out;
  MappedValues values =
      MapValues(ix, pass, vin, explain ? &out.provenance : nullptr);
  auto& attrs = out.vehicle.attributes;
  for (auto& [slot, value] : values.by_slot) {
    attrs.emplace_hint(attrs.end(), ix.elements[slot].code, std::move(value));
  }
  if (values.make_id.has_value()) attrs["MakeID"] = *std::move(values.make_id);
  if (values.model_id.has_value()) {
    attrs["ModelID"] = *std::move(values.model_id);
  }
  if (!pass.additional_error_text.empty()) {
    attrs["AdditionalErrorText"] = pass.additional_error_text;
    if (explain) {
      out.provenance.push_back({"AdditionalErrorText", "decoder", 0, 0, ""});
    }
  }
  if (explain) {
    std::stable_sort(
        out.provenance.begin(), out.provenance.end(),
        [](const domain::FieldSource& a, const domain::FieldSource& b) {
          return a.variable < b.variable;
        });
  }
  vpic::FillTypedFields(&out.vehicle);
  for (int c : pass.codes) {
    std::string text = VpicErrorText(c);
    if (c == code::kCheckDigit && pass.off_road) text += kOffRoadNote;
    out.notes.push_back({absl::StrCat(c), std::move(text)});
  }
  return out;
}

}  // namespace snapshot
