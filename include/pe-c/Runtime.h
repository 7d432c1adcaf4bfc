/*===- Runtime.h - runtime support called by code that pe-mlir generates --===*/
#ifndef PE_C_RUNTIME_H
#define PE_C_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What every exported function of a compiled library returns. */
enum pe_status {
  PE_OK = 0,
  PE_ERROR_SIZE = 1,     /* sizes known only at run time disagree */
  PE_ERROR_POSITION = 2, /* a pe.learned position outside its table */
  PE_ERROR_ARGUMENT = 3, /* a descriptor differs from the declared type:
                            a static size, the dense row-major layout, a
                            null pointer */
  PE_ERROR_CPU = 4,      /* the CPU or the OS refused a feature the code
                            uses (AMX tiles) */
  PE_ERROR_GPU = 5,      /* the CUDA driver failed or is missing */
  PE_ERROR_SLOT = 6,     /* a KV-cache slot or page outside its cache */
};

/* The message of the last error on the calling thread ("" after a call that
 * succeeded): the op, what differs and the values. Valid until the thread's
 * next call into compiled code. */
const char *pe_runtime_last_error(void);

/* Runs body(frame) with a recovery point on the calling thread: returns
 * PE_OK, or the status of a check that failed inside (pe_runtime_raise).
 * Exported entries call their kernel through it. Buffers the kernel had
 * allocated before the failure are not released. */
int32_t pe_runtime_call(void (*body)(void *), void *frame);

/* Records a printf-style message and returns `status` from the innermost
 * pe_runtime_call of this thread; without one, prints the message and
 * aborts. Runtimes (the CUDA launch runtime) report their errors with it. */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 2, 3)))
#endif
void pe_runtime_raise(int32_t status, const char *format, ...);

/* What a boundary check of an exported entry compares. */
enum pe_argument_check {
  PE_ARGUMENT_SIZE = 0,   /* a static dimension */
  PE_ARGUMENT_STRIDE = 1, /* the dense row-major stride */
  PE_ARGUMENT_OFFSET = 2, /* offset 0 */
  PE_ARGUMENT_NULL = 3,   /* a non-empty buffer's data pointer */
  PE_ARGUMENT_NEGATIVE = 4, /* a dynamic dimension */
};

/* Records "FUNCTION: operand N: WHAT" (the dimension, the value found and
 * the one expected) and returns
 * PE_ERROR_ARGUMENT; called by exported entries before the kernel runs. */
int32_t pe_runtime_argument_error(const char *function, int64_t operand,
                                  int64_t kind, int64_t dim, int64_t got,
                                  int64_t expected);

/* Called by generated code for a pe.learned position outside [0, rows):
 * raises PE_ERROR_POSITION with "pe.learned: position P (entry I) is out of
 * range for a table of R rows". The generated gather never reads out of
 * bounds. */
void pe_runtime_learned_out_of_range(int64_t position, int64_t index,
                                     int64_t rows);

/* Called by generated code for a pe.append_kv slot outside [-1, capacity):
 * raises PE_ERROR_SLOT with "pe.append_kv: slot S (entry I) is out of range
 * for a cache of N slots". Nothing is written to the cache. */
void pe_runtime_slot_out_of_range(int64_t slot, int64_t index,
                                  int64_t capacity);

/* Called by generated code for a page of pe.paged_attention's block table
 * outside [0, pages) that a sequence reads: raises PE_ERROR_SLOT with
 * "pe.paged_attention: page P (sequence S) is out of range for a cache of N
 * pages". */
void pe_runtime_page_out_of_range(int64_t page, int64_t sequence,
                                  int64_t pages);

/* Called by generated code for a pe.paged_attention key count outside
 * [0, capacity] (capacity: the block table's pages times the page size):
 * raises PE_ERROR_SIZE. */
void pe_runtime_kv_length_out_of_range(int64_t length, int64_t sequence,
                                       int64_t capacity);

/* Called by generated code for a sequence of pe.paged_attention whose query
 * count (from cu_seqlens) is negative or above its key count: raises
 * PE_ERROR_SIZE. */
void pe_runtime_query_count_out_of_range(int64_t queries, int64_t sequence,
                                         int64_t keys);

/* The same two checks of a pe.gather_pages (its messages name it). */
void pe_runtime_gather_page_out_of_range(int64_t page, int64_t sequence,
                                         int64_t pages);
void pe_runtime_gather_length_out_of_range(int64_t length, int64_t sequence,
                                           int64_t capacity);

/* Called by generated code for a sequence of pe.paged_attention with more
 * keys than its soft mask has key columns: raises PE_ERROR_SIZE. */
void pe_runtime_mask_columns_out_of_range(int64_t keys, int64_t sequence,
                                          int64_t columns);

/* Called by generated code for a pe.gather_pages sequence outside the block
 * table's rows [0, rows): raises PE_ERROR_SLOT ("pe.gather_pages: sequence S
 * is outside the block table's N rows"; `unused` keeps the signature of the
 * other paged checks). */
void pe_runtime_sequence_out_of_range(int64_t sequence, int64_t unused,
                                      int64_t rows);

/* The run-time size checks of generated code: sizes that were dynamic at
 * compile time and must agree. */
enum pe_size_check {
  PE_CHECK_ROPE_POSITIONS_LENGTH = 1, /* pe.rope: positions vs sequence */
  PE_CHECK_ROPE_POSITIONS_BATCH,      /* pe.rope: positions vs batch */
  PE_CHECK_TABLE_SHAPE,               /* pe.rope_tables: positions vs result */
  PE_CHECK_SINUSOIDAL_SHAPE,          /* pe.sinusoidal: positions vs result */
  PE_CHECK_LEARNED_SHAPE,             /* pe.learned: positions vs result */
  PE_CHECK_ALIBI_BATCH,               /* pe.alibi_bias: q vs k positions batch */
  PE_CHECK_ALIBI_SHAPE,               /* pe.alibi_bias: positions vs result */
  PE_CHECK_ATTENTION_KEY_BATCH,       /* pe.attention: key vs query batch */
  PE_CHECK_ATTENTION_VALUE_BATCH,     /* pe.attention: value vs query batch */
  PE_CHECK_ATTENTION_VALUE_LENGTH,    /* pe.attention: value vs key length */
  PE_CHECK_ATTENTION_MASK_BATCH,      /* pe.attention: mask vs query batch */
  PE_CHECK_ATTENTION_MASK_ROWS,       /* pe.attention: mask rows vs queries */
  PE_CHECK_ATTENTION_MASK_COLUMNS,    /* pe.attention: mask columns vs keys */
  PE_CHECK_ATTENTION_Q_POSITIONS,     /* pe.attention: q_positions vs queries */
  PE_CHECK_ATTENTION_K_POSITIONS,     /* pe.attention: k_positions vs keys */
  PE_CHECK_ATTENTION_POSITIONS_BATCH, /* pe.attention: positions vs batch */
  PE_CHECK_ATTENTION_MASK_HEADS,      /* pe.attention: mask heads vs Hq */
  PE_CHECK_ROPE_TABLES,               /* pe.rope: given tables vs positions */
  PE_CHECK_ATTENTION_RESULT,          /* pe.attention: operands vs result */
  PE_CHECK_GPU_ALIGNMENT,             /* GPU kernels: buffer address mod 16 */
  PE_CHECK_DESTINATION_SHAPE,         /* an output buffer vs the result */
  PE_CHECK_APPEND_BATCH,              /* pe.append_kv: new rows vs cache batch */
  PE_CHECK_APPEND_VALUES,             /* pe.append_kv: values vs keys */
  PE_CHECK_APPEND_SLOTS,              /* pe.append_kv: slots vs new rows */
  PE_CHECK_APPEND_POSITIONS,          /* pe.append_kv: positions vs slots */
  PE_CHECK_APPEND_CACHES,             /* pe.append_kv: value vs key cache */
  PE_CHECK_PAGED_BATCH,               /* pe.paged_attention: kv_lens, cu_seqlens vs block table */
  PE_CHECK_PAGED_QUERY_START,         /* pe.paged_attention: cu_seqlens[0] vs 0 */
  PE_CHECK_PAGED_QUERY_END,           /* pe.paged_attention: cu_seqlens[B] vs T */
  PE_CHECK_PAGED_CACHES,              /* pe.paged_attention: value vs key pages */
  PE_CHECK_PAGED_RESULT,              /* pe.paged_attention: tokens vs result */
  PE_CHECK_ATTENTION_ROPE_POSITIONS,  /* pe.attention: rope_positions vs tokens */
  PE_CHECK_PAGED_MASK,                /* pe.paged_attention: mask rows vs tokens */
  PE_CHECK_PAGED_ROPE_POSITIONS,      /* pe.paged_attention: rope_positions vs tokens */
  PE_CHECK_ATTENTION_SHARED_KEY,      /* pe.attention: shared_key vs key batch, length */
};

/* Called by generated code when the sizes of check `check` differ: raises
 * PE_ERROR_SIZE with "pe.OP: WHAT: got G, expected E". */
void pe_runtime_size_mismatch(int64_t check, int64_t got, int64_t expected);

/* Called by generated code before its first AMX tile instruction: asks Linux
 * once per process for the AMX tile state (arch_prctl(ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA)); raises PE_ERROR_CPU if refused. */
void pe_runtime_enable_amx(void);

#ifdef __cplusplus
}
#endif

#endif /* PE_C_RUNTIME_H */
