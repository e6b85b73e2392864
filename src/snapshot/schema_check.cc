#include "snapshot/schema_check.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace snapshot {
namespace {

constexpr size_t kMaxNameBytes = 64;
constexpr char kOnlyTables[] = " (a snapshot holds only tables and indexes)";

// A name taken from the file, fit for a log line: printable ASCII, bounded.
std::string Quoted(absl::string_view name) {
  const bool cut = name.size() > kMaxNameBytes;
  return absl::StrCat("\"", absl::CHexEscape(name.substr(0, kMaxNameBytes)),
                      cut ? "...\"" : "\"");
}

absl::Status Refuse(const std::string& what) {
  return absl::FailedPreconditionError(what);
}

}  // namespace

absl::Status CheckSchema(const std::vector<SchemaObject>& objects,
                         absl::Span<const absl::string_view> required) {
  for (const SchemaObject& o : objects) {
    if (o.type == "view") {
      return Refuse(
          absl::StrCat("it holds view ", Quoted(o.name), kOnlyTables));
    }
    if (o.type == "trigger") {
      return Refuse(absl::StrCat("it holds trigger ", Quoted(o.name), " on ",
                                 Quoted(o.table), kOnlyTables));
    }
    if (o.type == "table" && o.virtual_table) {
      return Refuse(
          absl::StrCat("it holds virtual table ", Quoted(o.name), kOnlyTables));
    }
    if (o.type == "table" && !o.generated_columns.empty()) {
      return Refuse(absl::StrCat("its table ", Quoted(o.name),
                                 " has generated column ",
                                 Quoted(o.generated_columns.front()),
                                 " (a snapshot's columns hold plain values)"));
    }
    if (o.type != "table" && o.type != "index") {
      return Refuse(absl::StrCat("it holds ", Quoted(o.type), " ",
                                 Quoted(o.name), kOnlyTables));
    }
  }
  for (absl::string_view table : required) {
    bool found = false;
    for (const SchemaObject& o : objects) {
      // SQLite matches table names without regard to ASCII case.
      found =
          found || (o.type == "table" && absl::EqualsIgnoreCase(o.name, table));
    }
    if (!found) return Refuse(absl::StrCat("it has no ", table, " table"));
  }
  return absl::OkStatus();
}

}  // namespace snapshot
