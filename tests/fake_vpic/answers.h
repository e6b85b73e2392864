// Answer bodies of the fake vPIC server: captured fixtures and generated
// vPIC-shaped DecodeVinValues answers, plus the parser of request targets
// that both the server and the fixture loader use.
//
// An Answers is immutable once loaded, so it may be read from any number of
// threads without synchronization.
#ifndef FAKE_VPIC_ANSWERS_H_
#define FAKE_VPIC_ANSWERS_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fakevpic {

// What a DecodeVinValues request asks for.
struct DecodeTarget {
  std::string vin;     // percent-decoded path segment after DecodeVinValues/
  int model_year = 0;  // the modelyear query parameter, 0 when absent/invalid
};

// Parses "<anything>/DecodeVinValues/<VIN>[?query]" (the name matched without
// regard to case, like vPIC does). Also accepts a full URL. Returns nullopt
// for any other path or an empty VIN.
std::optional<DecodeTarget> ParseDecodeTarget(absl::string_view target);

// Whether `target` is "<anything>/DecodeVINValuesBatch[/][?query]" (without
// regard to case).
bool IsBatchTarget(absl::string_view target);
// The VINs of a batch form body ("format=json&data=VIN[,YEAR];VIN..." with
// form encoding), or nullopt when it has no `data` field.
std::optional<std::vector<DecodeTarget>> ParseBatchForm(absl::string_view body);

class Answers {
 public:
  // Loads every *.json in `fixtures_dir` ({"request":{"url":...},"status":...,
  // "body":{...}}). Fixtures whose URL is DecodeVinValues/<17-char VIN> with
  // status 200 are served for that VIN; the others are ignored. The first
  // such fixture (by file name) also gives the variable names and the message
  // of generated answers. An empty `fixtures_dir` loads nothing and uses a
  // built-in variable list. A missing directory or a malformed file is an
  // error. With `fill_every_variable`, generated answers are as full as a
  // real decode: every variable a fixture fills (decode-vin.json's 41 and
  // the others') has the first value a fixture gives it, unless the
  // generator sets it (for memory benchmarks).
  static absl::StatusOr<Answers> Load(const std::string& fixtures_dir,
                                      bool fill_every_variable = false);

  // The normal answer: the fixture for `vin` (the one whose modelyear equals
  // `model_year` when there is one, else the one without modelyear, else any
  // for that VIN), or a generated answer. `model_year` 0 means no hint.
  std::string Normal(absl::string_view vin, int model_year) const;
  // A generated answer, whatever the fixtures hold.
  std::string Generated(absl::string_view vin, int model_year) const;
  // Valid vPIC JSON with every variable empty except VIN, ErrorCode "8" and
  // ErrorText.
  std::string Sparse(absl::string_view vin) const;
  // Valid vPIC JSON with "Results": [].
  std::string EmptyResults(absl::string_view vin) const;
  // The normal answer cut roughly in half: not parseable JSON.
  std::string Truncated(absl::string_view vin, int model_year) const;
  // A small HTML maintenance page.
  static std::string MaintenancePage();

  // The result object (one VIN's variables) of Normal() / Sparse(), for a
  // batch answer.
  std::string NormalResult(absl::string_view vin, int model_year) const;
  // A body (Normal's) with its first result's `variable` set to `value`.
  static std::string WithValue(const std::string& body,
                               const std::string& variable,
                               const std::string& value);
  // The first result object of a body, as NormalResult cuts it.
  static std::string ResultOf(const std::string& body);
  std::string SparseResult(absl::string_view vin) const;
  // A DecodeVINValuesBatch answer holding `results` (result objects).
  std::string BatchBody(const std::vector<std::string>& results) const;

  // Rule 18's reference endpoints: the captured answer of the endpoint of
  // `target` (".../api/vehicles/GetModelsForMake/honda?format=json": the
  // segment after vehicles/, any case), whatever its arguments, as
  // `endpoint` (lower case); nullopt for an endpoint without a capture.
  // Loaded from `fixtures_dir`/json/*.json (bodies as vPIC sent them) and
  // decode-wmi.json.
  std::optional<std::string> Reference(absl::string_view target,
                                       std::string* endpoint) const;
  // A reference answer with no results.
  static std::string EmptyReference();

  // Number of DecodeVinValues fixtures being served.
  int fixture_count() const { return static_cast<int>(fixtures_.size()); }

 private:
  Answers() = default;

  absl::Status LoadReferences(const std::string& dir);

  // Renders a vPIC answer with one result holding every template variable,
  // "" unless `values` has it (names not in the template are appended).
  std::string Render(absl::string_view vin,
                     const std::map<std::string, std::string>& values) const;

  // (VIN, modelyear or 0) -> serialized body.
  std::map<std::pair<std::string, int>, std::string> fixtures_;
  // Reference endpoint (lower case) -> serialized body.
  std::map<std::string, std::string> references_;
  // Variable names of a DecodeVinValues result, in vPIC's order.
  std::vector<std::string> variables_;
  // The same names serialized as JSON keys: "\"Name\":".
  std::vector<std::string> quoted_keys_;
  // With fill_every_variable: a value for every variable.
  std::map<std::string, std::string> fillers_;
  int count_ = 0;        // vPIC's "Count" for a decode
  std::string message_;  // vPIC's "Message"
};

}  // namespace fakevpic

#endif  // FAKE_VPIC_ANSWERS_H_
