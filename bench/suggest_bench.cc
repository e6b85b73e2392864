// Snapshot::Suggest benchmark (rule 21): latency per VIN and how often the
// VIN a one-character typo came from is suggested.
//
// VINs: the golden set's (server/snapshot_golden.csv, real and decodable),
// each varied by random digits in the serial positions 12-17 (15-17 for
// six-character WMIs, whose 12-14 are part of the WMI) with the check digit
// recomputed; then each gets ONE wrong character at a uniformly random
// position, a random other character of [0-9A-Z] (I, O, Q included). Fixed
// seeds. An original is "findable" when it satisfies rule 2 as a candidate,
// i.e. its own decode has none of the codes 1, 7, 8, 11, 400.
//
// Usage: suggest_bench [--db PATH] [--golden CSV] [--count N] [--max M]
//                      [--reference_year Y]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "snapshot/snapshot.h"
#include "vin/vin.h"

#ifndef VIN_SNAPSHOT_PATH
#define VIN_SNAPSHOT_PATH ".data/vpic.lite.db"
#endif
#ifndef VIN_GOLDEN_PATH
#define VIN_GOLDEN_PATH "server/snapshot_golden.csv"
#endif

namespace {

constexpr char kTypoChars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

std::vector<std::string> GoldenVins(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    std::exit(1);
  }
  std::vector<std::string> vins;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string vin = line.substr(0, line.find(','));
    if (vin.size() == 17) vins.push_back(vin);
  }
  return vins;
}

bool Findable(const snapshot::Snapshot& snap, const std::string& vin,
              int reference_year) {
  absl::StatusOr<snapshot::SnapshotDecode> d =
      snap.Decode(vin, 0, reference_year);
  if (!d.ok()) return false;
  for (const auto& note : d->notes) {
    if (note.code == "1" || note.code == "7" || note.code == "8" ||
        note.code == "11" || note.code == "400") {
      return false;
    }
  }
  return true;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  return v[i];
}

struct Tally {
  int vins = 0;
  int first = 0;
  int listed = 0;
  int unfindable = 0;
  long listed_total = 0;

  void Print(const char* name) const {
    if (vins == 0) return;
    const double n = vins;
    std::printf(
        "%-22s VINs %6d  original first %5.1f%%  in list %5.1f%%  "
        "not findable %4.1f%%  avg list %.2f\n",
        name, vins, 100.0 * first / n, 100.0 * listed / n,
        100.0 * unfindable / n, listed_total / n);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string db_path = VIN_SNAPSHOT_PATH, golden_path = VIN_GOLDEN_PATH;
  int count = 10000, reference_year = 2026;
  size_t max = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--db")
      db_path = argv[i + 1];
    else if (flag == "--golden")
      golden_path = argv[i + 1];
    else if (flag == "--count")
      count = std::atoi(argv[i + 1]);
    else if (flag == "--max")
      max = std::strtoul(argv[i + 1], nullptr, 10);
    else if (flag == "--reference_year")
      reference_year = std::atoi(argv[i + 1]);
  }

  auto loaded = snapshot::Snapshot::Load(db_path);
  if (!loaded.ok()) {
    std::cerr << loaded.status() << "\n";
    return 1;
  }
  const snapshot::Snapshot& snap = **loaded;
  const std::vector<std::string> golden = GoldenVins(golden_path);
  if (golden.empty()) {
    std::cerr << "no VINs in " << golden_path << "\n";
    return 1;
  }

  std::mt19937_64 vary(21), typo_rng(1721);
  std::vector<std::string> originals, typos;
  std::vector<int> typo_pos;
  for (int n = 0; n < count; ++n) {
    std::string vin = golden[n % golden.size()];
    for (int i = vin[2] == '9' ? 14 : 11; i < 17; ++i) {
      vin[i] = static_cast<char>('0' + vary() % 10);
    }
    vin[8] = vin::ComputeCheckDigit(vin);
    std::string typo = vin;
    const int p = static_cast<int>(typo_rng() % 17);
    char c;
    do {
      c = kTypoChars[typo_rng() % (sizeof(kTypoChars) - 1)];
    } while (c == vin[p]);
    typo[p] = c;
    originals.push_back(vin);
    typos.push_back(typo);
    typo_pos.push_back(p);
  }

  Tally all, check, head, serial;
  std::vector<double> micros;
  micros.reserve(typos.size());
  for (size_t i = 0; i < typos.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::string> list =
        snap.Suggest(typos[i], reference_year, max);
    const auto end = std::chrono::steady_clock::now();
    micros.push_back(
        std::chrono::duration<double, std::micro>(end - start).count());
    const bool findable = Findable(snap, originals[i], reference_year);
    const bool first = !list.empty() && list[0] == originals[i];
    const bool listed =
        std::find(list.begin(), list.end(), originals[i]) != list.end();
    const int p = typo_pos[i] + 1;
    Tally& group = p == 9 ? check : (p >= 12 ? serial : head);
    for (Tally* t : {&all, &group}) {
      ++t->vins;
      t->first += first;
      t->listed += listed;
      t->unfindable += !findable;
      t->listed_total += static_cast<long>(list.size());
    }
  }

  std::printf("snapshot %s (%s), reference year %d, max %zu\n",
              snap.info().date.c_str(),
              snap.info().sha256.substr(0, 12).c_str(), reference_year, max);
  std::printf("VINs %zu  p50 %.1f us  p99 %.1f us  max %.1f us\n", typos.size(),
              Percentile(micros, 0.5), Percentile(micros, 0.99),
              *std::max_element(micros.begin(), micros.end()));
  all.Print("all");
  check.Print("typo in check digit");
  head.Print("typo in 1-8, 10-11");
  serial.Print("typo in 12-17");
  return 0;
}
