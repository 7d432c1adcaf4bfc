// pe-cpu-pipeline: RoPE vectorized to 512-bit vectors and compiled to
// AVX-512 FMAs on zmm registers.
// RUN: pe-opt %s --pe-set-target="triple=x86_64-linux-gnu cpu=skylake-avx512" --pe-lower-to-linalg --canonicalize --linalg-fuse-elementwise-ops \
// RUN:   --pe-tile-and-vectorize | FileCheck %s --check-prefix=CHECK-VEC
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=skylake-avx512" | FileCheck %s --check-prefix=CHECK-LLVM
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=skylake-avx512" | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O3 -mcpu=sapphirerapids | FileCheck %s --check-prefix=CHECK-ASM
// RUN: pe-compile %s --emit=asm --mcpu=sapphirerapids -o - | FileCheck %s --check-prefix=CHECK-ASM
// The pipeline's target options reach llc through function attributes:
// RUN: pe-opt %s --pe-cpu-pipeline="target-cpu=skylake-avx512 target-features=+avx512f" \
// RUN:   | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=CHECK-ATTR
// RUN: pe-opt %s --pe-cpu-pipeline="target-cpu=skylake-avx512" | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O3 | FileCheck %s --check-prefix=CHECK-ASM
// vector-width sets the linalg path's vectors (the pe-tile-* kernels use
// 512-bit vectors, which LLVM splits on narrower machines):
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=skylake-avx512 vector-width=8 tile-rope=false" | FileCheck %s --check-prefix=CHECK-YMM
// RUN: pe-opt %s --pe-cpu-pipeline="target-triple=x86_64-linux-gnu target-cpu=skylake-avx512 threads=2" | FileCheck %s --check-prefix=CHECK-OMP
// RUN: not pe-opt %s --pe-cpu-pipeline=vector-width=-1 2>&1 | FileCheck %s --check-prefix=CHECK-BADWIDTH

// With threads, an outer parallel loop becomes an OpenMP parallel loop on 2
// threads; without, there is no OpenMP.
// CHECK-OMP: omp.parallel num_threads
// CHECK-OMP: omp.wsloop
// CHECK-LLVM-NOT: omp.

// CHECK-BADWIDTH: error: pe-cpu-pipeline: vector-width must be in [0, 64] (0: the target's), but got -1

// CHECK-VEC-LABEL: func.func @rope
// The tables first, once per (position, frequency): the angle reduction in
// f64 on 16 lanes.
// CHECK-VEC: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf64>
// CHECK-VEC: math.cos %{{.*}} : vector<16xf32>
// Then the rotation x0 cos - x1 sin and x1 cos + x0 sin on 16 f32 lanes.
// CHECK-VEC: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-VEC: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>

// CHECK-LLVM: llvm.func @rope(
// CHECK-LLVM: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// pe-tile-rope writes the rotated rows with aligned non-temporal stores.
// CHECK-LLVM: llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK-LLVM: llvm.func @_mlir_ciface_rope(
// CHECK-LLVM-NOT: linalg.
// CHECK-LLVM-NOT: {{= pe\.|^ *pe\.}}

// (rope_shared with pe-compile: the body that @rope and @rope_into call)
// CHECK-ASM-LABEL: {{^rope(_shared)?:}}
// CHECK-ASM: vf{{n?}}m{{add|sub}}{{[0-9]+}}ps {{.*}}%zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// CHECK-ASM: vmovntps %zmm{{[0-9]+}}

// CHECK-ATTR: define {{.*}} @rope({{.*}} #[[ATTRS:[0-9]+]]
// CHECK-ATTR: attributes #[[ATTRS]] = { {{.*}}"target-cpu"="skylake-avx512" "target-features"="+avx512f"

// CHECK-YMM: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
func.func @rope(%x: tensor<1x32x?x128xf32>, %p: tensor<?xi32>) -> tensor<1x32x?x128xf32> {
  %y = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>> %x, %p : tensor<1x32x?x128xf32>, tensor<?xi32>
  return %y : tensor<1x32x?x128xf32>
}
