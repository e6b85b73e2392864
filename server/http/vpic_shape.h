// Answers in vPIC's own shape (DESIGN "The HTTP gateway"), as documents
// (vpic_document.h: rendered in vPIC's JSON, XML or CSV), for the gateway's
// drop-in paths: DecodeVinValues (and DecodeVinValuesExtended, the same shape),
// DecodeVin (vPIC's Variable/Value list) and DecodeVINValuesBatch. A result is
// rendered from vin.v1.DecodeResult, whatever its source: every one of vPIC's
// 148 variables, in vPIC's order, each a string ("" when not provided), the
// values vPIC padded with whitespace as vPIC wrote them
// (Vehicle.vpic_untrimmed), ErrorCode and ErrorText rebuilt from vPIC's notes
// (our own notes, such as check_digit or stale, never: they go in headers).
// Compare with ../shared/fixtures/vpic/.
#ifndef VIN_SERVER_HTTP_VPIC_SHAPE_H_
#define VIN_SERVER_HTTP_VPIC_SHAPE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/http/vpic_document.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {

// vPIC's variables of a DecodeVinValues result, in its order.
const std::vector<std::string>& VpicVariables();

// vPIC's answer to GET DecodeVinValues/{vin} for `result`: `searched` is the
// VIN as the caller wrote it (vPIC echoes it in SearchCriteria).
VpicDocument VpicValuesAnswer(const vin::v1::DecodeResult& result,
                              absl::string_view searched);

// vPIC's answer to GET DecodeVin/{vin} for `result`: the same decode as a
// Variable/Value list (134 of vPIC's variables, in the order, with the
// names and ids, vPIC lists them there). ValueId is vPIC's for Error Code,
// Make, Manufacturer Name and Model; other list values' ids are not in the
// decode the engine keeps, and are "".
VpicDocument VpicVariablesAnswer(const vin::v1::DecodeResult& result,
                                 absl::string_view searched);

// vPIC's answer to POST DecodeVINValuesBatch: one result per VIN, in the
// order asked.
VpicDocument VpicBatchAnswer(const std::vector<vin::v1::DecodeResult>& results);

}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_VPIC_SHAPE_H_
