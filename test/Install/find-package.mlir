// `cmake --install` produces a package that a downstream CMake project finds
// with find_package(PE), builds against and runs.
// REQUIRES: downstream
// RUN: rm -rf %t && mkdir -p %t
// RUN: %cmake --install %pe_obj --prefix %t/prefix > %t/install.log
// RUN: test -f %t/prefix/lib/cmake/PE/PEConfig.cmake
// RUN: test -x %t/prefix/bin/pe-opt
// RUN: %cmake -G "%generator" -S %S/Inputs/downstream -B %t/build \
// RUN:   -DCMAKE_PREFIX_PATH=%t/prefix -DMLIR_DIR=%mlir_dir \
// RUN:   -DCMAKE_CXX_COMPILER=%cxx -DCMAKE_BUILD_TYPE=Release > %t/configure.log
// RUN: %cmake --build %t/build > %t/build.log
// RUN: %t/build/pe-downstream < %s | FileCheck %s

// CHECK-LABEL: func.func @slopes
// CHECK: arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03, 5.000000e-01, 1.250000e-01]> : tensor<6xf32>
func.func @slopes() -> tensor<6xf32> {
  // Six heads: 2^(-8(h+1)/4) for h < 4, then 2^(-4(2j+1)/4) for j < 2
  // (docs/variants.md, "ALiBi", gives [1/4, 1/16, 1/64, 1/256, 1/2, 1/8]).
  %s = pe.alibi_slopes : tensor<6xf32>
  return %s : tensor<6xf32>
}
