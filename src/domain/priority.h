// Who is asking, and how urgent it is (DESIGN rule 17): the vocabulary the
// server, the engine and the upstream queue share.
#ifndef VIN_DOMAIN_PRIORITY_H_
#define VIN_DOMAIN_PRIORITY_H_

#include <string>

#include "absl/strings/string_view.h"

namespace domain {

// A request's urgency. A person waiting (a unary Decode, a page) is
// interactive; a feed (DecodeBatch) is bulk. Ordered: lower is more urgent.
enum class Priority { kInteractive = 0, kBulk = 1 };
inline constexpr int kPriorities = 2;

inline const char* PriorityLabel(Priority p) {
  return p == Priority::kInteractive ? "interactive" : "bulk";
}

// The more urgent of two.
inline Priority MoreUrgent(Priority a, Priority b) {
  return static_cast<int>(a) <= static_cast<int>(b) ? a : b;
}

// The tenant of a caller that names none.
inline constexpr absl::string_view kDefaultTenant = "default";
// A tenant name is at most this long (a longer one is its start and a
// digest of the whole: server/common/tenant.h).
inline constexpr size_t kMaxTenantBytes = 128;

}  // namespace domain

#endif  // VIN_DOMAIN_PRIORITY_H_
