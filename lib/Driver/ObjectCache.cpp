//===- ObjectCache.cpp - object files of earlier compilations -------------===//
#include "ObjectCache.h"

#include "llvm-c/Core.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::pe::driver;

/// Bumped whenever pe-compile changes how it runs LLVM on a module in a
/// way the key does not see: the optimization pipeline, the target
/// machine's TargetOptions.
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
  // The LLVM that runs (a shared library), not the one pe was built with.
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  field(llvm::formatv("{0}.{1}.{2}", major, minor, patch).str());
  field(machine.getTargetTriple().str());
  field(machine.getTargetCPU());
  field(machine.getTargetFeatureString());
  field(llvm::formatv("reloc {0} code {1} codegen {2} opt {3}",
                      static_cast<int>(machine.getRelocationModel()),
                      static_cast<int>(machine.getCodeModel()),
                      static_cast<int>(machine.getOptLevel()), optLevel)
            .str());
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
  if (!object)
    return nullptr;
  // Anything but a relocatable object (a file damaged outside pe-compile)
  // is a miss, which the compilation then replaces.
  switch (llvm::identify_magic((*object)->getBuffer())) {
  case llvm::file_magic::elf_relocatable:
  case llvm::file_magic::macho_object:
  case llvm::file_magic::coff_object:
    return std::move(*object);
  default:
    return nullptr;
  }
}

llvm::Error ObjectCache::store(StringRef object) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create the cache folder '" + dir +
                                           "': " + ec.message());
  // A file of its own first (removed if the process dies), then renamed:
  // another compilation may be reading the entry or writing the same one.
  llvm::Expected<llvm::sys::fs::TempFile> temporary =
      llvm::sys::fs::TempFile::create(entry + ".%%%%%%%%.tmp");
  if (!temporary)
    return temporary.takeError();
  llvm::raw_fd_ostream os(temporary->FD, /*shouldClose=*/false);
  os << object;
  os.flush();
  if (std::error_code ec = os.error()) {
    os.clear_error(); // an error left on the stream is fatal when it closes
    llvm::consumeError(temporary->discard());
    return llvm::createStringError(ec, "cannot write into the cache folder '" + dir +
                                           "': " + ec.message());
  }
  return temporary->keep(entry);
}
