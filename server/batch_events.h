// The bytes of DecodeBatch messages. DecodeBatch is served as a raw method
// (gRPC ByteBuffers), so that a DONE splices in the result's encoded bytes,
// made once per decode and shared by every item that gets it, instead of
// building and serializing the vehicle again for each item: the protobuf
// wire format lets a length-delimited field be copied as bytes.
#ifndef VIN_SERVER_BATCH_EVENTS_H_
#define VIN_SERVER_BATCH_EVENTS_H_

#include <grpcpp/support/byte_buffer.h>

#include <string>

#include "engine_api/types.h"
#include "vin/v1/vin.pb.h"

namespace server {

// A whole event, serialized.
grpc::ByteBuffer EventBytes(const vin::v1::DecodeBatchResponse& event);
// DecodeBatchResponse{request_id, vin, done: {result}}: the result's encoded
// bytes are shared, not copied; without them the result is built here.
grpc::ByteBuffer DoneBytes(const std::string& request_id,
                           const std::string& vin,
                           const engine::DecodeResult& result);
// Parses a request; false when the bytes are not a DecodeBatchRequest.
bool ParseRequest(const grpc::ByteBuffer& bytes,
                  vin::v1::DecodeBatchRequest* request);

}  // namespace server

#endif  // VIN_SERVER_BATCH_EVENTS_H_
