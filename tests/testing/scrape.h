// Scrapes a Prometheus text endpoint over loopback HTTP (libcurl) and reads
// its samples, for tests.
#ifndef VIN_TESTS_TESTING_SCRAPE_H_
#define VIN_TESTS_TESTING_SCRAPE_H_

#include <curl/curl.h>

#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace testing_util {

// "name{labels}" -> value, for every sample line.
using Samples = std::map<std::string, double>;

inline size_t AppendTo(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET http://127.0.0.1:<port><path>; returns the HTTP status, the body in
// `body`.
inline long HttpGet(int port, const std::string& path, std::string* body) {
  CURL* c = curl_easy_init();
  const std::string url = absl::StrCat("http://127.0.0.1:", port, path);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendTo);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  }
  curl_easy_cleanup(c);
  return status;
}

inline Samples ParseSamples(const std::string& text) {
  Samples out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    double value = 0;
    if (!absl::SimpleAtod(line.substr(space + 1), &value)) continue;
    out[std::string(line.substr(0, space))] = value;
  }
  return out;
}

// The sum of every sample of `name` (any labels; not its _bucket, _sum or
// _count series).
inline double Sum(const Samples& s, const std::string& name) {
  double sum = 0;
  for (const auto& [series, value] : s) {
    if (series == name || series.rfind(name + "{", 0) == 0) sum += value;
  }
  return sum;
}

// The value of one series (`name` with its labels, as written in the
// exposition) in a scrape of 127.0.0.1:`port`/metrics; -1 when the scrape
// fails or has no such series.
inline double MetricAt(int port, const std::string& series) {
  std::string body;
  if (HttpGet(port, "/metrics", &body) != 200) return -1;
  const Samples samples = ParseSamples(body);
  const auto it = samples.find(series);
  return it == samples.end() ? -1 : it->second;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_SCRAPE_H_
