#include "snapshot/parity.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace snapshot {
namespace {

// Walks a vehicle's attributes (sorted by name) alongside the sorted list
// of variables: each lookup only moves forward, so a decode's comparison
// costs one pass over each map instead of a search per variable (perf:
// the searches' string compares were a third of parity's cost).
class SortedWalk {
 public:
  explicit SortedWalk(const domain::Vehicle& v)
      : it_(v.attributes.begin()), end_(v.attributes.end()) {}
  // The value of `name`, not empty, or nullptr; names asked in ascending
  // order.
  const std::string* Find(const std::string& name) {
    while (it_ != end_ && it_->first < name) ++it_;
    if (it_ == end_ || it_->first != name || it_->second.empty()) {
      return nullptr;
    }
    return &it_->second;
  }

 private:
  std::map<std::string, std::string>::const_iterator it_;
  const std::map<std::string, std::string>::const_iterator end_;
};

}  // namespace

const char* ParityOutcomeName(ParityOutcome outcome) {
  switch (outcome) {
    case ParityOutcome::kAgree:
      return "agree";
    case ParityOutcome::kDiffer:
      return "differ";
    case ParityOutcome::kSnapshotMissing:
      return "snapshot_missing";
    case ParityOutcome::kLiveMissing:
      return "live_missing";
  }
  return "agree";
}

bool SameValue(absl::string_view a, absl::string_view b) {
  a = absl::StripAsciiWhitespace(a);
  b = absl::StripAsciiWhitespace(b);
  if (absl::EqualsIgnoreCase(a, b)) return true;
  double x = 0;
  double y = 0;
  if (absl::SimpleAtod(a, &x) && absl::SimpleAtod(b, &y)) {
    return std::fabs(x - y) <= 1e-9 * std::max(1.0, std::fabs(x));
  }
  return false;
}

std::vector<VariableParity> CompareDecodes(
    const domain::Vehicle& live, const domain::Vehicle& snapshot,
    const std::vector<std::string>& variables) {
  std::vector<VariableParity> out;
  out.reserve(variables.size());
  SortedWalk live_walk(live);
  SortedWalk snapshot_walk(snapshot);
  for (const std::string& name : variables) {
    const std::string* l = live_walk.Find(name);
    const std::string* s = snapshot_walk.Find(name);
    if (l == nullptr && s == nullptr) continue;
    VariableParity p;
    p.variable = name;
    if (l != nullptr) p.live = *l;
    if (s != nullptr) p.snapshot = *s;
    if (l == nullptr) {
      p.outcome = ParityOutcome::kLiveMissing;
    } else if (s == nullptr) {
      p.outcome = ParityOutcome::kSnapshotMissing;
    } else {
      p.outcome =
          SameValue(*l, *s) ? ParityOutcome::kAgree : ParityOutcome::kDiffer;
    }
    out.push_back(std::move(p));
  }
  return out;
}

absl::optional<bool> MakeModelYearAgree(
    const std::vector<VariableParity>& outcomes) {
  bool judged = false;
  bool agree = true;
  for (const VariableParity& p : outcomes) {
    if (p.variable != "Make" && p.variable != "Model" &&
        p.variable != "ModelYear") {
      continue;
    }
    if (p.outcome == ParityOutcome::kLiveMissing) continue;
    judged = true;
    if (p.outcome != ParityOutcome::kAgree) agree = false;
  }
  if (!judged) return absl::nullopt;
  return agree;
}

void ParityTracker::Record(absl::string_view vin, absl::Time when,
                           const std::vector<VariableParity>& outcomes) {
  const absl::optional<bool> mmy = MakeModelYearAgree(outcomes);
  absl::MutexLock lock(&mu_);
  ++compared_;
  // The outcomes come in name order (CompareDecodes), as the map is: walk
  // it forward instead of searching it for each.
  auto it = variables_.begin();
  for (const VariableParity& p : outcomes) {
    while (it != variables_.end() && it->first < p.variable) ++it;
    if (it == variables_.end() || it->first != p.variable) {
      it = variables_.emplace_hint(it, std::string(p.variable),
                                   VariableCounts());
    }
    VariableCounts& c = it->second;
    ++c.by_outcome[static_cast<int>(p.outcome)];
    if (p.outcome == ParityOutcome::kAgree) continue;
    if (c.examples.size() < kExamples) {
      c.examples.push_front(ParityExample{std::string(vin), std::string(p.live),
                                          std::string(p.snapshot), when});
      continue;
    }
    // The oldest example's strings take the newest's text: no allocation
    // once they are long enough (this runs for every disagreement).
    ParityExample e = std::move(c.examples.back());
    c.examples.pop_back();
    e.vin.assign(vin.data(), vin.size());
    e.live.assign(p.live.data(), p.live.size());
    e.snapshot.assign(p.snapshot.data(), p.snapshot.size());
    e.time = when;
    c.examples.push_front(std::move(e));
  }
  if (!mmy.has_value() || window_ == 0) return;
  recent_.push_back(*mmy);
  if (*mmy) ++agreeing_;
  if (recent_.size() > window_) {
    if (recent_.front()) --agreeing_;
    recent_.pop_front();
  }
}

absl::optional<double> ParityTracker::AgreementLocked(size_t* judged) const {
  if (judged != nullptr) *judged = recent_.size();
  if (recent_.empty()) return absl::nullopt;
  return static_cast<double>(agreeing_) / static_cast<double>(recent_.size());
}

absl::optional<double> ParityTracker::Agreement(size_t* judged) const {
  absl::MutexLock lock(&mu_);
  return AgreementLocked(judged);
}

ParityReport ParityTracker::Report() const {
  absl::MutexLock lock(&mu_);
  ParityReport r;
  r.compared = compared_;
  r.variables = variables_;
  r.make_model_year_agreement = AgreementLocked(&r.judged);
  return r;
}

void ParityTracker::Reset() {
  absl::MutexLock lock(&mu_);
  compared_ = 0;
  variables_.clear();
  recent_.clear();
  agreeing_ = 0;
}

}  // namespace snapshot
