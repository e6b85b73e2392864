#include "upstream/fair_queue.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace upstream {
namespace {

// Rule 18: a reference request (GetAllMakes, ...) is never batched: it goes
// in a request of its own, which nothing joins.
bool Closed(const std::vector<FairQueue::Ticket>& out) {
  return !out.empty() && out.front().key.is_reference();
}

// Whether `t` may join the request `out` (of the VINs `vins`): a VIN not in
// it yet, or a reference request as a request's only flight.
bool Fits(const FairQueue::Ticket& t, const std::vector<FairQueue::Ticket>& out,
          const absl::flat_hash_set<std::string>& vins) {
  if (t.key.is_reference()) return out.empty();
  return !Closed(out) && !vins.contains(t.key.vin);
}

}  // namespace

FairQueue::FairQueue(FairShareOptions options) : options_(std::move(options)) {}

double FairQueue::weight(const std::string& tenant) const {
  auto it = options_.tenant_weights.find(tenant);
  // (At least a hundredth: a tenant saving up for its turn takes at most
  // a hundred passes.)
  return it != options_.tenant_weights.end() && it->second > 0
             ? std::max(0.01, it->second)
             : 1.0;
}

FairQueue::Seq FairQueue::Enqueue(Ticket ticket, Seq place) {
  if (place != 0) Remove(place);  // (a place is never held twice)
  const Seq seq = place != 0 ? place : next_seq_++;
  Class& c = classes_[Index(ticket.priority)];
  auto [it, created] = c.tenants.try_emplace(ticket.tenant);
  Tenant& t = it->second;
  if (t.seqs.empty()) c.turns.push_back(ticket.tenant);
  t.seqs.insert(seq);
  ++c.size;
  entries_.insert_or_assign(seq, std::move(ticket));
  return seq;
}

void FairQueue::Remove(Seq seq) {
  auto e = entries_.find(seq);
  if (e == entries_.end()) return;
  Class& c = classes_[Index(e->second.priority)];
  auto t = c.tenants.find(e->second.tenant);
  if (t != c.tenants.end() && t->second.seqs.erase(seq) > 0) {
    --c.size;
    if (t->second.seqs.empty()) {
      c.turns.erase(std::find(c.turns.begin(), c.turns.end(), t->first));
      c.tenants.erase(t);
    }
  }
  entries_.erase(e);
}

FairQueue::Ticket FairQueue::Extract(Class& c, Tenant& t,
                                     absl::btree_set<Seq>::iterator it) {
  auto e = entries_.find(*it);
  Ticket ticket = std::move(e->second);
  entries_.erase(e);
  t.seqs.erase(it);
  --c.size;
  return ticket;
}

size_t FairQueue::TakeFrom(Class& c, size_t k,
                           absl::flat_hash_set<std::string>* vins,
                           std::vector<Ticket>* out) {
  size_t got = 0;
  // Each turn serves floor(deficit + weight) VINs of the tenant in front;
  // a tenant whose next VINs are all in this request already passes, and
  // when every tenant has passed the request is as full as it can be.
  size_t passes = 0;
  while (got < k && !Closed(*out) && !c.turns.empty() &&
         passes <= c.turns.size()) {
    const std::string name = c.turns.front();
    Tenant& t = c.tenants.at(name);
    if (t.deficit < 1) t.deficit += weight(name);
    bool served = false, blocked = false;
    while (got < k && !Closed(*out) && t.deficit >= 1 && !t.seqs.empty()) {
      // Its first flight that fits the request (a short look).
      auto it = t.seqs.begin();
      for (int look = 0; it != t.seqs.end() && look < 4; ++it, ++look) {
        if (Fits(entries_.at(*it), *out, *vins)) break;
      }
      if (it == t.seqs.end() || !Fits(entries_.at(*it), *out, *vins)) {
        blocked = true;
        break;
      }
      Ticket ticket = Extract(c, t, it);
      vins->insert(ticket.key.vin);
      out->push_back(std::move(ticket));
      t.deficit -= 1;
      ++got;
      served = true;
    }
    // (A tenant still saving up for a turn, weight < 1, is not a pass:
    // its deficit grows each time.)
    if (served) {
      passes = 0;
    } else if (blocked) {
      ++passes;
    }
    if (t.seqs.empty()) {
      c.turns.pop_front();
      c.tenants.erase(name);
    } else if (t.deficit < 1 || !served) {
      c.turns.pop_front();  // its turn is over: to the back
      c.turns.push_back(name);
    }
  }
  return got;
}

std::vector<FairQueue::Ticket> FairQueue::Pick(size_t n, bool bulk_allowed) {
  std::vector<Ticket> out;
  absl::flat_hash_set<std::string> vins;
  Class& interactive = classes_[Index(domain::Priority::kInteractive)];
  Class& bulk = classes_[Index(domain::Priority::kBulk)];
  const bool bulk_waits = bulk_allowed && bulk.size > 0;
  if (bulk_waits && interactive.size > 0 && options_.bulk_min_share > 0) {
    // Bulk's share accrues per request while both wait; at most a
    // request's worth is owed at once.
    bulk_credit_ = std::min(bulk_credit_ + options_.bulk_min_share * n,
                            static_cast<double>(n));
    // (A hair over, for the sum of tenths that falls short of 1.)
    const size_t owed = static_cast<size_t>(std::floor(bulk_credit_ + 1e-9));
    bulk_credit_ -= static_cast<double>(TakeFrom(bulk, owed, &vins, &out));
  }
  TakeFrom(interactive, n - out.size(), &vins, &out);
  if (bulk_allowed && out.size() < n && !Closed(out)) {
    const size_t more = TakeFrom(bulk, n - out.size(), &vins, &out);
    bulk_credit_ = std::max(0.0, bulk_credit_ - static_cast<double>(more));
  }
  if (bulk.size == 0) bulk_credit_ = 0;
  return out;
}

double FairQueue::InteractiveShareWhileBulkWaits() const {
  return 1.0 - std::clamp(options_.bulk_min_share, 0.0, 1.0);
}

double FairQueue::Ahead(Seq seq, domain::Priority priority,
                        const std::string& tenant) const {
  const Class& c = classes_[Index(priority)];
  // The flights of its own tenant before it.
  double own = 0;
  auto t = c.tenants.find(tenant);
  if (t != c.tenants.end() && !t->second.seqs.empty()) {
    const Seq front = *t->second.seqs.begin();
    own = seq == 0 ? static_cast<double>(t->second.seqs.size())
                   : static_cast<double>(std::min<uint64_t>(
                         t->second.seqs.size() - 1, seq > front ? seq - front : 0));
  }
  // The other tenants' turns meanwhile: their weight's worth for each of
  // its own, as far as they have flights.
  const double w = weight(tenant);
  double others = 0;
  for (const auto& [name, other] : c.tenants) {
    if (name == tenant) continue;
    others += std::min(static_cast<double>(other.seqs.size()),
                       std::ceil((own + 1) * weight(name) / w));
  }
  double ahead = own + others;
  if (priority == domain::Priority::kBulk) {
    ahead += static_cast<double>(waiting(domain::Priority::kInteractive));
  }
  return ahead;
}

}  // namespace upstream
