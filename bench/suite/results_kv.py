"""results_kv.py — the key-value benchmark's section of docs/results.md
(issue 17), written from results/kv/kv.csv (sw_bench_kv --csv).

Approach: one table per key kind with every contender's median ops/s per
phase, distribution and mix; the issue's bars are recomputed from the CSV
(not copied from the console), checked and listed in the checks table,
and a missed bar becomes a shortfall.  kv(m) takes make_results' module
for its helpers (section, w, table, check, shortfall, sel, k).
"""

ANCHOR = "#key-value-benchmark-ycsb-style"
CONTENDERS = ["nonatomic", "softwrap", "softwrap-local", "undo", "pmdk-btree_map", "pmdk-rtree_map"]
PHASES = [("load", "-"), ("read", "uniform"), ("95/5", "uniform"), ("50/50", "uniform"),
          ("read", "zipfian"), ("95/5", "zipfian"), ("50/50", "zipfian")]


def kv(m):
    d = m.section("Key-value benchmark (YCSB-style)", "kv",
                  how="run `bench/suite/make-results` (or `build/bench/btree/sw_bench_kv --csv results/kv/kv.csv`)")
    if not d:
        return
    r0 = d[0]
    rounds = r0["rounds"] if all(r["rounds"] == r0["rounds"] for r in d if r["phase"] != "load") else "several"
    m.w(f"`sw_bench_kv`: `softwrap::btree_map<Key, uint64_t>` under every engine beside PMDK's `btree_map` "
        f"(integer keys) and `rtree_map` (string keys) examples, x86 medium, all interleaved in one run "
        f"(chunks of 10,000 operations, the contenders' order rotated per chunk): {int(r0['n']):,} random "
        f"8-byte integer keys and {int(r0['n_str']):,} random 16- and 64-byte string keys loaded in random "
        f"order, one insert per wrap or transaction; then read-only (YCSB C), 95/5 (B) and 50/50 (A) "
        f"read/update mixes under uniform and scrambled-Zipfian (theta 0.99) requests, as many operations "
        f"as keys, the median of {rounds} rounds. A read finds the key and reads its value; an update "
        f"finds it and overwrites the value in one wrap (PMDK: one transaction that finds the item, "
        f"snapshots the value and overwrites it). Operations per second (load: inserts per second).")
    m.w()
    for keys in ("int", "str16", "str64"):
        rows = m.sel(d, keys=keys)
        if not rows:
            continue
        present = [c for c in CONTENDERS if m.sel(rows, contender=c)]
        body = []
        for phase, dist in PHASES:
            line = [phase, dist]
            for c in present:
                r = m.sel(rows, phase=phase, dist=dist, contender=c)
                line.append(m.k(float(r[0]["ops_per_s"])) if r else "")
            body.append(line)
        m.w(f"**{keys} keys**")
        m.w()
        m.table(["phase", "requests"] + present, body)

    def ops(keys, phase, dist, c):
        r = m.sel(d, keys=keys, phase=phase, dist=dist, contender=c)
        return float(r[0]["ops_per_s"]) if r else None

    bars = []

    def bar(label, a, b, factor, what):
        if not a or not b:
            bars.append(f"{label}: not checked (a contender is missing from this run).")
            return
        ok = m.check(f"KV {label} ({m.k(a)} vs {m.k(b)} ops/s, {a / b:.2f}x)", a >= factor * b)
        bars.append(f"{label}: {m.k(a)} against {m.k(b)} ops/s ({a / b:.2f}x; bar {what}) — "
                    + ("met." if ok else "**not met.**"))
        if not ok:
            m.shortfall(f"[Key-value benchmark]({ANCHOR}): {label}: {a / b:.2f}x (bar {what}).")

    sw = ops("int", "read", "uniform", "softwrap")
    bar("int uniform lookups, softwrap within 1.05x of nonatomic", sw, ops("int", "read", "uniform", "nonatomic"),
        1 / 1.05, "at least 0.95x of nonatomic's ops/s")
    bar("int uniform lookups, softwrap at least PMDK btree_map", sw, ops("int", "read", "uniform", "pmdk-btree_map"),
        1.0, "1x")
    bar("int uniform 50/50, softwrap at least 1.5x PMDK btree_map", ops("int", "50/50", "uniform", "softwrap"),
        ops("int", "50/50", "uniform", "pmdk-btree_map"), 1.5, "1.5x")
    for keys in ("str16", "str64"):
        bar(f"{keys} inserts, softwrap at least 2x PMDK rtree_map", ops(keys, "load", "-", "softwrap"),
            ops(keys, "load", "-", "pmdk-rtree_map"), 2.0, "2x")
    m.w("The issue's bars:")
    m.w()
    for b in bars:
        m.w(f"- {b}")
    m.w()
    sw, na = ops("int", "read", "uniform", "softwrap"), ops("int", "read", "uniform", "nonatomic")
    if sw and na and sw < na / 1.05:
        m.w(f"Why the lookup bar is missed: softwrap's lookups run at {sw / na:.2f}x of nonatomic's. Both read "
            "every node in place (`sw_peek`); what differs is the check that no alias table holds a byte of the "
            "node: under nonatomic it is nothing, under softwrap it loads the ring's two generation counters and "
            "the active table's fill, twice (a lookup outside a wrap re-reads them to be sure no table moved), "
            "and, when tables hold entries, one Bloom-filter bit per live table, for each node a descent "
            "reads, plus the C API's pool and thread-context checks of each call. Closing the gap needs the check out of the per-node path: a per-thread snapshot of the ring "
            "(generations and an all-clear bit) taken once per lookup and valid until a generation moves, so a "
            "descent in a quiet ring pays one compare per node instead of several atomic loads.")
        m.w()
    for keys in ("str16", "str64"):
        sw, na, pm = (ops(keys, "load", "-", c) for c in ("softwrap", "nonatomic", "pmdk-rtree_map"))
        if not (sw and na and pm) or sw >= 2 * pm:
            continue
        m.w(f"Why the {keys} insert bar is missed: 2x PMDK's rtree_map means {1e6 / (2 * pm):.2f} µs per insert; "
            f"softwrap takes {1e6 / sw:.2f} µs where the same tree under nonatomic (no logging, no aliasing) takes "
            f"{1e6 / na:.2f} µs, so the engine's own share ({1e6 / sw - 1e6 / na:.2f} µs) is more than the "
            f"{1e6 / (2 * pm) - 1e6 / na:.2f} µs the bar leaves it. A string insert makes four engine calls that write (the string's "
            f"block: sw_pmalloc's header word and one sw_write of the bytes; the leaf, one sw_write of its image; "
            f"the tree's size), each an alias-table entry or shadow-page write plus a redo record, against three "
            f"for an integer insert; separators of string keys are short inline prefixes, so splits allocate no "
            f"block. Since issue 23 the string's bytes and new split nodes go home in place (fresh blocks: no "
            f"alias, no log record), which moved this ratio within the noise: under callgrind (50,000 str16 "
            f"inserts) an insert still takes about 14,900 instructions — node reads through the alias overlay "
            f"24 %, sw_write of the leaf image into a shadow page and the log 24 %, the allocation 15 % (two metadata "
            f"words stored through the engine, about 470 instructions each), word stores through the engine 16 % "
            f"in all (those two, the tree's size, a node's count), the commit 12 %. What would reach the bar is a cheaper store to old data: "
            f"object-granular shadows (see the B+tree section) for the leaf, and allocator metadata kept per "
            f"thread and logged once per wrap instead of word by word.")
        m.w()
