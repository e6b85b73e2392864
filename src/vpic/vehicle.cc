#include "vpic/vehicle.h"

#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace vpic {
namespace {

// A non-negative integer, or 0 when `text` is not one.
int NonNegativeInt(absl::string_view text) {
  int n = 0;
  if (!absl::SimpleAtoi(text, &n) || n < 0) return 0;
  return n;
}

// A non-negative finite number, or 0 when `text` is not one.
double NonNegativeDouble(absl::string_view text) {
  double d = 0;
  if (!absl::SimpleAtod(text, &d) || !std::isfinite(d) || d < 0) return 0;
  return d;
}

}  // namespace

void FillTypedFields(Vehicle* vehicle) {
  const auto& attrs = vehicle->attributes;
  auto get = [&attrs](const char* name) -> std::string {
    auto it = attrs.find(name);
    return it == attrs.end() ? std::string() : it->second;
  };
  vehicle->make = get("Make");
  vehicle->model = get("Model");
  vehicle->model_year = NonNegativeInt(get("ModelYear"));
  vehicle->trim = get("Trim");
  vehicle->series = get("Series");
  vehicle->manufacturer = get("Manufacturer");
  vehicle->vehicle_type = get("VehicleType");
  vehicle->body_class = get("BodyClass");
  vehicle->drive_type = get("DriveType");
  vehicle->fuel_type_primary = get("FuelTypePrimary");
  vehicle->engine_model = get("EngineModel");
  vehicle->engine_cylinders = NonNegativeInt(get("EngineCylinders"));
  vehicle->displacement_l = NonNegativeDouble(get("DisplacementL"));
  vehicle->plant_country = get("PlantCountry");
}

}  // namespace vpic
