// `vinctl batch` runs that go wrong as a whole: deadline, unreachable or
// failing server, malformed input, rows that cannot be sent.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/batch_test_util.h"

namespace vinctl {
namespace {

using testing::AnyOf;
using testing::HasSubstr;
using testing::StartsWith;
using namespace testing_batch;  // NOLINT: constants and helpers of the tests

TEST_F(BatchTest, StreamDeadlineAnswersEveryRecordAndFails) {
  StartServer();
  Script(kHonda, "hang");
  BatchOptions options;
  options.deadline = absl::Milliseconds(700);
  auto summary = Run(absl::StrCat("vin\n", kFord, "\n", kHonda, "\n"), options);
  EXPECT_NE(BatchExitCode(summary), kExitOk);
  const CsvOutput out = ParseOutput(out_.str());
  ASSERT_EQ(out.rows.size(), 2u) << "every record read is in the output";
  EXPECT_EQ(out.rows[0]["status"], "done");
  EXPECT_EQ(out.rows[1]["status"], "failed");
  // The server may fail the item itself just before the deadline, or the
  // stream may end first: both are honest answers.
  EXPECT_THAT(out.rows[1]["failure_reason"],
              AnyOf("DEADLINE_EXCEEDED", "STREAM_ENDED"));
  if (!summary.ok()) {
    EXPECT_EQ(summary.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_EQ(BatchExitCode(summary), kExitError);
  }
}

// A VinDecoderService whose DecodeBatch answers the first item, reads the
// rest, and ends the stream with an error without answering them.
class AnswersOneThenFails final : public vin::v1::VinDecoderService::Service {
 public:
  grpc::Status DecodeBatch(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<vin::v1::DecodeBatchResponse,
                               vin::v1::DecodeBatchRequest>* stream) override {
    vin::v1::DecodeBatchRequest request;
    bool first = true;
    while (stream->Read(&request)) {
      if (!first) continue;
      first = false;
      vin::v1::DecodeBatchResponse response;
      response.set_request_id(request.request_id());
      response.mutable_queued();
      stream->Write(response);
      response.mutable_done()->mutable_result()->set_vin(request.vin());
      stream->Write(response);
    }
    return grpc::Status(grpc::StatusCode::INTERNAL, "boom");
  }
};

TEST(BatchStreamError, UnansweredRecordsAreStreamEndedAndTheRunFails) {
  AnswersOneThenFails service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));

  std::istringstream in(
      absl::StrCat("id,vin\n1,", kFord, "\n2,", kHonda, "\n3,", kBuick, "\n"));
  std::ostringstream out;
  std::ostringstream progress;
  BatchOptions options;
  options.deadline = absl::Seconds(60);
  auto summary = RunBatch(options, stub.get(), in, out, progress);
  server->Shutdown();

  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(summary.status().message()), HasSubstr("boom"));
  EXPECT_EQ(BatchExitCode(summary), kExitError);
  const CsvOutput parsed = ParseOutput(out.str());
  ASSERT_EQ(parsed.rows.size(), 3u);
  EXPECT_EQ(parsed.rows[0]["status"], "done");
  for (int i : {1, 2}) {
    EXPECT_EQ(parsed.rows[i]["id"], absl::StrCat(i + 1));
    EXPECT_EQ(parsed.rows[i]["status"], "failed");
    EXPECT_EQ(parsed.rows[i]["failure_reason"], "STREAM_ENDED");
    EXPECT_THAT(parsed.rows[i]["error"], HasSubstr("INTERNAL: boom"));
  }
  EXPECT_THAT(progress.str(),
              HasSubstr("3 records, 1 done, 2 failed (STREAM_ENDED 2)"));
}

TEST_F(BatchTest, UnreachableServerIsAnError) {
  auto channel =
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
  auto stub = vin::v1::VinDecoderService::NewStub(channel);
  auto summary = RunOn(stub.get(), absl::StrCat(kFord, "\n"), {});
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(BatchExitCode(summary), kExitError);
}

TEST_F(BatchTest, MalformedCsvStopsAfterAnsweringWhatWasRead) {
  StartServer();
  auto summary =
      Run(absl::StrCat("vin,x\n", kFord, ",1\n", kHonda, ",\"open\n"));
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(summary.status().message()), HasSubstr("line 3"));
  EXPECT_EQ(BatchExitCode(summary), kExitError);
  const CsvOutput out = ParseOutput(out_.str());
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0]["status"], "done");
}

TEST_F(BatchTest, RowWithTooManyFieldsIsReportedAndNotSent) {
  StartServer();
  auto summary = Run(absl::StrCat("vin,x\n", kFord, ",1\n", kHonda,
                                  ",2,surprise\n", kBuick, ",3\n"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(BatchExitCode(summary), kExitItemsFailed);
  const CsvOutput out = ParseOutput(out_.str());
  ASSERT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(out.rows[1]["failure_reason"], "BAD_ROW");
  EXPECT_EQ(out.rows[1]["vin"], kHonda);
  EXPECT_EQ(out.rows[2]["status"], "done");
  EXPECT_EQ(fake_->RequestCount(kHonda), 0);
}

TEST_F(BatchTest, EmptyInputWritesTheHeaderOnly) {
  StartServer();
  auto summary = Run("");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->records, 0);
  EXPECT_EQ(BatchExitCode(summary), kExitOk);
  EXPECT_THAT(out_.str(), StartsWith("vin,status,source,make,"));
}

}  // namespace
}  // namespace vinctl
