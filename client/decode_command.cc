#include "client/decode_command.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/client_context.h>

#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/batch.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace vinctl {
namespace {

void AddLine(std::string* out, absl::string_view label,
             absl::string_view value) {
  if (value.empty()) return;
  absl::StrAppend(out, absl::StrFormat("  %-15s %s\n", label, value));
}

std::string SourceText(vin::v1::Source source) {
  std::string name = vin::v1::Source_Name(source);
  if (absl::StartsWith(name, "SOURCE_")) name.erase(0, 7);
  return name.empty() ? absl::StrCat(static_cast<int>(source)) : name;
}

}  // namespace

std::string FormatDecodeResult(const vin::v1::DecodeResult& r) {
  const vin::v1::Vehicle& v = r.vehicle();
  std::vector<std::string> headline;
  for (const std::string& part : {v.make(), v.model()}) {
    if (!part.empty()) headline.push_back(part);
  }
  if (v.model_year() != 0) headline.push_back(absl::StrCat(v.model_year()));
  std::string out =
      absl::StrCat(r.vin(), "  ",
                   headline.empty() ? "(make, model and year not provided)"
                                    : absl::StrJoin(headline, " "),
                   " (source ", SourceText(r.source()), ", ", r.attempts(),
                   r.attempts() == 1 ? " attempt" : " attempts", ")\n");
  AddLine(&out, "trim", v.trim());
  AddLine(&out, "series", v.series());
  AddLine(&out, "manufacturer", v.manufacturer());
  AddLine(&out, "vehicle type", v.vehicle_type());
  AddLine(&out, "body class", v.body_class());
  AddLine(&out, "drive type", v.drive_type());
  AddLine(&out, "fuel type", v.fuel_type_primary());
  std::vector<std::string> engine;
  if (v.engine_cylinders() != 0) {
    engine.push_back(absl::StrCat(v.engine_cylinders(), " cylinders"));
  }
  if (v.displacement_l() != 0) {
    engine.push_back(absl::StrCat(v.displacement_l(), " L"));
  }
  if (!v.engine_model().empty()) engine.push_back(v.engine_model());
  AddLine(&out, "engine", absl::StrJoin(engine, ", "));
  AddLine(&out, "plant country", v.plant_country());
  for (const auto& note : r.notes()) {
    // vPIC's messages already start with their code ("1 - Check Digit ...").
    AddLine(&out, "note",
            absl::StartsWith(note.message(), note.code())
                ? note.message()
                : absl::StrCat(note.code(), ": ", note.message()));
  }
  return out;
}

std::string DecodeResultJson(const vin::v1::DecodeResult& result) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(result, &json, options)
           .ok()) {
    return "{}\n";
  }
  if (json.empty() || json.back() != '\n') json.push_back('\n');
  return json;
}

std::string FormatRpcError(const grpc::Status& status) {
  std::string line =
      absl::StrCat("vinctl: ",
                   absl::StatusCodeToString(
                       static_cast<absl::StatusCode>(status.error_code())),
                   ": ", status.error_message());
  google::rpc::Status details;
  if (!status.error_details().empty() &&
      details.ParseFromString(status.error_details())) {
    std::vector<std::string> suggested;
    for (const auto& any : details.details()) {
      google::rpc::RetryInfo info;
      google::rpc::BadRequest bad;
      if (any.UnpackTo(&info)) {
        const absl::Duration delay =
            absl::Seconds(info.retry_delay().seconds()) +
            absl::Nanoseconds(info.retry_delay().nanos());
        absl::StrAppend(&line, "; retry after ", absl::FormatDuration(delay));
      } else if (any.UnpackTo(&bad)) {
        // Rule 21: the first violation is the rule broken, then one per
        // suggested VIN, the VIN first in its description.
        for (int i = 1; i < bad.field_violations_size(); ++i) {
          suggested.push_back(
              bad.field_violations(i).description().substr(0, 17));
        }
      }
    }
    if (!suggested.empty()) {
      absl::StrAppend(&line, "; did you mean ",
                      absl::StrJoin(suggested, " or "), "?");
    }
  }
  return line;
}

int RunDecode(const DecodeOptions& options,
              vin::v1::VinDecoderService::StubInterface* stub,
              std::ostream& out, std::ostream& err) {
  if (options.stagger > absl::ZeroDuration()) {
    absl::BitGen gen;
    absl::SleepFor(options.stagger * absl::Uniform(gen, 0.0, 1.0));
  }
  vin::v1::DecodeRequest request;
  request.set_vin(options.vin);
  request.set_model_year(options.model_year);
  if (options.warn_check_digit) {
    request.set_check_digit_policy(vin::v1::CHECK_DIGIT_POLICY_WARN);
  }
  request.set_priority(options.priority);
  grpc::ClientContext context;
  if (!options.tenant.empty()) context.AddMetadata("x-vin-tenant", options.tenant);
  if (options.deadline > absl::ZeroDuration()) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + options.deadline));
  }
  vin::v1::DecodeResponse response;
  const grpc::Status status = stub->Decode(&context, request, &response);
  if (!status.ok()) {
    err << FormatRpcError(status) << std::endl;
    return kExitItemsFailed;
  }
  out << (options.json ? DecodeResultJson(response.result())
                       : FormatDecodeResult(response.result()))
      << std::flush;
  return kExitOk;
}

}  // namespace vinctl
