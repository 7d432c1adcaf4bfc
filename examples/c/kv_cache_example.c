/* Appends tokens to a paged KV cache in place through the header pe-compile
 * writes for kv_cache.mlir, checks the rows against a double-precision
 * rotation written here, and shows a bad slot coming back as an error.
 *
 *   pe-compile kv_cache.mlir --emit=shared -o libkv.so --header=kv.h
 *   cc -I. kv_cache_example.c -L. -lkv -Wl,-rpath,. -lm -o kv_cache_example
 *
 * The caches are `pe.in_place` arguments: the function writes into the
 * caller's buffers and returns only a status.
 */
#include "kv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { PAGES = 4, PAGE = 4, H = 2, D = 8, T = 3 };

static float kc[PAGES][PAGE][H][D], vc[PAGES][PAGE][H][D];

int main(void) {
  float k[T][H][D], v[T][H][D];
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) {
        k[t][h][d] = (float)sin(0.7 * (t * H * D + h * D + d)) + 0.5f;
        v[t][h][d] = (float)(t * 100 + h * 10 + d);
      }
  int64_t slots[T] = {5, -1, 14}, pos[T] = {5, 6, 1000};
  memset(kc, 0, sizeof kc);
  memset(vc, 0, sizeof vc);

  pe_memref_3d_f32 mk = {&k[0][0][0], &k[0][0][0], 0, {T, H, D}, {H * D, D, 1}};
  pe_memref_3d_f32 mv = {&v[0][0][0], &v[0][0][0], 0, {T, H, D}, {H * D, D, 1}};
  pe_memref_4d_f32 mkc = {&kc[0][0][0][0], &kc[0][0][0][0], 0,
                          {PAGES, PAGE, H, D}, {PAGE * H * D, H * D, D, 1}};
  pe_memref_4d_f32 mvc = {&vc[0][0][0][0], &vc[0][0][0][0], 0,
                          {PAGES, PAGE, H, D}, {PAGE * H * D, H * D, D, 1}};
  pe_memref_1d_i64 ms = {slots, slots, 0, {T}, {1}};
  pe_memref_1d_i64 mp = {pos, pos, 0, {T}, {1}};
  if (kv_append(&mk, &mv, &mkc, &mvc, &ms, &mp) != PE_OK) {
    fprintf(stderr, "append failed: %s\n", kv_last_error());
    return 1;
  }

  /* Slot s is row s % 4 of page s / 4; pairs (i, i + 4), 10000^(-i/4). */
  double maxError = 0.0;
  int rowsWritten = 0;
  for (int p = 0; p < PAGES; ++p)
    for (int r = 0; r < PAGE; ++r)
      rowsWritten += vc[p][r][0][1] != 0.0f;
  for (int t = 0; t < T; ++t) {
    if (slots[t] < 0)
      continue;
    int page = (int)(slots[t] / PAGE), row = (int)(slots[t] % PAGE);
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < D / 2; ++i) {
        double a = (double)pos[t] * pow(10000.0, -(double)i / (D / 2));
        double x0 = k[t][h][i], x1 = k[t][h][i + D / 2];
        double y0 = x0 * cos(a) - x1 * sin(a), y1 = x1 * cos(a) + x0 * sin(a);
        maxError = fmax(maxError, fabs(kc[page][row][h][i] - y0));
        maxError = fmax(maxError, fabs(kc[page][row][h][i + D / 2] - y1));
        if (vc[page][row][h][i] != v[t][h][i])
          maxError = 1.0;
      }
  }
  printf("rows written: %d\n", rowsWritten);
  printf("max |error|: %s\n", maxError < 1e-6 ? "< 1e-6" : "too large");

  int64_t bad[T] = {5, 16, 2};
  ms.aligned = ms.allocated = bad;
  int32_t status = kv_append(&mk, &mv, &mkc, &mvc, &ms, &mp);
  printf("status %d: %s\n", status, kv_last_error());
  printf("slot 2 untouched: %s\n", vc[0][2][0][1] == 0.0f ? "yes" : "no");
  return 0;
}
