// A learned table read at a runtime position outside [0, rows) stops with a
// message naming the position, its entry and the table size, and exit
// status 1; in-range positions read their rows.
// RUN: not pe-compile %s --emit=jit > %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=CHECK-OUT < %t.out
// RUN: FileCheck %s --check-prefix=CHECK-ERR < %t.err

// CHECK-OUT: {{\[}}[1, 1],
// CHECK-OUT-NEXT: [3, 3],
// CHECK-OUT-NEXT: [0, 0]]
// CHECK-OUT-NOT: Memref
// CHECK-ERR: pe.learned: position 4 (entry 1) is out of range for a table of 4 rows

func.func private @printMemrefF32(tensor<*xf32>)

func.func @lookup(%table: tensor<4x2xf32>, %pos: tensor<?xi64>) -> tensor<?x2xf32> {
  %e = pe.learned %table[%pos] : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  return %e : tensor<?x2xf32>
}

func.func @main() {
  %table = arith.constant dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>
  %ok = arith.constant dense<[1, 3, 0]> : tensor<3xi64>
  %okd = tensor.cast %ok : tensor<3xi64> to tensor<?xi64>
  %rows = call @lookup(%table, %okd) : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %u = tensor.cast %rows : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %bad = arith.constant dense<[0, 4, -1]> : tensor<3xi64>
  %badd = tensor.cast %bad : tensor<3xi64> to tensor<?xi64>
  %never = call @lookup(%table, %badd) : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %n = tensor.cast %never : tensor<?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%n) : (tensor<*xf32>) -> ()
  return
}
