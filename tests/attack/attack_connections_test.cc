// A connection flood (DESIGN rule 19) on the real binary: 2,600
// connections from ten loopback addresses, against the global cap
// (--http_max_connections), against the cap fitted to a low file-descriptor
// limit (prlimit), and at that limit itself (--fd_reserve=0, so that the
// gateway reaches EMFILE). Either way the server refuses or leaves the
// rest at once, its accept loop does not spin (under half a core while the
// flood is held), and what was open goes on: gRPC, an HTTP keep-alive
// connection, and decodes that reach vPIC; with the reserve, new gRPC
// connections too.
#include <grpcpp/create_channel.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "attack/attack_fixture.h"
#include "gmock/gmock.h"
#include "testing/eventually.h"
#include "testing/vin_gen.h"

namespace attack {
namespace {

using testing::HasSubstr;
using testing_util::ConnectFrom;
using testing_util::SendAll;
using testing_util::ValidVin;

constexpr int kAddresses = 10;
constexpr int kPerAddress = 260;  // 2,600 in all

// The connections of a flood, closed when it goes.
struct Flood {
  std::vector<int> fds;
  int failed = 0;  // connects that failed
  ~Flood() {
    for (int fd : fds) close(fd);
  }
};

// Opens `per_address` connections from each of 127.0.0.1..127.0.0.10.
void Open(int port, Flood* flood, int per_address = kPerAddress) {
  for (int a = 1; a <= kAddresses; ++a) {
    for (int i = 0; i < per_address; ++i) {
      const int fd = ConnectFrom(port, absl::StrCat("127.0.0.", a));
      if (fd < 0) {
        ++flood->failed;
      } else {
        flood->fds.push_back(fd);
      }
    }
  }
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

// What the server sent on `fd` before closing it.
std::string Drain(int fd) {
  return testing_util::ReadUntilClosed(fd, absl::Seconds(5));
}

// One keep-alive GET on an open connection: the answer's status.
int GetOn(int fd, int port, const std::string& vin) {
  const std::string req =
      absl::StrCat("GET /api/vehicles/DecodeVinValues/", vin,
                   " HTTP/1.1\r\nHost: 127.0.0.1:", port, "\r\n\r\n");
  if (!SendAll(fd, req)) return 0;
  char buf[16384];
  const ssize_t n = recv(fd, buf, sizeof(buf), 0);  // (SO_RCVTIMEO: 5 s)
  return n > 12 ? std::atoi(buf + 9) : 0;
}

class AttackConnectionsTest : public AttackTest {
 protected:
  void SetUp() override {
    // The flood needs 2,600 descriptors of this process.
    rlimit r{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &r), 0);
    r.rlim_cur = r.rlim_max;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &r), 0);
    ASSERT_GE(r.rlim_cur, 3000u) << "this test needs 3,000 file descriptors";
  }

  // The server's CPU use over `window` while nothing but the flood is
  // there, as a share of one core.
  double CpuShare(absl::Duration window) {
    const absl::Duration before = server_.CpuTime();
    const absl::Time start = absl::Now();
    absl::SleepFor(window);  // (a measurement window, not a wait for an event)
    return (server_.CpuTime() - before) / (absl::Now() - start);
  }

  // A decode on a gRPC connection of its own, opened now.
  void ExpectNewGrpcConnectionServes(const std::string& vin) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", server_.port()),
        grpc::InsecureChannelCredentials(), args));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    vin::v1::DecodeRequest req;
    req.set_vin(vin);
    vin::v1::DecodeResponse resp;
    const grpc::Status s = stub->Decode(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << "a new gRPC connection: " << s.error_message();
    EXPECT_EQ(resp.result().vin(), vin);
  }

  // Waits (scraping, up to 60 s) until the gateway holds `open`
  // connections and has refused `refused`; fails the test otherwise.
  void ExpectHeldAndRefused(double open, double refused) {
    double now_open = 0, now_refused = 0;
    // (A poll's interval: the metrics port is not scraped flat out.)
    testing_util::Eventually(
        [&] {
          const auto s = Scrape();
          now_open = testing_util::Sum(s, "vin_http_connections_open");
          now_refused =
              testing_util::Sum(s, "vin_http_connections_refused_total");
          return now_open == open && now_refused == refused;
        },
        absl::Seconds(60), absl::Milliseconds(20));
    ASSERT_EQ(now_open, open);
    ASSERT_EQ(now_refused, refused);
  }

  void ExpectServing(const std::string& vin) {
    vin::v1::DecodeRequest req;
    req.set_vin(vin);
    vin::v1::DecodeResponse resp;
    const grpc::Status s = server_.Decode(req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.result().vin(), vin);
  }
};

TEST_F(AttackConnectionsTest, TheGlobalCapRefusesTheRestAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--http_max_connections=1000"}));
  ExpectServing(ValidVin(1));  // gRPC's connection is open
  Flood flood;
  Open(server_.http_port(), &flood);
  ASSERT_EQ(flood.failed, 0);
  // Every connection is accepted: 1,000 held, 1,600 refused at once.
  ASSERT_NO_FATAL_FAILURE(ExpectHeldAndRefused(1000, 1600));

  const double cpu = CpuShare(absl::Seconds(2));
  EXPECT_LT(cpu, 0.5) << "the server used " << cpu
                      << " of a core while the flood was held";
  std::cout << "[ measure  ] 2,600 connections, cap 1,000: server CPU " << cpu
            << " of a core while held\n";
  ExpectServing(ValidVin(2));  // gRPC, and a decode that reaches vPIC

  int held = 0, busy = 0, share = 0, answered = 0;
  for (int fd : flood.fds) {
    if (!Readable(fd)) {
      // Held: it is served (once: one is enough to show it).
      if (held++ == 0) {
        EXPECT_EQ(GetOn(fd, server_.http_port(), ValidVin(3)), 200);
        ++answered;
      }
      continue;
    }
    const std::string said = Drain(fd);
    busy += absl::StrContains(said, "503 Service Unavailable") ? 1 : 0;
    share += absl::StrContains(said, "429 Too Many Requests") ? 1 : 0;
  }
  EXPECT_EQ(held, 1000);
  EXPECT_EQ(busy + share, 1600);
  EXPECT_GT(busy, 0);
  EXPECT_EQ(answered, 1);
}

// At 400 descriptors the gateway's cap is fitted to leave a reserve
// (400 - 128 - the metrics' 64 = 208): the flood meets the cap, never the
// file limit, so new gRPC connections are still accepted (gRPC 1.51 stops
// accepting for good after one EMFILE).
TEST_F(AttackConnectionsTest, AtALowFileLimitTheCapLeavesRoomForNewGrpcCalls) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer({}, {"/usr/bin/prlimit", "--nofile=400:400"}));
  ASSERT_TRUE(server_.proc().WaitForLine(
      "HTTP connections: at most 208, --http_max_connections 4096 lowered",
      absl::Seconds(5)));
  Flood flood;
  Open(server_.http_port(), &flood);
  ASSERT_EQ(flood.failed, 0);
  ASSERT_NO_FATAL_FAILURE(ExpectHeldAndRefused(208, 2600 - 208));
  ExpectNewGrpcConnectionServes(ValidVin(4));
  EXPECT_EQ(testing_util::Sum(Scrape(), "vin_http_accept_errors_total"), 0)
      << "the file limit was never reached";
  for (int fd : flood.fds) close(fd);
  flood.fds.clear();
  ExpectNewGrpcConnectionServes(ValidVin(5));
}

// --fd_reserve=0: the gateway and the metrics port together may reach the
// file limit (400 - the metrics' 64 = 336 HTTP connections, and the
// server's own descriptors); accepting backs off instead of spinning, and
// what is open goes on.
TEST_F(AttackConnectionsTest, AtTheFileLimitAcceptBacksOffAndWhatIsOpenGoesOn) {
  ASSERT_NO_FATAL_FAILURE(StartServer(
      {"--fd_reserve=0"}, {"/usr/bin/prlimit", "--nofile=400:400"}));
  ASSERT_TRUE(server_.proc().WaitForLine("file descriptors: at most 400 ",
                                         absl::Seconds(5)));
  ExpectServing(ValidVin(1));  // gRPC's connection, and libcurl's to vPIC
  const int keep = ConnectFrom(server_.http_port(), "127.0.0.1");
  ASSERT_GE(keep, 0);
  // Twice, as a keep-alive client does: the second request's exchange
  // replaces the first's. (So that the sanitized build has made its first
  // check of each type before the limit: UBSan's vptr check reads a vtable
  // through a pipe, sanitizer_common's IsAccessibleMemoryRange, and with no
  // descriptor left reports a valid object as an "invalid vptr".)
  EXPECT_EQ(GetOn(keep, server_.http_port(), ValidVin(1)), 200);
  EXPECT_EQ(GetOn(keep, server_.http_port(), ValidVin(1)), 200);

  Flood scrapers;  // the metrics port's 64, held
  Open(server_.metrics_port(), &scrapers, 10);
  Flood flood;
  Open(server_.http_port(), &flood);
  EXPECT_EQ(flood.failed, 0)
      << "the kernel queues what the server cannot accept";
  ASSERT_TRUE(server_.proc().WaitForLine("accept failed; backing off",
                                         absl::Seconds(30)))
      << "the process reached its file limit";
  const double cpu = CpuShare(absl::Seconds(2));
  EXPECT_LT(cpu, 0.5) << "the server used " << cpu
                      << " of a core at its file limit";
  std::cout
      << "[ measure  ] 2,600 connections at a 400-descriptor limit: server CPU "
      << cpu << " of a core while held\n";
  // What was open goes on: gRPC, a decode that reaches vPIC on libcurl's
  // open connection, the keep-alive HTTP connection.
  ExpectServing(ValidVin(2));
  EXPECT_EQ(GetOn(keep, server_.http_port(), ValidVin(3)), 200);
  close(keep);
  // The flood gone, new connections are accepted again.
  for (int fd : flood.fds) close(fd);
  flood.fds.clear();
  EXPECT_EQ(testing_util::HttpCall(
                server_.http_port(), "GET",
                absl::StrCat("/api/vehicles/DecodeVinValues/", ValidVin(3)))
                .status,
            200);
}

}  // namespace
}  // namespace attack
