"""results_themis_sim.py — the Themis hardware simulator's section of
docs/results.md (`softwrap bench themis-sim`: Figs. 9, 11, 12, section V-E
and the persist-order check), written by make_results.py.

Approach: as every section of make_results.py, each sentence about a
difference is derived from the CSV files of the run, beside the paper's
stated numbers (paper.THEMIS); the explanations point at the
sensitivity runs that measure them.  `mr` is the make_results module (its
w/table/section/image/shortfall/check helpers).
"""
import paper

ANCHOR = "#themis-figs-9-11-12-v-e--the-simulated-hardware"


def _mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def themis_sim(mr):
    d = mr.section("Themis Figs. 9, 11, 12, V-E — the simulated hardware", "themis-sim",
                   name="fig9", how="run `softwrap bench themis-sim`")
    if not d:
        return
    p = paper.THEMIS
    m = mr.meta("themis-sim")
    f = mr.f
    w = mr.w
    persist = mr.read("themis-sim", "persist") or []
    sens = mr.read("themis-sim", "sensitivity") or []
    tw = mr.read("themis-sim", "tail_width") or []
    f12 = mr.read("themis-sim", "fig12") or []
    cons = mr.read("themis-sim", "constructed") or []
    w("The paper evaluated Themis in gem5; we run the same comparison on our trace-driven model of its "
      "hardware (`src/themis`, [themis-sim.md](themis-sim.md)): the machine of its Table I (4 cores at "
      "3 GHz, 16-entry WCB 20 ns from the PM controller, 64 KiB L1 with a 16-entry WBB, 2 MiB/core LLC, "
      "PM with 128/64-entry queues, 500 ns writes and 346 ns reads), a simplified in-order core with a "
      "32-entry store buffer and fences that stall it, and traces of our nine workloads recorded on the "
      "trace medium under `undo` (Baseline) and `undo-themis` (Themis, Ideal): "
      f"{m.get('traces', '')}. Each event's work is the least of the cycles measured between the events in "
      "six runs of the program (the two engines, twice recording only the work), so every design runs "
      "on the same work. Parameters the paper does not give (ours): the ACK takes 20 ns back, the LLC "
      "reaches the controller in 20 ns, and the WCB sends an entry 1 ns after its last store. Beside the "
      "paper's three designs runs a fourth of ours, **themis-mc**: the order kept at the PM controller "
      "instead of the L1 — each core numbers its non-temporal WCB entries, a writeback leaving the L1 while "
      "one of them is unACKed carries the core's count, and the controller holds it out of the persistence "
      "domain until the entries numbered below it have arrived "
      "([themis-sim.md](themis-sim.md#themis-mc-the-order-kept-at-the-pm-controller)).")
    w()
    rows = []
    th = [f(r, "themis_speedup") for r in d]
    mc = [f(r, "mc_speedup") for r in d]
    idl = [f(r, "ideal_speedup") for r in d]
    for r in d:
        rows.append([r["label"], f"{f(r, 'stores_per_tx'):.1f}", f"{f(r, 'removable_fences_per_tx'):.1f}",
                     f"{f(r, 'work_cycles_per_removable_fence'):.0f}", f"{f(r, 'themis_speedup'):.2f}x",
                     f"{f(r, 'mc_speedup'):.2f}x", f"{f(r, 'ideal_speedup'):.2f}x",
                     f"{f(r, 'themis_vs_ideal_pct'):+.1f} %", f"{f(r, 'mc_vs_ideal_pct'):+.1f} %"])
    rows.append(["**mean**", "", "", "", f"**{_mean(th):.2f}x**", f"**{_mean(mc):.2f}x**", f"**{_mean(idl):.2f}x**",
                 f"{100 * (_mean(idl) / _mean(th) - 1):+.1f} %", f"{100 * (_mean(idl) / _mean(mc) - 1):+.1f} %"])
    rows.append(["paper", "", "", "≈ 200 instructions (best)", f"{p['fig9_avg']:.3f}x mean, "
                 f"{p['fig9_max']:.2f}x max (PC)", "", "", "\"almost completely bridges the gap\"", ""])
    mr.table(["workload", "stores/tx", "removable fences/tx", "work cycles per removable fence",
              "Themis over Baseline", "themis-mc over Baseline", "Ideal over Baseline", "Themis cycles vs Ideal",
              "themis-mc cycles vs Ideal"], rows)
    mr.image("themis-sim")
    ranked = sorted(d, key=lambda r: -f(r, "themis_speedup"))
    best = [r["workload"] for r in ranked[:3]]
    worst = [r["workload"] for r in ranked[-3:]]
    lab = {r["workload"]: r["label"] for r in d}
    w(f"- **Average:** Themis {100 * (_mean(th) - 1):+.1f} % over Baseline (paper {100 * (p['fig9_avg'] - 1):+.1f} %), "
      f"Ideal {100 * (_mean(idl) - 1):+.1f} %. Best three here: {', '.join(lab[x] for x in best)} "
      f"(paper: SPS, PC, LL, +77.4–87 %); worst three: {', '.join(lab[x] for x in worst)} "
      "(paper: RB, TATP, TPCC, +12.8–20.6 %).")
    scale = {r["workload"]: r for r in mr.sel(sens, knob="work_scale", value="0.25")}
    if scale:
        s_th = _mean([f(r, "themis_speedup") for r in scale.values()])
        s_id = _mean([f(r, "ideal_speedup") for r in scale.values()])
        fence = _mean([f(r, "work_cycles_per_removable_fence") for r in d])
        w(f"- **Why smaller gains:** a removable fence costs the Baseline one WCB round trip (20 ns out, "
          f"20 ns back: about 120 cycles); what it is weighed against is the work between removable "
          f"fences, here {fence:.0f} cycles on average (the cycles this machine's core measured between "
          "the events, each taken as one simulated cycle). The paper's best workloads have about 200 "
          "*instructions* between them on an 8-wide out-of-order core, fewer than 200 cycles whenever it "
          "retires more than one instruction a cycle: its fences weigh more. With our measured work "
          "scaled by 1/4 (the sensitivity runs), Themis gains "
          f"{100 * (s_th - 1):+.1f} % on average and Ideal {100 * (s_id - 1):+.1f} % (paper: "
          f"{100 * (p['fig9_avg'] - 1):+.1f} %).")

    def per(rs, k):
        return _mean([f(r, k) for r in rs])
    bw = [r for r in d if r["workload"] in best]
    ww = [r for r in d if r["workload"] in worst]
    same_best = [lab[x] for x in best if x in p["fig9_best"]]
    same_worst = [lab[x] for x in worst if x in p["fig9_worst"]]
    w(f"- **What separates best from worst:** our best three log {per(bw, 'removable_fences_per_tx'):.1f} "
      f"words per transaction on average, the worst three {per(ww, 'removable_fences_per_tx'):.1f}: with few "
      "removable fences per transaction, the commit (two fences that stay, each waiting for a flush) "
      f"dominates. Shared with the paper's best three: {', '.join(same_best) or 'none'}; with its worst "
      f"three: {', '.join(same_worst) or 'none'}. The paper does not give its workloads' transaction sizes "
      "beyond Fig. 8's ranges, so where the order differs we cannot say whether its transactions differ "
      "from ours.")
    far = [r for r in d if f(r, "themis_vs_ideal_pct") > 5]
    ack5 = {r["workload"]: r for r in mr.sel(sens, knob="ack_ns", value="5")}
    gap5 = {k: 100 * (f(v, "ideal_speedup") / f(v, "themis_speedup") - 1) for k, v in ack5.items()}
    ok = mr.check("Themis within 5 % of Ideal on every workload (themis-sim)", not far)
    if far:
        names = ", ".join(f"{r['label']} {f(r, 'themis_vs_ideal_pct'):+.1f} %" for r in far)
        w(f"- **Themis against Ideal:** within 5 % on {len(d) - len(far)} of {len(d)} workloads; beyond it: "
          f"{names}. These are the smallest transactions: the commit flushes the one data line a few tens "
          "of cycles after its undo record left the WCB, so the line waits in the WBB for the record's "
          "ACK (a 40-ns round trip), and the commit's fence waits for both one after the other where Ideal "
          "overlaps them — the price of enforcing the order at the L1 (the paper's choice) rather than at "
          "the controller. The paper's Fig. 11 (waits of at most ~38 cycles) implies a faster ACK or longer "
          "record-to-flush distances than ours: with a 5-ns ACK the gaps are "
          + ", ".join(f"{lab[k]} {v:+.1f} %" for k, v in gap5.items() if k in [r["workload"] for r in far])
          + " (sensitivity runs). What reaches the bar is a design change, not a setting: themis-mc "
          "(next).")
        mr.shortfall(f"[Themis simulator]({ANCHOR}): the paper's Themis is more than 5 % slower than Ideal on "
                     f"{names} (single-store transactions wait for their record's ACK); themis-mc, which keeps "
                     "the order at the PM controller, is not (below).")
    else:
        w(f"- **Themis against Ideal:** within 5 % on every workload (largest gap "
          f"{max(f(r, 'themis_vs_ideal_pct') for r in d):+.1f} %).")
    mc_far = [r for r in d if f(r, "mc_vs_ideal_pct") > 5]
    e40 = mr.sel(sens, knob="each_way_ns", value="40")
    mc40 = max((f(r, "mc_vs_ideal_pct") for r in e40), default=0.0)
    th40 = [r for r in e40 if f(r, "themis_vs_ideal_pct") > 5]
    ok_mc = mr.check("themis-mc within 5 % of Ideal on every workload (themis-sim)", not mc_far)
    mr.check("themis-mc within 5 % of Ideal on every workload at 40 ns each way (themis-sim)", bool(e40) and mc40 <= 5)
    held = sum(f(r, "mc_held_pct") for r in d)
    through = sum(int(r["mc_write_throughs"]) for r in d)
    pm_writes = sum(int(r["pm_writes"]) for r in d)
    through_text = ("every one of them was a clwb's line, so the LLC wrote nothing through that it would not have "
                    "written anyway" if through == 0 else
                    f"{through:,} of them were not clwb's: the LLC wrote them through, "
                    f"{100 * through / max(pm_writes, 1):.2f} % of the controller's writes")
    w(f"- **themis-mc against Ideal:** largest gap {max(f(r, 'mc_vs_ideal_pct') for r in d):+.1f} % on the "
      f"default machine ({'within 5 % on every workload' if ok_mc else 'beyond 5 %: ' + ', '.join(lab[r['workload']] for r in mc_far)}), "
      f"mean speedup {100 * (_mean(mc) - 1):+.1f} % against Themis' {100 * (_mean(th) - 1):+.1f} %. A numbered "
      "line takes the WBB-to-LLC-to-controller path (40 ns) while the record it waits for takes the WCB's "
      "(20 ns), so on this machine the record is "
      + ("always there first: no writeback was held at all" if held == 0 else
         f"nearly always there first: {held / len(d):.2f} % of writebacks were held on average")
      + f" ({_mean([f(r, 'mc_stamped_pct') for r in d]):.0f} % of writebacks left numbered; {through_text}). "
      "With 40 ns each way "
      f"(sensitivity runs) its largest gap is {mc40:+.1f} %"
      + (f", while Themis is beyond 5 % on {len(th40)} workloads ("
         + ", ".join(f"{lab[r['workload']]} {f(r, 'themis_vs_ideal_pct'):+.1f} %" for r in th40) + ")"
         if th40 else "") + ": Themis' writebacks wait for a round trip, themis-mc's for nothing on the way.")
    w()
    # Fig. 11
    w("**Fig. 11 — cycles a writeback waited**: in Themis' WBB for its drainable-after pointer; in "
      "themis-mc's controller queue, held (on the default machine and with a 100-ns non-temporal path):")
    w()
    f11 = mr.read("themis-sim", "fig11") or []

    def waits(wl, design, setting):
        rs = [r for r in f11 if r["workload"] == wl and r.get("design") == design and r.get("setting") == setting]
        tot = sum(int(r["writebacks"]) for r in rs)
        waited = sum(int(r["writebacks"]) for r in rs if int(r["wait_from"]) > 0)
        mx = max((int(r["wait_to"]) for r in rs if int(r["writebacks"]) > 0 and int(r["wait_from"]) > 0), default=0)
        return (f"{100 * waited / tot:.1f} %, ≤ {mx}" if tot else "–")
    rows = [[r["label"], f"{f(r, 'waited_pct'):.1f} %", r["wait_p50"], r["wait_p99"], r["wait_max"],
             waits(r["workload"], "themis-mc", "default"), waits(r["workload"], "themis", "slow-nt-path"),
             waits(r["workload"], "themis-mc", "slow-nt-path")] for r in d]
    mr.table(["workload", "Themis: writebacks that waited", "median", "99th percentile", "max",
              "themis-mc: waited, longest (cycles)", "slow path, Themis: waited, longest",
              "slow path, themis-mc: waited, longest"], rows)
    mx = max(f(r, "wait_max") for r in d)
    w(f"The paper: most writebacks do not wait, some wait a few tens of cycles, at most about "
      f"{p['fig11_max_wait_cycles']} (LL, TATP). Here too most do not wait; those that do wait up to {mx:.0f} "
      "cycles: the ACK round trip (120 cycles) less the time since the record left the WCB, more when "
      "the WCB's link or the controller's queue is busy. A store "
      "tagged with the tail also asks the WCB to send the entries below its tag at once (our addition, "
      "[themis-sim.md](themis-sim.md)), so no writeback waits for a partial line to fill. themis-mc's "
      "writebacks wait in no WBB for an ACK; at the controller they wait only when the non-temporal path is "
      "slower than the writeback's (the last columns: a record 100 ns away): for the rest of the record's "
      "one-way trip, and longer when the record itself must wait for a slot at the busy controller — the "
      "longest holds — where Themis' writebacks wait for the round trip.")
    w()
    # Fig. 12
    if f12:
        w("**Fig. 12 — speedup against stores per transaction** (SPS, PC, LL with their transaction-size "
          "parameter; TATP and TPC-C omitted as in the paper):")
        w()
        rows = []
        for r in f12:
            rows.append([r["workload"], r["tx_size"], f"{f(r, 'stores_per_tx'):.1f}",
                         f"{f(r, 'themis_speedup'):.2f}x", f"{f(r, 'mc_speedup'):.2f}x", f"{f(r, 'ideal_speedup'):.2f}x"])
        mr.table(["workload", "size parameter", "stores/tx", "Themis", "themis-mc", "Ideal"], rows)
        ups = []
        for wl in sorted({r["workload"] for r in f12}):
            rs = sorted(mr.sel(f12, workload=wl), key=lambda r: f(r, "stores_per_tx"))
            ups.append(f"{wl} {f(rs[0], 'themis_speedup'):.2f}x → {f(rs[-1], 'themis_speedup'):.2f}x")
        gap = max(100 * (f(r, "ideal_speedup") / f(r, "mc_speedup") - 1) for r in f12)
        w("As in the paper, the speedup grows with the transaction size (" + "; ".join(ups) + ", smallest to "
          "largest): more removable fences per transaction, and the commit's fixed cost shared by more of "
          "them, until the removable fences dominate and the speedup approaches the ratio of a fence's cost "
          "to the work between two of them. Themis' gap to Ideal is at the smallest sizes; themis-mc's "
          f"largest over these runs is {gap:+.1f} %.")
        w()
    # Section V-E
    if tw:
        w("**Section V-E — tail pointer width:**")
        w()
        rows = []
        for bits in ("4", "6", "8", "10"):
            rs = mr.sel(tw, bits=bits)
            if not rs:
                continue
            rows.append([f"{bits} bits", f"{p['ve_tail_kb'][int(bits)]} KB",
                         f"{_mean([f(r, 'overflows_per_1k_allocations') for r in rs]):.1f}",
                         f"{_mean([f(r, 'speedup') for r in rs]):.3f}x",
                         f"{max(abs(f(r, 'vs_6bit_pct')) for r in rs):.2f} %"])
        mr.table(["tail pointer", "storage per L1 (1,024 lines)", "overflows per 1,000 WCB allocations (mean)",
                  "Themis over Baseline (mean)", "largest change against 6 bits"], rows)
        change = max(abs(f(r, "vs_6bit_pct")) for r in tw)
        w((f"As the paper found, the width barely matters (at most {change:.2f} % from the 6-bit time): "
           if change < 2 else f"Unlike the paper, the width matters here (up to {change:.2f} % from 6 bits): ")
          + "an overflow drains a WCB that is nearly empty anyway (entries leave as soon as their burst "
          "ends), and the 4-bit pointer overflows on every 16th allocation. The persist order was checked "
          "at every width.")
        w()
    sq = mr.read("themis-sim", "seq_width") or []
    st = mr.read("themis-sim", "storage") or []
    if st:
        w("**Section V-E — what each design stores, per core** (`src/themis/storage.h`; the paper counts "
          "its tail tags, 0.75 KB at 6 bits; we count every structure of both designs; themis-mc's controller "
          "queue is shared by the 4 cores, so a core's share is a quarter):")
        w()
        rows = [[r["design"], r["structure"], r["where"], r["entries"], r["bits_each"],
                 f"{f(r, 'bytes_per_core'):g}"] for r in st if r["structure"] != "total"]
        tot = {r["design"]: f(r, "bytes_per_core") for r in st if r["structure"] == "total"}
        for dname, b in tot.items():
            rows.append([f"**{dname}**", "**total**", "", "", "", f"**{b:g}**"])
        mr.table(["design", "what", "on", "entries", "bits each", "bytes per core"], rows)
        if "themis" in tot and "themis-mc" in tot:
            w(f"themis-mc stores {tot['themis-mc']:g} bytes per core against Themis' {tot['themis']:g} "
              f"({tot['themis'] / tot['themis-mc']:.0f}x less): nothing on the L1's 1,024 lines, the WBB or the "
              "LLC — the paper's objection to keeping the order beyond the L1 (a tag on every LLC line, per "
              "core) does not arise, because the LLC sends a numbered line on to the controller instead of "
              "keeping its number. Each numbered writeback carries its number and a valid bit on the way, and "
              "its core's id from the LLC on: wires, not storage.")
            w()
    if sq:
        rows = []
        machines = {"default": "default", "slow-nt-path": "slow non-temporal path (100 ns)"}
        for mach in ("default", "slow-nt-path"):
            for bits in ("6", "8", "10"):
                rs = [r for r in sq if r["bits"] == bits and r.get("machine", "default") == mach]
                if not rs:
                    continue
                rows.append([machines[mach], f"{bits} bits", f"{f(rs[0], 'storage_bytes_per_core'):g}",
                             f"{sum(int(r['held']) for r in rs):,}", f"{max(int(r['held_max']) for r in rs)}",
                             f"{sum(int(r['guard_stalls']) for r in rs):,}", f"{sum(int(r['misjudged']) for r in rs)}",
                             f"{_mean([f(r, 'speedup') for r in rs]):.3f}x",
                             f"{max(abs(f(r, 'vs_8bit_pct')) for r in rs):.2f} %"])
        w("**themis-mc's number width** (at least log2(16 entries) + 2 = 6 bits, so a number pending at the "
          "controller can be told from one that wrapped), on the default machine, where nothing is held, and "
          "with the record 100 ns from the controller, where numbers are compared while they are pending:")
        w()
        mr.table(["machine", "number", "bytes per core", "writes held (all workloads)", "most held at once",
                  "wrap-guard stalls", "misjudged comparisons", "themis-mc over Baseline (mean)",
                  "largest change against 8 bits"], rows)
        stalls = sum(int(r["guard_stalls"]) for r in sq)
        wbbw = sum(int(r.get("wbb_guard_waits", 0)) for r in sq)
        w(("The wrap guard never had to stop a core on the workloads, at any width, " if stalls == 0 else
           f"The wrap guard stopped a core {stalls:,} times over all widths and machines, ")
          + ("nor keep a numbered writeback in a WBB; " if wbbw == 0 else
             f"and kept a numbered writeback in a WBB {wbbw:,} times; ")
          + "the constructed *wrap* case below shows it working. The persist order was checked at every width "
          "on both machines.")
        w()
    if sens:
        w("**Sensitivity — the latency of the non-temporal path** (each design against Ideal on the same "
          "machine; the default is 20 ns each way):")
        w()
        rows = []
        names = {"ack_ns": "ACK only", "each_way_ns": "each way (to the controller and the ACK back)",
                 "wcb_to_pm_ns": "WCB to controller only"}
        for knob in ("ack_ns", "each_way_ns", "wcb_to_pm_ns"):
            vals = sorted({f(r, "value") for r in sens if r["knob"] == knob})
            for v in vals:
                rs = [r for r in sens if r["knob"] == knob and f(r, "value") == v]
                tw_ = max(rs, key=lambda r: f(r, "themis_vs_ideal_pct"))
                mw = max(rs, key=lambda r: f(r, "mc_vs_ideal_pct"))
                rows.append([names[knob], f"{v:g} ns",
                             f"{f(tw_, 'themis_vs_ideal_pct'):+.1f} % ({lab[tw_['workload']]})",
                             sum(1 for r in rs if f(r, "themis_vs_ideal_pct") > 5),
                             f"{f(mw, 'mc_vs_ideal_pct'):+.1f} % ({lab[mw['workload']]})",
                             sum(1 for r in rs if f(r, "mc_vs_ideal_pct") > 5),
                             f"{_mean([f(r, 'themis_speedup') for r in rs]):.2f}x / "
                             f"{_mean([f(r, 'mc_speedup') for r in rs]):.2f}x / "
                             f"{_mean([f(r, 'ideal_speedup') for r in rs]):.2f}x"])
        mr.table(["latency", "value", "Themis: worst gap to Ideal", "Themis: workloads beyond 5 %",
                  "themis-mc: worst gap", "themis-mc: beyond 5 %", "mean speedup Themis / themis-mc / Ideal"], rows)
        w("A slower ACK costs Themis a longer wait in the WBB for every line written just after its record; "
          "themis-mc never waits for an ACK outside a fence, which Ideal waits for too. A longer way to the "
          "controller costs both designs only when the record then arrives after the line: Themis' line still "
          "waits for the round trip, themis-mc's for the rest of the one-way trip.")
        w()
    # Persist-order check
    w("**The persist-order check.** Every run's persist order — each line as the controller accepted it, "
      "each non-temporal store as its WCB entry was accepted, interleaved with the stores, flushes and "
      "fences in the order the cores performed them — went to the crash simulator's persistency model "
      "(`crashsim::Model`, Eq. 1–4), which reports any store a fence or the Themis rule required that "
      "had not persisted:")
    w()

    def total(design, setting):
        rs = mr.sel(persist, design=design, setting=setting)
        return sum(int(r["order_violations"]) + int(r["fence_violations"]) for r in rs), len(rs)

    rows = []
    for design in ("baseline", "themis", "themis-mc", "ideal", "broken-wbb", "broken-mc"):
        cells = []
        for setting in ("default", "holding-wcb", "slow-nt-path"):
            n, runs = total(design, setting)
            cells.append(f"{n:,}" if runs else "–")
        rows.append([design] + cells)
    widths = sum(total("themis", s)[0] for s in ("tail-4", "tail-8", "tail-10"))
    mc_widths = sum(total("themis-mc", s)[0] for s in ("seq-6", "seq-10", "seq-6-slow-nt-path", "seq-10-slow-nt-path"))
    mr.table(["design", "default machine", "WCB holding partial lines (1 µs)", "slow non-temporal path (100 ns)"],
             rows)
    b0 = total("baseline", "default")[0] + total("themis", "default")[0]
    mc_all = sum(int(r["order_violations"]) + int(r["fence_violations"]) for r in persist
                 if r["design"] == "themis-mc")
    mc_runs = len([r for r in persist if r["design"] == "themis-mc"])
    lat = sum(int(r["order_violations"]) + int(r["fence_violations"]) for r in persist
              if r["design"] in ("themis", "themis-mc") and r["setting"].endswith("_ns-40"))
    f12v = sum(int(r["order_violations"]) + int(r["fence_violations"]) for r in persist
               if r["setting"].startswith("fig12") and r["design"] in ("baseline", "themis"))
    ok_order = mr.check("0 persist-order violations for Baseline and Themis on every workload (themis-sim)",
                        b0 == 0 and widths == 0 and f12v == 0)
    mr.check("0 persist-order violations for themis-mc everywhere it runs (themis-sim)", mc_runs > 0 and mc_all == 0)
    mr.check("the broken WBB is caught (themis-sim)", total("broken-wbb", "slow-nt-path")[0] > 0)
    mr.check("broken-mc (numbers ignored) is caught (themis-sim)", total("broken-mc", "slow-nt-path")[0] > 0)
    w(f"themis-mc: {mc_all} violations in {mc_runs} checked runs — every workload on the three machines, at "
      f"6 and 10-bit numbers on the default machine and the slow path ({mc_widths}), at every latency of the "
      f"sensitivity runs and in Fig. 12's runs; Themis and themis-mc at the 40-ns latencies: {lat}. broken-mc "
      f"(the controller ignores the numbers) is caught on the slow path "
      f"({total('broken-mc', 'slow-nt-path')[0]:,} violations), where a line overtakes the record it depends "
      f"on; on the default machine it has {total('broken-mc', 'default')[0]:,}: there the record arrives "
      "first, for the same reason themis-mc holds nothing.")
    w()
    w(f"Baseline (checked under the x86 and the Themis model) and Themis: {b0} violations over every "
      f"workload's trace, {widths} at 4, 8 and 10-bit tails and {f12v} in Fig. 12's runs. Ideal's "
      f"violations: {total('ideal', 'default')[0]:,} on the default machine, where a record leaves the "
      "WCB as its burst ends and the non-temporal path is shorter than a writeback's; thousands once the "
      "WCB holds partial lines for combining or the non-temporal path slows down — the paper's premise: "
      "rare, but possible. The broken WBB (DA pointers ignored) behaves like Ideal and is caught on the "
      "slow path." + ("" if ok_order else " **A violation by Baseline or Themis is a model bug.**"))
    w()
    if cons:
        rows = [[r["case"], r["design"], r["setting"], r["order_violations"], r["wait_max_cycles"],
                 r.get("held_max", ""), r.get("held_full", ""), r.get("guard_stalls", "")] for r in cons]
        w("The constructed cases ([cases.h](../src/themis/cases.h)): *held-record* — an undo record's word "
          "held in a WCB that combines partial lines while the store it protects is flushed; *slow-path* — "
          "a whole-line record on a 100-ns non-temporal path; *full-queue* — two cores' records on a 1-µs "
          "path while 200 of their lines are flushed, so themis-mc's controller holds until one unheld slot is "
          "left and the rest wait at its input (it finishes: no deadlock); *wrap* — a numbered line on a 1-µs "
          "LLC-to-controller path while its core numbers 60 more entries with 6-bit numbers, so the wrap guard "
          "must stop the core:")
        w()
        mr.table(["case", "design", "machine", "Eq. 3 violations", "longest wait (cycles)", "most held",
                  "refused a held slot", "wrap-guard stalls"], rows)
    w(f"The experiment took {float(m.get('seconds', 0)):.0f} s (limit: 10 minutes).")
    w()
    w("**The simplified core and what it means for absolute figures.** Our core issues one operation "
      "per cycle in program order, hides L1 hits, blocks on a miss and stalls at a fence until the "
      "store buffer, the WCB and all outstanding flushes are done; the work between events is the "
      "measured cycles of this machine's out-of-order core. The paper's 8-wide out-of-order core overlaps "
      "misses and keeps executing past a fence until its 192-entry ROB fills, so its absolute cycle "
      "counts and the cost of each miss differ from ours; a fence's full latency counts here, which "
      "favours fence removal, while our heavier work per removable fence (above) works against it. The "
      "comparisons between designs are on identical traces and work, so the ratios, not the cycle "
      "counts, are the result.")
    w()
    return ok
