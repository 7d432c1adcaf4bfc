// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-request-c-wrappers))" | FileCheck %s

// Public functions and declarations get the C interface, public
// definitions their buffer signature for pe-export-c-interface; private
// definitions neither.
// CHECK: func.func private @runtime() attributes {llvm.emit_c_interface}
// CHECK: func.func @entry() attributes {llvm.emit_c_interface, pe.c_interface = () -> ()}
// CHECK: func.func private @kernel() {
func.func private @runtime()
func.func @entry() {
  call @kernel() : () -> ()
  return
}
func.func private @kernel() {
  call @runtime() : () -> ()
  return
}
