// Offline VIN decoding from NHTSA's vPIC snapshot (SNAPSHOT.md), following
// NHTSA's spVinDecode rules (section 4), not corgi's.
//
// A Snapshot is immutable once loaded: Decode() is const and safe to call
// from any number of threads at once. Share it as shared_ptr<const Snapshot>
// (see SnapshotStore) so that a reload can replace it while decodes that
// started on the old one finish on it.
#ifndef VIN_SNAPSHOT_SNAPSHOT_H_
#define VIN_SNAPSHOT_SNAPSHOT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "domain/provenance.h"
#include "snapshot/load_limit.h"
#include "vpic/vehicle.h"

namespace snapshot {

struct SnapshotIndex;

// Where a snapshot came from.
struct SnapshotInfo {
  std::string path;
  std::string sha256;  // of the SQLite file, 64 hex digits
  std::string date;    // "YYYY-MM-DD": the newest NHTSA pattern change
  absl::Duration load_time;
};

// A finished snapshot decode: what a live vPIC decode would hold (typed
// fields, `attributes` by vPIC variable name, notes with vPIC error codes),
// minus what the snapshot does not have. Notes also carry one "snapshot" note
// naming the snapshot date, its sha256 and the reference year.
struct SnapshotDecode {
  vpic::Vehicle vehicle;
  std::vector<vpic::Note> notes;
  // Rule 21. With `explain`: where each variable of `vehicle.attributes`
  // came from (a multi-valued variable once per value), in attribute order.
  std::vector<domain::FieldSource> provenance;
  // When position 10 leaves two years and the decode's rule for picking
  // one is not certain: both, the chosen one first.
  std::vector<domain::ModelYearCandidate> model_year_candidates;
};

class Snapshot {
 public:
  // Reads the SQLite file once into memory and hashes it, the file taken as
  // input of unknown origin (sqlite_db.h, schema_check.h). NOT_FOUND when
  // the file is missing; FAILED_PRECONDITION when it is not a regular file,
  // not a vPIC snapshot, or holds what schema_check.h refuses; CANCELLED or
  // DEADLINE_EXCEEDED once `limit` says stop (noticed within milliseconds:
  // README "Offline decoding" has the measured figures).
  static absl::StatusOr<std::shared_ptr<const Snapshot>> Load(
      const std::string& path, const LoadLimit& limit);
  // The same with no limit.
  static absl::StatusOr<std::shared_ptr<const Snapshot>> Load(
      const std::string& path);

  ~Snapshot();
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  // Decodes a 17-character VIN (normalised: trimmed, upper case; validate it
  // with vin::Validate first), or a partial one (vin::ValidatePartial: '*'
  // for an unknown position after the WMI, 3 to 17 characters), read as
  // padded with '*' to 17: its '*' positions match only patterns that do
  // not name them, and the result notes "6" (Incomplete VIN) instead of a
  // check digit. `model_year_hint` is the caller's model year,
  // 0 for none. `reference_year` stands for vPIC's "now": position-10 years
  // after reference_year + 2 read as 30 years earlier.
  //
  // As in vPIC, an unknown WMI, a VIN that matches no pattern or a bad
  // position 10 are results with notes ("7", "8", "11", "400"), not errors.
  // INVALID_ARGUMENT only for input that is no VIN or partial VIN of the
  // VIN alphabet, or an implausible reference year.
  // With `explain`, the result's provenance is filled (rule 21).
  absl::StatusOr<SnapshotDecode> Decode(absl::string_view vin,
                                        int model_year_hint, int reference_year,
                                        bool explain = false) const;
  // Whether Decode reads `vin` (normalised) as a VIN or a partial one: 3 to
  // 17 digits and upper-case letters, I, O and Q included, '*' after the
  // WMI; else Decode's own INVALID_ARGUMENT, naming what is not.
  static absl::Status CheckInput(absl::string_view vin);

  // Rule 21's parity: what Decode's `vehicle.attributes` hold for each of
  // variables(), in that order ("" for what it does not give), and nothing
  // else: no typed fields, notes, provenance or candidates, so that
  // comparing every live answer costs as little as it can. The same input
  // rules and errors as Decode.
  absl::StatusOr<std::vector<std::string>> DecodeVariables(
      absl::string_view vin, int model_year_hint, int reference_year) const;

  // Rule 21: corrections of an invalid VIN `vin17` (17 characters,
  // normalised: digits and upper-case letters, I, O and Q included): the
  // VINs one character away whose check digit is right, whose characters
  // are all allowed where they stand, and whose WMI's patterns in this
  // snapshot match them, best first, at most `max`. Never `vin17` itself.
  // Empty for input of another length or alphabet. Pure: the same input
  // gives the same list.
  std::vector<std::string> Suggest(absl::string_view vin17, int reference_year,
                                   size_t max) const;
  // Whether Suggest reads `vin17`: 17 digits and upper-case letters.
  static bool SuggestReads(absl::string_view vin17);

  // Rule 18: the snapshot's answer to reference request `key`
  // (domain::DecodeKey::reference) as vPIC's JSON, built from what was read
  // at load (no SQL) and kept: the same key gets the same document. NOT_FOUND
  // naming what the snapshot does not hold.
  absl::StatusOr<std::shared_ptr<const std::string>> Reference(
      absl::string_view key) const;

  // The note a reference answer from this snapshot carries (its data date
  // and sha256), made once.
  const std::string& reference_note() const { return reference_note_; }

  // The reference years Decode and Suggest accept.
  static constexpr int kMinReferenceYear = 1981;
  static constexpr int kMaxReferenceYear = 2999;

  const SnapshotInfo& info() const { return info_; }
  // The vPIC variables this snapshot can give (rule 21: what parity
  // compares), sorted: the elements its patterns, engine models and
  // conversions set, those the WMI and the model year give, MakeID and
  // ModelID.
  const std::vector<std::string>& variables() const { return variables_; }

  // Approximate heap bytes held by the index.
  size_t MemoryBytes() const;

 private:
  Snapshot(std::unique_ptr<const SnapshotIndex> index, SnapshotInfo info);

  std::unique_ptr<const SnapshotIndex> index_;
  SnapshotInfo info_;
  std::string note_prefix_;  // the "snapshot" note, up to the reference year
  std::string reference_note_;
  std::vector<std::string> variables_;
  // Each element slot's index in variables_ (-1: none), and the ids'.
  std::vector<int> variable_of_slot_;
  int make_id_variable_ = -1;
  int model_id_variable_ = -1;

  // Reference answers made (Reference()), at most kAnswersKept.
  static constexpr size_t kAnswersKept = 1024;
  mutable absl::Mutex answers_mu_;
  mutable absl::flat_hash_map<std::string, std::shared_ptr<const std::string>>
      answers_ ABSL_GUARDED_BY(answers_mu_);
};

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SNAPSHOT_H_
