#!/usr/bin/python3
"""speedtest1_report.py TIMES.tsv [OUT_DIR] — the timing part of
sqlite/speedtest1.sh: per-test medians of the interleaved rounds for each
configuration, the ratios, and the issue's two bars as PASS/FAIL lines.

TIMES.tsv has one row per test and run: round, config (stock, wal,
softwrap, nonatomic), test number, test name, seconds.  A sum over a set of
tests is taken per round (all four configurations ran in that round), and
its median over the rounds is what a bar compares; the spread of the
per-round ratios shows how noisy the machine was.  With OUT_DIR also
writes OUT_DIR/speedtest1.csv (per-test medians) and OUT_DIR/bars.csv.
Exit status 1 if a configuration has no complete round."""
import csv
import statistics
import sys

CONFIGS = ("stock", "wal", "softwrap", "nonatomic")
LABELS = {"stock": "stock DELETE", "wal": "stock WAL", "softwrap": "softwrap VFS", "nonatomic": "softwrap VFS, nonatomic"}
# The bars (speedtest1 main set, x86): the writing tests within
# 1.15x of the nonatomic engine; the whole set less the two lock-bound
# SELECT loops no slower than stock SQLite with WAL.
WRITING = lambda t: 100 <= t <= 300 or t in (400, 500)
NOT_LOCK_BOUND = lambda t: t not in (410, 510)
BARS = (("writing tests (100-300, 400, 500): softwrap VFS / nonatomic engine", WRITING, "softwrap", "nonatomic", 1.15),
        ("main set without 410 and 510: softwrap VFS / stock SQLite WAL", NOT_LOCK_BOUND, "softwrap", "wal", 1.00))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
    out_dir = sys.argv[2] if len(sys.argv) == 3 else None
    t = {}  # (round, config) -> {test: seconds}
    names = {}
    for r in rows:
        test = int(r["test"])
        t.setdefault((int(r["round"]), r["config"]), {})[test] = float(r["seconds"])
        names[test] = r["name"]
    tests = sorted(names)
    rounds = sorted({k[0] for k in t})
    # Rounds in which every configuration ran every test.
    full = [r for r in rounds if all(len(t.get((r, c), {})) == len(tests) for c in CONFIGS)]

    def med(c, test):
        v = [t[(r, c)][test] for r in rounds if test in t.get((r, c), {})]
        return statistics.median(v) if v else None

    def ms(v):
        return f"{v * 1000:,.0f}" if v is not None else "—"

    def ratio(a, b):
        return f"{a / b:.2f}" if a and b else "—"

    print("Median milliseconds per test; ratios of the medians.")
    print()
    print("| test | " + " | ".join(LABELS[c] for c in CONFIGS) + " | softwrap / nonatomic | softwrap / WAL |")
    print("|---|" + "---:|" * (len(CONFIGS) + 2))
    per_test = []
    for test in tests:
        m = {c: med(c, test) for c in CONFIGS}
        per_test.append((test, m))
        print(f"| {test} {names[test]} | " + " | ".join(ms(m[c]) for c in CONFIGS)
              + f" | {ratio(m['softwrap'], m['nonatomic'])} | {ratio(m['softwrap'], m['wal'])} |")
    totals = {c: statistics.median([sum(t[(r, c)].values()) for r in full]) if full else None for c in CONFIGS}
    print("| **all tests** | " + " | ".join(ms(totals[c]) for c in CONFIGS)
          + f" | {ratio(totals['softwrap'], totals['nonatomic'])} | {ratio(totals['softwrap'], totals['wal'])} |")
    print()
    status = 0
    bars = []
    if len(full) == 0:
        print("FAIL: no round in which every configuration completed the main set")
        status = 1
    else:
        print(f"{len(full)} complete round(s) of {len(rounds)}.")
        print()
    for label, pick, a, b, limit in BARS:
        if not full:
            bars.append((label, "", "", limit, "FAIL"))
            continue
        sums = {c: [sum(v for k, v in t[(r, c)].items() if pick(k)) for r in full] for c in (a, b)}
        ma, mb = statistics.median(sums[a]), statistics.median(sums[b])
        per_round = sorted(x / y for x, y in zip(sums[a], sums[b]))
        verdict = "PASS" if ma / mb <= limit else "FAIL"
        print(f"{verdict}: {label}: {ma * 1000:,.0f} / {mb * 1000:,.0f} ms = {ma / mb:.2f}x (bar {limit:.2f}x; "
              f"per-round ratios {per_round[0]:.2f}-{per_round[-1]:.2f})")
        bars.append((label, f"{ma:.4f}", f"{mb:.4f}", limit, verdict))
    if out_dir:
        with open(f"{out_dir}/speedtest1.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["test", "name"] + [f"{c}_s" for c in CONFIGS])
            for test, m in per_test:
                w.writerow([test, names[test]] + ["" if m[c] is None else f"{m[c]:.4f}" for c in CONFIGS])
        with open(f"{out_dir}/bars.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["bar", "numerator_s", "denominator_s", "limit", "result"])
            w.writerows(bars)
    return status


if __name__ == "__main__":
    sys.exit(main())
