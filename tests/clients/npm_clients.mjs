// The published vPIC clients, unchanged but for the base URL, against the
// service in front of the fake vPIC (which serves the captured answer of
// each endpoint, tests/fixtures/vpic/): every endpoint function of
// @shaggytools/nhtsa-api-wrapper 3.0.4 (its fetch pointed at the service)
// and the endpoints npm `nhtsa` 1.2.7 calls with its lower-case names (its
// URL_BASE replaced). Each answer must be vPIC's captured answer, as the
// client parses it.
//
// Usage: node npm_clients.mjs http://127.0.0.1:PORT/api/vehicles FIXTURE_DIR
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as w from '@shaggytools/nhtsa-api-wrapper';

const [ours, fixtures] = process.argv.slice(2);
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
const wrapper = [
  // (The decodes are rendered from the decode, in vPIC's shape: the
  // DecodeVinValues capture of the partial VIN is matched whole.)
  ['DecodeVin', () => w.DecodeVin(partial, { modelYear: 2011 }), null],
  ['DecodeVinExtended', () => w.DecodeVinExtended(ford), null],
  ['DecodeVinValues', () => w.DecodeVinValues(partial, { modelYear: 2011 }), wrapped('decode-partial-vin.json')],
  ['DecodeVinValuesExtended', () => w.DecodeVinValuesExtended(ford), null],
  ['DecodeVinValuesBatch', () => w.DecodeVinValuesBatch(`${ford},2021;1HGCM82633A004352`), null],
  ['DecodeWMI', () => w.DecodeWMI('1FT'), wrapped('decode-wmi.json')],
  ['GetAllMakes', () => w.GetAllMakes(), captured('GetAllMakes')],
  ['GetAllManufacturers', () => w.GetAllManufacturers({ manufacturerType: 'Intermediate', page: 2 }), captured('GetAllManufacturers')],
  ['GetCanadianVehicleSpecifications', () => w.GetCanadianVehicleSpecifications({ year: 2011, make: 'Acura' }), captured('GetCanadianVehicleSpecifications')],
  ['GetEquipmentPlantCodes', () => w.GetEquipmentPlantCodes({ year: 2015, equipmentType: 1, reportType: 'All' }), captured('GetEquipmentPlantCodes')],
  ['GetMakeForManufacturer', () => w.GetMakeForManufacturer('honda'), captured('GetMakeForManufacturer')],
  ['GetMakesForManufacturerAndYear', () => w.GetMakesForManufacturerAndYear('mer', { year: 2013 }), captured('GetMakesForManufacturerAndYear')],
  ['GetMakesForVehicleType', () => w.GetMakesForVehicleType('car'), captured('GetMakesForVehicleType')],
  ['GetManufacturerDetails', () => w.GetManufacturerDetails('honda'), captured('GetManufacturerDetails')],
  ['GetModelsForMake', () => w.GetModelsForMake('honda'), captured('GetModelsForMake')],
  ['GetModelsForMakeId', () => w.GetModelsForMakeId(440), captured('GetModelsForMakeId')],
  ['GetModelsForMakeIdYear', () => w.GetModelsForMakeIdYear({ makeId: 474, modelYear: 2015, vehicleType: 'truck' }), captured('GetModelsForMakeIdYear')],
  ['GetModelsForMakeYear', () => w.GetModelsForMakeYear({ make: 'honda', modelYear: 2015 }), captured('GetModelsForMakeYear')],
  ['GetParts', () => w.GetParts({ type: 565, fromDate: '1/1/2015', toDate: '5/5/2015', page: 1 }), captured('GetParts')],
  ['GetVehicleTypesForMake', () => w.GetVehicleTypesForMake('merc'), captured('GetVehicleTypesForMake')],
  ['GetVehicleTypesForMakeId', () => w.GetVehicleTypesForMakeId(450), captured('GetVehicleTypesForMakeId')],
  ['GetVehicleVariableList', () => w.GetVehicleVariableList(), captured('GetVehicleVariableList')],
  ['GetVehicleVariableValuesList', () => w.GetVehicleVariableValuesList('battery type'), captured('GetVehicleVariableValuesList')],
  ['GetWMIsForManufacturer', () => w.GetWMIsForManufacturer({ manufacturer: 'honda', vehicleType: 'car' }), captured('GetWMIsForManufacturer')],
];
const functions = Object.keys(w).filter((k) => /^(Get|Decode)/.test(k));
assert.deepEqual(functions.sort(), wrapper.map(([name]) => name).sort(),
                 'every endpoint function of the wrapper is called');

let failed = 0;
const check = async (client, name, call, want) => {
  try {
    const got = await call();
    assert.ok(got.Results.length > 0, 'no results');
    if (want) assert.deepEqual(got, want);
    console.log(`ok   ${client} ${name}: ${got.Results.length} results`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${client} ${name}: ${String(e).slice(0, 400)}`);
  }
};
for (const [name, call, want] of wrapper) await check('nhtsa-api-wrapper', name, call, want);
assert.equal(asked.length, wrapper.length);
assert.ok(asked.every((u) => u.startsWith(vpic)), 'the wrapper asked vPIC URLs');

// npm `nhtsa`: axios, lower-case method names, its URL_BASE replaced.
const NHTSA = createRequire(import.meta.url)('nhtsa');
Object.defineProperty(NHTSA, 'URL_BASE', { get: () => ours });
const data = (p) => p.then((r) => r.data);
const nhtsa = [
  ['decodeWmi', () => data(NHTSA.decodeWmi('1FT')), wrapped('decode-wmi.json')],
  ['getAllMakes', () => data(NHTSA.getAllMakes()), captured('GetAllMakes')],
  ['getAllManufacturers', () => data(NHTSA.getAllManufacturers(2)), captured('GetAllManufacturers')],
  ['getParts', () => data(NHTSA.getParts(565, '1/1/2015', '5/5/2015')), captured('GetParts')],
  ['getManufacturerDetails', () => data(NHTSA.getManufacturerDetails('honda')), captured('GetManufacturerDetails')],
];
for (const [name, call, want] of nhtsa) await check('nhtsa', name, call, want);
console.log(failed === 0 ? 'all clients answered' : `${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
