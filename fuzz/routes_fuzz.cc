// The HTTP gateway's request routing and query parsing on any bytes
// (server/http/routes.cc, request_checks.cc; DESIGN rule 19): the input is
// "METHOD\nTARGET\nHOST\nBODY". Nothing crashes; a route served has what
// its kind needs; whatever text goes in, what the gateway would put in a
// header or label is valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "server/http/request_checks.h"
#include "server/http/routes.h"
#include "util/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts =
      absl::StrSplit(text, absl::MaxSplits('\n', 3));
  parts.resize(4);
  const std::string& method = parts[0];
  const std::string& target = parts[1];
  const std::string& host = parts[2];
  const std::string& body = parts[3];

  const server::http::Route r = server::http::RouteOf(method, target);
  if (r.kind == server::http::Route::Kind::kError) {
    if (r.status < 400 || r.status > 499 || r.message.empty()) __builtin_trap();
  } else {
    if (r.status != 200) __builtin_trap();
    if (r.kind == server::http::Route::Kind::kVpicValues ||
        r.kind == server::http::Route::Kind::kVpicVariables) {
      // vPIC's paths take partial VINs ('*' where unknown), as vPIC does.
      if (r.vin.empty() || r.model_year < 0) __builtin_trap();
    }
  }
  auto form = server::http::ParseBatchForm(body, 50);
  if (form.ok() && (form->entries.empty() || form->entries.size() > 50)) {
    __builtin_trap();
  }
  std::string value;
  (void)server::http::QueryParam(target, "modelyear", &value);
  std::string decoded;
  if (server::http::PercentDecode(target, true, &decoded) &&
      decoded.size() > target.size()) {
    __builtin_trap();
  }

  const std::vector<absl::string_view> te = absl::StrSplit(host, ',');
  const std::string framing =
      server::http::FramingProblem(11, te, body.size() % 3);
  if (framing.empty() && !te.empty() && body.size() % 3 != 0) __builtin_trap();
  for (bool loopback : {true, false}) {
    auto hosts =
        server::http::AllowedHosts::Parse(body.substr(0, 200), loopback);
    if (hosts.ok()) (void)hosts->Allows(host);
  }
  (void)server::http::SameOrigin(method, "http", host);
  (void)server::http::HostName(host);

  const std::string safe = util::SafeText(text, 128);
  if (safe.size() > 128 || !util::IsValidUtf8(safe)) __builtin_trap();
  return 0;
}
