//===- PEGPU.h - kernel-level ops of the GPU code generation ----*- C++ -*-===//
#ifndef PE_DIALECT_PEGPU_IR_PEGPU_H
#define PE_DIALECT_PEGPU_IR_PEGPU_H

#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "pe/Dialect/PEGPU/IR/PEGPUOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "pe/Dialect/PEGPU/IR/PEGPUOps.h.inc"

#endif // PE_DIALECT_PEGPU_IR_PEGPU_H
