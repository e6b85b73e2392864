// The result of a finished vPIC decode, independent of the wire format.
#ifndef VIN_VPIC_VEHICLE_H_
#define VIN_VPIC_VEHICLE_H_

#include <memory>
#include <string>
#include <vector>

#include "domain/vehicle.h"

namespace vpic {

// The vocabulary every layer shares (src/domain/).
using Note = domain::Note;
using Vehicle = domain::Vehicle;

struct Decoded {
  Vehicle vehicle;
  std::vector<Note> notes;
  // A reference request's answer (reference.h): the JSON document, checked.
  std::shared_ptr<const std::string> document;
};

// Fills the typed fields of `vehicle` from its `attributes` (vPIC variable
// names: "Make", "ModelYear", "DisplacementL", ...), so that every source of
// results (live answers, the snapshot) fills them alike. Numbers that do not
// parse as non-negative values stay 0.
void FillTypedFields(Vehicle* vehicle);

}  // namespace vpic

#endif  // VIN_VPIC_VEHICLE_H_
