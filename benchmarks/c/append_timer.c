/* Times pe.append_kv as a C program calls it: `bench_append` (pe-compile
 * --prefix=bench_ of benchmarks/run.py's append function) writes TOKENS new
 * keys and values, rotated, into paged caches of PAGES pages in place.
 * Each call writes to slots of its own (SETS sets of random distinct slots
 * in turn), as a server's appends land on pages that are not in the caches.
 * Prints one JSON object: the median, min and max time per call (ms) over
 * ROUNDS rounds of CALLS calls.
 *
 *   cc -O2 -I DIR append_timer.c -L DIR -lbench -Wl,-rpath,DIR -o append_timer
 *   ./append_timer PAGES PAGE_SIZE HEADS DIM TOKENS
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include "bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { SETS = 256, ROUNDS = 15, CALLS = 200 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A uniform double in [-1, 1) from a 64-bit LCG. */
static double uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) / (double)(1ull << 52) - 1.0;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s PAGES PAGE_SIZE HEADS DIM TOKENS\n", argv[0]);
    return 2;
  }
  const int64_t pages = atoll(argv[1]), page = atoll(argv[2]), heads = atoll(argv[3]),
                dim = atoll(argv[4]), tokens = atoll(argv[5]);
  const int64_t slots_total = pages * page, row = heads * dim;
  float *kc = calloc((size_t)(slots_total * row), sizeof(float));
  float *vc = calloc((size_t)(slots_total * row), sizeof(float));
  float *k = malloc((size_t)(tokens * row) * sizeof(float));
  float *v = malloc((size_t)(tokens * row) * sizeof(float));
  int64_t *slots = malloc((size_t)(SETS * tokens) * sizeof(int64_t));
  int64_t *positions = malloc((size_t)(SETS * tokens) * sizeof(int64_t));
  if (!kc || !vc || !k || !v || !slots || !positions) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  uint64_t state = 6;
  for (int64_t i = 0; i < tokens * row; ++i) {
    k[i] = (float)uniform(&state);
    v[i] = (float)uniform(&state);
  }
  /* Distinct slots: a prime stride walks a power-of-two cache without
   * repeating. */
  for (int64_t i = 0; i < SETS * tokens; ++i) {
    slots[i] = (i * 7919) % slots_total;
    positions[i] = (int64_t)((uniform(&state) + 1.0) * 16384.0);
  }
  pe_memref_3d_f32 dk = {k, k, 0, {tokens, heads, dim}, {row, dim, 1}};
  pe_memref_3d_f32 dv = {v, v, 0, {tokens, heads, dim}, {row, dim, 1}};
  pe_memref_4d_f32 dkc = {kc, kc, 0, {pages, page, heads, dim},
                          {page * row, row, dim, 1}};
  pe_memref_4d_f32 dvc = {vc, vc, 0, {pages, page, heads, dim},
                          {page * row, row, dim, 1}};
  double times[ROUNDS];
  int64_t set = 0;
  for (int round = -1; round < ROUNDS; ++round) { /* round -1 warms up */
    double start = now();
    for (int call = 0; call < CALLS; ++call, set = (set + 1) % SETS) {
      pe_memref_1d_i64 ds = {slots, slots + set * tokens, 0, {tokens}, {1}};
      pe_memref_1d_i64 dp = {positions, positions + set * tokens, 0, {tokens}, {1}};
      if (bench_append(&dk, &dv, &dkc, &dvc, &ds, &dp) != 0) {
        fprintf(stderr, "bench_append: %s\n", bench_last_error());
        return 1;
      }
    }
    if (round >= 0)
      times[round] = (now() - start) / CALLS * 1e3;
  }
  qsort(times, ROUNDS, sizeof(double), compare);
  printf("{\"median_ms\": %.6g, \"min_ms\": %.6g, \"max_ms\": %.6g, \"runs\": %d}\n",
         times[ROUNDS / 2], times[0], times[ROUNDS - 1], ROUNDS * CALLS);
  return 0;
}
