#!/usr/bin/python3
"""plot.py DIR — draws DIR/<experiment>.png from the CSV files that
`softwrap bench <experiment>` wrote to DIR.

Approach: one function per experiment, chosen by the directory's name;
each reads its CSV files with the csv module (no pandas), draws the
scm-emu and x86 panels side by side with matplotlib's Agg backend, and
marks the values the paper states (paper.py) as black crosses, dotted
lines or annotations.  Run it with /usr/bin/python3 (Debian's
python3-matplotlib).
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paper  # noqa: E402

COLORS = {"nonatomic": "tab:blue", "softwrap": "tab:green", "softwrap-local": "tab:olive",
          "undo": "tab:red", "pmdk": "tab:purple"}
MEDIA = ["scm-emu", "x86"]
PAPER_STYLE = dict(color="black", marker="x", linestyle="none", markersize=8, label="paper")


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def num(r, k):
    return float(r[k])


def rows(data, **kw):
    return [r for r in data if all(r[k] == v for k, v in kw.items())]


def series(data, x, y, **kw):
    sel = sorted(rows(data, **kw), key=lambda r: num(r, x))
    return [num(r, x) for r in sel], [num(r, y) for r in sel]


def panels(title, n=2, width=6.0, height=4.2):
    fig, axes = plt.subplots(1, n, figsize=(width * n, height), squeeze=False)
    fig.suptitle(title)
    return fig, axes[0]


def save(fig, d, name):
    fig.tight_layout()
    fig.savefig(os.path.join(d, name + ".png"), dpi=110)
    plt.close(fig)


def fig4(d):
    data = read(os.path.join(d, "fig4.csv"))
    fig, ax = panels("Fig. 4: average nstore time vs group size (Tw = 1 µs, 8-entry queue)", 1, 7.5, 4.8)
    ax = ax[0]
    for m, label in (("x86", "DRAM (x86)"), ("scm-emu", "scm-emu")):
        for pat, ls in (("random", "-"), ("sequential", "--")):
            xs, ys = series(data, "group", "avg_ns_per_store", medium=m, pattern=pat)
            ax.plot(xs, ys, ls, marker="o", label=f"{label} {pat}")
    ax.axhline(paper.FIG4[("scm-emu", "random")], color="black", linestyle=":", label="paper: SCM random → 1000 ns")
    ax.axhline(paper.FIG4[("DRAM", "random")], color="gray", linestyle=":", label="paper: DRAM random → 100 ns")
    ax.axhline(1000 / 16, color="black", linestyle="-.", linewidth=0.8, label="paper: SCM sequential, Tw/16")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("stores in the group")
    ax.set_ylabel("average time per 4-byte nstore (ns)")
    ax.legend(fontsize=7)
    save(fig, d, "fig4")


def table2(d):
    data = read(os.path.join(d, "table2.csv"))
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    fig.suptitle("Table II / Fig. 5 (scm-emu, Tw = 1 µs, 10,000 wraps/s)")
    ax = axes[0]
    engines = ["nonatomic", "softwrap", "undo"]
    ns = [10, 15, 20]
    w = 0.2
    for i, e in enumerate(engines):
        sel = {int(num(r, "n")): r for r in rows(data, medium="scm-emu", engine=e)}
        xs = [j + (i - 1) * w for j in range(3)]
        ax.bar(xs, [num(sel[n], "tmean_ns") for n in ns], w, color=COLORS[e], label=f"{e} (ours)")
        ax.plot(xs, [paper.TABLE2[e][n][1] for n in ns], **(PAPER_STYLE if i == 0 else dict(PAPER_STYLE, label=None)))
        ax.plot(xs, [paper.table1_time(e, n) for n in ns], marker="_", color="gray", markersize=14,
                linestyle="none", label="Table I estimate" if i == 0 else None)
    ax.set_xticks(range(3), [f"n={n}" for n in ns])
    ax.set_ylabel("wrap time (ns), trimmed mean")
    ax.legend(fontsize=7)
    # pcommits per wrap.
    ax = axes[1]
    for i, e in enumerate(engines):
        sel = {int(num(r, "n")): r for r in rows(data, medium="scm-emu", engine=e)}
        xs = [j + (i - 1) * w for j in range(3)]
        ax.bar(xs, [num(sel[n], "pcommits") for n in ns], w, color=COLORS[e], label=e)
        ax.plot(xs, [num(sel[n], "paper_pcommits") for n in ns],
                **(PAPER_STYLE if i == 0 else dict(PAPER_STYLE, label=None)))
    ax.set_xticks(range(3), [f"n={n}" for n in ns])
    ax.set_ylabel("pcommits per wrap (incl. retirement)")
    ax.legend(fontsize=7)
    # SCM line writes per wrap: streamed (log records) and flushed (home
    # lines: the wrap's own for nonatomic/undo, retirement's for softwrap).
    ax = axes[2]
    for i, e in enumerate(engines):
        sel = {int(num(r, "n")): r for r in rows(data, medium="scm-emu", engine=e)}
        xs = [j + (i - 1) * w for j in range(3)]
        st = [num(sel[n], "streamed") for n in ns]
        fl = [num(sel[n], "flushes") for n in ns]
        ax.bar(xs, st, w, color=COLORS[e], label=f"{e}: streamed (log)")
        ax.bar(xs, fl, w, bottom=st, color=COLORS[e], alpha=0.45, hatch="//",
               label=f"{e}: flushed (home{', by retirement' if e == 'softwrap' else ''})")
        ax.plot(xs, [num(sel[n], "paper_scm_writes") for n in ns],
                **(PAPER_STYLE if i == 0 else dict(PAPER_STYLE, label=None)))
    ax.set_xticks(range(3), [f"n={n}" for n in ns])
    ax.set_ylabel("SCM line writes per wrap")
    ax.legend(fontsize=6)
    save(fig, d, "table2")


def open_loop_fig(d, name, title, xcol, xlabel, extra=None, logx=True):
    data = read(os.path.join(d, name + ".csv"))
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), squeeze=False)
    fig.suptitle(title)
    for col, m in enumerate(MEDIA):
        for e in ("nonatomic", "softwrap", "undo"):
            xs, ys = series(data, xcol, "resp_p50_ns", medium=m, engine=e)
            if not xs:
                continue
            axes[0][col].plot(xs, [y / 1e3 for y in ys], marker="o", color=COLORS[e], label=f"{e} response (median)")
            xs2, ys2 = series(data, xcol, "wrap_tmean_ns", medium=m, engine=e)
            axes[0][col].plot(xs2, [y / 1e3 for y in ys2], linestyle="--", color=COLORS[e], alpha=0.6,
                              label=f"{e} wrap time")
            xs3, ys3 = series(data, xcol, "throughput", medium=m, engine=e)
            axes[1][col].plot(xs3, ys3, marker="o", color=COLORS[e], label=e)
        axes[0][col].set_title(m)
        axes[0][col].set_yscale("log")
        axes[0][col].set_ylabel("µs")
        axes[1][col].set_ylabel("wraps/s completed")
        for r in (0, 1):
            axes[r][col].set_xlabel(xlabel)
            if logx:
                axes[r][col].set_xscale("log")
        if extra:
            extra(axes, col, m)
        axes[0][col].legend(fontsize=6)
        axes[1][col].legend(fontsize=7)
    save(fig, d, name)


def fig6(d):
    def extra(axes, col, m):
        if m != "scm-emu":
            return
        axes[0][col].plot([1e4], [paper.TABLE2["nonatomic"][10][1] / 1e3], **PAPER_STYLE)
        axes[0][col].plot([1e4], [paper.TABLE2["undo"][10][1] / 1e3], **dict(PAPER_STYLE, label=None))
        axes[0][col].plot([1e4], [paper.TABLE2["softwrap"][10][1] / 1e3], **dict(PAPER_STYLE, label=None))
        for e, v in paper.FIG6["max_tput"].items():
            axes[1][col].axhline(v, color=COLORS[e], linestyle=":", linewidth=1, label=f"paper max {e} ≈ {v:,}")
    open_loop_fig(d, "fig6", "Fig. 6: response time and throughput vs arrival rate (n = 10, 8K-entry tables)",
                  "rate", "arrival rate (wraps/s)", extra=extra)


def fig7(d):
    data = read(os.path.join(d, "fig7.csv"))
    fig, axes = panels("Fig. 7: throughput vs alias table size (n = 10; open loop at 50k wraps/s and closed loop)")
    for col, m in enumerate(MEDIA):
        ax = axes[col]
        xs, ys = series(data, "alias_entries", "open_throughput", medium=m, engine="softwrap")
        ax.plot(xs, ys, marker="o", color=COLORS["softwrap"], label="softwrap at 50k/s offered")
        xs, ys = series(data, "alias_entries", "closed_throughput", medium=m, engine="softwrap")
        ax.plot(xs, ys, marker="s", linestyle="--", color=COLORS["softwrap"], label="softwrap max (closed loop)")
        for e in ("nonatomic", "undo"):
            for r in rows(data, medium=m, engine=e):
                ax.axhline(num(r, "closed_throughput"), color=COLORS[e], linestyle=":", label=f"{e} max")
        lo, hi = paper.FIG7["good_range_log2"]
        ax.axvspan(2 ** lo, 2 ** hi, color="gray", alpha=0.12, label="paper: best range 2^13–2^20")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("alias table entries (retired from 1/8)")
        ax.set_ylabel("wraps/s")
        ax.set_title(m)
        ax.legend(fontsize=7)
    save(fig, d, "fig7")


def fig8(d):
    data = read(os.path.join(d, "fig8.csv"))
    fig, axes = panels("Fig. 8: response time over time, softwrap at 50k wraps/s, 8K-entry tables (table switches marked)")
    for col, m in enumerate(MEDIA):
        ax = axes[col]
        sel = rows(data, medium=m)
        if not sel:
            continue
        t0 = num(sel[0], "arrival_us")
        # Show a window of ~8 ms from 1/4 into the run.
        start = num(sel[len(sel) // 4], "arrival_us")
        win = [r for r in sel if start <= num(r, "arrival_us") <= start + 8000]
        xs = [(num(r, "arrival_us") - t0) / 1e3 for r in win]
        ax.plot(xs, [num(r, "resp_us") for r in win], linewidth=0.8, color=COLORS["softwrap"], label="response (µs)")
        prev = None
        first = True
        for r in win:
            s = r["table_switches"]
            if prev is not None and s != prev:
                ax.axvline((num(r, "arrival_us") - t0) / 1e3, color="gray", linestyle=":", linewidth=0.8,
                           label="table switch" if first else None)
                first = False
            prev = s
        ax.set_yscale("log")
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("response time (µs)")
        ax.set_title(f"{m} (paper: a switch every ~{paper.FIG8['switch_period_us']} µs)")
        ax.legend(fontsize=7)
    save(fig, d, "fig8")


def fig9(d):
    data = read(os.path.join(d, "fig9.csv"))
    fig, axes = panels("Fig. 9: throughput vs threads (wraps of 10 random fields of a per-thread object)")
    for col, m in enumerate(MEDIA):
        ax = axes[col]
        for e in ("nonatomic", "softwrap", "undo"):
            xs, ys = series(data, "threads", "throughput", medium=m, engine=e)
            ax.plot(xs, ys, marker="o", color=COLORS[e], label=e)
        cores = int(num(data[0], "cores"))
        ax.axvline(cores, color="gray", linestyle=":", label=f"{cores} CPUs here (paper: 6 cores)")
        ax.set_xlabel("threads")
        ax.set_ylabel("wraps/s (all threads)")
        ax.set_title(m)
        ax.legend(fontsize=7)
    save(fig, d, "fig9")


def fig10(d):
    data = read(os.path.join(d, "fig10.csv"))
    fig, axes = panels("Fig. 10: response time vs SCM write time Tw (n = 10, 50k wraps/s, scm-emu)", 1, 8, 5)
    ax = axes[0]
    for e in ("nonatomic", "softwrap", "undo"):
        xs, ys = series(data, "tw_ns", "resp_p50_ns", medium="scm-emu", engine=e)
        ax.plot(xs, [y / 1e3 for y in ys], marker="o", color=COLORS[e], label=f"{e} response (median)")
        xs, ys = series(data, "tw_ns", "wrap_tmean_ns", medium="scm-emu", engine=e)
        ax.plot(xs, [y / 1e3 for y in ys], linestyle="--", color=COLORS[e], alpha=0.6, label=f"{e} wrap time")
        xs, ys = series(data, "tw_ns", "est_ns", medium="scm-emu", engine=e)
        ax.plot(xs, [y / 1e3 for y in ys], linestyle=":", color=COLORS[e], alpha=0.8, label=f"{e} Table I")
        for r in rows(data, medium="x86", engine=e):
            ax.axhline(num(r, "wrap_tmean_ns") / 1e3, color=COLORS[e], linewidth=0.6, alpha=0.4)
    ax.plot([paper.FIG10["crossover_tw_ns"]], [paper.FIG10["crossover_ns"] / 1e3], **PAPER_STYLE)
    ax.plot([1500], [paper.FIG10["softwrap_at_1500_ns"] / 1e3], **dict(PAPER_STYLE, label=None))
    ax.set_yscale("log")
    ax.set_xlabel("Tw (ns)  [thin lines: x86 wrap times]")
    ax.set_ylabel("µs")
    ax.legend(fontsize=6)
    save(fig, d, "fig10")


def fig11(d):
    data = read(os.path.join(d, "fig11.csv"))
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), squeeze=False)
    fig.suptitle("Fig. 11: response time vs wrap size at 1,000 wraps/s (top: word stores; bottom: block copy, sw_write)")
    for row, variant in enumerate(("words", "block")):
        for col, m in enumerate(MEDIA):
            ax = axes[row][col]
            for e in ("nonatomic", "softwrap", "undo"):
                xs, ys = series(data, "n", "resp_p50_ns", medium=m, engine=e, variant=variant)
                ax.plot(xs, [y / 1e3 for y in ys], marker="o", color=COLORS[e], label=f"{e} response (median)")
                xs, ys = series(data, "n", "wrap_tmean_ns", medium=m, engine=e, variant=variant)
                ax.plot(xs, [y / 1e3 for y in ys], linestyle="--", color=COLORS[e], alpha=0.6, label=f"{e} wrap time")
            if m == "scm-emu" and variant == "words":
                ns = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
                for e in ("nonatomic", "softwrap", "undo"):
                    ax.plot(ns, [paper.table1_time(e, n) / 1e3 for n in ns], linestyle=":", color=COLORS[e],
                            label=f"{e} Table I")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("stores per wrap (8-byte words)")
            ax.set_ylabel("µs")
            ax.set_title(f"{m}, {variant}")
            ax.legend(fontsize=6)
    save(fig, d, "fig11")


def fig12(d):
    data = read(os.path.join(d, "fig12.csv"))
    fig, axes = panels("Fig. 12: maximum throughput vs data reuse across wraps (n = 10, closed loop)")
    for col, m in enumerate(MEDIA):
        ax = axes[col]
        for e in ("nonatomic", "softwrap", "undo"):
            xs, ys = series(data, "reuse_pct", "throughput", medium=m, engine=e)
            ax.plot(xs, ys, marker="o", color=COLORS[e], label=e)
        base = [num(r, "throughput") for r in rows(data, medium=m, engine="softwrap") if num(r, "reuse_pct") == 0]
        if base:
            xs = [0, 10, 20, 30, 40, 50]
            ax.plot(xs, [base[0] / (1 - x / 100) for x in xs], color="black", linestyle=":",
                    label="paper's claim: ∝ 1/(1-reuse) for softwrap")
        ax.set_xlabel("reuse (%)")
        ax.set_ylabel("wraps/s")
        ax.set_yscale("log")
        ax.set_title(m)
        ax.legend(fontsize=7)
    save(fig, d, "fig12")


def workshop(d):
    a = read(os.path.join(d, "workshop_stores.csv"))
    b = read(os.path.join(d, "workshop_wraps.csv"))
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.5))
    fig.suptitle("Workshop paper: speedup of softwrap over undo (foreground time)")
    for col, m in enumerate(MEDIA):
        ax = axes[col]
        for pat, mk in (("per-line", "o"), ("sequential", "s"), ("random", "^")):
            xs, ys = series(a, "stores", "speedup", medium=m, pattern=pat)
            ax.plot(xs, ys, marker=mk, label=pat)
        ax.axhline(1, color="gray", linewidth=0.6)
        ax.axhline(paper.WORKSHOP["array_template_speedup"], color="black", linestyle=":",
                   label="paper: ~2x (array template)")
        ax.set_xscale("log")
        ax.set_xlabel("stores per wrap")
        ax.set_ylabel("speedup (undo time / softwrap time)")
        ax.set_title(f"{m}: one wrap")
        ax.legend(fontsize=7)
        ax = axes[2 + col]
        for s in sorted({int(num(r, "stores")) for r in b}):
            xs, ys = series(b, "wraps", "speedup", medium=m, stores=str(s))
            ax.plot(xs, ys, marker="o", label=f"{s} stores/wrap")
        ax.axhline(paper.WORKSHOP["consecutive_600_speedup"], color="black", linestyle=":",
                   label="paper: > 3x at ~600 stores, several wraps")
        ax.set_xlabel("consecutive wraps")
        ax.set_ylabel("speedup")
        ax.set_title(f"{m}: consecutive wraps")
        ax.legend(fontsize=7)
    save(fig, d, "workshop")


def pmdk(d):
    path = os.path.join(d, "pmdk_summary.csv")
    if not os.path.exists(path):
        return
    data = read(path)
    fig, axes = panels("PMDK (libpmemobj, PMEM_IS_PMEM_FORCE=1) vs softwrap engines, x86, closed loop", 1, 8, 4.8)
    ax = axes[0]
    systems = ["pmdk", "undo", "nonatomic", "softwrap", "softwrap-local"]
    ns = sorted({int(num(r, "n")) for r in data})
    w = 0.16
    for i, s in enumerate(systems):
        vals = []
        for n in ns:
            sel = rows(data, system=s, n=str(n))
            vals.append(num(sel[0], "wraps_per_s") if sel else 0)
        ax.bar([j + (i - 2) * w for j in range(len(ns))], vals, w, color=COLORS.get(s, "tab:gray"), label=s)
    ax.set_xticks(range(len(ns)), [f"n={n}" for n in ns])
    ax.set_yscale("log")
    ax.set_ylabel("wraps/s")
    ax.legend(fontsize=7)
    save(fig, d, "pmdk")


def btree(d):
    data = read(os.path.join(d, "btree.csv"))
    COLORS_ = dict(COLORS, **{"pmdk-btree_map": COLORS["pmdk"]})
    n = int(num(data[0], "n"))
    fig, axes = plt.subplots(1, 3, figsize=(18, 4.8))
    fig.suptitle(f"Figs. 13/14: B+tree, {n:,} single-insert wraps per cell "
                 f"(alias tables of {int(num(data[0], 'alias_entries'))} entries, Tw = {int(num(data[0], 'tw_ns'))} ns)")
    orders = ["sequential", "random"]
    # (a) Fig. 14: µs per insert on scm-emu, with the paper's sequential values.
    ax = axes[0]
    names = [c for c in ("nonatomic", "softwrap", "softwrap-local", "undo") if rows(data, contender=c)]
    w = 0.8 / max(len(names), 1)
    first = True
    for i, c in enumerate(names):
        xs = [j + (i - (len(names) - 1) / 2) * w for j in range(len(orders))]
        ys = []
        for o in orders:
            r = rows(data, medium="scm-emu", order=o, contender=c)
            ys.append(num(r[0], "us_per_insert") if r else 0)
        ax.bar(xs, ys, w, color=COLORS_.get(c, "tab:gray"), label=c)
        pv = paper.BTREE["us"]["sequential"].get(c)
        if pv:
            ax.plot([xs[0]], [pv], **(PAPER_STYLE if first else dict(PAPER_STYLE, label=None)))
            first = False
    ax.set_xticks(range(len(orders)), orders)
    ax.set_ylabel("µs per insert")
    ax.set_title("scm-emu (Fig. 14)")
    ax.legend(fontsize=7)
    # (b) Fig. 13: random inserts/s on both media, PMDK's btree_map on x86.
    ax = axes[1]
    media = [m for m in MEDIA if rows(data, medium=m)]
    names = [c for c in ("nonatomic", "softwrap", "softwrap-local", "undo", "pmdk-btree_map") if rows(data, contender=c)]
    w = 0.8 / max(len(names), 1)
    for i, c in enumerate(names):
        xs, ys = [], []
        for j, m in enumerate(media):
            r = rows(data, medium=m, order="random", contender=c)
            if r:
                xs.append(j + (i - (len(names) - 1) / 2) * w)
                ys.append(num(r[0], "inserts_per_s"))
        ax.bar(xs, ys, w, color=COLORS_.get(c, "tab:gray"), label=c)
    ax.set_xticks(range(len(media)), media)
    ax.set_yscale("log")
    ax.set_ylabel("random inserts/s")
    ax.set_title("random keys (Fig. 13; the paper prints no numbers)")
    ax.legend(fontsize=7)
    # (c) SCM line writes per insert on scm-emu: streamed (log) and flushed (home).
    ax = axes[2]
    names = [c for c in ("nonatomic", "softwrap", "softwrap-local", "undo") if rows(data, contender=c)]
    w = 0.8 / max(len(names), 1)
    for i, c in enumerate(names):
        xs = [j + (i - (len(names) - 1) / 2) * w for j in range(len(orders))]
        st, fl = [], []
        for o in orders:
            r = rows(data, medium="scm-emu", order=o, contender=c)
            st.append(num(r[0], "streamed") if r else 0)
            fl.append(num(r[0], "flushed") if r else 0)
        ax.bar(xs, st, w, color=COLORS_.get(c, "tab:gray"), label=f"{c}: streamed (log)")
        ax.bar(xs, fl, w, bottom=st, color=COLORS_.get(c, "tab:gray"), alpha=0.45, hatch="//",
               label=f"{c}: flushed (home{', by retirement' if c == 'softwrap' else ''})")
    ax.plot([-0.3], [paper.BTREE["nonatomic_scm_writes"]], **dict(PAPER_STYLE, label="paper: nonatomic 5 SCM writes"))
    ax.set_xticks(range(len(orders)), orders)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.55)
    ax.set_ylabel("cache lines per insert (scm-emu)")
    ax.set_title("SCM line writes per insert")
    ax.legend(fontsize=6, ncol=2, loc="upper left")
    save(fig, d, "btree")


def fig16(d):
    data = read(os.path.join(d, "fig16.csv"))
    data = [r for r in data if r["tps"]]
    fig, axes = panels("Fig. 16: TPC-C on SQLite, throughput vs SCM write time Tw "
                       f"({data[0]['items'] if data else '?'} items, {data[0]['customers'] if data else '?'} "
                       f"customers/district, {data[0]['seconds'] if data else '?'} s per run)", 1, 9, 5.5)
    ax = axes[0]
    lines = [("softwrap", "softwrap", "softwrap VFS, softwrap", COLORS["softwrap"], "o"),
             ("softwrap", "undo", "softwrap VFS, undo", COLORS["undo"], "s"),
             ("softwrap", "nonatomic", "softwrap VFS, nonatomic", COLORS["nonatomic"], "^"),
             ("scm", "nonatomic", "scm VFS (journal in SCM)", "tab:orange", "D")]
    for vfs, eng, label, color, mk in lines:
        sel = sorted(rows(data, vfs=vfs, engine=eng, medium="scm-emu"), key=lambda r: num(r, "tw_ns"))
        if sel:
            ax.plot([num(r, "tw_ns") for r in sel], [num(r, "tps") for r in sel], marker=mk, color=color, label=label)
    flat = [(dict(vfs="softwrap", medium="x86"), "softwrap VFS on x86 (/dev/shm)", COLORS["softwrap"], "--"),
            (dict(vfs="unix", storage="shm", journal_mode="DELETE"), "stock SQLite /dev/shm, DELETE", "tab:gray", "--"),
            (dict(vfs="unix", storage="shm", journal_mode="WAL"), "stock SQLite /dev/shm, WAL", "tab:gray", ":"),
            (dict(vfs="unix", storage="disk", journal_mode="DELETE"), "stock SQLite disk, DELETE", "tab:brown", "--"),
            (dict(vfs="unix", storage="disk", journal_mode="WAL"), "stock SQLite disk, WAL", "tab:brown", ":")]
    for kw, label, color, ls in flat:
        sel = rows(data, **kw)
        if sel:
            if kw["vfs"] == "unix":
                label += f" ({sel[0]['dir']})" if kw["storage"] == "disk" else ""
            ax.axhline(num(sel[0], "tps"), color=color, linestyle=ls, linewidth=1.2,
                       label=f"{label}: {num(sel[0], 'tps'):,.0f}")
    ax.axhline(paper.FIG16["disk_tps_below"], color="black", linestyle=":", linewidth=0.8,
               label="paper: disk < 20 tps")
    tws = list(paper.FIG16["claim_tw_ns"])
    ax.plot(tws, [paper.FIG16["disk_tps_below"] * paper.FIG16["softwrap_over_disk"]] * len(tws),
            **dict(PAPER_STYLE, marker="^", label="paper: softwrap > 30x disk (> 600) at Tw 1, 2 µs"))
    ax.set_xlabel("Tw (ns), scm-emu")
    ax.set_ylabel("TPC-C transactions per second")
    ax.set_yscale("log")
    ax.legend(fontsize=7, loc="lower left")
    save(fig, d, "fig16")


def themis(d):
    """Fig. 3 (Ideal over undo, fences removed), Fig. 8 (stores per
    transaction), Fig. 10 (distance between removable fences) and Fig. 12
    (speedup vs transaction size): themis.png, themis_fig8.png,
    themis_fig10.png, themis_fig12.png."""
    f3 = read(os.path.join(d, "themis_fig3.csv"))
    wls = list(dict.fromkeys(r["workload"] for r in f3))
    t = paper.THEMIS
    fig, axes = plt.subplots(1, 3, figsize=(19, 4.6))
    fig.suptitle("Themis Fig. 3 on this machine: undo logging without its non-temporal -> temporal fences (Ideal)")
    w = 0.27
    for col, m in enumerate(MEDIA[::-1]):  # x86 first, as the paper's real-hardware figure
        ax = axes[col]
        for i, (th, key, how) in enumerate((("1", "ideal_speedup_cpu", "CPU time"),
                                            ("1", "ideal_speedup", "wall time"),
                                            ("2", "ideal_speedup", "wall time"))):
            sel = [one_row(f3, workload=x, medium=m, threads=th) for x in wls]
            ys = [num(r, key) if r else 0 for r in sel]
            lo = [y - num(r, key + "_min") if r else 0 for y, r in zip(ys, sel)]
            hi = [num(r, key + "_max") - y if r else 0 for y, r in zip(ys, sel)]
            ax.bar([j + (i - 1) * w for j in range(len(wls))], ys, w, yerr=[lo, hi], capsize=2,
                   label=f"{th} thread{'s' if th == '2' else ''}, {how} (median of rounds, min-max)")
        ax.axhline(1, color="gray", linewidth=0.6)
        ax.axhline(t["fig3_avg"], color="black", linestyle=":", label=f"paper average {t['fig3_avg']}x")
        ax.axhspan(t["fig3_min"], t["fig3_max"], color="black", alpha=0.06,
                   label=f"paper range {t['fig3_min']}-{t['fig3_max']}x")
        ax.set_xticks(range(len(wls)), [x.upper() for x in wls], fontsize=8)
        ax.set_ylabel("Ideal speedup over undo")
        ax.set_title(f"{m}")
        ax.legend(fontsize=7)
    ax = axes[2]
    sel = [one_row(f3, workload=x, medium="x86", threads="1") for x in wls]
    ax.bar(range(len(wls)), [100 * num(r, "removed_fraction") if r else 0 for r in sel], 0.5, color="tab:red",
           label="fences undo issues that Ideal removes (x86, 1 thread)")
    ax.axhline(100 * t["removed_avg"], color="black", linestyle=":", label=f"paper average {100 * t['removed_avg']}%")
    ax.set_xticks(range(len(wls)), [x.upper() for x in wls], fontsize=8)
    ax.set_ylabel("% of undo's fences")
    ax.set_ylim(0, 105)
    ax.set_title("fences removed")
    ax.legend(fontsize=7, loc="lower right")
    save(fig, d, "themis")

    f8 = read(os.path.join(d, "themis_fig8.csv"))
    fig, axes = panels("Themis Fig. 8: stores per transaction (our workloads, 8-byte words)", 1, 10, 4.4)
    ax = axes[0]
    data = []
    for x in wls:
        v = []
        for r in rows(f8, workload=x):
            v += [num(r, "stores")] * int(num(r, "transactions"))
        data.append(v or [0])
    ax.boxplot(data, whis=(0, 100), showmeans=True)
    ax.set_xticks(range(1, len(wls) + 1), [x.upper() for x in wls])
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("stores per transaction (whiskers: min, max; triangle: mean)")
    ax.axhline(t["fig8_sps_stores_over"], color="black", linestyle=":", linewidth=0.8,
               label="paper: SPS over a hundred, TATP one")
    ax.legend(fontsize=7)
    save(fig, d, "themis_fig8")

    f10 = read(os.path.join(d, "themis_fig10.csv"))
    fig, axes = panels("Themis Fig. 10: distance between consecutive removable fences (undo, x86, 1 thread), CDF", 2,
                       6.5, 4.4)
    for col, (unit, label) in enumerate((("cycles", "CPU cycles (rdtsc)"), ("events", "persistent-memory events"))):
        ax = axes[col]
        for x in wls:
            sel = sorted((r for r in rows(f10, workload=x) if num(r, unit) > 0), key=lambda r: num(r, "low"))
            tot = sum(num(r, unit) for r in sel)
            if not tot:
                continue
            acc, xs, ys = 0, [], []
            for r in sel:
                acc += num(r, unit)
                xs.append(max(num(r, "high"), 1) if num(r, "high") < 2 ** 63 else num(r, "low") * 2)
                ys.append(acc / tot)
            bold = x in t["fig10_shown"]
            ax.step(xs, ys, where="post", linewidth=2 if bold else 0.9, linestyle="-" if bold else "--",
                    label=x.upper() + (" (in the paper's Fig. 10)" if bold else ""))
        ax.set_xscale("log")
        ax.set_xlabel(f"distance in {label}")
        ax.set_ylabel("fraction of distances")
        ax.legend(fontsize=6)
    save(fig, d, "themis_fig10")

    if not os.path.exists(os.path.join(d, "themis_fig12.csv")):
        return
    f12 = read(os.path.join(d, "themis_fig12.csv"))
    fig, axes = panels("Themis Fig. 12 on this machine: Ideal's speedup over undo vs transaction size (1 thread)")
    for col, m in enumerate(MEDIA[::-1]):
        ax = axes[col]
        for x in dict.fromkeys(r["workload"] for r in f12):
            sel = sorted(rows(f12, workload=x, medium=m), key=lambda r: num(r, "tx_size"))
            xs = [num(r, "tx_size") for r in sel]
            ys = [num(r, "ideal_speedup_cpu") for r in sel]
            err = [[y - num(r, "ideal_speedup_cpu_min") for y, r in zip(ys, sel)],
                   [num(r, "ideal_speedup_cpu_max") - y for y, r in zip(ys, sel)]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=2, label=x.upper())
        ax.axhline(1, color="gray", linewidth=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("transaction size (SPS: swaps, PC: updates, LL: operations)")
        ax.set_ylabel("Ideal speedup over undo, CPU time (median of rounds, min-max)")
        ax.set_title(m)
        ax.legend(fontsize=7)
    save(fig, d, "themis_fig12")


def one_row(data, **kw):
    sel = rows(data, **kw)
    return sel[0] if sel else None


def themis_sim(d):
    f9 = read(os.path.join(d, "fig9.csv"))
    f11 = read(os.path.join(d, "fig11.csv"))
    f12 = read(os.path.join(d, "fig12.csv"))
    tw = read(os.path.join(d, "tail_width.csv"))
    sens_path = os.path.join(d, "sensitivity.csv")
    sens = read(sens_path) if os.path.exists(sens_path) else []
    p = paper.THEMIS
    fig, axes = plt.subplots(1, 5, figsize=(30, 4.8))
    fig.suptitle("Themis and themis-mc (ours: the order kept at the PM controller) on the simulated machine "
                 "(Table I): Figs. 9, 11, 12, section V-E and the latency sensitivity")
    # Fig. 9: speedup over Baseline.
    ax = axes[0]
    names = [r["label"] for r in f9] + ["mean"]
    th = [num(r, "themis_speedup") for r in f9]
    mc = [num(r, "mc_speedup") for r in f9]
    idl = [num(r, "ideal_speedup") for r in f9]
    for v in (th, mc, idl):
        v.append(sum(v) / len(v))
    xs = range(len(names))
    ax.bar([x - 0.27 for x in xs], th, 0.27, color="tab:green", label="Themis")
    ax.bar(list(xs), mc, 0.27, color="tab:blue", label="themis-mc")
    ax.bar([x + 0.27 for x in xs], idl, 0.27, color="tab:gray", label="Ideal")
    for i, r in enumerate(f9):
        if r["workload"] in p["fig9_best"]:
            ax.plot([i, i], p["fig9_best_range"], color="black", linewidth=2)
        if r["workload"] in p["fig9_worst"]:
            ax.plot([i, i], p["fig9_worst_range"], color="black", linewidth=2)
    ax.plot([len(f9)], [p["fig9_avg"]], **dict(PAPER_STYLE, label="paper: Themis (ranges as stated)"))
    ax.axhline(1, color="gray", linewidth=0.6)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=45)
    ax.set_ylabel("speedup over Baseline")
    ax.set_title("Fig. 9")
    ax.legend(fontsize=7)
    # Fig. 11: how long writebacks waited in the WBB (Themis).
    ax = axes[1]
    edges = [0, 1, 21, 41, 61, 81, 101, 121, 10**9]
    labels = ["0", "1-20", "21-40", "41-60", "61-80", "81-100", "101-120", ">120"]
    bottoms = [0.0] * len(f9)
    for b in range(len(labels)):
        fr = []
        for r in f9:
            rs = [x for x in rows(f11, workload=r["workload"])
                  if x.get("design", "themis") == "themis" and x.get("setting", "default") == "default"]
            tot = sum(num(x, "writebacks") for x in rs) or 1
            n = sum(num(x, "writebacks") for x in rs if edges[b] <= num(x, "wait_from") < edges[b + 1])
            fr.append(100 * n / tot)
        ax.bar(range(len(f9)), fr, bottom=bottoms, label=labels[b])
        bottoms = [a + c for a, c in zip(bottoms, fr)]
    ax.set_xticks(range(len(f9)))
    ax.set_xticklabels([r["label"] for r in f9], rotation=45)
    ax.set_ylabel("% of writebacks")
    ax.set_title(f"Fig. 11: cycles waited in Themis' WBB\n(paper: at most ~{p['fig11_max_wait_cycles']}; "
                 "themis-mc's WBB never waits)")
    ax.legend(fontsize=6, title="cycles", title_fontsize=7)
    # Fig. 12: speedup against stores per transaction.
    ax = axes[2]
    for wl in sorted({r["workload"] for r in f12}):
        xs2, ys = series(f12, "stores_per_tx", "themis_speedup", workload=wl)
        ax.plot(xs2, ys, marker="o", label=f"{wl} Themis")
        color = ax.lines[-1].get_color()
        if f12 and "mc_speedup" in f12[0]:
            xs2, ys = series(f12, "stores_per_tx", "mc_speedup", workload=wl)
            ax.plot(xs2, ys, marker="x", linestyle="--", color=color, label=f"{wl} themis-mc")
        xs2, ys = series(f12, "stores_per_tx", "ideal_speedup", workload=wl)
        ax.plot(xs2, ys, linestyle=":", color=color, label=f"{wl} Ideal")
    ax.set_xscale("log")
    ax.set_xlabel("stores per transaction")
    ax.set_ylabel("speedup over Baseline")
    ax.set_title("Fig. 12")
    ax.legend(fontsize=7)
    # Section V-E: tail pointer width.
    ax = axes[3]
    for i, bits in enumerate((4, 6, 8, 10)):
        ys = [num(one, "speedup") for r in f9 for one in rows(tw, workload=r["workload"], bits=str(bits))]
        ax.bar([x + (i - 1.5) * 0.2 for x in range(len(f9))], ys, 0.2,
               label=f"{bits}-bit ({p['ve_tail_kb'][bits]} KB)")
    ax.axhline(1, color="gray", linewidth=0.6)
    ax.set_xticks(range(len(f9)))
    ax.set_xticklabels([r["label"] for r in f9], rotation=45)
    ax.set_ylabel("Themis speedup over Baseline")
    ax.set_title("Section V-E: tail pointer width")
    ax.legend(fontsize=7)
    # Sensitivity: the largest gap to Ideal over the workloads against the
    # latency of the WCB's path (both ways, and the way there alone).
    ax = axes[4]
    default_gap = {"themis": max(num(r, "themis_vs_ideal_pct") for r in f9),
                   "mc": max(num(r, "mc_vs_ideal_pct") for r in f9)}
    for knob, style, what in (("each_way_ns", "-", "each way (ACK too)"), ("wcb_to_pm_ns", "--", "WCB to controller")):
        rs = [r for r in sens if r["knob"] == knob]
        if not rs:
            continue
        vals = sorted({num(r, "value") for r in rs} | {20.0})
        for key, color, name in (("themis", "tab:green", "Themis"), ("mc", "tab:blue", "themis-mc")):
            ys = []
            for v in vals:
                if v == 20.0:
                    ys.append(default_gap[key])
                else:
                    ys.append(max(num(r, f"{key}_vs_ideal_pct") for r in rs if num(r, "value") == v))
            ax.plot(vals, ys, marker="o", linestyle=style, color=color, label=f"{name}, {what}")
    ax.axhline(5, color="red", linewidth=0.8, linestyle=":", label="5 %")
    ax.set_xlabel("latency (ns)")
    ax.set_ylabel("worst workload: cycles over Ideal (%)")
    ax.set_title("Sensitivity: the non-temporal path's latency")
    ax.legend(fontsize=7)
    save(fig, d, "themis-sim")


def wcl(d):
    """The WCL paper: Fig. 2 (modification ratios), the writes of Figs.
    6/7/11 (log and NVRAM words per transaction without and with WCL,
    softwrap), the runtimes of Figs. 8/9 (speedup with WCL on scm-emu,
    Tw = 600 ns) and the software overhead of Fig. 12 (x86): wcl.png;
    TPC-C and the B+tree in wcl_apps.png."""
    f2 = read(os.path.join(d, "wcl_fig2.csv"))
    sv = rows(read(os.path.join(d, "wcl_saving.csv")), engine="softwrap")
    tm = read(os.path.join(d, "wcl_time.csv"))
    if f2:
        fig, axes = panels("Write-combined logging (WCL paper Figs. 2, 6/7/11, 8/9, 12)", n=4, width=4.6)
        names = [r["workload"] for r in f2]
        x = range(len(names))
        un = [num(r, "unmodified") * 100 for r in f2]
        half = [num(r, "half") * 100 for r in f2]
        other = [num(r, "other") * 100 for r in f2]
        ax = axes[0]
        ax.bar(x, un, label="unmodified", color="tab:green")
        ax.bar(x, half, bottom=un, label="half", color="tab:olive")
        ax.bar(x, other, bottom=[a + b for a, b in zip(un, half)], label="other", color="tab:gray")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=60, fontsize=7)
        ax.set_ylabel("% of words stored")
        ax.set_title("Fig. 2: modification ratio")
        ax.legend(fontsize=7)
        ax = axes[1]
        ws = [r["workload"] for r in sv]
        xs = range(len(ws))
        ax.bar([i - 0.2 for i in xs], [num(r, "nvram_words_off") for r in sv], 0.4, label="without WCL",
               color="tab:red")
        ax.bar([i + 0.2 for i in xs], [num(r, "nvram_words_on") for r in sv], 0.4, label="with WCL",
               color="tab:green")
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(ws, rotation=60, fontsize=7)
        ax.set_ylabel("NVRAM words per transaction (log + home)")
        ax.set_title("Figs. 6/7/11: NVRAM writes (softwrap)")
        ax.legend(fontsize=7)
        for i, (med, title) in enumerate([("scm-emu", "Figs. 8/9: scm-emu, Tw = 600 ns"),
                                          ("x86", "Fig. 12: x86 (the compare's cost)")]):
            ax = axes[2 + i]
            for k, eng in enumerate(["softwrap", "softwrap-local", "undo"]):
                rs = rows(tm, medium=med, engine=eng)
                if not rs:
                    continue
                xs = [ws.index(r["workload"]) + (k - 1) * 0.27 for r in rs if r["workload"] in ws]
                ys = [num(r, "speedup") for r in rs if r["workload"] in ws]
                lo = [num(r, "speedup") - num(r, "speedup_min") for r in rs if r["workload"] in ws]
                hi = [num(r, "speedup_max") - num(r, "speedup") for r in rs if r["workload"] in ws]
                ax.bar(xs, ys, 0.27, yerr=[lo, hi], label=eng, color=COLORS.get(eng, "tab:gray"), capsize=2)
            ax.axhline(1.0, color="black", linewidth=0.8)
            if med == "scm-emu":
                ax.axhline(1.05, color="black", linestyle=":", linewidth=0.8, label="bar (write-heavy): 1.05")
            else:
                ax.axhline(0.98, color="black", linestyle=":", linewidth=0.8, label="bar: 0.98")
            ax.set_xticks(list(range(len(ws))))
            ax.set_xticklabels(ws, rotation=60, fontsize=7)
            ax.set_ylabel("speedup with WCL (median of rounds)")
            ax.set_title(title)
            ax.legend(fontsize=6)
        save(fig, d, "wcl")
    tp = read(os.path.join(d, "wcl_tpcc.csv")) if os.path.exists(os.path.join(d, "wcl_tpcc.csv")) else []
    bt = read(os.path.join(d, "wcl_btree.csv")) if os.path.exists(os.path.join(d, "wcl_btree.csv")) else []
    if tp or bt:
        fig, axes = panels("WCL on the applications: TPC-C on SQLite, B+tree inserts", n=2)
        ax = axes[0]
        for k, med in enumerate(MEDIA):
            for w in ("0", "1"):
                rs = rows(tp, medium=med, wcl=w)
                if rs:
                    ys = sorted(num(r, "tps") for r in rs)
                    ax.bar(k * 3 + int(w), ys[len(ys) // 2], color="tab:green" if w == "1" else "tab:red",
                           label=("with WCL" if w == "1" else "without") if k == 0 else None)
        ax.set_xticks([0.5, 3.5])
        ax.set_xticklabels(MEDIA)
        ax.set_ylabel("TPC-C transactions/s (softwrap VFS)")
        ax.set_title("TPC-C: wcl=0 vs wcl=1")
        ax.legend(fontsize=7)
        ax = axes[1]
        labels = []
        for r in bt:
            labels.append(f"{r['medium']}\n{r['contender']}")
        ax.bar(range(len(bt)), [num(r, "us_per_insert") for r in bt],
               color=["tab:green" if "wcl=1" in r["contender"] else "tab:red" for r in bt])
        ax.set_xticks(list(range(len(bt))))
        ax.set_xticklabels(labels, rotation=70, fontsize=6)
        ax.set_ylabel("µs per random insert")
        ax.set_title("B+tree inserts (green: with WCL)")
        save(fig, d, "wcl_apps")


def limit(d):
    """`softwrap bench limit`: each workload's time per transaction over the
    limit's (plain volatile memory) for PMDK and every engine (log scale;
    error bars: the rounds' min and max), and the micro-benchmark's
    sw_load64 over a plain load: limit.png."""
    path = os.path.join(d, "limit.csv")
    lp = os.path.join(d, "limit_loads.csv")
    if not os.path.exists(path) and not os.path.exists(lp):
        return
    wd = read(path) if os.path.exists(path) else []
    ld = read(lp) if os.path.exists(lp) else []
    fig, axes = plt.subplots(1, 2, figsize=(19, 5.2), gridspec_kw={"width_ratios": [2.6, 1]}, squeeze=False)
    fig.suptitle("The limit: time over plain volatile memory (one thread, x86, medians of alternated rounds)")
    ax = axes[0][0]
    names = []
    for r in wd:
        if r["workload"] not in names:
            names.append(r["workload"])
    contenders = [c for c in ("pmdk", "softwrap", "softwrap-local", "undo", "undo-themis", "nonatomic")
                  if any(r["access"] == c for r in wd)]
    colors = dict(COLORS, **{"undo-themis": "tab:orange"})
    w = 0.8 / max(1, len(contenders))
    for i, c in enumerate(contenders):
        xs, ys, lo, hi = [], [], [], []
        for j, name in enumerate(names):
            sel = rows(wd, workload=name, access=c)
            if not sel:
                continue
            xs.append(j + (i - (len(contenders) - 1) / 2) * w)
            ys.append(num(sel[0], "vs_limit"))
            lo.append(ys[-1] - num(sel[0], "vs_limit_min"))
            hi.append(num(sel[0], "vs_limit_max") - ys[-1])
        ax.bar(xs, ys, w, yerr=[lo, hi], capsize=1.5, error_kw=dict(linewidth=0.6), color=colors.get(c, "tab:gray"),
               label=c)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.axhline(1.5, color="black", linestyle=":", linewidth=0.8, label="bar for softwrap, read-heavy: 1.5x")
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, fontsize=8)
    ax.set_ylabel("time per transaction / the limit's")
    ax.set_title("Workloads")
    ax.legend(fontsize=7, ncol=2)
    ax = axes[0][1]
    if ld:
        sizes = sorted({int(float(r["array_mib"])) for r in ld})
        variants = [("load", "outside wraps", ""), ("load_ro_wrap", "read-only wraps", "//"),
                    ("load_store_wrap", "wraps that store (softwrap)", "xx")]
        engines = [e for e in ("softwrap", "softwrap-local", "undo", "undo-themis", "nonatomic")
                   if any(r["engine"] == e for r in ld)]
        slots = [(e, v) for e in engines for v in variants if rows(ld, engine=e, variant=v[0])]
        w = 0.8 / max(1, len(slots))
        for k, size in enumerate(sizes):
            for i, (e, (v, label, hatch)) in enumerate(slots):
                sel = rows(ld, engine=e, variant=v, array_mib=str(size))
                if not sel:
                    continue
                y = num(sel[0], "vs_plain")
                ax.bar(k + (i - (len(slots) - 1) / 2) * w, y, w, color=colors.get(e, "tab:gray"), hatch=hatch,
                       edgecolor="white")
            bar = 1.5 if k == 0 else 1.1
            ax.plot([k - 0.45, k + 0.45], [bar, bar], color="black", linestyle=":", linewidth=1)
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([f"{s} MiB array" for s in sizes])
        ax.set_ylabel("sw_load64 / a plain load (ns per load)")
        ax.set_title("Random 8-byte loads (dotted: the bars)")
        handles = [Patch(color=colors.get(e, "tab:gray"), label=e) for e in engines]
        handles += [Patch(facecolor="tab:gray", hatch=h, edgecolor="white", label=label) for _, label, h in variants]
        ax.legend(handles=handles, fontsize=6, ncol=2, loc="upper left")
    save(fig, d, "limit")


def eadr(d):
    """`softwrap bench eadr`: each workload's time per transaction over
    PMDK's with PMEM_NO_FLUSH=1, for every engine in the x86 medium's
    cpu-cache form and the other forms of softwrap and undo (log scale;
    error bars: the rounds' min and max): eadr.png."""
    path = os.path.join(d, "limit.csv")
    if not os.path.exists(path):
        return
    wd = read(path)
    names = []
    for r in wd:
        if r["workload"] not in names:
            names.append(r["workload"])
    contenders = [c for c in ("softwrap", "softwrap/nt", "softwrap-local", "undo", "undo/nt", "undo/fenced",
                              "undo-themis", "nonatomic") if any(r["access"] == c for r in wd)]
    if not any(r.get("vs_pmdk") for r in wd):
        return
    fig, ax = plt.subplots(figsize=(19, 5.2))
    fig.suptitle("A platform whose caches persist (eADR, CXL): cpu-cache form vs PMDK with PMEM_NO_FLUSH=1 "
                 "(one thread, x86, medians of alternated rounds)")
    w = 0.8 / max(1, len(contenders))
    cmap = plt.get_cmap("tab10")
    for i, c in enumerate(contenders):
        xs, ys, lo, hi = [], [], [], []
        for j, name in enumerate(names):
            sel = rows(wd, workload=name, access=c)
            if not sel or not sel[0].get("vs_pmdk"):
                continue
            y = num(sel[0], "vs_pmdk")
            xs.append(j + (i - (len(contenders) - 1) / 2) * w)
            ys.append(y)
            lo.append(y - num(sel[0], "vs_pmdk_min"))
            hi.append(num(sel[0], "vs_pmdk_max") - y)
        ax.bar(xs, ys, w, yerr=[lo, hi], color=COLORS.get(c, cmap(i % 10)), capsize=1.5, label=c,
               hatch="//" if "/" in c else None, edgecolor="white")
    ax.axhline(1, color="black", linewidth=0.8, label="PMDK, PMEM_NO_FLUSH=1")
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, fontsize=8)
    ax.set_ylabel("time per transaction / PMDK's")
    ax.legend(fontsize=7, ncol=3)
    save(fig, d, "eadr")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py RESULTS/<experiment>")
    d = sys.argv[1].rstrip("/")
    name = os.path.basename(d)
    fn = globals().get(name.replace("-", "_"))
    if fn is None:
        sys.exit(f"plot.py: no plot for '{name}'")
    fn(d)


if __name__ == "__main__":
    main()
