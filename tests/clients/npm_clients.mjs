// The published vPIC clients, unchanged but for the base URL, against the
// service: every endpoint function of @shaggytools/nhtsa-api-wrapper 3.0.4
// (its fetch pointed at the service) and the endpoints npm `nhtsa` 1.2.7
// calls with its lower-case names (its URL_BASE replaced).
// - live: the service in front of the fake vPIC (which serves the captured
//   answer of each endpoint, tests/fixtures/vpic/); each answer must be
//   vPIC's captured answer, as the client parses it.
// - offline: vPIC unreachable, the snapshot loaded; each endpoint the
//   snapshot holds answers in vPIC's shape (the content is checked against
//   the snapshot file by tests/snapshot/reference_data_test.cc), and the
//   client sees a 503 from the others.
//
// Usage: node npm_clients.mjs http://127.0.0.1:PORT/api/vehicles FIXTURE_DIR
//          live|offline
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as w from '@shaggytools/nhtsa-api-wrapper';

const [ours, fixtures, mode] = process.argv.slice(2);
const offline = mode === 'offline';
assert.ok(offline || mode === 'live', `mode ${mode}: live or offline`);
const vpic = 'https://vpic.nhtsa.dot.gov/api/vehicles';
const captured = (name) =>
  JSON.parse(readFileSync(`${fixtures}/json/${name}.json`, 'utf8'));
const wrapped = (file) =>
  JSON.parse(readFileSync(`${fixtures}/${file}`, 'utf8')).body;

// @shaggytools: its own fetch, the URL's host changed.
const realFetch = globalThis.fetch;
const asked = [];
globalThis.fetch = (url, options) => {
  asked.push(String(url));
  return realFetch(String(url).replace(vpic, ours), options);
};

const partial = '5UXWX7C5*BA';
const ford = '1FTMW1T88MFA00001';
// Offline: an endpoint the snapshot does not hold answers 503.
const UNAVAILABLE = 'unavailable';
// Offline: the results hold `field` equal to `value` somewhere.
const has = (field, value) => (got) =>
  assert.ok(got.Results.some((r) => r[field] === value), `no ${field} ${value}`);
// [function, call, live answer (null: any), offline check]
const wrapper = [
  // (The decodes are rendered from the decode, in vPIC's shape: the
  // DecodeVinValues capture of the partial VIN is matched whole.)
  ['DecodeVin', () => w.DecodeVin(partial, { modelYear: 2011 }), null, has('Value', 'BMW')],
  ['DecodeVinExtended', () => w.DecodeVinExtended(ford), null, has('Value', 'F-150')],
  ['DecodeVinValues', () => w.DecodeVinValues(partial, { modelYear: 2011 }), wrapped('decode-partial-vin.json'), has('Make', 'BMW')],
  ['DecodeVinValuesExtended', () => w.DecodeVinValuesExtended(ford), null, has('Model', 'F-150')],
  ['DecodeVinValuesBatch', () => w.DecodeVinValuesBatch(`${ford},2021;1HGCM82633A004352`), null, has('Make', 'HONDA')],
  ['DecodeWMI', () => w.DecodeWMI('1FT'), wrapped('decode-wmi.json'), has('Make', 'FORD')],
  ['GetAllMakes', () => w.GetAllMakes(), captured('GetAllMakes'), has('Make_Name', 'TESLA')],
  ['GetAllManufacturers', () => w.GetAllManufacturers({ manufacturerType: 'Intermediate', page: 2 }), captured('GetAllManufacturers'), UNAVAILABLE],
  ['GetCanadianVehicleSpecifications', () => w.GetCanadianVehicleSpecifications({ year: 2011, make: 'Acura' }), captured('GetCanadianVehicleSpecifications'), UNAVAILABLE],
  ['GetEquipmentPlantCodes', () => w.GetEquipmentPlantCodes({ year: 2015, equipmentType: 1, reportType: 'All' }), captured('GetEquipmentPlantCodes'), UNAVAILABLE],
  ['GetMakeForManufacturer', () => w.GetMakeForManufacturer('honda'), captured('GetMakeForManufacturer'), has('Make_Name', 'ACURA')],
  ['GetMakesForManufacturerAndYear', () => w.GetMakesForManufacturerAndYear('mer', { year: 2013 }), captured('GetMakesForManufacturerAndYear'), has('MakeName', 'MERCEDES-BENZ')],
  ['GetMakesForVehicleType', () => w.GetMakesForVehicleType('car'), captured('GetMakesForVehicleType'), has('MakeName', 'TOYOTA')],
  ['GetManufacturerDetails', () => w.GetManufacturerDetails('honda'), captured('GetManufacturerDetails'), UNAVAILABLE],
  ['GetModelsForMake', () => w.GetModelsForMake('honda'), captured('GetModelsForMake'), has('Model_Name', 'Accord')],
  ['GetModelsForMakeId', () => w.GetModelsForMakeId(440), captured('GetModelsForMakeId'), has('Make_ID', 440)],
  ['GetModelsForMakeIdYear', () => w.GetModelsForMakeIdYear({ makeId: 474, modelYear: 2015, vehicleType: 'truck' }), captured('GetModelsForMakeIdYear'), has('VehicleTypeName', 'Truck')],
  ['GetModelsForMakeYear', () => w.GetModelsForMakeYear({ make: 'honda', modelYear: 2015 }), captured('GetModelsForMakeYear'), has('Model_Name', 'Civic')],
  ['GetParts', () => w.GetParts({ type: 565, fromDate: '1/1/2015', toDate: '5/5/2015', page: 1 }), captured('GetParts'), UNAVAILABLE],
  ['GetVehicleTypesForMake', () => w.GetVehicleTypesForMake('merc'), captured('GetVehicleTypesForMake'), has('MakeName', 'MERCEDES-BENZ')],
  ['GetVehicleTypesForMakeId', () => w.GetVehicleTypesForMakeId(450), captured('GetVehicleTypesForMakeId'), has('VehicleTypeName', 'Truck')],
  ['GetVehicleVariableList', () => w.GetVehicleVariableList(), captured('GetVehicleVariableList'), has('Name', 'Model Year')],
  ['GetVehicleVariableValuesList', () => w.GetVehicleVariableValuesList('battery type'), captured('GetVehicleVariableValuesList'), has('ElementName', 'Battery Type')],
  ['GetWMIsForManufacturer', () => w.GetWMIsForManufacturer({ manufacturer: 'honda', vehicleType: 'car' }), captured('GetWMIsForManufacturer'), has('WMI', '1HG')],
];
const functions = Object.keys(w).filter((k) => /^(Get|Decode)/.test(k));
assert.deepEqual(functions.sort(), wrapper.map(([name]) => name).sort(),
                 'every endpoint function of the wrapper is called');

// Offline, the manufacturers without a type filter (the snapshot holds no
// manufacturer types; the wrapper's call above has one).
if (offline) {
  wrapper.push(['GetAllManufacturers (no type)', () => w.GetAllManufacturers({ page: 2 }), null,
                has('Mfr_ID', 1090)]);
}

// `status` of a failed call: the wrapper's message, or axios's response.
const statusOf = (e) =>
  e?.response?.status ?? Number(/responseStatus: (\d+)/.exec(String(e))?.[1]);
let failed = 0;
const check = async (client, name, call, want, offlineCheck) => {
  try {
    let got;
    try {
      got = await call();
    } catch (e) {
      if (offline && offlineCheck === UNAVAILABLE && statusOf(e) === 503) {
        console.log(`ok   ${client} ${name}: 503 offline, as expected`);
        return;
      }
      throw e;
    }
    assert.ok(!(offline && offlineCheck === UNAVAILABLE), 'answered, but the snapshot does not hold it');
    assert.ok(got.Results.length > 0, 'no results');
    if (!offline && want) assert.deepEqual(got, want);
    if (offline) offlineCheck(got);
    console.log(`ok   ${client} ${name}: ${got.Results.length} results`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${client} ${name}: ${String(e).slice(0, 400)}`);
  }
};
for (const [name, call, want, off] of wrapper) await check('nhtsa-api-wrapper', name, call, want, off);
assert.equal(asked.length, wrapper.length);
assert.ok(asked.every((u) => u.startsWith(vpic)), 'the wrapper asked vPIC URLs');

// npm `nhtsa`: axios, lower-case method names, its URL_BASE replaced.
const NHTSA = createRequire(import.meta.url)('nhtsa');
Object.defineProperty(NHTSA, 'URL_BASE', { get: () => ours });
const data = (p) => p.then((r) => r.data);
const nhtsa = [
  ['decodeWmi', () => data(NHTSA.decodeWmi('1FT')), wrapped('decode-wmi.json'), has('Make', 'FORD')],
  ['getAllMakes', () => data(NHTSA.getAllMakes()), captured('GetAllMakes'), has('Make_Name', 'HONDA')],
  ['getAllManufacturers', () => data(NHTSA.getAllManufacturers(2)), captured('GetAllManufacturers'), has('Mfr_ID', 1090)],
  ['getParts', () => data(NHTSA.getParts(565, '1/1/2015', '5/5/2015')), captured('GetParts'), UNAVAILABLE],
  ['getManufacturerDetails', () => data(NHTSA.getManufacturerDetails('honda')), captured('GetManufacturerDetails'), UNAVAILABLE],
];
for (const [name, call, want, off] of nhtsa) await check('nhtsa', name, call, want, off);
console.log(failed === 0 ? 'all clients answered' : `${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
