// Offline unary latency (issue 17's benchmark): the real vin-server with the
// snapshot and a vPIC address where nothing listens. A few Decodes open the
// circuit breaker (health of vin.v1.VinDecoderService.upstream turns
// NOT_SERVING); then 1,000 sequential Decodes of distinct new VINs, each
// answered at once from the snapshot. Prints p50/p90/p99 and the max
// (goal: p99 <= 5 ms).
//
//   offline_unary --server_bin=build/vin-server --snapshot=.data/vpic.lite.db
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "testing/redis_server.h"  // FreePort
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

ABSL_FLAG(std::string, server_bin, "build/vin-server", "the vin-server binary");
ABSL_FLAG(std::string, snapshot, ".data/vpic.lite.db", "the vPIC snapshot");
ABSL_FLAG(int, calls, 1000, "sequential Decodes once the breaker is open");


int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  testing_util::Subprocess server;
  if (!server.Start({absl::GetFlag(FLAGS_server_bin), "--listen=127.0.0.1:0",
                     "--snapshot_path=" + absl::GetFlag(FLAGS_snapshot),
                     absl::StrCat("--vpic_base_url=http://127.0.0.1:",
                                  testing_util::FreePort(), "/api/vehicles")})) {
    std::fprintf(stderr, "cannot start the server\n");
    return 1;
  }
  auto started = server.WaitForLine("listening on", absl::Seconds(30));
  if (!started) return 1;
  const int port = std::stoi(started->substr(started->find("(port ") + 6));
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                     grpc::InsecureChannelCredentials());
  auto stub = vin::v1::VinDecoderService::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);
  auto decode = [&](const std::string& vin) {
    grpc::ClientContext ctx;
    vin::v1::DecodeRequest req;
    req.set_vin(vin);
    vin::v1::DecodeResponse resp;
    return stub->Decode(&ctx, req, &resp);
  };
  // Open the breaker: concurrent decodes whose attempts all fail.
  std::vector<std::thread> openers;
  for (int i = 0; i < 8; ++i) {
    openers.emplace_back([&, i] { decode(testing_util::ValidVin(900000 + i)); });
  }
  for (auto& t : openers) t.join();
  grpc::ClientContext hctx;
  grpc::health::v1::HealthCheckRequest hreq;
  hreq.set_service("vin.v1.VinDecoderService.upstream");
  grpc::health::v1::HealthCheckResponse hresp;
  health->Check(&hctx, hreq, &hresp);
  if (hresp.status() != grpc::health::v1::HealthCheckResponse::NOT_SERVING) {
    std::fprintf(stderr, "the breaker did not open\n");
    return 1;
  }
  std::vector<double> ms;
  int failed = 0;
  for (int i = 0; i < absl::GetFlag(FLAGS_calls); ++i) {
    const absl::Time t0 = absl::Now();
    failed += !decode(testing_util::ValidVin(i)).ok();
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[static_cast<size_t>(q * (ms.size() - 1))]; };
  std::printf(
      "offline unary, breaker open: %zu sequential Decodes, p50 %.2f ms, p90 "
      "%.2f ms, p99 %.2f ms, max %.2f ms, failed %d (goal p99 <= 5 ms)\n",
      ms.size(), at(0.5), at(0.9), at(0.99), ms.back(), failed);
  server.Signal(SIGTERM);
  server.Wait(absl::Seconds(20));
  return 0;
}
