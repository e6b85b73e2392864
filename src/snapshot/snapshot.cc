#include "snapshot/snapshot.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <future>
#include <set>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "snapshot/decode_pass.h"
#include "snapshot/model_year.h"
#include "snapshot/reference_data.h"
#include "snapshot/result_mapping.h"
#include "snapshot/sha256.h"
#include "snapshot/snapshot_index.h"
#include "snapshot/vpic_codes.h"
#include "vin/vin.h"

namespace snapshot {
namespace {

// spVinDecode's best pass: error value, element weight, pattern count, year
// (with a bonus for the caller's year); the earlier pass on a tie.
bool BetterPass(const PassResult& a, const PassResult& b, int hint) {
  auto year = [hint](const PassResult& r) {
    return r.pass.year + (hint != 0 && r.pass.year == hint ? 10000 : 0);
  };
  return ScoresRankBefore(a, b, year(a), year(b));
}

// Rule 21: when position 10 left two years (passes 3 and 4 both ran) and
// the chosen pass's year is one of them, both years, the chosen first, with
// the rule that chose it.
std::vector<domain::ModelYearCandidate> CandidatesOf(
    const std::vector<PassResult>& results, size_t best, int hint) {
  const PassResult* newer = nullptr;
  const PassResult* older = nullptr;
  for (const PassResult& r : results) {
    if (r.pass.number == 3 && !r.pass.conclusive) newer = &r;
    if (r.pass.number == 4) older = &r;
  }
  const PassResult& chosen = results[best];
  if (newer == nullptr || older == nullptr || newer->pass.year == 0 ||
      (&chosen != newer && &chosen != older)) {
    return {};
  }
  const PassResult& other = &chosen == newer ? *older : *newer;
  std::string rule;
  if (hint != 0 && chosen.pass.year == hint) {
    rule = domain::year_rule::kHint;
  } else if (chosen.error_value != other.error_value ||
             chosen.elements_weight != other.elements_weight ||
             chosen.patterns != other.patterns) {
    rule = domain::year_rule::kSchemas;
  } else {
    rule = domain::year_rule::kNewerCycle;
  }
  return {{chosen.pass.year, std::move(rule), true},
          {other.pass.year, domain::year_rule::kOtherCycle, false}};
}

// A VIN's passes, run as spVinDecode runs them, and the best one.
struct ChosenPass {
  absl::string_view given;  // the caller's VIN
  std::string padded;       // it read with '*' up to 17, when shorter
  std::vector<PassResult> results;
  size_t best = 0;

  absl::string_view vin() const {
    return padded.empty() ? given : absl::string_view(padded);
  }
};

absl::StatusOr<ChosenPass> RunPasses(const SnapshotIndex& ix,
                                     absl::string_view vin, int model_year_hint,
                                     int reference_year) {
  if (absl::Status input = Snapshot::CheckInput(vin); !input.ok()) {
    return input;
  }
  ChosenPass out;
  out.given = vin;
  // A partial VIN, read as vPIC reads it: '*' for every unknown position.
  if (vin.size() < 17) {
    out.padded = absl::StrCat(vin, std::string(17 - vin.size(), '*'));
    vin = out.padded;
  }
  if (reference_year < Snapshot::kMinReferenceYear ||
      reference_year > Snapshot::kMaxReferenceYear) {
    return absl::InvalidArgumentError(
        absl::StrCat("implausible reference year ", reference_year));
  }
  if (model_year_hint < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative model year hint ", model_year_hint));
  }

  // vPIC fVinWMI: positions 1-3, plus 12-14 when position 3 is '9'.
  std::string wmi_code(vin.substr(0, 3));
  if (vin[2] == '9') absl::StrAppend(&wmi_code, vin.substr(11, 3));
  const WmiInfo* raw_wmi = nullptr;
  if (auto it = ix.wmi_by_code.find(PackWmi(wmi_code));
      it != ix.wmi_by_code.end()) {
    raw_wmi = &ix.wmis[it->second];
  }
  // vPIC only knows WMIs public by "now" (the reference year here).
  const WmiInfo* wmi =
      raw_wmi != nullptr && raw_wmi->public_year <= reference_year ? raw_wmi
                                                                   : nullptr;

  const std::vector<PlannedPass> plan =
      PlanPasses(ix, vin, raw_wmi, model_year_hint, reference_year);
  std::vector<PassResult>& results = out.results;
  results.reserve(plan.size());
  size_t next = 0;
  if (plan.front().number == 2) {
    results.push_back(RunPass(ix, vin, wmi, raw_wmi, plan.front()));
    next = 1;
    const bool nothing =
        std::find(results[0].codes.begin(), results[0].codes.end(),
                  code::kNoDetailedData) != results[0].codes.end();
    if (!NeedsFallbackAfterHint(plan, nothing)) next = plan.size();
  }
  for (; next < plan.size(); ++next) {
    results.push_back(RunPass(ix, vin, wmi, raw_wmi, plan[next]));
  }
  for (size_t i = 1; i < results.size(); ++i) {
    if (BetterPass(results[i], results[out.best], model_year_hint)) {
      out.best = i;
    }
  }
  return out;
}

std::vector<std::string> VariablesOf(const SnapshotIndex& ix) {
  std::set<std::string> names = {"MakeID", "ModelID"};
  auto add = [&](int slot) {
    if (slot >= 0 && slot < static_cast<int>(ix.elements.size())) {
      names.insert(ix.elements[slot].code);
    }
  };
  for (const SnapshotIndex::PatternScan& p : ix.pattern_scan) add(p.slot);
  for (const auto& [name, rows] : ix.engine_models) {
    for (const EngineModelRow& r : rows) add(r.slot);
  }
  for (const ConversionRule& c : ix.conversions) add(c.to_slot);
  for (int element :
       {element::kMake, element::kModelYear, element::kManufacturer,
        element::kManufacturerId, element::kVehicleType}) {
    add(ix.SlotOf(element));
  }
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace

Snapshot::Snapshot(std::unique_ptr<const SnapshotIndex> index,
                   SnapshotInfo info)
    : index_(std::move(index)),
      info_(std::move(info)),
      note_prefix_(absl::StrCat("decoded offline from the vPIC snapshot of ",
                                info_.date, " (sha256 ", info_.sha256,
                                "), reference year ")),
      reference_note_(absl::StrCat(
          "answered from the offline vPIC snapshot of ", info_.date,
          " (sha256 ", info_.sha256.substr(0, 12), ")")),
      variables_(VariablesOf(*index_)) {
  variable_of_slot_.assign(index_->elements.size(), -1);
  for (size_t v = 0; v < variables_.size(); ++v) {
    const std::string& name = variables_[v];
    if (name == "MakeID") make_id_variable_ = static_cast<int>(v);
    if (name == "ModelID") model_id_variable_ = static_cast<int>(v);
  }
  for (size_t slot = 0; slot < index_->elements.size(); ++slot) {
    auto it = std::lower_bound(variables_.begin(), variables_.end(),
                               index_->elements[slot].code);
    if (it != variables_.end() && *it == index_->elements[slot].code) {
      variable_of_slot_[slot] = static_cast<int>(it - variables_.begin());
    }
  }
}

Snapshot::~Snapshot() = default;

absl::StatusOr<std::shared_ptr<const Snapshot>> Snapshot::Load(
    const std::string& path) {
  const LoadLimit unlimited;
  return Load(path, unlimited);
}

absl::StatusOr<std::shared_ptr<const Snapshot>> Snapshot::Load(
    const std::string& path, const LoadLimit& limit) {
  const absl::Time start = absl::Now();
  // A FIFO or a device would block the open or never end.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("snapshot file ", path,
                       " not found (run scripts/fetch_snapshot.sh)"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot stat snapshot file ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("snapshot file ", path, " is not a regular file"));
  }
  // Hash the file on a second thread while the index is built; a failed
  // index stops the hash.
  std::atomic<bool> index_failed{false};
  std::future<absl::StatusOr<std::string>> sha256 =
      std::async(std::launch::async, [&path, &limit, &index_failed] {
        return Sha256File(path, [&]() -> absl::Status {
          if (index_failed.load(std::memory_order_relaxed)) {
            return absl::AbortedError("the index failed");
          }
          return limit.Check();
        });
      });
  absl::StatusOr<std::unique_ptr<const SnapshotIndex>> index =
      LoadSnapshotIndex(path, limit);
  if (!index.ok()) index_failed.store(true, std::memory_order_relaxed);
  absl::StatusOr<std::string> digest = sha256.get();
  if (!index.ok()) return index.status();
  if (!digest.ok()) return digest.status();
#if defined(__GLIBC__)
  // Give the loader's scratch memory (SQLite pages, row buffers) back to the
  // system now rather than keep it resident for the life of the process.
  malloc_trim(0);
#endif
  SnapshotInfo info;
  info.path = path;
  info.sha256 = *std::move(digest);
  info.date = (*index)->data_date;
  info.load_time = absl::Now() - start;
  return std::shared_ptr<const Snapshot>(
      new Snapshot(*std::move(index), std::move(info)));
}

absl::Status Snapshot::CheckInput(absl::string_view vin) {
  if (vin.size() < 3 || vin.size() > 17) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot decode needs a 17-character VIN (or a partial "
                     "one of at least 3), got ",
                     vin.size(), " characters"));
  }
  for (size_t i = 0; i < vin.size(); ++i) {
    if (!vin::IsDigitOrUpper(vin[i]) && !(vin[i] == '*' && i >= 3)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "snapshot decode needs a normalised VIN (digits and upper-case "
          "letters); position ",
          i + 1, " is not one"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SnapshotDecode> Snapshot::Decode(absl::string_view vin,
                                                int model_year_hint,
                                                int reference_year,
                                                bool explain) const {
  absl::StatusOr<ChosenPass> chosen =
      RunPasses(*index_, vin, model_year_hint, reference_year);
  if (!chosen.ok()) return chosen.status();
  SnapshotDecode out =
      MapResult(*index_, chosen->results[chosen->best], chosen->vin(), explain);
  out.model_year_candidates =
      CandidatesOf(chosen->results, chosen->best, model_year_hint);
  out.notes.push_back({"snapshot", absl::StrCat(note_prefix_, reference_year)});
  return out;
}

absl::StatusOr<std::vector<std::string>> Snapshot::DecodeVariables(
    absl::string_view vin, int model_year_hint, int reference_year) const {
  absl::StatusOr<ChosenPass> chosen =
      RunPasses(*index_, vin, model_year_hint, reference_year);
  if (!chosen.ok()) return chosen.status();
  MappedValues mapped =
      MapValues(*index_, chosen->results[chosen->best], chosen->vin(), nullptr);
  std::vector<std::string> out(variables_.size());
  for (auto& [slot, value] : mapped.by_slot) {
    if (variable_of_slot_[slot] >= 0) {
      out[variable_of_slot_[slot]] = std::move(value);
    }
  }
  // Decode's attributes hold the ids after the elements' values.
  if (mapped.make_id.has_value() && make_id_variable_ >= 0) {
    out[make_id_variable_] = *std::move(mapped.make_id);
  }
  if (mapped.model_id.has_value() && model_id_variable_ >= 0) {
    out[model_id_variable_] = *std::move(mapped.model_id);
  }
  return out;
}

size_t Snapshot::MemoryBytes() const {
  const SnapshotIndex& ix = *index_;
  size_t bytes = 0;
  bytes += ix.pattern_scan.capacity() * sizeof(SnapshotIndex::PatternScan);
  bytes += ix.pattern_value.capacity() * sizeof(uint32_t);
  bytes += ix.pattern_changed.capacity() * sizeof(int64_t);
  bytes += ix.pattern_id.capacity() * sizeof(uint32_t);
  bytes += ix.schema_patterns_begin.capacity() * sizeof(uint32_t);
  bytes += ix.keys.capacity() * sizeof(CompiledKey);
  bytes += ix.key_masks.capacity() * sizeof(uint64_t);
  bytes += ix.links.capacity() * sizeof(SchemaLink);
  bytes += ix.schema_ids.capacity() * sizeof(int);
  for (const std::string& k : ix.key_text) bytes += sizeof(k) + k.capacity();
  for (const ValueInfo& v : ix.values) {
    bytes += sizeof(ValueInfo) + v.text.capacity() + v.attribute_id.capacity();
  }
  for (const WmiInfo& w : ix.wmis) {
    bytes += sizeof(WmiInfo) + w.manufacturer.capacity() +
             w.vehicle_type.capacity();
  }
  bytes += ix.wmi_by_code.capacity() * (sizeof(uint64_t) + sizeof(uint32_t) + 1);
  for (const MakeInfo& m : ix.makes) bytes += sizeof(MakeInfo) + m.name.capacity();
  for (const auto& [name, rows] : ix.engine_models) {
    bytes += name.capacity() + rows.capacity() * sizeof(EngineModelRow) + 64;
  }
  return bytes + ix.reference.MemoryBytes();
}

absl::StatusOr<std::shared_ptr<const std::string>> Snapshot::Reference(
    absl::string_view key) const {
  {
    absl::MutexLock lock(&answers_mu_);
    if (auto it = answers_.find(key); it != answers_.end()) return it->second;
  }
  absl::StatusOr<std::string> answer = ReferenceAnswer(index_->reference, key);
  if (!answer.ok()) return answer.status();
  auto doc = std::make_shared<const std::string>(*std::move(answer));
  absl::MutexLock lock(&answers_mu_);
  if (answers_.size() >= kAnswersKept) answers_.clear();  // bounded, simply
  answers_.emplace(std::string(key), doc);
  return doc;
}

}  // namespace snapshot
