/*===- Runtime.h - runtime support called by code that pe-mlir generates --===*/
#ifndef PE_C_RUNTIME_H
#define PE_C_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Called by generated code for a pe.learned position outside [0, rows):
 * prints "pe.learned: position P (entry I) is out of range for a table of
 * R rows" to stderr and exits with status 1. The generated gather never
 * reads out of bounds. */
void pe_runtime_learned_out_of_range(int64_t position, int64_t index,
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
};

/* Called by generated code when the sizes of check `check` differ: prints
 * "pe.OP: WHAT: got G, expected E" to stderr and exits with status 1. */
void pe_runtime_size_mismatch(int64_t check, int64_t got, int64_t expected);

/* Called by generated code before its first AMX tile instruction: asks Linux
 * once per process for the AMX tile state (arch_prctl(ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA)); prints an error and exits with status 1 if refused. */
void pe_runtime_enable_amx(void);

#ifdef __cplusplus
}
#endif

#endif /* PE_C_RUNTIME_H */
