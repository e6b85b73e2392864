#include "feed/result_writer.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "feed/csv.h"

namespace feed {

const std::vector<std::string> kResultColumns = {"status",
                                                 "source",
                                                 "make",
                                                 "model",
                                                 "model_year",
                                                 "trim",
                                                 "series",
                                                 "manufacturer",
                                                 "vehicle_type",
                                                 "body_class",
                                                 "drive_type",
                                                 "fuel_type_primary",
                                                 "engine_cylinders",
                                                 "displacement_l",
                                                 "plant_country",
                                                 "attempts",
                                                 "notes",
                                                 "failure_reason",
                                                 "error"};

namespace {

using Json = nlohmann::ordered_json;

std::string Dump(const Json& j) {
  // Input bytes that are not UTF-8 become U+FFFD instead of failing the line.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ProtoJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options)
           .ok()) {
    return "{}";
  }
  return json;
}

std::string NonZero(int64_t v) { return v == 0 ? "" : absl::StrCat(v); }

std::string SourceName(vin::v1::Source source) {
  if (source == vin::v1::SOURCE_UNSPECIFIED) return "";
  std::string name = vin::v1::Source_Name(source);
  if (absl::StartsWith(name, "SOURCE_")) name.erase(0, 7);
  return name;
}

}  // namespace

Outcome Outcome::Done(vin::v1::DecodeResult result) {
  Outcome o;
  o.done = true;
  o.result = std::move(result);
  return o;
}

Outcome Outcome::Failed(vin::v1::FailedEvent failure) {
  Outcome o;
  o.failure_reason = FailureReasonName(failure.reason());
  o.failure = std::move(failure);
  return o;
}

Outcome Outcome::ClientFailure(absl::string_view reason,
                               absl::string_view message) {
  Outcome o;
  o.failure_reason = std::string(reason);
  o.failure.set_message(std::string(message));
  return o;
}

std::string FailureReasonName(vin::v1::FailureReason reason) {
  std::string name = vin::v1::FailureReason_Name(reason);
  if (name.empty()) return absl::StrCat(static_cast<int>(reason));
  constexpr absl::string_view kPrefix = "FAILURE_REASON_";
  if (absl::StartsWith(name, kPrefix)) name.erase(0, kPrefix.size());
  return name;
}

absl::Status ResultWriter::WriteHeader() {
  if (format_ == OutputFormat::kCsv) {
    std::vector<std::string> header = columns_;
    header.insert(header.end(), kResultColumns.begin(), kResultColumns.end());
    *out_ << FormatCsvRecord(header) << '\n';
  }
  return Check();
}

absl::Status ResultWriter::Write(int64_t index,
                                 const std::vector<std::string>& fields,
                                 const Outcome& outcome) {
  *out_ << (format_ == OutputFormat::kCsv ? CsvLine(fields, outcome)
                                          : JsonLine(index, fields, outcome))
        << '\n';
  return Check();
}

absl::Status ResultWriter::Flush() {
  out_->flush();
  return Check();
}

absl::Status ResultWriter::Check() {
  if (out_->fail()) return absl::DataLossError("error writing the output");
  return absl::OkStatus();
}

std::string ResultWriter::CsvLine(const std::vector<std::string>& fields,
                                  const Outcome& outcome) const {
  std::vector<std::string> row = fields;
  row.resize(columns_.size());
  if (outcome.done) {
    const vin::v1::DecodeResult& r = outcome.result;
    const vin::v1::Vehicle& v = r.vehicle();
    std::vector<std::string> notes;
    for (const auto& note : r.notes()) notes.push_back(note.code());
    row.insert(row.end(),
               {"done", SourceName(r.source()), v.make(), v.model(),
                NonZero(v.model_year()), v.trim(), v.series(), v.manufacturer(),
                v.vehicle_type(), v.body_class(), v.drive_type(),
                v.fuel_type_primary(), NonZero(v.engine_cylinders()),
                v.displacement_l() == 0 ? "" : absl::StrCat(v.displacement_l()),
                v.plant_country(), absl::StrCat(r.attempts()),
                absl::StrJoin(notes, ";"), "", ""});
  } else {
    std::string message = outcome.failure.message();
    if (outcome.failure.suggested_vins_size() > 0) {  // rule 21
      absl::StrAppend(&message, " (did you mean ",
                      absl::StrJoin(outcome.failure.suggested_vins(), " or "),
                      "?)");
    }
    row.insert(row.end(), {"failed", "", "", "", "", "", "", "", "", "", "", "",
                           "", "", "", absl::StrCat(outcome.failure.attempts()),
                           "", outcome.failure_reason, std::move(message)});
  }
  return FormatCsvRecord(row);
}

std::string ResultWriter::JsonLine(int64_t index,
                                   const std::vector<std::string>& fields,
                                   const Outcome& outcome) const {
  Json input = Json::object();
  for (size_t i = 0; i < columns_.size(); ++i) {
    input[columns_[i]] = i < fields.size() ? fields[i] : "";
  }
  Json head = Json::object();
  head["input"] = std::move(input);
  head["request_id"] = absl::StrCat(index);
  head["status"] = outcome.done ? "done" : "failed";
  if (!outcome.done) head["failure_reason"] = outcome.failure_reason;
  std::string line = Dump(head);
  line.pop_back();  // the closing brace; the message follows
  absl::StrAppend(
      &line, outcome.done ? ",\"result\":" : ",\"failure\":",
      outcome.done ? ProtoJson(outcome.result) : ProtoJson(outcome.failure),
      "}");
  return line;
}

}  // namespace feed
