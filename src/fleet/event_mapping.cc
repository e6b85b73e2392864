#include "fleet/event_mapping.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "vin/fleet/v1/fleet.pb.h"

namespace fleet {
namespace {

namespace pb = vin::fleet::v1;
using engine::FleetEvent;

pb::FleetEvent::Kind KindToProto(FleetEvent::Kind k) {
  switch (k) {
    case FleetEvent::Kind::kDone:
      return pb::FleetEvent::KIND_DONE;
    case FleetEvent::Kind::kRetrying:
      return pb::FleetEvent::KIND_RETRYING;
    case FleetEvent::Kind::kFailed:
      return pb::FleetEvent::KIND_FAILED;
    case FleetEvent::Kind::kAbandoned:
      return pb::FleetEvent::KIND_ABANDONED;
    case FleetEvent::Kind::kBreakerOpened:
      return pb::FleetEvent::KIND_BREAKER_OPENED;
    case FleetEvent::Kind::kBreakerClosed:
      return pb::FleetEvent::KIND_BREAKER_CLOSED;
  }
  return pb::FleetEvent::KIND_UNSPECIFIED;
}

absl::optional<FleetEvent::Kind> KindFromProto(int k) {
  switch (k) {
    case pb::FleetEvent::KIND_DONE:
      return FleetEvent::Kind::kDone;
    case pb::FleetEvent::KIND_RETRYING:
      return FleetEvent::Kind::kRetrying;
    case pb::FleetEvent::KIND_FAILED:
      return FleetEvent::Kind::kFailed;
    case pb::FleetEvent::KIND_ABANDONED:
      return FleetEvent::Kind::kAbandoned;
    case pb::FleetEvent::KIND_BREAKER_OPENED:
      return FleetEvent::Kind::kBreakerOpened;
    case pb::FleetEvent::KIND_BREAKER_CLOSED:
      return FleetEvent::Kind::kBreakerClosed;
    default:
      return absl::nullopt;
  }
}

pb::Source SourceToProto(engine::Source s) {
  switch (s) {
    case engine::Source::kVpic:
      return pb::SOURCE_VPIC;
    case engine::Source::kCache:
      return pb::SOURCE_CACHE;
    case engine::Source::kSnapshot:
      return pb::SOURCE_SNAPSHOT;
  }
  return pb::SOURCE_UNSPECIFIED;
}

absl::optional<engine::Source> SourceFromProto(int s) {
  switch (s) {
    case pb::SOURCE_VPIC:
      return engine::Source::kVpic;
    case pb::SOURCE_CACHE:
      return engine::Source::kCache;
    case pb::SOURCE_SNAPSHOT:
      return engine::Source::kSnapshot;
    default:
      return absl::nullopt;
  }
}

pb::FailureReason ReasonToProto(engine::FailureReason r) {
  using R = engine::FailureReason;
  switch (r) {
    case R::kInvalidVin:
      return pb::FAILURE_REASON_INVALID_VIN;
    case R::kUpstreamUnavailable:
      return pb::FAILURE_REASON_UPSTREAM_UNAVAILABLE;
    case R::kUpstreamRejected:
      return pb::FAILURE_REASON_UPSTREAM_REJECTED;
    case R::kCancelled:
      return pb::FAILURE_REASON_CANCELLED;
    case R::kShuttingDown:
      return pb::FAILURE_REASON_SHUTTING_DOWN;
    case R::kOverloaded:
      return pb::FAILURE_REASON_OVERLOADED;
    case R::kDeadlineExceeded:
      return pb::FAILURE_REASON_DEADLINE_EXCEEDED;
    case R::kNoSnapshot:
      return pb::FAILURE_REASON_NO_SNAPSHOT;
    case R::kInvalidRequest:
      return pb::FAILURE_REASON_INVALID_REQUEST;
  }
  return pb::FAILURE_REASON_UNSPECIFIED;
}

absl::optional<engine::FailureReason> ReasonFromProto(int r) {
  using R = engine::FailureReason;
  switch (r) {
    case pb::FAILURE_REASON_INVALID_VIN:
      return R::kInvalidVin;
    case pb::FAILURE_REASON_UPSTREAM_UNAVAILABLE:
      return R::kUpstreamUnavailable;
    case pb::FAILURE_REASON_UPSTREAM_REJECTED:
      return R::kUpstreamRejected;
    case pb::FAILURE_REASON_CANCELLED:
      return R::kCancelled;
    case pb::FAILURE_REASON_SHUTTING_DOWN:
      return R::kShuttingDown;
    case pb::FAILURE_REASON_OVERLOADED:
      return R::kOverloaded;
    case pb::FAILURE_REASON_DEADLINE_EXCEEDED:
      return R::kDeadlineExceeded;
    case pb::FAILURE_REASON_NO_SNAPSHOT:
      return R::kNoSnapshot;
    case pb::FAILURE_REASON_INVALID_REQUEST:
      return R::kInvalidRequest;
    default:
      return absl::nullopt;
  }
}

void DurationToProto(absl::Duration d, google::protobuf::Duration* out) {
  const int64_t ns = absl::ToInt64Nanoseconds(d);
  out->set_seconds(ns / 1000000000);
  out->set_nanos(static_cast<int32_t>(ns % 1000000000));
}

absl::Duration DurationFromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

void ErrorToProto(const vpic::UpstreamError& e, pb::UpstreamError* out) {
  out->set_http_status(e.http_status);
  out->set_kind(e.kind);
  out->set_message(e.message);
}

vpic::UpstreamError ErrorFromProto(const pb::UpstreamError& e) {
  return vpic::UpstreamError{e.http_status(), e.kind(), e.message()};
}

void TimeToProto(absl::Time t, google::protobuf::Timestamp* out) {
  // Within Timestamp's range (years 1 to 9999): an infinite time, or one
  // beyond, is its edge (its nanoseconds would overflow).
  t = std::clamp(t, absl::FromUnixSeconds(-62135596800),
                 absl::FromUnixSeconds(253402300799));
  const int64_t seconds = absl::ToUnixSeconds(t);  // toward the past
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds))));
}

absl::Time TimeFromProto(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

bool IsBreakerKind(FleetEvent::Kind k) {
  return k == FleetEvent::Kind::kBreakerOpened ||
         k == FleetEvent::Kind::kBreakerClosed;
}

absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("fleet event: ", why));
}

}  // namespace

std::string EncodeEvent(const FleetEvent& e) {
  pb::FleetEvent m;
  m.set_kind(KindToProto(e.kind));
  m.set_key(e.key);
  m.set_origin(e.origin);
  switch (e.kind) {
    case FleetEvent::Kind::kDone: {
      pb::Done* d = m.mutable_done();
      d->set_source(SourceToProto(e.source));
      d->set_attempts(e.attempts);
      if (e.encoded) d->set_encoded(*e.encoded);
      if (e.cached) d->set_cached(*e.cached);
      break;
    }
    case FleetEvent::Kind::kRetrying: {
      pb::Retrying* r = m.mutable_retrying();
      r->set_attempt(e.retrying.attempt);
      DurationToProto(e.retrying.next_delay, r->mutable_next_delay());
      ErrorToProto(e.retrying.error, r->mutable_error());
      break;
    }
    case FleetEvent::Kind::kFailed: {
      pb::Failure* f = m.mutable_failure();
      f->set_reason(ReasonToProto(e.failure.reason));
      f->set_message(e.failure.message);
      f->set_retryable(e.failure.retryable);
      f->set_attempts(e.failure.attempts);
      if (e.failure.last_error) {
        ErrorToProto(*e.failure.last_error, f->mutable_last_error());
      }
      DurationToProto(e.failure.retry_delay, f->mutable_retry_delay());
      if (e.failure.detail != domain::ErrorReason::kUnspecified) {
        f->set_reason_detail(
            std::string(domain::ErrorReasonName(e.failure.detail)));
      }
      if (e.failure.unreachable_since != absl::InfinitePast()) {
        TimeToProto(e.failure.unreachable_since,
                    f->mutable_unreachable_since());
      }
      break;
    }
    case FleetEvent::Kind::kBreakerOpened: {
      pb::Breaker* b = m.mutable_breaker();
      TimeToProto(e.breaker.unreachable_since, b->mutable_unreachable_since());
      DurationToProto(e.breaker.cooldown, b->mutable_cooldown());
      ErrorToProto(e.breaker.last_error, b->mutable_last_error());
      break;
    }
    case FleetEvent::Kind::kAbandoned:
    case FleetEvent::Kind::kBreakerClosed:
      break;
  }
  return m.SerializeAsString();
}

absl::StatusOr<FleetEvent> DecodeEvent(absl::string_view bytes) {
  pb::FleetEvent m;
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Bad("not a vin.fleet.v1.FleetEvent");
  }
  const auto kind = KindFromProto(m.kind());
  if (!kind) return Bad(absl::StrCat("unknown kind ", m.kind()));
  if (m.key().empty() && !IsBreakerKind(*kind)) return Bad("no key");
  FleetEvent e;
  e.kind = *kind;
  e.key = m.key();
  e.origin = m.origin();
  switch (e.kind) {
    case FleetEvent::Kind::kDone: {
      if (!m.has_done()) return Bad("a done event without its result");
      const auto source = SourceFromProto(m.done().source());
      if (!source) return Bad(absl::StrCat("unknown source ", m.done().source()));
      e.source = *source;
      e.attempts = m.done().attempts();
      e.encoded = std::make_shared<const std::string>(m.done().encoded());
      e.cached = std::make_shared<const std::string>(m.done().cached());
      break;
    }
    case FleetEvent::Kind::kRetrying:
      if (!m.has_retrying()) return Bad("a retrying event without its attempt");
      e.retrying.attempt = m.retrying().attempt();
      e.retrying.next_delay = DurationFromProto(m.retrying().next_delay());
      e.retrying.error = ErrorFromProto(m.retrying().error());
      break;
    case FleetEvent::Kind::kFailed: {
      if (!m.has_failure()) return Bad("a failed event without its failure");
      const pb::Failure& f = m.failure();
      const auto reason = ReasonFromProto(f.reason());
      if (!reason) return Bad(absl::StrCat("unknown failure reason ", f.reason()));
      e.failure.reason = *reason;
      e.failure.message = f.message();
      e.failure.retryable = f.retryable();
      e.failure.attempts = f.attempts();
      if (f.has_last_error()) e.failure.last_error = ErrorFromProto(f.last_error());
      e.failure.retry_delay = DurationFromProto(f.retry_delay());
      if (!f.reason_detail().empty()) {
        const auto detail = domain::ErrorReasonNamed(f.reason_detail());
        if (!detail) return Bad("unknown failure reason detail");
        e.failure.detail = *detail;
      }
      if (f.has_unreachable_since()) {
        e.failure.unreachable_since = TimeFromProto(f.unreachable_since());
      }
      break;
    }
    case FleetEvent::Kind::kBreakerOpened: {
      if (!m.has_breaker()) return Bad("a breaker event without the breaker");
      const pb::Breaker& b = m.breaker();
      e.breaker.unreachable_since = TimeFromProto(b.unreachable_since());
      e.breaker.cooldown = DurationFromProto(b.cooldown());
      e.breaker.last_error = ErrorFromProto(b.last_error());
      break;
    }
    case FleetEvent::Kind::kAbandoned:
    case FleetEvent::Kind::kBreakerClosed:
      break;
  }
  return e;
}

std::string EncodeReferenceAnswer(const std::string& document) {
  vin::fleet::v1::ReferenceAnswer m;
  m.set_document(document);
  return m.SerializeAsString();
}

absl::optional<std::string> DecodeReferenceAnswer(absl::string_view bytes) {
  vin::fleet::v1::ReferenceAnswer m;
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::nullopt;
  }
  return std::move(*m.mutable_document());
}

}  // namespace fleet
