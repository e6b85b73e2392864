#include "upstream/upstream_gate.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace upstream {
namespace {

// At peak hours bulk saves up no more than one request's worth: its share
// holds over any stretch of time, not only on average.
constexpr double kBulkBurst = 1;

}  // namespace

UpstreamGate::UpstreamGate(UpstreamBudget* budget, GateOptions options,
                           absl::Time now)
    : budget_(budget),
      batch_max_(std::max(1, options.batch_max)),
      bulk_peak_share_(std::clamp(options.bulk_peak_share, 1e-3, 1.0)),
      queue_(std::move(options.share)),
      bulk_(0, kBulkBurst, now) {}

UpstreamGate::Seq UpstreamGate::Enqueue(Ticket ticket, Seq place) {
  return queue_.Enqueue(std::move(ticket), place);
}

void UpstreamGate::Remove(Seq seq) { queue_.Remove(seq); }

void UpstreamGate::FollowRate(absl::Time now) const {
  const double per_minute = budget_->EffectiveRatePerMinute();
  // A share of an unlimited rate is unlimited; a share of 0 never sends.
  const double per_second =
      per_minute <= 0 ? 0 : std::max(1e-9, per_minute * bulk_peak_share_ / 60.0);
  if (bulk_.rate() != per_second) bulk_.SetRate(per_second, now);
}

bool UpstreamGate::BulkMayGo(absl::Time now, bool peak) const {
  if (!peak || bulk_peak_share_ >= 1 || budget_->LimitsBulk()) return true;
  FollowRate(now);
  // (Due within a microsecond counts as there: the loop's poll wakes on
  // millisecond boundaries.)
  return bulk_.unlimited() || bulk_.TokensAt(now) >= 1.0 - 1e-6;
}

std::vector<UpstreamGate::Ticket> UpstreamGate::Take(absl::Time now, bool peak) {
  if (queue_.waiting() == 0) return {};
  const bool bulk_ok = BulkMayGo(now, peak);
  if (queue_.waiting(domain::Priority::kInteractive) == 0 && !bulk_ok) return {};
  const bool bulk_alone = queue_.waiting(domain::Priority::kInteractive) == 0;
  if (!budget_->TryAcquire(now, {bulk_alone, peak, bulk_peak_share_})) return {};
  std::vector<Ticket> out = queue_.Pick(static_cast<size_t>(batch_max_), bulk_ok);
  if (peak && bulk_peak_share_ < 1 && !budget_->LimitsBulk() && bulk_alone &&
      !out.empty()) {
    // A request of bulk work alone takes one of bulk's tokens; bulk riding
    // in the room an interactive request leaves costs no request of its
    // own (as in the fleet's script).
    bulk_.Consume(1, now);
  }
  return out;
}

absl::optional<absl::Time> UpstreamGate::NextStart(absl::Time now, bool peak) const {
  if (queue_.waiting() == 0) return absl::nullopt;
  const bool bulk_alone = queue_.waiting(domain::Priority::kInteractive) == 0;
  const absl::Time start =
      budget_->StartOfRequest(now, 1, {bulk_alone, peak, bulk_peak_share_});
  if (!bulk_alone || BulkMayGo(now, peak)) return start;
  return std::max(start, bulk_.TimeOfToken(now, 1));
}

absl::Time UpstreamGate::EstimatedStart(Seq seq, absl::Time now, bool peak,
                                        domain::Priority priority,
                                        const std::string& tenant) const {
  const Ticket* queued = seq != 0 ? queue_.Find(seq) : nullptr;
  const domain::Priority p = queued != nullptr ? queued->priority : priority;
  const std::string& who = queued != nullptr ? queued->tenant : tenant;
  const double ahead = queue_.Ahead(queued != nullptr ? seq : 0, p, who);
  // Interactive flights get a request's room but bulk's share while bulk
  // waits; bulk gets what is left after every interactive flight.
  double per_request = batch_max_;
  if (p == domain::Priority::kInteractive &&
      queue_.waiting(domain::Priority::kBulk) > 0) {
    per_request = std::max(1.0, std::floor(batch_max_ *
                                           queue_.InteractiveShareWhileBulkWaits()));
  }
  const bool bulk = p == domain::Priority::kBulk;
  absl::Time start = budget_->StartOfRequest(
      now, std::floor(ahead / per_request) + 1, {bulk, peak, bulk_peak_share_});
  if (bulk && peak && bulk_peak_share_ < 1 && !budget_->LimitsBulk()) {
    FollowRate(now);
    if (!bulk_.unlimited()) {
      const double bulk_ahead = std::max(
          0.0, ahead - static_cast<double>(
                           queue_.waiting(domain::Priority::kInteractive)));
      start = std::max(start, bulk_.TimeOfToken(
                                  now, std::floor(bulk_ahead / batch_max_) + 1));
    }
  }
  return start;
}

}  // namespace upstream
