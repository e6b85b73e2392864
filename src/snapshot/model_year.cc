#include "snapshot/model_year.h"

namespace snapshot {
namespace {

constexpr int kCycle = 30;
constexpr int kFirstYear = 1980;

// The 2010-2039 reading of a position-10 code, or 0.
int CycleYear(char c) {
  if (c >= 'A' && c <= 'H') return 2010 + (c - 'A');
  if (c >= 'J' && c <= 'N') return 2010 + (c - 'A') - 1;
  if (c == 'P') return 2023;
  if (c >= 'R' && c <= 'T') return 2010 + (c - 'A') - 3;
  if (c >= 'V' && c <= 'Y') return 2010 + (c - 'A') - 4;
  if (c >= '1' && c <= '9') return 2031 + (c - '1');
  return 0;
}

}  // namespace

bool IsCarMpvOrLightTruck(const WmiInfo* wmi) {
  if (wmi == nullptr) return false;
  return wmi->vehicle_type_id == 2 || wmi->vehicle_type_id == 7 ||
         (wmi->vehicle_type_id == 3 && wmi->truck_type_id == 1);
}

VinYear VinModelYear(absl::string_view vin17, const WmiInfo* wmi,
                     int reference_year) {
  VinYear out;
  if (vin17.size() < 10) return out;
  int year = CycleYear(vin17[9]);
  if (year == 0) {
    out.conclusive = true;  // NULL in vPIC: no year at all
    return out;
  }
  bool conclusive = false;
  if (IsCarMpvOrLightTruck(wmi) && vin17.size() >= 7) {
    const char p7 = vin17[6];
    if (p7 >= '0' && p7 <= '9') {
      year -= kCycle;
      conclusive = true;
    } else if (p7 >= 'A' && p7 <= 'Z') {
      conclusive = true;
    }
  }
  if (year > reference_year + 2) {
    year -= kCycle;
    conclusive = true;
  }
  out.year = year;
  out.conclusive = conclusive;
  return out;
}

int LinksCovering(const SnapshotIndex& index, const WmiInfo* wmi, int year) {
  if (wmi == nullptr) return 0;
  int n = 0;
  for (uint32_t i = wmi->links_begin; i < wmi->links_end; ++i) {
    const SchemaLink& link = index.links[i];
    if (link.year_from <= year && year <= link.year_to) ++n;
  }
  return n;
}

std::vector<PlannedPass> PlanPasses(const SnapshotIndex& index,
                                    absl::string_view vin17,
                                    const WmiInfo* wmi, int hint,
                                    int reference_year) {
  const int limit = reference_year + 2;
  const VinYear vin_year = VinModelYear(vin17, wmi, reference_year);
  int rmy = vin_year.year;  // 0 = NULL
  int omy = 0;
  const bool conclusive = vin_year.conclusive;
  if (!conclusive) {
    omy = rmy - kCycle;
  } else if (rmy != 0) {
    // Switch to the other cycle when only that one has schemas.
    int alt = 0;
    if (rmy >= kFirstYear && rmy <= limit - kCycle) {
      alt = rmy + kCycle;
    } else if (rmy >= kFirstYear + kCycle && rmy <= limit) {
      alt = rmy - kCycle;
    }
    if (alt != 0 && LinksCovering(index, wmi, rmy) == 0 &&
        LinksCovering(index, wmi, alt) > 0) {
      rmy = alt;
    }
  }

  std::vector<PlannedPass> plan;
  if (hint >= kFirstYear && hint <= limit && hint != rmy &&
      !(omy != 0 && hint == omy)) {
    plan.push_back({2, hint, true, true});
  }
  plan.push_back({3, rmy, conclusive, hint != 0 && rmy != 0 && hint != rmy});
  if (omy != 0) {
    plan.push_back({4, omy, conclusive, hint != 0 && hint != omy});
  }
  return plan;
}

bool NeedsFallbackAfterHint(const std::vector<PlannedPass>& plan,
                            bool hint_pass_found_nothing) {
  if (plan.empty() || plan.front().number != 2) return true;
  // vPIC runs passes 3/4 after a hint pass only when the hint pass found no
  // pattern and position 10 gave a year.
  return hint_pass_found_nothing && plan.size() > 1 && plan[1].year != 0;
}

}  // namespace snapshot
