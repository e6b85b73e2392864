// fake-vpic: the fake vPIC server as a standalone binary, for demos, manual
// runs against vin-server, and benchmarks.
//
//   fake-vpic --port=8081 --latency=50ms
//       --script='1HGCM82633A004352=503,503,ok;1G4AH59H45G118341=hang'
//
// Prints "fake-vpic listening on http://HOST:PORT/api/vehicles" once ready,
// serves until SIGINT or SIGTERM, then exits 0.
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "fake_vpic/fake_vpic.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Address to listen on.");
ABSL_FLAG(int, port, 8081, "Port to listen on (0 picks a free one).");
ABSL_FLAG(std::string, fixtures_dir, VIN_FIXTURE_DIR,
          "Directory of captured vPIC answers (*.json).");
ABSL_FLAG(absl::Duration, latency, absl::ZeroDuration(),
          "Added before every answer, e.g. 50ms.");
ABSL_FLAG(std::string, script, "",
          "Per-VIN scripts: 'VIN=step,step;VIN2=step'. Steps: ok, NNN, "
          "429:<Retry-After>, reset, hang, html, sparse, truncated, empty, "
          "missing (left out of a batch answer), huge (a 2 MiB answer), "
          "delay:<duration>.");
ABSL_FLAG(std::string, script_every_vin, "",
          "Steps every unscripted VIN gets for its first requests, e.g. "
          "'503,503,ok'.");
ABSL_FLAG(std::string, script_batch, "",
          "Answers to the next DecodeVINValuesBatch requests as a whole, e.g. "
          "'503,ok'.");
ABSL_FLAG(std::string, chaos, "",
          "Random faults: every request no script answers draws a step by "
          "weight, e.g. '60*ok,10*503,2*429:1,5*reset,3*hang,5*html,"
          "5*truncated,5*sparse,5*delay:2s'.");
ABSL_FLAG(uint64_t, chaos_seed, 1, "Seed of the --chaos draws.");
ABSL_FLAG(bool, log_requests, false, "Print every request to stderr.");
ABSL_FLAG(bool, full_answers, false,
          "Generated answers with every variable a fixture fills (memory benchmarks).");

namespace {

// Applies --script and --script_every_vin; false (after printing why) when
// they do not parse.
bool ApplyScripts(fakevpic::FakeVpic& fake) {
  for (absl::string_view entry : absl::StrSplit(absl::GetFlag(FLAGS_script),
                                                ';', absl::SkipWhitespace())) {
    std::pair<absl::string_view, absl::string_view> vin_steps =
        absl::StrSplit(entry, absl::MaxSplits('=', 1));
    const std::string vin(absl::StripAsciiWhitespace(vin_steps.first));
    auto steps = fakevpic::Step::ParseList(vin_steps.second);
    if (vin.empty() || !steps.ok()) {
      std::cerr << "fake-vpic: bad --script entry \"" << entry << "\""
                << (steps.ok() ? "" : ": " + steps.status().ToString()) << "\n";
      return false;
    }
    fake.Script(vin, *std::move(steps));
  }
  auto every = fakevpic::Step::ParseList(absl::GetFlag(FLAGS_script_every_vin));
  if (!every.ok()) {
    std::cerr << "fake-vpic: bad --script_every_vin: " << every.status()
              << "\n";
    return false;
  }
  fake.ScriptEveryVin(*std::move(every));
  auto batch = fakevpic::Step::ParseList(absl::GetFlag(FLAGS_script_batch));
  if (!batch.ok()) {
    std::cerr << "fake-vpic: bad --script_batch: " << batch.status() << "\n";
    return false;
  }
  fake.ScriptBatch(*std::move(batch));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);

  // Blocked before any thread starts, so every thread inherits the mask and
  // only sigwait below receives these signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  fakevpic::Options options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.fixtures_dir = absl::GetFlag(FLAGS_fixtures_dir);
  options.full_answers = absl::GetFlag(FLAGS_full_answers);
  options.latency = absl::GetFlag(FLAGS_latency);
  auto chaos = fakevpic::WeightedStep::ParseList(absl::GetFlag(FLAGS_chaos));
  if (!chaos.ok()) {
    std::cerr << "fake-vpic: bad --chaos: " << chaos.status() << "\n";
    return 2;
  }
  options.chaos = *std::move(chaos);
  options.chaos_seed = absl::GetFlag(FLAGS_chaos_seed);
  if (absl::GetFlag(FLAGS_log_requests)) {
    options.on_request = [](const fakevpic::RequestRecord& r) {
      // One write per line so lines from connection threads do not mix.
      std::string vins = r.vin.empty() ? "-" : r.vin;
      if (r.is_batch()) {
        vins = absl::StrJoin(r.batch, ";", [](std::string* out, const auto& e) {
          absl::StrAppend(out, e.first, e.second ? absl::StrCat(",", e.second)
                                                 : std::string());
        });
      }
      const std::string line = absl::StrCat(
          absl::FormatTime("%H:%M:%E6S", r.time, absl::LocalTimeZone()),
          r.is_batch() ? " batch=" : " vin=", vins, " modelyear=", r.model_year,
          " served=", r.served, " target=", r.target, "\n");
      std::fputs(line.c_str(), stderr);
    };
  }

  auto fake = fakevpic::FakeVpic::Start(std::move(options));
  if (!fake.ok()) {
    std::cerr << "fake-vpic: " << fake.status() << "\n";
    return 1;
  }
  if (!ApplyScripts(**fake)) return 2;

  std::cout << "fake-vpic listening on " << (*fake)->base_url() << std::endl;

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::cerr << "fake-vpic: got signal " << signal << ", stopping\n";
  fake->reset();
  return 0;
}
