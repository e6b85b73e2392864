// Snapshot decoder benchmark: index load time, resident memory of the index,
// and per-VIN decode latency (median, p99) over plausible VINs.
//
// Plausible VINs are built from real (WMI, schema, year) combinations of the
// snapshot: a Model pattern key of the schema fills positions 4-8 (and 10-17
// where the key reaches them), position 10 encodes the year, the rest is
// random VIN characters, and the check digit is valid. Deterministic seed.
//
// Usage: snapshot_bench [--db PATH] [--count N] [--reference_year Y]
//                       [--vins OUT.txt] [--dump OUT.tsv]
//   --vins writes the VIN list (one "VIN" per line), --dump writes the
//   snapshot's answers as TSV (vin, make, model, year, vehicle type, codes).
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_join.h"
#include "snapshot/snapshot.h"
#include "vin/vin.h"

#ifndef VIN_SNAPSHOT_PATH
#define VIN_SNAPSHOT_PATH ".data/vpic.lite.db"
#endif

namespace {

constexpr char kVinChars[] = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ";
constexpr char kYearCodes[] = "ABCDEFGHJKLMNPRSTVWXY123456789";

double ThreadCpuMicros() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

long ResidentKb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

struct Combo {
  std::string wmi;
  int vehicle_type;
  int truck_type;
  int year_from, year_to;
  std::vector<std::string> keys;  // Model pattern keys of the schema
};

// Picks a character the key token accepts (tokens: literal, '*', '[...]').
char Pick(const std::string& token, std::mt19937_64& rng) {
  if (token == "*") return kVinChars[rng() % (sizeof(kVinChars) - 1)];
  if (token.size() == 1) return token[0];
  std::string options;
  const std::string body = token.substr(1, token.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    if (i + 2 < body.size() && body[i + 1] == '-') {
      for (char c = body[i]; c <= body[i + 2]; ++c) {
        if (std::strchr(kVinChars, c) != nullptr) options.push_back(c);
      }
      i += 2;
    } else if (std::strchr(kVinChars, body[i]) != nullptr) {
      options.push_back(body[i]);
    }
  }
  if (options.empty()) return '0';
  return options[rng() % options.size()];
}

std::vector<std::string> Tokens(const std::string& key) {
  std::vector<std::string> out;
  for (size_t i = 0; i < key.size(); ++i) {
    if (key[i] == '[') {
      const size_t close = key.find(']', i);
      if (close == std::string::npos) break;
      out.push_back(key.substr(i, close - i + 1));
      i = close;
    } else {
      out.push_back(std::string(1, key[i]));
    }
  }
  return out;
}

std::string YearCode(int year) {
  const int index = ((year - 1980) % 30 + 30) % 30;
  return std::string(1, kYearCodes[index]);
}

std::vector<std::string> PlausibleVins(const std::string& db_path, int count,
                                       int reference_year) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    std::cerr << "cannot open " << db_path << "\n";
    std::exit(1);
  }
  // Model pattern keys by schema (one scan: Pattern has no schema index).
  std::unordered_map<int, std::vector<std::string>> model_keys;
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT VinSchemaId, Keys FROM Pattern WHERE ElementId = 28 "
                     "ORDER BY Id",
                     -1, &stmt, nullptr);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    model_keys[sqlite3_column_int(stmt, 0)].push_back(
        reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)));
  }
  sqlite3_finalize(stmt);
  std::vector<Combo> combos;
  const char* sql =
      "SELECT w.Wmi, coalesce(w.VehicleTypeId, 0), coalesce(w.TruckTypeId, 0), "
      "wvs.YearFrom, coalesce(wvs.YearTo, 9999), wvs.VinSchemaId "
      "FROM Wmi_VinSchema wvs JOIN Wmi w ON w.Id = wvs.WmiId "
      "WHERE w.PublicAvailabilityDate IS NOT NULL ORDER BY wvs.Id";
  sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    auto keys = model_keys.find(sqlite3_column_int(stmt, 5));
    if (keys == model_keys.end()) continue;  // schemas without a model
    Combo c;
    c.wmi = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    c.vehicle_type = sqlite3_column_int(stmt, 1);
    c.truck_type = sqlite3_column_int(stmt, 2);
    c.year_from = sqlite3_column_int(stmt, 3);
    c.year_to = std::min(sqlite3_column_int(stmt, 4), reference_year + 1);
    if (c.year_from > c.year_to) continue;
    c.keys = keys->second;
    combos.push_back(std::move(c));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);

  std::mt19937_64 rng(20260217);
  std::vector<std::string> vins;
  while (static_cast<int>(vins.size()) < count && !combos.empty()) {
    const Combo& c = combos[rng() % combos.size()];
    const int year = c.year_from + static_cast<int>(rng() % (c.year_to - c.year_from + 1));
    const std::string& key = c.keys[rng() % c.keys.size()];
    std::string vin(17, '0');
    for (int i = 0; i < 17; ++i) vin[i] = kVinChars[rng() % (sizeof(kVinChars) - 1)];
    for (int i = 11; i < 17; ++i) vin[i] = static_cast<char>('0' + rng() % 10);
    vin.replace(0, 3, c.wmi.substr(0, 3));
    if (c.wmi.size() == 6) vin.replace(11, 3, c.wmi.substr(3));
    // Position 7 tells the cycle for cars, MPVs and light trucks.
    const bool car_lt = c.vehicle_type == 2 || c.vehicle_type == 7 ||
                        (c.vehicle_type == 3 && c.truck_type == 1);
    if (car_lt) vin[6] = year >= 2010 ? "ABCDEFGHJKLMNPRSTUVWXYZ"[rng() % 23]
                                      : static_cast<char>('0' + rng() % 10);
    // The key's tokens: VDS from position 4, '|' is position 9.
    int pos = 3;
    for (const std::string& token : Tokens(key)) {
      if (pos >= 17) break;
      if (token == "|") {
        pos = 9;
        continue;
      }
      if (pos == 8) ++pos;  // a 6-token key faces position 9: skip it
      const char ch = Pick(token, rng);
      if (std::strchr(kVinChars, ch) != nullptr) vin[pos] = ch;
      ++pos;
    }
    vin[9] = YearCode(year)[0];
    vin[8] = vin::ComputeCheckDigit(vin);
    vins.push_back(vin);
  }
  return vins;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string db_path = VIN_SNAPSHOT_PATH, vins_out, dump_out;
  int count = 5000, reference_year = 2026;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--db") db_path = argv[i + 1];
    else if (flag == "--count") count = std::atoi(argv[i + 1]);
    else if (flag == "--reference_year") reference_year = std::atoi(argv[i + 1]);
    else if (flag == "--vins") vins_out = argv[i + 1];
    else if (flag == "--dump") dump_out = argv[i + 1];
    else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }

  const long rss_before = ResidentKb();
  const auto t0 = std::chrono::steady_clock::now();
  auto loaded = snapshot::Snapshot::Load(db_path);
  const auto t1 = std::chrono::steady_clock::now();
  if (!loaded.ok()) {
    std::cerr << loaded.status() << "\n";
    return 1;
  }
  const long rss_after = ResidentKb();
  const auto& snap = *loaded;
  std::printf("snapshot %s date %s sha256 %s\n", db_path.c_str(),
              snap->info().date.c_str(), snap->info().sha256.c_str());
  std::printf("load: %.3f s (index build + sha256 in parallel)\n",
              std::chrono::duration<double>(t1 - t0).count());
  std::printf("resident memory: %.1f MB before load, %.1f MB after "
              "(index: +%.1f MB RSS; %.1f MB counted heap)\n",
              rss_before / 1024.0, rss_after / 1024.0,
              (rss_after - rss_before) / 1024.0, snap->MemoryBytes() / 1e6);

  const std::vector<std::string> vins =
      PlausibleVins(db_path, count, reference_year);
  if (!vins_out.empty()) {
    std::ofstream out(vins_out);
    for (const std::string& v : vins) out << v << "\n";
  }
  // Warm-up pass, and the dump.
  std::ofstream dump;
  if (!dump_out.empty()) dump.open(dump_out);
  size_t with_model = 0;
  for (const std::string& v : vins) {
    auto d = snap->Decode(v, 0, reference_year);
    if (!d.ok()) continue;
    with_model += !d->vehicle.model.empty();
    if (dump.is_open()) {
      std::vector<std::string> codes;
      for (const auto& n : d->notes) {
        if (n.code != "snapshot") codes.push_back(n.code);
      }
      dump << v << '\t' << d->vehicle.make << '\t' << d->vehicle.model << '\t'
           << d->vehicle.model_year << '\t' << d->vehicle.vehicle_type << '\t'
           << absl::StrJoin(codes, ",") << '\n';
    }
  }
  constexpr int kRounds = 5;
  // Wall time, and the thread's CPU time (less disturbed when other
  // processes share the cores).
  std::vector<double> micros, cpu_micros;
  micros.reserve(vins.size() * kRounds);
  cpu_micros.reserve(vins.size() * kRounds);
  for (int round = 0; round < kRounds; ++round) {
    for (const std::string& v : vins) {
      const double c0 = ThreadCpuMicros();
      const auto a = std::chrono::steady_clock::now();
      auto d = snap->Decode(v, 0, reference_year);
      const auto b = std::chrono::steady_clock::now();
      const double c1 = ThreadCpuMicros();
      if (!d.ok()) return 1;
      micros.push_back(std::chrono::duration<double, std::micro>(b - a).count());
      cpu_micros.push_back(c1 - c0);
    }
  }
  double sum = 0;
  for (double m : micros) sum += m;
  std::printf("decode wall time: %zu VINs x %d rounds (%zu with a model): median %.2f us, "
              "p90 %.2f us, p99 %.2f us, max %.2f us, mean %.2f us\n",
              vins.size(), kRounds, with_model, Percentile(micros, 0.5),
              Percentile(micros, 0.9), Percentile(micros, 0.99),
              Percentile(micros, 1.0), sum / micros.size());
  std::printf("decode CPU time: median %.2f us, p90 %.2f us, p99 %.2f us\n",
              Percentile(cpu_micros, 0.5), Percentile(cpu_micros, 0.9),
              Percentile(cpu_micros, 0.99));
  return 0;
}
