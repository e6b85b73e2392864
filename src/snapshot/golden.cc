#include "snapshot/golden.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "snapshot/parity.h"

namespace snapshot {

absl::StatusOr<std::vector<GoldenVin>> ParseGolden(absl::string_view text) {
  std::vector<GoldenVin> out;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> f = absl::StrSplit(line, ',');
    GoldenVin g;
    if (f.size() != 4 || absl::StripAsciiWhitespace(f[0]).size() != 17 ||
        !absl::SimpleAtoi(f[3], &g.model_year) || g.model_year < 1980 ||
        g.model_year > 2100) {
      return absl::InvalidArgumentError(absl::StrCat(
          "golden set line ", number,
          ": want VIN,Make,Model,ModelYear (17 characters, a year), got \"",
          line, "\""));
    }
    g.vin = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(f[0]));
    g.make = std::string(absl::StripAsciiWhitespace(f[1]));
    g.model = std::string(absl::StripAsciiWhitespace(f[2]));
    out.push_back(std::move(g));
  }
  return out;
}

GoldenScore ScoreGolden(const Snapshot& snap, const std::vector<GoldenVin>& set,
                        int reference_year) {
  GoldenScore score;
  for (const GoldenVin& g : set) {
    ++score.checked;
    absl::StatusOr<SnapshotDecode> d = snap.Decode(g.vin, 0, reference_year);
    const domain::Vehicle* v = d.ok() ? &d->vehicle : nullptr;
    if (v != nullptr && SameValue(v->make, g.make) &&
        SameValue(v->model, g.model) && v->model_year == g.model_year) {
      ++score.agreed;
    } else if (score.first_miss.empty()) {
      score.first_miss = absl::StrCat(
          g.vin, ": want ", g.make, " ", g.model, " ", g.model_year, ", got ",
          v == nullptr
              ? std::string(d.status().message())
              : absl::StrCat(v->make, " ", v->model, " ", v->model_year));
    }
  }
  return score;
}

}  // namespace snapshot
