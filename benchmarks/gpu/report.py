"""GPU check: a result's summary line, whether it failed, and the Markdown report."""

from __future__ import annotations

CHECKS = ("c_interface", "manifest")


def failed(result: dict) -> bool:
    """A case that errored or whose output is off; a sanitizer run that found something."""
    if "error" in result:
        return True
    if any(not result[k]["ok"] for k in CHECKS if k in result):
        return True
    return result.get("phase") in ("sanitizer",) and result.get("ok") is False or \
        result.get("name") == "c_example" and not result.get("ok", True)


def limits_of(report: dict) -> dict:
    found = [r for r in report["results"] if r.get("name") == "limits" and "copy_GBps" in r]
    return found[-1] if found else {}


def _check(result: dict, key: str) -> str:
    r = result.get(key)
    if r is None:
        return "-"
    return f"{'ok' if r['ok'] else 'FAIL'} {r['error']:.3g} ({r['metric']} <= {r['limit']:g})"


def _rates(result: dict, limits: dict) -> tuple:
    """(time, attention kernel, bandwidth, compute) cells of a timed case."""
    t = result.get("time")
    if not t:
        return "-", "-", "-", "-"
    timing = f"{t['median_ms']:.3f} ({t['min_ms']:.3f}-{t['max_ms']:.3f})"
    copy, matmul = limits.get("copy_GBps"), limits.get("matmul_bf16_TFLOPs")
    gbps = f"{result['GBps']:.0f}"
    if copy:
        gbps += f" ({100 * result['GBps'] / copy:.0f} % of copy)"
    flops, kernel = "-", "-"
    if "TFLOPs" in result:
        flops = f"{result['TFLOPs']:.1f}"
        if matmul:
            flops += f" ({100 * result['TFLOPs'] / matmul:.1f} % of matmul)"
    a = result.get("attention_kernel")
    if a:
        kernel = f"{a['median_ms']:.3f}: {a['TFLOPs']:.1f} TFLOP/s"
        if matmul:
            kernel += f" ({100 * a['TFLOPs'] / matmul:.1f} %)"
        kernel += f", {a['GBps']:.0f} GB/s"
        if copy:
            kernel += f" ({100 * a['GBps'] / copy:.0f} %)"
    return timing, kernel, gbps, flops


def _torch(result: dict) -> str:
    side = result.get("torch")
    if not side:
        return "-"
    cell = "-" if side.get("error") is None else f"{side['error']:.3g} {side.get('metric', 'ulp')}"
    if "backend" in side:
        cell += f" (SDPA {side['backend']})"
    if "time" in side:
        cell += f", {side['time']['median_ms']:.3f} ms"
    if "sdpa_time" in side:
        cell += f" (SDPA alone {side['sdpa_time']['median_ms']:.3f} ms"
        if "sdpa_TFLOPs" in side:
            cell += f", {side['sdpa_TFLOPs']:.1f} TFLOP/s"
        cell += ")"
    return cell


def summary_line(result: dict, report: dict) -> str:
    name = f"{result.get('phase', '')}/{result['name']}"
    if "not_run" in result:
        return f"{name}: not run ({result['not_run']})"
    if "error" in result:
        return f"{name}: ERROR {result['error'].strip().splitlines()[-1][:300]}"
    if "skipped" in result:
        return f"{name}: skipped ({result['skipped']})"
    if result["name"] == "limits":
        return (f"{name}: copy {result['copy_GBps']:.0f} GB/s, bf16 matmul "
                f"{result.get('matmul_bf16_TFLOPs', float('nan')):.0f} TFLOP/s")
    if result.get("phase") in ("sanitizer", "profile") or result["name"] == "c_example":
        keep = {k: v for k, v in result.items() if k not in ("phase", "name", "output")}
        return f"{name}: {keep}" + (f" {result['output'][-200:]}" if "output" in result else "")
    parts = [f"{k} {'ok' if result[k]['ok'] else 'FAIL'} {result[k]['error']:.3g}"
             for k in CHECKS if k in result]
    timing, kernel, gbps, flops = _rates(result, limits_of(report))
    if timing != "-":
        parts += [f"{timing} ms", f"{gbps} GB/s"]
        if flops != "-":
            parts += [f"{flops} TFLOP/s", f"attention kernel {kernel} ms"]
    if "torch" in result:
        parts.append(f"torch {_torch(result)}")
    return f"{name}: " + ", ".join(parts)


def write_markdown(report: dict, path: str) -> None:
    limits = limits_of(report)
    lines = [f"# pe-mlir GPU check ({report['backend']})", "",
             f"GPU: {report.get('gpu_before') or report['device']}. Chip built for: "
             f"{report.get('chip', '-')}. Host load average at start: {report['loadavg']:.2f}. "
             f"Started {report['started']}.", ""]
    if limits:
        lines += [f"Copy bandwidth (device to device, 1 GiB, read + written): "
                  f"{limits['copy_GBps']:.0f} GB/s"]
        if "matmul_bf16_TFLOPs" in limits:
            lines += [f"bf16 matmul 8192^3 (torch, random data): "
                      f"{limits['matmul_bf16_TFLOPs']:.0f} TFLOP/s"]
        lines += [""]
    for phase in ("small", "full"):
        rows = [r for r in report["results"] if r.get("phase") == phase and
                r["name"] not in ("limits", "c_example")]
        if not rows:
            continue
        lines += [f"## {phase}", "",
                  "| case | C interface | manifest | median ms (min-max) | attention kernel ms | "
                  "GB/s | TFLOP/s | PyTorch |", "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if "not_run" in r or "error" in r or "skipped" in r:
                why = r.get("not_run") or r.get("skipped") or \
                    "ERROR: " + r["error"].strip().splitlines()[-1][:200].replace("|", "/")
                lines.append(f"| {r['name']} | {why} | - | - | - | - | - | - |")
                continue
            timing, kernel, gbps, flops = _rates(r, limits)
            lines.append(f"| {r['name']} | {_check(r, 'c_interface')} | {_check(r, 'manifest')} | "
                         f"{timing} | {kernel} | {gbps} | {flops} | {_torch(r)} |")
        lines += [""]
    others = [r for r in report["results"] if r.get("phase") in ("sanitizer", "profile") or
              r["name"] == "c_example"]
    if others:
        lines += ["## Other checks", ""]
        lines += [f"- {summary_line(r, report)}" for r in others]
        lines += [""]
    if report.get("gpu_after"):
        lines += [f"GPU after the run: {report['gpu_after']}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
