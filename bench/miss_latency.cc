// The latency vin-server adds to a miss, at a steady rate: unary Decodes of
// distinct VINs (none cached, none staggered) against the real binary in
// front of an in-process fake vPIC, which notes when each request arrives
// and when its answer was written. Prints p50/p90/p99 of
//   in:  from the call sent to the upstream request arriving at vPIC, and
//   out: from vPIC's answer written to the caller receiving the result,
// which hold the server's work and loopback's transit both ways.
//
//   miss_latency --server_bin=build/vin-server --rate=1000 --calls=5000
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/time/clock.h"
#include "fake_vpic/fake_vpic.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

ABSL_FLAG(std::string, server_bin, "build/vin-server", "the vin-server binary");
ABSL_FLAG(int, rate, 1000, "calls per second");
ABSL_FLAG(int, calls, 5000, "calls in all (distinct VINs)");

namespace {

void Print(const char* name, std::vector<absl::Duration> d) {
  std::sort(d.begin(), d.end());
  auto at = [&](double q) {
    return absl::ToDoubleMicroseconds(d[static_cast<size_t>(q * (d.size() - 1))]);
  };
  std::printf("%-5s p50 %7.0f us   p90 %7.0f us   p99 %7.0f us   max %7.0f us\n",
              name, at(0.5), at(0.9), at(0.99), at(1.0));
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  auto fake = fakevpic::FakeVpic::Start();
  if (!fake.ok()) return 1;
  testing_util::Subprocess server;
  if (!server.Start({absl::GetFlag(FLAGS_server_bin), "--listen=127.0.0.1:0",
                     "--vpic_base_url=" + (*fake)->base_url(),
                     "--upstream_rate=0"})) {
    std::fprintf(stderr, "cannot start %s\n", absl::GetFlag(FLAGS_server_bin).c_str());
    return 1;
  }
  auto started = server.WaitForLine("listening on", absl::Seconds(20));
  if (!started) return 1;
  const int port = std::stoi(started->substr(started->find("(port ") + 6));
  auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));

  const int calls = absl::GetFlag(FLAGS_calls);
  const absl::Duration gap = absl::Seconds(1) / absl::GetFlag(FLAGS_rate);
  const int64_t first = absl::ToUnixMicros(absl::Now()) % 1000000000;
  struct Call {
    std::string vin;
    grpc::ClientContext ctx;
    vin::v1::DecodeRequest req;
    vin::v1::DecodeResponse resp;
    absl::Time sent, done;
    bool ok = false;
  };
  std::vector<std::unique_ptr<Call>> all;
  absl::BlockingCounter finished(calls);
  absl::Time next = absl::Now();
  for (int i = 0; i < calls; ++i) {
    auto c = std::make_unique<Call>();
    c->vin = testing_util::ValidVin(first + i);
    c->req.set_vin(c->vin);
    absl::SleepFor(next - absl::Now());  // pacing the load, not waiting on it
    next += gap;
    Call* raw = c.get();
    all.push_back(std::move(c));
    raw->sent = absl::Now();
    stub->async()->Decode(&raw->ctx, &raw->req, &raw->resp,
                          [raw, &finished](grpc::Status s) {
                            raw->done = absl::Now();
                            raw->ok = s.ok();
                            finished.DecrementCount();
                          });
  }
  finished.Wait();
  absl::flat_hash_map<std::string, fakevpic::RequestRecord> asked;
  int batched = 0;
  for (const auto& r : (*fake)->Requests()) {
    asked[r.vin] = r;
    for (const auto& [vin, year] : r.batch) asked[vin] = r;
    batched += r.is_batch() ? static_cast<int>(r.batch.size()) : 0;
  }
  std::vector<absl::Duration> in, out, total;
  int failed = 0;
  for (const auto& c : all) {
    auto it = asked.find(c->vin);
    if (!c->ok || it == asked.end()) {
      ++failed;
      continue;
    }
    in.push_back(it->second.time - c->sent);
    out.push_back(c->done - it->second.answered);
    total.push_back(in.back() + out.back());
  }
  std::printf("calls=%d rate=%d/s failed=%d batched=%d (unary, distinct VINs, "
              "fake vPIC in process)\n",
              calls, absl::GetFlag(FLAGS_rate), failed, batched);
  Print("in", in);
  Print("out", out);
  Print("added", total);
  server.Signal(SIGTERM);
  server.Wait(absl::Seconds(20));
  return failed == 0 ? 0 : 1;
}
