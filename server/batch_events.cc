#include "server/batch_events.h"

#include <google/protobuf/io/coded_stream.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>

#include <atomic>
#include <memory>
#include <utility>

#include "server/common/proto_mapping.h"

namespace server {
namespace {

using google::protobuf::io::CodedOutputStream;

// Field tags of the wire format (field number << 3 | length-delimited).
constexpr uint8_t kResponseDoneTag = (5 << 3) | 2;  // DecodeBatchResponse.done
constexpr uint8_t kDoneResultTag = (1 << 3) | 2;    // DoneEvent.result

void AppendVarint(std::string* out, uint32_t v) {
  uint8_t buf[5];
  uint8_t* end = CodedOutputStream::WriteVarint32ToArray(v, buf);
  out->append(reinterpret_cast<char*>(buf), end - buf);
}

// What a slice holds of its bytes. gRPC frees it on a thread of its own,
// after a hand-off through its core; the flag's release and acquire make
// that order plain to TSan too (Debian's gRPC is not built with it).
struct SliceHold {
  std::shared_ptr<const std::string> bytes;
  std::atomic<bool> made{false};
};

// A slice over bytes that the slice keeps alive (no copy).
grpc::Slice SharedSlice(std::shared_ptr<const std::string> bytes) {
  auto* hold = new SliceHold{std::move(bytes)};
  char* data = const_cast<char*>(hold->bytes->data());
  const size_t size = hold->bytes->size();
  hold->made.store(true, std::memory_order_release);  // hold is not read after
  return grpc::Slice(
      data, size,
      [](void* p) {
        auto* h = static_cast<SliceHold*>(p);
        h->made.load(std::memory_order_acquire);
        delete h;
      },
      hold);
}

}  // namespace

grpc::ByteBuffer EventBytes(const vin::v1::DecodeBatchResponse& event) {
  grpc::Slice slice(event.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

grpc::ByteBuffer DoneBytes(const std::string& request_id,
                           const std::string& vin,
                           const engine::DecodeResult& result) {
  vin::v1::DecodeBatchResponse head;
  head.set_request_id(request_id);
  head.set_vin(vin);
  if (result.encoded == nullptr) {
    ToProto(result, head.mutable_done()->mutable_result());
    return EventBytes(head);
  }
  const uint32_t n = static_cast<uint32_t>(result.encoded->size());
  const uint32_t done_size = 1 + CodedOutputStream::VarintSize32(n) + n;
  std::string header = head.SerializeAsString();
  header.push_back(static_cast<char>(kResponseDoneTag));
  AppendVarint(&header, done_size);
  header.push_back(static_cast<char>(kDoneResultTag));
  AppendVarint(&header, n);
  grpc::Slice slices[2] = {grpc::Slice(std::move(header)),
                           SharedSlice(result.encoded)};
  return grpc::ByteBuffer(slices, 2);
}

bool ParseRequest(const grpc::ByteBuffer& bytes,
                  vin::v1::DecodeBatchRequest* request) {
  grpc::ByteBuffer copy(bytes);  // the reader takes a mutable buffer
  grpc::ProtoBufferReader reader(&copy);
  return request->ParseFromZeroCopyStream(&reader);
}

}  // namespace server
