#!/usr/bin/env python3
"""Writes a dealer-feed CSV of N VINs with valid check digits (49 CFR 565).

Usage: gen_vins.py N [--distinct D] [--seed S] > feed.csv
Columns: stock,vin,price. With --distinct D, the N rows cycle over D distinct
VINs (a feed that repeats vehicles), otherwise every row is distinct.
"""
import argparse
import random

CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
YEARS = "ABCDEFGHJKLMNPRSTVWXY123456789"
WMIS = ["1HG", "1FT", "1G1", "5YJ", "JTD", "WVW", "1FA", "2HG", "3VW", "KMH"]
VALUES = {c: v for c, v in zip("ABCDEFGH", range(1, 9))}
VALUES.update({c: v for c, v in zip("JKLMN", range(1, 6))})
VALUES.update({"P": 7, "R": 9})
VALUES.update({c: v for c, v in zip("STUVWXYZ", range(2, 10))})
VALUES.update({str(d): d for d in range(10)})
WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]


def with_check_digit(vin):
    total = sum(VALUES[c] * w for c, w in zip(vin, WEIGHTS))
    digit = total % 11
    return vin[:8] + ("X" if digit == 10 else str(digit)) + vin[9:]


def make_vin(rng):
    body = (rng.choice(WMIS) + "".join(rng.choice(CHARS) for _ in range(5)) +
            "0" + rng.choice(YEARS) + rng.choice(CHARS) +
            "".join(rng.choice("0123456789") for _ in range(6)))
    return with_check_digit(body)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("n", type=int)
    p.add_argument("--distinct", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    pool_size = a.distinct or a.n
    seen, pool = set(), []
    while len(pool) < pool_size:
        v = make_vin(rng)
        if v not in seen:
            seen.add(v)
            pool.append(v)
    print("stock,vin,price")
    for i in range(a.n):
        print(f"S{i:07d},{pool[i % pool_size]},\"{10000 + i % 50000:,}\"")


if __name__ == "__main__":
    main()
