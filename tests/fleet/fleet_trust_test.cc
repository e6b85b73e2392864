// "A Redis that cannot lie" (DESIGN rule 19 in a fleet): whoever can write
// to the fleet's Redis -- here the test itself, with its own connection --
// cannot make a replica answer what vPIC did not say, nor hold its callers
// longer than its own flags allow. Real redis-server, VinServer replicas in
// this process, the fake vPIC; what a caller gets is asserted, and the
// metric an operator reads. The tables of the checks themselves are in
// trust_test.cc.
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet/event_mapping.h"
#include "fleet/seal.h"
#include "fleet_test_fixture.h"
#include "gtest/gtest.h"
#include "server/common/proto_mapping.h"
#include "testing/batch_session.h"
#include "testing/redis_probe.h"
#include "testing/retry_info.h"
#include "testing/scrape.h"
#include "testing/vin_gen.h"

namespace fleet_test {
namespace {

using testing_util::RedisCall;
using testing_util::ValidVin;
using vin::v1::DecodeResponse;

// A Tesla VIN (WMI 5YJ, which the fake vPIC decodes as TESLA).
std::string TeslaVin() {
  std::string v = "5YJ3E1EA0KF317000";
  v[8] = vin::ComputeCheckDigit(v);
  return v;
}

std::string ResultKey(const std::string& vin) {
  return absl::StrCat("vin:result:", vin, "|0");
}

class FleetTrustTest : public FleetTest {
 protected:
  void TearDown() override {
    FleetTest::TearDown();
    if (!secret_path_.empty()) std::remove(secret_path_.c_str());
  }

  static server::ServerOptions TrustDefaults() {
    server::ServerOptions o = Defaults();
    o.metrics_listen = "127.0.0.1:0";
    return o;
  }
  // Options whose replicas share a fleet secret (--fleet_secret_file).
  server::ServerOptions WithSecret(server::ServerOptions o) {
    secret_path_ = absl::StrCat("/tmp/vin-fleet-secret-", getpid());
    std::ofstream(secret_path_) << "a secret the replicas share, 32+\n";
    o.fleet.secret_file = secret_path_;
    return o;
  }

  // vin_fleet_rejected_total{what} as `replica` exports it.
  double Rejected(int replica, const std::string& what) {
    return testing_util::MetricAt(
        servers_[replica]->metrics_port(),
        absl::StrCat("vin_fleet_rejected_total{what=\"", what, "\"}"));
  }

  // Writes `value` at `key` as any client of Redis may.
  void Set(const std::string& key, const std::string& value) {
    ASSERT_TRUE(RedisCall(redis_.port(), {"SET", key, value}).ok());
  }
  absl::optional<std::string> Get(const std::string& key) {
    auto v = RedisCall(redis_.port(), {"GET", key});
    if (!v.ok() || v->type != fleet::RedisValue::Type::kString)
      return absl::nullopt;
    return v->str;
  }
  // The result stored at `key`, as a replica reads it (seal stripped).
  absl::optional<engine::DecodeResult> StoredResult(const std::string& key) {
    auto value = Get(key);
    if (!value) return absl::nullopt;
    auto opened = fleet::OpenSeal(*value);
    engine::DecodeResult r;
    if (!opened.ok() ||
        !server::DecodeResultBytes(std::string(opened->payload), &r)) {
      return absl::nullopt;
    }
    return r;
  }

  std::string secret_path_;
};

// The 87599h59m: a breaker event with a 10-year cool-down, sent by
// anyone. Every replica's breaker opens (the event parses, and without a
// secret nothing says who sent it), but callers are told to come back
// within --breaker_cooldown_max, and get real decodes once it has passed.
TEST_F(FleetTrustTest, AForgedTenYearCooldownHoldsCallersNoLongerThanTheMax) {
  server::ServerOptions o = TrustDefaults();
  o.engine.breaker.failures = 5;
  o.engine.breaker.cooldown = absl::Seconds(1);
  o.engine.breaker.cooldown_max = absl::Seconds(3);
  o.fleet.timeout = absl::Seconds(2);
  StartReplicas(o, 2);
  engine::FleetEvent forged;
  forged.kind = engine::FleetEvent::Kind::kBreakerOpened;
  forged.origin = "not a replica";
  forged.breaker.cooldown = absl::Hours(87600);
  forged.breaker.unreachable_since = absl::Now();
  forged.breaker.last_error = {503, "http", "forged"};
  ASSERT_TRUE(RedisCall(redis_.port(),
                        {"PUBLISH", "vin:events", fleet::EncodeEvent(forged)})
                  .ok());
  const absl::Time published = absl::Now();
  ASSERT_TRUE(testing_util::Eventually([&] {
    return servers_[0]->metrics().upstream_breaker_state.value() == 1 &&
           servers_[1]->metrics().upstream_breaker_state.value() == 1;
  })) << "the event reached both replicas";

  DecodeResponse r;
  const grpc::Status refused = Decode(0, ValidVin(9101), &r);
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.error_message();
  const auto delay = testing_util::RetryDelayOf(refused);
  ASSERT_TRUE(delay.has_value()) << "RetryInfo attached";
  EXPECT_LE(*delay, absl::Seconds(3)) << refused.error_message();
  EXPECT_EQ(refused.error_message().find("87599h"), std::string::npos)
      << refused.error_message();

  // Within the cool-down's maximum (and slack for a loaded machine) the
  // fleet's probe goes, vPIC answers, and callers get real decodes.
  grpc::Status last;
  ASSERT_TRUE(testing_util::Eventually(
      [&] {
        last = Decode(1, ValidVin(9102), &r);
        return last.ok();
      },
      absl::Seconds(20)))
      << last.error_message();
  EXPECT_LT(absl::Now() - published, absl::Seconds(13));
  EXPECT_EQ(r.result().vin(), ValidVin(9102));
  EXPECT_EQ(r.result().vehicle().make(), "HONDA");
  EXPECT_EQ(r.result().source(), vin::v1::SOURCE_VPIC);
}

// With the fleet's secret, the same forged event is not believed at all.
TEST_F(FleetTrustTest, WithTheSecretAnUnsignedBreakerEventIsIgnored) {
  server::ServerOptions o = WithSecret(TrustDefaults());
  o.engine.breaker.failures = 5;
  StartReplicas(o, 2);
  engine::FleetEvent forged;
  forged.kind = engine::FleetEvent::Kind::kBreakerOpened;
  forged.origin = "not a replica";
  forged.breaker.cooldown = absl::Hours(87600);
  ASSERT_TRUE(RedisCall(redis_.port(),
                        {"PUBLISH", "vin:events", fleet::EncodeEvent(forged)})
                  .ok());
  ASSERT_TRUE(testing_util::Eventually([&] {
    return Rejected(0, "event_unsigned") == 1 &&
           Rejected(1, "event_unsigned") == 1;
  })) << "both replicas read it, and rejected it";
  EXPECT_EQ(servers_[0]->metrics().upstream_breaker_state.value(), 0);
  EXPECT_EQ(servers_[1]->metrics().upstream_breaker_state.value(), 0);
  DecodeResponse r;
  const grpc::Status s = Decode(0, ValidVin(9201), &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.result().source(), vin::v1::SOURCE_VPIC);
  // What the replicas write is signed: another replica's DONE was believed.
  EXPECT_EQ(Rejected(1, "event_unsigned"), 1);
  auto stored = fleet::OpenSeal(*Get(ResultKey(ValidVin(9201))));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->mac.size(), 32u) << "HMAC-SHA256";
}

// Garbage at a VIN's result key: the caller (unary, and a batch item) gets
// a live decode from vPIC, never "DONE with an empty vehicle"; the garbage
// is deleted and counted.
TEST_F(FleetTrustTest, GarbageAtAResultKeyIsDecodedLiveDeletedAndCounted) {
  StartReplicas(TrustDefaults(), 2);
  const std::string vin = ValidVin(9301), batch_vin = ValidVin(9302),
                    failing_vin = ValidVin(9303);
  for (const std::string& v : {vin, batch_vin, failing_vin}) {
    Set(ResultKey(v), "\x01\x02 not a decode at all");
  }
  DecodeResponse r;
  const grpc::Status s = Decode(0, vin, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(r.result().vehicle().make(), "HONDA");
  EXPECT_EQ(r.result().attempts(), 1);
  EXPECT_EQ(fake_->RequestCount(vin), 1);
  // The key now holds the live decode, stored again.
  auto stored = StoredResult(ResultKey(vin));
  ASSERT_TRUE(stored.has_value()) << "a result, not the garbage";
  EXPECT_EQ(stored->vin, vin);

  auto batch =
      testing_util::RunBatch(stubs_[1].get(), {testing_util::Item(batch_vin)});
  ASSERT_TRUE(batch.status.ok()) << batch.status.error_message();
  ASSERT_FALSE(batch.events.empty());
  const auto& last = batch.events.back();
  ASSERT_TRUE(last.has_done()) << last.DebugString();
  EXPECT_EQ(last.done().result().vin(), batch_vin);
  EXPECT_EQ(last.done().result().vehicle().make(), "HONDA");
  EXPECT_EQ(last.done().result().source(), vin::v1::SOURCE_VPIC);

  // vPIC refuses this one for good: nothing is stored again, and the
  // garbage is gone.
  fake_->Script(failing_vin, {*fakevpic::Step::Parse("404")});
  EXPECT_EQ(Decode(0, failing_vin, &r).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(Get(ResultKey(failing_vin)).has_value()) << "deleted";
  EXPECT_EQ(Rejected(0, "result_unparsable") + Rejected(1, "result_unparsable"),
            3);
}

// Another VIN's result under this VIN's key -- a TESLA for a HONDA -- is
// never answered as this VIN's: moved with its seal, or without one.
TEST_F(FleetTrustTest, AnotherVinsResultUnderThisKeyIsNeverAnsweredAsThisVin) {
  StartReplicas(TrustDefaults(), 2);
  const std::string tesla = TeslaVin();
  DecodeResponse r;
  ASSERT_TRUE(Decode(0, tesla, &r).ok());
  ASSERT_EQ(r.result().vehicle().make(), "TESLA");
  auto tesla_value = Get(ResultKey(tesla));
  ASSERT_TRUE(tesla_value.has_value()) << "stored by replica 0";
  auto unsealed = fleet::OpenSeal(*tesla_value);
  ASSERT_TRUE(unsealed.ok());
  const std::string honda = ValidVin(9401), honda2 = ValidVin(9402);
  Set(ResultKey(honda), *tesla_value);  // sealed for the Tesla's key
  Set(ResultKey(honda2), std::string(unsealed->payload));  // no seal
  for (const std::string& v : {honda, honda2}) {
    const grpc::Status s = Decode(1, v, &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(r.result().vin(), v);
    EXPECT_EQ(r.result().vehicle().make(), "HONDA");
    EXPECT_EQ(r.result().source(), vin::v1::SOURCE_VPIC);
  }
  EXPECT_EQ(Rejected(1, "result_wrong_key"), 1);
  EXPECT_EQ(Rejected(1, "result_wrong_vin"), 1);
}

// With the fleet's secret, a well-formed result of the right VIN that no
// replica signed is not believed either.
TEST_F(FleetTrustTest, WithTheSecretAnUnsignedResultIsRejected) {
  StartReplicas(WithSecret(TrustDefaults()), 2);
  const std::string vin = ValidVin(9501);
  engine::DecodeResult forged;
  forged.vin = vin;
  forged.vehicle.make = "FORGED";
  forged.source = engine::Source::kCache;
  forged.decode_time = absl::Now();
  Set(ResultKey(vin), server::EncodeResult(forged));
  DecodeResponse r;
  const grpc::Status s = Decode(0, vin, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.result().vehicle().make(), "HONDA");
  EXPECT_EQ(r.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(Rejected(0, "result_unsigned"), 1);
  // Replica 1 answers from what replica 0 stored and signed.
  ASSERT_TRUE(Decode(1, vin, &r).ok());
  EXPECT_EQ(r.result().vehicle().make(), "HONDA");
  EXPECT_EQ(r.result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(fake_->RequestCount(vin), 1);
}

}  // namespace
}  // namespace fleet_test
