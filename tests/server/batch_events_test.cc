// The bytes of DecodeBatch events: a DONE spliced from a result's encoded
// bytes reads back as the same message built field by field.
#include "server/batch_events.h"

#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/common/proto_mapping.h"

namespace server {
namespace {

vin::v1::DecodeBatchResponse Read(const grpc::ByteBuffer& bytes) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(bytes.Dump(&slices).ok());
  std::string all;
  for (const auto& s : slices) {
    all.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  vin::v1::DecodeBatchResponse out;
  EXPECT_TRUE(out.ParseFromString(all));
  return out;
}

engine::DecodeResult Result() {
  engine::DecodeResult r;
  r.vin = "1FTMW1T88MFA00001";
  r.vehicle.make = "FORD";
  r.vehicle.model = "F-150";
  r.vehicle.model_year = 2021;
  for (int i = 0; i < 150; ++i) {  // a result longer than 127 bytes
    r.vehicle.attributes[absl::StrCat("Variable", i)] = absl::StrCat("value ", i);
  }
  r.notes = {{"0", "VIN decoded clean"}};
  r.source = engine::Source::kCache;
  r.decode_time = absl::FromUnixSeconds(1700000000);
  return r;
}

TEST(DoneBytes, SplicedResultReadsBackAsTheBuiltMessage) {
  engine::DecodeResult built = Result();
  engine::DecodeResult spliced = built;
  spliced.encoded = std::make_shared<const std::string>(EncodeResult(built));
  spliced.vehicle = vpic::Vehicle();  // as the cache keeps it
  vin::v1::DecodeBatchResponse want;
  want.set_request_id("stock-17");
  want.set_vin(built.vin);
  BuildProto(built, want.mutable_done()->mutable_result());
  for (const engine::DecodeResult* r : {&built, &spliced}) {
    const vin::v1::DecodeBatchResponse got =
        Read(DoneBytes("stock-17", built.vin, *r));
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, want))
        << got.DebugString();
  }
}

// A live result's bytes recoded as its cache answer read back as the cache
// answer the encoder makes, and are as long (each field once), with and
// without notes and attempts; bytes that do not parse are refused. (Not
// compared byte for byte: protobuf writes a map in no fixed order.)
TEST(CacheAnswerBytes, AreWhatTheEncoderMakesOfTheCacheAnswer) {
  engine::DecodeResult full = Result();
  engine::DecodeResult bare;
  bare.vin = "1HGCM82633A004352";
  bare.decode_time = absl::FromUnixSeconds(1);
  for (engine::DecodeResult live : {full, bare}) {
    for (int attempts : {0, 1, 300}) {
      live.source = engine::Source::kVpic;
      live.attempts = attempts;
      engine::DecodeResult cached = live;
      cached.source = engine::Source::kCache;
      cached.attempts = 0;
      const absl::optional<std::string> recoded =
          CacheAnswerBytes(EncodeResult(live));
      ASSERT_TRUE(recoded.has_value());
      vin::v1::DecodeResult got, want;
      ASSERT_TRUE(got.ParseFromString(*recoded));
      BuildProto(cached, &want);
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, want))
          << attempts << " attempts: " << got.ShortDebugString();
      EXPECT_EQ(recoded->size(), want.ByteSizeLong());
    }
  }
  const std::string live = EncodeResult(full);
  EXPECT_FALSE(CacheAnswerBytes(live.substr(0, live.size() - 3)).has_value());
  EXPECT_FALSE(
      CacheAnswerBytes(std::string("\xff\xff\xff\xff", 4)).has_value());
}

// Protobuf's own conversions: a time before 1970 and a negative span keep
// nanos within the well-known types' ranges (seconds and nanos of one sign
// for Duration; nanos in [0, 1e9) for Timestamp).
TEST(ProtoTimes, BeforeTheEpochAndNegativeSpansAreValid) {
  engine::DecodeResult r = Result();
  r.decode_time = absl::FromUnixMillis(-1500);  // 1969-12-31T23:59:58.5Z
  vin::v1::DecodeResult out;
  BuildProto(r, &out);
  EXPECT_EQ(out.decode_time().seconds(), -2);
  EXPECT_EQ(out.decode_time().nanos(), 500000000);
  google::protobuf::Duration d;
  ToProto(-absl::Milliseconds(1500), &d);
  EXPECT_EQ(d.seconds(), -1);
  EXPECT_EQ(d.nanos(), -500000000);
  ToProto(absl::Milliseconds(2250), &d);
  EXPECT_EQ(d.seconds(), 2);
  EXPECT_EQ(d.nanos(), 250000000);
}

TEST(ParseRequest, ReadsARequestAndRefusesGarbage) {
  vin::v1::DecodeBatchRequest sent;
  sent.set_vin("1HGCM82633A004352");
  sent.set_request_id("r");
  sent.set_model_year(2003);
  grpc::Slice slice(sent.SerializeAsString());
  vin::v1::DecodeBatchRequest got;
  ASSERT_TRUE(ParseRequest(grpc::ByteBuffer(&slice, 1), &got));
  EXPECT_EQ(got.vin(), sent.vin());
  EXPECT_EQ(got.model_year(), 2003);
  grpc::Slice garbage(std::string("\xff\xff\xff\xff", 4));
  EXPECT_FALSE(ParseRequest(grpc::ByteBuffer(&garbage, 1), &got));
}

}  // namespace
}  // namespace server
