/*===- Runtime.c - runtime support called by generated code ---------------===*
 *
 * Errors: every exported entry of a compiled library runs its kernel through
 * pe_runtime_call, which sets a recovery point (setjmp) for the calling
 * thread. A check that fails inside the kernel formats its message into the
 * thread's error buffer and returns to that point (longjmp), so the entry
 * returns the status and pe_runtime_last_error() says what failed. Checks
 * run on the thread that called the entry (before any parallel loop), so the
 * jump never crosses threads. Nothing here ends the process, except a check
 * failing in code called without an entry around it (abort(), with the
 * message on stderr).
 *===----------------------------------------------------------------------===*/
#include "pe-c/Runtime.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static _Thread_local char lastError[512];
static _Thread_local jmp_buf *recovery; /* innermost pe_runtime_call */

int32_t pe_runtime_call(void (*body)(void *), void *frame) {
  jmp_buf here;
  jmp_buf *volatile outer = recovery;
  recovery = &here;
  int status = setjmp(here);
  if (status == 0) {
    lastError[0] = '\0';
    body(frame);
  }
  recovery = outer;
  return status;
}

const char *pe_runtime_last_error(void) { return lastError; }

void pe_runtime_raise(int32_t status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lastError, sizeof lastError, format, args);
  va_end(args);
  if (status == PE_OK)
    status = PE_ERROR_SIZE;
  if (recovery)
    longjmp(*recovery, status);
  fprintf(stderr, "%s\n", lastError);
  fflush(stderr);
  abort();
}

int32_t pe_runtime_argument_error(const char *function, int64_t operand,
                                  int64_t kind, int64_t dim, int64_t got,
                                  int64_t expected) {
  int n = snprintf(lastError, sizeof lastError, "%s: operand %" PRId64 ": ",
                   function, operand);
  if (n < 0 || (size_t)n >= sizeof lastError)
    return PE_ERROR_ARGUMENT;
  char *rest = lastError + n;
  size_t room = sizeof lastError - (size_t)n;
  switch (kind) {
  case PE_ARGUMENT_SIZE:
    snprintf(rest, room, "dimension %" PRId64 " has size %" PRId64
             ", but the function is compiled for %" PRId64, dim, got, expected);
    break;
  case PE_ARGUMENT_NEGATIVE:
    snprintf(rest, room, "dimension %" PRId64 " has negative size %" PRId64, dim,
             got);
    break;
  case PE_ARGUMENT_STRIDE:
    snprintf(rest, room, "stride %" PRId64 " is %" PRId64 ", but buffers must be "
             "dense and row-major (stride %" PRId64 ")", dim, got, expected);
    break;
  case PE_ARGUMENT_OFFSET:
    snprintf(rest, room, "offset is %" PRId64 ", but must be 0 (point `aligned` "
             "at the first element)", got);
    break;
  case PE_ARGUMENT_NULL:
    snprintf(rest, room, "the data pointer is null but the buffer is not empty");
    break;
  default:
    snprintf(rest, room, "invalid descriptor");
  }
  return PE_ERROR_ARGUMENT;
}

void pe_runtime_learned_out_of_range(int64_t position, int64_t index,
                                     int64_t rows) {
  pe_runtime_raise(PE_ERROR_POSITION,
                   "pe.learned: position %" PRId64 " (entry %" PRId64
                   ") is out of range for a table of %" PRId64 " rows",
                   position, index, rows);
}

/* The same entry under MLIR's C-interface name, which calls from functions
 * compiled with `llvm.emit_c_interface` resolve to. */
void _mlir_ciface_pe_runtime_learned_out_of_range(int64_t position,
                                                  int64_t index, int64_t rows) {
  pe_runtime_learned_out_of_range(position, index, rows);
}

void pe_runtime_slot_out_of_range(int64_t slot, int64_t index,
                                  int64_t capacity) {
  pe_runtime_raise(PE_ERROR_SLOT,
                   "pe.append_kv: slot %" PRId64 " (entry %" PRId64
                   ") is out of range for a cache of %" PRId64 " slots",
                   slot, index, capacity);
}

void _mlir_ciface_pe_runtime_slot_out_of_range(int64_t slot, int64_t index,
                                               int64_t capacity) {
  pe_runtime_slot_out_of_range(slot, index, capacity);
}

/* The paged-cache errors of `op` (pe.paged_attention, pe.gather_pages). */
static void page_out_of_range(const char *op, int64_t page, int64_t sequence,
                              int64_t pages) {
  pe_runtime_raise(PE_ERROR_SLOT,
                   "%s: page %" PRId64 " (sequence %" PRId64
                   ") is out of range for a cache of %" PRId64 " pages",
                   op, page, sequence, pages);
}

static void kv_length_out_of_range(const char *op, int64_t length,
                                   int64_t sequence, int64_t capacity) {
  pe_runtime_raise(PE_ERROR_SIZE,
                   "%s: sequence %" PRId64 " has %" PRId64
                   " keys, outside [0, %" PRId64
                   "] (its block table's pages times the page size)",
                   op, sequence, length, capacity);
}

void pe_runtime_page_out_of_range(int64_t page, int64_t sequence,
                                  int64_t pages) {
  page_out_of_range("pe.paged_attention", page, sequence, pages);
}

void pe_runtime_gather_page_out_of_range(int64_t page, int64_t sequence,
                                         int64_t pages) {
  page_out_of_range("pe.gather_pages", page, sequence, pages);
}

void _mlir_ciface_pe_runtime_gather_page_out_of_range(int64_t page,
                                                      int64_t sequence,
                                                      int64_t pages) {
  pe_runtime_gather_page_out_of_range(page, sequence, pages);
}

void _mlir_ciface_pe_runtime_page_out_of_range(int64_t page, int64_t sequence,
                                               int64_t pages) {
  pe_runtime_page_out_of_range(page, sequence, pages);
}

void pe_runtime_kv_length_out_of_range(int64_t length, int64_t sequence,
                                       int64_t capacity) {
  kv_length_out_of_range("pe.paged_attention", length, sequence, capacity);
}

void pe_runtime_gather_length_out_of_range(int64_t length, int64_t sequence,
                                           int64_t capacity) {
  kv_length_out_of_range("pe.gather_pages", length, sequence, capacity);
}

void _mlir_ciface_pe_runtime_gather_length_out_of_range(int64_t length,
                                                        int64_t sequence,
                                                        int64_t capacity) {
  pe_runtime_gather_length_out_of_range(length, sequence, capacity);
}

void _mlir_ciface_pe_runtime_kv_length_out_of_range(int64_t length,
                                                    int64_t sequence,
                                                    int64_t capacity) {
  pe_runtime_kv_length_out_of_range(length, sequence, capacity);
}

void pe_runtime_query_count_out_of_range(int64_t queries, int64_t sequence,
                                         int64_t keys) {
  pe_runtime_raise(PE_ERROR_SIZE,
                   "pe.paged_attention: sequence %" PRId64 " has %" PRId64
                   " queries (cu_seqlens) but %" PRId64
                   " keys: the queries are the last tokens of the keys",
                   sequence, queries, keys);
}

void _mlir_ciface_pe_runtime_query_count_out_of_range(int64_t queries,
                                                      int64_t sequence,
                                                      int64_t keys) {
  pe_runtime_query_count_out_of_range(queries, sequence, keys);
}

void pe_runtime_mask_columns_out_of_range(int64_t keys, int64_t sequence,
                                          int64_t columns) {
  pe_runtime_raise(PE_ERROR_SIZE,
                   "pe.paged_attention: sequence %" PRId64 " has %" PRId64
                   " keys but the mask only %" PRId64 " key columns",
                   sequence, keys, columns);
}

void _mlir_ciface_pe_runtime_mask_columns_out_of_range(int64_t keys,
                                                       int64_t sequence,
                                                       int64_t columns) {
  pe_runtime_mask_columns_out_of_range(keys, sequence, columns);
}

void pe_runtime_sequence_out_of_range(int64_t sequence, int64_t unused,
                                      int64_t rows) {
  (void)unused;
  pe_runtime_raise(PE_ERROR_SLOT,
                   "pe.gather_pages: sequence %" PRId64
                   " is outside the block table's %" PRId64 " rows",
                   sequence, rows);
}

void _mlir_ciface_pe_runtime_sequence_out_of_range(int64_t sequence,
                                                   int64_t unused,
                                                   int64_t rows) {
  pe_runtime_sequence_out_of_range(sequence, unused, rows);
}

static const char *describe(int64_t check) {
  switch (check) {
  case PE_CHECK_ROPE_POSITIONS_LENGTH:
    return "pe.rope: the number of positions differs from the sequence length";
  case PE_CHECK_ROPE_POSITIONS_BATCH:
    return "pe.rope: the positions' batch size differs from the input's";
  case PE_CHECK_TABLE_SHAPE:
    return "pe.rope_tables: the positions do not match the table shape";
  case PE_CHECK_SINUSOIDAL_SHAPE:
    return "pe.sinusoidal: the positions do not match the result shape";
  case PE_CHECK_LEARNED_SHAPE:
    return "pe.learned: the positions do not match the result shape";
  case PE_CHECK_ALIBI_BATCH:
    return "pe.alibi_bias: q_positions and k_positions differ in batch size";
  case PE_CHECK_ALIBI_SHAPE:
    return "pe.alibi_bias: the positions do not match the result shape";
  case PE_CHECK_ATTENTION_KEY_BATCH:
    return "pe.attention: the key's batch size differs from the query's";
  case PE_CHECK_ATTENTION_VALUE_BATCH:
    return "pe.attention: the value's batch size differs from the query's";
  case PE_CHECK_ATTENTION_VALUE_LENGTH:
    return "pe.attention: the value's length differs from the key's";
  case PE_CHECK_ATTENTION_MASK_BATCH:
    return "pe.attention: the mask's batch size differs from the query's";
  case PE_CHECK_ATTENTION_MASK_ROWS:
    return "pe.attention: the mask's rows differ from the number of queries";
  case PE_CHECK_ATTENTION_MASK_COLUMNS:
    return "pe.attention: the mask's columns differ from the number of keys";
  case PE_CHECK_ATTENTION_Q_POSITIONS:
    return "pe.attention: q_positions differ in length from the queries";
  case PE_CHECK_ATTENTION_K_POSITIONS:
    return "pe.attention: k_positions differ in length from the keys";
  case PE_CHECK_ATTENTION_POSITIONS_BATCH:
    return "pe.attention: the positions' batch size differs from the query's";
  case PE_CHECK_ATTENTION_MASK_HEADS:
    return "pe.attention: the mask's heads differ from the query heads";
  case PE_CHECK_ROPE_TABLES:
    return "pe.rope: the tables do not match the positions";
  case PE_CHECK_ATTENTION_RESULT:
    return "pe.attention: the operands do not match the result shape";
  case PE_CHECK_APPEND_BATCH:
    return "pe.append_kv: the new rows' batch size differs from the cache's";
  case PE_CHECK_APPEND_VALUES:
    return "pe.append_kv: the number of new values differs from the new keys'";
  case PE_CHECK_APPEND_SLOTS:
    return "pe.append_kv: the slots do not match the new rows";
  case PE_CHECK_APPEND_POSITIONS:
    return "pe.append_kv: the positions do not match the slots";
  case PE_CHECK_APPEND_CACHES:
    return "pe.append_kv: the value cache's slots differ from the key cache's";
  case PE_CHECK_PAGED_BATCH:
    return "pe.paged_attention: kv_lens or cu_seqlens do not match the block table's sequences";
  case PE_CHECK_PAGED_QUERY_START:
    return "pe.paged_attention: cu_seqlens does not start at 0";
  case PE_CHECK_PAGED_QUERY_END:
    return "pe.paged_attention: cu_seqlens does not end at the number of query rows";
  case PE_CHECK_PAGED_CACHES:
    return "pe.paged_attention: the value cache's pages differ from the key cache's";
  case PE_CHECK_PAGED_RESULT:
    return "pe.paged_attention: the result's rows differ from the query's";
  case PE_CHECK_PAGED_MASK:
    return "pe.paged_attention: the mask's rows differ from the query's";
  case PE_CHECK_ATTENTION_SHARED_KEY:
    return "pe.attention: shared_key differs in batch or length from the key";
  case PE_CHECK_PAGED_ROPE_POSITIONS:
    return "pe.paged_attention: rope_positions differ in length from the query's rows";
  case PE_CHECK_ATTENTION_ROPE_POSITIONS:
    return "pe.attention: rope_positions differ in length or batch from the queries or keys";
  case PE_CHECK_DESTINATION_SHAPE:
    return "pe: an output buffer does not have the result's size";
  case PE_CHECK_GPU_ALIGNMENT:
    return "pe GPU kernel: a buffer is not 16-byte aligned (its address modulo 16)";
  default:
    return "pe: sizes differ";
  }
}

void pe_runtime_size_mismatch(int64_t check, int64_t got, int64_t expected) {
  pe_runtime_raise(PE_ERROR_SIZE, "%s: got %" PRId64 ", expected %" PRId64,
                   describe(check), got, expected);
}

void _mlir_ciface_pe_runtime_size_mismatch(int64_t check, int64_t got,
                                           int64_t expected) {
  pe_runtime_size_mismatch(check, got, expected);
}

void pe_runtime_enable_amx(void) {
  static atomic_int enabled;
  if (atomic_load_explicit(&enabled, memory_order_acquire))
    return;
#if defined(__linux__) && defined(SYS_arch_prctl)
  /* ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18. */
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0)
    pe_runtime_raise(PE_ERROR_CPU, "pe runtime: the kernel refused the AMX tile "
                                   "state (compile without AMX: --amx=off)");
#endif
  atomic_store_explicit(&enabled, 1, memory_order_release);
}

void _mlir_ciface_pe_runtime_enable_amx(void) { pe_runtime_enable_amx(); }
