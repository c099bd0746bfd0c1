"""results_fill.py — the fresh fills' section of docs/results.md (issue
23), written from results/fill/fill.csv (sw_bench_fill --csv).

Approach: one table of every engine and case with its median time, the
median of memset + flush + fence of the same bytes and their ratio; the
bar (at most 1.2x) is recomputed from the CSV's medians, checked per row
and listed in the checks table, and a missed bar becomes a shortfall.
fill(m) takes make_results' module for its helpers (section, w, table,
check, shortfall, meta).
"""

ANCHOR = "#fresh-fills-issue-23"


def fill(m):
    d = m.section("Fresh fills (issue 23)", "fill",
                  how="run `bench/suite/make-results` (or `build/bench/sw_bench_fill --csv results/fill/fill.csv`)")
    if not d:
        return
    r0 = d[0]
    runs = "one run each" if r0["reps"] == "1" else f"medians of {r0['reps']}"
    m.w(f"`sw_bench_fill` times, per engine on the x86 medium and each in a new {r0['pool_mib']} MiB pool in "
        f"/dev/shm (pages faulted in beforehand), `sw_pool_root` of a {r0['root_mib']} MiB root (`root`), "
        "`sw_pzalloc` of the whole free heap (`pzalloc`) and the same after the heap was filled, freed and the "
        f"pool reopened (`used`), against memset + flush + fence of the same bytes, interleaved, {runs}. A block "
        "a wrap allocates is fresh: its bytes are written in place, neither logged nor aliased. A new pool's heap "
        "and the zone a growth adds are known to hold zeros, so `root` and `pzalloc` write nothing, while in "
        "`used` nothing is known to be zero and every byte is zeroed in place; the bar is at most 1.2x "
        "memset + flush for every case.")
    m.w()
    if m.meta("fill").get("quick") == "1" or int(r0["reps"]) < 3:
        runs = "one run" if r0["reps"] == "1" else f"{r0['reps']} runs"
        m.w(f"*This run is small ({r0['pool_mib']} MiB pools, {runs} per case): a smoke run, its verdicts are "
            "indicative.*")
        m.w()
    body = []
    for r in d:
        ms, base, bar = float(r["ms"]), float(r["baseline_ms"]), float(r["bar"])
        ratio = ms / base
        body.append([r["engine"], r["case"], f"{int(r['bytes']) / 1048576:,.1f}", f"{ms:,.2f}", f"{base:,.2f}",
                     f"{ratio:.2f}x"])
        ok = m.check(f"Fresh fill {r['engine']} {r['case']}: at most {bar:g}x memset + flush ({ms:,.2f} vs "
                     f"{base:,.2f} ms, {ratio:.2f}x)", ratio <= bar)
        if not ok:
            m.shortfall(f"[Fresh fills]({ANCHOR}): {r['engine']} {r['case']}: {ratio:.2f}x memset + flush "
                        f"({ms:,.2f} against {base:,.2f} ms; bar {bar:g}x).")
    m.table(["engine", "case", "MiB", "ms", "memset + flush (ms)", "ratio"], body)
