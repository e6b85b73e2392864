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

}  // namespace

SnapshotDecode MapResult(const SnapshotIndex& ix, const PassResult& pass) {
  SnapshotDecode out;
  auto& attrs = out.vehicle.attributes;
  const int make_slot = ix.SlotOf(element::kMake);
  const int model_slot = ix.SlotOf(element::kModel);
  // Insert in variable-name order, so every insertion is at the end.
  std::vector<const PassItem*> items;
  items.reserve(pass.items.size());
  for (const PassItem& item : pass.items) items.push_back(&item);
  std::stable_sort(items.begin(), items.end(),
                   [&ix](const PassItem* a, const PassItem* b) {
                     return ix.elements[a->slot].code_rank <
                            ix.elements[b->slot].code_rank;
                   });
  for (const PassItem* item : items) {
    std::string value = Clean(item->Text(ix));
    if (value.empty()) continue;
    const ElementInfo& element = ix.elements[item->slot];
    if (!attrs.empty() && attrs.rbegin()->first == element.code) {
      if (element.multi_valued) {
        // vPIC keeps every value of these elements; list them in rank order.
        std::string& all = attrs.rbegin()->second;
        if (all != value && all.find("; " + value) == std::string::npos &&
            all.rfind(value + ";", 0) != 0) {
          absl::StrAppend(&all, "; ", value);
        }
      }
    } else {
      attrs.emplace_hint(attrs.end(), element.code, std::move(value));
    }
    if (item->slot == make_slot && item->make != kNone) {
      attrs["MakeID"] = absl::StrCat(ix.makes[item->make].id);
    }
    if (item->slot == model_slot) {
      attrs["ModelID"] = Clean(item->AttributeId(ix));
    }
  }
  if (!pass.additional_error_text.empty()) {
    attrs["AdditionalErrorText"] = pass.additional_error_text;
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
