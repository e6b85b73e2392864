#include "server/http/vpic_shape.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

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

// A result's values by vPIC's variable names (DecodeVinValues' keys), as
// vPIC wrote them: ErrorCode and ErrorText rebuilt from vPIC's notes, the
// padded values from vpic_untrimmed; "" when not provided.
class Values {
 public:
  explicit Values(const vin::v1::DecodeResult& r)
      : r_(r),
        attributes_(r.vehicle().attributes()),
        untrimmed_(r.vehicle().vpic_untrimmed()) {
    for (const vin::v1::DecodeNote& n : r.notes()) {
      if (!IsVpicNote(n)) continue;
      if (!codes_.empty()) {
        codes_.push_back(',');
        texts_.append("; ");
      }
      absl::StrAppend(&codes_, n.code());
      absl::StrAppend(&texts_, n.code(), " - ", n.message());
    }
  }

  absl::string_view Of(const std::string& name) const {
    if (name == "ErrorCode") return codes_;
    if (name == "ErrorText") return texts_;
    if (name == "VIN") return r_.vin();
    if (auto u = untrimmed_.find(name); u != untrimmed_.end()) {
      return u->second;
    }
    if (auto a = attributes_.find(name); a != attributes_.end()) {
      return a->second;
    }
    return {};
  }

 private:
  const vin::v1::DecodeResult& r_;
  const google::protobuf::Map<std::string, std::string>& attributes_;
  const google::protobuf::Map<std::string, std::string>& untrimmed_;
  std::string codes_, texts_;
};

// One result: every variable, in vPIC's order, each a string.
std::vector<VpicField> ResultFields(const vin::v1::DecodeResult& r) {
  const Values values(r);
  std::vector<VpicField> fields;
  fields.reserve(VpicVariables().size());
  for (const std::string& name : VpicVariables()) {
    fields.push_back(VpicField::String(name, values.Of(name)));
  }
  return fields;
}

// The envelope vPIC writes around decodes.
VpicDocument Envelope(size_t count, std::string search_criteria,
                      const char* result_element) {
  VpicDocument doc;
  doc.count = static_cast<int64_t>(count);
  doc.message = kMessage;
  doc.search_criteria = std::move(search_criteria);
  doc.result_element = result_element;
  return doc;
}

// DecodeVin's list: vPIC's variables as it lists them there (its order, its
// names and ids), each with the DecodeVinValues key holding its value.
struct ListedVariable {
  int id;
  const char* name;
  const char* key;
  bool lookup;         // a value from one of vPIC's lists (it has an id)
  const char* id_key;  // the DecodeVinValues key holding that id, if any
};
constexpr ListedVariable kListed[] = {
      {142, "Suggested VIN", "SuggestedVIN", false, ""},
      {143, "Error Code", "ErrorCode", true, ""},
      {144, "Possible Values", "PossibleValues", false, ""},
      {156, "Additional Error Text", "AdditionalErrorText", false, ""},
      {191, "Error Text", "ErrorText", false, ""},
      {10, "Destination Market", "DestinationMarket", true, ""},
      {26, "Make", "Make", true, "MakeID"},
      {27, "Manufacturer Name", "Manufacturer", true, "ManufacturerId"},
      {28, "Model", "Model", true, "ModelID"},
      {29, "Model Year", "ModelYear", false, ""},
      {31, "Plant City", "PlantCity", false, ""},
      {34, "Series", "Series", false, ""},
      {38, "Trim", "Trim", false, ""},
      {39, "Vehicle Type", "VehicleType", true, ""},
      {75, "Plant Country", "PlantCountry", true, ""},
      {76, "Plant Company Name", "PlantCompanyName", false, ""},
      {77, "Plant State", "PlantState", false, ""},
      {109, "Trim2", "Trim2", false, ""},
      {110, "Series2", "Series2", false, ""},
      {114, "Note", "Note", false, ""},
      {136, "Base Price ($)", "BasePrice", false, ""},
      {5, "Body Class", "BodyClass", true, ""},
      {14, "Doors", "Doors", false, ""},
      {40, "Windows", "Windows", false, ""},
      {60, "Wheel Base Type", "WheelBaseType", true, ""},
      {159, "Track Width", "TrackWidth", false, ""},
      {25, "Gross Vehicle Weight Rating From", "GVWR", true, ""},
      {49, "Bed Length (inches)", "BedLengthIN", false, ""},
      {54, "Curb Weight (pounds)", "CurbWeightLB", false, ""},
      {111, "Wheel Base (inches) From", "WheelBaseShort", false, ""},
      {112, "Wheel Base (inches) To", "WheelBaseLong", false, ""},
      {184, "Gross Combination Weight Rating From", "GCWR", true, ""},
      {185, "Gross Combination Weight Rating To", "GCWR_to", true, ""},
      {190, "Gross Vehicle Weight Rating To", "GVWR_to", true, ""},
      {3, "Bed Type", "BedType", true, ""},
      {4, "Cab Type", "BodyCabType", true, ""},
      {116, "Trailer Type Connection", "TrailerType", true, ""},
      {117, "Trailer Body Type", "TrailerBodyType", true, ""},
      {118, "Trailer Length (feet)", "TrailerLength", false, ""},
      {155, "Other Trailer Info", "OtherTrailerInfo", false, ""},
      {115, "Number of Wheels", "Wheels", false, ""},
      {119, "Wheel Size Front (inches)", "WheelSizeFront", false, ""},
      {120, "Wheel Size Rear (inches)", "WheelSizeRear", false, ""},
      {23, "Entertainment System", "EntertainmentSystem", true, ""},
      {36, "Steering Location", "SteeringLocation", true, ""},
      {33, "Number of Seats", "Seats", false, ""},
      {61, "Number of Seat Rows", "SeatRows", false, ""},
      {37, "Transmission Style", "TransmissionStyle", true, ""},
      {63, "Transmission Speeds", "TransmissionSpeeds", false, ""},
      {15, "Drive Type", "DriveType", true, ""},
      {41, "Axles", "Axles", false, ""},
      {145, "Axle Configuration", "AxleConfiguration", true, ""},
      {42, "Brake System Type", "BrakeSystemType", true, ""},
      {52, "Brake System Description", "BrakeSystemDesc", false, ""},
      {1, "Other Battery Info", "BatteryInfo", false, ""},
      {2, "Battery Type", "BatteryType", true, ""},
      {48, "Number of Battery Cells per Module", "BatteryCells", false, ""},
      {57, "Battery Current (Amps) From", "BatteryA", false, ""},
      {58, "Battery Voltage (Volts) From", "BatteryV", false, ""},
      {59, "Battery Energy (KWh) From", "BatteryKWh", false, ""},
      {72, "EV Drive Unit", "EVDriveUnit", true, ""},
      {132, "Battery Current (Amps) To", "BatteryA_to", false, ""},
      {133, "Battery Voltage (Volts) To", "BatteryV_to", false, ""},
      {134, "Battery Energy (KWh) To", "BatteryKWh_to", false, ""},
      {137, "Number of Battery Modules per Pack", "BatteryModules", false, ""},
      {138, "Number of Battery Packs per Vehicle", "BatteryPacks", false, ""},
      {127, "Charger Level", "ChargerLevel", true, ""},
      {128, "Charger Power (KW)", "ChargerPowerKW", false, ""},
      {9, "Engine Number of Cylinders", "EngineCylinders", false, ""},
      {11, "Displacement (CC)", "DisplacementCC", false, ""},
      {12, "Displacement (CI)", "DisplacementCI", false, ""},
      {13, "Displacement (L)", "DisplacementL", false, ""},
      {17, "Engine Stroke Cycles", "EngineCycles", false, ""},
      {18, "Engine Model", "EngineModel", false, ""},
      {21, "Engine Power (KW)", "EngineKW", false, ""},
      {24, "Fuel Type - Primary", "FuelTypePrimary", true, ""},
      {62, "Valve Train Design", "ValveTrainDesign", true, ""},
      {64, "Engine Configuration", "EngineConfiguration", true, ""},
      {66, "Fuel Type - Secondary", "FuelTypeSecondary", true, ""},
      {67, "Fuel Delivery / Fuel Injection Type", "FuelInjectionType", true, ""},
      {71, "Engine Brake (hp) From", "EngineHP", false, ""},
      {122, "Cooling Type", "CoolingType", true, ""},
      {125, "Engine Brake (hp) To", "EngineHP_to", false, ""},
      {126, "Electrification Level", "ElectrificationLevel", true, ""},
      {129, "Other Engine Info", "OtherEngineInfo", false, ""},
      {135, "Turbo", "Turbo", true, ""},
      {139, "Top Speed (MPH)", "TopSpeedMPH", false, ""},
      {146, "Engine Manufacturer", "EngineManufacturer", false, ""},
      {78, "Pretensioner", "Pretensioner", true, ""},
      {79, "Seat Belts Type", "SeatBeltsAll", true, ""},
      {121, "Other Restraint System Info", "OtherRestraintSystemInfo", false, ""},
      {55, "Curtain Air Bag Locations", "AirBagLocCurtain", true, ""},
      {56, "Seat Cushion Air Bag Locations", "AirBagLocSeatCushion", true, ""},
      {65, "Front Air Bag Locations", "AirBagLocFront", true, ""},
      {69, "Knee Air Bag Locations", "AirBagLocKnee", true, ""},
      {107, "Side Air Bag Locations", "AirBagLocSide", true, ""},
      {86, "Anti-lock Braking System (ABS)", "ABS", true, ""},
      {99, "Electronic Stability Control (ESC)", "ESC", true, ""},
      {100, "Traction Control", "TractionControl", true, ""},
      {168, "Tire Pressure Monitoring System (TPMS) Type", "TPMS", true, ""},
      {169, "Active Safety System Note", "ActiveSafetySysNote", false, ""},
      {172, "Auto-Reverse System for Windows and Sunroofs", "AutoReverseSystem", true, ""},
      {173, "Automatic Pedestrian Alerting Sound (for Hybrid and EV only)", "AutomaticPedestrianAlertingSound", true, ""},
      {175, "Event Data Recorder (EDR)", "EDR", true, ""},
      {176, "Keyless Ignition", "KeylessIgnition", true, ""},
      {181, "SAE Automation Level From", "SAEAutomationLevel", false, ""},
      {182, "SAE Automation Level To", "SAEAutomationLevel_to", false, ""},
      {81, "Adaptive Cruise Control (ACC)", "AdaptiveCruiseControl", true, ""},
      {87, "Crash Imminent Braking (CIB)", "CIB", true, ""},
      {88, "Blind Spot Warning (BSW)", "BlindSpotMon", true, ""},
      {101, "Forward Collision Warning (FCW)", "ForwardCollisionWarning", true, ""},
      {102, "Lane Departure Warning (LDW)", "LaneDepartureWarning", true, ""},
      {103, "Lane Keeping Assistance (LKA)", "LaneKeepSystem", true, ""},
      {104, "Backup Camera", "RearVisibilitySystem", true, ""},
      {105, "Parking Assist", "ParkAssist", true, ""},
      {147, "Bus Length (feet)", "BusLength", false, ""},
      {148, "Bus Floor Configuration Type", "BusFloorConfigType", true, ""},
      {149, "Bus Type", "BusType", true, ""},
      {150, "Other Bus Info", "OtherBusInfo", false, ""},
      {151, "Custom Motorcycle Type", "CustomMotorcycleType", true, ""},
      {152, "Motorcycle Suspension Type", "MotorcycleSuspensionType", true, ""},
      {153, "Motorcycle Chassis Type", "MotorcycleChassisType", true, ""},
      {154, "Other Motorcycle Info", "OtherMotorcycleInfo", false, ""},
      {170, "Dynamic Brake Support (DBS)", "DynamicBrakeSupport", true, ""},
      {171, "Pedestrian Automatic Emergency Braking (PAEB)", "PedestrianAutomaticEmergencyBraking", true, ""},
      {174, "Automatic Crash Notification (ACN) / Advanced Automatic Crash Notification (AACN)", "CAN_AACN", true, ""},
      {177, "Daytime Running Light (DRL)", "DaytimeRunningLight", true, ""},
      {178, "Headlamp Light Source", "LowerBeamHeadlampLightSource", true, ""},
      {179, "Semiautomatic Headlamp Beam Switching", "SemiautomaticHeadlampBeamSwitching", true, ""},
      {180, "Adaptive Driving Beam (ADB)", "AdaptiveDrivingBeam", true, ""},
      {183, "Rear Cross Traffic Alert", "RearCrossTrafficAlert", true, ""},
      {192, "Rear Automatic Emergency Braking", "RearAutomaticEmergencyBraking", true, ""},
      {193, "Blind Spot Intervention (BSI)", "BlindSpotIntervention", true, ""},
      {194, "Lane Centering Assistance", "LaneCenteringAssistance", true, ""},
};

// vPIC writes these as "" when empty; every other empty value is null.
bool AlwaysAString(int id) {
  return id == 142 || id == 143 || id == 144 || id == 191;
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

namespace {

// DecodedVINValues' XML order: MakeID and ModelID first (what captures of
// vPIC's XML show, tests/fixtures/vpic/SHAPES.md), then the rest in the
// JSON's order (not evidenced).
const std::vector<size_t>& ValuesXmlOrder() {
  static const auto* order = [] {
    auto* o = new std::vector<size_t>;
    const std::vector<std::string>& names = VpicVariables();
    for (const char* first : {"MakeID", "ModelID"}) {
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == first) o->push_back(i);
      }
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != "MakeID" && names[i] != "ModelID") o->push_back(i);
    }
    return o;
  }();
  return *order;
}

}  // namespace

VpicDocument VpicValuesAnswer(const vin::v1::DecodeResult& result,
                              absl::string_view searched) {
  VpicDocument doc = Envelope(kValuesCount, absl::StrCat("VIN(s): ", searched),
                              "DecodedVINValues");
  doc.xml_order = ValuesXmlOrder();
  doc.results.push_back(ResultFields(result));
  return doc;
}

VpicDocument VpicVariablesAnswer(const vin::v1::DecodeResult& result,
                                 absl::string_view searched) {
  const Values values(result);
  VpicDocument doc =
      Envelope(sizeof kListed / sizeof kListed[0],
               absl::StrCat("VIN:", searched), "DecodedVariable");
  // XML: VariableId, Variable, ValueId, Value (captured); JSON sorted.
  doc.xml_order = {3, 2, 1, 0};
  for (const ListedVariable& v : kListed) {
    std::vector<VpicField>& row = doc.results.emplace_back();
    const absl::string_view value = values.Of(v.key);
    row.push_back(value.empty() && !AlwaysAString(v.id)
                      ? VpicField::Null("Value")
                      : VpicField::String("Value", value));
    // A list value's id: vPIC's error code(s) for Error Code, the ids
    // DecodeVinValues carries for Make, Manufacturer and Model; other list
    // values' ids are not in that answer ("" then). null when empty, as
    // vPIC writes it; "" for values that are not from a list.
    if (v.id == 143) {
      row.push_back(VpicField::String("ValueId", value));
    } else if (v.lookup && value.empty()) {
      row.push_back(VpicField::Null("ValueId"));
    } else {
      row.push_back(VpicField::String(
          "ValueId", v.id_key[0] != '\0' ? values.Of(v.id_key) : ""));
    }
    row.push_back(VpicField::String("Variable", v.name));
    row.push_back(VpicField::Number("VariableId", v.id));
  }
  return doc;
}

VpicDocument VpicBatchAnswer(
    const std::vector<vin::v1::DecodeResult>& results) {
  VpicDocument doc = Envelope(results.size(), "", "DecodedVINValues");
  doc.xml_order = ValuesXmlOrder();
  for (const auto& r : results) doc.results.push_back(ResultFields(r));
  return doc;
}

}  // namespace http
}  // namespace server
