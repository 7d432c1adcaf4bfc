//===- ObjectCache.cpp - object files of earlier compilations -------------===//
#include "ObjectCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::pe::driver;

/// Bumped whenever pe-compile changes how it runs LLVM on a module (the
/// optimization pipeline, the target machine's options), which the key
/// would not see otherwise.
static constexpr StringLiteral kFormat = "pe-object-cache 1";

/// Hex of the BLAKE3 hash of everything that determines the object.
static std::string keyOf(const llvm::Module &module, const llvm::TargetMachine &machine,
                         unsigned optLevel) {
  llvm::BLAKE3 hash;
  // Each field ends with a NUL, so that no two lists of fields hash alike.
  auto field = [&](StringRef text) {
    hash.update(text);
    hash.update(ArrayRef<uint8_t>{0});
  };
  field(kFormat);
  field(LLVM_VERSION_STRING);
  field(machine.getTargetTriple().str());
  field(machine.getTargetCPU());
  field(machine.getTargetFeatureString());
  field(std::to_string(optLevel));
  SmallVector<char, 0> bitcode;
  llvm::raw_svector_ostream stream(bitcode);
  llvm::WriteBitcodeToFile(module, stream);
  hash.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bitcode.data()),
                                bitcode.size()));
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

ObjectCache::ObjectCache(StringRef dir, const llvm::Module &module,
                         const llvm::TargetMachine &machine, unsigned optLevel)
    : dir(dir.str()) {
  SmallString<256> path(dir);
  llvm::sys::path::append(path, keyOf(module, machine, optLevel) + ".o");
  entry = path.str().str();
}

std::unique_ptr<llvm::MemoryBuffer> ObjectCache::lookup() const {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> object =
      llvm::MemoryBuffer::getFile(entry, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  return object ? std::move(*object) : nullptr;
}

llvm::Error ObjectCache::store(StringRef object) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create the cache folder '" + dir +
                                           "': " + ec.message());
  // A file of its own first: another compilation may be reading the entry
  // or writing the same one.
  SmallString<256> temporary;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(entry + ".%%%%%%%%.tmp", fd,
                                                          temporary))
    return llvm::createStringError(ec, "cannot write into the cache folder '" + dir +
                                           "': " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << object;
    os.close();
    if (os.has_error()) {
      llvm::sys::fs::remove(temporary);
      return llvm::createStringError(os.error(), "cannot write '" + temporary.str() + "'");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, entry)) {
    llvm::sys::fs::remove(temporary);
    return llvm::createStringError(ec, "cannot write '" + entry + "': " + ec.message());
  }
  return llvm::Error::success();
}
