// The real vin-server binary as a child process: the one way a test starts
// one (the attacks of DESIGN rule 19, shown against the real binary; the
// fleet replica a test kills). Started with the test's flags (gRPC, the
// HTTP gateway and the metrics on free loopback ports), its ports read from
// its start lines, its metrics scraped, its resource use read from /proc.
#ifndef VIN_TESTS_TESTING_REAL_SERVER_H_
#define VIN_TESTS_TESTING_REAL_SERVER_H_

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "testing/scrape.h"
#include "testing/subprocess.h"
#include "vin/v1/vin.grpc.pb.h"

namespace testing_util {

class RealServer {
 public:
  // Starts VIN_SERVER_BIN with `flags` (after the listening flags, so
  // they may override them), behind `prefix` (e.g. {"prlimit",
  // "--nofile=600:600"}) when given. False when it does not start in 60 s.
  bool Start(const std::vector<std::string>& flags,
             const std::vector<std::string>& prefix = {}) {
    std::vector<std::string> argv = prefix;
    for (const char* f :
         {VIN_SERVER_BIN, "--listen=127.0.0.1:0", "--http_listen=127.0.0.1:0",
          "--metrics_listen=127.0.0.1:0"}) {
      argv.push_back(f);
    }
    argv.insert(argv.end(), flags.begin(), flags.end());
    if (!proc_.Start(argv)) return false;
    auto grpc = proc_.WaitForLine("listening on", absl::Seconds(60));
    auto http = proc_.WaitForLine("HTTP gateway on", absl::Seconds(10));
    auto metrics = proc_.WaitForLine("metrics on", absl::Seconds(10));
    if (!grpc || !http || !metrics) return false;
    port_ = PortOf(*grpc);
    http_port_ = PortOf(*http);
    metrics_port_ = PortOf(*metrics);
    stub_ = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials()));
    return true;
  }

  int port() const { return port_; }
  int http_port() const { return http_port_; }
  int metrics_port() const { return metrics_port_; }
  vin::v1::VinDecoderService::Stub* stub() { return stub_.get(); }
  Subprocess& proc() { return proc_; }

  grpc::Status Decode(const vin::v1::DecodeRequest& req,
                      vin::v1::DecodeResponse* out,
                      absl::Duration timeout = absl::Seconds(20)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    return stub_->Decode(&ctx, req, out);
  }

  // The value of the metric `name` in a scrape (one series); -1 when the
  // scrape fails or has no such series.
  double Metric(const std::string& name) const {
    return MetricAt(metrics_port_, name);
  }

  // A field of /proc/<pid>/status in kB ("VmHWM", "VmRSS"); -1 if none.
  int64_t StatusKb(const std::string& field) const {
    std::ifstream in(absl::StrCat("/proc/", proc_.pid(), "/status"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(field + ":", 0) != 0) continue;
      int64_t kb = -1;
      std::vector<std::string> parts =
          absl::StrSplit(line.substr(field.size() + 1), absl::ByAnyChar(" \t"),
                         absl::SkipEmpty());
      if (!parts.empty() && absl::SimpleAtoi(parts[0], &kb)) return kb;
    }
    return -1;
  }

  // The CPU time (user + system) the process has used so far.
  absl::Duration CpuTime() const {
    std::ifstream in(absl::StrCat("/proc/", proc_.pid(), "/stat"));
    std::stringstream s;
    s << in.rdbuf();
    const std::string stat = s.str();
    // Fields after the command name (which may hold spaces) in parentheses.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) return absl::ZeroDuration();
    std::vector<std::string> f =
        absl::StrSplit(stat.substr(close + 2), ' ', absl::SkipEmpty());
    int64_t utime = 0, stime = 0;
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
    if (f.size() < 13 || !absl::SimpleAtoi(f[11], &utime) ||
        !absl::SimpleAtoi(f[12], &stime)) {
      return absl::ZeroDuration();
    }
    return absl::Seconds(static_cast<double>(utime + stime) /
                         static_cast<double>(sysconf(_SC_CLK_TCK)));
  }

 private:
  static int PortOf(const std::string& line) {
    return std::stoi(line.substr(line.find("(port ") + 6));
  }

  Subprocess proc_;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub_;
  int port_ = 0, http_port_ = 0, metrics_port_ = 0;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_REAL_SERVER_H_
