#include "server/http/vpic_shape.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace server {
namespace http {
namespace {

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

// `text` as a JSON string, appended to `out`.
void AppendString(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      switch (c) {
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        default:
          out->append("\\u00");
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 15]);
      }
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

// One result object: every variable, in vPIC's order. Written straight into
// `out` (this is the hot path of cache hits through the gateway).
void AppendResult(const vin::v1::DecodeResult& r, std::string* out) {
  std::string codes, texts;
  for (const vin::v1::DecodeNote& n : r.notes()) {
    if (!IsVpicNote(n)) continue;
    if (!codes.empty()) {
      codes.push_back(',');
      texts.append("; ");
    }
    absl::StrAppend(&codes, n.code());
    absl::StrAppend(&texts, n.code(), " - ", n.message());
  }
  const auto& attributes = r.vehicle().attributes();
  const auto& untrimmed = r.vehicle().vpic_untrimmed();
  out->push_back('{');
  bool first = true;
  for (const std::string& name : VpicVariables()) {
    if (!first) out->push_back(',');
    first = false;
    AppendString(name, out);
    out->push_back(':');
    if (name == "ErrorCode") {
      AppendString(codes, out);
    } else if (name == "ErrorText") {
      AppendString(texts, out);
    } else if (name == "VIN") {
      AppendString(r.vin(), out);
    } else if (auto u = untrimmed.find(name); u != untrimmed.end()) {
      AppendString(u->second, out);
    } else if (auto a = attributes.find(name); a != attributes.end()) {
      AppendString(a->second, out);
    } else {
      out->append("\"\"");
    }
  }
  out->push_back('}');
}

// The envelope around `results` (already written, comma-separated).
std::string Envelope(size_t count, absl::string_view search_criteria,
                     absl::string_view results) {
  std::string out;
  out.reserve(results.size() + 512);
  absl::StrAppend(&out, "{\"Count\":", count, ",\"Message\":");
  AppendString(kMessage, &out);
  out.append(",\"SearchCriteria\":");
  AppendString(search_criteria, &out);
  absl::StrAppend(&out, ",\"Results\":[", results, "]}");
  return out;
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
  std::string one;
  one.reserve(4096);
  AppendResult(result, &one);
  return Envelope(kValuesCount, absl::StrCat("VIN(s): ", searched), one);
}

std::string VpicBatchAnswer(const std::vector<vin::v1::DecodeResult>& results) {
  std::string all;
  all.reserve(4096 * results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (i > 0) all.push_back(',');
    AppendResult(results[i], &all);
  }
  return Envelope(results.size(), "", all);
}

}  // namespace http
}  // namespace server
