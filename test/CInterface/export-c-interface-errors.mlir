// RUN: pe-opt %s --pass-pipeline="builtin.module(func.func(pe-request-c-wrappers), \
// RUN:   convert-func-to-llvm, pe-export-c-interface{prefix=k_})" --verify-diagnostics

// An exported name that is already a symbol is refused.
// expected-error @below {{pe-export-c-interface: the exported name 'k_f' is already a symbol of the module: choose another prefix}}
func.func @f() {
  return
}
func.func @k_f() {
  return
}
