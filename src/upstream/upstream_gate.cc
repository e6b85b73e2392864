#include "upstream/upstream_gate.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace upstream {

UpstreamGate::UpstreamGate(UpstreamBudget* budget, int batch_max)
    : budget_(budget), batch_max_(std::max(1, batch_max)) {}

UpstreamGate::Seq UpstreamGate::Enqueue(Ticket ticket, Seq place) {
  const Seq seq = place != 0 ? place : next_seq_++;
  queue_.emplace(seq, std::move(ticket));
  return seq;
}

void UpstreamGate::Remove(Seq seq) { queue_.erase(seq); }

std::vector<UpstreamGate::Ticket> UpstreamGate::Take(absl::Time now) {
  std::vector<Ticket> out;
  if (queue_.empty() || !budget_->TryAcquire(now)) return out;
  // A flight whose VIN is already in this request waits for the next one;
  // the scan ahead for others is bounded so that a queue full of one VIN
  // (with different model-year hints) stays cheap.
  absl::flat_hash_set<std::string> vins;
  size_t scanned = 0;
  const size_t scan_limit = 4 * static_cast<size_t>(batch_max_);
  for (auto it = queue_.begin();
       it != queue_.end() && out.size() < static_cast<size_t>(batch_max_) &&
       scanned < scan_limit;
       ++scanned) {
    if (!vins.insert(it->second.key.vin).second) {
      ++it;
      continue;
    }
    out.push_back(std::move(it->second));
    it = queue_.erase(it);
  }
  return out;
}

absl::optional<absl::Time> UpstreamGate::NextStart(absl::Time now) const {
  if (queue_.empty()) return absl::nullopt;
  return budget_->StartOfRequest(now, 1);
}

absl::Time UpstreamGate::EstimatedStart(Seq seq, absl::Time now) const {
  // Flights ahead: the queue's size, or the distance to the front, which
  // also counts places left by flights that went away in the middle of the
  // queue (rare: cancels, deadlines); the smaller of the two.
  size_t ahead = queue_.size();
  if (seq != 0 && !queue_.empty()) {
    ahead = std::min<size_t>(queue_.size() - 1, seq - queue_.begin()->first);
  }
  const double requests =
      static_cast<double>(ahead / static_cast<size_t>(batch_max_) + 1);
  return budget_->StartOfRequest(now, requests);
}

}  // namespace upstream
