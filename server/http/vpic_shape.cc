#include "server/http/vpic_shape.h"

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace server {
namespace http {
namespace {

using Json = nlohmann::ordered_json;

// What vPIC says of every answer, and the Count its DecodeVinValues answers
// carry (the fixtures' value: it counts neither the results nor the
// variables).
constexpr char kMessage[] =
    "Results returned successfully. NOTE: Any missing decoded values should "
    "be interpreted as NHTSA does not have data on the specific variable. "
    "Missing value should NOT be interpreted as an indication that a "
    "feature or technology is unavailable for a vehicle.";
constexpr int kValuesCount = 134;

// A note vPIC made (its ErrorCode items are numbers), not one of ours.
bool IsVpicNote(const vin::v1::DecodeNote& n) {
  if (n.code().empty()) return false;
  for (char c : n.code()) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Json ResultObject(const vin::v1::DecodeResult& r) {
  std::vector<std::string> codes, texts;
  for (const vin::v1::DecodeNote& n : r.notes()) {
    if (!IsVpicNote(n)) continue;
    codes.push_back(n.code());
    texts.push_back(absl::StrCat(n.code(), " - ", n.message()));
  }
  const auto& attributes = r.vehicle().attributes();
  const auto& untrimmed = r.vehicle().vpic_untrimmed();
  Json out = Json::object();
  for (const std::string& name : VpicVariables()) {
    if (name == "ErrorCode") {
      out[name] = absl::StrJoin(codes, ",");
    } else if (name == "ErrorText") {
      out[name] = absl::StrJoin(texts, "; ");
    } else if (name == "VIN") {
      out[name] = r.vin();
    } else if (auto u = untrimmed.find(name); u != untrimmed.end()) {
      out[name] = u->second;
    } else if (auto a = attributes.find(name); a != attributes.end()) {
      out[name] = a->second;
    } else {
      out[name] = "";
    }
  }
  return out;
}

std::string Dump(const Json& j) {
  // Invalid UTF-8 from upstream is replaced, never a reason to fail.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

const std::vector<std::string>& VpicVariables() {
  static const auto* names = new std::vector<std::string>{
    "ABS", "ActiveSafetySysNote", "AdaptiveCruiseControl",
    "AdaptiveDrivingBeam", "AdaptiveHeadlights", "AdditionalErrorText",
    "AirBagLocCurtain", "AirBagLocFront", "AirBagLocKnee",
    "AirBagLocSeatCushion", "AirBagLocSide", "AutoReverseSystem",
    "AutomaticPedestrianAlertingSound", "AxleConfiguration", "Axles",
    "BasePrice", "BatteryA", "BatteryA_to", "BatteryCells", "BatteryInfo",
    "BatteryKWh", "BatteryKWh_to", "BatteryModules", "BatteryPacks",
    "BatteryType", "BatteryV", "BatteryV_to", "BedLengthIN", "BedType",
    "BlindSpotIntervention", "BlindSpotMon", "BodyCabType", "BodyClass",
    "BrakeSystemDesc", "BrakeSystemType", "BusFloorConfigType", "BusLength",
    "BusType", "CAN_AACN", "CIB", "CashForClunkers", "ChargerLevel",
    "ChargerPowerKW", "CoolingType", "CurbWeightLB", "CustomMotorcycleType",
    "DaytimeRunningLight", "DestinationMarket", "DisplacementCC",
    "DisplacementCI", "DisplacementL", "Doors", "DriveType", "DriverAssist",
    "DynamicBrakeSupport", "EDR", "ESC", "EVDriveUnit",
    "ElectrificationLevel", "EngineConfiguration", "EngineCycles",
    "EngineCylinders", "EngineHP", "EngineHP_to", "EngineKW",
    "EngineManufacturer", "EngineModel", "EntertainmentSystem", "ErrorCode",
    "ErrorText", "ForwardCollisionWarning", "FuelInjectionType",
    "FuelTypePrimary", "FuelTypeSecondary", "GCWR", "GCWR_to", "GVWR",
    "GVWR_to", "KeylessIgnition", "LaneCenteringAssistance",
    "LaneDepartureWarning", "LaneKeepSystem", "LowerBeamHeadlampLightSource",
    "Make", "MakeID", "Manufacturer", "ManufacturerId", "Model", "ModelID",
    "ModelYear", "MotorcycleChassisType", "MotorcycleSuspensionType",
    "NCSABodyType", "NCSAMake", "NCSAMapExcApprovedBy",
    "NCSAMapExcApprovedOn", "NCSAMappingException", "NCSAModel", "NCSANote",
    "Note", "OtherBusInfo", "OtherEngineInfo", "OtherMotorcycleInfo",
    "OtherRestraintSystemInfo", "OtherTrailerInfo", "ParkAssist",
    "PedestrianAutomaticEmergencyBraking", "PlantCity", "PlantCompanyName",
    "PlantCountry", "PlantState", "PossibleValues", "Pretensioner",
    "RearAutomaticEmergencyBraking", "RearCrossTrafficAlert",
    "RearVisibilitySystem", "SAEAutomationLevel", "SAEAutomationLevel_to",
    "SeatBeltsAll", "SeatRows", "Seats", "SemiautomaticHeadlampBeamSwitching",
    "Series", "Series2", "SteeringLocation", "SuggestedVIN", "TPMS",
    "TopSpeedMPH", "TrackWidth", "TractionControl", "TrailerBodyType",
    "TrailerLength", "TrailerType", "TransmissionSpeeds", "TransmissionStyle",
    "Trim", "Trim2", "Turbo", "VIN", "ValveTrainDesign", "VehicleType",
    "WheelBaseLong", "WheelBaseShort", "WheelBaseType", "WheelSizeFront",
    "WheelSizeRear", "Wheels", "Windows",
  };
  return *names;
}

std::string VpicValuesAnswer(const vin::v1::DecodeResult& result,
                             absl::string_view searched) {
  Json j = Json::object();
  j["Count"] = kValuesCount;
  j["Message"] = kMessage;
  j["SearchCriteria"] = absl::StrCat("VIN(s): ", searched);
  j["Results"] = Json::array({ResultObject(result)});
  return Dump(j);
}

std::string VpicBatchAnswer(const std::vector<vin::v1::DecodeResult>& results) {
  Json j = Json::object();
  j["Count"] = results.size();
  j["Message"] = kMessage;
  j["SearchCriteria"] = "";
  Json list = Json::array();
  for (const auto& r : results) list.push_back(ResultObject(r));
  j["Results"] = std::move(list);
  return Dump(j);
}

}  // namespace http
}  // namespace server
