// Per-connection limits through real gRPC on loopback: concurrent streams,
// keepalive enforcement, idle connections, the buffer quota; and request
// fields over their limits.
#include <grpcpp/create_channel.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/batch_session.h"
#include "testing/server_fixture.h"
#include "testing/vin_gen.h"

namespace {

using testing::HasSubstr;
using testing_util::Item;
using testing_util::RunBatch;
using testing_util::ValidVin;
using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

constexpr char kFord[] = "1FTMW1T88MFA00001";

class LimitsTest : public testing_util::ServerFixture {
 protected:
  std::shared_ptr<grpc::Channel> Channel(const grpc::ChannelArguments& args) {
    return grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", server_->port()),
        grpc::InsecureChannelCredentials(), args);
  }
};

// An open DecodeBatch stream that sends nothing until told to finish.
struct IdleStream {
  explicit IdleStream(vin::v1::VinDecoderService::Stub* stub) {
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    stream = stub->DecodeBatch(&ctx);
  }
  // Decodes one VIN through the stream (so it is surely open at the server)
  // and leaves the stream open.
  bool Settle(const std::string& vin) {
    if (!stream->Write(Item(vin))) return false;
    DecodeBatchResponse r;
    while (stream->Read(&r)) {
      if (r.has_done() || r.has_failed()) return r.has_done();
    }
    return false;
  }
  grpc::Status Finish() {
    stream->WritesDone();
    DecodeBatchResponse r;
    while (stream->Read(&r)) {
    }
    return stream->Finish();
  }
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriter<DecodeBatchRequest, DecodeBatchResponse>>
      stream;
};

TEST_F(LimitsTest, ACallBeyondTheStreamLimitWaitsForAFreeStream) {
  server::ServerOptions o = Defaults();
  o.max_streams_per_connection = 2;
  StartServer(o);
  // A first call settles the connection and its settings.
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(Decode(kFord, &resp).ok());
  IdleStream a(stub_.get()), b(stub_.get());
  ASSERT_TRUE(a.Settle(kFord));
  ASSERT_TRUE(b.Settle(kFord));
  ASSERT_EQ(server_->batch_counters().streams.load(), 2);
  EXPECT_EQ(Decode(kFord, &resp, absl::Milliseconds(500)).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED)
      << "a third stream on the connection waits";
  EXPECT_TRUE(a.Finish().ok());
  EXPECT_TRUE(Decode(kFord, &resp).ok()) << "and goes once one is free";
  EXPECT_TRUE(b.Finish().ok());
}

TEST_F(LimitsTest, AClientThatPingsTooOftenIsSentAway) {
  StartServer();  // clients may ping every 10 s at most
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 200);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, 200);
  auto stub = vin::v1::VinDecoderService::NewStub(Channel(args));
  IdleStream idle(stub.get());
  DecodeBatchResponse r;
  EXPECT_FALSE(idle.stream->Read(&r)) << "the connection is closed";
  const grpc::Status s = idle.stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
}

TEST_F(LimitsTest, AnIdleConnectionIsClosed) {
  server::ServerOptions o = Defaults();
  o.max_connection_idle = absl::Milliseconds(300);
  StartServer(o);
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(Decode(kFord, &resp).ok());
  ASSERT_EQ(channel_->GetState(false), GRPC_CHANNEL_READY);
  EXPECT_TRUE(channel_->WaitForStateChange(
      GRPC_CHANNEL_READY, absl::ToChronoTime(absl::Now() + absl::Seconds(10))))
      << "the server closes the idle connection";
  EXPECT_NE(channel_->GetState(false), GRPC_CHANNEL_READY);
  EXPECT_TRUE(Decode(kFord, &resp).ok()) << "a new call reconnects";
}

TEST_F(LimitsTest, ASmallBufferQuotaStillServesAFeed) {
  server::ServerOptions o = Defaults();
  o.max_memory_bytes = 4 << 20;
  StartServer(o);
  std::vector<DecodeBatchRequest> feed;
  for (int i = 0; i < 2000; ++i) feed.push_back(Item(ValidVin(i % 50)));
  auto out = RunBatch(stub_.get(), feed);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  int done = 0;
  for (const auto& e : out.events) done += e.has_done();
  EXPECT_EQ(done, 2000);
}

// A model-year hint out of range is a request problem named as such, never
// an invalid VIN: unary INVALID_ARGUMENT naming the field, batch
// FAILED(INVALID_REQUEST); vPIC is not asked.
TEST_F(LimitsTest, AModelYearHintOutOfRangeIsNamedAsSuch) {
  StartServer();
  vin::v1::DecodeRequest req;
  req.set_vin(kFord);
  req.set_model_year(1900);
  vin::v1::DecodeResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub_->Decode(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // Named as the hint's problem (rule 19: with the years this VIN allows),
  // not as the VIN's.
  EXPECT_THAT(s.error_message(), HasSubstr("model_year 1900"));
  EXPECT_THAT(s.error_message(), HasSubstr("1991 or 2021"));
  EXPECT_THAT(s.error_message(), testing::Not(HasSubstr("VIN must")));
  EXPECT_THAT(s.error_message(), testing::Not(HasSubstr("check digit")));
  DecodeBatchRequest item = Item(kFord, "y");
  item.set_model_year(2101);
  auto out = RunBatch(stub_.get(), {item});
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].failed().reason(), vin::v1::FAILURE_REASON_INVALID_REQUEST);
  EXPECT_THAT(out.events[0].failed().message(), HasSubstr("2101"));
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(LimitsTest, AnOversizedRequestIdFailsTheItemNamingTheLimit) {
  StartServer();
  const std::string long_id(64 * 1000, 'r');
  const std::string long_vin(60 * 1000, 'V');
  auto out = RunBatch(stub_.get(), {Item(kFord, long_id), Item(long_vin, "v"),
                                    Item(kFord, "ok")});
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_EQ(out.events.size(), 4u);  // FAILED; FAILED; QUEUED, DONE
  std::map<std::string, std::vector<DecodeBatchResponse>> by_id;
  for (const auto& e : out.events) by_id[e.request_id()].push_back(e);
  const auto& cut = by_id[long_id.substr(0, 128)];
  ASSERT_EQ(cut.size(), 1u) << "echoed cut to 128 bytes";
  EXPECT_EQ(cut[0].failed().reason(), vin::v1::FAILURE_REASON_INVALID_REQUEST);
  EXPECT_THAT(cut[0].failed().message(), HasSubstr("64000 bytes"));
  EXPECT_THAT(cut[0].failed().message(), HasSubstr("128"));
  EXPECT_FALSE(cut[0].failed().retryable());
  const auto& vin = by_id["v"];
  ASSERT_EQ(vin.size(), 1u);
  EXPECT_EQ(vin[0].failed().reason(), vin::v1::FAILURE_REASON_INVALID_VIN);
  EXPECT_EQ(vin[0].vin(), absl::StrCat(std::string(24, 'V'), "... (60000 bytes)"));
  EXPECT_LT(vin[0].ByteSizeLong(), 400u) << "the 60 KB input is not echoed";
  EXPECT_TRUE(by_id["ok"].back().has_done());
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
}

TEST_F(LimitsTest, AnOversizedUnaryVinIsInvalidArgumentWithoutEcho) {
  StartServer();
  vin::v1::DecodeResponse resp;
  const grpc::Status s = Decode(std::string(60 * 1000, 'V'), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("17 characters, got 60000"));
  EXPECT_LT(s.error_message().size(), 200u);
}

}  // namespace
