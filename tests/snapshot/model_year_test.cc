#include "snapshot/model_year.h"

#include "gtest/gtest.h"

namespace snapshot {
namespace {

WmiInfo Wmi(int vehicle_type, int truck_type = 0) {
  WmiInfo w;
  w.vehicle_type_id = vehicle_type;
  w.truck_type_id = truck_type;
  return w;
}

struct Case {
  const char* name;
  const char* vin;
  int vehicle_type;
  int truck_type;
  int reference_year;
  int want_year;
  bool want_conclusive;
};

class VinModelYearTest : public ::testing::TestWithParam<Case> {};

TEST_P(VinModelYearTest, FollowsFVinModelYear2) {
  const Case& c = GetParam();
  const WmiInfo wmi = Wmi(c.vehicle_type, c.truck_type);
  const VinYear got = VinModelYear(c.vin, &wmi, c.reference_year);
  EXPECT_EQ(got.year, c.want_year) << c.name;
  EXPECT_EQ(got.conclusive, c.want_conclusive) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, VinModelYearTest,
    ::testing::Values(
        // Cars, MPVs, light trucks: position 7 decides the cycle.
        Case{"car, code 3 past reference+2", "1HGCM8A6X3A004352", 2, 0, 2026, 2003, true},
        Case{"car, code 3, digit at 7", "1HGCM82633A004352", 2, 0, 2026, 2003, true},
        Case{"car M letter", "JHMCM5AAXMC000001", 2, 0, 2026, 2021, true},
        Case{"car M digit", "JHMCM5600MC000001", 2, 0, 2026, 1991, true},
        Case{"MPV", "5UXWX7C50BA000001", 7, 0, 2026, 2011, true},
        Case{"light truck", "1FTMW1T88MFA00001", 3, 1, 2026, 2021, true},
        // Other types: the 2010 cycle first, not conclusive.
        Case{"truck, no truck type", "1FTMW1T88MFA00001", 3, 0, 2026, 2021,
             false},
        Case{"bus, digit at 7", "4RKYLA208GA000001", 5, 0, 2026, 2016, false},
        // Beyond reference + 2: the older cycle, conclusive.
        Case{"future year", "JNELC00X69A000001", 3, 0, 2026, 2009, true},
        Case{"2028 still allowed", "JNELC00X6WA000001", 3, 0, 2026, 2028,
             false},
        Case{"2028 with older reference", "JNELC00X6WA000001", 3, 0, 2020,
             1998, true},
        // Position 10 that is no year code: no year.
        Case{"zero", "1FTMW1T850FA00001", 3, 1, 2026, 0, true},
        Case{"U", "1FTMW1T88UFA00001", 3, 1, 2026, 0, true},
        Case{"Z", "1FTMW1T89ZFA00001", 3, 1, 2026, 0, true}));

TEST(IsCarMpvOrLightTruck, Types) {
  const WmiInfo car = Wmi(2), mpv = Wmi(7), light = Wmi(3, 1), heavy = Wmi(3, 2),
                bus = Wmi(5), trailer = Wmi(6);
  EXPECT_TRUE(IsCarMpvOrLightTruck(&car));
  EXPECT_TRUE(IsCarMpvOrLightTruck(&mpv));
  EXPECT_TRUE(IsCarMpvOrLightTruck(&light));
  EXPECT_FALSE(IsCarMpvOrLightTruck(&heavy));
  EXPECT_FALSE(IsCarMpvOrLightTruck(&bus));
  EXPECT_FALSE(IsCarMpvOrLightTruck(&trailer));
  EXPECT_FALSE(IsCarMpvOrLightTruck(nullptr));
}

}  // namespace
}  // namespace snapshot
