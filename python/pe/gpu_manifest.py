"""Run a function of a pe GPU manifest without LLVM: its steps replayed with CuPy.

The manifest (`pe-compile --target=gpu --manifest=...`) lists, for a function with static
shapes, the device allocations, copies, alignment checks, TMA tensor maps, kernel launches and
run-time error reports (records that kernels fill, read back and checked) its host code makes. A kernel's parameters are its operands flattened as the NVVM lowering passes them: a
memref as (allocated pointer, aligned pointer, offset, sizes..., strides...), a scalar as
itself. `kernel_arguments` does that flattening (no GPU needed, checked against the PTX in
the tests); `CupyFunction` runs the steps on the current CUDA device.
"""

from __future__ import annotations

import json
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

ELEMENT_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2,
                 "i8": 1, "i1": 1}
SCALAR_TYPES = {"i64": np.int64, "i32": np.int32, "f64": np.float64, "f32": np.float32,
                "i16": np.int16, "i8": np.int8, "i1": np.int8}
# CUDA's dynamic shared memory without the opt-in attribute, and that attribute
# (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
DEFAULT_SHARED_BYTES = 48 * 1024
MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def load_manifest(path: str) -> dict:
    with open(path) as f:
        manifest = json.load(f)
    if manifest.get("format") != "pe-gpu-manifest":
        raise ValueError(f"{path} is not a pe GPU manifest")
    return manifest


def kernel_arguments(params: Sequence[dict], args: Sequence[dict],
                     address_of: Callable[[dict], int]) -> List[np.generic]:
    """The launch arguments of one kernel, each as a numpy scalar of its parameter's width.

    `params`: the kernel's manifest parameters; `args`: the launch step's operands (views or
    {"value": v}); `address_of(view)`: the device address of a view's base buffer.
    """
    if len(params) != len(args):
        raise ValueError(f"{len(params)} parameters but {len(args)} operands")
    out: List[np.generic] = []
    for param, arg in zip(params, args):
        if param["kind"] == "pointer":
            if "buffer" not in arg:
                raise ValueError(f"operand {arg} does not match the pointer parameter {param}")
            out.append(np.uint64(address_of(arg)))
        elif param["kind"] == "memref":
            if "value" in arg or len(arg["sizes"]) != param["rank"]:
                raise ValueError(f"operand {arg} does not match the memref parameter {param}")
            base = np.uint64(address_of(arg))
            out += [base, base, np.int64(arg["offset"])]
            out += [np.int64(v) for v in arg["sizes"]] + [np.int64(v) for v in arg["strides"]]
        else:
            if "value" not in arg:
                raise ValueError(f"operand {arg} does not match the scalar parameter {param}")
            out.append(SCALAR_TYPES[param["type"]](arg["value"]))
    return out


def tensor_map_arguments(step: dict, address: int) -> dict:
    """cuTensorMapEncodeTiled's arguments for a `tensor_map` step of the view at device
    `address` (its base buffer's): dimensions innermost first, strides in bytes for all but
    the innermost (which must be contiguous), as libpe_cuda_runtime encodes them."""
    view = step["of"]
    sizes, strides, box = view["sizes"], view["strides"], step["box"]
    if not 1 <= len(sizes) <= 5 or len(box) != len(sizes):
        raise ValueError(f"a tensor map needs a view of rank 1 to 5 and a box as long: {step}")
    if strides[-1] != 1:
        raise ValueError(f"a tensor map needs a contiguous innermost dimension: {view}")
    if any(not 1 <= b <= 256 for b in box):
        raise ValueError(f"a tensor map's box sizes are in [1, 256]: {box}")
    size = ELEMENT_BYTES[view["element"]]
    return {"rank": len(sizes), "address": address + view["offset"] * size,
            "dims": sizes[::-1], "strides": [s * size for s in strides[-2::-1]],
            "box": box[::-1], "element_strides": [1] * len(sizes)}


def encode_tensor_map(step: dict, address: int) -> np.ndarray:
    """The 128 bytes of the tensor map of a `tensor_map` step, as 16 uint64: the CUDA
    driver's cuTensorMapEncodeTiled (CUDA 12 drivers and newer), called through ctypes
    (`PE_CUDA_DRIVER` names another driver library, as for libpe_cuda_runtime)."""
    import ctypes
    import os

    args = tensor_map_arguments(step, address)
    rank = args["rank"]
    driver = os.environ.get("PE_CUDA_DRIVER") or "libcuda.so.1"
    encode = ctypes.CDLL(driver).cuTensorMapEncodeTiled
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    encode.restype = ctypes.c_int
    encode.argtypes = [ctypes.c_void_p, ctypes.c_int, u32, ctypes.c_void_p,
                       ctypes.POINTER(u64), ctypes.POINTER(u64), ctypes.POINTER(u32),
                       ctypes.POINTER(u32), ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int]
    # CUtensorMap: 128 bytes, 64-byte aligned.
    storage = (ctypes.c_uint8 * 192)()
    aligned = (ctypes.addressof(storage) + 63) & ~63
    result = encode(aligned, step["data_type"], rank, args["address"],
                    (u64 * rank)(*args["dims"]), (u64 * max(rank - 1, 1))(*args["strides"]),
                    (u32 * rank)(*args["box"]), (u32 * rank)(*args["element_strides"]),
                    step["interleave"], step["swizzle"], step["l2_promotion"], step["oob_fill"])
    if result != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed with CUDA error {result} for {step}")
    return np.frombuffer(ctypes.string_at(aligned, 128), dtype=np.uint64).copy()


def find_function(manifest: dict, name: str) -> dict:
    for fn in manifest["functions"]:
        if fn["name"] == name:
            if not fn["replayable"]:
                raise ValueError(f"{name} is not replayable (dynamic shapes)")
            return fn
    raise KeyError(name)


class CupyFunction:
    """A manifest function on the GPU: `fn(*device_arrays) -> [device arrays]`."""

    def __init__(self, manifest: dict, binary_path: str, name: str):
        import cupy as cp  # only on a machine with a GPU

        self.cp = cp
        self.fn = find_function(manifest, name)
        self.module = cp.RawModule(path=binary_path)
        self.kernels: Dict[str, Tuple[object, list]] = {
            k["name"]: (self.module.get_function(k["name"]), k["params"])
            for k in manifest["kernels"]}
        self._opted_in: Dict[str, int] = {}

    def __call__(self, *arguments, launch_events: list | None = None):
        """Runs the steps on the current stream. `launch_events`, if given, receives
        (kernel, start event, stop event) recorded around each launch, for timing."""
        cp = self.cp
        if len(arguments) != len(self.fn["arguments"]):
            raise TypeError(f"{self.fn['name']} takes {len(self.fn['arguments'])} arguments")
        buffers: Dict[int, object] = {}
        slots: Dict[int, np.ndarray] = {}  # error records read back from kernels

        def base(view):
            return arguments[view["argument"]] if "argument" in view else buffers[view["buffer"]]

        def address(view):
            return int(base(view).data.ptr)

        for step in self.fn["steps"]:
            op = step["op"]
            if op == "alloc":
                buffers[step["buffer"]] = cp.empty(step["bytes"], dtype=cp.uint8)
            elif op == "free":
                buffers.pop(step["buffer"])
            elif op == "copy":
                to, src = step["to"], step["from"]
                cp.cuda.runtime.memcpyAsync(
                    address(to) + to["offset"] * ELEMENT_BYTES[to["element"]],
                    address(src) + src["offset"] * ELEMENT_BYTES[src["element"]],
                    step["bytes"], cp.cuda.runtime.memcpyDeviceToDevice,
                    cp.cuda.get_current_stream().ptr)
            elif op == "check_aligned":
                view = step["to"]
                first = address(view) + view["offset"] * ELEMENT_BYTES[view["element"]]
                if first % step["bytes"]:
                    raise ValueError(f"{view} is not {step['bytes']}-byte aligned")
            elif op == "tensor_map":
                # A device copy of the map (64-byte aligned: CuPy allocates 256).
                words = encode_tensor_map(step, address(step["of"]))
                buffers[step["buffer"]] = cp.asarray(words)
            elif op == "read_record":
                view = step["from"]
                record = cp.empty(view["sizes"][0], dtype=cp.int64)
                cp.cuda.runtime.memcpy(record.data.ptr, address(view) + 8 * view["offset"],
                                       step["bytes"], cp.cuda.runtime.memcpyDeviceToDevice)
                slots[step["slot"]] = cp.asnumpy(record)
            elif op == "check_record":
                record = slots[step["slot"]]
                if record[0] != 0:
                    values = ", ".join(str(v) for v in record[1:1 + step["arguments"]])
                    raise RuntimeError(f"{step['report']}({values})")
            elif op == "launch":
                kernel, params = self.kernels[step["kernel"]]
                shared = step.get("shared_bytes", 0)
                if shared > self._opted_in.get(step["kernel"], DEFAULT_SHARED_BYTES):
                    self._opt_in(step["kernel"], kernel, shared)
                launch_args = tuple(kernel_arguments(params, step["args"], address))
                if launch_events is not None:
                    start, stop = cp.cuda.Event(), cp.cuda.Event()
                    start.record()
                kernel(tuple(step["grid"]), tuple(step["block"]), launch_args,
                       shared_mem=shared)
                if launch_events is not None:
                    stop.record()
                    launch_events.append((step["kernel"], start, stop))
            else:
                raise ValueError(f"unknown manifest step {op!r}")
        return [self._result(base(view), view) for view in self.fn["returns"]]

    def _opt_in(self, name: str, kernel, shared: int) -> None:
        """Lets `kernel` launch with `shared` bytes of dynamic shared memory, above
        the 48 KiB CUDA allows without asking (as libpe_cuda_runtime's launch does)."""
        self.cp.cuda.driver.funcSetAttribute(kernel.ptr, MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
        self._opted_in[name] = shared

    def _result(self, buffer, view):
        """The returned view as a CuPy array (bf16 as its 16-bit patterns)."""
        cp = self.cp
        size = ELEMENT_BYTES[view["element"]]
        dtype = {"f32": cp.float32, "f16": cp.float16, "bf16": cp.uint16, "f64": cp.float64,
                 "i64": cp.int64, "i32": cp.int32}[view["element"]]
        raw = buffer if buffer.dtype == cp.uint8 else buffer.view(cp.uint8).reshape(-1)
        memory = raw.data + view["offset"] * size
        return cp.ndarray(tuple(view["sizes"]), dtype=dtype, memptr=memory,
                          strides=tuple(s * size for s in view["strides"]))
