"""Differential fuzzing of ``pe-raise-positional-encodings``.

Random attention and RoPE programs are written in linalg/tensor/arith/math the
way importers spell them, each in one of many spellings, some with one detail
changed so that they are no longer what they look like (near misses). Every
program is compiled twice for the CPU, as written and after raising, and both
are run on the same random inputs: raising must never change a result. A
batch of programs shares one module (one compilation each way).

Spellings
---------
attention: layouts BHSD / BSHD; K and V shared by query heads through a
broadcast + collapse (GQA, MQA), or, as a near miss, tiled (head h reads KV
head h % n); scores by a generic contraction or a batch_matmul; the scale as a
multiply or a divide; the bias none, an additive mask argument (or, near miss,
read transposed), a causal mask from the indices (added, or selected with -inf
or finfo.min), a causal i1 constant with a select, ALiBi with constant or
computed slopes, with or without the query term (near misses: the sign that
rewards distance, slopes of no max_bias); the softmax as linalg.softmax, as
max / exp / sum / divide, without the max, or (near miss) over the queries.

RoPE: BHSD / BSHD; positions an i64 argument or an iota, or constant cos/sin
tables sliced from a start row or gathered by the positions through IREE's
negative-index wrap; theta 10000 or 500000; half (rotate_half) or interleaved
pairs (strided slices and a stack); full or partial rotary; near misses: the
sign on the wrong member, cos on both terms, one frequency off, the sin table
read one row off (sliced further, or wrapped by rows - 1).

Usage: ``python -m pe.raising_fuzz --programs 100000 --seed 1`` prints the
number of programs, how many were raised and the mismatches (each with its
IR); exit status 1 when there is a mismatch.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

from pe import runner

FINFO_MIN = "-3.40282347E+38"
NEG_INF = "0xFF800000"


def _tensor(shape, element="f32"):
    return f"tensor<{'x'.join(str(s) for s in shape)}x{element}>" if shape else f"tensor<{element}>"


def _map(dims, results):
    return f"affine_map<({', '.join(dims)}) -> ({', '.join(results)})>"


@dataclass
class Program:
    """One function: its IR, its arguments and how to draw them."""
    name: str
    kind: str
    spelling: str
    near_miss: bool
    lines: list = field(default_factory=list)
    args: list = field(default_factory=list)  # (name, shape, element, draw)
    result: tuple = ()
    counter: int = 0

    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def emit(self, line):
        self.lines.append("  " + line)

    def empty(self, shape, element="f32"):
        e = self.fresh("e")
        self.emit(f"{e} = tensor.empty() : {_tensor(shape, element)}")
        return e

    def fill(self, shape, value):
        c = self.fresh("c")
        self.emit(f"{c} = arith.constant {value} : f32")
        f = self.fresh("f")
        self.emit(f"{f} = linalg.fill ins({c} : f32) outs({self.empty(shape)} : {_tensor(shape)}) "
                  f"-> {_tensor(shape)}")
        return f

    def generic(self, dims, inputs, out_shape, out_map, body, reduction=(), init=None,
                out_element="f32"):
        """inputs: (value, shape, element, results); body(args) -> lines and the yielded name."""
        maps = [_map(dims, r) for _, _, _, r in inputs] + [_map(dims, out_map)]
        iters = ", ".join('"reduction"' if d in reduction else '"parallel"' for d in dims)
        init = init or self.empty(out_shape, out_element)
        ins = ", ".join(v for v, _, _, _ in inputs)
        in_types = ", ".join(_tensor(s, e) for _, s, e, _ in inputs)
        out = self.fresh("g")
        head = f"{out} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iters}]}}"
        if inputs:
            head += f" ins({ins} : {in_types})"
        head += f" outs({init} : {_tensor(out_shape, out_element)}) {{"
        self.emit(head)
        block_args = [f"%a{i}" for i in range(len(inputs))] + ["%acc"]
        block_types = [e for _, _, e, _ in inputs] + [out_element]
        self.emit("^bb0(" + ", ".join(f"{a}: {t}" for a, t in zip(block_args, block_types)) + "):")
        body_lines, result = body(block_args)
        for line in body_lines:
            self.emit("  " + line)
        self.emit(f"  linalg.yield {result} : {out_element}")
        self.emit(f"}} -> {_tensor(out_shape, out_element)}")
        return out

    def text(self):
        params = ", ".join(f"%arg_{n}: {_tensor(s, e)}" for n, s, e, _ in self.args)
        value, shape = self.result
        body = "\n".join(self.lines)
        return (f"func.func @{self.name}({params}) -> {_tensor(shape)} {{\n{body}\n"
                f"  return {value} : {_tensor(shape)}\n}}\n")


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------

def _attention(name, rng):
    b, s, d = int(rng.choice([1, 2])), int(rng.integers(3, 9)), int(rng.choice([8, 16]))
    h = int(rng.choice([2, 4]))
    kvh = int(rng.choice([g for g in (1, 2, h) if h % g == 0]))
    layout = str(rng.choice(["bhsd", "bshd"]))
    share = "broadcast" if kvh == h or rng.random() < 0.85 else "tile"
    scores_by = str(rng.choice(["generic", "batch_matmul"])) if layout == "bhsd" else "generic"
    scale = str(rng.choice(["mul", "div"]))
    bias = str(rng.choice(["none", "mask_arg", "mask_transposed", "causal_add", "causal_select",
                           "causal_i1", "alibi", "alibi_query", "alibi_computed",
                           "alibi_wrong_sign", "alibi_not_slopes"]))
    fill = str(rng.choice([NEG_INF, FINFO_MIN]))
    softmax = str(rng.choice(["linalg", "decomposed", "nomax", "queries"],
                             p=[0.3, 0.3, 0.3, 0.1]))
    near = (share == "tile" or bias in ("mask_transposed", "alibi_wrong_sign",
                                        "alibi_not_slopes") or softmax == "queries")
    spelling = "/".join([layout, f"kv{kvh}-{share}", scores_by, scale, bias, softmax])
    p = Program(name, "attention", spelling, near)

    def shape4(heads):
        return (b, heads, s, d) if layout == "bhsd" else (b, s, heads, d)

    def at(bi, hi, si, di):
        return [bi, hi, si, di] if layout == "bhsd" else [bi, si, hi, di]

    normal = lambda shape: (lambda r: r.standard_normal(shape).astype(np.float32))  # noqa: E731
    p.args += [("q", shape4(h), "f32", normal(shape4(h))),
               ("k", shape4(kvh), "f32", normal(shape4(kvh))),
               ("v", shape4(kvh), "f32", normal(shape4(kvh)))]
    if bias in ("mask_arg", "mask_transposed"):
        def mask_draw(r):
            m = np.where(r.random((s, s)) < 0.3, -np.inf, 0.0).astype(np.float32)
            np.fill_diagonal(m, 0.0)  # no fully masked row
            return m
        p.args.append(("mask", (s, s), "f32", mask_draw))

    def repeat(value):
        """K or V for every query head."""
        if kvh == h:
            return value
        n = h // kvh
        if share == "tile":
            operands = ", ".join([value] * n)
            dim = 1 if layout == "bhsd" else 2
            out = p.fresh("t")
            types = ", ".join([_tensor(shape4(kvh))] * n)
            p.emit(f"{out} = tensor.concat dim({dim}) {operands} : ({types}) -> {_tensor(shape4(h))}")
            return out
        five = (b, kvh, n, s, d) if layout == "bhsd" else (b, s, kvh, n, d)
        dims = ["b", "g", "r", "s", "d"] if layout == "bhsd" else ["b", "s", "g", "r", "d"]
        src = ["b", "g", "s", "d"] if layout == "bhsd" else ["b", "s", "g", "d"]
        wide = p.generic(dims, [(value, shape4(kvh), "f32", src)], five, dims,
                         lambda a: ([], a[0]))
        out = p.fresh("r")
        groups = "[[0], [1, 2], [3], [4]]" if layout == "bhsd" else "[[0], [1], [2, 3], [4]]"
        p.emit(f"{out} = tensor.collapse_shape {wide} {groups} : {_tensor(five)} into "
               f"{_tensor(shape4(h))}")
        return out

    k, v = repeat("%arg_k"), repeat("%arg_v")
    sc = (b, h, s, s)
    if scores_by == "generic":
        dims = ["b", "h", "i", "j", "d"]
        scores = p.generic(dims, [("%arg_q", shape4(h), "f32", at("b", "h", "i", "d")),
                                  (k, shape4(h), "f32", at("b", "h", "j", "d"))],
                           sc, ["b", "h", "i", "j"],
                           lambda a: ([f"%m = arith.mulf {a[0]}, {a[1]} : f32",
                                       f"%t = arith.addf {a[2]}, %m : f32"], "%t"),
                           reduction=("d",), init=p.fill(sc, "0.0"))
    else:
        qc, kc = p.fresh("qc"), p.fresh("kc")
        p.emit(f"{qc} = tensor.collapse_shape %arg_q [[0, 1], [2], [3]] : {_tensor(shape4(h))} into "
               f"{_tensor((b * h, s, d))}")
        kt = p.fresh("kt")
        p.emit(f"{kt} = linalg.transpose ins({k} : {_tensor(shape4(h))}) outs("
               f"{p.empty((b, h, d, s))} : {_tensor((b, h, d, s))}) permutation = [0, 1, 3, 2]")
        p.emit(f"{kc} = tensor.collapse_shape {kt} [[0, 1], [2], [3]] : {_tensor((b, h, d, s))} "
               f"into {_tensor((b * h, d, s))}")
        mm = p.fresh("mm")
        p.emit(f"{mm} = linalg.batch_matmul ins({qc}, {kc} : {_tensor((b * h, s, d))}, "
               f"{_tensor((b * h, d, s))}) outs({p.fill((b * h, s, s), '0.0')} : "
               f"{_tensor((b * h, s, s))}) -> {_tensor((b * h, s, s))}")
        scores = p.fresh("sc")
        p.emit(f"{scores} = tensor.expand_shape {mm} [[0, 1], [2], [3]] output_shape "
               f"[{b}, {h}, {s}, {s}] : {_tensor((b * h, s, s))} into {_tensor(sc)}")
    x4 = ["b", "h", "i", "j"]
    if scale == "mul":
        c = f"{1 / math.sqrt(d):.9e}"
        scaled = p.generic(x4, [(scores, sc, "f32", x4)], sc, x4,
                           lambda a: ([f"%k = arith.constant {c} : f32",
                                       f"%y = arith.mulf {a[0]}, %k : f32"], "%y"))
    else:
        c = f"{math.sqrt(d):.9e}"
        scaled = p.generic(x4, [(scores, sc, "f32", x4)], sc, x4,
                           lambda a: ([f"%k = arith.constant {c} : f32",
                                       f"%y = arith.divf {a[0]}, %k : f32"], "%y"))
    logits = _bias(p, bias, fill, scaled, sc, h, s, rng)
    probs = _softmax(p, softmax, logits, sc)
    out_shape = shape4(h)
    dims = ["b", "h", "i", "e", "j"]
    o = p.generic(dims, [(probs, sc, "f32", ["b", "h", "i", "j"]),
                         (v, shape4(h), "f32", at("b", "h", "j", "e"))],
                  out_shape, at("b", "h", "i", "e"),
                  lambda a: ([f"%m = arith.mulf {a[0]}, {a[1]} : f32",
                              f"%t = arith.addf {a[2]}, %m : f32"], "%t"),
                  reduction=("j",), init=p.fill(out_shape, "0.0"))
    p.result = (o, out_shape)
    return p


def _index_lines(dims):
    return [f"%i{n} = linalg.index {dims.index(n)} : index" for n in ("i", "j")]


def _bias(p, bias, fill, scaled, sc, h, s, rng):
    x4 = ["b", "h", "i", "j"]
    if bias == "none":
        return scaled
    if bias in ("mask_arg", "mask_transposed"):
        read = ["i", "j"] if bias == "mask_arg" else ["j", "i"]
        return p.generic(x4, [(scaled, sc, "f32", x4), ("%arg_mask", (s, s), "f32", read)], sc, x4,
                         lambda a: ([f"%y = arith.addf {a[0]}, {a[1]} : f32"], "%y"))
    if bias == "causal_add":
        return p.generic(x4, [(scaled, sc, "f32", x4)], sc, x4, lambda a: (_index_lines(x4) + [
            "%c = arith.cmpi ugt, %ij, %ii : index",
            f"%m = arith.constant {fill} : f32", "%z = arith.constant 0.0 : f32",
            "%w = arith.select %c, %m, %z : f32", f"%y = arith.addf {a[0]}, %w : f32"], "%y"))
    if bias == "causal_select":
        return p.generic(x4, [(scaled, sc, "f32", x4)], sc, x4, lambda a: (_index_lines(x4) + [
            "%c = arith.cmpi sle, %ij, %ii : index", f"%m = arith.constant {fill} : f32",
            f"%y = arith.select %c, {a[0]}, %m : f32"], "%y"))
    if bias == "causal_i1":
        rows = ", ".join("[" + ", ".join("true" if j <= i else "false" for j in range(s)) + "]"
                         for i in range(s))
        keep = p.fresh("keep")
        p.emit(f"{keep} = arith.constant dense<[{rows}]> : {_tensor((s, s), 'i1')}")
        return p.generic(x4, [(keep, (s, s), "i1", ["i", "j"]), (scaled, sc, "f32", x4)], sc, x4,
                         lambda a: ([f"%m = arith.constant {fill} : f32",
                                     f"%y = arith.select {a[0]}, {a[1]}, %m : f32"], "%y"))
    # ALiBi: slope[h] * (j [- i]) (wrong sign: i - j), then causal.
    slopes = [2.0 ** (-8.0 * (i + 1) / h) for i in range(h)]
    if bias == "alibi_not_slopes":
        slopes = [x + 0.01 * (i % 2) for i, x in enumerate(slopes)]
    lines = _index_lines(x4) + ["%hh = linalg.index 1 : index"]
    if bias == "alibi_computed":
        lines += ["%h64 = arith.index_cast %hh : index to i64", "%hf = arith.sitofp %h64 : i64 to f32",
                  "%one = arith.constant 1.0 : f32", "%h1 = arith.addf %hf, %one : f32",
                  f"%base = arith.constant {2.0 ** (-8.0 / h):.9e} : f32",
                  "%slope = math.powf %base, %h1 : f32"]
        inputs = [(scaled, sc, "f32", x4)]
    else:
        table = p.fresh("slopes")
        p.emit(f"{table} = arith.constant dense<[{', '.join(f'{x:.9e}' for x in slopes)}]> : "
               f"{_tensor((h,))}")
        inputs = [(scaled, sc, "f32", x4), (table, (h,), "f32", ["h"])]
    def body(a):
        out = list(lines)
        slope = "%slope" if bias == "alibi_computed" else a[1]
        out += ["%j64 = arith.index_cast %ij : index to i64", "%i64 = arith.index_cast %ii : index to i64"]
        if bias in ("alibi", "alibi_computed", "alibi_not_slopes"):
            out += ["%dist = arith.sitofp %j64 : i64 to f32"]
        elif bias == "alibi_query":
            out += ["%d64 = arith.subi %j64, %i64 : i64", "%dist = arith.sitofp %d64 : i64 to f32"]
        else:  # wrong sign
            out += ["%d64 = arith.subi %i64, %j64 : i64", "%dist = arith.sitofp %d64 : i64 to f32"]
        out += [f"%ab = arith.mulf {slope}, %dist : f32", f"%y0 = arith.addf {a[0]}, %ab : f32",
                "%c = arith.cmpi sle, %ij, %ii : index", f"%m = arith.constant {NEG_INF} : f32",
                "%y = arith.select %c, %y0, %m : f32"]
        return out, "%y"
    return p.generic(x4, inputs, sc, x4, body)


def _softmax(p, spelling, x, sc):
    x4 = ["b", "h", "i", "j"]
    if spelling in ("linalg", "queries"):
        out = p.fresh("sm")
        dim = 3 if spelling == "linalg" else 2
        p.emit(f"{out} = linalg.softmax dimension({dim}) ins({x} : {_tensor(sc)}) outs("
               f"{p.empty(sc)} : {_tensor(sc)}) -> {_tensor(sc)}")
        return out
    row = sc[:3] + (1,)
    keep = ["b", "h", "i", "0"]
    if spelling == "decomposed":
        mx = p.generic(x4, [(x, sc, "f32", x4)], row, keep,
                       lambda a: ([f"%y = arith.maximumf {a[0]}, {a[1]} : f32"], "%y"),
                       reduction=("j",), init=p.fill(row, NEG_INF))
        ex = p.generic(x4, [(x, sc, "f32", x4), (mx, row, "f32", keep)], sc, x4,
                       lambda a: ([f"%d = arith.subf {a[0]}, {a[1]} : f32",
                                   "%y = math.exp %d : f32"], "%y"))
    else:
        ex = p.generic(x4, [(x, sc, "f32", x4)], sc, x4,
                       lambda a: ([f"%y = math.exp {a[0]} : f32"], "%y"))
    sm = p.generic(x4, [(ex, sc, "f32", x4)], row, keep,
                   lambda a: ([f"%y = arith.addf {a[0]}, {a[1]} : f32"], "%y"),
                   reduction=("j",), init=p.fill(row, "0.0"))
    return p.generic(x4, [(ex, sc, "f32", x4), (sm, row, "f32", keep)], sc, x4,
                     lambda a: ([f"%y = arith.divf {a[0]}, {a[1]} : f32"], "%y"))


# ---------------------------------------------------------------------------
# RoPE
# ---------------------------------------------------------------------------

def _rope(name, rng):
    b, h, s = int(rng.choice([1, 2])), int(rng.choice([1, 2, 4])), int(rng.integers(2, 9))
    d = int(rng.choice([8, 16]))
    r = d if rng.random() < 0.7 else d // 2
    layout = str(rng.choice(["bhsd", "bshd"]))
    style = str(rng.choice(["half", "interleaved"]))
    positions = str(rng.choice(["arg", "iota", "table_slice", "table_gather"]))
    theta = float(rng.choice([10000.0, 500000.0]))
    variants = ["exact", "exact", "exact", "wrong_sign", "cos_twice", "off_frequency"]
    if positions.startswith("table"):
        variants.append("table_misread")  # sliced one row off / wrapped by rows - 1
    variant = str(rng.choice(variants))
    p = Program(name, "rope", "/".join([layout, style, f"r{r}of{d}", positions, f"theta{theta:g}",
                                        variant]), variant != "exact")
    shape = (b, h, s, d) if layout == "bhsd" else (b, s, h, d)
    p.args.append(("x", shape, "f32", lambda g: g.standard_normal(shape).astype(np.float32)))
    rows = s + int(rng.integers(2, 9))  # the rows of a constant table
    start = int(rng.integers(1, rows - s + 1))  # the first row a sliced table reads
    if positions == "arg":
        p.args.append(("pos", (s,), "i64", lambda g: g.integers(0, 64, s).astype(np.int64)))
    elif positions == "table_gather":  # rows named from the end too: p - rows
        p.args.append(("pos", (s,), "i64",
                       lambda g: g.integers(-(rows - 1), rows - 1, s).astype(np.int64)))
    inv = [theta ** (-2.0 * i / r) for i in range(r // 2)]
    inv2 = list(inv)
    if variant == "off_frequency":
        inv2[-1] *= 1.5
    half = r // 2
    tables = []
    for which, freqs in (("cos", inv), ("sin", inv2 if variant == "off_frequency" else inv)):
        if positions.startswith("table"):
            fn = "cos" if which == "cos" or variant == "cos_twice" else "sin"
            tables.append(_table_read(p, positions, fn, freqs, style, s, r, rows, start,
                                      variant == "table_misread" and which == "sin"))
            continue
        const = p.fresh("inv")
        p.emit(f"{const} = arith.constant dense<[{', '.join(f'{f:.9e}' for f in freqs)}]> : "
               f"{_tensor((half,))}")
        if positions == "arg":
            ang = p.generic(["s", "i"], [("%arg_pos", (s,), "i64", ["s"]), (const, (half,), "f32", ["i"])],
                            (s, half), ["s", "i"],
                            lambda a: ([f"%pf = arith.sitofp {a[0]} : i64 to f32",
                                        f"%y = arith.mulf %pf, {a[1]} : f32"], "%y"))
        else:
            ang = p.generic(["s", "i"], [(const, (half,), "f32", ["i"])], (s, half), ["s", "i"],
                            lambda a: (["%is = linalg.index 0 : index",
                                        "%p64 = arith.index_cast %is : index to i64",
                                        "%pf = arith.sitofp %p64 : i64 to f32",
                                        f"%y = arith.mulf %pf, {a[0]} : f32"], "%y"))
        if style == "half":
            emb = p.fresh("emb")
            p.emit(f"{emb} = tensor.concat dim(1) {ang}, {ang} : ({_tensor((s, half))}, "
                   f"{_tensor((s, half))}) -> {_tensor((s, r))}")
        else:
            wide = p.generic(["s", "i", "t"], [(ang, (s, half), "f32", ["s", "i"])], (s, half, 2),
                             ["s", "i", "t"], lambda a: ([], a[0]))
            emb = p.fresh("emb")
            p.emit(f"{emb} = tensor.collapse_shape {wide} [[0], [1, 2]] : {_tensor((s, half, 2))} "
                   f"into {_tensor((s, r))}")
        fn = "cos" if which == "cos" or variant == "cos_twice" else "sin"
        tables.append(p.generic(["s", "c"], [(emb, (s, r), "f32", ["s", "c"])], (s, r), ["s", "c"],
                                lambda a, fn=fn: ([f"%y = math.{fn} {a[0]} : f32"], "%y")))
    cos, sin = tables
    rshape = shape[:3] + (r,)

    def slice_(src, offset, size, stride=1):
        out = p.fresh("sl")
        sz = shape[:3] + (size,)
        p.emit(f"{out} = tensor.extract_slice {src}[0, 0, 0, {offset}] [{', '.join(map(str, sz))}] "
               f"[1, 1, 1, {stride}] : {_tensor(shape)} to {_tensor(sz)}")
        return out

    xr = slice_("%arg_x", 0, r) if r < d else "%arg_x"
    src_shape = shape
    if style == "half":
        x1, x2 = (slice_("%arg_x", 0, half), slice_("%arg_x", half, half))
        first, second = (x2, x1) if variant != "wrong_sign" else (x1, x2)
        neg = p.generic(["a", "b", "c", "d"], [(first, shape[:3] + (half,), "f32", ["a", "b", "c", "d"])],
                        shape[:3] + (half,), ["a", "b", "c", "d"],
                        lambda a: ([f"%y = arith.negf {a[0]} : f32"], "%y"))
        rot = p.fresh("rot")
        p.emit(f"{rot} = tensor.concat dim(3) {neg}, {second} : ({_tensor(shape[:3] + (half,))}, "
               f"{_tensor(shape[:3] + (half,))}) -> {_tensor(rshape)}")
    else:
        even, odd = slice_("%arg_x", 0, half, 2), slice_("%arg_x", 1, half, 2)
        first, second = (odd, even) if variant != "wrong_sign" else (even, odd)
        hs = shape[:3] + (half,)
        neg = p.generic(["a", "b", "c", "d"], [(first, hs, "f32", ["a", "b", "c", "d"])], hs,
                        ["a", "b", "c", "d"], lambda a: ([f"%y = arith.negf {a[0]} : f32"], "%y"))
        parts = []
        for part in (neg, second):
            e = p.fresh("ex")
            p.emit(f"{e} = tensor.expand_shape {part} [[0], [1], [2], [3, 4]] output_shape "
                   f"[{', '.join(map(str, hs))}, 1] : {_tensor(hs)} into {_tensor(hs + (1,))}")
            parts.append(e)
        st = p.fresh("st")
        p.emit(f"{st} = tensor.concat dim(4) {parts[0]}, {parts[1]} : ({_tensor(hs + (1,))}, "
               f"{_tensor(hs + (1,))}) -> {_tensor(hs + (2,))}")
        rot = p.fresh("rot")
        p.emit(f"{rot} = tensor.collapse_shape {st} [[0], [1], [2], [3, 4]] : {_tensor(hs + (2,))} "
               f"into {_tensor(rshape)}")
    del src_shape
    dims = ["a", "b", "c", "d"]
    seq = ["c", "d"] if layout == "bhsd" else ["b", "d"]
    out = p.generic(dims, [(xr, rshape, "f32", dims), (cos, (s, r), "f32", seq),
                           (rot, rshape, "f32", dims), (sin, (s, r), "f32", seq)], rshape, dims,
                    lambda a: ([f"%u = arith.mulf {a[0]}, {a[1]} : f32",
                                f"%w = arith.mulf {a[2]}, {a[3]} : f32",
                                "%y = arith.addf %u, %w : f32"], "%y"))
    if r < d:
        tail = slice_("%arg_x", r, d - r)
        full = p.fresh("full")
        p.emit(f"{full} = tensor.concat dim(3) {out}, {tail} : ({_tensor(rshape)}, "
               f"{_tensor(shape[:3] + (d - r,))}) -> {_tensor(shape)}")
        out = full
    p.result = (out, shape)
    return p


def _table_read(p, positions, fn, freqs, style, s, r, rows, start, misread):
    """A constant [rows, r] cos or sin table (row t: angle t x frequency, the
    pairing of `style`) read as [s, r]: sliced from a start row (Meta's
    freqs_cis[start:]), or gathered by the positions argument through IREE's
    negative-index wrap (p < 0 ? p + rows : p). `misread`: the slice one row
    further, or the wrap by rows - 1 (a near miss)."""
    half = r // 2
    column = [freqs[c % half] if style == "half" else freqs[c // 2] for c in range(r)]
    angle = np.arange(rows)[:, None] * np.asarray(column, np.float64)[None, :]
    values = (np.cos if fn == "cos" else np.sin)(angle).astype(np.float32)
    table = p.fresh("tab")
    text = ", ".join("[" + ", ".join(f"{x:.9e}" for x in row) + "]" for row in values)
    p.emit(f"{table} = arith.constant dense<[{text}]> : {_tensor((rows, r))}")
    if positions == "table_slice":
        start = start + 1 if misread and start < rows - s else start - misread
        out = p.fresh("rows")
        p.emit(f"{out} = tensor.extract_slice {table}[{start}, 0] [{s}, {r}] [1, 1] : "
               f"{_tensor((rows, r))} to {_tensor((s, r))}")
        return out
    wrap = rows - 1 if misread else rows
    return p.generic(["s", "c"], [("%arg_pos", (s,), "i64", ["s"])], (s, r), ["s", "c"],
                     lambda a: ([f"%z = arith.constant 0 : i64",
                                 f"%n = arith.constant {wrap} : i64",
                                 f"%neg = arith.cmpi slt, {a[0]}, %z : i64",
                                 f"%up = arith.addi {a[0]}, %n : i64",
                                 f"%w = arith.select %neg, %up, {a[0]} : i64",
                                 "%row = arith.index_cast %w : i64 to index",
                                 "%col = linalg.index 1 : index",
                                 f"%y = tensor.extract {table}[%row, %col] : "
                                 f"{_tensor((rows, r))}"], "%y"))


def generate(index, rng):
    kind = "attention" if rng.random() < 0.6 else "rope"
    return (_attention if kind == "attention" else _rope)(f"f{index}", rng)


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

@dataclass
class Report:
    programs: int = 0
    near_misses: int = 0
    raised: dict = field(default_factory=lambda: {"pe.rope": 0, "pe.attention": 0})
    functions_raised: int = 0
    mismatches: list = field(default_factory=list)
    not_compiled: int = 0
    failures: list = field(default_factory=list)  # (IR, error) of batches that did not compile


def _raise(ir):
    opt = os.path.join(os.path.dirname(runner.PE_COMPILE), "pe-opt")
    return subprocess.run([opt, "-", "--pe-raise-positional-encodings"], input=ir,
                          capture_output=True, text=True, check=True).stdout


def _functions(ir):
    """The text of each function of `ir`, by name."""
    chunks = {}
    for chunk in ir.split("func.func @")[1:]:
        chunks[chunk[:chunk.index("(")]] = "func.func @" + chunk
    return chunks


def run_batch(programs, seed, report, tolerance=1e-5):
    """Raises the batch; compiles the functions that raising changed, as
    written and raised (-O0: the comparison is of semantics, and LLVM's
    optimizations would cost most of the time), and compares them."""
    ir = "\n".join(p.text() for p in programs)
    raised_ir = _raise(ir)
    for op in report.raised:
        report.raised[op] += raised_ir.count(f"= {op} ")
    raised_functions = _functions(raised_ir)
    changed = [p for p in programs if "= pe." in raised_functions[p.name]]
    report.functions_raised += len(changed)
    report.programs += len(programs)
    report.near_misses += sum(p.near_miss for p in programs)
    if not changed:
        return
    changed_ir = "\n".join(p.text() for p in changed)
    plain = runner.compile(changed_ir, ["-O0", "--num-threads=1"])
    raised = runner.compile(changed_ir, ["--raise", "-O0", "--num-threads=1"])
    rng = np.random.default_rng(seed)
    for p in changed:
        args = [draw(rng) for _, _, _, draw in p.args]
        want = plain.call(p.name, *args)[0].astype(np.float64)
        got = raised.call(p.name, *args)[0].astype(np.float64)
        scale = max(1.0, float(np.nanmax(np.abs(want))) if want.size else 1.0)
        same = np.isclose(got, want, rtol=0, atol=tolerance * scale, equal_nan=True)
        if not same.all():
            report.mismatches.append((p, float(np.nanmax(np.abs(got - want)))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--progress", action="store_true", help="a summary after every batch")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    report = Report()
    index = 0
    while index < args.programs:
        n = min(args.batch, args.programs - index)
        programs = [generate(index + i, rng) for i in range(n)]
        try:
            run_batch(programs, args.seed * 1000003 + index, report)
        except (RuntimeError, subprocess.CalledProcessError) as error:
            # A batch that does not compile (either way) is a finding too.
            report.not_compiled += n
            report.failures.append(("\n".join(p.text() for p in programs), str(error)))
        index += n
        if args.progress:
            print(_summary(report), flush=True)
    print(_summary(report))
    for p, diff in report.mismatches[:5]:
        print(f"\nMISMATCH {p.name} ({p.kind} {p.spelling}): max |raised - generic| = {diff}\n"
              f"{p.text()}")
    for ir, error in report.failures[:1]:
        print(f"\nNOT COMPILED: {error[:2000]}\n{ir}")
    return 1 if report.mismatches or report.failures else 0


def _summary(report):
    return (f"programs {report.programs} (near misses {report.near_misses}), functions raised "
            f"{report.functions_raised}, pe.rope {report.raised['pe.rope']}, pe.attention "
            f"{report.raised['pe.attention']}, mismatches {len(report.mismatches)}, "
            f"batches not compiled {len(report.failures)}")


if __name__ == "__main__":
    sys.exit(main())
