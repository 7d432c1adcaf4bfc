//===- GpuMmaAttention.cpp - pe-gpu-mma-attention -------------------------===//
//
// pe_gpu.mma_attention as a flash-attention kernel on the tensor cores of
// sm_80 and newer (mma.sync m16n8k16, bf16/f16 operands, f32 accumulators).
//
// Rows. Query head h = kvh G + g of KV head kvh (G = Hq / Hkv) and query i
// make row r = i G + g of KV head kvh: the rows of one KV head, query-major.
// A block of kWarps warps takes kBlockRows consecutive rows of one (batch,
// KV head), warp w rows 16 w .. 16 w + 15 of them, so that every head of a
// GQA/MQA group shares the block's K/V tiles; mma.sync prefill takes wide
// blocks of kWideBlockWarps warps over 128 rows (takesWideBlock). Value
// heads over 256 channels (absorbed latent attention) take two channel
// groups of kWarps warps on the same rows: each multiplies its half of the
// head dim, the halves of S are added through shared memory, and each
// accumulates its half of the value channels (kMaxGroupValueDim).
//
// Fragments (PTX ISA, mma.m16n8k16): lane l = 4 gq + tq of a warp holds
//   A (16 x 16, row-major):  rows gq and gq + 8, columns 2 tq + {0, 1} and
//                            2 tq + 8 + {0, 1}  (four 32-bit registers)
//   B (16 x 8, column-major): column gq, rows 2 tq + {0, 1} and
//                            2 tq + 8 + {0, 1}  (two registers)
//   C (16 x 8, f32):         rows gq and gq + 8, columns 2 tq + {0, 1}
// so the accumulators of two adjacent 8-key blocks of S are, rounded to
// bf16/f16, the A fragment of P for the 16 keys of one step of P V.
//
// Per block:
//   Qs <- rope(q) of the block's rows, read from global memory once,
//         rotated in f32 and rounded to the element type
//   for each tile of tileKeys keys (64; 32 for head dims over 64, over 128
//   on warpgroup MMA and in wide blocks; 16 for value heads over 128), skipped
//   when causal/window masks hide it from every row of the block:
//     Vs[t % 2], Ks <- v and k tiles unless the tile before copied them
//                  (cp.async, zero past the last key); Vs[(t + 1) % 2] <- v
//                  of the next tile
//     (keys rotated in the kernel: Ks <- rope(k tile), rotated in f32 and
//      rounded; without rope, or when the keys come rotated, `rotated_keys`,
//      they are copied)
//     wait for all copies but the next tile's V
//     S = Qs Ks^T                 mma.sync, fragments by ldmatrix x4 / x2
//                                 (two channel groups: each its half of the
//                                 channels, the halves added through shared
//                                 memory after a barrier)
//     Ks <- the next tile's k     once every warp has read Ks (a barrier)
//     s = scale S (+ ALiBi, + mask; -inf where masked or past the last key,
//         tested only in the tiles that need it)
//     m' = max(m, rowmax s)       quad shuffles: a row lives in 4 lanes
//     p = exp(s - m'), alpha = exp(m - m'), l = alpha l + rowsum p
//                                 (as 2^(s log2 e - m' log2 e): FMA, ex2.approx)
//     O = alpha O + P Vs[t % 2]   mma.sync, B fragments by ldmatrix.trans
//   out = O / l                   (l summed over the quad; 0 for l = 0)
// Decode (splits(n)): the grid also runs over n ranges of the keys, and a
// block stores its range's O and (m, l) for the merge instead of out.
//
// with the formulas of the shared builders (RopeBuilders,
// AttentionBuilders). The sum l adds the f32 weights; P is rounded to the
// element type only as the operand of P V (as FlashAttention does). Rows of
// shared memory are padded by kPad elements, which puts the eight rows an
// ldmatrix reads in distinct banks.
//
// Warpgroup MMA (sm_90a, option `warpgroup`): the block's four warps are one
// warpgroup and each product is a chain of wgmma.mma_async m64nNk16, B read
// from shared memory through matrix descriptors:
//   S  = Qs Ks^T   A = Qs (64 x D), B = Ks (keys x D): both K-major
//   O += P Vs      A = P from registers (the rounded weights, where the
//                  lanes hold them), B = Vs (keys x Dv): MN-major
// The accumulator of m64nN (PTX ISA, wgmma D fragment) gives warp w rows
// 16 w + gq and + 8 and, per 8 columns j, columns 8 j + 2 tq + {0, 1}, in
// registers 4 j .. 4 j + 3 - the mma.sync C fragment of the warp's rows, so
// masking, softmax and output are shared, and the accumulators of two
// adjacent 8-key blocks of S, rounded, are the register A fragment of one
// 16-key step of P V (the warp's 16 rows in mma.sync's A layout). Tiles are stored as 8 x 8 core
// matrices without swizzle (element (r, c) at [c / 8][r][c % 8], 8 rows of
// 16 bytes contiguous): for a K-major operand the 8-row groups are 128 bytes
// apart (SBO) and the 8-element chunks of K (rows + 1) 16 bytes apart (LBO);
// for V, MN-major, 8-key groups are 128 bytes apart (LBO) and chunks of Dv
// (rows + 1) 16 bytes apart (SBO). The spare row of each chunk takes the
// idle copies of a tile and starts chunks in different banks. Threads and
// cp.async write through the generic proxy, wgmma reads through the async
// proxy: every write is fenced (fence.proxy.async) before the barrier that
// precedes the products that read it.
//
// Warp specialization (sm_90a prefill, default or explicit positions, K read
// as it is, option `warpSpecialize`): three warpgroups over 128 rows, a
// producer that copies K and V into four stages synchronized by mbarriers
// and two consumers that each run the tile loop above on 64 rows without
// copies or block barriers, software-pipelined (S of a tile issued with P V
// of the tile before) and taking turns to issue (WarpSpecializedPipeline).
// With option `tma` (and head dims that are multiples of 64 read from
// buffers whose channels are contiguous, takesTma) the producer is one
// thread that loads each stage by TMA: per 64-channel slice of K and of V
// a box of tileKeys rows of 128 bytes with 128-byte swizzle (16-byte chunk
// c of row r at chunk c ^ (r mod 8), the pattern repeating every 1024
// bytes), completing the stage's full mbarrier by its transaction bytes;
// the consumers read those tiles through swizzled matrix descriptors
// (layout type 1): K K-major, a k16 step 32 bytes into the 128-byte rows
// and the next slice tileKeys x 128 bytes on, 8-row groups 1024 bytes
// apart (SBO); V MN-major, a k16 step 16 rows (2048 bytes) on, 8-key
// groups 1024 bytes apart (SBO) and 64-channel slices tileKeys x 128 bytes
// apart (LBO). The host encodes one tensor map per operand
// (nvgpu.tma.create.descriptor) before the launch.
//
// The code: MmaKernelState (sizes, indices, helpers, and the hooks of a
// product engine), MmaTileStaging (Qs, Ks, Vs filled), MmaOnlineSoftmax (a
// tile's scores and the softmax over them), MmaAttentionKernel (the
// pipeline above), WarpSpecializedPipeline (its producer/consumer form),
// and one product engine per instruction family: MmaSyncKernel and
// WarpgroupKernel (tile layouts, copies, S = Q K^T and O += P V).
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PEGPU/IR/PEGPU.h"
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"


#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <limits>
#include <tuple>
#include <numeric>

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUMMAATTENTION
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

constexpr int64_t kWarpSize = 32;
/// Warps of one channel group: 16 rows each, the block's 64 rows.
constexpr int64_t kWarps = 4;
/// Warps of a wide mma.sync block (takesWideBlock): 128 rows.
constexpr int64_t kWideBlockWarps = 8;
constexpr int64_t kThreads = kWarps * kWarpSize;
/// Rows of an m16n8k16 product: the rows of one warp.
constexpr int64_t kWarpRows = 16;
constexpr int64_t kBlockRows = kWarps * kWarpRows;
constexpr int64_t kWideBlockRows = kWideBlockWarps * kWarpRows;
static_assert(kBlockRows == kMmaAttentionBlockRows, "the block's rows, as GpuKernels.h states");
/// How far a tile's max may exceed a row's running max m before the row
/// takes it (softmaxWeights): 8 ln 2, so that weights exp(s - m) stay at
/// most 2^8.
constexpr double kKeptMaxGrowth = 8 * M_LN2;
/// Keys per K/V tile (tileKeysFor): eight 8-key blocks of S, four 16-key
/// steps of P V; on mma.sync half as many for head dims over 64, whose
/// query fragments and output accumulators leave fewer of a thread's 255
/// registers to the scores; 16 (one step of P V) for value heads over
/// kWideValueDim channels, whose rows of O alone are dv / 2 f32 registers
/// a thread (dv / 4 with two channel groups). Warpgroup MMA reads Q from
/// shared memory, so heads up to kWarpgroupWideHeadDim keep 64-key tiles
/// (D = 128: the loop's fixed cost of a tile - barriers, waits,
/// descriptors - spread over twice the keys, 12.8 SASS instructions per
/// key against 17.3 with 32-key tiles; 65 KiB of dynamic shared memory,
/// three blocks per sm_90a multiprocessor as the registers allowed before).
/// The wide mma.sync blocks of prefill (takesWideBlock) keep 64-key tiles
/// up to 128 channels as well.
constexpr int64_t kTileKeys = 64;
constexpr int64_t kWideHeadDim = 64;
constexpr int64_t kWideValueDim = 128;
constexpr int64_t kWarpgroupWideHeadDim = 128;
/// Value heads over 192 channels stay on mma.sync on sm_90a too: warpgroup
/// MMA's 64 x dv accumulator, its descriptors and the scores' masks exceed
/// a thread's 255 registers (ptxas spills at dv = 256 with a window).
constexpr int64_t kMaxWarpgroupValueDim = 192;
/// Value heads over kMaxGroupValueDim channels (absorbed latent attention:
/// D = 576, Dv = 512) are split between two channel groups of kWarps warps
/// (256 threads): both hold the block's 64 rows; each computes S over its
/// half of the head dim, the halves are added through shared memory (the
/// same sum in both groups: addition commutes), both run the same online
/// softmax, and each accumulates O over its half of the value channels
/// (Dv / 4 registers a thread: 128 at Dv = 512). mma.sync only.
constexpr int64_t kMaxGroupValueDim = pe_gpu::kMaxMmaGroupValueDim;
static_assert(kMaxWarpgroupValueDim <= kMaxGroupValueDim,
              "warpgroup MMA kernels have one channel group");
/// Shared memory a block has without asking (CUDA's static limit); tiles
/// beyond it are dynamic shared memory, which the runtime opts the kernel
/// into at launch. Head dims up to 256 need at most 66.5 KiB (D = 256, Dv
/// = 128, 32-key tiles on mma.sync), within the per-block maximum of every sm_80+ chip
/// (99 KiB on sm_86, sm_89 and sm_120; 163 KiB on sm_80; 227 KiB on sm_90
/// and sm_100); absorbed latent attention's two channel groups (D = 576,
/// Dv = 512) 132 KiB, which the pipeline gives the tensor cores only on the
/// chips that allow it (mmaAttentionSharedBytes). kMaxSharedBytes: the
/// largest any chip allows a block (the verifier's head dims stay within).
constexpr int64_t kStaticSharedBytes = 48 * 1024;
[[maybe_unused]] constexpr int64_t kMaxSharedBytes = 227 * 1024;
/// Elements (16 bytes) added to each shared-memory row.
constexpr int64_t kPad = 8;
/// Elements of one cp.async (16 bytes of bf16/f16).
constexpr int64_t kCopyLanes = 8;
/// V tiles in flight: the next tile's V is copied while this one's is used.
constexpr int64_t kValueStages = 2;
/// Warp specialization (sm_90a prefill, WarpSpecializedPipeline): two
/// consumer warpgroups of kBlockRows rows each and a producer warpgroup
/// that copies K and V into kSpecializedStages stages. Four: a consumer
/// holds two (S of tile n, P V of tile n - 1), the producer fills the next
/// two, and a tile's stage is released one iteration after its S, so that
/// with three the producer's wait for an empty stage (which precedes its
/// marking the tile before full) would tie a consumer's tile n to the
/// other consumer's finishing tile n - 1 and undo the ping-pong. (162 KiB
/// of shared memory at D = 128, 180 KiB at most.)
constexpr int64_t kConsumerGroups = 2;
constexpr int64_t kSpecializedStages = 4;
/// setmaxnreg moves registers from the producer (cp.async addresses only)
/// to the consumers (S, P, the last tile's P words and O of 64 rows), a
/// pair (producer, consumer) per tile size: with 64-key tiles the
/// consumers hold 64 scores and 16 words a lane and take 240 (the producer
/// keeps 24: 8 + 8 copies a thread at D = 128); with 32-key tiles (head
/// dims over 128) they hold half as many, and the producer, whose row
/// pieces grow with the head dim, keeps 40 (24 spill its addresses at D
/// = 256), as it does where explicit positions under masks make it find the
/// hidden tiles from loaded positions (24 spill there: S = 512, window,
/// f16 D = 64). Both: 128 x producer + 256 x consumer of the SM's 65536.
constexpr std::pair<int32_t, int32_t> kWideTileRegisters = {24, 240};
constexpr std::pair<int32_t, int32_t> kNarrowTileRegisters = {40, 232};
/// A block of 384 threads starts with 65536 / 384 registers a thread,
/// rounded down to a multiple of 8: 168 (ptxas allocates that maximum to a
/// kernel with setmaxnreg; the tests check it). setmaxnreg.inc draws from
/// what the block's setmaxnreg.dec released, so the budgets must balance.
constexpr int64_t kSpecializedEntryRegisters =
    65536 / (kThreads * (kConsumerGroups + 1)) / 8 * 8;
constexpr bool balances(std::pair<int32_t, int32_t> registers) {
  return registers.first + kConsumerGroups * registers.second <=
         (kConsumerGroups + 1) * kSpecializedEntryRegisters;
}
static_assert(balances(kWideTileRegisters) && balances(kNarrowTileRegisters),
              "the consumers' registers come from the producer's");
/// A core matrix of wgmma operands: 8 rows of 16 bytes.
constexpr int64_t kCoreRows = 8;
constexpr int64_t kCoreRowBytes = 16;
/// Alignment of every shared tile (cp.async, ldmatrix, wgmma descriptors).
constexpr int64_t kSharedAlignment = 16;
/// TMA with 128-byte swizzle (takesTma): a box row is one 128-byte swizzle
/// row (64 bf16/f16 channels), and the pattern repeats every 8 rows, 1024
/// bytes, where the tiles start (aligned at run time: the block's shared
/// memory promises 16 bytes; kSwizzleAtomBytes spare bytes make room).
constexpr int64_t kSwizzleRowBytes = 128;
constexpr int64_t kSwizzleAtomBytes = kCoreRows * kSwizzleRowBytes;
/// wgmma's matrix descriptor layout type of 128-byte swizzle (bits 62-63).
constexpr uint64_t kSwizzle128Layout = uint64_t(1) << 62;

/// Keys per K/V tile for head dims d and dv on the engine `warpgroup`
/// names, in a wide mma.sync block or not (kTileKeys).
int64_t tileKeysFor(int64_t d, int64_t dv, bool warpgroup, bool wideBlock = false) {
  if (dv > kWideValueDim)
    return kTileKeys / 4;
  const int64_t wide = warpgroup || wideBlock ? kWarpgroupWideHeadDim : kWideHeadDim;
  return std::max(d, dv) > wide ? kTileKeys / 2 : kTileKeys;
}

/// Channel groups of the block for value heads of dv channels
/// (kMaxGroupValueDim).
int64_t channelGroupsFor(int64_t dv) { return dv > kMaxGroupValueDim ? 2 : 1; }

/// Whether the kernel of value heads of dv channels runs on warpgroup MMA
/// when the pass's `warpgroup` option asks for it (kMaxWarpgroupValueDim).
bool takesWarpgroupMma(bool warpgroup, int64_t dv) {
  return warpgroup && dv <= kMaxWarpgroupValueDim;
}

/// The shape of a shared tile of `rows` rows of `width` elements: for
/// mma.sync rows of `width + kPad` elements (ldmatrix's eight row addresses
/// fall in different banks); for warpgroup MMA [width / 8][rows + 1][8],
/// the 8-element chunks of core matrices with a spare row per chunk.
SmallVector<int64_t> tileShapeOf(bool warpgroup, int64_t rows, int64_t width) {
  if (warpgroup)
    return {width / kCopyLanes, rows + 1, kCopyLanes};
  return {rows, width + kPad};
}

/// The f32 tile through which two channel groups add their halves of S:
/// [warps, 8-key blocks, lanes, 4], each lane's C fragment of a block 16
/// contiguous bytes (a warp's stores and loads free of bank conflicts).
SmallVector<int64_t> exchangeShapeOf(int64_t d, int64_t dv) {
  return {kWarps * channelGroupsFor(dv), tileKeysFor(d, dv, /*warpgroup=*/false) / 8, kWarpSize, 4};
}

/// Bytes of the K and V stages loaded by TMA (takesTma): kSpecializedStages
/// of tileKeys rows of d, then of dv, channels, unpadded, plus the room to
/// start them on a kSwizzleAtomBytes boundary.
int64_t kvTmaBytesOf(int64_t d, int64_t dv, int64_t tileKeys, int64_t elementBytes) {
  return kSpecializedStages * tileKeys * (d + dv) * elementBytes + kSwizzleAtomBytes;
}

/// Bytes of every shared tile of a block, each from a 16-byte boundary
/// (their sizes are multiples of 16): Q, the K and V stages, with two
/// channel groups the exchange of S, and warp-specialized (`specialized`)
/// the full and empty mbarrier of each stage. `wideBlock`: a wide mma.sync
/// block (takesWideBlock).
int64_t blockSharedBytesOf(int64_t d, int64_t dv, int64_t elementBytes, bool warpgroup,
                           bool specialized = false, bool wideBlock = false, bool tma = false) {
  const int64_t tileKeys = tileKeysFor(d, dv, warpgroup, wideBlock);
  const int64_t rows = specialized ? kConsumerGroups * kBlockRows
                       : wideBlock ? kWideBlockRows
                                   : kBlockRows;
  const int64_t keyStages = specialized ? kSpecializedStages : 1;
  const int64_t valueStages = specialized ? kSpecializedStages : kValueStages;
  auto bytes = [&](ArrayRef<int64_t> shape) { return llvm::product_of(shape) * elementBytes; };
  int64_t total = bytes(tileShapeOf(warpgroup, rows, d));
  if (tma)
    total += kvTmaBytesOf(d, dv, tileKeys, elementBytes);
  else
    total += keyStages * bytes(tileShapeOf(warpgroup, tileKeys, d)) +
             valueStages * bytes(tileShapeOf(warpgroup, tileKeys, dv));
  if (channelGroupsFor(dv) > 1)
    total += llvm::product_of(exchangeShapeOf(d, dv)) * 4;
  if (specialized)
    total += 2 * kSpecializedStages * 8;
  return total;
}

/// Whether the rows of a KV head's query group (its query heads times the
/// queries) are static and at most kBlockRows: one 64-row tile, where a
/// block of two row tiles would leave half of its warps idle.
bool fitsOneRowTile(pe_gpu::MmaAttentionOp op) {
  auto query = op.getQuery().getType();
  const int64_t group = query.getDimSize(1) / op.getKey().getType().getDimSize(1);
  return !query.isDynamicDim(2) && query.getDimSize(2) * group <= kBlockRows;
}

/// Whether the warpgroup-MMA kernel of `op` is warp-specialized when the
/// pass's `warpSpecialize` asks for it: prefill (no key range splits) with
/// K read as it is (no keys rotated in the kernel: the producer's few
/// registers copy, they do not rotate). With explicit positions the
/// producer finds the tiles the masks hide as the consumers do, from the
/// tile's key positions (tileVisibility).
bool takesWarpSpecialization(bool warpSpecialize, pe_gpu::MmaAttentionOp op) {
  const bool rotatesKeys = op.getRopeAttr() && !op.getRotatedKeys();
  // One row tile would leave the second consumer idle.
  return warpSpecialize && !op.getSplits() && !rotatesKeys && !fitsOneRowTile(op) &&
         channelGroupsFor(op.getValue().getType().getDimSize(3)) == 1;
}

/// Whether the warp-specialized kernel of `op` loads K and V by TMA when
/// the pass's `tma` asks for it: head dims that are whole 128-byte swizzle
/// rows (multiples of 64 two-byte elements), read from buffers whose
/// channels are contiguous (a tensor map's innermost dimension) and whose
/// strides do not grow inward (as the driver documents a tensor map's:
/// identity layouts, or static strides in that order).
bool takesTma(bool tma, bool specialized, pe_gpu::MmaAttentionOp op) {
  auto sliced = [](MemRefType type) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
      return false;
    const bool ordered =
        type.getLayout().isIdentity() ||
        (llvm::none_of(strides, ShapedType::isDynamic) &&
         llvm::is_sorted(strides, [](int64_t x, int64_t y) { return x > y; }));
    return ordered &&
           type.getDimSize(3) * type.getElementTypeBitWidth() / 8 % kSwizzleRowBytes == 0;
  };
  return tma && specialized && sliced(op.getKey().getType()) && sliced(op.getValue().getType());
}

/// The largest wide block: D = Dv = 128 of 2-byte elements, Q of 128 rows,
/// K and two V stages of 64 keys, rows padded by kPad. The chips with the
/// least shared memory a block (sm_86, sm_89, sm_120) allow 99 KiB, so
/// every op the tensor cores take (suitsTensorCores checks the 4-warp
/// block) fits its wide block as well.
constexpr int64_t kLargestWideBlockBytes =
    (kWideBlockRows + 3 * kTileKeys) * (kWideValueDim + kPad) * 2;
static_assert(kLargestWideBlockBytes <= 99 * 1024, "a wide block fits every sm_80+ chip");

/// Whether the mma.sync kernel of `op` takes wide blocks, as
/// FlashAttention-2 does on sm_80: prefill (no key range splits) with head
/// dims up to kWideValueDim and one channel group runs kWideBlockWarps
/// warps over 128 rows, with 64-key tiles (tileKeysFor). Each K/V tile is
/// then copied once for twice the rows (half the copies and the L2 reads
/// of K and V per row) and its fixed cost (barriers, the wait for its
/// copies) is spread over twice the keys: the llama3 prefill loop of
/// attention-sass.test runs 14.7 SASS instructions a key instead of 19.4.
/// ptxas gives such a thread up to 255 registers (the scores of 64 keys,
/// a D = 128 accumulator, the query fragments) without spills: one block,
/// 8 warps, per multiprocessor, as two 4-warp blocks of 32-key tiles
/// were. Shared memory: 85 KiB at D = 128 (within the 99 KiB of every
/// sm_80+ chip), 45 KiB at D = 64. A static 64 rows or fewer keep the
/// 4-warp block (half of a wide one would idle).
bool takesWideBlock(pe_gpu::MmaAttentionOp op) {
  return !op.getSplits() && !fitsOneRowTile(op) &&
         mmaAttentionTakesWideBlocks(op.getQuery().getType().getDimSize(3),
                                     op.getValue().getType().getDimSize(3));
}

/// The key range `range` = [begin, end) of a block cut to the keys its rows
/// can see, with the default positions (key j at position j, the block's
/// query positions `queries` = [qMin, qMax], i64): causal, none after qMax;
/// a window of W, none W or more before qMin and, without causal, none W or
/// more after qMax. The start stays on the tile grid of the range (begin +
/// n `tileKeys`). The kernel's loop then visits the visible tiles only
/// (causal prefill: about half as many), and still skips a tile inside the
/// range that the masks hide from every row.
std::pair<Value, Value> visibleKeyRange(ImplicitLocOpBuilder &b, const PositionMask &mask,
                                        std::pair<Value, Value> queries,
                                        std::pair<Value, Value> range, int64_t tileKeys) {
  auto [qMin, qMax] = queries;
  auto [begin, end] = range;
  auto constant = [&](int64_t v) { return arith::ConstantOp::create(b, b.getI64IntegerAttr(v)); };
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  // max(position, 0) as an index.
  auto nonNegative = [&](Value position) {
    return arith::IndexCastOp::create(b, b.getIndexType(),
                                      arith::MaxSIOp::create(b, position, constant(0)));
  };
  // Default positions are below 2^40 apart: a wider window hides nothing
  // more, and the sums below cannot overflow.
  const int64_t window = mask.window ? std::min<int64_t>(*mask.window, int64_t(1) << 40) : 0;
  // The first key hidden after qMax: qMax + 1 (causal), qMax + W (a window).
  end = arith::MinUIOp::create(
      b, end, nonNegative(arith::AddIOp::create(b, qMax, constant(mask.causal ? 1 : window))));
  if (mask.window) {
    // The first key that qMin sees: qMin - W + 1.
    Value first = nonNegative(arith::SubIOp::create(b, qMin, constant(window - 1)));
    Value skipped =
        arith::SubIOp::create(b, arith::MaxUIOp::create(b, first, begin), begin);
    skipped = arith::MulIOp::create(
        b, arith::DivUIOp::create(b, skipped, index(tileKeys)), index(tileKeys));
    begin = arith::AddIOp::create(b, begin, skipped);
  }
  return {begin, end};
}

/// The row of a lane in the A/C fragments: which of the two it is (gq or
/// gq + 8), whether it exists, and its query, head and positions.
struct LaneRow {
  /// `scale`: the f32 factor of the row's scores (the softmax scale, times
  /// the row's temperature where the op tunes it); `scaleLog2`: scale
  /// log2(e), the exponent's factor of a raw score (rawScores).
  Value valid, i, h, qp, slope, scale, scaleLog2;
};

/// What the kernel's parts share: the op, its sizes, the block's and the
/// thread's indices, the shared tiles, the index and float helpers, and the
/// hooks through which a product engine (mma.sync or wgmma) shapes the
/// tiles and computes S = Q K^T and O += P V.
class MmaKernelState {
public:
  MmaKernelState(ImplicitLocOpBuilder &b, pe_gpu::MmaAttentionOp op, bool warpgroup,
                 bool specialized = false, bool tma = false)
      : b(b), op(op), warpgroup(warpgroup), specialized(specialized),
        wideBlock(!warpgroup && takesWideBlock(op)), tmaLoads(takesTma(tma, specialized, op)),
        rope(op.getRopeAttr()),
        rotateKeys(rope && !op.getRotatedKeys()), explicitPositions(!op.getDefaultPositions()),
        mask{op.getCausal(), op.getWindow(), op.getChunk()} {
    element = op.getQuery().getType().getElementType();
    group = op.getQuery().getType().getDimSize(1) / op.getKey().getType().getDimSize(1);
    d = op.getQuery().getType().getDimSize(3);
    dv = op.getValue().getType().getDimSize(3);
    tileKeys = tileKeysFor(d, dv, warpgroup, wideBlock);
    channelGroups = channelGroupsFor(dv);
    assert((channelGroups == 1 || !warpgroup) && "channel groups run on mma.sync");
    threads = kThreads * channelGroups;
    groupHeadDim = d / channelGroups;
    valueBlocks = dv / channelGroups / 8;
    assert((!specialized || (warpgroup && !rotateKeys && !op.getSplits())) &&
           "takesWarpSpecialization");
    blockRows = specialized ? kConsumerGroups * kBlockRows : kBlockRows;
    if (wideBlock) {
      blockRows = kWideBlockRows;
      threads = kWideBlockWarps * kWarpSize;
    }
    keyStages = specialized ? kSpecializedStages : 1;
    valueStages = specialized ? kSpecializedStages : kValueStages;
    if (specialized)
      threads = kThreads * (kConsumerGroups + 1);
    copyThreads = specialized ? kThreads : threads;
  }
  virtual ~MmaKernelState() = default;

protected:
  //===--------------------------------------------------------------------===//
  // The product engine
  //===--------------------------------------------------------------------===//

  /// The shape of a shared tile of `rows` rows of `width` elements.
  SmallVector<int64_t> tileShape(int64_t rows, int64_t width) const {
    return tileShapeOf(warpgroup, rows, width);
  }
  /// The indices of element (row, col) of a shared tile (sharedTile); col
  /// is a multiple of the accessed vector's length, at most 8.
  virtual SmallVector<Value> tileIndex(Value row, Value col) = 0;
  /// (row, first column) of copy w of a K/V tile whose rows have `chunks`
  /// 16-byte pieces.
  virtual std::pair<Value, Value> copyPiece(Value w, int64_t chunks) = 0;
  /// (row, column) of 16 bytes of a K/V tile of rows of n elements that no
  /// product reads: where the copies past the last land.
  virtual std::pair<int64_t, int64_t> spareSlot(int64_t n) const = 0;
  /// Shared tiles of the engine's own, declared beside Qs, Ks and Vs, and
  /// bound in the kernel after them (blockSharedBytesOf counts them).
  virtual void declareEngineTiles(SymbolTable &symbols) {}
  virtual void bindEngineTiles() {}
  /// Before the barrier after the block's writes to shared memory.
  virtual void fenceSharedWrites() {}
  /// Warp-specialized: the consumer warpgroup's rows of Qs start at row
  /// `firstRow` (index) of the tile.
  virtual void bindConsumerRows(Value firstRow) {}
  /// S = Q K^T of the tile: the four f32 accumulators of each 8-key block
  /// (mma.sync's C fragment layout).
  virtual SmallVector<SmallVector<Value>> products() = 0;
  /// O += P V of the tile (stage `stage` of Vs), O in `state[4..]`.
  virtual void accumulateValues(SmallVector<Value> &state, ArrayRef<SmallVector<Value>> weights,
                                Value stage) = 0;
  /// Warpgroup MMA: the weights rounded into the register A words of
  /// O += P V, and that product on such words (accumulateValues in two
  /// steps, so that the words of one tile can wait for the next).
  virtual SmallVector<Value> weightWords(ArrayRef<SmallVector<Value>> weights) {
    llvm_unreachable("warpgroup MMA only");
  }
  virtual void accumulateWords(SmallVector<Value> &state, ArrayRef<Value> words, Value stage) {
    llvm_unreachable("warpgroup MMA only");
  }

  /// A tile of shared memory (sharedTile): a static memref.global, or
  /// `offset` bytes into the block's dynamic shared memory.
  struct SharedTile {
    MemRefType type;
    memref::GlobalOp global;
    int64_t offset = 0;
  };

  /// A tile of `rows` rows of `width` elements in shared memory (`stages`
  /// of them, the leading dimension, when more than one), in address space
  /// 3, 16-byte aligned for cp.async, ldmatrix and wgmma descriptors,
  /// shaped by the engine (tileShape): a memref.global when the block's
  /// tiles fit the static shared memory, else the next 16-byte aligned
  /// bytes of its dynamic shared memory (`dynamicShared`; the launch asks
  /// for `sharedBytes`). (Outlining copies a global into the kernel's
  /// module. The integer address space, unlike
  /// #gpu.address_space<workgroup>, needs no mapping in the vector dialect's
  /// own LLVM lowering.)
  SharedTile sharedTile(SymbolTable &symbols, StringRef name, int64_t rows, int64_t width,
                        int64_t stages = 1) {
    SmallVector<int64_t> shape = tileShape(rows, width);
    if (stages > 1)
      shape.insert(shape.begin(), stages);
    return sharedBuffer(symbols, name, shape, element);
  }

  /// A buffer of `shape` x `type` in shared memory, as sharedTile places
  /// its tiles.
  SharedTile sharedBuffer(SymbolTable &symbols, StringRef name, ArrayRef<int64_t> shape,
                          Type type) {
    auto memrefType =
        MemRefType::get(shape, type, MemRefLayoutAttrInterface(), b.getI64IntegerAttr(3));
    const int64_t offset = llvm::alignTo(sharedBytes, kSharedAlignment);
    sharedBytes = offset + llvm::product_of(shape) * type.getIntOrFloatBitWidth() / 8;
    if (dynamicShared)
      return {memrefType, nullptr, offset};
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&symbols.getOp()->getRegion(0).front());
    auto global = memref::GlobalOp::create(b, name, b.getStringAttr("private"), memrefType,
                                           b.getUnitAttr(), /*constant=*/false,
                                           b.getI64IntegerAttr(kSharedAlignment));
    symbols.insert(global);
    return {memrefType, global, offset};
  }

  /// Bytes of every shared tile of the block (blockSharedBytesOf).
  int64_t blockSharedBytes() const {
    return blockSharedBytesOf(d, dv, element.getIntOrFloatBitWidth() / 8, warpgroup,
                              specialized, wideBlock, tmaLoads);
  }

  /// The shared-memory address of a buffer (i64).
  Value sharedAddress(Value tile) {
    Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, tile);
    return arith::IndexCastUIOp::create(b, b.getI64Type(), address);
  }

  /// The tile in the kernel: its global, or a view of the dynamic shared
  /// memory (one gpu.dynamic_shared_memory per kernel, cast to address
  /// space 3).
  Value bindTile(SharedTile tile) {
    if (tile.global)
      return memref::GetGlobalOp::create(b, tile.type, tile.global.getSymName());
    if (!dynamicBase) {
      auto bytes = [&](Attribute space) {
        return MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
                               space);
      };
      Value base = gpu::DynamicSharedMemoryOp::create(
          b, bytes(gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup)));
      dynamicBase = memref::MemorySpaceCastOp::create(b, bytes(b.getI64IntegerAttr(3)), base);
    }
    return memref::ViewOp::create(b, tile.type, dynamicBase, index(tile.offset), ValueRange{});
  }

  ImplicitLocOpBuilder &b;
  pe_gpu::MmaAttentionOp op;
  /// The engine: warpgroup MMA (else mma.sync); warp-specialized
  /// (WarpSpecializedPipeline); a wide mma.sync block (takesWideBlock); K
  /// and V loaded by TMA (takesTma).
  bool warpgroup, specialized, wideBlock, tmaLoads;
  RopeAttr rope;
  /// Whether the kernel rotates the keys (not when they come rotated), and
  /// whether positions are read (q_positions / k_positions) rather than
  /// computed.
  bool rotateKeys, explicitPositions;
  PositionMask mask;
  Type element;
  int64_t group, d, dv, tileKeys;
  /// Channel groups (kMaxGroupValueDim), the block's threads, the query/key
  /// channels of a group, and the 8-channel blocks of O a lane accumulates
  /// (its group's).
  int64_t channelGroups, threads, groupHeadDim, valueBlocks;
  /// Rows of the block (kBlockRows per consumer warpgroup when
  /// specialized, kWideBlockWarps x 16 in a wide block), stages of Ks and
  /// Vs, and the threads that copy K and V (the producer's when
  /// specialized).
  int64_t blockRows, keyStages, valueStages, copyThreads;
  /// Whether the tiles are in dynamic shared memory (more than the static
  /// 48 KiB), and the bytes of the tiles declared so far.
  bool dynamicShared = false;
  int64_t sharedBytes = 0;
  Value dynamicBase;
  Value queries, keys, rows, qs, ks, vs, key, value;
  /// TMA (tmaLoads): the K and V stages' bytes in shared memory (ks and vs
  /// stay null), and the tensor maps of K and V (!llvm.ptr, made on the
  /// host).
  Value kv, keyMap, valueMap;
  /// Warp-specialized: the shared address (i64) of the stages' mbarriers,
  /// kSpecializedStages "full" ones, then as many "empty" ones.
  Value barriers;
  /// Decode: the number of key ranges (null otherwise) and their length.
  Value splits, splitKeys;
  // Per thread.
  Value bi, kvh, tid, lane, gq, tq, r0, warpRow;
  /// With two channel groups: the thread's, its warp and the warp of the
  /// other group with the same rows, and the first channel of its half of
  /// the head dim and of the value heads (null with one group).
  Value channelGroup, warp, partnerWarp, queryChannelBase, valueChannelBase;
  /// The block's keys [keyBegin, keyEnd) (all, or its split's) and split.
  Value keyBegin, keyEnd, split;
  /// The stage of Ks the next products read (null with one stage).
  Value keyStage;
  /// Whether warpgroup MMA chains are issued without waiting for them (the
  /// pipeline waits).
  bool deferWaits = false;
  LaneRow laneRows[2];

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  /// The alignment of n consecutive elements that start at a multiple of n
  /// (every vector access of the kernel: rows are multiples of 16 elements).
  /// At most 16 bytes: what the host checks of every GPU buffer.
  llvm::MaybeAlign alignOf(int64_t n, Type type = {}) {
    int64_t bytes = n * (type ? type : element).getIntOrFloatBitWidth() / 8;
    return llvm::MaybeAlign(std::min<int64_t>(bytes, 16));
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(static_cast<float>(v)));
  }
  Value add(Value x, int64_t v) { return arith::AddIOp::create(b, x, index(v)); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  /// x + base, or x for a null base (one channel group).
  Value offsetBy(Value x, Value base) { return base ? add(x, base) : x; }
  Value mul(Value x, int64_t v) { return arith::MulIOp::create(b, x, index(v)); }
  Value lessThan(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y);
  }
  /// min(x, limit - 1): an index that stays inside a dimension of size limit
  /// (> 0) where x may not.
  Value clampBelow(Value x, Value limit) {
    return arith::MinUIOp::create(b, x, arith::SubIOp::create(b, limit, index(1)));
  }
  /// The i64 position of query i: Skv - Sq + i for the default positions
  /// (computed: no load), else read from q_positions.
  Value queryPosition(Value i) {
    if (!op.getDefaultPositions())
      return buildPositionAt(b, op.getQPositions(), bi, i);
    return arith::IndexCastOp::create(b, b.getI64Type(),
                                      add(arith::SubIOp::create(b, keys, queries), i));
  }

  /// The i64 position of key j: j for the default positions, else read.
  Value keyPosition(Value j) {
    if (!op.getDefaultPositions())
      return buildPositionAt(b, op.getKPositions(), bi, j);
    return arith::IndexCastOp::create(b, b.getI64Type(), j);
  }

  /// A pair of f32 values rounded to the element type, as a vector<2> and
  /// as one register of an mma.sync operand (fragmentRegister).
  Value roundPair(Value lo, Value hi) {
    return vector::FromElementsOp::create(b, VectorType::get({2}, element),
                                          ValueRange{arith::TruncFOp::create(b, element, lo),
                                                     arith::TruncFOp::create(b, element, hi)});
  }
};

/// Qs, Ks and Vs filled: rope(q) of the block's rows, rope(k) of a tile of
/// keys rotated on their way into shared memory, K and V copied by cp.async.
class MmaTileStaging : public MmaKernelState {
public:
  using MmaKernelState::MmaKernelState;

protected:
  /// Row `r` of the KV head: query r / G, head kvh G + r % G (index and
  /// positions clamped into range for a row past the last one).
  LaneRow laneRow(Value r) {
    LaneRow row;
    row.valid = lessThan(r, rows);
    Value i = arith::DivUIOp::create(b, r, index(group));
    row.i = clampBelow(i, queries);
    row.h = add(mul(kvh, group), arith::RemUIOp::create(b, r, index(group)));
    row.qp = queryPosition(row.i);
    if (op.getSlopes())
      row.slope = memref::LoadOp::create(b, op.getSlopes(), ValueRange{row.h});
    row.scale = f32(op.getScale().convertToDouble());
    if (pe::TemperatureAttr temperature = op.getTemperatureAttr())
      row.scale = arith::MulFOp::create(b, row.scale,
                                        buildQueryTemperature(b, temperature, row.qp));
    row.scaleLog2 = arith::MulFOp::create(b, row.scale, f32(M_LOG2E));
    return row;
  }

  /// Channel c (index) of rope(q) for `row`, f32: x c' = x cos - x p sin or
  /// x c' = x cos + x p sin with its pair's partner p (buildPairRotation),
  /// channels past the rotary dim unchanged.
  Value rotatedQueryChannel(const LaneRow &row, Value c) {
    auto load = [&](Value channel) {
      Value x = memref::LoadOp::create(b, op.getQuery(), ValueRange{bi, row.h, row.i, channel});
      return extendToF32(b, x);
    };
    Value x = load(c);
    if (!rope)
      return x;
    const int64_t rotary = rope.getRotaryDim(), half = rotary / 2,
                  offset = rope.getRotaryOffset();
    if (half == 0)
      return x;
    // l: the channel within the rotated block [offset, offset + r).
    Value l = offset ? arith::SubIOp::create(b, c, index(offset)).getResult() : c;
    Value first, partner, pair;
    if (rope.getStyle() == RopeStyle::half) {
      first = lessThan(l, index(half));
      partner = arith::SelectOp::create(b, first, add(l, half),
                                        arith::SubIOp::create(b, l, index(half)));
      pair = arith::SelectOp::create(b, first, l, arith::SubIOp::create(b, l, index(half)));
    } else {
      Value odd = arith::AndIOp::create(b, l, index(1));
      first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, odd, index(0));
      partner = arith::XOrIOp::create(b, l, index(1));
      pair = arith::DivUIOp::create(b, l, index(2));
    }
    if (offset)
      partner = add(partner, offset);
    // Channels outside the rotated block read pair 0 and themselves, unused
    // (l wraps below the block, so one unsigned compare covers both sides).
    Value rotated = lessThan(l, index(rotary));
    partner = arith::SelectOp::create(b, rotated, partner, c);
    pair = arith::SelectOp::create(b, rotated, pair, index(0));
    Value xp = load(partner);
    auto table = [&](Value t) { return tableEntry(t, row.i, pair); };
    Value x0 = arith::SelectOp::create(b, first, x, xp);
    Value x1 = arith::SelectOp::create(b, first, xp, x);
    auto [y0, y1] = buildPairRotation(b, x0, x1, table(op.getQCos()), table(op.getQSin()));
    Value y = arith::SelectOp::create(b, first, y0, y1);
    return arith::SelectOp::create(b, rotated, y, x);
  }

  /// Entry (row i, pair) of a cos/sin table ([S, r/2] or [B, S, r/2]).
  Value tableEntry(Value table, Value i, Value pair) {
    bool batched = cast<MemRefType>(table.getType()).getRank() == 3;
    SmallVector<Value> at = batched ? SmallVector<Value>{bi, i} : SmallVector<Value>{i};
    at.push_back(pair);
    return memref::LoadOp::create(b, table, at);
  }

  /// Qs <- rope(q) of the block's rows, rounded to the element type (0 in
  /// rows past the last), a pair of channels per step of a loop that the
  /// block's threads share.
  void stageQueries() {
    const int64_t pairs = d / 2;
    auto loop = scf::ForOp::create(b, tid, index(blockRows * pairs), index(threads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value w = loop.getInductionVar();
    Value local = arith::DivUIOp::create(b, w, index(pairs));
    Value c = mul(arith::RemUIOp::create(b, w, index(pairs)), 2);
    LaneRow row = laneRow(add(r0, local));
    Value zero = f32(0.0);
    auto channel = [&](Value at) {
      return arith::SelectOp::create(b, row.valid, rotatedQueryChannel(row, at), zero)
          .getResult();
    };
    Value lo = channel(c), hi = channel(add(c, 1));
    vector::StoreOp::create(b, roundPair(lo, hi), qs, tileIndex(local, c),
                            /*nontemporal=*/false, alignOf(2));
  }

  /// cp.async of the tile's rows t0 .. t0 + tileKeys - 1 of `source` [B,
  /// Hkv, S, n] into `tile` (its stage `stage` when not null), 16 bytes per
  /// copy, thread t of the copyThreads taking copies t, t + copyThreads,
  /// ...; rows past the last key are zero. One group of copies.
  void copyTile(Value source, Value tile, Value t0, int64_t n, Value stage = nullptr) {
    const int64_t chunks = n / kCopyLanes, copies = tileKeys * chunks;
    auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    SmallVector<Value> tokens;
    for (int64_t k = 0; k * copyThreads < copies; ++k) {
      Value w = add(tid, k * copyThreads);
      auto [row, col] = copyPiece(w, chunks);
      Value j = add(t0, row);
      Value inside = lessThan(j, keyEnd);
      if (copies % copyThreads != 0) {
        // Past the last copy: 16 zero bytes where nothing is read (the
        // engine's spareSlot), from row 0 of the tile (no bytes read).
        Value inRange = lessThan(w, index(copies));
        auto [spareRow, spareCol] = spareSlot(n);
        row = arith::SelectOp::create(b, inRange, row, index(spareRow));
        col = arith::SelectOp::create(b, inRange, col, index(spareCol));
        j = arith::SelectOp::create(b, inRange, j, t0);
        inside = arith::AndIOp::create(b, inside, inRange);
      }
      Value sourceCol = arith::MinUIOp::create(b, col, index(n - kCopyLanes));
      Value elements = arith::SelectOp::create(b, inside, index(kCopyLanes), index(0));
      SmallVector<Value> at = tileIndex(row, col);
      if (stage)
        at.insert(at.begin(), stage);
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, tokenType, tile, at, source,
          ValueRange{bi, kvh, clampBelow(j, keys), sourceCol}, b.getIndexAttr(kCopyLanes),
          elements, b.getUnitAttr()));
    }
    nvgpu::DeviceAsyncCreateGroupOp::create(b, tokenType, tokens);
  }

  /// Ks <- rope(k) of the tile's keys, rounded to the element type (0 past
  /// the last key). The pieces of a row (those of buildVectorPairRotation,
  /// then the pass-through channels) go round-robin to the threads /
  /// tileKeys threads of key t % tileKeys, thread t taking pieces t /
  /// tileKeys, + threads / tileKeys, ... (one group per warp with 32-key
  /// tiles, two with 16-key tiles, whose lanes then diverge on the
  /// piece counts that do not divide evenly). The
  /// code is straight-line: a thread's piece indices are values, and the
  /// stores come after every load and rotation, so all the tile's loads of
  /// a thread are in flight at once.
  void stageRotatedKeys(Value t0) {
    const int64_t groups = threads / tileKeys;
    Value row = arith::RemUIOp::create(b, tid, index(tileKeys));
    Value group = arith::DivUIOp::create(b, tid, index(tileKeys));
    Value j = add(t0, row);
    Value inside = lessThan(j, keyEnd);
    Value jr = clampBelow(j, keys);
    const int64_t rotary = rope.getRotaryDim(), half = rotary / 2,
                  offset = rope.getRotaryOffset();
    const int64_t pairLanes = pieceLanes(std::max<int64_t>(half, 1), kGpuPieceLanes);
    // Pieces that tile both pass-through ranges, [0, offset) and [offset + r, d).
    const int64_t restLanes =
        pieceLanes(std::max<int64_t>(std::gcd(d - rotary, offset), 1), kGpuPieceLanes);
    const int64_t rotatedPieces = half / pairLanes, restPieces = (d - rotary) / restLanes;
    // (piece, channel, whether the thread has it: null when it always has).
    SmallVector<std::tuple<Value, Value, Value>> stores;
    Value owned;
    auto load = [&](Value channel, int64_t n) {
      Value x = vector::LoadOp::create(b, VectorType::get({n}, element), key,
                                       ValueRange{bi, kvh, jr, channel}, /*nontemporal=*/false,
                                       alignOf(n));
      return extendToF32(b, x);
    };
    auto store = [&](Value piece, Value channel) { stores.emplace_back(piece, channel, owned); };
    // The thread's pieces among `count` whose round robin starts at piece
    // `first` of the row: index (group - first) mod groups, + groups, ...
    // (clamped, and not owned, past the last).
    auto eachPiece = [&](int64_t count, int64_t first, function_ref<void(Value)> body) {
      Value start = arith::RemUIOp::create(b, add(group, groups - first % groups), index(groups));
      for (int64_t k = 0; k * groups < count; ++k) {
        Value at = add(start, k * groups);
        owned = nullptr;
        if (count % groups != 0) {
          owned = lessThan(at, index(count));
          at = arith::MinUIOp::create(b, at, index(count - 1));
        }
        body(at);
      }
    };
    eachPiece(rotatedPieces, 0, [&](Value piece) {
      Value pair = mul(piece, pairLanes);
      auto tableSlice = [&](Value table) {
        bool batched = cast<MemRefType>(table.getType()).getRank() == 3;
        SmallVector<Value> at = batched ? SmallVector<Value>{bi, jr} : SmallVector<Value>{jr};
        at.push_back(pair);
        return vector::LoadOp::create(b, VectorType::get({pairLanes}, b.getF32Type()), table, at,
                                      /*nontemporal=*/false, alignOf(pairLanes, b.getF32Type()))
            .getResult();
      };
      Value cos = tableSlice(op.getKCos());
      Value sin = tableSlice(op.getKSin());
      buildVectorPairRotation(b, cos, sin, pair, RotatedChannels::of(rope), load, store);
    });
    eachPiece(restPieces, rotatedPieces, [&](Value piece) {
      // Pass-through channel e of the others: e before the block, e + r after.
      Value rest = mul(piece, restLanes);
      Value channel = add(rest, rotary);
      if (offset)
        channel = arith::SelectOp::create(b, lessThan(rest, index(offset)), rest, channel);
      store(load(channel, restLanes), channel);
    });
    for (auto [piece, channel, mine] : stores) {
      auto type = cast<VectorType>(piece.getType());
      Value zero = arith::ConstantOp::create(b, b.getZeroAttr(type));
      Value kept = arith::TruncFOp::create(b, type.clone(element),
                                           arith::SelectOp::create(b, inside, piece, zero));
      OpBuilder::InsertionGuard guard(b);
      if (mine) {
        auto ifMine = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
        b.setInsertionPoint(ifMine.thenBlock()->getTerminator());
      }
      vector::StoreOp::create(b, kept, ks, tileIndex(row, channel), /*nontemporal=*/false,
                              alignOf(type.getNumElements()));
    }
  }
};

/// A tile's scores and the online softmax over them, in the lanes that hold
/// S's accumulators (four lanes a row): the scale, ALiBi, the mask operand
/// and masks per score, the rows' running max and sum, the weights P and
/// the rescale of O.
class MmaOnlineSoftmax : public MmaTileStaging {
public:
  using MmaTileStaging::MmaTileStaging;

protected:
  /// Key j of the tile at t0 whose score this lane holds in block nb,
  /// column e of its C fragment: t0 + 8 nb + 2 tq + e.
  Value laneKey(Value t0, int64_t nb, int64_t e) {
    return add(add(t0, mul(tq, 2)), 8 * nb + e);
  }

  /// x combined with the values of the other lanes of its quad (the four
  /// lanes of a row): two butterfly shuffles. i64 travels as two i32.
  Value quadReduce(Value x, function_ref<Value(Value, Value)> combine) {
    for (int32_t offset : {1, 2})
      x = combine(x, shuffleXor(x, offset));
    return x;
  }

  Value shuffleXor(Value x, int32_t offset) {
    if (!x.getType().isInteger(64))
      return gpu::ShuffleOp::create(b, x, offset, kWarpSize, gpu::ShuffleMode::XOR)
          .getShuffleResult();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Value shift = arith::ConstantOp::create(b, b.getI64IntegerAttr(32));
    Value lo = arith::TruncIOp::create(b, i32, x);
    Value hi = arith::TruncIOp::create(b, i32, arith::ShRUIOp::create(b, x, shift));
    Value lo2 = arith::ExtUIOp::create(b, i64, shuffleXor(lo, offset));
    Value hi2 = arith::ExtUIOp::create(b, i64, shuffleXor(hi, offset));
    return arith::OrIOp::create(b, lo2, arith::ShLIOp::create(b, hi2, shift));
  }

  /// The lane's scores of the tile, per row of the lane, 16 each (block
  /// nb, column e at 2 nb + e): scale Q K^T, ALiBi, the mask operand and,
  /// in a tile that needs it (`needsMask`: the last, or one that
  /// causal/window masks hide in part), -inf where masked or past the last
  /// key. Other tiles skip the per-score test. `accs`: S = Q K^T.
  SmallVector<SmallVector<Value>> tileScores(ArrayRef<SmallVector<Value>> accs, Value t0,
                                             Value needsMask) {
    const int64_t count = 2 * 2 * (tileKeys / 8);
    auto ifMasked = scf::IfOp::create(b, SmallVector<Type>(count, b.getF32Type()), needsMask,
                                      /*withElseRegion=*/true);
    for (bool masked : {true, false}) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(masked ? ifMasked.thenBlock() : ifMasked.elseBlock());
      SmallVector<SmallVector<Value>> scores = scoresOf(accs, t0, masked);
      SmallVector<Value> flat(scores[0]);
      flat.append(scores[1]);
      scf::YieldOp::create(b, flat);
    }
    ValueRange results = ifMasked.getResults();
    return {SmallVector<Value>(results.take_front(count / 2)),
            SmallVector<Value>(results.drop_front(count / 2))};
  }

  SmallVector<SmallVector<Value>> scoresOf(ArrayRef<SmallVector<Value>> accs, Value t0,
                                           bool masked) {
    const bool positional = masked && (mask.any());
    SmallVector<SmallVector<Value>> scores(2);
    const Value minusInf = f32(-std::numeric_limits<double>::infinity());
    for (auto [nb, acc] : llvm::enumerate(accs)) {
      for (int64_t e = 0; e < 2; ++e) {
        Value j = laneKey(t0, nb, e);
        // Each key's i64 position where its two scores need it: the 16
        // positions of a lane held at once would take 32 registers.
        Value kp = positional || op.getSlopes()
                       ? keyPosition(clampBelow(j, keys))
                       : nullptr;
        for (int64_t k = 0; k < 2; ++k) {
          const LaneRow &row = laneRows[k];
          Value s = acc[2 * k + e];
          if (!rawScores())
            s = arith::MulFOp::create(b, s, row.scale);
          if (std::optional<APFloat> softcap = op.getSoftcap())
            s = buildSoftcapScore(b, s, softcap->convertToDouble());
          if (row.slope)
            s = buildAlibiScore(b, s, row.slope, buildPositionDistance(b, kp, row.qp));
          if (Value m = op.getMask()) {
            auto type = cast<MemRefType>(m.getType());
            Value mb = type.getDimSize(0) == 1 ? index(0) : bi;
            Value mh = type.getDimSize(1) == 1 ? index(0) : row.h;
            Value entry =
                memref::LoadOp::create(b, m, ValueRange{mb, mh, row.i, clampBelow(j, keys)});
            s = buildAddMask(b, s, extendToF32(b, entry));
          }
          if (masked) {
            Value hidden = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, j, keyEnd);
            if (positional)
              hidden = arith::OrIOp::create(b, hidden, buildIsMasked(b, mask, row.qp, kp));
            s = arith::SelectOp::create(b, hidden, minusInf, s);
          }
          scores[k].push_back(s);
        }
      }
    }
    return scores;
  }

  /// Whether the scores stay Q K^T, unscaled, through the softmax: without
  /// terms added to the scaled score (soft-capping, ALiBi, the mask
  /// operand) and with the verifier's positive scale per row (no
  /// temperature), a tile's row max of c s is c times its max of s
  /// (rounding is monotone: max_j fl(c s_j) = fl(c max_j s_j)), -inf stays
  /// -inf, and c folds into the exponent's FMA (expOfDifference): one
  /// multiply per row and tile instead of one per score. The row max and
  /// the state are the same bits; an exponent differs by the rounding of c
  /// log2(e) (relative 2^-24), far below the weights' rounding for P V.
  bool rawScores() {
    return !op.getSoftcap() && !op.getSlopes() && !op.getMask() && !op.getTemperatureAttr();
  }

  /// base log2(e), once per row and tile, for expOfDifference.
  Value log2Base(Value base) { return arith::MulFOp::create(b, base, f32(M_LOG2E)); }

  /// exp(x - base) = 2^(x log2(e) - base log2(e)): one FMA and the special
  /// function unit's ex2.approx.ftz (relative error about 2^-22; a result
  /// below 2^-126 flushes to 0, x = -inf gives 0, NaN stays NaN), where a
  /// polynomial exp costs some twenty instructions per score. The weights
  /// are rounded to bf16/f16 for P V, far coarser than either error.
  /// For a raw score x of a row whose scale is c, `xLog2` = c log2(e)
  /// gives exp(c x - base) the same way.
  Value expOfDifference(Value x, Value baseLog2, Value xLog2 = nullptr) {
    Value exponent = math::FmaOp::create(b, x, xLog2 ? xLog2 : f32(M_LOG2E),
                                         arith::NegFOp::create(b, baseLog2));
    return LLVM::CallIntrinsicOp::create(b, b.getF32Type(),
                                         b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
                                         ValueRange{exponent})
        .getResult(0);
  }

  /// The online softmax over the tile's scores: the new state (m, l, O
  /// rescaled by alpha) and the weights p of each row.
  std::pair<SmallVector<Value>, SmallVector<SmallVector<Value>>>
  softmaxStep(ValueRange state, ArrayRef<SmallVector<Value>> scores) {
    auto [next, weights, rescale] = softmaxWeights(state, scores);
    rescaleOutput(state.slice(4, valueBlocks), rescale,
                  MutableArrayRef<Value>(next).slice(4, valueBlocks));
    return {next, weights};
  }

  /// How a tile's softmax rescales O: alpha = exp(m - m') of the lane's two
  /// rows, and whether either row took a new max.
  struct Rescale {
    Value alphas[2];
    Value grown;
  };

  /// softmaxStep without touching O (the caller rescales it, rescaleOutput):
  /// the state with the new (m, l), the weights, and the rescale.
  std::tuple<SmallVector<Value>, SmallVector<SmallVector<Value>>, Rescale>
  softmaxWeights(ValueRange state, ArrayRef<SmallVector<Value>> scores) {
    SmallVector<Value> next(state);
    SmallVector<SmallVector<Value>> weights(2);
    Rescale rescale;
    Value grown[2];
    for (int64_t k = 0; k < 2; ++k) {
      Value m = state[k], l = state[2 + k];
      // maxnum (PTX max.f32, one FMNMX; buildRunningRowMax's select takes
      // FSETP + FSEL) leaves the max where a NaN score comes. It differs
      // from the select only where m is NaN (a NaN sink): the select kept
      // it, maxnum drops it, and the row stays NaN through l = exp(NaN).
      Value tileMax = f32(-std::numeric_limits<double>::infinity());
      for (Value s : scores[k])
        tileMax = buildRowMax(b, tileMax, s);
      tileMax = quadReduce(tileMax, [&](Value x, Value y) { return buildRowMax(b, x, y); });
      if (rawScores())
        tileMax = arith::MulFOp::create(b, tileMax, laneRows[k].scale);
      // The row keeps its max m while the tile's max exceeds it by at most
      // kKeptMaxGrowth (FlashAttention-4's rescale threshold): any m that
      // O and l share gives the same O / l, and the weights exp(s - m) stay
      // at most 2^8 (exact in f32, and rounded relatively to bf16/f16 as
      // weights below 1 are). So O is rescaled only when a row's max grows
      // past that, which after a row's first tiles is rare. A row without a
      // visible key yet (m = -inf) takes any finite max; a NaN m stays.
      Value candidate = buildRowMax(b, m, tileMax);
      grown[k] = arith::CmpFOp::create(
          b, arith::CmpFPredicate::OGT, candidate,
          arith::AddFOp::create(b, m, f32(kKeptMaxGrowth)));
      Value rowMax = arith::SelectOp::create(b, grown[k], candidate, m);
      Value baseLog2 = log2Base(buildExponentBase(b, rowMax));
      Value sum = f32(0.0);
      for (Value s : scores[k]) {
        Value p = expOfDifference(s, baseLog2, rawScores() ? laneRows[k].scaleLog2 : Value());
        weights[k].push_back(p);
        sum = arith::AddFOp::create(b, sum, p);
      }
      // alpha = exp(m - m') is exactly 1 where the row kept its max (m' =
      // m; also a row without a visible key yet, where O and l are 0).
      rescale.alphas[k] =
          arith::SelectOp::create(b, grown[k], expOfDifference(m, baseLog2), f32(1.0));
      next[k] = rowMax;
      next[2 + k] = buildRescaledSum(b, l, rescale.alphas[k], sum);
    }
    rescale.grown = arith::OrIOp::create(b, grown[0], grown[1]);
    return {next, weights, rescale};
  }

  /// O' = alpha O for the lane's accumulators, skipped (O' = O) when no row
  /// of the warp took a new max: after the first tiles a row rarely grows
  /// by more than kKeptMaxGrowth, and the rescale is dv / 2 multiplies per
  /// lane and tile (64 at Dv = 128). The warp takes one branch (a vote),
  /// the lanes of a row agree.
  void rescaleOutput(ValueRange acc, const Rescale &rescale, MutableArrayRef<Value> out) {
    const Value(&alphas)[2] = rescale.alphas;
    Value everyLane = arith::ConstantOp::create(b, b.getI32IntegerAttr(-1));
    Value any = NVVM::VoteSyncOp::create(b, b.getI1Type(), everyLane, rescale.grown,
                                         NVVM::VoteSyncKind::any);
    auto ifAny = scf::IfOp::create(b, acc.getTypes(), any, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifAny.thenBlock());
      // C fragment: elements 0, 1 in the first row, 2, 3 in the second.
      Value alpha = vector::FromElementsOp::create(
          b, VectorType::get({4}, b.getF32Type()),
          ValueRange{alphas[0], alphas[0], alphas[1], alphas[1]});
      SmallVector<Value> scaled;
      for (Value o : acc)
        scaled.push_back(buildRescale(b, o, alpha));
      scf::YieldOp::create(b, scaled);
      b.setInsertionPointToStart(ifAny.elseBlock());
      scf::YieldOp::create(b, acc);
    }
    llvm::copy(ifAny.getResults(), out.begin());
  }
};

/// The flash-attention pipeline of a block: Q staged once, then per tile of
/// keys K and V staged (V one tile ahead), the engine's S = Q K^T, the scale,
/// ALiBi and masks, the online softmax and the engine's O += P V; the output
/// (or a decode split's partial state) at the end.
class MmaAttentionKernel : public MmaOnlineSoftmax {
public:
  using MmaOnlineSoftmax::MmaOnlineSoftmax;

  /// The launch over (row tiles, KV heads, batch), nothing for no rows; its
  /// shared memory declared in `symbols`.
  void build(SymbolTable &symbols, StringRef kernelName) {
    Value batch = memref::DimOp::create(b, op.getQuery(), 0);
    queries = memref::DimOp::create(b, op.getQuery(), 2);
    keys = memref::DimOp::create(b, op.getKey(), 2);
    rows = arith::MulIOp::create(b, queries, index(group));
    Value rowTiles = arith::CeilDivUIOp::create(b, rows, index(blockRows));
    Value kvHeads = index(op.getKey().getType().getDimSize(1));
    // Grid z: the batch rows, each split into the key ranges (decode).
    Value gridZ = batch;
    if ((splits = op.getSplits())) {
      splitKeys = arith::CeilDivUIOp::create(b, keys, splits);
      gridZ = arith::MulIOp::create(b, batch, splits);
    }
    Value blocks = arith::MulIOp::create(b, rowTiles, gridZ);
    Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, blocks, index(0));
    auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
    b.setInsertionPoint(ifAny.thenBlock()->getTerminator());
    const int64_t blockBytes = blockSharedBytes();
    assert(blockBytes <= kMaxSharedBytes && "the verifier's head dims fit");
    dynamicShared = blockBytes > kStaticSharedBytes;
    SharedTile queryTile = sharedTile(symbols, "__pe_mma_attention_queries", blockRows, d);
    SharedTile keyTile, valueTile, kvTile;
    if (tmaLoads) {
      const int64_t bytes = kvTmaBytesOf(d, dv, tileKeys, element.getIntOrFloatBitWidth() / 8);
      kvTile = sharedBuffer(symbols, "__pe_mma_attention_kv", {bytes}, b.getI8Type());
      keyMap = tensorMap(op.getKey());
      valueMap = tensorMap(op.getValue());
    } else {
      keyTile = sharedTile(symbols, "__pe_mma_attention_keys", tileKeys, d, keyStages);
      valueTile = sharedTile(symbols, "__pe_mma_attention_values", tileKeys, dv, valueStages);
    }
    declareEngineTiles(symbols);
    SharedTile barrierTile;
    if (specialized)
      barrierTile = sharedBuffer(symbols, "__pe_mma_attention_barriers",
                                 {2 * kSpecializedStages}, b.getI64Type());
    assert(sharedBytes == blockBytes && "blockSharedBytesOf counts every tile");
    Value one = index(1);
    // Dynamic shared memory (above 48 KiB: the runtime opts the kernel in).
    Value dynamicBytes = dynamicShared ? arith::ConstantOp::create(
                                             b, b.getI32IntegerAttr(sharedBytes))
                                       : Value();
    auto launch = gpu::LaunchOp::create(
        b, rowTiles, kvHeads, gridZ, index(threads), one, one, dynamicBytes,
        /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, /*workgroupAttributions=*/{}, /*privateAttributions=*/{},
        nullptr, nullptr, nullptr, FlatSymbolRefAttr::get(b.getContext(), kGpuKernelModule),
        FlatSymbolRefAttr::get(b.getContext(), kernelName));
    launch->setAttr(kGpuTensorCoreLaunchAttr, b.getUnitAttr());
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::TerminatorOp::create(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    qs = bindTile(queryTile);
    if (tmaLoads) {
      kv = bindTile(kvTile);
    } else {
      ks = bindTile(keyTile);
      vs = bindTile(valueTile);
    }
    if (specialized)
      barriers = sharedAddress(bindTile(barrierTile));
    bindEngineTiles();
    // Causal: the last row tiles see the most keys (queries in position
    // order); the blocks are scheduled in index order, so they go first and
    // the light ones fill the last wave.
    Value rowTile = launch.getBlockIds().x;
    if (op.getCausal())
      rowTile = arith::SubIOp::create(
          b, arith::SubIOp::create(b, launch.getGridSizeX(), index(1)), rowTile);
    blockBody(rowTile, launch.getBlockIds().y, launch.getBlockIds().z, launch.getThreadIds().x);
  }

protected:
  /// The TMA tensor map of `buffer` [B, H, S, n] (made on the host): boxes
  /// of tileKeys rows of one 128-byte swizzle row each (64 channels), zero
  /// past the last key; as the !llvm.ptr the kernel takes (a device copy
  /// of the map, libpe_cuda_runtime's mgpuTensorMapEncodeTiledMemref).
  Value tensorMap(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    Value unranked = memref::CastOp::create(
        b, UnrankedMemRefType::get(element, type.getMemorySpace()), buffer);
    const int64_t sliceChannels = kSwizzleRowBytes * 8 / element.getIntOrFloatBitWidth();
    auto box = MemRefType::get({1, 1, tileKeys, sliceChannels}, element,
                               MemRefLayoutAttrInterface(), b.getI64IntegerAttr(3));
    auto mapType = nvgpu::TensorMapDescriptorType::get(
        b.getContext(), box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_128B, nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
    // No keys: no tile is loaded, and a tensor map cannot have an empty
    // dimension; a null pointer stands in.
    auto pointer = LLVM::LLVMPointerType::get(b.getContext());
    Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, keys, index(0));
    auto ifKeys = scf::IfOp::create(b, pointer, any, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifKeys.thenBlock());
    Value map = nvgpu::TmaCreateDescriptorOp::create(
        b, mapType, unranked,
        ValueRange{index(1), index(1), index(tileKeys), index(sliceChannels)});
    scf::YieldOp::create(b, UnrealizedConversionCastOp::create(b, pointer, map).getResult(0));
    b.setInsertionPointToStart(ifKeys.elseBlock());
    scf::YieldOp::create(b, LLVM::ZeroOp::create(b, pointer).getResult());
    return ifKeys.getResult(0);
  }

  virtual void blockBody(Value rowTile, Value kvHead, Value gridZ, Value thread) {
    setUpBlock(rowTile, kvHead, gridZ);
    setUpLanes(thread);
    stageQueries();
    std::pair<Value, Value> queryRange = cutKeyRange();
    // State: (m, l) of the lane's two rows, O per 8 value channels, and
    // whether the tile before copied this tile's V and K (prefetched).
    SmallVector<Value> init = initialState();
    init.push_back(arith::ConstantOp::create(b, b.getBoolAttr(false)));
    scf::ForOp tiles = tileLoop(
        init, queryRange,
        [&](Value t0, ValueRange state, Value partial) { return tileStep(t0, state, partial); },
        // A hidden tile uses no V or K (the copies in flight for it go
        // unread).
        [&](ValueRange state) {
          SmallVector<Value> skipped(state);
          skipped.back() = arith::ConstantOp::create(b, b.getBoolAttr(false));
          return skipped;
        });
    // The last tile's prefetch lands before the block's shared memory goes.
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
    storeOutput(tiles.getResults().drop_back());
  }

  /// The block's batch row (and key range, with splits), KV head and first
  /// row; K and V as the kernel reads them.
  void setUpBlock(Value rowTile, Value kvHead, Value gridZ) {
    kvh = kvHead;
    keyBegin = index(0);
    keyEnd = keys;
    bi = gridZ;
    if (splits) {
      bi = arith::DivUIOp::create(b, gridZ, splits);
      split = arith::RemUIOp::create(b, gridZ, splits);
      keyBegin = arith::MulIOp::create(b, split, splitKeys);
      keyEnd = arith::MinUIOp::create(b, add(keyBegin, splitKeys), keys);
    }
    // K and V as the kernel reads them: 16-byte aligned (the host checks every
    // GPU buffer), as cp.async needs. (Also values of the kernel's own, so that
    // converting the nvgpu ops before outlining casts them inside it.)
    key = memref::AssumeAlignmentOp::create(b, op.getKey(), b.getI32IntegerAttr(16));
    value = memref::AssumeAlignmentOp::create(b, op.getValue(), b.getI32IntegerAttr(16));
    r0 = mul(rowTile, blockRows);
  }

  /// Thread `thread` of the warps that multiply: its warp, lane, quad
  /// indices and rows (warp w takes rows 16 w .. of the block; with two
  /// channel groups, both groups the same rows).
  void setUpLanes(Value thread) {
    tid = thread;
    warp = arith::DivUIOp::create(b, tid, index(kWarpSize));
    lane = arith::RemUIOp::create(b, tid, index(kWarpSize));
    gq = arith::DivUIOp::create(b, lane, index(4));
    tq = arith::RemUIOp::create(b, lane, index(4));
    warpRow = mul(channelGroups > 1 ? arith::RemUIOp::create(b, warp, index(kWarps)).getResult()
                                    : warp,
                  kWarpRows);
    if (channelGroups > 1) {
      assert(channelGroups == 2 && "one partner group");
      channelGroup = arith::DivUIOp::create(b, warp, index(kWarps));
      partnerWarp = arith::RemUIOp::create(b, add(warp, kWarps), index(threads / kWarpSize));
      queryChannelBase = mul(channelGroup, groupHeadDim);
      valueChannelBase = mul(channelGroup, dv / channelGroups);
    }
    for (int64_t k = 0; k < 2; ++k)
      laneRows[k] = laneRow(add(add(add(r0, warpRow), gq), 8 * k));
  }

  /// The positions of the block's queries where masks need them, the key
  /// range cut to the keys they can see (visibleKeyRange).
  std::pair<Value, Value> cutKeyRange() {
    std::pair<Value, Value> queryRange;
    if (mask.any())
      queryRange = blockQueryPositions();
    if (op.getDefaultPositions() && (mask.causal || mask.window))
      std::tie(keyBegin, keyEnd) =
          visibleKeyRange(b, mask, queryRange, {keyBegin, keyEnd}, tileKeys);
    return queryRange;
  }

  /// The online softmax's state before the first key: (m, l) of the lane's
  /// two rows (-inf, 0; the sink where the op has sinks), O per 8 value
  /// channels.
  SmallVector<Value> initialState() {
    SmallVector<Value> init = {f32(-std::numeric_limits<double>::infinity()),
                               f32(-std::numeric_limits<double>::infinity()), f32(0.0),
                               f32(0.0)};
    Value zeros = vector::BroadcastOp::create(b, VectorType::get({4}, b.getF32Type()), f32(0.0));
    init.append(valueBlocks, zeros);
    if (op.getSinks())
      startWithSinks(init);
    return init;
  }

  /// The loop over the block's key tiles carrying `init`: `step(t0, state,
  /// partial)` for a tile some row may see (`partial`: whether
  /// causal/window masks may hide some of its keys from some row; null
  /// without such masks), `skip(state)` for one they hide from every row.
  /// Every thread of the block finds the same tiles.
  scf::ForOp tileLoop(ValueRange init, std::pair<Value, Value> queryRange,
                      function_ref<SmallVector<Value>(Value, ValueRange, Value)> step,
                      function_ref<SmallVector<Value>(ValueRange)> skip) {
    auto tiles = scf::ForOp::create(b, keyBegin, keyEnd, index(tileKeys), init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value t0 = tiles.getInductionVar();
    ValueRange state = tiles.getRegionIterArgs();
    if (!mask.any()) {
      scf::YieldOp::create(b, step(t0, state, /*partial=*/nullptr));
      return tiles;
    }
    auto [hidden, partial] = op.getDefaultPositions()
                                 ? defaultTileVisibility(queryRange, t0)
                                 : tileVisibility(queryRange, t0);
    auto ifHidden = scf::IfOp::create(b, state.getTypes(), hidden, /*withElseRegion=*/true);
    b.setInsertionPointToStart(ifHidden.thenBlock());
    scf::YieldOp::create(b, skip(state));
    b.setInsertionPointToStart(ifHidden.elseBlock());
    scf::YieldOp::create(b, step(t0, state, partial));
    b.setInsertionPointAfter(ifHidden);
    scf::YieldOp::create(b, ifHidden.getResults());
    return tiles;
  }

  /// Attention sinks: the head's sink logit enters each row's state as a key
  /// of value 0 (m = sink, l = exp(sink - base(sink)), as the SIMT kernel
  /// starts): in the first lane of the row's quad only, since the lanes' sums
  /// are added at the end, and in the first key range only with splits, so
  /// that the merge counts it once.
  void startWithSinks(SmallVector<Value> &init) {
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tq, index(0));
    Value use = arith::ConstantOp::create(b, b.getBoolAttr(true));
    if (splits)
      use = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, split, index(0));
    for (int64_t k = 0; k < 2; ++k) {
      Value sink =
          extendToF32(b, memref::LoadOp::create(b, op.getSinks(), ValueRange{laneRows[k].h}));
      Value one = buildExpOfDifference(b, sink, buildExponentBase(b, sink), buildExpNonPositive);
      init[k] = arith::SelectOp::create(b, use, sink, init[k]);
      init[2 + k] = arith::SelectOp::create(b, arith::AndIOp::create(b, use, first), one,
                                            init[2 + k]);
    }
  }

  /// (min, max) of the positions of the block's queries (i64).
  std::pair<Value, Value> blockQueryPositions() {
    Value first = arith::DivUIOp::create(b, r0, index(group));
    Value lastRow = arith::MinUIOp::create(b, add(r0, blockRows), rows);
    Value last = arith::CeilDivUIOp::create(b, lastRow, index(group));
    if (op.getDefaultPositions()) // increasing with the query
      return {queryPosition(first), queryPosition(arith::SubIOp::create(b, last, index(1)))};
    Value lowest = arith::ConstantOp::create(b, b.getI64IntegerAttr(INT64_MIN));
    Value highest = arith::ConstantOp::create(b, b.getI64IntegerAttr(INT64_MAX));
    auto loop = scf::ForOp::create(b, first, last, index(1), ValueRange{highest, lowest});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value qp = queryPosition(loop.getInductionVar());
    ValueRange range = loop.getRegionIterArgs();
    scf::YieldOp::create(b, ValueRange{arith::MinSIOp::create(b, range[0], qp),
                                       arith::MaxSIOp::create(b, range[1], qp)});
    return {loop.getResult(0), loop.getResult(1)};
  }

  /// tileVisibility for the default positions: the tile's keys t0 ..
  /// min(t0 + tileKeys, Skv) - 1 are its positions (no loads, no shuffles).
  TileVisibility defaultTileVisibility(std::pair<Value, Value> queryRange, Value t0) {
    Value last = arith::SubIOp::create(b, arith::MinUIOp::create(b, add(t0, tileKeys), keys),
                                       index(1));
    Type i64 = b.getI64Type();
    return buildTileVisibility(b, mask, queryRange.first, queryRange.second,
                               arith::IndexCastOp::create(b, i64, t0),
                               arith::IndexCastOp::create(b, i64, last));
  }

  /// Whether causal/window masks hide the tile at t0 from every row of the
  /// block (`hidden`) or may hide some key from some row (`partial`), with
  /// explicit key positions: lane l of each warp reads the positions of
  /// keys t0 + l + 32 i (l mod 16 in 16-key tiles; past the last key: the
  /// last key's), and the warp's butterfly shuffles give every lane the
  /// tile's lowest and highest. The answer depends on the lane's index in
  /// its warp alone, so every warp of the block, whatever its role, finds
  /// the same.
  TileVisibility tileVisibility(std::pair<Value, Value> queryRange, Value t0) {
    Value piece = arith::RemUIOp::create(b, tid, index(std::min(tileKeys, kWarpSize)));
    Value kMin, kMax;
    for (int64_t i = 0; i < tileKeys; i += kWarpSize) {
      Value j = clampBelow(add(add(t0, piece), i), keys);
      Value kp = keyPosition(j);
      kMin = kMin ? arith::MinSIOp::create(b, kMin, kp).getResult() : kp;
      kMax = kMax ? arith::MaxSIOp::create(b, kMax, kp).getResult() : kp;
    }
    for (int32_t offset = 1; offset < kWarpSize; offset *= 2) {
      Value lower = shuffleXor(kMin, offset);
      kMin = arith::MinSIOp::create(b, kMin, lower);
      Value higher = shuffleXor(kMax, offset);
      kMax = arith::MaxSIOp::create(b, kMax, higher);
    }
    return buildTileVisibility(b, mask, queryRange.first, queryRange.second, kMin, kMax);
  }

  /// The state after the tile at t0 (`partial`: whether causal/window masks
  /// may hide some of its keys from some row; null without such masks).
  ///
  /// V goes through two stages, the tile's (its index's parity) and the
  /// next one's: the tile copies the next tile's V before its own work and
  /// waits only for what it reads. K copied by cp.async has one stage: once
  /// every warp's S has read it (a barrier), the next tile's K is copied
  /// into it, landing while this tile's softmax and P V run (a tile the
  /// tile before did not prefetch copies its own K and V first).
  /// cp.async groups complete in order, and every group is older than the
  /// next tile's V except that one, so waiting until one group is pending
  /// waits for this tile's K and V. Keys rotated in the kernel (decode with
  /// RoPE) pass through registers after the next V's copy is issued.
  SmallVector<Value> tileStep(Value t0, ValueRange state, Value partial) {
    Value prefetched = state.back();
    Value ordinal = arith::DivUIOp::create(b, arith::SubIOp::create(b, t0, keyBegin),
                                           index(tileKeys));
    Value stage = arith::RemUIOp::create(b, ordinal, index(kValueStages));
    Value nextStage = arith::SubIOp::create(b, index(1), stage);
    // This tile's V and K unless the tile before copied them (the first
    // tile, or one after a hidden tile). Copies a hidden tile left in flight
    // may target either stage, or Ks: they land first.
    Value missing = arith::XOrIOp::create(b, prefetched,
                                          arith::ConstantOp::create(b, b.getBoolAttr(true)));
    auto ifMissing = scf::IfOp::create(b, missing, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifMissing.thenBlock()->getTerminator());
      NVVM::CpAsyncWaitGroupOp::create(b, 0);
      copyTile(value, vs, t0, dv, stage);
      if (!rotateKeys)
        copyTile(key, ks, t0, d);
    }
    copyTile(value, vs, add(t0, tileKeys), dv, nextStage);
    if (rotateKeys)
      stageRotatedKeys(t0);
    NVVM::CpAsyncWaitGroupOp::create(b, 1);
    sharedWritesDone();
    SmallVector<SmallVector<Value>> products = this->products();
    if (!rotateKeys) {
      // Two channel groups passed a barrier after their reads of Ks already
      // (adding the halves of S).
      if (channelGroups == 1)
        gpu::BarrierOp::create(b);
      copyTile(key, ks, add(t0, tileKeys), d);
    }
    SmallVector<SmallVector<Value>> scores = tileScores(products, t0, needsMask(t0, partial));
    auto [softmax, weights] = softmaxStep(state.drop_back(), scores);
    accumulateValues(softmax, weights, stage);
    // This stage of Vs (and rotated Ks) are read until here: the copies of
    // the next tiles wait.
    gpu::BarrierOp::create(b);
    softmax.push_back(arith::ConstantOp::create(b, b.getBoolAttr(true)));
    return softmax;
  }

  /// Whether the tile at t0 tests each score: the last tile (keys past
  /// keyEnd) or one that masks may hide in part (`partial`).
  Value needsMask(Value t0, Value partial) {
    Value tail = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, add(t0, tileKeys), keyEnd);
    return partial ? arith::OrIOp::create(b, tail, partial).getResult() : tail;
  }

  /// The barrier after the block's writes to shared memory (each thread
  /// first fences its writes where the engine reads them through another
  /// proxy).
  void sharedWritesDone() {
    fenceSharedWrites();
    gpu::BarrierOp::create(b);
  }

  /// out[bi, h, i, 8 nb + 2 tq + {0, 1}] = O / l for each existing row of
  /// the lane, l summed over the row's quad (channels from the group's
  /// first). Decode: the split's state instead, O unnormalized into
  /// partial_out and (m, l) into partial_stats (by the quad's first lane of
  /// the first channel group).
  void storeOutput(ValueRange state) {
    for (int64_t k = 0; k < 2; ++k) {
      const LaneRow &row = laneRows[k];
      Value l = quadReduce(state[2 + k],
                           [&](Value x, Value y) { return arith::AddFOp::create(b, x, y); });
      Value sum = vector::BroadcastOp::create(b, VectorType::get({2}, b.getF32Type()), l);
      auto ifValid = scf::IfOp::create(b, row.valid, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifValid.thenBlock()->getTerminator());
      for (int64_t nb = 0; nb < valueBlocks; ++nb) {
        Value acc = vector::ExtractStridedSliceOp::create(b, state[4 + nb], ArrayRef<int64_t>{2 * k},
                                                          ArrayRef<int64_t>{2},
                                                          ArrayRef<int64_t>{1});
        Value channel = offsetBy(add(mul(tq, 2), 8 * nb), valueChannelBase);
        if (splits) {
          vector::StoreOp::create(b, acc, op.getPartialOut(),
                                  ValueRange{bi, row.h, row.i, split, channel},
                                  /*nontemporal=*/false, alignOf(2, b.getF32Type()));
          continue;
        }
        Value out = buildNormalize(b, acc, sum);
        vector::StoreOp::create(b, convertFloat(b, out, element), op.getOut(),
                                ValueRange{bi, row.h, row.i, channel}, /*nontemporal=*/false,
                                alignOf(2));
      }
      if (!splits)
        continue;
      Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tq, index(0));
      if (channelGroup)
        first = arith::AndIOp::create(
            b, first, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, channelGroup, index(0)));
      auto ifFirst = scf::IfOp::create(b, first, /*withElseRegion=*/false);
      b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
      SmallVector<Value, 2> stats = {state[k], l};
      for (auto [slot, stat] : llvm::enumerate(stats))
        memref::StoreOp::create(b, stat, op.getPartialStats(),
                                ValueRange{bi, row.h, row.i, split, index(slot)});
    }
  }
};

/// mma.sync m16n8k16 (sm_80 and later): each warp multiplies its 16 rows,
/// operands loaded from padded row-major tiles (tileShapeOf) by ldmatrix;
/// with two channel groups, each warp its group's half of the channels.
class MmaSyncKernel final : public MmaAttentionKernel {
public:
  MmaSyncKernel(ImplicitLocOpBuilder &b, pe_gpu::MmaAttentionOp op)
      : MmaAttentionKernel(b, op, /*warpgroup=*/false) {}

private:
  SmallVector<Value> tileIndex(Value row, Value col) override { return {row, col}; }
  /// Row-major: a warp reads whole rows.
  std::pair<Value, Value> copyPiece(Value w, int64_t chunks) override {
    return {arith::DivUIOp::create(b, w, index(chunks)),
            mul(arith::RemUIOp::create(b, w, index(chunks)), kCopyLanes)};
  }
  /// The padding of row 0.
  std::pair<int64_t, int64_t> spareSlot(int64_t n) const override { return {0, n}; }
  void declareEngineTiles(SymbolTable &symbols) override {
    if (channelGroups > 1)
      exchangeTile = sharedBuffer(symbols, "__pe_mma_attention_exchange",
                                  exchangeShapeOf(d, dv), b.getF32Type());
  }
  void bindEngineTiles() override {
    if (channelGroups > 1)
      xs = bindTile(exchangeTile);
  }
  SmallVector<SmallVector<Value>> products() override {
    SmallVector<SmallVector<Value>> accs = tileProducts();
    return channelGroups > 1 ? addPartnerScores(accs) : accs;
  }

  /// S = the sum of the two channel groups' halves: each warp stores its
  /// accumulators, and after a barrier adds those of its partner warp, of
  /// the other group with the same rows (the barrier at the end of the tile
  /// keeps the next tile's stores behind these loads).
  SmallVector<SmallVector<Value>> addPartnerScores(ArrayRef<SmallVector<Value>> accs) {
    auto type = VectorType::get({4}, b.getF32Type());
    for (auto [nb, acc] : llvm::enumerate(accs))
      vector::StoreOp::create(b, vector::FromElementsOp::create(b, type, acc), xs,
                              ValueRange{warp, index(nb), lane, index(0)},
                              /*nontemporal=*/false, alignOf(4, b.getF32Type()));
    gpu::BarrierOp::create(b);
    SmallVector<SmallVector<Value>> sums;
    for (auto [nb, acc] : llvm::enumerate(accs)) {
      Value theirs = vector::LoadOp::create(b, type, xs,
                                            ValueRange{partnerWarp, index(nb), lane, index(0)},
                                            /*nontemporal=*/false, alignOf(4, b.getF32Type()));
      SmallVector<Value> sum;
      for (auto [k, mine] : llvm::enumerate(acc))
        sum.push_back(arith::AddFOp::create(
            b, mine, vector::ExtractOp::create(b, theirs, ArrayRef<int64_t>{int64_t(k)})));
      sums.push_back(sum);
    }
    return sums;
  }

  Value packPair(Value lo, Value hi) { return fragmentRegister(roundPair(lo, hi)); }

  /// i32 for bf16, vector<2xf16> for f16 (what nvvm.mma.sync takes).
  Value fragmentRegister(Value pair) {
    if (element.isF16())
      return pair;
    Value word = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), pair);
    return vector::ExtractOp::create(b, word, ArrayRef<int64_t>{0});
  }

  /// D = A B + C on mma.sync m16n8k16 (C, D: four f32).
  SmallVector<Value> mma(ValueRange a, ValueRange bFrag, ValueRange c) {
    Type f32Type = b.getF32Type();
    auto result = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                   {f32Type, f32Type, f32Type, f32Type});
    NVVM::MMATypes type = element.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
    Value d = NVVM::MmaOp::create(b, result, a, bFrag, c, ArrayRef<int64_t>{16, 8, 16},
                                  std::nullopt, std::nullopt,
                                  std::array<NVVM::MMATypes, 2>{type, type},
                                  std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                                 NVVM::MMALayout::col});
    SmallVector<Value> out;
    for (int64_t k = 0; k < 4; ++k)
      out.push_back(LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{k}));
    return out;
  }

  /// The registers of a fragment that ldmatrix reads as `count` 8x8 tiles
  /// (4: A, 2: B) from shared memory at [row, col] (this lane's address).
  SmallVector<Value> loadFragment(Value smemTile, ValueRange at, int64_t count,
                                  bool transpose) {
    auto type = VectorType::get({count, 2}, element);
    Value tiles = nvgpu::LdMatrixOp::create(b, type, smemTile, at,
                                            b.getBoolAttr(transpose), b.getI32IntegerAttr(count));
    SmallVector<Value> regs;
    for (int64_t k = 0; k < count; ++k)
      regs.push_back(fragmentRegister(vector::ExtractOp::create(b, tiles, ArrayRef<int64_t>{k})));
    return regs;
  }

  /// S = Q K^T of the tile, the four accumulators of each 8-key block: per
  /// 16-channel step, the warp's A fragment (ldmatrix x4: lane l points at
  /// row l % 16, column 8 (l / 16) of its rows) times the B fragment of each
  /// 8-key block (x2: key l % 8, column 8 ((l / 8) % 2)); over the channels
  /// of the warp's group.
  SmallVector<SmallVector<Value>> tileProducts() {
    const int64_t blocks = tileKeys / 8;
    SmallVector<SmallVector<Value>> accs(blocks, SmallVector<Value>(4, f32(0.0)));
    Value queryRow = add(arith::RemUIOp::create(b, lane, index(16)), warpRow);
    Value queryHalf = arith::DivUIOp::create(b, lane, index(16));
    Value keyInBlock = arith::RemUIOp::create(b, lane, index(8));
    Value keyHalf = arith::RemUIOp::create(b, arith::DivUIOp::create(b, lane, index(8)), index(2));
    Value queryColumn = offsetBy(mul(queryHalf, 8), queryChannelBase);
    Value keyColumn = offsetBy(mul(keyHalf, 8), queryChannelBase);
    for (int64_t step = 0; step < groupHeadDim / 16; ++step) {
      SmallVector<Value> a = loadFragment(qs, ValueRange{queryRow, add(queryColumn, 16 * step)},
                                          4, /*transpose=*/false);
      for (int64_t nb = 0; nb < blocks; ++nb) {
        SmallVector<Value> bFrag = loadFragment(
            ks, ValueRange{add(keyInBlock, 8 * nb), add(keyColumn, 16 * step)}, 2,
            /*transpose=*/false);
        accs[nb] = mma(a, bFrag, accs[nb]);
      }
    }
    return accs;
  }

  /// O += P Vs (stage `stage`): a 16-key step at a time, P's A fragment
  /// from the weights of two 8-key blocks.
  void accumulateValues(SmallVector<Value> &state, ArrayRef<SmallVector<Value>> weights,
                        Value stage) override {
    Value keyRow = arith::RemUIOp::create(b, lane, index(16));
    for (int64_t step = 0; step < tileKeys / 16; ++step) {
      SmallVector<Value> a;
      for (int64_t nb : {2 * step, 2 * step + 1})
        for (int64_t k = 0; k < 2; ++k)
          a.push_back(packPair(weights[k][2 * nb], weights[k][2 * nb + 1]));
      Value row = add(keyRow, 16 * step);
      for (int64_t nb = 0; nb < valueBlocks; ++nb) {
        SmallVector<Value> bFrag = loadFragment(
            vs, ValueRange{stage, row, offsetBy(index(8 * nb), valueChannelBase)}, 2,
            /*transpose=*/true);
        SmallVector<Value> c;
        for (int64_t k = 0; k < 4; ++k)
          c.push_back(vector::ExtractOp::create(b, state[4 + nb], ArrayRef<int64_t>{k}));
        state[4 + nb] = vector::FromElementsOp::create(
            b, VectorType::get({4}, b.getF32Type()), mma(a, bFrag, c));
      }
    }
  }

  SharedTile exchangeTile;
  Value xs;
};

/// Warp specialization (`specialized`; sm_90a prefill, where the kernel
/// copies K as it is): a block of three warpgroups takes 2 x 64 rows.
/// Warpgroup 0, the producer, copies the K and V tiles of the block's
/// visible key range by cp.async into kSpecializedStages stages of Ks and
/// Vs; warpgroups 1 and 2, the consumers, each multiply their 64 rows of Qs
/// with every tile (S = Q K^T, the online softmax, O += P V) as the
/// one-warpgroup kernel does, with no block-wide barrier in the loop. A
/// stage has two mbarriers: "full", on which the producer's threads arrive
/// once their copies of the stage landed (cp.async.wait_group, then
/// fence.proxy.async: wgmma reads through the async proxy what cp.async
/// wrote through the generic one), and "empty", on which the consumers'
/// threads arrive after their P V read the stage. The n-th tile the block
/// visits uses stage n mod S in phase n / S of its barriers: the consumers
/// wait for parity (n / S) mod 2 of "full", the producer for the parity
/// before it of "empty" (the phase before a barrier's first counts as
/// complete, so the first S tiles wait for nothing). The producer keeps two
/// tiles in flight: tile n's copies are issued before tile n - 1 is waited
/// for. Both roles walk the same tiles (tileLoop) and skip the same hidden
/// ones. The whole block stages Qs and initializes the barriers before the
/// roles part (one barrier); then setmaxnreg moves registers from the
/// producer to the consumers (registers(); a block of 384 threads starts
/// with 168). The
/// consumers' loop is software-pipelined and they take turns to issue their
/// products (consumeTile, beginTurn). With TMA (tmaLoads) the producer is
/// one thread of its first warp, whose bulk tensor copies complete the
/// stage's "full" barrier by their bytes (produceByTma).
class WarpSpecializedPipeline : public MmaAttentionKernel {
public:
  using MmaAttentionKernel::MmaAttentionKernel;

protected:
  void blockBody(Value rowTile, Value kvHead, Value gridZ, Value thread) override {
    if (!specialized)
      return MmaAttentionKernel::blockBody(rowTile, kvHead, gridZ, thread);
    setUpBlock(rowTile, kvHead, gridZ);
    tid = thread;
    stageQueries();
    std::pair<Value, Value> queryRange = cutKeyRange();
    initBarriers();
    sharedWritesDone();
    Value producer = lessThan(thread, index(kThreads));
    auto roles = scf::IfOp::create(b, producer, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    produce(queryRange);
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    consume(arith::SubIOp::create(b, thread, index(kThreads)), queryRange);
  }

private:
  /// Suspend-time hint of an mbarrier wait (ns), as upstream's nvgpu uses.
  static constexpr int32_t kWaitTicks = 10000000;

  /// The (producer, consumer) registers a thread for the kernel's tiles.
  std::pair<int32_t, int32_t> registers() const {
    // Explicit positions under masks: the producer also finds the hidden
    // tiles from the keys' positions (loads and shuffles), which 24
    // registers spill.
    const bool visibility = explicitPositions && mask.any();
    return tileKeys == kTileKeys && !visibility ? kWideTileRegisters : kNarrowTileRegisters;
  }

  Value i32(int64_t v) { return arith::ConstantOp::create(b, b.getI32IntegerAttr(v)); }

  /// The full or the empty mbarrier of stage `stage` (index).
  Value barrier(Value stage, bool full) {
    Value slot = full ? stage : add(stage, kSpecializedStages);
    Value offset = arith::IndexCastUIOp::create(b, b.getI64Type(), mul(slot, 8));
    Value address = arith::AddIOp::create(b, barriers, offset);
    return LLVM::IntToPtrOp::create(b, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
  }

  /// Thread 0 initializes the barriers: full ones wait for the producer's
  /// threads (its one thread and the transaction bytes with TMA), empty
  /// ones for the consumers'. (The block's barrier follows.)
  void initBarriers() {
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, index(0));
    auto ifFirst = scf::IfOp::create(b, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
    for (int64_t s = 0; s < kSpecializedStages; ++s) {
      Value producers = i32(tmaLoads ? 1 : kThreads);
      NVVM::MBarrierInitOp::create(b, barrier(index(s), /*full=*/true), producers, Value());
      Value consumers = i32(kConsumerGroups * kThreads);
      NVVM::MBarrierInitOp::create(b, barrier(index(s), /*full=*/false), consumers, Value());
    }
    NVVM::FenceMbarrierInitOp::create(b);
  }

  /// (stage, phase parity as i32) of the n-th tile the block visits.
  /// (32-bit arithmetic: a block visits far fewer than 2^32 tiles, and
  /// 64-bit index arithmetic takes more instructions.)
  std::pair<Value, Value> stageOf(Value n) {
    Value n32 = arith::IndexCastUIOp::create(b, b.getI32Type(), n);
    Value stage = arith::RemUIOp::create(b, n32, i32(kSpecializedStages));
    Value round = arith::DivUIOp::create(b, n32, i32(kSpecializedStages));
    Value parity = arith::AndIOp::create(b, round, i32(1));
    return {arith::IndexCastUIOp::create(b, b.getIndexType(), stage), parity};
  }

  void waitFor(Value barrier, Value parity) {
    NVVM::MBarrierTryWaitParityOp::create(b, barrier, parity, i32(kWaitTicks));
  }

  void arriveOn(Value barrier) { NVVM::MBarrierArriveOp::create(b, Type(), barrier, Value()); }

  /// The producer: per visited tile n, once stage n mod S is empty, its K
  /// and V copied into it (two groups of cp.async), then the stage of tile
  /// n - 1 marked full; after the last tile, its own stage.
  void produce(std::pair<Value, Value> queryRange) {
    NVVM::SetMaxRegisterOp::create(b, registers().first, NVVM::SetMaxRegisterAction::decrease);
    if (tmaLoads) {
      // The producer's first warp walks the tiles (tileLoop's shuffles need
      // a whole warp); its first lane issues the loads.
      auto ifFirstWarp = scf::IfOp::create(b, lessThan(tid, index(kWarpSize)),
                                           /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifFirstWarp.thenBlock()->getTerminator());
      return produceByTma(queryRange);
    }
    // (tileLoop finds the hidden tiles from the block's rows and, with
    // explicit positions, the tile's keys read by each warp's lanes: the
    // same ones in both roles.)
    scf::ForOp tiles = tileLoop(
        ValueRange{index(0)}, queryRange,
        [&](Value t0, ValueRange state, Value) {
          Value n = state[0];
          auto [stage, parity] = stageOf(n);
          // (One op-building argument a call: their order is the compiler's.)
          Value before = arith::XOrIOp::create(b, parity, i32(1));
          waitFor(barrier(stage, /*full=*/false), before);
          copyTile(key, ks, t0, d, stage);
          copyTile(value, vs, t0, dv, stage);
          auto ifAfterFirst = scf::IfOp::create(
              b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, n, index(0)),
              /*withElseRegion=*/false);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(ifAfterFirst.thenBlock()->getTerminator());
            stageLanded(stageBefore(stage), /*pending=*/2);
          }
          return SmallVector<Value>{add(n, 1)};
        },
        [&](ValueRange state) { return SmallVector<Value>(state); });
    Value count = tiles.getResult(0);
    auto ifAny = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, count, index(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifAny.thenBlock()->getTerminator());
    stageLanded(stageBefore(stageOf(count).first), /*pending=*/0);
  }

  /// The producer by TMA: per visited tile n, once stage n mod S is empty,
  /// thread 0 arms its full barrier with the stage's bytes (one arrival,
  /// the transaction count) and starts the bulk tensor copies of K and V,
  /// one per 64-channel slice; the barrier completes when they land.
  /// (TMA writes through the async proxy, which wgmma reads: no fence.)
  /// Rows past the last key are zero (the map's bounds); rows of a tile
  /// from keyEnd on (the causal range's end) are the keys there, which the
  /// masks hide (weight 0), where cp.async would zero them: a value row
  /// there with inf or NaN adds 0 x inf = NaN, as a masked key inside the
  /// range does (docs/gpu.md).
  void produceByTma(std::pair<Value, Value> queryRange) {
    const int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    const int64_t sliceChannels = kSwizzleRowBytes / elementBytes;
    const int64_t sliceBytes = tileKeys * kSwizzleRowBytes;
    const int64_t keyBytes = tileKeys * d * elementBytes, valueBytes = tileKeys * dv * elementBytes;
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, index(0));
    Type i32Type = b.getI32Type();
    auto coordinate = [&](Value v) { return arith::IndexCastUIOp::create(b, i32Type, v); };
    tileLoop(
        ValueRange{index(0)}, queryRange,
        [&](Value t0, ValueRange state, Value) {
          Value n = state[0];
          auto [stage, parity] = stageOf(n);
          auto ifFirst = scf::IfOp::create(b, first, /*withElseRegion=*/false);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
            Value before = arith::XOrIOp::create(b, parity, i32(1));
            waitFor(barrier(stage, /*full=*/false), before);
            Value full = barrier(stage, /*full=*/true);
            NVVM::MBarrierArriveExpectTxOp::create(b, Type(), full, i32(keyBytes + valueBytes),
                                                   NVVM::MemScopeKind::CTA, /*relaxed=*/false,
                                                   Value());
            Value head = coordinate(kvh), batch = coordinate(bi), row = coordinate(t0);
            auto load = [&](Value map, Value tile, int64_t channels) {
              for (int64_t slice = 0; slice < channels / sliceChannels; ++slice) {
                Value address = arith::AddIOp::create(
                    b, tile, arith::ConstantOp::create(b, b.getI64IntegerAttr(slice * sliceBytes)));
                // The CTA's own shared memory, addressed as shared::cluster
                // (the instruction's destination space).
                Value destination = LLVM::AddrSpaceCastOp::create(
                    b, LLVM::LLVMPointerType::get(b.getContext(), 7),
                    LLVM::IntToPtrOp::create(b, LLVM::LLVMPointerType::get(b.getContext(), 3),
                                             address));
                SmallVector<Value> at = {i32(slice * sliceChannels), row, head, batch};
                NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
                    b, destination, map, at, full, ValueRange{}, Value(), Value(),
                    NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, nullptr, Value());
              }
            };
            load(keyMap, stageAddress(kvAddresses[0], stage, keyBytes), d);
            load(valueMap, stageAddress(kvAddresses[1], stage, valueBytes), dv);
          }
          return SmallVector<Value>{add(n, 1)};
        },
        [&](ValueRange state) { return SmallVector<Value>(state); });
  }


  /// Waits until at most `pending` groups of the thread's copies are in
  /// flight, fences what landed for the async proxy, and arrives on the
  /// full barrier of `stage`.
  void stageLanded(Value stage, int32_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, pending);
    fenceSharedWrites();
    arriveOn(barrier(stage, /*full=*/true));
  }

  /// Consumer c (thread `thread` of the consumers): rows 64 c .. 64 c + 63
  /// of the block. State: (m, l) and O as tileStep's, the register A words
  /// of the last visited tile's weights, and the count n of visited tiles.
  void consume(Value thread, std::pair<Value, Value> queryRange) {
    NVVM::SetMaxRegisterOp::create(b, registers().second, NVVM::SetMaxRegisterAction::increase);
    setUpLanes(thread);
    consumer = arith::DivUIOp::create(b, thread, index(kThreads));
    bindConsumerRows(mul(consumer, kBlockRows));
    const int64_t words = tileKeys / 16 * 4;
    SmallVector<Value> init = initialState();
    init.append(words, arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
    init.push_back(index(0));
    // Consumer 0 takes the first turn.
    whenConsumer(1, [&] { endTurn(); });
    scf::ForOp tiles = tileLoop(
        init, queryRange,
        [&](Value t0, ValueRange state, Value partial) { return consumeTile(t0, state, partial); },
        [&](ValueRange state) { return SmallVector<Value>(state); });
    ValueRange last = tiles.getResults();
    Value n = last.back();
    // O += P V of the last visited tile.
    SmallVector<Value> out(last.take_front(4 + valueBlocks));
    auto ifAny = scf::IfOp::create(b, TypeRange(ValueRange(out).drop_front(4)),
                                   arith::CmpIOp::create(b, arith::CmpIPredicate::ne, n, index(0)),
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifAny.thenBlock());
      SmallVector<Value> state(out);
      beginTurn();
      deferWaits = true;
      accumulateWords(state, SmallVector<Value>(last.slice(4 + valueBlocks, words)),
                      stageBefore(stageOf(n).first));
      deferWaits = false;
      endTurn();
      NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
      scf::YieldOp::create(b, ValueRange(state).drop_front(4));
      b.setInsertionPointToStart(ifAny.elseBlock());
      scf::YieldOp::create(b, ValueRange(out).drop_front(4));
    }
    llvm::copy(ifAny.getResults(), out.begin() + 4);
    // Consumer 1's last turn handed over: consumer 0 takes it, so that both
    // named barriers end complete.
    whenConsumer(0, [&] { beginTurn(); });
    storeOutput(out);
  }

  /// Visited tile n (software-pipelined, as FlashAttention-3's consumers):
  /// once its stage is full, in this consumer's turn, S = Q K^T of this
  /// tile and O += P V of the tile before are issued together (for the
  /// first tile an empty group instead of P V); waiting until one group is
  /// pending waits for S, so the softmax of this tile runs while P V of the
  /// tile before is on the tensor cores, and while the other consumer
  /// issues its products. Then P V is waited for, the tile before's stage
  /// released, and O rescaled by this tile's alpha.
  SmallVector<Value> consumeTile(Value t0, ValueRange state, Value partial) {
    const int64_t words = tileKeys / 16 * 4;
    Value n = state.back();
    auto [stage, parity] = stageOf(n);
    Value previous = stageBefore(stage);
    Value started = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, n, index(0));
    waitFor(barrier(stage, /*full=*/true), parity);
    beginTurn();
    deferWaits = true;
    keyStage = stage;
    SmallVector<SmallVector<Value>> products = this->products();
    keyStage = nullptr;
    SmallVector<Value> current(state.take_front(4 + valueBlocks));
    auto ifStarted = scf::IfOp::create(b, TypeRange(ValueRange(current).drop_front(4)), started,
                                       /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifStarted.thenBlock());
      SmallVector<Value> accumulated(current);
      accumulateWords(accumulated, SmallVector<Value>(state.slice(4 + valueBlocks, words)),
                      previous);
      scf::YieldOp::create(b, ValueRange(accumulated).drop_front(4));
      b.setInsertionPointToStart(ifStarted.elseBlock());
      NVVM::WgmmaGroupSyncAlignedOp::create(b);
      scf::YieldOp::create(b, ValueRange(current).drop_front(4));
    }
    deferWaits = false;
    endTurn();
    llvm::copy(ifStarted.getResults(), current.begin() + 4);
    NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
    SmallVector<SmallVector<Value>> scores = tileScores(products, t0, needsMask(t0, partial));
    auto [next, weights, rescale] = softmaxWeights(current, scores);
    SmallVector<Value> nextWords = weightWords(weights);
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    {
      auto ifRelease = scf::IfOp::create(b, started, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifRelease.thenBlock()->getTerminator());
      arriveOn(barrier(previous, /*full=*/false));
    }
    rescaleOutput(ValueRange(current).slice(4, valueBlocks), rescale,
                  MutableArrayRef<Value>(next).slice(4, valueBlocks));
    next.append(nextWords);
    next.push_back(add(n, 1));
    return next;
  }

  /// The stage of the tile visited before the one in `stage`.
  Value stageBefore(Value stage) {
    Value shifted = add(stage, kSpecializedStages - 1);
    return arith::RemUIOp::create(b, shifted, index(kSpecializedStages));
  }

  /// The consumers take turns to issue their products (ping-pong, on named
  /// barriers 1 and 2 of 256 threads): consumer c waits on barrier 1 + c
  /// for the other's hand-over, issues, and hands over on barrier 2 - c;
  /// its softmax then overlaps the other's products.
  void beginTurn() {
    Value threads = i32(kConsumerGroups * kThreads);
    NVVM::BarrierOp::create(b, TypeRange{}, turnBarrier(/*own=*/true), threads, {}, Value());
  }
  void endTurn() {
    Value threads = i32(kConsumerGroups * kThreads);
    NVVM::BarrierArriveOp::create(b, turnBarrier(/*own=*/false), threads);
  }
  Value turnBarrier(bool own) {
    Value id = own ? add(consumer, 1) : arith::SubIOp::create(b, index(2), consumer);
    return arith::IndexCastUIOp::create(b, b.getI32Type(), id);
  }
  void whenConsumer(int64_t c, function_ref<void()> body) {
    auto ifThis = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, consumer, index(c)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifThis.thenBlock()->getTerminator());
    body();
  }

  /// The consumer warpgroup of the thread (0 or 1).
  Value consumer;

protected:
  /// The address (i64) of stage `stage` (index; null: the first) of a tile
  /// at `address` whose stages are `bytes` apart.
  Value stageAddress(Value address, Value stage, int64_t bytes) {
    if (!stage)
      return address;
    Value offset = arith::IndexCastUIOp::create(b, b.getI64Type(), mul(stage, bytes));
    return arith::AddIOp::create(b, address, offset);
  }

  /// TMA: the shared addresses (i64, kSwizzleAtomBytes-aligned) of the K
  /// stages and of the V stages after them (bindEngineTiles).
  Value kvAddresses[2];
};

/// Warpgroup MMA (sm_90a): the block's four warps are one warpgroup (two
/// consumer warpgroups and a producer when warp-specialized), each
/// product a chain of wgmma.mma_async m64nNk16 on operands that matrix
/// descriptors point at in core-matrix tiles; the weights P stay in the
/// registers that computed them (wgmma's register A).
class WarpgroupKernel final : public WarpSpecializedPipeline {
public:
  WarpgroupKernel(ImplicitLocOpBuilder &b, pe_gpu::MmaAttentionOp op, bool specialized,
                  bool tma)
      : WarpSpecializedPipeline(b, op, /*warpgroup=*/true, specialized, tma) {}

private:
  /// Tiles of core-matrix chunks (tileShapeOf).
  SmallVector<Value> tileIndex(Value row, Value col) override {
    return {arith::DivUIOp::create(b, col, index(kCopyLanes)), row,
            arith::RemUIOp::create(b, col, index(kCopyLanes))};
  }
  /// The two pieces of a 32-byte sector per row, 16 rows per warp, so that
  /// global reads stay whole sectors and the shared-memory writes of a piece
  /// column are contiguous (chunks is even: head dims are multiples of 16).
  std::pair<Value, Value> copyPiece(Value w, int64_t chunks) override {
    Value row = arith::RemUIOp::create(b, arith::DivUIOp::create(b, w, index(2)), index(tileKeys));
    Value chunk = add(mul(arith::DivUIOp::create(b, w, index(2 * tileKeys)), 2),
                      arith::RemUIOp::create(b, w, index(2)));
    return {row, mul(chunk, kCopyLanes)};
  }
  /// The spare row of chunk 0.
  std::pair<int64_t, int64_t> spareSlot(int64_t n) const override { return {tileKeys, 0}; }
  void bindEngineTiles() override {
    if (tmaLoads)
      return bindTmaTiles();
    Value tiles[] = {qs, ks, vs};
    for (auto [address, tile] : llvm::zip_equal(addresses, tiles))
      address = sharedAddress(tile);
  }
  /// TMA: the K stages from the first kSwizzleAtomBytes boundary of the
  /// stages' bytes (where the swizzle pattern starts, as the descriptors
  /// assume), the V stages after them.
  void bindTmaTiles() {
    auto i64 = [&](int64_t v) {
      return arith::ConstantOp::create(b, b.getI64IntegerAttr(v)).getResult();
    };
    addresses[0] = sharedAddress(qs);
    Value start = arith::AddIOp::create(b, sharedAddress(kv), i64(kSwizzleAtomBytes - 1));
    kvAddresses[0] = arith::AndIOp::create(b, start, i64(-kSwizzleAtomBytes));
    kvAddresses[1] = arith::AddIOp::create(
        b, kvAddresses[0], i64(keyStages * tileKeys * d * element.getIntOrFloatBitWidth() / 8));
    addresses[1] = kvAddresses[0];
    addresses[2] = kvAddresses[1];
  }
  /// A consumer's Qs: its first row's 16 bytes in each chunk.
  void bindConsumerRows(Value firstRow) override {
    Value offset = arith::IndexCastUIOp::create(b, b.getI64Type(), mul(firstRow, kCoreRowBytes));
    addresses[0] = arith::AddIOp::create(b, addresses[0], offset);
  }
  /// wgmma reads shared memory through the async proxy.
  void fenceSharedWrites() override {
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  }
  SmallVector<SmallVector<Value>> products() override { return warpgroupProducts(); }
  /// O += P Vs, P from registers: no shared-memory round trip, fence or
  /// barrier (Vs was fenced and waited for before S).
  void accumulateValues(SmallVector<Value> &state, ArrayRef<SmallVector<Value>> weights,
                        Value stage) override {
    warpgroupValues(state, weights, stage);
  }

  /// Bytes between the 8-element chunks of a core-matrix tile of `rows` rows.
  static int64_t chunkBytes(int64_t rows) { return (rows + 1) * kCoreRowBytes; }

  /// The matrix descriptor (PTX ISA, wgmma) of the operand at `offset` bytes
  /// into the tile at `address`, without swizzle: bits 0-13 hold the start
  /// address, 16-29 the leading dimension byte offset (LBO), 32-45 the stride
  /// dimension byte offset (SBO), each in units of 16 bytes.
  /// With `swizzled`, the layout type field (bits 62-63) says 128-byte
  /// swizzle (tiles loaded by TMA).
  Value descriptor(Value address, int64_t offset, int64_t leading, int64_t stride,
                   bool swizzled = false) {
    auto i64 = [&](int64_t v) {
      return arith::ConstantOp::create(b, b.getI64IntegerAttr(v)).getResult();
    };
    Value start = arith::ShRUIOp::create(b, arith::AddIOp::create(b, address, i64(offset)), i64(4));
    uint64_t fields = ((uint64_t(leading) >> 4) << 16) | ((uint64_t(stride) >> 4) << 32);
    if (swizzled)
      fields |= kSwizzle128Layout;
    return arith::OrIOp::create(b, start, i64(static_cast<int64_t>(fields)));
  }

  /// The descriptor of K-major Ks loaded by TMA for the k16 step `step`:
  /// slice step / 4 (64 channels, tileKeys rows of 128 bytes), 32 bytes a
  /// step into its rows; 8-row groups one swizzle atom apart (SBO; the
  /// LBO of a swizzled K-major operand is unused: 16 bytes).
  Value swizzledKeyDescriptor(Value address, int64_t step) {
    const int64_t stepsPerRow = kSwizzleRowBytes / 32;
    const int64_t offset =
        step / stepsPerRow * tileKeys * kSwizzleRowBytes + step % stepsPerRow * 32;
    return descriptor(address, offset, kCoreRowBytes, kSwizzleAtomBytes, /*swizzled=*/true);
  }

  /// The descriptor of MN-major Vs loaded by TMA for the k16 step `step`:
  /// keys 16 step .. (16 rows of 128 bytes each), 8-key groups one swizzle
  /// atom apart (SBO), the 64-channel slices tileKeys rows apart (LBO).
  Value swizzledValueDescriptor(Value address, int64_t step) {
    return descriptor(address, step * 16 * kSwizzleRowBytes, tileKeys * kSwizzleRowBytes,
                      kSwizzleAtomBytes, /*swizzled=*/true);
  }

  /// D = A B + D (D = A B without `accumulate`) on wgmma m64nNk16 (f32
  /// accumulators), A and B K-major from descriptors.
  Value wgmma(Value acc, Value a, Value bDesc, int64_t n, bool accumulate) {
    auto type = element.isF16() ? NVVM::WGMMATypes::f16 : NVVM::WGMMATypes::bf16;
    return NVVM::WgmmaMmaAsyncOp::create(
        b, acc.getType(), acc, a, bDesc, NVVM::MMAShapeAttr::get(b.getContext(), 64, n, 16),
        type, type, NVVM::WGMMATypes::f32,
        accumulate ? NVVM::WGMMAScaleOut::one : NVVM::WGMMAScaleOut::zero, NVVM::WGMMAScaleIn::one,
        NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row, NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  }

  /// Runs a chain of wgmma on `n` columns of accumulators (four f32 per 8
  /// columns, as mma.sync's C fragments): `blocks`, or none for a chain that
  /// starts without (its first product does not accumulate: no register is
  /// written between the fence and the chain); fences the registers, issues
  /// the chain, commits it, and waits for it unless `deferWaits`.
  SmallVector<Value> warpgroupChain(int64_t n, ArrayRef<Value> blocks,
                                    function_ref<Value(Value)> chain) {
    Type f32Type = b.getF32Type();
    auto type =
        LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(n / 2, f32Type));
    Value acc = LLVM::PoisonOp::create(b, type);
    for (auto [j, block] : llvm::enumerate(blocks))
      for (int64_t k = 0; k < 4; ++k) {
        Value x = vector::ExtractOp::create(b, block, ArrayRef<int64_t>{k});
        acc = LLVM::InsertValueOp::create(b, acc, x, ArrayRef<int64_t>{int64_t(4 * j + k)});
      }
    NVVM::WgmmaFenceAlignedOp::create(b);
    acc = chain(acc);
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    if (!deferWaits)
      NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    SmallVector<Value> out;
    for (int64_t j = 0; j < n / 8; ++j) {
      SmallVector<Value> x;
      for (int64_t k = 0; k < 4; ++k)
        x.push_back(LLVM::ExtractValueOp::create(b, acc, ArrayRef<int64_t>{int64_t(4 * j + k)}));
      out.push_back(vector::FromElementsOp::create(b, VectorType::get({4}, f32Type), x));
    }
    return out;
  }


  /// S = Qs Ks^T on wgmma m64n{tileKeys}k16, a step per 16 channels (two
  /// chunks of both K-major tiles; Ks of stage keyStage).
  SmallVector<SmallVector<Value>> warpgroupProducts() {
    Value qAddress = addresses[0];
    const int64_t stageBytes = tmaLoads ? tileKeys * d * element.getIntOrFloatBitWidth() / 8
                                        : d / kCopyLanes * chunkBytes(tileKeys);
    Value kAddress = stageAddress(addresses[1], keyStage, stageBytes);
    SmallVector<Value> blocks = warpgroupChain(tileKeys, {}, [&](Value acc) {
      for (int64_t step = 0; step < d / 16; ++step) {
        int64_t qChunk = chunkBytes(blockRows), kChunk = chunkBytes(tileKeys);
        Value a = descriptor(qAddress, 2 * step * qChunk, qChunk, kCoreRows * kCoreRowBytes);
        Value bDesc = tmaLoads ? swizzledKeyDescriptor(kAddress, step)
                               : descriptor(kAddress, 2 * step * kChunk, kChunk,
                                            kCoreRows * kCoreRowBytes);
        acc = wgmma(acc, a, bDesc, tileKeys, /*accumulate=*/step > 0);
      }
      return acc;
    });
    SmallVector<SmallVector<Value>> accs;
    for (Value block : blocks) {
      SmallVector<Value> acc;
      for (int64_t k = 0; k < 4; ++k)
        acc.push_back(vector::ExtractOp::create(b, block, ArrayRef<int64_t>{k}));
      accs.push_back(acc);
    }
    return accs;
  }

  /// The weights of keys 16 step .. 16 step + 15 as wgmma's register A
  /// (four 32-bit words a lane, mma.sync's A layout: rows gq and gq + 8,
  /// keys 2 tq + {0, 1}, then 8 + 2 tq + {0, 1}): S's 8-key blocks 2 step
  /// and 2 step + 1, rounded in pairs.
  SmallVector<Value> weightFragment(ArrayRef<SmallVector<Value>> weights, int64_t step) {
    SmallVector<Value> a;
    for (int64_t nb : {2 * step, 2 * step + 1})
      for (int64_t k = 0; k < 2; ++k) {
        Value pair = roundPair(weights[k][2 * nb], weights[k][2 * nb + 1]);
        Value word = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), pair);
        a.push_back(vector::ExtractOp::create(b, word, ArrayRef<int64_t>{0}));
      }
    return a;
  }

  /// D = A B + D on wgmma m64nNk16 with A from registers (`a`, four words)
  /// and B MN-major at `bDesc`. Inline PTX: the NVVM dialect's wgmma takes A
  /// by descriptor only. Operands: the accumulators ($0 .. $(n/2 - 1), tied
  /// to the inputs after them), A, B, and scale-d as an immediate.
  Value wgmmaRegisterA(Value acc, ArrayRef<Value> a, Value bDesc, int64_t n) {
    const int64_t count = n / 2;
    const char *type = element.isF16() ? "f16" : "bf16";
    std::string text, constraints;
    llvm::raw_string_ostream asmText(text), asmConstraints(constraints);
    asmText << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * count + 5 << ", 0;\n"
            << "wgmma.mma_async.sync.aligned.m64n" << n << "k16.f32." << type << "." << type
            << " {";
    for (int64_t i = 0; i < count; ++i) {
      asmText << (i ? ", $" : "$") << i;
      asmConstraints << "=f,";
    }
    asmText << "}, {$" << 2 * count << ", $" << 2 * count + 1 << ", $" << 2 * count + 2
            << ", $" << 2 * count + 3 << "}, $" << 2 * count + 4 << ", p, 1, 1, 1;\n}\n";
    for (int64_t i = 0; i < count; ++i)
      asmConstraints << i << ",";
    asmConstraints << "r,r,r,r,l,n";
    SmallVector<Value> operands;
    for (int64_t i = 0; i < count; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(b, acc, ArrayRef<int64_t>{i}));
    llvm::append_range(operands, a);
    operands.push_back(bDesc);
    operands.push_back(arith::ConstantOp::create(b, b.getI32IntegerAttr(1)));
    return LLVM::InlineAsmOp::create(b, acc.getType(), operands, text, constraints,
                                     /*has_side_effects=*/true, /*is_align_stack=*/false,
                                     LLVM::tailcallkind::TailCallKind::None,
                                     LLVM::AsmDialectAttr::get(b.getContext(),
                                                               LLVM::AsmDialect::AD_ATT),
                                     /*operand_attrs=*/ArrayAttr())
        .getResult(0);
  }

  /// O += P Vs (stage `stage`) on wgmma m64n{dv}k16, a step per 16 keys: P
  /// from registers, Vs MN-major (keys are its K dimension, 8-key groups 128
  /// bytes apart).
  void warpgroupValues(SmallVector<Value> &state, ArrayRef<SmallVector<Value>> weights,
                       Value stage) {
    // The words before the chain: wgmma.fence orders their registers.
    accumulateWords(state, weightWords(weights), stage);
  }

  /// The register A words of each 16-key step of P V, step after step.
  SmallVector<Value> weightWords(ArrayRef<SmallVector<Value>> weights) override {
    SmallVector<Value> words;
    for (int64_t step = 0; step < tileKeys / 16; ++step)
      llvm::append_range(words, weightFragment(weights, step));
    return words;
  }

  void accumulateWords(SmallVector<Value> &state, ArrayRef<Value> words, Value stage) override {
    // Stage `stage` of Vs: (Dv / 8) chunks of (keys + 1) rows of 16 bytes;
    // loaded by TMA, Dv / 64 slices of 128-byte rows.
    const int64_t stageBytes = tmaLoads ? tileKeys * dv * element.getIntOrFloatBitWidth() / 8
                                        : dv / kCopyLanes * chunkBytes(tileKeys);
    Value vAddress = stageAddress(addresses[2], stage, stageBytes);
    SmallVector<Value> blocks(state.begin() + 4, state.begin() + 4 + valueBlocks);
    blocks = warpgroupChain(dv, blocks, [&](Value acc) {
      const int64_t keyGroup = kCoreRows * kCoreRowBytes;
      for (int64_t step = 0; step < tileKeys / 16; ++step) {
        Value bDesc = tmaLoads ? swizzledValueDescriptor(vAddress, step)
                               : descriptor(vAddress, 2 * step * keyGroup, keyGroup,
                                            chunkBytes(tileKeys));
        acc = wgmmaRegisterA(acc, words.slice(4 * step, 4), bDesc, dv);
      }
      return acc;
    });
    llvm::copy(blocks, state.begin() + 4);
  }

  /// The shared-memory addresses of Qs, Ks and Vs (i64).
  Value addresses[3];
};

struct GpuMmaAttentionPass : pe::impl::PEGpuMmaAttentionBase<GpuMmaAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-gpu-mma-attention")))
      return signalPassFailure();
    SymbolTable symbols(getOperation());
    SmallVector<pe_gpu::MmaAttentionOp> ops;
    getOperation()->walk([&](pe_gpu::MmaAttentionOp op) { ops.push_back(op); });
    // Kernels @pe_kernels::@<function>_attention_<n>, n counted per function.
    llvm::StringMap<int64_t> kernels;
    for (pe_gpu::MmaAttentionOp op : ops) {
      auto function = op->getParentOfType<FunctionOpInterface>();
      std::string prefix = function ? function.getName().str() : "pe";
      std::string name = prefix + "_attention_" + std::to_string(kernels[prefix]++);
      ImplicitLocOpBuilder b(op.getLoc(), op);
      if (takesWarpgroupMma(warpgroup, op.getValue().getType().getDimSize(3)))
        WarpgroupKernel(b, op, takesWarpSpecialization(warpSpecialize, op), tma)
            .build(symbols, name);
      else
        MmaSyncKernel(b, op).build(symbols, name);
      op.erase();
    }
  }
};

} // namespace

bool mlir::pe::mmaAttentionTakesWideBlocks(int64_t d, int64_t dv) {
  return std::max(d, dv) <= kWideValueDim && channelGroupsFor(dv) == 1;
}

int64_t mlir::pe::mmaAttentionSharedBytes(int64_t d, int64_t dv, int64_t elementBytes,
                                          bool warpgroup) {
  return blockSharedBytesOf(d, dv, elementBytes, takesWarpgroupMma(warpgroup, dv));
}
