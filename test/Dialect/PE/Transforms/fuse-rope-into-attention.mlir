// RUN: pe-opt %s --pe-fuse-rope-into-attention --canonicalize -split-input-file | FileCheck %s

#llama3 = #pe.rope<theta = 500000.0, rotary_dim = 64, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>

// The rotations move into the attention; the standalone ropes are gone.
// CHECK-LABEL: func.func @fuse
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x?x64xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x64xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x64xf32>, %[[P:[a-z0-9]+]]: tensor<?xi32>)
// CHECK-NOT: pe.rope #
// CHECK: %[[O:.*]] = pe.attention %[[Q]], %[[K]], %[[V]] q_positions(%[[P]] : tensor<?xi32>) k_positions(%[[P]] : tensor<?xi32>) causal rope(#pe.rope<theta = 500000.0, rotary_dim = 64, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>)
// CHECK-NOT: pe.rope #
// CHECK: return %[[O]]
func.func @fuse(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>, %p: tensor<?xi32>) -> tensor<1x8x?x64xf32> {
  %qr = pe.rope #llama3 %q, %p : tensor<1x8x?x64xf32>, tensor<?xi32>
  %kr = pe.rope #llama3 %k, %p : tensor<1x2x?x64xf32>, tensor<?xi32>
  %o = pe.attention %qr, %kr, %v q_positions(%p : tensor<?xi32>) k_positions(%p : tensor<?xi32>) causal : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// Without positional masking, the attention adopts the rotations' positions.
// The fused attention keeps the op's soft-capping.
// CHECK-LABEL: func.func @fuse_unmasked
// CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} q_positions(%[[QP:.*]] : tensor<4xi64>) k_positions(%[[KP:.*]] : tensor<6xi64>) rope(#pe.rope<rotary_dim = 16>) softcap(3.000000e+01)
func.func @fuse_unmasked(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x6x16xf32>, %qp: tensor<4xi64>, %kp: tensor<6xi64>) -> tensor<1x2x4x16xf32> {
  %qr = pe.rope #pe.rope<rotary_dim = 16> %q, %qp : tensor<1x2x4x16xf32>, tensor<4xi64>
  %kr = pe.rope #pe.rope<rotary_dim = 16> %k, %kp : tensor<1x2x6x16xf32>, tensor<6xi64>
  %o = pe.attention %qr, %kr, %k softcap(30.0) : tensor<1x2x4x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

// A rotated K that is also written to a KV cache: the attention fuses, the
// rotation stays for the cache.
// CHECK-LABEL: func.func @kv_cache
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x2x4x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x4x16xf32>
// CHECK: %[[KR:.*]] = pe.rope #pe.rope<rotary_dim = 16> %[[K]]
// CHECK: %[[O:.*]] = pe.attention %[[Q]], %[[K]], %{{.*}} q_positions({{.*}}) k_positions({{.*}}) causal rope(
// CHECK: return %[[O]], %[[KR]]
func.func @kv_cache(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>, %p: tensor<4xi32>) -> (tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) {
  %qr = pe.rope #pe.rope<rotary_dim = 16> %q, %p : tensor<1x2x4x16xf32>, tensor<4xi32>
  %kr = pe.rope #pe.rope<rotary_dim = 16> %k, %p : tensor<1x2x4x16xf32>, tensor<4xi32>
  %o = pe.attention %qr, %kr, %v q_positions(%p : tensor<4xi32>) k_positions(%p : tensor<4xi32>) causal : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return %o, %kr : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>
}

// -----

// Must not fuse: only Q rotated; different configurations; causal attention
// at default positions; attention positions that are not the rotations';
// a BSHD rotation (its tensor is read as BHSD by the attention).
// CHECK-LABEL: func.func @no_fuse
// CHECK-COUNT-8: pe.rope #
// CHECK-NOT: rope(#
func.func @no_fuse(%q: tensor<1x4x4x16xf32>, %k: tensor<1x4x4x16xf32>, %p: tensor<4xi32>, %p2: tensor<4xi32>)
    -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) {
  %q1 = pe.rope #pe.rope<rotary_dim = 16> %q, %p : tensor<1x4x4x16xf32>, tensor<4xi32>
  %only_q = pe.attention %q1, %k, %k : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32> -> tensor<1x4x4x16xf32>
  %q2 = pe.rope #pe.rope<rotary_dim = 16> %q, %p : tensor<1x4x4x16xf32>, tensor<4xi32>
  %k2 = pe.rope #pe.rope<rotary_dim = 8> %k, %p : tensor<1x4x4x16xf32>, tensor<4xi32>
  %configs = pe.attention %q2, %k2, %k : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32> -> tensor<1x4x4x16xf32>
  %q3 = pe.rope #pe.rope<rotary_dim = 16> %q, %p : tensor<1x4x4x16xf32>, tensor<4xi32>
  %k3 = pe.rope #pe.rope<rotary_dim = 16> %k, %p : tensor<1x4x4x16xf32>, tensor<4xi32>
  %defaults = pe.attention %q3, %k3, %k causal : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32> -> tensor<1x4x4x16xf32>
  %k4 = pe.rope #pe.rope<rotary_dim = 16> %k, %p : tensor<1x4x4x16xf32>, tensor<4xi32>
  %other = pe.attention %q3, %k4, %k q_positions(%p2 : tensor<4xi32>) k_positions(%p : tensor<4xi32>) causal : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32> -> tensor<1x4x4x16xf32>
  %qb = pe.rope #pe.rope<rotary_dim = 16> %q, %p layout(bshd) : tensor<1x4x4x16xf32>, tensor<4xi32>
  %kb = pe.rope #pe.rope<rotary_dim = 16> %k, %p layout(bshd) : tensor<1x4x4x16xf32>, tensor<4xi32>
  %bshd = pe.attention %qb, %kb, %k : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32> -> tensor<1x4x4x16xf32>
  return %only_q, %configs, %defaults, %other, %bshd : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>
}

// -----

// A multi-stream rotation (M-RoPE) fuses with its positions as the
// attention's rope_positions; the attention's own (default) positions keep
// placing the causal mask.
// CHECK-LABEL: func.func @fuse_multi_stream
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x?x64xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x64xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x64xf32>, %[[P:[a-z0-9]+]]: tensor<3x?xi64>)
// CHECK-NOT: pe.rope #
// CHECK: pe.attention %[[Q]], %[[K]], %[[V]] causal rope(#pe.rope<theta = 1000000.0, rotary_dim = 64, sections = [8, 12, 12]>) rope_positions(%[[P]], %[[P]] : tensor<3x?xi64>, tensor<3x?xi64>) :
func.func @fuse_multi_stream(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>, %p: tensor<3x?xi64>) -> tensor<1x8x?x64xf32> {
  %qr = pe.rope #pe.rope<theta = 1000000.0, rotary_dim = 64, sections = [8, 12, 12]> %q, %p : tensor<1x8x?x64xf32>, tensor<3x?xi64>
  %kr = pe.rope #pe.rope<theta = 1000000.0, rotary_dim = 64, sections = [8, 12, 12]> %k, %p : tensor<1x2x?x64xf32>, tensor<3x?xi64>
  %o = pe.attention %qr, %kr, %v causal : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// Multi-head latent attention written unfused: q's trailing 64 channels
// rotated (offset 128), the shared key block k_pe rotated as a tensor of its
// own (offset 0). Both rotate the same channels of a key head with the same
// configuration, so the attention takes the rotation and the un-rotated
// block.
#mla_q = #pe.rope<rotary_dim = 64, style = interleaved, rotary_offset = 128>
#mla_k = #pe.rope<rotary_dim = 64, style = interleaved>
// CHECK-LABEL: func.func @shared_key
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x?x192xf32>, %[[K:[a-z0-9]+]]: tensor<1x8x?x128xf32>, %[[V:[a-z0-9]+]]: tensor<1x8x?x128xf32>, %[[KS:[a-z0-9]+]]: tensor<1x1x?x64xf32>, %[[P:[a-z0-9]+]]: tensor<?xi64>)
// CHECK-NOT: pe.rope #
// CHECK: pe.attention %[[Q]], %[[K]], %[[V]] q_positions(%[[P]] : tensor<?xi64>) k_positions(%[[P]] : tensor<?xi64>) shared_key(%[[KS]] : tensor<1x1x?x64xf32>) causal rope(#pe.rope<rotary_dim = 64, style = interleaved, rotary_offset = 128>)
func.func @shared_key(%q: tensor<1x8x?x192xf32>, %k: tensor<1x8x?x128xf32>, %v: tensor<1x8x?x128xf32>, %ks: tensor<1x1x?x64xf32>, %p: tensor<?xi64>) -> tensor<1x8x?x128xf32> {
  %qr = pe.rope #mla_q %q, %p : tensor<1x8x?x192xf32>, tensor<?xi64>
  %kr = pe.rope #mla_k %ks, %p : tensor<1x1x?x64xf32>, tensor<?xi64>
  %o = pe.attention %qr, %k, %v q_positions(%p : tensor<?xi64>) k_positions(%p : tensor<?xi64>) shared_key(%kr : tensor<1x1x?x64xf32>) causal : tensor<1x8x?x192xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32> -> tensor<1x8x?x128xf32>
  return %o : tensor<1x8x?x128xf32>
}

// -----

// A query rotation that starts among the key heads' own channels (offset
// 96 < 128) would also rotate channels of the un-rotated keys: not fused.
// CHECK-LABEL: func.func @shared_key_own_channels
// CHECK: pe.rope #pe.rope<rotary_dim = 64, rotary_offset = 96>
// CHECK: pe.rope #pe.rope<rotary_dim = 64>
// CHECK: pe.attention
// CHECK-NOT: rope(
func.func @shared_key_own_channels(%q: tensor<1x8x?x192xf32>, %k: tensor<1x8x?x128xf32>, %v: tensor<1x8x?x128xf32>, %ks: tensor<1x1x?x64xf32>, %p: tensor<?xi64>) -> tensor<1x8x?x128xf32> {
  %qr = pe.rope #pe.rope<rotary_dim = 64, rotary_offset = 96> %q, %p : tensor<1x8x?x192xf32>, tensor<?xi64>
  %kr = pe.rope #pe.rope<rotary_dim = 64> %ks, %p : tensor<1x1x?x64xf32>, tensor<?xi64>
  %o = pe.attention %qr, %k, %v q_positions(%p : tensor<?xi64>) k_positions(%p : tensor<?xi64>) shared_key(%kr : tensor<1x1x?x64xf32>) causal : tensor<1x8x?x192xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32> -> tensor<1x8x?x128xf32>
  return %o : tensor<1x8x?x128xf32>
}

// -----

// The block rotated with another configuration (another theta): not fused.
// CHECK-LABEL: func.func @shared_key_other_rotation
// CHECK: pe.rope #pe.rope<theta = 500000.0, rotary_dim = 64>
// CHECK: pe.attention
// CHECK-NOT: rope(
func.func @shared_key_other_rotation(%q: tensor<1x8x?x192xf32>, %k: tensor<1x8x?x128xf32>, %v: tensor<1x8x?x128xf32>, %ks: tensor<1x1x?x64xf32>, %p: tensor<?xi64>) -> tensor<1x8x?x128xf32> {
  %qr = pe.rope #pe.rope<rotary_dim = 64, rotary_offset = 128> %q, %p : tensor<1x8x?x192xf32>, tensor<?xi64>
  %kr = pe.rope #pe.rope<theta = 500000.0, rotary_dim = 64> %ks, %p : tensor<1x1x?x64xf32>, tensor<?xi64>
  %o = pe.attention %qr, %k, %v q_positions(%p : tensor<?xi64>) k_positions(%p : tensor<?xi64>) shared_key(%kr : tensor<1x1x?x64xf32>) causal : tensor<1x8x?x192xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32> -> tensor<1x8x?x128xf32>
  return %o : tensor<1x8x?x128xf32>
}
