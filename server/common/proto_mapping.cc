#include "server/common/proto_mapping.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/util/time_util.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vin/vin.h"

namespace server {

using google::protobuf::util::TimeUtil;

void ToProto(absl::Duration in, google::protobuf::Duration* out) {
  *out = TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(in));
}

void ToProto(const engine::DecodeResult& in, vin::v1::DecodeResult* out) {
  if (in.encoded != nullptr && out->ParseFromString(*in.encoded)) return;
  BuildProto(in, out);
}

std::string EncodeResult(const engine::DecodeResult& in) {
  vin::v1::DecodeResult out;
  BuildProto(in, &out);
  return out.SerializeAsString();
}

absl::optional<std::string> CacheAnswerBytes(const std::string& live) {
  using google::protobuf::internal::WireFormatLite;
  using google::protobuf::io::CodedOutputStream;
  using Result = vin::v1::DecodeResult;
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(live.data()),
      static_cast<int>(live.size()));
  std::string out;
  out.reserve(live.size());
  // The source goes where EncodeResult puts it, in field-number order;
  // attempts 0 is the default, which proto3 does not write.
  bool source_written = false;
  const auto write_source = [&] {
    uint8_t field[10];  // two varints of at most 5 bytes
    uint8_t* end = CodedOutputStream::WriteVarint32ToArray(
        WireFormatLite::MakeTag(Result::kSourceFieldNumber,
                                WireFormatLite::WIRETYPE_VARINT),
        field);
    end = CodedOutputStream::WriteVarint32ToArray(vin::v1::SOURCE_CACHE, end);
    out.append(reinterpret_cast<const char*>(field), end - field);
    source_written = true;
  };
  int start = in.CurrentPosition();
  while (const uint32_t tag = in.ReadTag()) {
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    if (!WireFormatLite::SkipField(&in, tag)) return absl::nullopt;
    const int end = in.CurrentPosition();
    if (!source_written && number >= Result::kSourceFieldNumber) write_source();
    if (number != Result::kSourceFieldNumber &&
        number != Result::kAttemptsFieldNumber) {
      out.append(live, static_cast<size_t>(start),
                 static_cast<size_t>(end - start));
    }
    start = end;
  }
  if (!in.ConsumedEntireMessage()) return absl::nullopt;  // a malformed tag
  if (!source_written) write_source();
  return out;
}

namespace {

// `bytes` as a result the engine may keep: a vin.v1.DecodeResult with a
// VIN and a decode time.
bool ParseResult(const std::string& bytes, vin::v1::DecodeResult* p) {
  return p->ParseFromString(bytes) && !p->vin().empty() && p->has_decode_time();
}

absl::Time DecodeTimeOf(const vin::v1::DecodeResult& p) {
  return absl::FromUnixNanos(TimeUtil::TimestampToNanoseconds(p.decode_time()));
}

}  // namespace

bool CheckResultBytes(const std::string& bytes, engine::DecodeResult* out) {
  vin::v1::DecodeResult p;
  if (!ParseResult(bytes, &p)) return false;
  out->vin = p.vin();
  out->vehicle.model_year = p.vehicle().model_year();
  out->decode_time = DecodeTimeOf(p);
  return true;
}

bool DecodeResultBytes(const std::string& bytes, engine::DecodeResult* out) {
  vin::v1::DecodeResult p;
  if (!ParseResult(bytes, &p)) return false;
  out->vin = p.vin();
  const vin::v1::Vehicle& pv = p.vehicle();
  vpic::Vehicle& v = out->vehicle;
  v.make = pv.make();
  v.model = pv.model();
  v.model_year = pv.model_year();
  v.trim = pv.trim();
  v.series = pv.series();
  v.manufacturer = pv.manufacturer();
  v.vehicle_type = pv.vehicle_type();
  v.body_class = pv.body_class();
  v.drive_type = pv.drive_type();
  v.fuel_type_primary = pv.fuel_type_primary();
  v.engine_model = pv.engine_model();
  v.engine_cylinders = pv.engine_cylinders();
  v.displacement_l = pv.displacement_l();
  v.plant_country = pv.plant_country();
  v.attributes.clear();
  v.attributes.insert(pv.attributes().begin(), pv.attributes().end());
  v.untrimmed.clear();
  v.untrimmed.insert(pv.vpic_untrimmed().begin(), pv.vpic_untrimmed().end());
  switch (p.source()) {
    case vin::v1::SOURCE_CACHE:
      out->source = engine::Source::kCache;
      break;
    case vin::v1::SOURCE_SNAPSHOT:
      out->source = engine::Source::kSnapshot;
      break;
    default:
      out->source = engine::Source::kVpic;
  }
  out->attempts = p.attempts();
  out->notes.clear();
  for (const auto& n : p.notes()) out->notes.push_back({n.code(), n.message()});
  out->decode_time = DecodeTimeOf(p);
  out->model_year_candidates.clear();
  for (const auto& c : p.model_year_candidates()) {
    out->model_year_candidates.push_back(
        {c.model_year(), c.rule(), c.chosen()});
  }
  out->encoded = nullptr;
  return true;
}

void BuildProto(const engine::DecodeResult& in, vin::v1::DecodeResult* out) {
  out->set_vin(in.vin);
  const vpic::Vehicle& v = in.vehicle;
  vin::v1::Vehicle* pv = out->mutable_vehicle();
  pv->set_make(v.make);
  pv->set_model(v.model);
  pv->set_model_year(v.model_year);
  pv->set_trim(v.trim);
  pv->set_series(v.series);
  pv->set_manufacturer(v.manufacturer);
  pv->set_vehicle_type(v.vehicle_type);
  pv->set_body_class(v.body_class);
  pv->set_drive_type(v.drive_type);
  pv->set_fuel_type_primary(v.fuel_type_primary);
  pv->set_engine_model(v.engine_model);
  pv->set_engine_cylinders(v.engine_cylinders);
  pv->set_displacement_l(v.displacement_l);
  pv->set_plant_country(v.plant_country);
  pv->mutable_attributes()->insert(v.attributes.begin(), v.attributes.end());
  pv->mutable_vpic_untrimmed()->insert(v.untrimmed.begin(), v.untrimmed.end());
  switch (in.source) {
    case engine::Source::kVpic:
      out->set_source(vin::v1::SOURCE_VPIC);
      break;
    case engine::Source::kCache:
      out->set_source(vin::v1::SOURCE_CACHE);
      break;
    case engine::Source::kSnapshot:
      out->set_source(vin::v1::SOURCE_SNAPSHOT);
      break;
  }
  out->set_attempts(in.attempts);
  for (const vpic::Note& n : in.notes) {
    vin::v1::DecodeNote* pn = out->add_notes();
    pn->set_code(n.code);
    pn->set_message(n.message);
  }
  // Protobuf's own conversion: nanos stay in [0, 1e9) before 1970 too.
  *out->mutable_decode_time() =
      TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(in.decode_time));
  for (const domain::ModelYearCandidate& c : in.model_year_candidates) {
    vin::v1::ModelYearCandidate* pc = out->add_model_year_candidates();
    pc->set_model_year(c.model_year);
    pc->set_rule(c.rule);
    pc->set_chosen(c.chosen);
  }
}

void AddProvenance(const engine::DecodeResult& in, vin::v1::DecodeResult* out) {
  out->clear_provenance();
  if (!in.provenance.empty()) {
    for (const domain::FieldSource& f : in.provenance) {
      vin::v1::FieldSource* pf = out->add_provenance();
      pf->set_variable(f.variable);
      pf->set_source(f.source);
      pf->set_schema_id(f.schema_id);
      pf->set_pattern_id(f.pattern_id);
      pf->set_key(f.key);
    }
    return;
  }
  // A live answer, or the cache of one: every variable is vPIC's.
  std::vector<std::string> names;
  names.reserve(out->vehicle().attributes().size());
  for (const auto& [name, value] : out->vehicle().attributes()) {
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (std::string& name : names) {
    vin::v1::FieldSource* pf = out->add_provenance();
    pf->set_variable(std::move(name));
    pf->set_source("vpic");
  }
}

void ToProto(const vpic::UpstreamError& in, vin::v1::UpstreamError* out) {
  out->set_http_status(in.http_status);
  out->set_kind(in.kind);
  out->set_message(in.message);
}

void ToProto(const engine::Queued& in, vin::v1::QueuedEvent* out) {
  out->set_coalesced(in.coalesced);
  if (in.waiting_for_rate) {
    out->set_waiting_for_rate(true);
    ToProto(in.estimated_wait, out->mutable_estimated_wait());
    out->set_bulk_peak_hours(in.bulk_peak_hours);
  }
}

void ToProto(const engine::Retrying& in, vin::v1::RetryingEvent* out) {
  out->set_attempt(in.attempt);
  ToProto(in.next_delay, out->mutable_next_delay());
  ToProto(in.error, out->mutable_error());
}

void ToProto(const engine::Failure& in, vin::v1::FailedEvent* out) {
  out->set_reason(ToProto(in.reason));
  out->set_message(in.message);
  out->set_retryable(in.retryable);
  out->set_attempts(in.attempts);
  if (in.last_error) ToProto(*in.last_error, out->mutable_last_error());
  if (in.retry_delay > absl::ZeroDuration()) {
    ToProto(in.retry_delay, out->mutable_retry_delay());
  }
  out->set_reason_detail(
      std::string(domain::ErrorReasonName(domain::ReasonOf(in))));
  if (in.unreachable_since != absl::InfinitePast()) {
    *out->mutable_upstream_unreachable_since() =
        TimeUtil::NanosecondsToTimestamp(
            absl::ToUnixNanos(in.unreachable_since));
  }
  for (const std::string& v : in.suggested_vins) out->add_suggested_vins(v);
}

vin::v1::FailureReason ToProto(engine::FailureReason reason) {
  using R = engine::FailureReason;
  switch (reason) {
    case R::kInvalidVin:
      return vin::v1::FAILURE_REASON_INVALID_VIN;
    case R::kUpstreamUnavailable:
      return vin::v1::FAILURE_REASON_UPSTREAM_UNAVAILABLE;
    case R::kUpstreamRejected:
      return vin::v1::FAILURE_REASON_UPSTREAM_REJECTED;
    case R::kCancelled:
      return vin::v1::FAILURE_REASON_CANCELLED;
    case R::kShuttingDown:
      return vin::v1::FAILURE_REASON_SHUTTING_DOWN;
    case R::kOverloaded:
      return vin::v1::FAILURE_REASON_OVERLOADED;
    case R::kDeadlineExceeded:
      return vin::v1::FAILURE_REASON_DEADLINE_EXCEEDED;
    case R::kNoSnapshot:
      return vin::v1::FAILURE_REASON_NO_SNAPSHOT;
    case R::kInvalidRequest:
      return vin::v1::FAILURE_REASON_INVALID_REQUEST;
  }
  return vin::v1::FAILURE_REASON_UNSPECIFIED;
}

engine::SourcePreference FromProto(vin::v1::SourcePreference source) {
  switch (source) {
    case vin::v1::SOURCE_PREFERENCE_LIVE_ONLY:
      return engine::SourcePreference::kLiveOnly;
    case vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY:
      return engine::SourcePreference::kSnapshotOnly;
    case vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT:
      return engine::SourcePreference::kLiveThenSnapshot;
    default:
      return engine::SourcePreference::kUnspecified;
  }
}

namespace {

template <typename Request>
engine::DecodeRequest RequestOf(const Request& in) {
  engine::DecodeRequest r;
  absl::optional<std::string> scanned = vin::BarcodeRead(in.vin());
  r.vin = scanned ? *std::move(scanned) : in.vin();
  r.model_year = in.model_year();
  r.check_digit_policy =
      in.check_digit_policy() == vin::v1::CHECK_DIGIT_POLICY_WARN
          ? vin::CheckDigitPolicy::kWarn
          : vin::CheckDigitPolicy::kEnforce;
  r.source_preference = FromProto(in.source_preference());
  r.allow_partial = in.allow_partial();
  r.explain = in.explain();
  return r;
}

template <typename Request>
CallerExtras ExtrasOfRequest(const Request& in) {
  CallerExtras extras;
  extras.explain = in.explain();
  if (absl::optional<std::string> scanned = vin::BarcodeRead(in.vin())) {
    extras.notes.push_back(
        {"barcode",
         absl::StrCat("read as ", *scanned,
                      ": the input's leading I, which windshield and "
                      "door-jamb barcodes print before the VIN, was dropped")});
  }
  return extras;
}

}  // namespace

engine::DecodeRequest FromProto(const vin::v1::DecodeRequest& request) {
  return RequestOf(request);
}

engine::DecodeRequest FromProto(const vin::v1::DecodeBatchRequest& request) {
  return RequestOf(request);
}

CallerExtras ExtrasOf(const vin::v1::DecodeRequest& request) {
  return ExtrasOfRequest(request);
}

CallerExtras ExtrasOf(const vin::v1::DecodeBatchRequest& request) {
  return ExtrasOfRequest(request);
}

std::shared_ptr<const engine::DecodeResult> ForCaller(
    std::shared_ptr<const engine::DecodeResult> in,
    const CallerExtras& extras) {
  if (!extras.explain && extras.notes.empty()) return in;
  vin::v1::DecodeResult p;
  ToProto(*in, &p);
  if (extras.explain) AddProvenance(*in, &p);
  for (const domain::Note& n : extras.notes) {
    vin::v1::DecodeNote* pn = p.add_notes();
    pn->set_code(n.code);
    pn->set_message(n.message);
  }
  auto out = std::make_shared<engine::DecodeResult>();
  out->vin = in->vin;
  out->source = in->source;
  out->attempts = in->attempts;
  out->decode_time = in->decode_time;
  out->model_year_candidates = in->model_year_candidates;
  out->provenance = in->provenance;
  out->encoded = std::make_shared<const std::string>(p.SerializeAsString());
  return out;
}

}  // namespace server
