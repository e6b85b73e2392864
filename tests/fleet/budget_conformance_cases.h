// The budget conformance test's table (budget_conformance_cases.cc): the
// steps a case takes against an upstream::UpstreamBudget, at fake times,
// and what each must answer. One table, run against LocalBudget and
// RedisBudget alike (budget_conformance_test.cc).
#ifndef VIN_TESTS_FLEET_BUDGET_CONFORMANCE_CASES_H_
#define VIN_TESTS_FLEET_BUDGET_CONFORMANCE_CASES_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "upstream/upstream_budget.h"

namespace budget_conformance {

enum class Op { kFirsts, kAcquire, kRetry, kPushback, kSuccess };

struct Step {
  absl::Duration at;  // since the case's start
  Op op;
  int64_t n = 1;  // kFirsts: first attempts; kAcquire, kRetry: calls made
  int64_t granted = 0;  // kAcquire, kRetry: how many succeed (the first ones)
  absl::Duration pause;  // kPushback
  absl::optional<bool> changed;  // kPushback, kSuccess: the rate changed
  // After the step: EffectiveRatePerMinute, and PausedUntil (since the
  // start; -InfiniteDuration: never paused).
  absl::optional<double> rate;
  absl::optional<absl::Duration> paused_until;

  Step Rate(double r) const {
    Step s = *this;
    s.rate = r;
    return s;
  }
  Step Paused(absl::Duration until) const {
    Step s = *this;
    s.paused_until = until;
    return s;
  }
};

struct Case {
  std::string name;
  upstream::BudgetOptions options;
  std::vector<Step> steps;
};

// For gtest's messages about a parameter.
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The table: DESIGN rules 9-11, case by case.
std::vector<Case> Cases();

}  // namespace budget_conformance

#endif  // VIN_TESTS_FLEET_BUDGET_CONFORMANCE_CASES_H_
