// What believing Redis costs a replica (DESIGN "Beyond one machine",
// src/fleet/trust.h): per call, the seal on a value written, the checks of
// a cached result read back (a claim's hit), and of a DONE event (every
// replica reads every one), without and with the fleet's secret. Results
// of the fake vPIC's size, encoded by the server's own mapping.
//
// Usage: fleet_trust_bench [N]   (N calls of each, default 200000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "fleet/event_mapping.h"
#include "fleet/seal.h"
#include "fleet/trust.h"
#include "server/common/proto_mapping.h"

namespace {

constexpr char kVin[] = "1HGCM82633A004352";

// ns per call of `fn`, over `n` calls.
double Time(int n, const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) fn();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / n;
}

// A result with as many variables as vPIC's answers carry (~140).
std::string Result() {
  engine::DecodeResult r;
  r.vin = kVin;
  r.vehicle.make = "HONDA";
  r.vehicle.model = "Accord";
  r.vehicle.model_year = 2003;
  for (int i = 0; i < 140; ++i) {
    r.vehicle.attributes["Variable" + std::to_string(i)] =
        "some value " + std::to_string(i);
  }
  r.source = engine::Source::kCache;
  r.decode_time = absl::Now();
  return server::EncodeResult(r);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200000;
  const std::string result = Result();
  const std::string fleet_key = std::string(kVin) + "|0";
  const std::string redis_key = "vin:result:" + fleet_key;
  const auto secret =
      *fleet::FleetSecret::Create("a fleet secret of 32 bytes......");
  std::printf("result: %zu bytes; %d calls each\n", result.size(), n);
  for (const bool with_secret : {false, true}) {
    fleet::Trust trust;
    if (with_secret) trust.secret = secret;
    trust.read_result = server::CheckResultBytes;
    const std::string stored =
        fleet::Seal(result, redis_key, absl::Now(), trust.secret.get());
    engine::FleetEvent done;
    done.kind = engine::FleetEvent::Kind::kDone;
    done.key = fleet_key;
    done.encoded = std::make_shared<const std::string>(result);
    done.cached = done.encoded;
    const std::string event = fleet::EncodeEvent(done);
    const double seal = Time(n, [&] {
      fleet::Seal(result, redis_key, absl::Now(), trust.secret.get());
    });
    const double check = Time(n, [&] {
      fleet::CheckCachedResult(stored, redis_key, fleet_key, absl::Now(),
                               trust);
    });
    std::printf("%-10s seal %6.0f ns   cached result checked %6.0f ns\n",
                with_secret ? "secret" : "no secret", seal, check);
    if (with_secret) continue;
    // (Unsigned only: a signed event is refused when seen again; the MAC
    // costs what it costs a cached result, above.)
    fleet::EventChecks checks(&trust);
    const double check_event =
        Time(n, [&] { checks.Check(event, "vin:events", absl::Now()); });
    std::printf("%-10s DONE event checked (two results) %6.0f ns\n", "",
                check_event);
  }
  return 0;
}
