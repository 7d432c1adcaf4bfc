//===- PEGPUOps.cpp - kernel-level ops of the GPU code generation ---------===//
#include "pe/Dialect/PEGPU/IR/PEGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::pe_gpu;

#include "pe/Dialect/PEGPU/IR/PEGPUOpsDialect.cpp.inc"

void PEGPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "pe/Dialect/PEGPU/IR/PEGPUOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MmaAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult MmaAttentionOp::verify() {
  MemRefType q = getQuery().getType(), k = getKey().getType(), v = getValue().getType(),
             out = getOut().getType();
  Type element = q.getElementType();
  if (k.getElementType() != element || v.getElementType() != element ||
      out.getElementType() != element)
    return emitOpError("expects query, key, value and out to share one element type");
  const int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1), d = q.getDimSize(3),
                dv = v.getDimSize(3);
  for (int64_t size : {hq, hkv, d, dv, k.getDimSize(3), out.getDimSize(1), out.getDimSize(3)})
    if (ShapedType::isDynamic(size))
      return emitOpError("expects static head counts and head dims");
  if (hq % hkv != 0 || v.getDimSize(1) != hkv || out.getDimSize(1) != hq)
    return emitOpError("expects Hkv key/value heads dividing the Hq query and out heads");
  if (k.getDimSize(3) != d || out.getDimSize(3) != dv)
    return emitOpError("expects key and query, out and value to share their head dims");
  // The kernel's tensor-core steps: m16n8k16 products over the head dims
  // (every such head's tiles fit the shared memory of a block of sm_90);
  // value heads over kMaxMmaGroupValueDim split both head dims in two
  // halves of whole 16-channel steps.
  if (!mmaAttentionTakesHeadDims(d, dv))
    return emitOpError() << "expects head dims that are multiples of 16 up to "
                         << kMaxMmaGroupValueDim << ", or value heads up to "
                         << kMaxMmaValueDim << " with query/key heads up to "
                         << kMaxMmaHeadDim << " that are multiples of 32, got " << d
                         << " and " << dv;
  if (getRopeAttr() && !getQCos())
    return emitOpError("expects the cos/sin tables of its rope");
  if (getQCos() && !getRopeAttr())
    return emitOpError("expects a rope for its cos/sin tables");
  if (getRotatedKeys() && !getRopeAttr())
    return emitOpError("expects a rope for its rotated keys");
  if (pe::RopeAttr rope = getRopeAttr();
      rope && rope.getRotaryOffset() + rope.getRotaryDim() > d)
    return emitOpError("expects a rotary dim within the head dim");
  if (std::optional<int64_t> window = getWindow(); window && *window < 1)
    return emitOpError("expects window >= 1");
  if (std::optional<int64_t> chunk = getChunk(); chunk && *chunk < 1)
    return emitOpError("expects chunk >= 1");
  // The kernel scales and caps its scores in f32.
  if (!pe::isNormalPositiveF32(getScale().convertToDouble()))
    return emitOpError("expects a scale that is a normal f32 > 0");
  if (std::optional<APFloat> softcap = getSoftcap();
      softcap && !pe::isNormalPositiveF32(softcap->convertToDouble()))
    return emitOpError("expects a softcap that is a normal f32 > 0");
  if (getSlopes() && !ShapedType::isDynamic(getSlopes().getType().getDimSize(0)) &&
      getSlopes().getType().getDimSize(0) != hq)
    return emitOpError("expects one ALiBi slope per query head");
  if (getSinks() && !ShapedType::isDynamic(getSinks().getType().getDimSize(0)) &&
      getSinks().getType().getDimSize(0) != hq)
    return emitOpError("expects one attention sink per query head");
  if (!getSplits() != !getPartialOut() || !getPartialOut() != !getPartialStats())
    return emitOpError("expects partial buffers exactly with splits");
  return success();
}

#define GET_OP_CLASSES
#include "pe/Dialect/PEGPU/IR/PEGPUOps.cpp.inc"
