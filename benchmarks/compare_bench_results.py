"""Compare two ``linsep bench`` outputs split by split (the regression oracle of a refactor).

usage: python benchmarks/compare_bench_results.py BASE_DIR NEW_DIR

Each directory holds the ``results.csv`` that ``linsep bench --out DIR`` writes.  Prints every
(dataset, method, split) whose test error, status, chosen iterate or C differs, and the rows
present on one side only (a method added since the base run shows up as such rows).
Exits 1 if anything differs.
"""
import csv
import sys


def read(directory):
    with open(f"{directory}/results.csv", newline="") as handle:
        return {(row["dataset"], row["method"], row["split"]): row for row in csv.DictReader(handle)}


def main(base_dir, new_dir):
    base, new = read(base_dir), read(new_dir)
    differences = 0
    for key in sorted(set(base) | set(new)):
        if key not in base or key not in new:
            print("only in", "new" if key not in base else "base", key)
            differences += 1
            continue
        for field in ("test_error", "status", "best_iter", "C"):
            if base[key][field] != new[key][field]:
                print(key, field, base[key][field], "->", new[key][field])
                differences += 1
    shared = len(set(base) & set(new))
    print(f"{len(base)} base rows, {len(new)} new rows, {shared} in both, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
