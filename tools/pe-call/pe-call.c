/*===- pe-call.c - call an entry of a pe kernel library from files -------===*
 *
 * Runs one exported entry of a library that `pe-compile --emit=shared`
 * wrote, with tensors read from files and results written to files, so that
 * a library built for another architecture can be run under an emulator
 * (qemu-aarch64) by a program that cannot load it itself (python/pe/
 * emulated.py):
 *
 *   pe-call LIBRARY SYMBOL LAST_ERROR ARG...
 *   pe-call --serve LIBRARY LAST_ERROR
 *
 * ARG, in the entry's argument order (docs/c-abi.md):
 *   result:RANK:BYTES:FILE  a tensor result of an allocating entry (written
 *                           to FILE after the call; results come first)
 *   in:FILE                 a tensor argument read from FILE
 *   out:FILE                an output of an `_into` entry, read from FILE
 *                           and written back to it after the call
 *   int:VALUE               an integer scalar argument (index, i64, i32)
 * A tensor file holds int64 rank, int64 element bytes, int64 sizes[rank],
 * then the dense row-major elements. The entry's status is printed as
 * `status N` on standard output, then the library's message for an error;
 * the exit status is 0 whenever the entry was called.
 *
 * With --serve, one process makes any number of calls (under an emulator,
 * starting it costs far more than a small call): each request on standard
 * input is SYMBOL and its ARGs, each followed by a NUL byte, then one more
 * NUL; each answer on standard output is `status N BYTES`, a newline, and
 * the BYTES of the library's message (none when N is 0); what the library
 * itself prints goes to standard error. The process ends at the end of its
 * input, or as one call does on a bad argument.
 *
 *===----------------------------------------------------------------------===*/
#define _POSIX_C_SOURCE 200809L /* getdelim */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Entries take at most this many arguments through pe-call. */
#define MAX_ARGS 32

/* A strided memref descriptor of any rank: allocated, aligned, offset,
 * sizes[rank], strides[rank], as int64 words. */
typedef struct {
  int64_t rank, bytes;
  int64_t *words;
  const char *file;
} Tensor;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "pe-call: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(2);
}

static int64_t elements(const int64_t *sizes, int64_t rank) {
  int64_t n = 1;
  for (int64_t i = 0; i < rank; ++i)
    n *= sizes[i];
  return n;
}

/* A dense descriptor of the tensor in `file`. */
static Tensor readTensor(const char *file) {
  FILE *f = fopen(file, "rb");
  if (!f)
    die("cannot open", file);
  int64_t header[2];
  if (fread(header, sizeof(int64_t), 2, f) != 2 || header[0] < 0 || header[0] > 16 ||
      header[1] < 1 || header[1] > 8)
    die("bad tensor header in", file);
  Tensor t = {header[0], header[1], calloc(3 + 2 * header[0], sizeof(int64_t)), file};
  int64_t *sizes = t.words + 3, *strides = t.words + 3 + t.rank;
  if ((int64_t)fread(sizes, sizeof(int64_t), t.rank, f) != t.rank)
    die("bad tensor sizes in", file);
  int64_t count = elements(sizes, t.rank);
  /* 64-byte aligned, as the kernels' own buffers. */
  size_t bytes = (size_t)(count * t.bytes + 63) / 64 * 64;
  void *data = aligned_alloc(64, bytes ? bytes : 64);
  if (!data || (int64_t)fread(data, t.bytes, count, f) != count)
    die("bad tensor data in", file);
  fclose(f);
  t.words[0] = t.words[1] = (int64_t)(intptr_t)data;
  int64_t stride = 1;
  for (int64_t i = t.rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  return t;
}

/* Writes the tensor of descriptor `words` (any strides) densely to `file`. */
static void writeTensor(const int64_t *words, int64_t rank, int64_t bytes, const char *file) {
  FILE *f = fopen(file, "wb");
  if (!f)
    die("cannot write", file);
  const int64_t *sizes = words + 3, *strides = words + 3 + rank;
  int64_t header[2] = {rank, bytes};
  fwrite(header, sizeof(int64_t), 2, f);
  fwrite(sizes, sizeof(int64_t), rank, f);
  const char *base = (const char *)(intptr_t)words[1] + words[2] * bytes;
  int64_t count = elements(sizes, rank);
  int64_t index[16] = {0};
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int64_t i = 0; i < rank; ++i)
      offset += index[i] * strides[i];
    fwrite(base + offset * bytes, bytes, 1, f);
    for (int64_t i = rank - 1; i >= 0 && ++index[i] == sizes[i]; --i)
      index[i] = 0;
  }
  fclose(f);
}

typedef const char *(*LastError)(void);

/* Calls `fn` with `n` word-sized arguments (pointers and integers are passed
 * alike in the integer registers and stack slots of the x86-64 and AArch64
 * C calling conventions). */
static int32_t callEntry(void *fn, intptr_t *a, int n) {
  typedef intptr_t W;
  typedef int32_t (*F)(W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W,
                       W, W, W, W, W, W, W, W, W, W);
  (void)n; /* unused trailing arguments are ignored by the callee */
  return ((F)fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
                 a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21],
                 a[22], a[23], a[24], a[25], a[26], a[27], a[28], a[29], a[30], a[31]);
}

/* Calls `symbol` of `library` with the ARGs `argv[0..argc)`, writes its
 * results and outputs to their files and returns its status (`*message`: the
 * library's message for an error). */
static int32_t call(void *library, LastError lastError, const char *symbol, int argc,
                    char **argv, const char **message) {
  void *fn = dlsym(library, symbol);
  if (!fn)
    die("the library lacks", symbol);
  intptr_t args[MAX_ARGS] = {0};
  int n = 0;
  /* Results: one descriptor, or a struct of descriptors (all int64 words). */
  int64_t resultWords[16 * 35] = {0};
  int64_t resultRank[16], resultBytes[16];
  const char *resultFile[16];
  int results = 0, resultOffset[16];
  Tensor tensors[MAX_ARGS];
  int numTensors = 0;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    if (n >= MAX_ARGS)
      die("too many arguments", NULL);
    if (!strncmp(a, "result:", 7)) {
      char *end;
      int64_t rank = strtoll(a + 7, &end, 10), bytes = strtoll(end + 1, &end, 10);
      if (results >= 16 || rank < 0 || rank > 16 || *end != ':')
        die("bad result", a);
      resultOffset[results] = results ? resultOffset[results - 1] +
                                            3 + 2 * (int)resultRank[results - 1]
                                      : 0;
      resultRank[results] = rank;
      resultBytes[results] = bytes;
      resultFile[results++] = end + 1;
    } else if (!strncmp(a, "in:", 3) || !strncmp(a, "out:", 4)) {
      int out = a[0] == 'o';
      Tensor t = readTensor(a + (out ? 4 : 3));
      t.file = out ? t.file : NULL; /* only outputs are written back */
      tensors[numTensors++] = t;
      args[n++] = (intptr_t)t.words;
    } else if (!strncmp(a, "int:", 4)) {
      args[n++] = (intptr_t)strtoll(a + 4, NULL, 10);
    } else {
      die("unknown argument", a);
    }
  }
  if (results) { /* the result slot is the first argument */
    memmove(args + 1, args, sizeof(intptr_t) * (MAX_ARGS - 1));
    args[0] = (intptr_t)resultWords;
    ++n;
  }
  int32_t status = callEntry(fn, args, n);
  *message = status != 0 ? lastError() : "";
  for (int r = 0; status == 0 && r < results; ++r)
    writeTensor(resultWords + resultOffset[r], resultRank[r], resultBytes[r], resultFile[r]);
  for (int i = 0; status == 0 && i < numTensors; ++i)
    if (tensors[i].file)
      writeTensor(tensors[i].words, tensors[i].rank, tensors[i].bytes, tensors[i].file);
  /* Every buffer once, after all are written: the results' (the caller
   * frees them, docs/c-abi.md) unless one is shared, then the arguments'. */
  void *buffers[16 + MAX_ARGS];
  int numBuffers = 0;
  for (int r = 0; status == 0 && r < results; ++r)
    buffers[numBuffers++] = (void *)(intptr_t)resultWords[resultOffset[r]];
  for (int i = 0; i < numTensors; ++i)
    buffers[numBuffers++] = (void *)(intptr_t)tensors[i].words[0];
  for (int i = 0; i < numBuffers; ++i) {
    int seen = 0;
    for (int j = 0; j < i && !seen; ++j)
      seen = buffers[j] == buffers[i];
    if (!seen)
      free(buffers[i]);
  }
  for (int i = 0; i < numTensors; ++i)
    free(tensors[i].words);
  return status;
}

/* --serve: the requests of standard input, one after another. */
static int serve(void *library, LastError lastError) {
  /* The answers get standard output to themselves: whatever the library
   * prints goes to standard error. */
  FILE *answers = fdopen(dup(1), "w");
  if (!answers || dup2(2, 1) < 0)
    die("cannot set up standard output", NULL);
  enum { kMaxFields = 1 + MAX_ARGS + 16 }; /* SYMBOL, arguments, results */
  char *fields[kMaxFields + 1] = {NULL};
  size_t capacity[kMaxFields + 1] = {0};
  int count = 0;
  for (;;) {
    ssize_t length = getdelim(&fields[count], &capacity[count], '\0', stdin);
    if (length < 0) {
      if (count != 0)
        die("a request ends early", NULL);
      return 0;
    }
    if (length == 1) { /* the empty field: the request is complete */
      if (count == 0)
        die("an empty request", NULL);
      const char *message;
      int32_t status = call(library, lastError, fields[0], count - 1, fields + 1, &message);
      fprintf(answers, "status %" PRId32 " %zu\n%s", status, strlen(message), message);
      fflush(answers);
      count = 0;
    } else if (++count > kMaxFields) {
      die("too many arguments", NULL);
    }
  }
}

int main(int argc, char **argv) {
  int serving = argc == 4 && !strcmp(argv[1], "--serve");
  if (argc < 4)
    die("usage: pe-call LIBRARY SYMBOL LAST_ERROR [result:RANK:BYTES:FILE | in:FILE | "
        "out:FILE | int:VALUE]... | pe-call --serve LIBRARY LAST_ERROR", NULL);
  const char *path = argv[serving ? 2 : 1], *lastErrorName = argv[3];
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library)
    die("cannot load the library", dlerror());
  LastError lastError = (LastError)dlsym(library, lastErrorName);
  if (!lastError)
    die("the library lacks", lastErrorName);
  if (serving)
    return serve(library, lastError);
  const char *message;
  int32_t status = call(library, lastError, argv[2], argc - 4, argv + 4, &message);
  printf("status %" PRId32 "\n", status);
  if (status != 0)
    printf("%s\n", message);
  return 0;
}
