/*===- ggml_attention.c - ggml's RoPE + flash attention, timed -----------===*
 *
 * The contender of benchmarks/run.py: what llama.cpp runs for one attention
 * layer on the CPU, ggml_rope_ext on Q and K (NeoX pairs, per-pair
 * frequency factors for Llama 3.1's scaling, as llama.cpp's rope_freqs)
 * then ggml_flash_attn_ext with a causal F16 mask, f32 Q/K/V, GQA by
 * broadcast, in ggml's own layout ([S][H][D] in memory).
 *
 *   ggml_attention DIR SQ SKV HQ HKV D THREADS REPEAT ROPE
 *
 * ROPE 1 rotates Q and K (prefill); 0 leaves both as they are (decode over
 * a cache of rotated keys, as pe's decode case); 2 is a decode step with a
 * KV cache as llama.cpp runs it: the last key and value of k.bin / v.bin are
 * the new token's, rotated (the key) and copied into the cache
 * (ggml_cpy into a view of it), Q rotated, then attention over the cache
 * whose other keys are taken as already rotated.
 * DIR holds q.bin [SQ][HQ][D], k.bin and v.bin [SKV][HKV][D], factors.bin
 * [D/2] (f32) and params.txt (theta); the query positions are
 * SKV - SQ .. SKV - 1, the key positions 0 .. SKV - 1. Writes out.bin
 * [SQ][HQ][D] (f32) and prints one line per timed run: `ms <time>`, after
 * one untimed run.
 *
 *===----------------------------------------------------------------------===*/
#include "ggml-cpu.h"
#include "ggml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void readFile(const char *dir, const char *name, void *data, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f || fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "ggml_attention: cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: ggml_attention DIR SQ SKV HQ HKV D THREADS REPEAT ROPE\n");
    return 2;
  }
  const char *dir = argv[1];
  int sq = atoi(argv[2]), skv = atoi(argv[3]), hq = atoi(argv[4]), hkv = atoi(argv[5]);
  int d = atoi(argv[6]), threads = atoi(argv[7]), repeat = atoi(argv[8]);
  int rope = atoi(argv[9]);
  float theta = 10000.0f;
  {
    char path[4096];
    snprintf(path, sizeof path, "%s/params.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%f", &theta) != 1) {
      fprintf(stderr, "ggml_attention: cannot read %s\n", path);
      return 2;
    }
    fclose(f);
  }
  // Q, rotated Q and the output; K, rotated K and V; the factors.
  size_t bytes = sizeof(float) * ((size_t)sq * hq * d * 3 + (size_t)skv * hkv * d * 3 + d +
                                  (size_t)hkv * d * 3) +
                 sizeof(ggml_fp16_t) * (size_t)sq * skv + sizeof(int32_t) * (sq + skv) +
                 ((size_t)64 << 20);
  struct ggml_init_params params = {bytes, NULL, false};
  struct ggml_context *ctx = ggml_init(params);

  struct ggml_tensor *q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d, hq, sq);
  struct ggml_tensor *k = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d, hkv, skv);
  struct ggml_tensor *v = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d, hkv, skv);
  struct ggml_tensor *factors = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, d / 2);
  struct ggml_tensor *qpos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, sq);
  struct ggml_tensor *kpos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, skv);
  struct ggml_tensor *mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, skv, sq);
  readFile(dir, "q.bin", q->data, ggml_nbytes(q));
  readFile(dir, "k.bin", k->data, ggml_nbytes(k));
  readFile(dir, "v.bin", v->data, ggml_nbytes(v));
  readFile(dir, "factors.bin", factors->data, ggml_nbytes(factors));
  for (int i = 0; i < sq; ++i)
    ((int32_t *)qpos->data)[i] = skv - sq + i;
  for (int j = 0; j < skv; ++j)
    ((int32_t *)kpos->data)[j] = j;
  ggml_fp16_t zero = ggml_fp32_to_fp16(0.0f), minusInf = ggml_fp32_to_fp16(-INFINITY);
  for (int i = 0; i < sq; ++i)
    for (int j = 0; j < skv; ++j)
      ((ggml_fp16_t *)mask->data)[(size_t)i * skv + j] = j <= skv - sq + i ? zero : minusInf;

  // Rotate as llama.cpp does ([D, H, S]), then attend in [D, S, H] views.
  struct ggml_tensor *qr = q, *kr = k;
  struct ggml_cgraph *graph = ggml_new_graph(ctx);
  if (rope == 2) {
    // The new token's rows, then their copies into the cache's last row.
    struct ggml_tensor *knew = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d, hkv, 1);
    struct ggml_tensor *vnew = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d, hkv, 1);
    size_t last = (size_t)(skv - 1) * k->nb[2];
    memcpy(knew->data, (char *)k->data + last, ggml_nbytes(knew));
    memcpy(vnew->data, (char *)v->data + last, ggml_nbytes(vnew));
    struct ggml_tensor *newPos = ggml_view_1d(ctx, kpos, 1, (size_t)(skv - 1) * sizeof(int32_t));
    struct ggml_tensor *krot = ggml_rope_ext(ctx, knew, newPos, factors, d, GGML_ROPE_TYPE_NEOX,
                                             0, theta, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    ggml_build_forward_expand(
        graph, ggml_cpy(ctx, krot, ggml_view_3d(ctx, k, d, hkv, 1, k->nb[1], k->nb[2], last)));
    ggml_build_forward_expand(
        graph, ggml_cpy(ctx, vnew, ggml_view_3d(ctx, v, d, hkv, 1, v->nb[1], v->nb[2], last)));
    qr = ggml_rope_ext(ctx, q, qpos, factors, d, GGML_ROPE_TYPE_NEOX, 0, theta, 1.0f, 0.0f,
                       1.0f, 0.0f, 0.0f);
  } else if (rope) {
    qr = ggml_rope_ext(ctx, q, qpos, factors, d, GGML_ROPE_TYPE_NEOX, 0, theta, 1.0f, 0.0f,
                       1.0f, 0.0f, 0.0f);
    kr = ggml_rope_ext(ctx, k, kpos, factors, d, GGML_ROPE_TYPE_NEOX, 0, theta, 1.0f, 0.0f,
                       1.0f, 0.0f, 0.0f);
  }
  struct ggml_tensor *out = ggml_flash_attn_ext(
      ctx, ggml_permute(ctx, qr, 0, 2, 1, 3), ggml_permute(ctx, kr, 0, 2, 1, 3),
      ggml_permute(ctx, v, 0, 2, 1, 3), mask, 1.0f / sqrtf((float)d), 0.0f, 0.0f);
  ggml_build_forward_expand(graph, out);

  struct ggml_threadpool_params poolParams = ggml_threadpool_params_default(threads);
  struct ggml_threadpool *pool = ggml_threadpool_new(&poolParams);
  struct ggml_cplan plan = ggml_graph_plan(graph, threads, pool);
  plan.work_data = malloc(plan.work_size ? plan.work_size : 1);
  for (int r = 0; r <= repeat; ++r) {
    double t = now();
    if (ggml_graph_compute(graph, &plan) != GGML_STATUS_SUCCESS) {
      fprintf(stderr, "ggml_attention: ggml_graph_compute failed\n");
      return 1;
    }
    if (r > 0)
      printf("ms %.4f\n", 1e3 * (now() - t));
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/out.bin", dir);
  FILE *f = fopen(path, "wb");
  fwrite(out->data, 1, ggml_nbytes(out), f);
  fclose(f);
  ggml_threadpool_free(pool);
  ggml_free(ctx);
  return 0;
}
