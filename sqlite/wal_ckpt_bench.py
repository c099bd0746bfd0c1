"""wal_ckpt_bench.py — a WAL writer beside a checkpointer in another process.

usage: /usr/bin/python3 sqlite/wal_ckpt_bench.py BUILD_DIR [--seconds S (3)] [--modes PASSIVE,FULL,...]

One process commits small transactions (BEGIN IMMEDIATE, one 200-byte row,
COMMIT, 0.2 ms apart, busy timeout 10 s) on a WAL database in /dev/shm;
another runs PRAGMA wal_checkpoint(MODE) back to back (5 ms apart) and
times each.  For stock SQLite (the unix VFS) and the softwrap VFS, side by
side, per mode: the writer's commits/s alone and beside the checkpointer,
its "database is locked" errors, and the checkpoints' median and p90
latency.  Stock's documentation says FULL, RESTART and TRUNCATE block new
writers while they run; PASSIVE never does.  Prints the ratio
softwrap/stock of the writer's rate beside each mode.  No bar: a
measurement (docs/results.md, "WAL mode").  Python's sqlite3 module loads
the softwrap extension (BUILD_DIR/sqlite/swsqlite.so).
"""
import multiprocessing as mp
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time


def connect(module, uri):
    c = sqlite3.connect(":memory:")
    c.enable_load_extension(True)
    c.load_extension(module)
    c.close()
    return sqlite3.connect(uri, uri=True, timeout=10.0, isolation_level=None)


def writer(module, uri, stop, out):
    cx = connect(module, uri)
    n = busy = 0
    t0 = time.time()
    while not stop.is_set():
        try:
            cx.execute("BEGIN IMMEDIATE")
            cx.execute("INSERT INTO t VALUES(randomblob(200))")
            cx.execute("COMMIT")
            n += 1
        except sqlite3.OperationalError:
            busy += 1
            if cx.in_transaction:
                cx.execute("ROLLBACK")
        time.sleep(0.0002)
    out.put((n / (time.time() - t0), busy))
    cx.close()


def checkpointer(module, uri, mode, stop, out):
    cx = connect(module, uri)
    lat = []
    while not stop.is_set():
        t = time.perf_counter()
        cx.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        lat.append(time.perf_counter() - t)
        time.sleep(0.005)
    out.put(lat)
    cx.close()


def run(module, uri, mode, seconds):
    """(writer rate, busy errors, checkpoint latencies or None)"""
    stop, q1, q2 = mp.Event(), mp.Queue(), mp.Queue()
    procs = [mp.Process(target=writer, args=(module, uri, stop, q1))]
    if mode:
        procs.append(mp.Process(target=checkpointer, args=(module, uri, mode, stop, q2)))
    for p in procs:
        p.start()
    time.sleep(seconds)
    stop.set()
    rate, busy = q1.get()
    lat = sorted(q2.get()) if mode else None
    for p in procs:
        p.join()
    return rate, busy, lat


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build, seconds, modes = args[0], 3.0, ["PASSIVE", "FULL", "RESTART", "TRUNCATE"]
    i = 1
    while i < len(args):
        if args[i] == "--seconds" and i + 1 < len(args):
            seconds = float(args[i + 1])
        elif args[i] == "--modes" and i + 1 < len(args):
            modes = args[i + 1].split(",")
        else:
            print(f"wal_ckpt_bench: unknown argument {args[i]}", file=sys.stderr)
            return 2
        i += 2
    module = os.path.join(build, "sqlite", "swsqlite")
    if not os.path.exists(module + ".so"):
        print(f"wal_ckpt_bench: {module}.so is missing (build the swsqlite target)", file=sys.stderr)
        return 1
    os.environ.setdefault("SOFTWRAP_MEDIUM", "x86")
    top = tempfile.mkdtemp(prefix="sw_wal_ckpt.", dir="/dev/shm")
    rows = {}
    try:
        for vfs in ("unix", "softwrap"):
            for mode in modes:
                d = os.path.join(top, f"{vfs}-{mode}")
                os.mkdir(d)
                uri = f"file:{d}/c.db?vfs={vfs}"
                cx = connect(module, uri)
                assert cx.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
                cx.execute("CREATE TABLE t(x)")
                cx.close()
                alone = run(module, uri, None, seconds)
                beside = run(module, uri, mode, seconds)
                rows[(vfs, mode)] = (alone, beside)
                lat = beside[2]
                print(f"wal_ckpt_bench: {vfs} {mode}: writer {alone[0]:.0f}/s alone, {beside[0]:.0f}/s beside, "
                      f"{len(lat)} checkpoints", file=sys.stderr)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    print(f"A WAL writer beside back-to-back checkpoints in another process, /dev/shm, {seconds:g} s each")
    print()
    print("| mode | VFS | writer commits/s alone | beside the checkpointer | 'database is locked' "
          "| checkpoints | median ms | p90 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in modes:
        for vfs in ("unix", "softwrap"):
            (ra, _, _), (rb, busy, lat) = rows[(vfs, mode)]
            med = 1000 * statistics.median(lat) if lat else 0.0
            p90 = 1000 * lat[len(lat) * 9 // 10] if lat else 0.0
            print(f"| {mode} | {vfs} | {ra:.0f} | {rb:.0f} | {busy} | {len(lat)} | {med:.1f} | {p90:.1f} |")
    print()
    for mode in modes:
        s, u = rows[("softwrap", mode)][1][0], rows[("unix", mode)][1][0]
        print(f"ratio {mode}: softwrap/stock writer commits/s beside the checkpointer {s / u if u else 0:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
