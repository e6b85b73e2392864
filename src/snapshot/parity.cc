#include "snapshot/parity.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace snapshot {
namespace {

// std::string's order (bytes as unsigned), the first byte compared inline:
// most names differ there, and the walks below compare names for every
// variable of every compared decode.
bool NameBefore(absl::string_view a, absl::string_view b) {
  if (!a.empty() && !b.empty() && a[0] != b[0]) {
    return static_cast<unsigned char>(a[0]) < static_cast<unsigned char>(b[0]);
  }
  return a < b;
}

// Whether `s` may be a number SimpleAtod reads ("2.0", "-1", ".5").
bool MayBeNumber(absl::string_view s) {
  if (s.empty()) return false;
  const char c = s[0];
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
}

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
    while (it_ != end_ && NameBefore(it_->first, name)) ++it_;
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
  if (MayBeNumber(a) && MayBeNumber(b) && absl::SimpleAtod(a, &x) &&
      absl::SimpleAtod(b, &y)) {
    return std::fabs(x - y) <= 1e-9 * std::max(1.0, std::fabs(x));
  }
  return false;
}

std::vector<VariableParity> CompareDecodes(
    const domain::Vehicle& live, const std::vector<std::string>& snapshot,
    const std::vector<std::string>& variables) {
  std::vector<VariableParity> out;
  out.reserve(variables.size());
  SortedWalk live_walk(live);
  for (size_t i = 0; i < variables.size(); ++i) {
    const std::string& name = variables[i];
    const std::string* l = live_walk.Find(name);
    const std::string* s =
        i < snapshot.size() && !snapshot[i].empty() ? &snapshot[i] : nullptr;
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
    while (it != variables_.end() && NameBefore(it->first, p.variable)) ++it;
    if (it == variables_.end() || it->first != p.variable) {
      it = variables_.emplace_hint(it, std::string(p.variable), Variable());
    }
    Variable& v = it->second;
    ++v.since_reset[static_cast<int>(p.outcome)];
    ++v.total[static_cast<int>(p.outcome)];
    if (p.outcome == ParityOutcome::kAgree) continue;
    ParityExample& e = v.examples[v.next];
    e.vin.assign(vin.data(), vin.size());
    e.live.assign(p.live.data(), p.live.size());
    e.snapshot.assign(p.snapshot.data(), p.snapshot.size());
    e.time = when;
    v.next = (v.next + 1) % kExamples;
    if (v.count < kExamples) ++v.count;
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
  for (const auto& [name, v] : variables_) {
    if (v.since_reset == OutcomeCounts{}) continue;
    VariableCounts& c = r.variables[name];
    std::copy(v.since_reset.begin(), v.since_reset.end(), c.by_outcome);
    for (size_t k = 1; k <= v.count; ++k) {  // newest first
      c.examples.push_back(v.examples[(v.next + kExamples - k) % kExamples]);
    }
  }
  r.make_model_year_agreement = AgreementLocked(&r.judged);
  return r;
}

std::map<std::string, OutcomeCounts, std::less<>> ParityTracker::Totals()
    const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, OutcomeCounts, std::less<>> out;
  for (const auto& [name, v] : variables_) out.emplace(name, v.total);
  return out;
}

void ParityTracker::Reset() {
  absl::MutexLock lock(&mu_);
  compared_ = 0;
  for (auto& [name, v] : variables_) {
    v.since_reset = {};
    v.next = 0;
    v.count = 0;
  }
  recent_.clear();
  agreeing_ = 0;
}

}  // namespace snapshot
