//===- OperandChecks.h - operands and run-time checks of pe ops -*- C++ -*-===//
//
// What every lowering of a pe op does before its math: sizes that the
// verifier could not compare (dynamic dimensions) checked at run time, the
// default positions of pe.attention, the tables of pe.rope, and the limits on
// work done on the host at compile time. Tensor-level IR.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DIALECT_PE_UTILS_OPERANDCHECKS_H
#define PE_DIALECT_PE_UTILS_OPERANDCHECKS_H

#include "pe/Dialect/PE/IR/PE.h"
#include "pe-c/Runtime.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

#include <utility>

namespace mlir::pe {

/// The runtime function that pe.learned calls for an out-of-range position:
/// void pe_runtime_learned_out_of_range(int64_t position, int64_t index,
///                                      int64_t rows).
inline constexpr char kLearnedOutOfRangeFn[] = "pe_runtime_learned_out_of_range";

/// The runtime function that pe.append_kv calls for a slot outside its cache:
/// void pe_runtime_slot_out_of_range(int64_t slot, int64_t index,
///                                   int64_t capacity).
inline constexpr char kSlotOutOfRangeFn[] = "pe_runtime_slot_out_of_range";

/// The runtime functions of pe.paged_attention's checks, each
/// void f(int64_t value, int64_t sequence, int64_t limit).
inline constexpr char kPageOutOfRangeFn[] = "pe_runtime_page_out_of_range";
inline constexpr char kKvLengthOutOfRangeFn[] = "pe_runtime_kv_length_out_of_range";
inline constexpr char kQueryCountOutOfRangeFn[] =
    "pe_runtime_query_count_out_of_range";
inline constexpr char kSequenceOutOfRangeFn[] = "pe_runtime_sequence_out_of_range";
/// The page and length checks of pe.gather_pages, whose messages name it.
inline constexpr char kGatherPageOutOfRangeFn[] = "pe_runtime_gather_page_out_of_range";
inline constexpr char kGatherLengthOutOfRangeFn[] = "pe_runtime_gather_length_out_of_range";
inline constexpr char kMaskColumnsOutOfRangeFn[] = "pe_runtime_mask_columns_out_of_range";

/// The runtime function for dynamic sizes that differ:
/// void pe_runtime_size_mismatch(int64_t check, int64_t got, int64_t expected),
/// `check` one of `enum pe_size_check` (include/pe-c/Runtime.h).
inline constexpr char kSizeMismatchFn[] = "pe_runtime_size_mismatch";

/// Whether `callee` is one of the run-time error reports above: a call that
/// reports and never writes the program's buffers.
inline bool isRuntimeErrorReport(StringRef callee) {
  return llvm::is_contained(
      {StringRef(kLearnedOutOfRangeFn), StringRef(kSlotOutOfRangeFn),
       StringRef(kPageOutOfRangeFn), StringRef(kKvLengthOutOfRangeFn),
       StringRef(kQueryCountOutOfRangeFn), StringRef(kSequenceOutOfRangeFn),
       StringRef(kGatherPageOutOfRangeFn), StringRef(kGatherLengthOutOfRangeFn),
       StringRef(kMaskColumnsOutOfRangeFn), StringRef(kSizeMismatchFn)},
      callee);
}

/// Constant tables built on the host at compile time (frequencies, slopes)
/// hold at most this many entries; larger ones are a diagnostic.
inline constexpr int64_t kMaxConstantTableEntries = int64_t(1) << 20;

/// The entries of the largest constant table that lowering `op` builds on
/// the host (RoPE frequencies, ALiBi slopes, sinusoidal frequencies).
int64_t largestConstantTable(Operation *op);

/// Fails with a diagnostic when that table has more than
/// kMaxConstantTableEntries entries.
LogicalResult checkConstantTables(Operation *op);

/// Fails with a diagnostic unless `root` (the op a lowering pass runs on) is
/// a symbol table such as a module: lowerings declare runtime functions and
/// kernels in it, which must not happen from passes running on functions in
/// parallel.
LogicalResult checkLoweringRoot(Operation *root, StringRef passName);

/// Declares `void name(i64, i64, i64)` once in the symbol table that holds
/// `op` (a runtime function that generated code calls). `op` must have one.
FlatSymbolRefAttr declareRuntimeFunction(OpBuilder &b, Operation *op,
                                         StringRef name);

/// Calls pe_runtime_size_mismatch(check, got, want) unless got == want
/// (index values).
void buildSizeCheck(ImplicitLocOpBuilder &b, Operation *op, pe_size_check check,
                    Value got, Value want);

/// Calls pe_runtime_size_mismatch(PE_CHECK_GPU_ALIGNMENT, misalignment, 0)
/// when the first element of `buffer` (a memref: its aligned pointer plus
/// its offset) is not `bytes`-aligned: a caller's view into a larger
/// allocation, which GPU vector accesses (ld.global.v4, cp.async of 16
/// bytes) would fault on.
void buildAlignmentCheck(ImplicitLocOpBuilder &b, Operation *op, Value buffer, int64_t bytes);

/// Calls the runtime function `errorFn(value, flat index, high)` for the
/// first entry of the integer tensor `indices` (rank 1 or 2) outside
/// [low, high) (`high` an i64 value): a loop over the entries (on the GPU
/// a thread per entry, reporting one bad entry, not necessarily the first).
void buildIndexRangeCheck(ImplicitLocOpBuilder &b, Operation *op,
                          StringRef errorFn, Value indices, int64_t low,
                          Value high);

/// Checks at run time that dimension `da` of tensor `a` equals dimension
/// `dc` of tensor `c`; nothing when both are static (the verifier compared
/// them).
void buildSameSizeCheck(ImplicitLocOpBuilder &b, Operation *op,
                        pe_size_check check, Value a, int64_t da, Value c,
                        int64_t dc);

/// Checks at run time that the static dimensions of the declared result
/// `type` agree with `sizes` computed from the operands.
void buildResultSizeChecks(ImplicitLocOpBuilder &b, Operation *op,
                           pe_size_check check, RankedTensorType type,
                           ArrayRef<OpFoldResult> sizes);

/// if (cond) errorFn(value, sequence, limit) (index operands) on the calling
/// thread: the form of the paged-cache checks.
void buildPagedCheck(ImplicitLocOpBuilder &b, Operation *op, Value cond,
                     StringRef errorFn, Value value, Value sequence, Value limit);

/// The run-time check that sequence `seq` reads at most its block table's
/// `M * page_size` keys: `length` within [0, M * page_size]. Returns whether
/// it is (i1), so that later checks of the sequence can stay quiet.
Value buildKvLengthCheck(ImplicitLocOpBuilder &b, Operation *op, Value table,
                         Value seq, Value length, Value pageSize);

/// Where `valid` (i1) holds: the run-time checks that every page sequence
/// `seq` reads for `length` keys (block_table[seq, 0 .. ceil(length /
/// page_size))) lies within [0, pages).
void buildPageChecks(ImplicitLocOpBuilder &b, Operation *op, Value table, Value seq,
                     Value length, Value pageSize, Value pages, Value valid);

/// The run-time checks of pe.paged_attention `op`, on the calling thread
/// before anything is read: sizes, cu_seqlens, each sequence's key and query
/// counts (and mask columns), and every page a sequence reads: in a loop
/// over each sequence's pages inside the loop over the sequences, or with
/// `pagesPerEntry` in one loop over every block-table entry after it
/// (independent iterations: the GPU's form, a thread each).
void buildPagedAttentionChecks(ImplicitLocOpBuilder &b, PagedAttentionOp op,
                               bool pagesPerEntry = false);

/// The run-time checks of pe.gather_pages `op` (sequence, length, pages),
/// before anything is read.
void checkGatherPages(ImplicitLocOpBuilder &b, GatherPagesOp op);

/// The run-time size checks of pe.attention `op` on its (converted)
/// operands, and its query and key positions: the given ones, or the
/// defaults (keys 0..Skv-1, queries the last Sq of them).
std::pair<Value, Value> prepareAttentionOperands(ImplicitLocOpBuilder &b,
                                                 AttentionOp op, Value q,
                                                 Value k, Value v, Value mask,
                                                 Value qPos, Value kPos);

/// The tensors an attention kernel reads: the operands, the query and key
/// positions (prepareAttentionOperands), the f32 cos/sin tables of each
/// for a fused `rope` (the keys share the queries' tables when their
/// positions are the same tensor) and, for `alibi`, the slopes of the query
/// heads (a static count). Absent ones are null.
/// With a shared key block, `sharedKey` is it (its batch and length checked
/// against the key's).
struct AttentionTensors {
  Value q, k, v, mask, qPos, kPos, qCos, qSin, kCos, kSin, slopes, sharedKey;
};
AttentionTensors prepareAttentionTensors(ImplicitLocOpBuilder &b, AttentionOp op);

/// `op` with its shared key block (`shared_key`) written into every key
/// head: the same attention over `[B, Hkv, Skv, D]` keys whose channels
/// `D - Ds ..` repeat the block, after the run-time checks of the block's
/// batch and length. For lowerings without a kernel that reads the block in
/// place. `op` is replaced; the new op is returned.
AttentionOp expandSharedKey(RewriterBase &rewriter, AttentionOp op);

/// Whether `op`'s fused rope rotates channels both of the key heads' own
/// and of the shared key block (a rotated range that starts before D - Ds
/// and ends after it): kernels that read the two tensors apart then cannot
/// pair them.
bool rotationStraddlesSharedKey(AttentionOp op);

/// expandSharedKey on every pe.attention under `root` with a shared key block
/// for which `expand` holds (every one by default).
void expandSharedKeys(Operation *root,
                      function_ref<bool(AttentionOp)> expand = [](AttentionOp) { return true; });

/// The f32 RoPE tables of the query and key rows of `op` (which rotates):
/// from the rope positions of a multi-stream rope (checked at run time
/// against the tokens), else from `qPos`/`kPos`; one table when the
/// positions are one value.
struct AttentionRopeTables {
  Value qCos, qSin, kCos, kSin;
};
AttentionRopeTables buildAttentionRopeTables(ImplicitLocOpBuilder &b, AttentionOp op,
                                             Value q, Value k, Value qPos, Value kPos,
                                             Value qRopePos, Value kRopePos);

/// The run-time size checks of pe.rope `op` (positions against the sequence,
/// given tables against the positions) and its f32 tables: `cos`/`sin` when
/// given (pe-share-rope-tables), else computed from the positions.
std::pair<Value, Value> prepareRopeOperands(ImplicitLocOpBuilder &b, RopeOp op,
                                            Value x, Value positions, Value cos,
                                            Value sin);

/// Checks at run time that `sizes` agree with the static dims of op's result.
void checkAttentionResult(ImplicitLocOpBuilder &b, AttentionOp op,
                          ArrayRef<OpFoldResult> sizes);

/// The result of attention `op` computed by a kernel into the buffer `out`
/// ([B, Hq, Sq, Dv]): the tensor of `out`, checked at run time against the
/// static dims of op's result and cast to its type.
Value attentionResultFromBuffer(ImplicitLocOpBuilder &b, AttentionOp op, Value out);

/// The run-time checks of pe.append_kv `op` on its operands (`positions` may
/// be null): the sizes the verifier could not compare, and every slot -1 (a
/// skipped token) or in [0, capacity). Returns the capacity (i64): Smax, or
/// pages * page_size.
Value buildAppendKvChecks(ImplicitLocOpBuilder &b, AppendKvOp op, Value key, Value value,
                          Value keyCache, Value valueCache, Value slots, Value positions);

/// A paged append's positions as a batch of one-token rows, as the rope
/// tables take them: [T] -> [T, 1], a multi-stream rope's [A, T] -> [T, A, 1].
Value buildAppendTokenPositions(ImplicitLocOpBuilder &b, Value positions, bool multiStream);

/// Why the vector kernels of pe.append_kv (pe-tile-append-kv,
/// pe-gpu-tile-append-kv) do not take `op`, or null: key rows in whole
/// vectors of `keyLanes`, value rows of `valueLanes` (the rotated half and
/// the pass-through channels too), one position stream, constant tables
/// within kMaxConstantTableEntries, inside a symbol table.
const char *appendKernelRefusal(AppendKvOp op, int64_t keyLanes, int64_t valueLanes);

/// The head counts and head dims of attention `op` (the verifier makes them
/// static), or std::nullopt when one is 0.
struct AttentionHeads {
  int64_t queryHeads = 0, kvHeads = 0, headDim = 0, valueDim = 0;
};
std::optional<AttentionHeads> attentionHeads(AttentionOp op);

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_OPERANDCHECKS_H
