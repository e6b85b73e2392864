// The ceiling the throughput benchmark compares vin-server with: a bare
// callback-API DecodeBatch server with no engine, answering every item with
// QUEUED and then a DONE carrying the same vehicle a real cache hit carries
// (built and serialized for each item, as a per-item server would).
//
//   ceiling_server --listen=127.0.0.1:0   (prints "listening on ... (port N)")
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <deque>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/types.h"
#include "fake_vpic/answers.h"
#include "server/proto_mapping.h"
#include "vin/v1/vin.grpc.pb.h"
#include "vpic/parse.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "address:port");
ABSL_FLAG(std::string, vin, "1HGAAAAA0JA000001", "the VIN whose decode is sent");

namespace {

using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

// What a cache hit of `vin` answers: the fake vPIC's decode of it.
engine::DecodeResult CacheHit(const std::string& vin) {
  auto answers = fakevpic::Answers::Load(VIN_FIXTURE_DIR);
  auto decoded = vpic::ParseDecodeVinValues(answers->Normal(vin, 0));
  engine::DecodeResult r;
  r.vin = vin;
  r.vehicle = decoded->vehicle;
  r.notes = decoded->notes;
  r.source = engine::Source::kCache;
  r.attempts = 0;
  r.decode_time = absl::Now();
  return r;
}

class Call final
    : public grpc::ServerBidiReactor<DecodeBatchRequest, DecodeBatchResponse> {
 public:
  explicit Call(const engine::DecodeResult* hit) : hit_(hit) {
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    if (!ok) {
      read_done_ = true;
    } else {
      DecodeBatchResponse queued;
      queued.set_request_id(request_.request_id());
      queued.set_vin(request_.vin());
      queued.mutable_queued();
      DecodeBatchResponse done;
      done.set_request_id(request_.request_id());
      done.set_vin(request_.vin());
      server::ToProto(*hit_, done.mutable_done()->mutable_result());
      queue_.push_back(std::move(queued));
      queue_.push_back(std::move(done));
      StartRead(&request_);
    }
    AdvanceLocked();
  }
  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    queue_.pop_front();
    if (!ok) queue_.clear();
    AdvanceLocked();
  }
  void OnDone() override { delete this; }

 private:
  void AdvanceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!writing_ && !queue_.empty()) {
      writing_ = true;
      StartWrite(&queue_.front());
    } else if (!writing_ && read_done_ && !finished_) {
      finished_ = true;
      Finish(grpc::Status::OK);
    }
  }

  const engine::DecodeResult* const hit_;
  absl::Mutex mu_;
  DecodeBatchRequest request_;
  std::deque<DecodeBatchResponse> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

class Service final : public vin::v1::VinDecoderService::CallbackService {
 public:
  explicit Service(engine::DecodeResult hit) : hit_(std::move(hit)) {}
  grpc::ServerBidiReactor<DecodeBatchRequest, DecodeBatchResponse>* DecodeBatch(
      grpc::CallbackServerContext*) override {
    return new Call(&hit_);
  }

 private:
  const engine::DecodeResult hit_;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Service service(CacheHit(absl::GetFlag(FLAGS_vin)));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen),
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  std::cout << "ceiling_server listening on " << absl::GetFlag(FLAGS_listen)
            << " (port " << port << ")" << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  server->Shutdown();
  return 0;
}
