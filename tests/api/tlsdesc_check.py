#!/usr/bin/python3
"""tlsdesc_check.py LIB — no vector register is live across a TLS descriptor call.

libsoftwrap.so is built with TLS descriptors (-mtls-dialect=gnu2).  A
descriptor call preserves every register except %rax, so the compiler may
keep values in any other register across it; glibc before the fix of its
bug 31372 clobbered the vector registers on the slow path of a
dynamically loaded module's descriptor (docs/design.md, "Thread-locals in
the shared library").  This check disassembles LIB (objdump) and, after
each descriptor call (`lea X(%rip),%rax` then `call *(%rax)`), follows the
straight-line code up to the next call, return or jump: a vector register
read there before it is written means a value was live across the call,
and the check fails naming the function.  It prints how many calls it
checked and fails if it found none (the build stopped using descriptors,
or the pattern changed: then this check must be revisited).
"""
import re
import subprocess
import sys

INS = re.compile(r"^\s*[0-9a-f]+:\t(\S+)\s*(.*)$")
VEC = re.compile(r"%([xyz]mm\d+)")
# Instructions that write their last operand without reading it.
PURE_WRITES = {
    "movq", "movd", "movdqu", "movdqa", "movups", "movaps", "movupd", "movapd", "movsd", "movss",
    "vmovdqu", "vmovdqa", "vmovdqu64", "vmovdqa64", "vmovq", "vmovd", "vmovups", "vmovaps",
    "cvtsi2sd", "cvtsi2sdq", "cvtsi2ss", "cvtsi2ssq", "pxor", "vpxor", "xorps", "vxorps", "xorpd",
}


def ins(line):
    m = INS.match(line)
    return (m.group(1), m.group(2)) if m else (None, None)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", sys.argv[1]], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    calls, bad, fn = 0, [], None
    for i, line in enumerate(dis):
        if line.endswith(">:"):
            fn = line
            continue
        op, args = ins(line)
        if op != "call" or not args.startswith("*(%rax)"):
            continue
        pop, pargs = ins(dis[i - 1])
        if pop != "lea" or "(%rip),%rax" not in pargs:
            continue
        calls += 1
        written = set()
        for nxt in dis[i + 1:i + 200]:
            if nxt.endswith(">:") or not nxt.strip():
                break
            op2, a2 = ins(nxt)
            if not op2:
                continue
            if op2.startswith(("ret", "call", "jmp")):
                break
            regs = VEC.findall(a2)
            if not regs:
                continue
            parts = a2.split(",")
            dst = set(VEC.findall(parts[-1]))
            srcs = set(VEC.findall(",".join(parts[:-1])))
            zeroing = op2 in ("pxor", "vpxor", "xorps", "vxorps", "xorpd") and len(set(regs)) == 1
            if not zeroing:
                reads = srcs if op2 in PURE_WRITES else srcs | dst
                for r in reads - written:
                    bad.append(f"{fn} {r} live across a descriptor call: {nxt.strip()}")
            written |= dst
    for b in bad:
        print("FAIL:", b)
    print(f"{calls} TLS descriptor calls checked, {len(bad)} with a vector register live across them")
    return 1 if bad or calls == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
