# PE_PRECOMPILED_HEADERS (on by default): the upstream headers that most of
# pe-mlir's sources include are parsed once, into the precompiled header of
# the target PEPrecompiledHeaders, and every pe library (pe_add_library)
# reuses it. Parsing those headers is most of a source's compile time: a
# 40-line pass took 22 s with GCC 12, 3.4 s with the precompiled header. A
# compiler that cannot use it (other flags) parses the headers as before.
option(PE_PRECOMPILED_HEADERS "Precompile the common MLIR headers once for every pe library" ON)

# The headers: the dialects and IR utilities that most sources include.
set(PE_PRECOMPILED_HEADER_LIST
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Bufferization/IR/Bufferization.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/LLVMIR/NVVMDialect.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/Dialect/Vector/IR/VectorOps.h>
  <mlir/IR/ImplicitLocOpBuilder.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/PassManager.h>
  <mlir/Transforms/DialectConversion.h>)

# Flags that every pe library's sources get beyond the directory's
# (pe_add_library), which the precompiled header must be built with too.
function(pe_library_compile_flags name)
  if(PE_BUILD_FUZZER)
    # Coverage counters for libFuzzer (its runtime comes with pe-fuzz; the
    # sanitizer runtime of the other tools provides the callbacks).
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

if(PE_PRECOMPILED_HEADERS)
  # A library of one empty source, built as the pe libraries are, whose
  # precompiled header they reuse. ccache is not asked to store the header
  # (over 1 GiB with GCC).
  add_mlir_library(PEPrecompiledHeaders
    ${CMAKE_CURRENT_LIST_DIR}/PrecompiledHeaders.cpp
    EXCLUDE_FROM_LIBMLIR DISABLE_INSTALL
    LINK_LIBS PUBLIC MLIR)
  pe_library_compile_flags(PEPrecompiledHeaders)
  target_precompile_headers(PEPrecompiledHeaders PRIVATE ${PE_PRECOMPILED_HEADER_LIST})
  set_target_properties(PEPrecompiledHeaders PROPERTIES
    C_COMPILER_LAUNCHER "" CXX_COMPILER_LAUNCHER "")
endif()

# Makes `name` (a pe library) use the precompiled header, without ccache:
# ccache would preprocess each source with the headers in full (-E cannot
# read a precompiled header), which costs more than it saves.
function(pe_use_precompiled_headers name)
  if(PE_PRECOMPILED_HEADERS)
    target_precompile_headers(${name} REUSE_FROM PEPrecompiledHeaders)
    set_target_properties(${name} PROPERTIES C_COMPILER_LAUNCHER "" CXX_COMPILER_LAUNCHER "")
  endif()
endfunction()
