// Bounded work for every request (DESIGN rule 19) on the real binary: the
// NDJSON body of /v1/decode:batch is read as a stream, a line at a time,
// paced by the window, so that a 15 MiB body costs the server no more
// memory than a small one while other callers are answered; a line over
// 64 KiB fails as its item, unbuffered; each route's body limit answers
// 413 before the body is read.
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "attack/attack_fixture.h"
#include "gmock/gmock.h"
#include "testing/vin_gen.h"

namespace attack {
namespace {

using testing::HasSubstr;
using testing_util::ConnectFrom;
using testing_util::HttpCall;
using testing_util::RawStatus;
using testing_util::ReadUntilClosed;
using testing_util::SendAll;

// One NDJSON line of exactly `size` bytes (newline included): a
// DecodeBatchRequest whose VIN fails local validation, padded with JSON
// white space, so that each item ends at once without reaching vPIC.
std::string PaddedLine(size_t size, int i) {
  std::string line = absl::StrCat("{\"vin\":\"BAD", i, "\"");
  line.append(size - line.size() - 2, ' ');
  line += "}\n";
  return line;
}

std::string Chunk(absl::string_view data) {
  return absl::StrCat(absl::Hex(data.size()), "\r\n", data, "\r\n");
}

// Terminal events of each kind in an NDJSON answer (the chunk framing
// left in: each event is on one line of its own).
int Count(const std::string& answer, absl::string_view what) {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(answer, '\n')) {
    n += absl::StrContains(line, what) ? 1 : 0;
  }
  return n;
}

class AttackBodyTest : public AttackTest {};

TEST_F(AttackBodyTest, AFifteenMiBChunkedBodyIsReadInBoundedMemory) {
  // The server's allocator keeps freed memory apart under ASan (its
  // quarantine): the server's own use is what is measured here.
  setenv("ASAN_OPTIONS", "quarantine_size_mb=1:detect_leaks=1", 1);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // Warm up the paths measured (threads, buffers, libcurl, the first
  // stream, the first decodes): the growth measured is the body's.
  {
    vin::v1::DecodeRequest warm;
    warm.set_vin(testing_util::ValidVin(900));
    vin::v1::DecodeResponse out;
    ASSERT_TRUE(server_.Decode(warm, &out).ok());
    ASSERT_EQ(HttpCall(server_.http_port(), "GET",
                       absl::StrCat("/api/vehicles/DecodeVinValues/",
                                    testing_util::ValidVin(901)))
                  .status,
              200);
    // A first stream of 1 MiB: the window full once (its items, events
    // and buffers are the working set a stream of any size has).
    std::string lines;
    for (int i = 0; i < 1024; ++i) lines += PaddedLine(1024, i);
    const int fd = ConnectFrom(server_.http_port(), "127.0.0.1");
    ASSERT_GE(fd, 0);
    std::string answer;
    std::thread reader([&] { answer = ReadUntilClosed(fd, absl::Seconds(30)); });
    EXPECT_TRUE(SendAll(
        fd, Head("POST", "/v1/decode:batch", "Transfer-Encoding: chunked\r\n") +
                Chunk(lines) + "0\r\n\r\n"));
    reader.join();
    EXPECT_EQ(Count(answer, "\"failed\""), 1024);
    close(fd);
  }
  const int64_t before_kb = server_.StatusKb("VmHWM");
  ASSERT_GT(before_kb, 0);

  constexpr size_t kLine = 1024;
  constexpr size_t kBody = 15 << 20;
  constexpr int kLines = static_cast<int>(kBody / kLine);  // 15,360
  const int fd = ConnectFrom(server_.http_port(), "127.0.0.1");
  ASSERT_GE(fd, 0);
  absl::Notification halfway, go_on;
  bool sent = false;
  std::thread sender([&] {
    if (!SendAll(fd, Head("POST", "/v1/decode:batch",
                          "Transfer-Encoding: chunked\r\n"))) {
      return;
    }
    std::string piece;
    for (int i = 0; i < kLines; ++i) {
      piece += PaddedLine(kLine, i);
      if (piece.size() >= 64 * 1024 || i == kLines - 1) {
        if (!SendAll(fd, Chunk(piece))) return;
        piece.clear();
      }
      if (i == kLines / 2) {
        halfway.Notify();
        go_on.WaitForNotification();
      }
    }
    sent = SendAll(fd, "0\r\n\r\n");
  });
  std::string answer;
  std::thread reader([&] { answer = ReadUntilClosed(fd, absl::Seconds(60)); });

  // Half the body is in: other callers are answered meanwhile.
  ASSERT_TRUE(halfway.WaitForNotificationWithTimeout(absl::Seconds(60)));
  vin::v1::DecodeRequest req;
  req.set_vin(kFord);
  vin::v1::DecodeResponse resp;
  EXPECT_TRUE(server_.Decode(req, &resp).ok());
  EXPECT_EQ(resp.result().vehicle().make(), "FORD");
  EXPECT_EQ(HttpCall(server_.http_port(), "GET",
                     absl::StrCat("/api/vehicles/DecodeVinValues/", kFord,
                                  "?format=json"))
                .status,
            200);
  go_on.Notify();
  sender.join();
  reader.join();
  close(fd);

  EXPECT_TRUE(sent);
  EXPECT_EQ(RawStatus(answer), 200);
  EXPECT_EQ(Count(answer, "\"failed\""), kLines)
      << "one terminal event per line";
  EXPECT_EQ(Count(answer, "INVALID_VIN"), kLines);
  EXPECT_TRUE(absl::EndsWith(answer, "0\r\n\r\n")) << "the stream ended whole";
  const int64_t growth_kb = server_.StatusKb("VmHWM") - before_kb;
  // The body was 15 MiB; read whole it cost the server more than that.
  EXPECT_LT(growth_kb, 8 * 1024) << "peak RSS grew by " << growth_kb << " kB";
  std::cout << "[ measure  ] 15 MiB NDJSON body: server peak RSS +" << growth_kb
            << " kB\n";
}

TEST_F(AttackBodyTest, ALineOverTheLimitFailsAsItsItemAndTheStreamGoesOn) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string body = absl::StrCat(
      "{\"vin\":\"", kFord, "\"}\n", std::string(100 * 1024, 'x'), "\n",
      "{\"vin\":\"", testing_util::ValidVin(7), "\"}");  // (no final newline)
  const int fd = ConnectFrom(server_.http_port(), "127.0.0.1");
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(
      SendAll(fd, Head("POST", "/v1/decode:batch",
                       absl::StrCat("Content-Length: ", body.size(), "\r\n")) +
                      body));
  const std::string answer = ReadUntilClosed(fd, absl::Seconds(30));
  close(fd);
  EXPECT_EQ(RawStatus(answer), 200);
  EXPECT_EQ(Count(answer, "\"done\""), 2) << answer;
  EXPECT_EQ(Count(answer, "\"failed\""), 1) << answer;
  EXPECT_THAT(answer, HasSubstr("\"requestId\":\"#1\""));
  EXPECT_THAT(answer,
              HasSubstr("line 2 is 102400 bytes, over the limit of 65536"));
  EXPECT_THAT(answer, HasSubstr("FAILURE_REASON_INVALID_REQUEST"));
}

TEST_F(AttackBodyTest, EachRouteRefusesABodyOverItsLimitBeforeReadingIt) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // A stream's body has no total limit: 2 MiB with a Content-Length is
  // read (it was 413 at 1 MiB).
  std::string lines;
  for (int i = 0; lines.size() < (2u << 20); ++i) lines += PaddedLine(1024, i);
  const int fd = ConnectFrom(server_.http_port(), "127.0.0.1");
  ASSERT_GE(fd, 0);
  std::string answer;
  std::thread reader([&] { answer = ReadUntilClosed(fd, absl::Seconds(30)); });
  ASSERT_TRUE(
      SendAll(fd, Head("POST", "/v1/decode:batch",
                       absl::StrCat("Content-Length: ", lines.size(), "\r\n")) +
                      lines));
  reader.join();
  close(fd);
  EXPECT_EQ(RawStatus(answer), 200);
  EXPECT_EQ(Count(answer, "\"failed\""), static_cast<int>(lines.size() / 1024));

  // POST /v1/decode: 64 KiB, as gRPC's message limit; announced larger, it
  // is refused before a byte of the body is sent.
  const std::string big_decode = absl::StrCat("{\"vin\":\"", kFord, "\"",
                                              std::string(65 * 1024, ' '), "}");
  EXPECT_EQ(
      HttpCall(server_.http_port(), "POST", "/v1/decode", big_decode).status,
      413);
  const std::string head_only = testing_util::RawExchange(
      server_.http_port(),
      Head("POST", "/v1/decode", "Content-Length: 10000000\r\n"));
  EXPECT_EQ(RawStatus(head_only), 413) << head_only;
  EXPECT_THAT(head_only, HasSubstr("over this path's limit of 65536"));
  // vPIC's batch form: 1 MiB.
  EXPECT_EQ(
      HttpCall(
          server_.http_port(), "POST", "/api/vehicles/DecodeVINValuesBatch/",
          absl::StrCat("format=json&data=", std::string((1 << 20) + 10, 'A')))
          .status,
      413);
  EXPECT_EQ(fake_->TotalRequests(), 0) << "nothing reached vPIC";
}

}  // namespace
}  // namespace attack
