// The result of a finished vPIC decode, independent of the wire format.
#ifndef VIN_VPIC_VEHICLE_H_
#define VIN_VPIC_VEHICLE_H_

#include <map>
#include <string>
#include <vector>

namespace vpic {

// A remark on a finished decode: a vPIC ErrorCode item ("1", "14") or a local
// warning ("check_digit").
struct Note {
  std::string code;
  std::string message;
  bool operator==(const Note& o) const {
    return code == o.code && message == o.message;
  }
};

// "" / 0 means "not provided by NHTSA".
struct Vehicle {
  std::string make;
  std::string model;
  int model_year = 0;
  std::string trim;
  std::string series;
  std::string manufacturer;
  std::string vehicle_type;
  std::string body_class;
  std::string drive_type;
  std::string fuel_type_primary;
  std::string engine_model;
  int engine_cylinders = 0;
  double displacement_l = 0;
  std::string plant_country;
  // Every non-empty vPIC variable, trimmed, keyed by its vPIC name, except
  // ErrorCode and ErrorText (which become notes).
  std::map<std::string, std::string> attributes;
};

struct Decoded {
  Vehicle vehicle;
  std::vector<Note> notes;
};

// Fills the typed fields of `vehicle` from its `attributes` (vPIC variable
// names: "Make", "ModelYear", "DisplacementL", ...), so that every source of
// results (live answers, the snapshot) fills them alike. Numbers that do not
// parse as non-negative values stay 0.
void FillTypedFields(Vehicle* vehicle);

}  // namespace vpic

#endif  // VIN_VPIC_VEHICLE_H_
