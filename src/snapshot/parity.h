// Rule 21: how far the snapshot agrees with NHTSA. A live answer and the
// snapshot's decode of the same VIN are compared per variable the snapshot
// can give (Snapshot::variables()); a ParityTracker counts the outcomes,
// keeps the newest disagreements per variable (bounded), and the share of
// the last `window` compared decodes whose make, model and model year
// agree.
//
// CompareDecodes and SameValue are pure; ParityTracker is thread-safe.
#ifndef VIN_SNAPSHOT_PARITY_H_
#define VIN_SNAPSHOT_PARITY_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "domain/vehicle.h"

namespace snapshot {

enum class ParityOutcome {
  kAgree = 0,
  kDiffer = 1,
  kSnapshotMissing = 2,  // vPIC gives it, the snapshot does not
  kLiveMissing = 3,      // the snapshot gives it, vPIC does not
};
inline constexpr int kParityOutcomes = 4;

// The metric's label: "agree", "differ", "snapshot_missing", "live_missing".
const char* ParityOutcomeName(ParityOutcome outcome);

// One variable's outcome. The views point into the compared vehicles and
// the variable list (CompareDecodes' arguments), which must outlive it:
// nothing is copied for the agreeing majority.
struct VariableParity {
  absl::string_view variable;
  ParityOutcome outcome = ParityOutcome::kAgree;
  absl::string_view live;
  absl::string_view snapshot;
};

// Whether two values of a vPIC variable say the same: compared without
// case and surrounding blanks, and numbers by value ("2.0" and "2").
bool SameValue(absl::string_view a, absl::string_view b);

// Each of `variables` (sorted, as Snapshot::variables() is) that either
// decode gives, with its outcome, in that order. `snapshot[i]` is the
// snapshot's value of variables[i], "" for none (Snapshot::DecodeVariables).
std::vector<VariableParity> CompareDecodes(
    const domain::Vehicle& live, const std::vector<std::string>& snapshot,
    const std::vector<std::string>& variables);

// Whether the make, model and model year agree (each given by vPIC agrees;
// one vPIC does not give is not held against the snapshot). nullopt when
// vPIC gives none of them: nothing to judge.
absl::optional<bool> MakeModelYearAgree(
    const std::vector<VariableParity>& outcomes);

struct ParityExample {
  std::string vin;
  std::string live;
  std::string snapshot;
  absl::Time time;
};

struct VariableCounts {
  int64_t by_outcome[kParityOutcomes] = {};
  std::deque<ParityExample> examples;  // disagreements, newest first
};

struct ParityReport {
  int64_t compared = 0;
  // Over the last `window` compared decodes with a make, model or year.
  absl::optional<double> make_model_year_agreement;
  size_t judged = 0;  // decodes in that window now
  std::map<std::string, VariableCounts, std::less<>> variables;
};

// Counts by outcome, one per ParityOutcome.
using OutcomeCounts = std::array<int64_t, kParityOutcomes>;

class ParityTracker {
 public:
  static constexpr size_t kExamples = 20;
  explicit ParityTracker(size_t window) : window_(window) {}

  // One compared decode of `vin` at `when`.
  void Record(absl::string_view vin, absl::Time when,
              const std::vector<VariableParity>& outcomes);
  // Since the last Reset(): the variables with a count.
  ParityReport Report() const;
  // By variable, the counts since the tracker was made: Reset() does not
  // clear them (the metrics' counters).
  std::map<std::string, OutcomeCounts, std::less<>> Totals() const;
  // The make/model/year agreement over the window, and how many decodes it
  // holds (it judges once full).
  absl::optional<double> Agreement(size_t* judged = nullptr) const;
  // Everything but the totals forgotten (another snapshot is compared from
  // now on).
  void Reset();

 private:
  struct Variable {
    OutcomeCounts since_reset = {};
    OutcomeCounts total = {};
    // The newest disagreements, a ring: written in place, so that their
    // strings' buffers are reused (this runs for every disagreement).
    std::array<ParityExample, kExamples> examples;
    size_t next = 0;   // where the next one goes
    size_t count = 0;  // how many the ring holds
  };
  absl::optional<double> AgreementLocked(size_t* judged) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t window_;
  mutable absl::Mutex mu_;
  int64_t compared_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Variable, std::less<>> variables_ ABSL_GUARDED_BY(mu_);
  std::deque<bool> recent_ ABSL_GUARDED_BY(mu_);  // agreement, newest last
  size_t agreeing_ ABSL_GUARDED_BY(mu_) = 0;      // trues in recent_
};

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_PARITY_H_
