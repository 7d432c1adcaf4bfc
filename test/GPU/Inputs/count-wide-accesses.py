"""Reads cuobjdump -sass output; prints, for each function with 128-bit
global accesses, "<name> loads <LDG.E.128 count> stores <STG.E.128 count>",
sorted by name."""
import re
import sys

counts = {}
name = None
for line in sys.stdin:
    m = re.search(r"Function : (\w+)", line)
    if m:
        name = m.group(1)
        counts[name] = [0, 0]
    elif name and "LDG.E.128" in line:
        counts[name][0] += 1
    elif name and "STG.E.128" in line:
        counts[name][1] += 1
for name in sorted(counts):
    loads, stores = counts[name]
    if loads or stores:
        print(f"{name} loads {loads} stores {stores}")
