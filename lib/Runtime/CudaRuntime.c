/*===- CudaRuntime.c - launch entry points over the CUDA driver API --------===*
 *
 * The functions that MLIR's gpu-to-llvm lowering calls (mgpuModuleLoad,
 * mgpuLaunchKernel, mgpuMemAlloc, ...), implemented over the CUDA driver API.
 * The driver is opened with dlopen on first use, so a library that links this
 * one loads, and its CPU code runs, on a machine without a GPU or a driver:
 * only a call that launches a kernel needs them.
 *
 * Environment: PE_CUDA_DRIVER names the driver library (default
 * libcuda.so.1); PE_CUDA_DEVICE the device ordinal when the calling thread
 * has no current context (default 0; otherwise the caller's context, e.g.
 * PyTorch's, is used as it is).
 *
 * A driver error returns PE_ERROR_GPU from the exported entry that made the
 * call, with the failing call in pe_runtime_last_error() (pe_runtime_raise),
 * like the other run-time checks of generated code.
 *
 *===----------------------------------------------------------------------===*/
#include "pe-c/Runtime.h"

#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PE_EXPORT __attribute__((visibility("default")))

/*===--- The driver entry points this file uses ---------------------------===*/

/* Each entry: the member, then the exported (versioned) symbol name. */
#define PE_DRIVER_FUNCTIONS(X)                                                 \
  X(cuInit, "cuInit", CUresult, (unsigned))                                    \
  X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **)) \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                   \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult,            \
    (CUcontext *, CUdevice))                                                   \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", CUresult, (CUcontext *))               \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                 \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, (void))                    \
  X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *)) \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                        \
    (CUmodule *, const void *, unsigned, CUjit_option *, void **))             \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                    \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult,                      \
    (CUfunction *, CUmodule, const char *))                                    \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult,                        \
    (CUfunction, CUfunction_attribute, int))                                   \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,    \
     unsigned, CUstream, void **, void **))                                    \
  X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned))        \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream))               \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))          \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", CUresult,                          \
    (CUstream, CUevent, unsigned))                                             \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))           \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                  \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))             \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))             \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))            \
  X(cuMemAllocManaged, "cuMemAllocManaged", CUresult,                          \
    (CUdeviceptr *, size_t, unsigned))                                         \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                        \
  X(cuMemcpyAsync, "cuMemcpyAsync", CUresult,                                  \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X(cuMemsetD32Async, "cuMemsetD32Async", CUresult,                            \
    (CUdeviceptr, unsigned, size_t, CUstream))                                 \
  X(cuMemsetD16Async, "cuMemsetD16Async", CUresult,                            \
    (CUdeviceptr, unsigned short, size_t, CUstream))

/* Stream-ordered allocation (CUDA 11.2 drivers and newer): used when
 * present. TMA descriptors (CUDA 12 drivers): needed only by sm_90a kernels
 * that load with TMA. */
#define PE_OPTIONAL_DRIVER_FUNCTIONS(X)                                        \
  X(cuMemAllocAsync, "cuMemAllocAsync", CUresult,                              \
    (CUdeviceptr *, size_t, CUstream))                                         \
  X(cuMemFreeAsync, "cuMemFreeAsync", CUresult, (CUdeviceptr, CUstream))     \
  X(cuCtxGetDevice, "cuCtxGetDevice", CUresult, (CUdevice *))                  \
  X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", CUresult,          \
    (CUmemoryPool *, CUdevice))                                                \
  X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", CUresult,                  \
    (CUmemoryPool, CUmemPool_attribute, void *))                               \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", CUresult,                \
    (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,                   \
     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,               \
     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,            \
     CUtensorMapL2promotion, CUtensorMapFloatOOBfill))

#define PE_MEMBER(name, symbol, result, params) result(*name) params;
static struct {
  PE_DRIVER_FUNCTIONS(PE_MEMBER)
  PE_OPTIONAL_DRIVER_FUNCTIONS(PE_MEMBER)
  CUcontext context; /* used when the calling thread has none */
  int defaultDevice;
} driver = {.defaultDevice = -1};
#undef PE_MEMBER

static pthread_once_t driverOnce = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Errors reach the caller of the exported entry as PE_ERROR_GPU with the
 * message (pe_runtime_raise); never raised while a lock is held. */
static _Noreturn void die(const char *what, const char *detail) {
  pe_runtime_raise(PE_ERROR_GPU, "pe GPU runtime: %s%s%s", what,
                   detail ? ": " : "", detail ? detail : "");
  abort(); /* not reached: pe_runtime_raise never returns */
}

/* "CALL failed with CUDA error N: TEXT" for a failed driver call. */
static void describeFailure(char *message, size_t size, CUresult result,
                            const char *call) {
  const char *text = NULL;
  if (driver.cuGetErrorString == NULL ||
      driver.cuGetErrorString(result, &text) != CUDA_SUCCESS || text == NULL)
    text = result == CUDA_ERROR_STUB_LIBRARY ? "the CUDA driver is the toolkit's stub, "
                                               "not an NVIDIA driver"
           : result == CUDA_ERROR_NO_DEVICE  ? "no CUDA-capable device"
                                             : "unknown error";
  snprintf(message, size, "%s failed with CUDA error %d: %s", call, (int)result,
           text);
}

/* Every driver call goes through check(): an error ends with its name. */
static void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return;
  char message[384];
  describeFailure(message, sizeof message, result, call);
  die(message, NULL);
}
#define CHECK(call) check(driver.call, #call)

/* Set by loadDriver (under pthread_once, which must return normally). */
static char driverError[512];

static void loadDriver(void) {
  const char *path = getenv("PE_CUDA_DRIVER");
  if (path == NULL || *path == '\0')
    path = "libcuda.so.1";
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    snprintf(driverError, sizeof driverError,
             "cannot load the CUDA driver (a GPU kernel needs an NVIDIA driver): %s",
             dlerror());
    return;
  }
#define PE_LOAD(name, symbol, result, params)                                  \
  *(void **)&driver.name = dlsym(library, symbol);                             \
  if (driver.name == NULL) {                                                   \
    snprintf(driverError, sizeof driverError,                                  \
             "the CUDA driver lacks " symbol ": %s", path);                    \
    return;                                                                    \
  }
  PE_DRIVER_FUNCTIONS(PE_LOAD)
#undef PE_LOAD
#define PE_LOAD_OPTIONAL(name, symbol, result, params)                         \
  *(void **)&driver.name = dlsym(library, symbol);
  PE_OPTIONAL_DRIVER_FUNCTIONS(PE_LOAD_OPTIONAL)
#undef PE_LOAD_OPTIONAL
  CUresult result = driver.cuInit(0);
  if (result != CUDA_SUCCESS)
    describeFailure(driverError, sizeof driverError, result, "cuInit(0)");
}

/* The driver, and a current context on the calling thread: the caller's if
 * it has one, else the primary context of the default device. */
static void ensureContext(void) {
  pthread_once(&driverOnce, loadDriver);
  if (driverError[0] != '\0')
    die(driverError, NULL);
  CUcontext current = NULL;
  CHECK(cuCtxGetCurrent(&current));
  if (current != NULL)
    return;
  pthread_mutex_lock(&lock);
  CUresult result = CUDA_SUCCESS;
  const char *call = NULL;
  if (driver.context == NULL) {
    int ordinal = driver.defaultDevice;
    const char *env = getenv("PE_CUDA_DEVICE");
    if (ordinal < 0)
      ordinal = env != NULL ? atoi(env) : 0;
    CUdevice device;
    call = "cuDeviceGet";
    result = driver.cuDeviceGet(&device, ordinal);
    if (result == CUDA_SUCCESS) {
      call = "cuDevicePrimaryCtxRetain";
      result = driver.cuDevicePrimaryCtxRetain(&driver.context, device);
    }
  }
  pthread_mutex_unlock(&lock);
  check(result, call);
  CHECK(cuCtxSetCurrent(driver.context));
}

/*===--- Modules: loaded on first use -------------------------------------===*/

/* What mgpuModuleLoad returns. The global constructor of a kernel library
 * calls it when the library is loaded: the driver is only touched when a
 * kernel of the module is first looked up. */
typedef struct {
  const void *data;
  int jit;      /* PTX to compile with the driver's JIT */
  int optLevel; /* its optimization level */
  CUmodule module;
  pthread_mutex_t lock;
} PeModule;

static PeModule *newModule(const void *data, int jit, int optLevel) {
  PeModule *module = calloc(1, sizeof(PeModule));
  if (module == NULL)
    die("out of memory", NULL);
  module->data = data;
  module->jit = jit;
  module->optLevel = optLevel;
  pthread_mutex_init(&module->lock, NULL);
  return module;
}

PE_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  (void)size; /* a cubin or fatbin carries its size */
  return newModule(data, 0, 0);
}

PE_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return newModule(data, 1, optLevel);
}

static CUmodule loadedModule(PeModule *module) {
  ensureContext();
  pthread_mutex_lock(&module->lock);
  CUresult result = CUDA_SUCCESS;
  const char *call = NULL;
  if (module->module == NULL) {
    if (module->jit) {
      CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
      void *values[] = {(void *)(intptr_t)module->optLevel};
      call = "cuModuleLoadDataEx";
      result = driver.cuModuleLoadDataEx(&module->module, module->data, 1, options,
                                         values);
    } else {
      call = "cuModuleLoadData";
      result = driver.cuModuleLoadData(&module->module, module->data);
    }
  }
  pthread_mutex_unlock(&module->lock);
  check(result, call);
  return module->module;
}

PE_EXPORT void mgpuModuleUnload(void *handle) {
  PeModule *module = handle;
  /* At process exit the driver may be gone already: no error check. */
  if (module->module != NULL && driver.cuModuleUnload != NULL)
    driver.cuModuleUnload(module->module);
  pthread_mutex_destroy(&module->lock);
  free(module);
}

PE_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  CUmodule loaded = loadedModule(module);
  CUfunction function = NULL;
  CHECK(cuModuleGetFunction(&function, loaded, name));
  return function;
}

/*===--- Launches, streams, events ----------------------------------------===*/

static unsigned dimension(intptr_t value, const char *what) {
  if (value < 1 || value > (intptr_t)UINT32_MAX)
    die("a kernel launch has an invalid size", what);
  return (unsigned)value;
}

PE_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                intptr_t gridZ, intptr_t blockX,
                                intptr_t blockY, intptr_t blockZ,
                                int32_t sharedMemory, void *stream,
                                void **params, void **extra,
                                size_t paramsCount) {
  (void)paramsCount;
  ensureContext();
  if (sharedMemory > 48 * 1024)
    CHECK(cuFuncSetAttribute(function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             sharedMemory));
  CHECK(cuLaunchKernel(function, dimension(gridX, "grid x"),
                       dimension(gridY, "grid y"), dimension(gridZ, "grid z"),
                       dimension(blockX, "block x"), dimension(blockY, "block y"),
                       dimension(blockZ, "block z"), (unsigned)sharedMemory,
                       stream, params, extra));
}

/* The stream of one call: a blocking stream (CU_STREAM_DEFAULT), so that
 * its work starts after what the caller queued before on the legacy default
 * stream (where PyTorch, CuPy and plain CUDA put their work unless told
 * otherwise) and later work there waits for it. A caller that produces the
 * inputs on a non-blocking stream of its own synchronizes that stream
 * first. */
PE_EXPORT void *mgpuStreamCreate(void) {
  ensureContext();
  CUstream stream = NULL;
  CHECK(cuStreamCreate(&stream, CU_STREAM_DEFAULT));
  return stream;
}

PE_EXPORT void mgpuStreamDestroy(void *stream) { CHECK(cuStreamDestroy(stream)); }

PE_EXPORT void mgpuStreamSynchronize(void *stream) {
  CHECK(cuStreamSynchronize(stream));
}

PE_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  CHECK(cuStreamWaitEvent(stream, event, 0));
}

PE_EXPORT void *mgpuEventCreate(void) {
  ensureContext();
  CUevent event = NULL;
  CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

PE_EXPORT void mgpuEventDestroy(void *event) { CHECK(cuEventDestroy(event)); }

PE_EXPORT void mgpuEventSynchronize(void *event) { CHECK(cuEventSynchronize(event)); }

PE_EXPORT void mgpuEventRecord(void *event, void *stream) {
  CHECK(cuEventRecord(event, stream));
}

PE_EXPORT void mgpuSetDefaultDevice(int32_t device) { driver.defaultDevice = device; }

/*===--- Memory -----------------------------------------------------------===*/

/* Stream-ordered allocations come from the device's default memory pool,
 * which by default gives its memory back to the driver at every
 * synchronization: each call would map its temporaries afresh. The pool of
 * the first device used keeps up to PE_CUDA_POOL_KEEP_BYTES (default: all
 * it holds) between calls, as the caching allocators of PyTorch and CuPy do;
 * PE_CUDA_POOL_KEEP_BYTES=0 restores the driver's default. */
static pthread_once_t poolOnce = PTHREAD_ONCE_INIT;

static void keepPoolMemory(void) {
  CUdevice device;
  CUmemoryPool pool;
  if (driver.cuCtxGetDevice == NULL || driver.cuDeviceGetDefaultMemPool == NULL ||
      driver.cuMemPoolSetAttribute == NULL || driver.cuCtxGetDevice(&device) != CUDA_SUCCESS ||
      driver.cuDeviceGetDefaultMemPool(&pool, device) != CUDA_SUCCESS)
    return; /* an older driver: its default, a cost, not an error */
  const char *env = getenv("PE_CUDA_POOL_KEEP_BYTES");
  cuuint64_t keep = env != NULL ? strtoull(env, NULL, 10) : UINT64_MAX;
  driver.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
}

PE_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared) {
  if (bytes == 0)
    return NULL;
  ensureContext();
  if (driver.cuMemAllocAsync != NULL && stream != NULL)
    pthread_once(&poolOnce, keepPoolMemory);
  CUdeviceptr pointer = 0;
  if (isHostShared)
    CHECK(cuMemAllocManaged(&pointer, bytes, CU_MEM_ATTACH_GLOBAL));
  else if (driver.cuMemAllocAsync != NULL && stream != NULL)
    CHECK(cuMemAllocAsync(&pointer, bytes, stream));
  else
    CHECK(cuMemAlloc(&pointer, bytes));
  return (void *)pointer;
}

PE_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  if (pointer == NULL)
    return;
  if (driver.cuMemFreeAsync != NULL && stream != NULL)
    CHECK(cuMemFreeAsync((CUdeviceptr)pointer, stream));
  else
    CHECK(cuMemFree((CUdeviceptr)pointer));
}

/* Unified addressing: the driver infers the direction from the pointers. */
PE_EXPORT void mgpuMemcpy(void *destination, void *source, size_t bytes,
                          void *stream) {
  if (bytes == 0)
    return;
  CHECK(cuMemcpyAsync((CUdeviceptr)destination, (CUdeviceptr)source, bytes, stream));
}

PE_EXPORT void mgpuMemset32(void *destination, unsigned value, size_t count,
                            void *stream) {
  if (count != 0)
    CHECK(cuMemsetD32Async((CUdeviceptr)destination, value, count, stream));
}

PE_EXPORT void mgpuMemset16(void *destination, unsigned short value,
                            size_t count, void *stream) {
  if (count != 0)
    CHECK(cuMemsetD16Async((CUdeviceptr)destination, value, count, stream));
}

/*===--- TMA descriptors --------------------------------------------------===*/

/* Bytes per element of each CUtensorMapDataType, in the enum's order (uint8,
 * uint16, uint32, int32, uint64, int64, f16, f32, f64, bf16, f32 ftz, tf32,
 * tf32 ftz). */
static const unsigned kTensorMapElementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};

/* Device copies of the descriptors encoded so far, one per distinct
 * (context, descriptor), the most recently used first: a kernel launched
 * earlier may still read a copy, and another thread may have found one it
 * has not launched with yet. So when the cache is full its copies retire
 * (still valid) and the copies retired the time before are freed, after the
 * context's work has finished: a copy handed out stays valid until two
 * more fills of kMaxTensorMaps new descriptors of its context. */
typedef struct TensorMapCopy {
  CUtensorMap map;
  CUcontext context;
  CUdeviceptr device;
  struct TensorMapCopy *next;
} TensorMapCopy;
static TensorMapCopy *tensorMaps, *retiredTensorMaps;
enum { kMaxTensorMaps = 4096 };

/* The device copy of `map` in `context`, or 0; a copy found moves to the
 * front (a caller's few descriptors are found at once). */
static CUdeviceptr findTensorMap(CUcontext context, const CUtensorMap *map) {
  CUdeviceptr device = 0;
  pthread_mutex_lock(&lock);
  for (TensorMapCopy **link = &tensorMaps; *link != NULL; link = &(*link)->next) {
    TensorMapCopy *copy = *link;
    if (copy->context != context || memcmp(&copy->map, map, sizeof *map) != 0)
      continue;
    device = copy->device;
    *link = copy->next;
    copy->next = tensorMaps;
    tensorMaps = copy;
    break;
  }
  pthread_mutex_unlock(&lock);
  return device;
}

/* Moves the copies of `context` from list `*from` to the front of list
 * `*to`. (Under the lock.) */
static void moveTensorMaps(TensorMapCopy **from, TensorMapCopy **to, CUcontext context) {
  for (TensorMapCopy **link = from; *link != NULL;) {
    TensorMapCopy *copy = *link;
    if (copy->context != context) {
      link = &copy->next;
      continue;
    }
    *link = copy->next;
    copy->next = *to;
    *to = copy;
  }
}

/* When `context` keeps kMaxTensorMaps copies, retires them and frees those
 * retired before, once every kernel of the context finished. (The count
 * and the retirement under one hold of the lock: two threads that find the
 * cache full retire it once.) */
static void releaseTensorMapsIfFull(CUcontext context) {
  TensorMapCopy *released = NULL;
  pthread_mutex_lock(&lock);
  int kept = 0;
  for (TensorMapCopy *copy = tensorMaps; copy != NULL; copy = copy->next)
    kept += copy->context == context;
  if (kept < kMaxTensorMaps) {
    pthread_mutex_unlock(&lock);
    return;
  }
  moveTensorMaps(&retiredTensorMaps, &released, context);
  moveTensorMaps(&tensorMaps, &retiredTensorMaps, context);
  pthread_mutex_unlock(&lock);
  CUresult result = driver.cuCtxSynchronize();
  for (TensorMapCopy *copy = released, *next; copy != NULL; copy = next) {
    next = copy->next;
    if (result == CUDA_SUCCESS)
      result = driver.cuMemFree(copy->device);
    free(copy);
  }
  check(result, "cuCtxSynchronize or cuMemFree of TMA descriptors");
}

/* A device copy of `map` for the calling thread's context, uploaded on a
 * stream of its own (no wait on other streams' work). */
static CUdeviceptr deviceTensorMap(const CUtensorMap *map) {
  CUcontext context = NULL;
  CHECK(cuCtxGetCurrent(&context));
  CUdeviceptr device = findTensorMap(context, map);
  if (device != 0)
    return device;
  releaseTensorMapsIfFull(context);
  /* CUtensorMap is 64-byte aligned (sizeof a multiple of 64). */
  TensorMapCopy *copy = aligned_alloc(_Alignof(TensorMapCopy), sizeof(TensorMapCopy));
  if (copy == NULL)
    die("out of host memory for a TMA descriptor", NULL);
  memset(copy, 0, sizeof *copy);
  copy->map = *map;
  copy->context = context;
  CUstream stream = NULL;
  const char *call = "cuMemAlloc";
  CUresult result = driver.cuMemAlloc(&copy->device, sizeof *map);
  if (result == CUDA_SUCCESS) {
    call = "cuStreamCreate";
    result = driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  }
  if (result == CUDA_SUCCESS) {
    call = "cuMemcpyAsync";
    result = driver.cuMemcpyAsync(copy->device, (CUdeviceptr)&copy->map, sizeof *map, stream);
    CUresult synchronized = driver.cuStreamSynchronize(stream);
    if (result == CUDA_SUCCESS) {
      call = "cuStreamSynchronize";
      result = synchronized;
    }
    driver.cuStreamDestroy(stream);
  }
  if (result != CUDA_SUCCESS) {
    if (copy->device != 0)
      driver.cuMemFree(copy->device);
    free(copy);
    check(result, call);
  }
  pthread_mutex_lock(&lock);
  copy->next = tensorMaps;
  tensorMaps = copy;
  pthread_mutex_unlock(&lock);
  return copy->device;
}

/* MLIR's nvgpu lowering of nvgpu.tma.create.descriptor: a tiled TMA
 * descriptor of the ranked memref `descriptor` (allocated, aligned, offset,
 * sizes[rank], strides[rank]) with box sizes `box` (outermost first), in
 * device memory. TMA lists dimensions innermost first, strides in bytes for
 * all but the innermost, which must be contiguous. */
PE_EXPORT void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *descriptor, int64_t type,
                                               int64_t interleave, int64_t swizzle,
                                               int64_t l2Promotion, int64_t oobFill,
                                               int64_t *box) {
  if (rank < 1 || rank > 5)
    die("a TMA descriptor needs a memref of rank 1 to 5", NULL);
  if (type < 0 || type >= (int64_t)(sizeof kTensorMapElementBytes / sizeof *kTensorMapElementBytes))
    die("a TMA descriptor has an unknown element type", NULL);
  if (interleave < 0 || swizzle < 0 || l2Promotion < 0 || oobFill < 0 || interleave > 16 ||
      swizzle > 16 || l2Promotion > 16 || oobFill > 16)
    die("a TMA descriptor has an unknown interleave, swizzle, L2 or fill mode", NULL);
  const unsigned bytes = kTensorMapElementBytes[type];
  const int64_t *fields = (const int64_t *)((char **)descriptor + 2);
  const int64_t offset = fields[0], *sizes = fields + 1, *strides = fields + 1 + rank;
  if (strides[rank - 1] != 1)
    die("a TMA descriptor needs a memref whose innermost dimension is contiguous", NULL);
  cuuint64_t globalDim[5], globalStrides[4];
  cuuint32_t boxDim[5], elementStrides[5];
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = rank - 1 - i;
    if (sizes[dim] < 1 || box[dim] < 1 || box[dim] > 256)
      die("a TMA descriptor has an empty dimension or a box size outside [1, 256]", NULL);
    globalDim[i] = (cuuint64_t)sizes[dim];
    boxDim[i] = (cuuint32_t)box[dim];
    elementStrides[i] = 1;
    if (i + 1 < rank)
      globalStrides[i] = (cuuint64_t)strides[dim - 1] * bytes;
  }
  char *address = ((char **)descriptor)[1] + offset * (int64_t)bytes;
  ensureContext();
  if (driver.cuTensorMapEncodeTiled == NULL)
    die("TMA descriptors need a CUDA 12 driver or newer (cuTensorMapEncodeTiled)", NULL);
  /* Zeroed, so that equal descriptors compare equal whatever bytes the
   * driver leaves unwritten. */
  CUtensorMap map;
  memset(&map, 0, sizeof map);
  CHECK(cuTensorMapEncodeTiled(&map, (CUtensorMapDataType)type, (cuuint32_t)rank, address,
                               globalDim, globalStrides, boxDim, elementStrides,
                               (CUtensorMapInterleave)interleave, (CUtensorMapSwizzle)swizzle,
                               (CUtensorMapL2promotion)l2Promotion,
                               (CUtensorMapFloatOOBfill)oobFill));
  return (void *)deviceTensorMap(&map);
}
