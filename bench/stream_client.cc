// A DecodeBatch load client for benchmarks: N streams at once, each with at
// most `window` items unanswered, over a feed of `items` rows cycling over
// `distinct` VINs. Prints items/s.
//
// It reads events as raw bytes (gRPC's generic stub) and only looks at which
// event each one is, without parsing the decoded vehicle: the load client
// should cost little next to the server it measures.
//
//   stream_client --server=127.0.0.1:50051 --streams=4 --items=100000 \
//     --distinct=100 --window=256
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "address:port");
ABSL_FLAG(int, streams, 4, "streams at once");
ABSL_FLAG(int64_t, items, 100000, "items in all, shared by the streams");
ABSL_FLAG(int64_t, distinct, 100, "distinct VINs the items cycle over");
ABSL_FLAG(int64_t, first_vin, 0, "the first VIN's number (fresh VINs per run)");
ABSL_FLAG(int, window, 256, "items of one stream sent but not yet answered");

namespace {

struct StreamResult {
  int64_t terminals = 0;
  int64_t events = 0;
  bool ok = false;
  std::string error;
};

// Whether a serialized DecodeBatchResponse is a terminal event (done = 5,
// failed = 6), skipping the other fields without parsing them.
bool IsTerminal(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  buffer.Dump(&slices);
  std::string bytes;
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  while (uint32_t tag = in.ReadTag()) {
    const int field = static_cast<int>(tag >> 3);
    if (field == 5 || field == 6) return true;
    if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) return false;
  }
  return false;
}

StreamResult RunStream(grpc::GenericStub* stub, int64_t from, int64_t to) {
  StreamResult out;
  grpc::ClientContext ctx;
  grpc::CompletionQueue cq;
  auto stream = stub->PrepareCall(&ctx, "/vin.v1.VinDecoderService/DecodeBatch", &cq);
  void* tag;
  bool ok;
  stream->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  out.ok = ok;
  const int window = absl::GetFlag(FLAGS_window);
  const int64_t distinct = absl::GetFlag(FLAGS_distinct);
  const int64_t first = absl::GetFlag(FLAGS_first_vin);
  int64_t unanswered = 0;
  // One completion queue per stream, driven by this thread: a read and a
  // write may be in progress at once (tags 2 and 3).
  int64_t next = from;
  bool writing = false, writes_done = false, reading = true;
  grpc::ByteBuffer in, out_buffer;
  stream->Read(&in, reinterpret_cast<void*>(2));
  auto start_write = [&] {
    if (writing || writes_done) return;
    if (next == to) {
      writing = writes_done = true;
      stream->WritesDone(reinterpret_cast<void*>(3));
      return;
    }
    if (unanswered >= window) return;
    vin::v1::DecodeBatchRequest req;
    req.set_vin(testing_util::ValidVin(first + next % distinct));
    ++next;
    ++unanswered;
    grpc::Slice slice(req.SerializeAsString());
    out_buffer = grpc::ByteBuffer(&slice, 1);
    writing = true;
    stream->Write(out_buffer, reinterpret_cast<void*>(3));
  };
  start_write();
  while ((reading || writing) && cq.Next(&tag, &ok)) {
    if (tag == reinterpret_cast<void*>(2)) {
      if (!ok) {
        reading = false;
        continue;
      }
      ++out.events;
      if (IsTerminal(in)) {
        ++out.terminals;
        --unanswered;
      }
      stream->Read(&in, reinterpret_cast<void*>(2));
    } else {
      writing = false;
      if (!ok) writes_done = true;
    }
    start_write();
  }
  grpc::Status s;
  stream->Finish(&s, reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  out.ok = s.ok();
  out.error = s.error_message();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  const int streams = absl::GetFlag(FLAGS_streams);
  const int64_t items = absl::GetFlag(FLAGS_items);
  // One channel (connection) per stream, as separate feed clients would.
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  for (int s = 0; s < streams; ++s) {
    args.SetInt("bench.channel", s);  // distinct args: distinct connections
    stubs.push_back(std::make_unique<grpc::GenericStub>(grpc::CreateCustomChannel(
        absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials(), args)));
  }
  std::vector<StreamResult> results(streams);
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  for (int s = 0; s < streams; ++s) {
    threads.emplace_back([&, s] {
      results[s] = RunStream(stubs[s].get(), items * s / streams,
                             items * (s + 1) / streams);
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  int64_t terminals = 0, events = 0;
  bool ok = true;
  for (const auto& r : results) {
    terminals += r.terminals;
    events += r.events;
    if (!r.ok) {
      ok = false;
      std::fprintf(stderr, "stream failed: %s\n", r.error.c_str());
    }
  }
  std::printf("items=%lld answered=%lld events=%lld seconds=%.3f items_per_s=%.0f\n",
              static_cast<long long>(items), static_cast<long long>(terminals),
              static_cast<long long>(events), seconds, terminals / seconds);
  return ok && terminals == items ? 0 : 1;
}
