// A decoded vehicle and the notes on a decode, independent of the wire
// format and of where the decode came from (vPIC, the cache, the snapshot).
#ifndef VIN_DOMAIN_VEHICLE_H_
#define VIN_DOMAIN_VEHICLE_H_

#include <map>
#include <string>

namespace domain {

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
  // The attributes whose text vPIC padded with whitespace ("TRUCK "), as
  // vPIC wrote them: for answers in vPIC's own shape (the HTTP gateway).
  std::map<std::string, std::string> untrimmed;
};

}  // namespace domain

#endif  // VIN_DOMAIN_VEHICLE_H_
