# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "PE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pe_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

config.pe_tools_dir = os.path.join(config.pe_obj_root, "bin")
config.pe_libs_dir = os.path.join(config.pe_obj_root, "lib")
config.substitutions.append(("%pe_libs", config.pe_libs_dir))
config.substitutions.append(("%pe_src", config.pe_src_root))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%generator", config.cmake_generator))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%pe_obj", config.pe_obj_root))

# The install + downstream build test compiles a program (about half a
# minute); PE_SKIP_DOWNSTREAM=1 leaves it out of quick runs.
# A sanitized build has no plugin (it could not load into the stock mlir-opt)
# and its installed libraries need the sanitizer runtime downstream.
if not config.pe_sanitize:
    config.available_features.add("plugin")
else:
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0:allow_user_poisoning=0"
if os.environ.get("PE_SKIP_DOWNSTREAM") != "1" and not config.pe_sanitize:
    config.available_features.add("downstream")

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# The stock mlir-opt must come from LLVM's tools directory, never ours.
tool_dirs = [config.pe_tools_dir, config.llvm_tools_dir]
# Every pe-opt run also checks that its input and output print and parse
# back (text, generic form, bytecode) to the same IR.
from lit.llvm.subst import ToolSubst
llvm_config.add_tool_substitutions(
    [ToolSubst("pe-opt", extra_args=["--verify-roundtrip"]), "pe-compile", "pe-lsp-server"],
    tool_dirs)
llvm_config.add_tool_substitutions(["mlir-opt", "mlir-translate", "llc"], [config.llvm_tools_dir])
config.substitutions.append(("%cc", config.c_compiler))
import sys
config.substitutions.append(("%python", sys.executable))

# Code generated for the host needs AVX-512 to be checked for zmm registers
# (the pe-compile --mcpu tests do not).
try:
    with open("/proc/cpuinfo") as f:
        if " avx512f" in f.read():
            config.available_features.add("avx512")
except OSError:
    pass

# GPU binaries (cubin, fatbin) and their validation need ptxas from a CUDA
# toolkit (CUDA_ROOT, CUDA_HOME, CUDA_PATH, PATH, then /usr/local/cuda); PTX
# itself needs no CUDA. PE_HIDE_CUDA=1 runs the suite as on a machine
# without CUDA. The toolkit is passed to pe-compile explicitly
# (%cuda_toolkit), since tests run with a minimal environment.
import shutil
def find_ptxas():
    for var in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return os.path.join(root, "bin", "ptxas")
    found = shutil.which("ptxas")
    if found:
        return found
    default = "/usr/local/cuda/bin/ptxas"
    return default if os.access(default, os.X_OK) else None
ptxas = None if os.environ.get("PE_HIDE_CUDA") == "1" else find_ptxas()
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(("%cuda_toolkit", os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))))

# GPU libraries (pe-compile --target=gpu --emit=shared) link the CUDA launch
# runtime, built when CUDA headers were found at configure time.
if os.path.exists(os.path.join(config.pe_libs_dir, "libpe_cuda_runtime.so")):
    config.available_features.add("cuda-runtime")

# SASS checks need cuobjdump: a CUDA toolkit's, or the one the optional
# extras bring (PyTorch's triton ships cuobjdump and nvdisasm). Hidden with
# the rest of CUDA by PE_HIDE_CUDA=1.
import glob
def find_cuobjdump():
    candidates = [shutil.which("cuobjdump")]
    if ptxas:
        candidates.append(os.path.join(os.path.dirname(ptxas), "cuobjdump"))
    candidates += sorted(glob.glob(os.path.join(
        config.pe_src_root, ".venv", "lib", "python3*", "site-packages", "triton",
        "backends", "nvidia", "bin", "cuobjdump")))
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    return None
cuobjdump = None if os.environ.get("PE_HIDE_CUDA") == "1" else find_cuobjdump()
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
