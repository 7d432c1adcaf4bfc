//===- ObjectCache.h - object files of earlier compilations ---*- C++ -*-===//
//
// pe-compile --object-cache=DIR (or PE_OBJECT_CACHE): the object files it
// made before, in DIR. An object is determined by the LLVM module that the
// pipelines produce, before LLVM's optimization, and by how LLVM compiles
// it: the target machine (triple, CPU, features, relocation and code
// models, code generation level), the optimization level and the version
// of the LLVM library that runs. Those are the key (a BLAKE3 hash, the file
// name), so a module that comes out of the pipelines as it did before skips
// LLVM's optimization and code generation, most of a CPU compilation's
// time. The pipelines themselves run every time; a command line with one of
// LLVM's own options (`--unroll-threshold`, ...) does not use the cache.
// Entries are written under a temporary name and renamed, so that
// compilations sharing the folder read whole files only; an entry that is
// not an object is a miss and is replaced. Nothing is ever removed (delete
// the folder to empty it).
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_DRIVER_OBJECTCACHE_H
#define PE_LIB_DRIVER_OBJECTCACHE_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::pe::driver {

class ObjectCache {
public:
  /// The entry of `module` (not yet optimized) compiled by `machine` at
  /// `optLevel`, in the folder `dir`.
  ObjectCache(StringRef dir, const llvm::Module &module, const llvm::TargetMachine &machine,
              unsigned optLevel);

  /// The cached object, or null when the folder has none for this key.
  std::unique_ptr<llvm::MemoryBuffer> lookup() const;
  /// Stores `object` under this key, creating the folder if needed.
  llvm::Error store(StringRef object) const;

private:
  std::string dir, entry;
};

} // namespace mlir::pe::driver

#endif // PE_LIB_DRIVER_OBJECTCACHE_H
