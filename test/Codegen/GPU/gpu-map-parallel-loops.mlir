// RUN: pe-opt %s --pe-gpu-map-parallel-loops -canonicalize -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not pe-opt %s --pe-gpu-map-parallel-loops="block-size=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-BLOCK
// RUN: not pe-opt %s --pe-gpu-map-parallel-loops="max-blocks=2147483648" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-GRID
// BAD-BLOCK: block-size must be in [1, 1024], got 0
// BAD-GRID: max-blocks must be in [1, 2^31 - 1], got 2147483648

// A 3-D nest with dynamic bounds, a lower bound and a step becomes one launch
// over N = 3 * ceil((n1 - 2) / 2) * n2 points, skipped when N = 0; blocks of
// 256 threads, at most 65536 blocks, each thread striding by the grid; the
// indices come back from the linear one, the innermost fastest.
// CHECK-LABEL: func.func @nest
// CHECK-SAME: (%[[A:.*]]: memref<3x?x?xf32>, %[[N1:.*]]: index, %[[N2:.*]]: index)
// CHECK: %[[D1:.*]] = arith.subi %[[N1]], %c2
// CHECK: %[[E1:.*]] = arith.maxsi %[[D1]], %c0
// CHECK: %[[T1:.*]] = arith.ceildivui %[[E1]], %c2
// CHECK: %[[P1:.*]] = arith.muli %[[T1]], %c3
// CHECK: %[[T2:.*]] = arith.maxsi %[[N2]], %c0
// CHECK: %[[N:.*]] = arith.muli %[[P1]], %[[T2]]
// CHECK: %[[ANY:.*]] = arith.cmpi sgt, %[[N]], %c0
// CHECK: scf.if %[[ANY]] {
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[N]], %c256
// CHECK: %[[GRID:.*]] = arith.minui %[[BLOCKS]], %c65536
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%[[GX:.*]] = %[[GRID]], %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) module(@pe_kernels) function(@nest_kernel_0)
// CHECK: %[[B0:.*]] = arith.muli %[[BX]], %c256
// CHECK: %[[FIRST:.*]] = arith.addi %[[B0]], %[[TX]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GX]], %c256
// CHECK: scf.for %[[T:.*]] = %[[FIRST]] to %[[N]] step %[[STRIDE]] {
// CHECK: %[[IDX:.*]]:3 = affine.delinearize_index %[[T]] into (3, %[[T1]], %[[T2]])
// CHECK: %[[J0:.*]] = arith.muli %[[IDX]]#1, %c2
// CHECK: %[[J:.*]] = arith.addi %[[J0]], %c2
// CHECK: memref.store %{{.*}}, %[[A]][%[[IDX]]#0, %[[J]], %[[IDX]]#2]
func.func @nest(%a: memref<3x?x?xf32>, %n1: index, %n2: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c2, %c0) to (%c3, %n1, %n2) step (%c1, %c2, %c1) {
    memref.store %cst, %a[%i, %j, %k] : memref<3x?x?xf32>
    scf.reduce
  }
  return
}

// -----

// The kernel name is a PTX identifier, with a hash of the function name
// when that had to change (so @"my-rope" and @my_rope cannot share kernel
// names). (pe-gpu-sink-constants later moves the constant table's
// get_global into the launch.)
// CHECK-LABEL: func.func @"my-rope"
// CHECK: memref.get_global @table
// CHECK: gpu.launch {{.*}} module(@pe_kernels) function(@my_rope_{{[0-9a-f]+}}_kernel_0) {
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @"my-rope"(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.get_global @table : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %t[%i] : memref<4xf32>
    memref.store %v, %a[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// Host work that touches buffers runs in one GPU thread: a sequential
// reduction, and a scalar read that goes through a device scratch element
// and a gpu.memcpy to the host.
// CHECK-LABEL: func.func @reduce
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) module(@pe_kernels) function(@reduce_kernel_0) {
// CHECK-NEXT: scf.for
// CHECK: %[[SCRATCH:.*]] = gpu.alloc () : memref<1xi64>
// CHECK: gpu.launch {{.*}} function(@reduce_kernel_1) {
// CHECK-NEXT: %[[V:.*]] = memref.load %{{.*}}[] : memref<i64>
// CHECK-NEXT: memref.store %[[V]], %[[SCRATCH]][%c0]
// CHECK: %[[SLOT:.*]] = memref.alloca() : memref<1xi64>
// CHECK: gpu.memcpy %[[SLOT]], %[[SCRATCH]]
// CHECK: gpu.dealloc %[[SCRATCH]]
// CHECK: %[[R:.*]] = memref.load %[[SLOT]][%c0]
// CHECK: return %[[R]]
func.func @reduce(%a: memref<?xi64>, %out: memref<i64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xi64>
    %m = memref.load %out[] : memref<i64>
    %y = arith.maxsi %x, %m : i64
    memref.store %y, %out[] : memref<i64>
  }
  %r = memref.load %out[] : memref<i64>
  return %r : i64
}

// -----

// A run-time error report inside a kernel: the first thread to reach it
// claims a device record (zeroed by a one-thread kernel) and writes its
// arguments; the host makes the call after the launch if the record was
// claimed.
// CHECK-LABEL: func.func @report
// CHECK: %[[RECORD:.*]] = gpu.alloc () : memref<3xi64>
// CHECK: gpu.launch {{.*}} function(@report_kernel_1)
// CHECK-COUNT-3: memref.store %c0_i64, %[[RECORD]]
// CHECK: gpu.launch {{.*}} function(@report_kernel_0)
// CHECK: %[[PREV:.*]] = memref.atomic_rmw assign %c1_i64, %[[RECORD]][%c0]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[PREV]], %c0_i64
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.store %{{.*}}, %[[RECORD]][%c1]
// CHECK: memref.store %{{.*}}, %[[RECORD]][%c2]
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<3xi64>
// CHECK: gpu.memcpy %[[HOST]], %[[RECORD]]
// CHECK: gpu.dealloc %[[RECORD]]
// CHECK: %[[CLAIMED:.*]] = memref.load %[[HOST]][%c0]
// CHECK: %[[YES:.*]] = arith.cmpi ne, %[[CLAIMED]], %c0_i64
// CHECK: scf.if %[[YES]] {
// CHECK: %[[A0:.*]] = memref.load %[[HOST]][%c1]
// CHECK: %[[A1:.*]] = memref.load %[[HOST]][%c2]
// CHECK: %[[I:.*]] = arith.index_cast %[[A1]] : i64 to index
// CHECK: func.call @error(%[[A0]], %[[I]]) : (i64, index) -> ()
func.func private @error(i64, index)
func.func @report(%a: memref<?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xi64>
    %bad = arith.cmpi slt, %x, %zero : i64
    scf.if %bad {
      func.call @error(%x, %i) : (i64, index) -> ()
    }
    scf.reduce
  }
  return
}

// -----

// A sequential loop that only reads and reports (an op's check of each entry
// of an index tensor) has independent iterations: one launch of 256-thread
// blocks over them, as for scf.parallel. A loop that stores, one that holds
// a loop, or one that calls anything but the runtime's reports runs in one
// thread.
// CHECK-LABEL: func.func @check_loop
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c256
// CHECK: gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, {{.*}} function(@check_loop_kernel_0)
// CHECK: memref.atomic_rmw assign
// CHECK: func.call @pe_runtime_slot_out_of_range
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) module(@pe_kernels) function(@check_loop_kernel_2)
// CHECK: scf.for
// CHECK: memref.store
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) module(@pe_kernels) function(@check_loop_kernel_3)
// CHECK: scf.for
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) module(@pe_kernels) function(@check_loop_kernel_5)
// CHECK: scf.for
// CHECK: scf.for
func.func private @pe_runtime_slot_out_of_range(i64, index)
func.func private @other(i64, index)
func.func @check_loop(%a: memref<?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xi64>
    %bad = arith.cmpi slt, %x, %zero : i64
    scf.if %bad {
      func.call @pe_runtime_slot_out_of_range(%x, %i) : (i64, index) -> ()
    }
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xi64>
    %y = arith.addi %x, %x : i64
    memref.store %y, %a[%i] : memref<?xi64>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xi64>
    func.call @other(%x, %i) : (i64, index) -> ()
  }
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %x = memref.load %a[%j] : memref<?xi64>
      %bad = arith.cmpi slt, %x, %zero : i64
      scf.if %bad {
        func.call @pe_runtime_slot_out_of_range(%x, %i) : (i64, index) -> ()
      }
    }
  }
  return
}

// -----

func.func @with_reduction(%a: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{with reductions cannot be mapped to GPU threads}}
  %s = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %a[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%x: f32, %y: f32):
      %z = arith.addf %x, %y : f32
      scf.reduce.return %z : f32
    }
  }
  return %s : f32
}

// -----

func.func private @compute(i64) -> i64
func.func @call_with_result(%a: memref<?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xi64>
    // expected-error @+1 {{in a GPU kernel must take integers and return nothing}}
    %y = func.call @compute(%x) : (i64) -> i64
    memref.store %y, %a[%i] : memref<?xi64>
    scf.reduce
  }
  return
}
