#include "fake_vpic/steps.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fake_vpic/answers.h"
#include "fake_vpic/http.h"

namespace fakevpic {
namespace {

// Steps named by a plain word, in both directions.
constexpr std::pair<Step::Kind, absl::string_view> kWordSteps[] = {
    {Step::Kind::kOk, "ok"},
    {Step::Kind::kReset, "reset"},
    {Step::Kind::kHang, "hang"},
    {Step::Kind::kHtml, "html"},
    {Step::Kind::kSparse, "sparse"},
    {Step::Kind::kTruncated, "truncated"},
    {Step::Kind::kEmptyResults, "empty"},
    {Step::Kind::kMissing, "missing"},
    {Step::Kind::kHuge, "huge"},
    {Step::Kind::kBadGzip, "badgzip"}};

}  // namespace

std::string ServedName(const Step& step) {
  if (step.kind == Step::Kind::kStatus) return absl::StrCat(step.status);
  if (step.kind == Step::Kind::kTooManyRequests) return "429";
  if (step.kind == Step::Kind::kDelay) return "delay";
  if (step.kind == Step::Kind::kRedirect) return "redirect";
  if (step.kind == Step::Kind::kSet) return "set";
  for (const auto& [kind, word] : kWordSteps) {
    if (kind == step.kind) return std::string(word);
  }
  return "ok";
}

bool FailsWholeAnswer(Step::Kind kind) {
  switch (kind) {
    case Step::Kind::kOk:
    case Step::Kind::kSparse:
    case Step::Kind::kMissing:
    case Step::Kind::kDelay:
    case Step::Kind::kSet:
      return false;
    default:
      return true;
  }
}

std::string FaultAnswer(const Step& step, bool close, absl::string_view normal,
                        absl::string_view empty) {
  switch (step.kind) {
    case Step::Kind::kStatus:
      return TextResponse(step.status, close);
    case Step::Kind::kTooManyRequests:
      return TextResponse(
          429, close, absl::StrCat("Retry-After: ", step.retry_after, "\r\n"));
    case Step::Kind::kHtml:
      return HttpResponse(
          200, "text/html; charset=utf-8", Answers::MaintenancePage(), close,
          step.retry_after.empty()
              ? std::string()
              : absl::StrCat("Retry-After: ", step.retry_after, "\r\n"));
    case Step::Kind::kTruncated:
      return HttpResponse(200, kJson, normal.substr(0, normal.size() / 2),
                          close);
    case Step::Kind::kBadGzip:
      // Labelled gzip, sent as is: a client that ignored the label would
      // read a good answer.
      return HttpResponse(200, kJson, normal, close,
                          "Content-Encoding: gzip\r\n");
    case Step::Kind::kRedirect:
      return TextResponse(302, close,
                          absl::StrCat("Location: ", step.location, "\r\n"));
    case Step::Kind::kHuge: {
      // The normal answer with a 2 MiB variable in its (last) result.
      std::string body(normal);
      const size_t end = body.rfind("}]}");
      if (end != std::string::npos) {
        body.insert(end, absl::StrCat(",\"Padding\":\"",
                                      std::string(2 << 20, 'x'), "\""));
      }
      return HttpResponse(200, kJson, body, close);
    }
    default:  // kEmptyResults
      return HttpResponse(200, kJson, empty, close);
  }
}

absl::StatusOr<Step> Step::Parse(absl::string_view text) {
  const absl::string_view raw = absl::StripAsciiWhitespace(text);
  const std::string t = absl::AsciiStrToLower(raw);
  Step step;
  for (const auto& [kind, word] : kWordSteps) {
    if (t == word) {
      step.kind = kind;
      return step;
    }
  }
  if (absl::StartsWith(t, "429:")) {
    step.kind = Kind::kTooManyRequests;
    step.status = 429;
    step.retry_after = std::string(absl::StripAsciiWhitespace(raw.substr(4)));
    if (step.retry_after.empty()) {
      return absl::InvalidArgumentError("429: needs a Retry-After value");
    }
    return step;
  }
  if (absl::StartsWith(t, "html:")) {
    step.kind = Kind::kHtml;
    step.retry_after = std::string(absl::StripAsciiWhitespace(raw.substr(5)));
    if (step.retry_after.empty()) {
      return absl::InvalidArgumentError("html: needs a Retry-After value");
    }
    return step;
  }
  if (absl::StartsWith(t, "redirect:")) {
    step.kind = Kind::kRedirect;
    step.location = std::string(absl::StripAsciiWhitespace(raw.substr(9)));
    if (step.location.empty()) {
      return absl::InvalidArgumentError("redirect: needs a URL");
    }
    return step;
  }
  if (absl::StartsWith(t, "set:")) {
    const absl::string_view rest = raw.substr(4);
    const size_t eq = rest.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("set: needs Variable=value, got \"", raw, "\""));
    }
    step.kind = Kind::kSet;
    step.variable = std::string(rest.substr(0, eq));
    step.value = std::string(rest.substr(eq + 1));
    return step;
  }
  if (absl::StartsWith(t, "delay:")) {
    step.kind = Kind::kDelay;
    if (!absl::ParseDuration(t.substr(6), &step.delay) ||
        step.delay < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad delay in step \"", raw, "\""));
    }
    return step;
  }
  if (t.size() == 3 && absl::SimpleAtoi(t, &step.status) &&
      step.status >= 200 && step.status <= 599) {
    step.kind = Kind::kStatus;
    return step;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown step \"", raw,
      "\" (want ok, NNN, 429:<Retry-After>, reset, hang, html, "
      "html:<Retry-After>, sparse, "
      "truncated, empty, missing, huge, badgzip, delay:<duration> or "
      "redirect:<url>)"));
}

absl::StatusOr<std::vector<Step>> Step::ParseList(absl::string_view text) {
  std::vector<Step> steps;
  for (absl::string_view piece :
       absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    absl::StatusOr<Step> step = Parse(piece);
    if (!step.ok()) {
      // An HTTP date holds a comma ("429:Wed, 21 Oct 2015 07:28:00 GMT"):
      // a piece that is no step goes on the preceding Retry-After.
      if (!steps.empty() && !steps.back().retry_after.empty()) {
        absl::StrAppend(&steps.back().retry_after, ",", piece);
        continue;
      }
      return step.status();
    }
    steps.push_back(*std::move(step));
  }
  return steps;
}

absl::StatusOr<std::vector<WeightedStep>> WeightedStep::ParseList(
    absl::string_view text) {
  std::vector<WeightedStep> out;
  for (absl::string_view piece :
       absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    piece = absl::StripAsciiWhitespace(piece);
    WeightedStep w;
    if (const size_t star = piece.find('*'); star != absl::string_view::npos) {
      if (!absl::SimpleAtoi(piece.substr(0, star), &w.weight) || w.weight < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad weight in chaos step \"", piece,
                         "\" (want WEIGHT*STEP, WEIGHT a whole number >= 0)"));
      }
      piece.remove_prefix(star + 1);
    }
    absl::StatusOr<Step> step = Step::Parse(piece);
    if (!step.ok()) return step.status();
    w.step = *std::move(step);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace fakevpic
