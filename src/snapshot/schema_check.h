// What a snapshot file must be before the loader reads a row of it (DESIGN
// rule 19: trust nothing that has not proved itself). The file is input of
// unknown origin: whoever can replace it and send SIGHUP chooses the SQL in
// its schema. So the loader reads ordinary tables only, and a file holding
// anything that runs SQL of the file's choosing when read is refused,
// wherever it sits and whatever its name:
//   - a view or a trigger (vPIC's snapshot has neither);
//   - a virtual table (its module's code runs on every read);
//   - a generated column (its expression runs on every read).
// Indexes are allowed (the snapshot has one, on Pattern). Every table the
// loader reads on each load (kRequiredTables) must be there.
//
// Refusing every view and trigger, not only those named like the loader's
// tables, keeps the rule independent of the table names the data itself
// chooses (Element.LookupTable names the lookup tables).
#ifndef VIN_SNAPSHOT_SCHEMA_CHECK_H_
#define VIN_SNAPSHOT_SCHEMA_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace snapshot {

// A row of sqlite_master.
struct SchemaObject {
  std::string type;  // "table", "index", "view" or "trigger"
  std::string name;
  std::string table;  // tbl_name: the table an index or trigger belongs to
  std::string sql;
  bool virtual_table = false;  // a table with no b-tree of its own
  std::vector<std::string> generated_columns;  // of an ordinary table
};

// The tables every load reads. EngineModel, EngineModelPattern, Conversion
// and the lookup tables are read when the file has them as ordinary tables.
inline constexpr absl::string_view kRequiredTables[] = {
    "Element", "Make",         "Model",      "Make_Model",
    "Wmi",     "Wmi_Make",     "VinSchema",  "Wmi_VinSchema",
    "Pattern", "Manufacturer", "VehicleType"};

// OK when `objects` hold no view, trigger, virtual table or generated
// column, and every table of `required` as an ordinary table. Else
// FAILED_PRECONDITION naming the first object that fails (its name quoted,
// escaped and cut to 64 bytes: it is the file's text), e.g.
//   it holds view "Make" (a snapshot holds only tables and indexes)
//   it has no Make table
absl::Status CheckSchema(const std::vector<SchemaObject>& objects,
                         absl::Span<const absl::string_view> required);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SCHEMA_CHECK_H_
