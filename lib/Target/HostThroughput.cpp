//===- HostThroughput.cpp - measured instruction rates of the host --------===//
//
// Two loops of 12 independent accumulator chains (more than latency x
// pipes on every x86 core in use), one of vfmadd231ps and one of vdpbf16ps
// on 512-bit vectors, timed in alternation; each rate is the best of the
// rounds, so a round the operating system interrupted does not count. A
// warm-up runs first: cores lower their clock for 512-bit work a while
// after it starts.
//
//===----------------------------------------------------------------------===//
#include "pe/Target/HostThroughput.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PE_HOST_PROBE_X86 1
#endif

using namespace mlir;
using namespace mlir::pe;

namespace {

/// The host CPU's name and its features, sorted: what the cache is keyed on.
std::string hostKey() {
  std::vector<std::string> features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      features.push_back(feature.first().str());
  std::sort(features.begin(), features.end());
  std::string key = llvm::sys::getHostCPUName().str();
  for (const std::string &feature : features)
    key += "," + feature;
  return key;
}

#ifdef PE_HOST_PROBE_X86
constexpr long kIterations = 1 << 14;
constexpr int kRounds = 15;

using Clock = std::chrono::steady_clock;

__attribute__((target("avx512f"))) float sumLanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0;
  for (float lane : lanes)
    sum += lane;
  return sum;
}

// The chains are spelled out: an array of vectors is not always kept in
// registers.
#define PE_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
// Each chain starts elsewhere, so that no two are the same computation.
#define PE_DECLARE(i) __m512 acc##i = _mm512_set1_ps(seed + i);
#define PE_SUM(i) total = _mm512_add_ps(total, acc##i);

/// Seconds for kIterations x 12 vdpbf16ps (`Dot`: 12 x 16 x 4 flops a
/// round; bf16 pairs of 1.0, 0x3f80, so every product adds 2 to its lane) or
/// vfmadd231ps (12 x 16 x 2 flops). Both need AVX512-BF16 on the host, which
/// the caller checks.
template <bool Dot>
__attribute__((target("avx512f,avx512bf16"), noinline)) double chainSeconds(float seed,
                                                                             float *sink) {
  PE_CHAINS(PE_DECLARE)
  const __m512 a = _mm512_set1_ps(seed), b = _mm512_set1_ps(1.0f - seed);
  const __m512bh pairs = (__m512bh)_mm512_set1_epi32(0x3f803f80);
  auto start = Clock::now();
  for (long i = 0; i < kIterations; ++i) {
#define PE_STEP(i)                                                                       \
  acc##i = Dot ? _mm512_dpbf16_ps(acc##i, pairs, pairs) : _mm512_fmadd_ps(a, b, acc##i);
    PE_CHAINS(PE_STEP)
#undef PE_STEP
  }
  std::chrono::duration<double> seconds = Clock::now() - start;
  __m512 total = _mm512_setzero_ps();
  PE_CHAINS(PE_SUM)
  *sink += sumLanes(total);
  return seconds.count();
}
#undef PE_SUM
#undef PE_DECLARE
#undef PE_CHAINS

HostThroughput measure() {
  // The seed comes from memory the compiler cannot see through, and the
  // sums go back to it, so neither loop is folded away.
  static volatile float seed = 0.5f;
  float sink = 0;
  for (int warmup = 0; warmup < 40; ++warmup)
    chainSeconds<false>(seed, &sink);
  double fma = 1e30, dot = 1e30;
  for (int round = 0; round < kRounds; ++round) {
    fma = std::min(fma, chainSeconds<false>(seed, &sink));
    dot = std::min(dot, chainSeconds<true>(seed, &sink));
  }
  seed = sink == 0 ? 0.5f : seed;
  const double vectors = 12.0 * kIterations * 16;
  return {vectors * 2 / fma / 1e9, vectors * 4 / dot / 1e9};
}
#endif

std::optional<HostThroughput> readCache(const std::string &file, const std::string &key) {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  if (!buffer)
    return std::nullopt;
  llvm::Expected<llvm::json::Value> value = llvm::json::parse((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *object = value->getAsObject();
  if (!object || object->getString("host") != llvm::StringRef(key))
    return std::nullopt;
  std::optional<double> fma = object->getNumber("fma_gflops");
  std::optional<double> dot = object->getNumber("bf16_dot_gflops");
  if (!fma || !dot || !(*fma > 0) || !(*dot > 0))
    return std::nullopt;
  return HostThroughput{*fma, *dot};
}

/// Writes the rates next to the cache file and renames them into place, so
/// that a process reading it never sees half a file. Failures only cost a
/// measurement in the next process.
void writeCache(const std::string &file, const std::string &key,
                const HostThroughput &rates) {
  llvm::StringRef dir = llvm::sys::path::parent_path(file);
  if (llvm::sys::fs::create_directories(dir))
    return;
  int fd;
  llvm::SmallString<256> temporary;
  if (llvm::sys::fs::createUniqueFile(dir + "/.throughput-%%%%%%.json", fd, temporary))
    return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"host", key},
                                     {"fma_gflops", rates.fmaGflops},
                                     {"bf16_dot_gflops", rates.bf16DotGflops},
                                 }))
       << "\n";
  }
  if (llvm::sys::fs::rename(temporary, file))
    llvm::sys::fs::remove(temporary);
}

} // namespace

std::string pe::hostThroughputCacheFile() {
  llvm::SmallString<256> dir;
  if (std::optional<std::string> explicitDir = llvm::sys::Process::GetEnv("PE_CACHE_DIR")) {
    dir = *explicitDir;
  } else if (std::optional<std::string> xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME")) {
    dir = *xdg;
    llvm::sys::path::append(dir, "pe-mlir");
  } else if (llvm::sys::path::home_directory(dir)) {
    llvm::sys::path::append(dir, ".cache", "pe-mlir");
  } else {
    return {};
  }
  llvm::sys::path::append(
      dir, llvm::formatv("throughput-{0:x16}.json", llvm::xxh3_64bits(hostKey())).str());
  return dir.str().str();
}

std::optional<HostThroughput> pe::hostThroughput() {
#ifdef PE_HOST_PROBE_X86
  static std::once_flag once;
  static std::optional<HostThroughput> rates;
  std::call_once(once, [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    if (!features.lookup("avx512f") || !features.lookup("avx512bf16"))
      return;
    const std::string key = hostKey(), file = hostThroughputCacheFile();
    if (!file.empty())
      rates = readCache(file, key);
    if (rates)
      return;
    rates = measure();
    if (!file.empty())
      writeCache(file, key, *rates);
  });
  return rates;
#else
  return std::nullopt;
#endif
}
