"""results_store_cost.py — the store-cost section of docs/results.md (issue
39), written from results/store_cost/store_cost.csv (bench/store-cost
--csv): the instructions callgrind counts for a wrap and for an 8-byte store
to old data on every engine and on PMDK.

Approach: one table, a row per system, the issue's bars recomputed from it
(listed in the checks table with "(store_cost)" in their text, which is how
`make-results --only store_cost` finds their rows); a missed bar becomes a
shortfall.  store_cost(m) takes make_results' module for its helpers
(section, w, table, check, shortfall, meta).
"""

ENGINES = ["softwrap", "softwrap-local", "undo", "undo-themis", "nonatomic"]
LINK = "[What a store costs](#what-a-store-costs-issue-39)"


def store_cost(m):
    d = m.section("What a store costs (issue 39)", "store_cost",
                  how="run `bench/suite/make-results --only store_cost` (or `bench/store-cost`; needs valgrind)")
    if not d:
        return
    rows = {r["system"]: r for r in d}
    wraps = int(d[0]["wraps"])
    m.w("`bench/store-cost` counts instructions with callgrind (every thread: softwrap's retirement thread "
        "included) in `sw_bench_store_cost` ([benchmarks.md](benchmarks.md#what-a-store-costs-benchstore-cost)): "
        "wraps of 0, 1 and 50 random 8-byte stores to words of an 8 MiB array that was filled and made home "
        f"before, each cell run with {wraps:,} and {2 * wraps:,} wraps and the difference taken (so pool "
        "creation, the fill and thread start cancel; the median of three such pairs), and the loop alone (its "
        "index stream and a plain store) taken out. *Empty wrap*: `sw_wrap_open` + `sw_wrap_close`. *Wrap of 1*: "
        "a wrap of one `sw_store64`, all of it. *Per store*: (a wrap of 50 stores - an empty wrap) / 50. "
        "*Per modify*: the same with `sw_modify` of the word and a plain store through the view (a worst case "
        "for objects: one per word). PMDK: `pmemobj_tx_begin`/`_commit`/`_end` around "
        "`pmemobj_tx_add_range_direct` of the word and the store (its documentation's way).")
    m.w()
    out = []
    for s in ENGINES + ["pmdk"]:
        r = rows.get(s)
        if r is None:
            continue
        mod = "(as store)" if s == "pmdk" else f"{int(r['per_modify']):,}"
        out.append([s, f"{int(r['empty_wrap']):,}", f"{int(r['wrap_of_1']):,}", f"{int(r['per_store']):,}", mod])
    m.table(["system", "empty wrap", "wrap of 1", "per store", "per modify"], out)
    m.w()
    present = [s for s in ENGINES if s in rows]
    worst = max(present, key=lambda s: int(rows[s]["empty_wrap"]))
    m.check(f"a wrap that stores nothing at most 100 instructions on every engine (store_cost): "
            f"{worst} {int(rows[worst]['empty_wrap'])}", int(rows[worst]["empty_wrap"]) <= 100)
    if int(rows[worst]["empty_wrap"]) > 100:
        m.shortfall(f"{LINK}: an empty wrap costs {int(rows[worst]['empty_wrap'])} instructions on {worst} (bar 100)")
    for s, bar in (("softwrap", 150), ("nonatomic", 60)):
        if s not in rows:
            continue
        v = int(rows[s]["per_store"])
        m.check(f"a store to old data at most {bar} instructions on {s} (store_cost): {v}", v <= bar)
        if v > bar:
            m.shortfall(f"{LINK}: a store to old data costs {v:,} instructions on {s} (bar {bar})")
    if "softwrap" in rows:
        v = int(rows["softwrap"]["wrap_of_1"])
        m.check(f"a wrap of one store at most 600 instructions on softwrap (store_cost): {v}", v <= 600)
        if v > 600:
            m.shortfall(f"{LINK}: a wrap of one store costs {v:,} instructions on softwrap (bar 600)")
    m.w("Where softwrap's store goes (callgrind, `--dump-instr=yes`, the difference of two runs line by line): "
        "about 120 instructions are the alias-table insert (a hash, the probe, three Bloom-filter bits, the CAS "
        "and the insertion-order slot), about 250 the rest of the engine's store (the undo record for an abort, "
        "the spill budget, the frame's record and its checksum), about 70 the API's entry (pool and context "
        "lookup, range check), and about 200 retirement on the other thread (the table walk, the home store "
        "and a flush per random word, clearing the table). The bar needs a different "
        "shape, not a leaner version of this one: words kept per thread and inserted into a table once per "
        "wrap, a table that needs no clearing (generation-tagged entries), retirement in sorted batches.")
    m.w()
