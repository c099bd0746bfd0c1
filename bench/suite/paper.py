"""paper.py — the numbers the SoftWrAP papers give for their evaluation.

Approach: the full paper (MSST 2015) prints exact numbers only in Table II
and in its text; its figures are images without data.  Each entry below is
either an exact value (Table II) or a value stated in the text, with the
sentence it comes from, so plot.py and make_results.py can draw and quote
them.  Nothing here is read off a figure by eye.
"""

TW, TS, T_ALIAS = 1000.0, 220.0, 450.0

# Table II: n -> (estimated ns, measured ns)
TABLE2 = {
    "nonatomic": {10: (10220, 10226), 15: (15220, 15223), 20: (20220, 20251)},
    "undo": {10: (25430, 25653), 15: (37530, 37198), 20: (48630, 48701)},
    "softwrap": {10: (5720, 6043), 15: (7970, 7956), 20: (10220, 11049)},
}

# Fig. 5 / Table I: per-wrap pcommits and SCM writes (the paper's formulas).
def table1_counts(engine, n):
    import math
    lines = math.ceil(12 * n / 64)
    if engine == "nonatomic":
        return 1, n
    if engine == "undo":
        return n + 1, 2 * n + 1 + lines
    return 1, 1 + lines


def table1_time(engine, n, tw=TW, ts=TS, t_alias=T_ALIAS):
    import math
    if engine == "nonatomic":
        return n * tw + ts
    if engine == "undo":
        return n * (2 * tw + ts) + math.ceil(12 * n / 64 + 1) * tw + ts
    return tw + max(n * t_alias, math.ceil(12 * n / 64) * tw) + ts


# Text of section V-B.1 (Fig. 4): steady average nstore time.
FIG4 = {
    ("DRAM", "random"): 100,    # "becomes steady at about 100ns for DRAM"
    ("scm-emu", "random"): 1000,  # "as predicted, to the delay Tw = 1000ns"
    "sequential_factor": 16,      # "increasing the data ... by a factor of 16"
}

# Section V-C.1 (Fig. 6).
FIG6 = {
    "nonatomic_low_rate_resp_ns": 10000,  # "slightly more than 10us"
    "undo_vs_nonatomic": 2.0,              # "more than double the response time"
    "max_tput": {"nonatomic": 100000, "softwrap": 100000, "undo": 39000},
    # "maximum throughput of both Undo Log [sic: Non-Atomic] and SoftWrAP is
    # slightly less than 100,000"; "Undo Log is only about 39,000"
}

# Section V-C.2 (Figs. 7, 8).
FIG7 = {"good_range_log2": (13, 20)}  # falls at <= 2^12 and > 2^20 entries
FIG8 = {"switch_period_us": 1000}      # "fills a table of threshold 500 every 1ms"

# Section V-C.3 (Fig. 9): 6-core CPU; performance drops past the cores.
FIG9 = {"cores": 6}

# Section V-C.4 (Fig. 10, 11).
FIG10 = {"crossover_tw_ns": 600, "crossover_ns": 6220, "softwrap_at_1500_ns": 6640}
FIG11 = {"softwrap_matches_nonatomic_from_n": 2}

# Section V-C.5 (Fig. 12): throughput grows in proportion to reuse for
# SoftWrAP; equal to Non-Atomic at 0 %; Undo and Non-Atomic flat.

# Workshop paper, section 3.5 (its Figs. 6 and 8).
WORKSHOP = {
    "array_template_speedup": 2.0,      # "almost a 2x speedup over an UndoLog"
    "consecutive_600_speedup": 3.0,     # "a speedup of over 3 can be obtained"
}
