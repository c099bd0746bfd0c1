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

# Section V-D (Figs. 13 and 14): 1M single-element inserts into the STX
# B+tree, alias tables of at most 4K entries, Tw = 1 µs.  Fig. 13 (random
# throughput) and Fig. 14 (µs per insert) are images; the numbers below are
# the text's.
BTREE = {
    "n": 1000000,             # "we perform 1M transactions of one element inserts"
    "alias_entries": 4096,    # "alias table size of max 4k entries" (captions)
    "tw_ns": 1000,
    # "In our Sequential experiment, 1M inserts requires 61.6M reads and 8.1M writes"
    "reads": {"sequential": 61.6, "random": 74.8},  # random: "74.8M reads and 20M writes"
    "writes": {"sequential": 8.1, "random": 20.0},
    # µs per sequential insert: "Non-Atomic averages 7.4µs", Undo Log "the
    # measured 24.4µs", SoftWrAP "the measured 7.8µs".  No numbers for random:
    # "similar expected times that match the measured experiments".
    "us": {"sequential": {"nonatomic": 7.4, "softwrap": 7.8, "undo": 24.4}},
    # The text's model for sequential inserts: write combining of 56 % leaves
    # 5 SCM writes for Non-Atomic, 5,220 ns by Table I, plus 2.2 µs of reads and
    # traversal; Undo 19 Tw + (n + 1) Ts = 21.3 µs (+ 2.2 = 23.5); SoftWrAP
    # 4.8 µs for the writes plus 62 alias-table reads at ≈ 44 ns.
    "nonatomic_scm_writes": 5,
    "nonatomic_table1_ns": 5220,
    "traversal_us": 2.2,
    "undo_model_us": 23.5,
    "softwrap_writes_us": 4.8,
    "softwrap_read_ns": 44,
    # "SoftWrAP outperforms Undo Log and remains close to Non-Atomic even
    # with heavy read-intensive workloads."
}

# Section V-E (Fig. 16): TPC-C (py-tpcc's SQL) on SQLite, throughput vs Tw.
FIG16 = {
    # "SoftWrAP performs almost as fast as a Non-Atomic implementation that
    # doesn't observe consistency."
    # "Execution on disk based media only resulted in less than 20
    # transactions per second, and SoftWrAP is over 30 times that performance
    # at 1 and 2 µs SCM write times."
    "disk_tps_below": 20,
    "softwrap_over_disk": 30,
    "claim_tw_ns": (1000, 2000),
}

# The Themis paper (Shahri, Vakil Ghahani, Kolli: "(Almost) Fence-less
# Persist Ordering"): the numbers its text states.  Its figures are images.
THEMIS = {
    # Section II-D (Fig. 3, real x86: c6420 Xeon servers on CloudLab):
    # "The improvement in performance ranges from 1.09x upto 2.68x, with an
    # average improvement of 1.67x.  These performance improvements are a
    # result of eliminating 91.7% of sfence instructions on average."
    "fig3_min": 1.09,
    "fig3_max": 2.68,
    "fig3_avg": 1.67,
    "removed_avg": 0.917,
    # Section V-B (Fig. 9, gem5, Themis over Baseline): "as much as 87% (for
    # PC) and by 45.8% on average"; "SPS, PC, and LL are the three best
    # performing workloads with performance improvements ranging from 77.4%
    # to 87%"; "RB, TATP, and TPCC are the three worst performing workloads
    # with performance improvements ranging from 12.8% to 20.6%."
    "fig9_avg": 1.458,
    "fig9_best": ("sps", "pc", "ll"),
    "fig9_best_range": (1.774, 1.87),
    "fig9_worst": ("rb", "tatp", "tpcc"),
    "fig9_worst_range": (1.128, 1.206),
    # Section V-A (Fig. 8): "The smallest transactions have only one store
    # within them (e.g., TATP's update location transaction) while the
    # larger transactions can have over hundred stores within them (e.g., SPS)."
    "fig8_tatp_stores": 1,
    "fig8_sps_stores_over": 100,
    # Section V-C (Fig. 10): "the best performing workloads see that an
    # overwhelming majority of consecutive removable fence instructions have
    # only about 200 instructions between them"; TATP and TPCC "skew much
    # higher".
    "fig10_best_instructions": 200,
    "fig10_shown": ("sps", "pc", "tatp", "tpcc"),
    # Section V-B: "Themis improves performance by as much as 87% (for PC)".
    "fig9_max": 1.87,
    # Section V-D (Fig. 11): "Writebacks in LL and TATP see the longest
    # delays (about 38 cycles), while CQ and TPCC see the shortest delays."
    "fig11_max_wait_cycles": 38,
    # Section V-E: "0.5KB (4-bit tail pointer), 0.75KB (6-bit), 1KB (8-bit),
    # and 1.25KB (10-bit). And found very little performance variation".
    "ve_tail_kb": {4: 0.5, 6: 0.75, 8: 1.0, 10: 1.25},
}

# The write-combined logging paper (Ye, Wang, Wang, Luo): what its text and
# tables state.
WCL = {
    # Section 5.1: NVRAM write latency of its emulation.
    "tw_ns": 600,
    # Table 5: total NVRAM writes, BSL and WCL, small problem scale ("-").
    "table5": {
        "genome": (3251313, 2175511),
        "intruder": (56129379, 33188986),
        "kmeans": (36044910, 34843101),
        "labyrinth": (136002, 90668),
        "ssca2": (33344904, 22229910),
        "vacation": (19708551, 12316239),
    },
    # Table 6: STMBench7, BSL and WCL (Un 0, Half = BSL - WCL).
    "table6": {
        "stmb7-s": (915573, 609386),
        "stmb7-m": (3634074, 2422277),
        "stmb7-b": (5803089, 3860895),
    },
    # Abstract / section 6: "reduce 33% of writes and improve performance by
    # 11% in STAMP and reduce 34% NVRAM writes and improve performance by 7%
    # in STMBench7".
    "stamp_reduction_pct": 33,
    "stamp_speedup_pct": 11,
    "stm_reduction_pct": 34,
    "stm_speedup_pct": 7,
}
