// POST /v1/decode (api_decode.h): the body a vin.v1.DecodeRequest in JSON
// (unknown fields ignored, as grpc-gateway does), one engine request of
// the asked priority (interactive by default), the answer a
// DecodeResponse or a google.rpc.Status.
#include "server/http/api_decode.h"

#include <google/protobuf/util/json_util.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/common/proto_mapping.h"
#include "server/common/status_mapping.h"
#include "server/common/tenant.h"
#include "server/http/http_status.h"
#include "server/http/routes.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {

void ApiDecode::Start() {
  vin::v1::DecodeRequest req;
  const auto st = google::protobuf::util::JsonStringToMessage(
      c_->request().body(), &req, ApiJsonOptions());
  if (!st.ok()) {
    return c_->Fail(
        400, domain::ErrorReason::kMalformedRequest,
        absl::StrCat("the body is not a vin.v1.DecodeRequest in JSON: ",
                     std::string(st.message())),
        false);
  }
  // Rule 21: ?explain=true is the body's "explain": true.
  const absl::string_view target(c_->request().target().data(),
                                 c_->request().target().size());
  std::string explain;
  if (QueryParam(target, "explain", &explain)) {
    if (absl::EqualsIgnoreCase(explain, "true") || explain == "1") {
      req.set_explain(true);
    } else if (!absl::EqualsIgnoreCase(explain, "false") && explain != "0") {
      return c_->Fail(400, domain::ErrorReason::kMalformedRequest,
                      "query parameter explain must be true or false", false);
    }
  }
  vin_ = req.vin();
  extras_ = ExtrasOf(req);
  engine::DecodeRequest r = FromProto(req);
  r.timeout = c_->timeout();
  r.priority = PriorityOf(req.priority(), domain::Priority::kInteractive);
  r.tenant = c_->tenant();
  Submit({r});
}

void ApiDecode::Answer(std::vector<Outcome>& outcomes) {
  const Outcome& o = outcomes[0];
  if (!o.done) {
    return c_->FailApi(HttpStatusOf(o.failure.reason),
                       DetailsOf(o.failure, vin_));
  }
  vin::v1::DecodeResponse out;
  ToProto(*ForCaller(o.answer, extras_), out.mutable_result());
  SendJson(200, out);
}

}  // namespace internal
}  // namespace http
}  // namespace server
