#!/usr/bin/env python3
"""Compares the snapshot decoder (NHTSA's rules) with corgi 2.0.1 on make,
model and year, and sorts the differences by cause.

Usage: snapshot_compare.py DB OURS.tsv CORGI.tsv [REFERENCE_YEAR]
  OURS.tsv  from: snapshot_bench --vins VINS.txt --dump OURS.tsv
  CORGI.tsv from: snapshot_corgi.js DB VINS.txt CORGI.tsv REFERENCE_YEAR
Makes are compared case-insensitively (the API upper-cases them, corgi
does not).
"""
import collections
import re
import sqlite3
import sys

YEAR_CODES = "ABCDEFGHJKLMNPRSTVWXY123456789"


def corgi_year(vin, ref):
    """corgi 2.0.1's model year: position 7 picks the cycle for every
    vehicle, and years after ref + 1 go back 30."""
    if vin[9] not in YEAR_CODES:
        return 0
    year = (1980 if vin[6].isdigit() else 2010) + YEAR_CODES.index(vin[9])
    return year - 30 if year > ref + 1 else year


def key_regex(key):
    out, i = "^", 0
    while i < len(key):
        c = key[i]
        if c == "[":
            j = key.index("]", i)
            out += "[" + key[i + 1:j].replace("_", "") + "]"
            i = j + 1
            continue
        out += "." if c in "*_" else re.escape(c)
        i += 1
    return re.compile(out)


class Db:
    def __init__(self, path):
        self.c = sqlite3.connect(path)
        self.wmi = {}
        for wid, code, vt, tt, pub in self.c.execute(
                "SELECT Id, Wmi, VehicleTypeId, TruckTypeId, "
                "PublicAvailabilityDate FROM Wmi"):
            self.wmi[code] = (wid, vt, tt, pub)
        self.links = collections.defaultdict(list)
        for wid, sid, f, t in self.c.execute(
                "SELECT WmiId, VinSchemaId, YearFrom, coalesce(YearTo, 9999) "
                "FROM Wmi_VinSchema"):
            self.links[wid].append((sid, f, t))
        self.models = collections.defaultdict(list)
        for sid, keys, name in self.c.execute(
                "SELECT p.VinSchemaId, p.Keys, m.Name FROM Pattern p "
                "JOIN Model m ON m.Id = p.AttributeId WHERE p.ElementId = 28"):
            self.models[sid].append((keys, name))
        self.make_of_model = {}
        for mname, kname in self.c.execute(
                "SELECT mo.Name, ma.Name FROM Make_Model mm "
                "JOIN Model mo ON mo.Id = mm.ModelId "
                "JOIN Make ma ON ma.Id = mm.MakeId"):
            self.make_of_model.setdefault(mname, kname)
        self.regex = {}

    def wmi_of(self, vin):
        return vin[:3] + (vin[11:14] if vin[2] == "9" else "")

    def nhtsa_models(self, vin, year):
        """Model names whose key matches the whole descriptor (any rank)."""
        w = self.wmi.get(self.wmi_of(vin))
        if not w:
            return set()
        desc = vin[3:8] + "|" + vin[9:]
        names = set()
        for sid, f, t in self.links[w[0]]:
            if year and not f <= year <= t:
                continue
            for keys, name in self.models[sid]:
                rx = self.regex.get(keys)
                if rx is None:
                    rx = self.regex[keys] = key_regex(keys)
                if rx.match(desc):
                    names.add(name)
        return names

    def nhtsa_model_keys(self, vin, year, model):
        """The keys through which `model` matches the whole descriptor."""
        w = self.wmi.get(self.wmi_of(vin))
        if not w:
            return []
        desc = vin[3:8] + "|" + vin[9:]
        out = []
        for sid, f, t in self.links[w[0]]:
            if year and not f <= year <= t:
                continue
            for keys, name in self.models[sid]:
                if name == model and key_regex(keys).match(desc):
                    out.append(keys)
        return out

    def car_lt(self, vin):
        w = self.wmi.get(self.wmi_of(vin))
        return bool(w) and (w[1] in (2, 7) or (w[1] == 3 and w[2] == 1))


def load(path, cols):
    rows = {}
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        parts += [""] * (cols - len(parts))
        rows[parts[0]] = parts
    return rows


def main():
    db_path, ours_path, corgi_path = sys.argv[1:4]
    ref = int(sys.argv[4]) if len(sys.argv) > 4 else 2026
    db = Db(db_path)
    ours = load(ours_path, 6)    # vin make model year vehicle_type codes
    corgi = load(corgi_path, 5)  # vin make model year codes
    vins = [v for v in ours if v in corgi]
    agree = collections.Counter()
    by_class = collections.Counter()
    reasons = collections.Counter()
    examples = {}

    def why(reason, vin):
        reasons[reason] += 1
        examples.setdefault(reason, vin)

    for vin in vins:
        o, c = ours[vin], corgi[vin]
        o_make, o_model, o_year = o[1].upper(), o[2], int(o[3] or 0)
        c_make, c_model, c_year = c[1].upper(), c[2], int(c[3] or 0)
        c_codes = set(filter(None, c[4].split(",")))
        o_codes = set(filter(None, o[5].split(",")))
        same_make, same_model = o_make == c_make, o_model == c_model
        same_year = o_year == c_year or ("300" in c_codes and "7" in o_codes)
        agree["make"] += same_make
        agree["model"] += same_model
        agree["year"] += same_year
        agree["all three"] += same_make and same_model and same_year
        klass = "cars/MPVs/light trucks" if db.car_lt(vin) else "other types"
        by_class[klass, "n"] += 1
        by_class[klass, "agree"] += same_make and same_model and same_year
        if same_make and same_model and same_year:
            continue
        wmi = db.wmi.get(db.wmi_of(vin))
        if "7" in o_codes and wmi and wmi[3] is None:
            why("WMI not public at NHTSA (NULL PublicAvailabilityDate, e.g. "
                "corgi's community WMIs): NHTSA says 7, corgi decodes", vin)
        elif c_codes & {"300", "400"} or ("201" in c_codes and not c_year):
            if "300" in c_codes:
                why("corgi: WMI unknown (300)", vin)
            elif "400" in c_codes and o_model and corgi_year(vin, ref) != o_year:
                why("corgi returns 400 (no vehicle): its position-7 year rule "
                    "picks the other 30-year cycle, where the WMI has no "
                    "schema (NHTSA applies it only to cars, MPVs and light "
                    "trucks and tries both cycles otherwise)", vin)
            elif "400" in c_codes and o_model:
                keys = db.nhtsa_model_keys(vin, o_year, o_model)
                if keys and all(set(k) <= {"*"} for k in keys):
                    why("corgi returns 400 (no vehicle): NHTSA's model key is "
                        "all wildcards ('*'), which corgi drops", vin)
                elif keys and all("|" in k for k in keys):
                    why("corgi returns 400 (no vehicle): NHTSA's model key is "
                        "a '|' key corgi cannot match (VDS part or class at "
                        "position 11)", vin)
                else:
                    why("corgi returns 400 (no vehicle): other keys corgi "
                        "does not keep (score <= 0.5, trailing-'*' rule)", vin)
            elif "400" in c_codes:
                why("corgi returns 400 and NHTSA has no model either", vin)
            else:
                why("corgi stops on position 10 (201)", vin)
        elif not same_year:
            if o_year and c_year and abs(o_year - c_year) == 30:
                if not db.car_lt(vin):
                    why("year: corgi applies the position-7 rule to a vehicle "
                        "that is not a car/MPV/light truck; NHTSA decodes "
                        "both cycles and keeps the better", vin)
                elif c_year == o_year - 30 and o_year == ref + 2:
                    why("year: future cutoff (corgi Y+1, NHTSA Y+2)", vin)
                else:
                    why("year: NHTSA switches to the other cycle when only "
                        "it has schemas", vin)
            else:
                why("year: other", vin)
        elif not same_model:
            nhtsa = db.nhtsa_models(vin, o_year)
            if not o_model and c_model:
                why("model: corgi's key does not match the whole descriptor "
                    "(corgi reads only position 11 of '|' keys or stops at a "
                    "trailing '*'); NHTSA has no model", vin)
            elif o_model and not c_model:
                why("model: NHTSA matches a key corgi drops or cannot match",
                    vin)
            elif c_model in nhtsa:
                why("model: both match, ranking differs (NHTSA: YearFrom, "
                    "change date, key; corgi: schema score, confidence)", vin)
            else:
                why("model: corgi's model key does not match under NHTSA's "
                    "whole-key rule", vin)
        else:  # same model and year, make differs
            if not o_make and c_make:
                why("make: no model and several WMI makes: NHTSA gives none, "
                    "corgi the first Wmi_Make row", vin)
            elif c_model and db.make_of_model.get(c_model, "").upper() != c_make:
                why("make: corgi's last derived make disagrees with its own "
                    "model", vin)
            else:
                why("make: other", vin)

    n = len(vins)
    print(f"VINs compared: {n} (reference year {ref})")
    for k in ("make", "model", "year", "all three"):
        print(f"  agree on {k:9}: {agree[k]:5} ({100.0 * agree[k] / n:.1f}%)")
    for klass in ("cars/MPVs/light trucks", "other types"):
        k_n = by_class[klass, "n"]
        if k_n:
            k_a = by_class[klass, "agree"]
            print(f"  {klass}: {k_a} of {k_n} agree on all three "
                  f"({100.0 * k_a / k_n:.1f}%)")
    print("differences by cause (one cause per VIN):")
    for reason, count in reasons.most_common():
        print(f"  {count:5}  {reason}  [e.g. {examples[reason]}]")


if __name__ == "__main__":
    main()
