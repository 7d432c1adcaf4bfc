/* Calls a RoPE kernel compiled by pe-compile through its generated C header
 * and checks it against a double-precision evaluation written here.
 *
 *   pe-compile rope.mlir --emit=shared -o librope.so --header=rope.h
 *   cc -I. rope_example.c -L. -lrope -Wl,-rpath,. -lm -o rope_example
 *
 * The library's names start with `rope_` (from its file name; --prefix sets
 * another). Every function returns a status, and rope_last_error() says
 * what went wrong.
 */
#include "rope.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { H = 8, S = 77, D = 64 };

int main(void) {
  float *x = malloc(sizeof(float) * H * S * D);
  int64_t pos[S];
  for (int i = 0; i < H * S * D; ++i)
    x[i] = (float)sin(0.37 * i) + 0.25f;
  for (int s = 0; s < S; ++s)
    pos[s] = 1000 + 13 * s; /* arbitrary positions */

  pe_memref_4d_f32 in = {x, x, 0, {1, H, S, D}, {H * S * D, S * D, D, 1}};
  pe_memref_1d_i64 positions = {pos, pos, 0, {S}, {1}};
  pe_memref_4d_f32 out;
  if (rope_rope(&out, &in, &positions) != PE_OK) {
    fprintf(stderr, "rope failed: %s\n", rope_last_error());
    return 1;
  }

  /* Half-split pairs (i, i + 32), inv_freq[i] = 10000^(-i/32). */
  double maxError = 0.0;
  for (int h = 0; h < H; ++h)
    for (int s = 0; s < S; ++s)
      for (int i = 0; i < D / 2; ++i) {
        double a = (double)pos[s] * pow(10000.0, -(double)i / (D / 2));
        const float *row = x + (h * S + s) * D;
        double x0 = row[i], x1 = row[i + D / 2];
        double want0 = x0 * cos(a) - x1 * sin(a);
        double want1 = x1 * cos(a) + x0 * sin(a);
        const float *got = out.aligned + out.offset + h * out.strides[1] +
                           s * out.strides[2];
        double e0 = fabs(got[i] - want0), e1 = fabs(got[i + D / 2] - want1);
        maxError = fmax(maxError, fmax(e0, e1));
      }
  printf("rope %dx%dx%d: max |error| vs double = %.3g\n", H, S, D, maxError);

  if (out.allocated != in.allocated)
    free(out.allocated);
  free(x);
  return maxError <= 1e-5 ? 0 : 1;
}
