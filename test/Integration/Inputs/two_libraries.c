/* Two kernel libraries with the same function name in one program, their
 * errors as statuses, and their destination-passing entries. Each check
 * prints one line; FileCheck reads them. */
#include "prefill2.h"
#include "prefill4.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S = 5, D = 32 };

static void fill(float *x, int n) {
  for (int i = 0; i < n; ++i)
    x[i] = (float)sin(0.37 * i) + 0.25f;
}

static pe_memref_4d_f32 tensor(float *data, int64_t heads, int64_t s) {
  pe_memref_4d_f32 t = {data, data, 0, {1, heads, s, D}, {heads * s * D, s * D, D, 1}};
  return t;
}

/* Max |a - b| over n floats. */
static double maxDifference(const float *a, const float *b, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i)
    m = fmax(m, fabs((double)a[i] - (double)b[i]));
  return m;
}

/* Half-split RoPE in double precision: the expected value of element i of a
 * row at position p. */
static double rope(const float *row, int i, double p, double theta) {
  int half = D / 2, k = i % half;
  double a = p * pow(theta, -(double)k / half);
  double x0 = row[k], x1 = row[k + half];
  return i < half ? x0 * cos(a) - x1 * sin(a) : x1 * cos(a) + x0 * sin(a);
}

static double errorVsDouble(const float *x, const float *y, int heads,
                            const int64_t *pos, double theta) {
  double m = 0.0;
  for (int r = 0; r < heads * S; ++r)
    for (int i = 0; i < D; ++i)
      m = fmax(m, fabs(y[r * D + i] - rope(x + r * D, i, (double)pos[r % S], theta)));
  return m;
}

int main(void) {
  float x4[4 * S * D], x2[2 * S * D];
  int64_t pos[S] = {3, 10, 11, 700, 12};
  fill(x4, 4 * S * D);
  fill(x2, 2 * S * D);
  pe_memref_1d_i64 positions = {pos, pos, 0, {S}, {1}};

  /* Each library runs its own kernel on its own shapes. */
  pe_memref_4d_f32 in4 = tensor(x4, 4, S), in2 = tensor(x2, 2, S), out4, out2;
  int status4 = prefill4_prefill(&out4, &in4, &positions);
  int status2 = prefill2_prefill(&out2, &in2, &positions);
  printf("4 heads: status %d, error %.1e\n", status4,
         errorVsDouble(x4, out4.aligned, 4, pos, 10000.0));
  printf("2 heads: status %d, error %.1e\n", status2,
         errorVsDouble(x2, out2.aligned, 2, pos, 500000.0));

  /* The 2-head buffer given to the 4-head kernel: refused at the boundary. */
  pe_memref_4d_f32 unused;
  int status = prefill4_prefill(&unused, &in2, &positions);
  printf("wrong heads: status %d: %s\n", status, prefill4_last_error());

  /* Positions shorter than the sequence: a run-time size check. */
  pe_memref_1d_i64 shorter = {pos, pos, 0, {S - 1}, {1}};
  status = prefill4_prefill(&unused, &in4, &shorter);
  printf("short positions: status %d: %s\n", status, prefill4_last_error());

  /* A strided view and an offset are refused: the boundary is dense. */
  pe_memref_4d_f32 strided = in4;
  strided.strides[2] = 2 * D;
  strided.sizes[2] = 2;
  status = prefill4_prefill(&unused, &strided, &positions);
  printf("strided: status %d: %s\n", status, prefill4_last_error());

  /* A learned position out of range. */
  float table[8] = {0, 0, 1, 1, 2, 2, 3, 3};
  int64_t rows[3] = {1, 4, 0};
  pe_memref_2d_f32 tableDesc = {table, table, 0, {4, 2}, {2, 1}};
  pe_memref_1d_i64 rowsDesc = {rows, rows, 0, {3}, {1}};
  pe_memref_2d_f32 gathered;
  status = prefill4_lookup(&gathered, &tableDesc, &rowsDesc);
  printf("learned: status %d: %s\n", status, prefill4_last_error());

  /* After an error the next call works, and says nothing. */
  pe_memref_4d_f32 again;
  status = prefill4_prefill(&again, &in4, &positions);
  printf("again: status %d, same %d, message '%s'\n", status,
         maxDifference(again.aligned, out4.aligned, 4 * S * D) == 0.0,
         prefill4_last_error());

  /* Into caller buffers: 64-byte aligned (written in place) and not. */
  float *aligned = aligned_alloc(64, sizeof(float) * (4 * S * D + 16));
  float *misaligned = aligned + 1;
  pe_memref_4d_f32 into = tensor(aligned, 4, S);
  status = prefill4_prefill_into(&in4, &positions, &into);
  printf("into aligned: status %d, difference %g\n", status,
         maxDifference(aligned, out4.aligned, 4 * S * D));
  memset(aligned, 0, sizeof(float) * (4 * S * D + 16));
  into = tensor(misaligned, 4, S);
  status = prefill4_prefill_into(&in4, &positions, &into);
  printf("into misaligned: status %d, difference %g\n", status,
         maxDifference(misaligned, out4.aligned, 4 * S * D));

  /* An output whose dynamic size differs from the result's. */
  into = tensor(aligned, 4, S - 1);
  status = prefill4_prefill_into(&in4, &positions, &into);
  printf("into wrong size: status %d: %s\n", status, prefill4_last_error());

  free(aligned);
  free(out4.allocated);
  free(out2.allocated);
  free(again.allocated);
  return 0;
}
