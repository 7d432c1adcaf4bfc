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

#ifdef __cplusplus
}
#endif

#endif /* PE_C_RUNTIME_H */
