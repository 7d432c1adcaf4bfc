"""The key-tile loop of each attention kernel in a cuobjdump -sass listing.

For every kernel whose name contains `attention`, the loop is the backward
branch (the latch) whose span [target, branch] holds the tensor-core
products (HGMMA or HMMA) and no EXIT, the widest such span. (Slow paths
that ptxas places after the function's code branch back into it: their
spans hold the EXIT that ends the code.) Prints, per kernel:

  <kernel> loop <instructions> mufu <n> f2i <n> ldg <n> ldgsts <n> hgmma <n> hmma <n>

instructions: the static count of the loop body (every path of it: the
masked and unmasked score code both count), by the 16-byte encoding of
sm_90 (one instruction per address step).
"""

import re
import sys

FUNCTION = re.compile(r"Function : (\S+)")
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);")
BRANCH = re.compile(r"\bBRA\s+(?:\S+,\s*)?0x([0-9a-f]+)")


def kernels(text):
    name, lines = None, []
    for raw in text.splitlines():
        m = FUNCTION.search(raw)
        if m:
            if name:
                yield name, lines
            name, lines = m.group(1), []
            continue
        m = LINE.search(raw)
        if m and name:
            lines.append((int(m.group(1), 16), m.group(2).strip()))
    if name:
        yield name, lines


def loop_body(lines):
    """The instructions of the widest backward branch's span holding a product."""
    best = None
    for address, text in lines:
        m = BRANCH.search(text)
        if not m or ".DIV" in text:
            continue
        target = int(m.group(1), 16)
        if target >= address:
            continue
        body = [t for a, t in lines if target <= a <= address]
        if any(opcode(t) == "EXIT" for t in body):
            continue
        if not any(t.split()[0].startswith(("HGMMA", "HMMA")) or
                   " HGMMA" in t or " HMMA" in t for t in body):
            continue
        if best is None or len(body) > len(best):
            best = body
    return best or []


def opcode(text):
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def main():
    for name, lines in kernels(sys.stdin.read()):
        if "attention" not in name:
            continue
        body = loop_body(lines)
        ops = [opcode(t).split(".")[0] for t in body]
        print(f"{name} loop {len(body)} " + " ".join(
            f"{op.lower()} {ops.count(op)}" for op in ("MUFU", "F2I", "LDG", "LDGSTS", "HGMMA",
                                                      "HMMA")))


if __name__ == "__main__":
    main()
