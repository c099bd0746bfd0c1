"""results_eadr.py — the cpu-cache form's section of docs/results.md
(`softwrap bench eadr`, issue 42: every workload with the x86 medium in its
cpu-cache form, as on an eADR or CXL platform, against PMDK with
PMEM_NO_FLUSH=1; the stream forms; undo with and without its ordering
fences), written by make_results.py.

Approach: as in every section of make_results.py, each number and each
sentence about a difference is derived from the run's CSV files; the
issue's bars are recomputed from the CSV, listed with the checks, and a
missed bar becomes a shortfall.  `mr` is the make_results module.
"""

import re

TITLE = "The cpu-cache form — eADR and CXL platforms (issue 42)"
ANCHOR = "#the-cpu-cache-form--eadr-and-cxl-platforms-issue-42"
ENGINES = ["softwrap", "softwrap-local", "undo", "undo-themis", "nonatomic"]
FORMS = ["softwrap/nt", "undo/nt", "undo/fenced"]


def _x(v):
    return f"{v:.2f}x"


def eadr(mr):
    d = mr.section(TITLE, "eadr", name="limit", how="run `softwrap bench eadr` (about 5 minutes)")
    if not d:
        return
    meta = mr.meta("eadr", "limit_meta")
    f = mr.f
    w = mr.w
    names = []
    for r in d:
        if r["workload"] not in names:
            names.append(r["workload"])
    have_pmdk = any(r["access"] == "pmdk" for r in d)
    rounds = d[0]["rounds"]
    w("A platform whose persistence domain includes the CPU caches (Intel eADR; CXL memory whose host performs "
      "the global persistent flush on power loss) makes a store durable once it is globally visible. There the x86 "
      "medium runs in its *cpu-cache form* ([media.md](media.md), \"The cpu-cache form of the x86 medium\"): no "
      "flushes, log records written with temporal stores, and the ordering fences x86-TSO makes unneeded not "
      "issued; the commit fences stay. DRAM's caches behave like such a platform's here, so `softwrap bench eadr` "
      "(`sw_bench_limit --cpu-cache`) runs the limit's workloads with `SOFTWRAP_PERSISTENCE=cpu-cache` on every "
      "engine, against PMDK with `PMEM_NO_FLUSH=1` (its own switch for such platforms: libpmem then skips every "
      "flush and keeps its fences), and three more forms: softwrap and undo with non-temporal streams "
      "(`softwrap/nt`, `undo/nt`: `SOFTWRAP_CPU_CACHE_STREAMS=non-temporal`, whose ordering fences stay) and undo "
      "with temporal streams and its ordering fences kept (`undo/fenced`: `SOFTWRAP_CPU_CACHE_FENCES=keep`). One "
      f"thread, pinned, the same transactions on all, {rounds} rounds of one slice each in a rotated order; medians "
      "of the rounds' ratios. The crash simulator's eADR model checks the same forms "
      "([crash-simulator.md](crash-simulator.md), \"The persistency models\").")
    w()
    if meta.get("pmdk", "").startswith("skipped"):
        w(f"*PMDK was not measured ({meta['pmdk']}): its columns and its bar are missing.*")
        w()
    cols = [c for c in ENGINES + FORMS if any(r["access"] == c for r in d)]
    rows = []
    for name in names:
        base = mr.one(d, workload=name, access="pmdk" if have_pmdk else "limit")
        line = [name, f"{f(base, 'ns_per_tx'):,.0f}" if base else ""]
        for c in cols:
            r = mr.one(d, workload=name, access=c)
            key = "vs_pmdk" if have_pmdk else "vs_limit"
            line.append(_x(f(r, key)) if r and r.get(key) else "")
        rows.append(line)
    if have_pmdk:
        w("Time per transaction over PMDK's with `PMEM_NO_FLUSH=1` (below 1: faster; PMDK's own time in ns):")
    else:
        w("Time per transaction over the limit's (the limit's own time in ns):")
    w()
    mr.table(["workload", ("PMDK" if have_pmdk else "limit") + " (ns/tx)"] + cols, rows)
    mr.image("eadr")

    bars = []

    def bar(label, ok, what):
        mr.check(f"cpu-cache form: {label}", ok)
        bars.append(f"{label} — " + ("met." if ok else "**not met.**"))
        if not ok:
            mr.shortfall(f"[The cpu-cache form]({ANCHOR}): {label} ({what}).")

    sw = {n: mr.one(d, workload=n, access="softwrap") for n in names}
    sw = {k: v for k, v in sw.items() if v and v.get("vs_pmdk")}
    if have_pmdk and sw:
        slower = [(k, f(v, "vs_pmdk")) for k, v in sw.items() if f(v, "vs_pmdk") >= 1]
        worst = max(sw.items(), key=lambda kv: f(kv[1], "vs_pmdk"))
        bar(f"softwrap faster than PMDK with its flushes off on every workload ({len(sw) - len(slower)} of "
            f"{len(sw)}; slowest against PMDK: {worst[0]} {_x(f(worst[1], 'vs_pmdk'))})", not slower,
            "slower on " + ", ".join(f"{k} {_x(v)}" for k, v in slower) if slower else "")

    # Undo's ordering fences: per workload, from limit_meta's notes (the
    # elided fences per transaction) and the rounds' medians here.
    per_tx = {}
    for key, v in meta.items():
        m = re.match(r"(\S+) undo ordering fences$", key)
        if m:
            n = re.match(r"([0-9.]+) elided per transaction", v)
            if n:
                per_tx[m.group(1)] = float(n.group(1))

    def ratio(name, a, b):
        ra, rb = mr.one(d, workload=name, access=a), mr.one(d, workload=name, access=b)
        if not ra or not rb:
            return None
        return f(ra, "ns_per_tx") / f(rb, "ns_per_tx")

    several = [n for n in names if per_tx.get(n, 0) >= 2]
    if several:
        rows = []
        for n in names:
            nt, fe = ratio(n, "undo/nt", "undo"), ratio(n, "undo/fenced", "undo")
            rows.append([n, f"{per_tx.get(n, 0):.1f}", _x(nt) if nt else "", _x(fe) if fe else ""])
        w("Undo's ordering fences: per transaction the fences the temporal form does not issue (one per undo "
          "record but the first, roughly), and the time of undo with them over undo without them (medians of the "
          "rounds' times): `undo/nt` is the form that needs them (non-temporal records, each fenced before the "
          "store it protects: undo as on an ADR platform, less the flushes), `undo/fenced` the temporal form "
          "with them kept:")
        w()
        mr.table(["workload", "fences elided per tx", "undo/nt / undo", "undo/fenced / undo"], rows)
        nts = {n: ratio(n, "undo/nt", "undo") for n in several}
        nts = {k: v for k, v in nts.items() if v is not None}
        if nts:
            low = [(k, v) for k, v in nts.items() if v < 1.3]
            least = min(nts.items(), key=lambda kv: kv[1])
            why = []
            for k, v in low:
                lim = ratio(k, "undo/nt", "limit")
                why.append(f"{k} {_x(v)}" + (f": even the limit, plain memory with no log at all, takes undo/nt's "
                                             f"time over {_x(lim)}, so no engine can be 1.3x faster there"
                                             if lim is not None and lim < 1.3 else ""))
            bar(f"undo without its ordering fences at least 1.3x faster than with them on the {len(nts)} workloads "
                f"with several stores per transaction ({len(nts) - len(low)} of {len(nts)}; least: {least[0]} "
                f"{_x(least[1])})", not low, "below on " + "; ".join(why) if low else "")
        fes = [v for v in (ratio(n, "undo/fenced", "undo") for n in several) if v is not None]
        if fes:
            w(f"- **What the fences cost:** an `sfence` with only temporal stores in flight costs little here "
              f"(`undo/fenced` {_x(min(fes))}–{_x(max(fes))} undo's time); what makes undo's per-record fence "
              "expensive on an ADR platform is the non-temporal record it waits for, which must leave the "
              "write-combining buffer first. With temporal records the fence has nothing to order that TSO does "
              "not already, so the cpu-cache form drops it: the Themis paper's *Ideal*, crash-safe here (the eADR "
              "model finds no failure in it and catches the non-temporal form without the fences).")
    sws = [(n, ratio(n, "softwrap/nt", "softwrap")) for n in names]
    sws = [(n, v) for n, v in sws if v is not None]
    uns = [(n, ratio(n, "undo/nt", "undo")) for n in names]
    uns = [(n, v) for n, v in uns if v is not None]
    if sws:
        faster_nt = [n for n, v in sws if v < 1]
        vals = sorted(v for _, v in sws)
        w(f"- **Temporal or non-temporal streams:** softwrap/nt takes {_x(vals[0])}–{_x(vals[-1])} softwrap's time "
          f"(median {_x(vals[len(vals) // 2])}; faster with non-temporal streams on "
          + (", ".join(faster_nt) if faster_nt else "none") + ")"
          + (f", undo/nt {_x(min(v for _, v in uns))}–{_x(max(v for _, v in uns))} undo's" if uns else "")
          + ". Temporal streams are the default (`kDefaultCpuCacheStreams`).")
    if have_pmdk:
        for e in ("softwrap-local", "undo"):
            v = [f(r, "vs_pmdk") for r in d if r["access"] == e and r.get("vs_pmdk")]
            if v:
                v.sort()
                w(f"- **{e} against PMDK without flushes:** {_x(v[0])}–{_x(v[-1])} (median {_x(v[len(v) // 2])}).")
    w()
    if bars:
        w("The issue's bars (issue 42):")
        w()
        for b in bars:
            w(f"- {b}")
        w()
