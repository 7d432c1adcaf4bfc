// RUN: pe-opt %s --pe-destination-entries --verify-diagnostics --split-input-file

// expected-error @below {{pe-destination-entries: the destination-passing entry of @f would be @f_into, which the module already defines}}
func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}
func.func @f_into(%x: memref<4xf32>) {
  return
}
