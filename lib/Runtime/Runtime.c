/*===- Runtime.c - runtime support called by generated code ---------------===*/
#include "pe-c/Runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

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
