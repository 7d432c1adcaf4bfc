/*===- Runtime.c - runtime support called by generated code ---------------===*/
#include "pe-c/Runtime.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

void pe_runtime_learned_out_of_range(int64_t position, int64_t index,
                                     int64_t rows) {
  fprintf(stderr,
          "pe.learned: position %" PRId64 " (entry %" PRId64
          ") is out of range for a table of %" PRId64 " rows\n",
          position, index, rows);
  fflush(stderr);
  exit(1);
}

/* The same entry under MLIR's C-interface name, which calls from functions
 * compiled with `llvm.emit_c_interface` resolve to. */
void _mlir_ciface_pe_runtime_learned_out_of_range(int64_t position,
                                                  int64_t index, int64_t rows) {
  pe_runtime_learned_out_of_range(position, index, rows);
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
  case PE_CHECK_GPU_ALIGNMENT:
    return "pe GPU kernel: a buffer is not 16-byte aligned (its address modulo 16)";
  default:
    return "pe: sizes differ";
  }
}

void pe_runtime_size_mismatch(int64_t check, int64_t got, int64_t expected) {
  fprintf(stderr, "%s: got %" PRId64 ", expected %" PRId64 "\n", describe(check),
          got, expected);
  fflush(stderr);
  exit(1);
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
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
    fprintf(stderr, "pe runtime: the kernel refused the AMX tile state "
                    "(compile without AMX: --amx=off)\n");
    fflush(stderr);
    exit(1);
  }
#endif
  atomic_store_explicit(&enabled, 1, memory_order_release);
}

void _mlir_ciface_pe_runtime_enable_amx(void) { pe_runtime_enable_amx(); }
