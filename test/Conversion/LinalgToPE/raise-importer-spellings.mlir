// Importer spellings nobody here wrote, raised only where the proof holds.
// RUN: pe-opt %s -split-input-file --pe-raise-positional-encodings | FileCheck %s
// RUN: pe-opt %s -split-input-file --pe-raise-positional-encodings=remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=CHECK-REMARK

// GPT-J attention as iree-turbine + `iree-compile --compile-to=input` emit it
// (then spelled as torch-mlir does: an i1 causal constant and linalg.softmax):
// inputs [B, S, H, D]; rotary_dim 8 of 16, interleaved pairs from strided
// slices (::2, 1::2), negf and a stack (expand_shape + concat +
// collapse_shape), the pass-through tail concatenated back; a [16, 8]
// constant table [sin | cos] gathered by the position ids, split and
// repeat_interleave(2)-ed; scores / 4; select(mask, scores, finfo.min);
// heads merged back to [1, 8, 64].

// CHECK-LABEL: func.func @gptj_attention
//  CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x4x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x8x4x16xf32>, %{{.*}}: tensor<1x8x4x16xf32>, %[[P:[a-z0-9]+]]: tensor<1x8xi64>)
//   CHECK-DAG: %[[MIN:.*]] = arith.constant -3.40282347E+38 : f32
//   CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//   CHECK-DAG: %[[KEEP:.*]] = arith.constant dense<{{\[\[}}true, false, false
//       CHECK: pe.rope #pe.rope<rotary_dim = 8, style = interleaved> %[[Q]], %[[P]] layout(bshd)
//       CHECK: pe.rope #pe.rope<rotary_dim = 8, style = interleaved> %[[K]], %[[P]] layout(bshd)
//       CHECK: linalg.generic {{.*}} ins(%[[KEEP]] : tensor<8x8xi1>)
//       CHECK: arith.select %{{.*}}, %[[ZERO]], %[[MIN]] : f32
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x1x8x8xf32>) scale(2.500000e-01)
//   CHECK-NOT: linalg.softmax
func.func @gptj_attention(%0: tensor<1x8x4x16xf32>, %1: tensor<1x8x4x16xf32>, %2: tensor<1x8x4x16xf32>, %3: tensor<1x8xi64>) -> tensor<1x8x64xf32> {
        %maskc = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
    %c16_i64 = arith.constant 16 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %cst_1 = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [8.414709568e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04, 5.403023362e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01], [9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03, -4.161468446e-01, 9.800665975e-01, 9.998000264e-01, 9.999980330e-01], [1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03, -9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01], [-7.568024993e-01, 3.894183636e-01, 3.998933360e-02, 3.999989480e-03, -6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01], [-9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03, 2.836622000e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01], [-2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03, 9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01], [6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03, 7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01], [9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03, -1.455000341e-01, 6.967067122e-01, 9.968016744e-01, 9.999679923e-01], [4.121184945e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03, -9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01], [-5.440211296e-01, 8.414709568e-01, 9.983341396e-02, 9.999834001e-03, -8.390715122e-01, 5.403023362e-01, 9.950041771e-01, 9.999499917e-01], [-9.999902248e-01, 8.912073970e-01, 1.097782999e-01, 1.099977922e-02, 4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01], [-5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02, 8.438539505e-01, 3.623577058e-01, 9.928086400e-01, 9.999279976e-01], [4.201670289e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02, 9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01], [9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02, 1.367372125e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01], [6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02, -7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01]]> : tensor<16x8xf32>
    %cst_2 = arith.constant 0.000000e+00 : f32
    %c0_i8 = arith.constant 0 : i8
    %cst_3 = arith.constant 0xFF800000 : f32
    %cst_4 = arith.constant 4.000000e+00 : f32
    %4 = tensor.empty() : tensor<1x8x8xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<1x8xi64>) outs(%4 : tensor<1x8x8xf32>) {
    ^bb0(%in: i64, %out: f32):
      %46 = arith.cmpi slt, %in, %c0_i64 : i64
      %47 = arith.addi %in, %c16_i64 : i64
      %48 = arith.select %46, %47, %in : i64
      %49 = arith.index_cast %in : i64 to index
      %50 = linalg.index 2 : index
      %extracted = tensor.extract %cst_1[%49, %50] : tensor<16x8xf32>
      linalg.yield %extracted : f32
    } -> tensor<1x8x8xf32>
    %extracted_slice = tensor.extract_slice %5[0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x8x4xf32>
    %extracted_slice_5 = tensor.extract_slice %5[0, 0, 4] [1, 8, 4] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x8x4xf32>
    %expanded = tensor.expand_shape %extracted_slice [[0], [1], [2, 3]] output_shape [1, 8, 1, 4] : tensor<1x8x4xf32> into tensor<1x8x1x4xf32>
    %6 = tensor.empty() : tensor<1x8x1x4x2xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x8x1x4xf32>) outs(%6 : tensor<1x8x1x4x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1x4x2xf32>
    %collapsed = tensor.collapse_shape %7 [[0], [1], [2], [3, 4]] : tensor<1x8x1x4x2xf32> into tensor<1x8x1x8xf32>
    %expanded_6 = tensor.expand_shape %extracted_slice_5 [[0], [1], [2, 3]] output_shape [1, 8, 1, 4] : tensor<1x8x4xf32> into tensor<1x8x1x4xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6 : tensor<1x8x1x4xf32>) outs(%6 : tensor<1x8x1x4x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1x4x2xf32>
    %collapsed_7 = tensor.collapse_shape %8 [[0], [1], [2], [3, 4]] : tensor<1x8x1x4x2xf32> into tensor<1x8x1x8xf32>
    %9 = tensor.empty() : tensor<1x8x4x16xf32>
    %extracted_slice_8 = tensor.extract_slice %0[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %extracted_slice_9 = tensor.extract_slice %0[0, 0, 0, 8] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %10 = tensor.empty() : tensor<1x8x4x8xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_8, %collapsed_7 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %extracted_slice_10 = tensor.extract_slice %extracted_slice_8[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %extracted_slice_11 = tensor.extract_slice %extracted_slice_8[0, 0, 0, 1] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %12 = tensor.empty() : tensor<1x8x4x4xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_11 : tensor<1x8x4x4xf32>) outs(%12 : tensor<1x8x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.negf %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x4xf32>
    %expanded_12 = tensor.expand_shape %13 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %expanded_13 = tensor.expand_shape %extracted_slice_10 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %concat = tensor.concat dim(4) %expanded_12, %expanded_13 : (tensor<1x8x4x4x1xf32>, tensor<1x8x4x4x1xf32>) -> tensor<1x8x4x4x2xf32>
    %collapsed_14 = tensor.collapse_shape %concat [[0], [1], [2], [3, 4]] : tensor<1x8x4x4x2xf32> into tensor<1x8x4x8xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_14, %collapsed : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %14 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.addf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %concat_15 = tensor.concat dim(3) %15, %extracted_slice_9 : (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) -> tensor<1x8x4x16xf32>
    %16 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%concat_15 : tensor<1x8x4x16xf32>) outs(%16 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %extracted_slice_16 = tensor.extract_slice %1[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %extracted_slice_17 = tensor.extract_slice %1[0, 0, 0, 8] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_16, %collapsed_7 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %extracted_slice_18 = tensor.extract_slice %extracted_slice_16[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %extracted_slice_19 = tensor.extract_slice %extracted_slice_16[0, 0, 0, 1] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_19 : tensor<1x8x4x4xf32>) outs(%12 : tensor<1x8x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.negf %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x4xf32>
    %expanded_20 = tensor.expand_shape %18 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %expanded_21 = tensor.expand_shape %extracted_slice_18 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %concat_22 = tensor.concat dim(4) %expanded_20, %expanded_21 : (tensor<1x8x4x4x1xf32>, tensor<1x8x4x4x1xf32>) -> tensor<1x8x4x4x2xf32>
    %collapsed_23 = tensor.collapse_shape %concat_22 [[0], [1], [2], [3, 4]] : tensor<1x8x4x4x2xf32> into tensor<1x8x4x8xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_23, %collapsed : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %19 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.addf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %concat_24 = tensor.concat dim(3) %20, %extracted_slice_17 : (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) -> tensor<1x8x4x16xf32>
    %transposed_25 = linalg.transpose ins(%2 : tensor<1x8x4x16xf32>) outs(%16 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %21 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_26 = linalg.transpose ins(%concat_24 : tensor<1x8x4x16xf32>) outs(%21 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_27 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_28 = tensor.collapse_shape %transposed_26 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %22 = tensor.empty() : tensor<4x8x8xf32>
    %23 = linalg.fill ins(%cst_2 : f32) outs(%22 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %24 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%23 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_29 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %25 = tensor.empty() : tensor<1x4x8x8xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.divf %in, %cst_4 : f32
      linalg.yield %46 : f32
    } -> tensor<1x4x8x8xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%maskc, %26, %cst_0 : tensor<8x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: i1, %in_36: f32, %in_37: f32, %out: f32):
      %46 = arith.select %in, %in_36, %in_37 : f32
      linalg.yield %46 : f32
    } -> tensor<1x4x8x8xf32>
    %40 = linalg.softmax dimension(3) ins(%29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    %collapsed_31 = tensor.collapse_shape %40 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_32 = tensor.collapse_shape %transposed_25 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %41 = tensor.empty() : tensor<4x8x16xf32>
    %42 = linalg.fill ins(%cst_2 : f32) outs(%41 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %43 = linalg.batch_matmul ins(%collapsed_31, %collapsed_32 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%42 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_33 = tensor.expand_shape %43 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<1x4x8x16xf32>) outs(%9 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_35 = tensor.collapse_shape %transposed_34 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_35 : tensor<1x8x64xf32>
}

// -----

// The same gather as IREE spells torch's indexing: a negative position
// counts from the end of the table (p < 0 ? p + 16 : p). The positions of
// pe.rope are the rows read, wrapped the same way.

// CHECK-LABEL: func.func @gptj_negative_index_wrap
//  CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x4x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x8x4x16xf32>, %{{.*}}: tensor<1x8x4x16xf32>, %[[P:[a-z0-9]+]]: tensor<1x8xi64>)
//       CHECK: %[[ROWS:.*]] = linalg.map ins(%[[P]] : tensor<1x8xi64>)
//       CHECK:   %[[NEG:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i64
//       CHECK:   %[[UP:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
//       CHECK:   arith.select %[[NEG]], %[[UP]], %{{.*}} : i64
//       CHECK: pe.rope #pe.rope<rotary_dim = 8, style = interleaved> %[[Q]], %[[ROWS]] layout(bshd)
//       CHECK: pe.rope #pe.rope<rotary_dim = 8, style = interleaved> %[[K]], %{{.*}} layout(bshd)
//       CHECK: pe.attention
func.func @gptj_negative_index_wrap(%0: tensor<1x8x4x16xf32>, %1: tensor<1x8x4x16xf32>, %2: tensor<1x8x4x16xf32>, %3: tensor<1x8xi64>) -> tensor<1x8x64xf32> {
        %maskc = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
    %c16_i64 = arith.constant 16 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %cst_1 = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [8.414709568e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04, 5.403023362e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01], [9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03, -4.161468446e-01, 9.800665975e-01, 9.998000264e-01, 9.999980330e-01], [1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03, -9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01], [-7.568024993e-01, 3.894183636e-01, 3.998933360e-02, 3.999989480e-03, -6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01], [-9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03, 2.836622000e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01], [-2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03, 9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01], [6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03, 7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01], [9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03, -1.455000341e-01, 6.967067122e-01, 9.968016744e-01, 9.999679923e-01], [4.121184945e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03, -9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01], [-5.440211296e-01, 8.414709568e-01, 9.983341396e-02, 9.999834001e-03, -8.390715122e-01, 5.403023362e-01, 9.950041771e-01, 9.999499917e-01], [-9.999902248e-01, 8.912073970e-01, 1.097782999e-01, 1.099977922e-02, 4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01], [-5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02, 8.438539505e-01, 3.623577058e-01, 9.928086400e-01, 9.999279976e-01], [4.201670289e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02, 9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01], [9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02, 1.367372125e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01], [6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02, -7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01]]> : tensor<16x8xf32>
    %cst_2 = arith.constant 0.000000e+00 : f32
    %c0_i8 = arith.constant 0 : i8
    %cst_3 = arith.constant 0xFF800000 : f32
    %cst_4 = arith.constant 4.000000e+00 : f32
    %4 = tensor.empty() : tensor<1x8x8xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<1x8xi64>) outs(%4 : tensor<1x8x8xf32>) {
    ^bb0(%in: i64, %out: f32):
      %46 = arith.cmpi slt, %in, %c0_i64 : i64
      %47 = arith.addi %in, %c16_i64 : i64
      %48 = arith.select %46, %47, %in : i64
      %49 = arith.index_cast %48 : i64 to index
      %50 = linalg.index 2 : index
      %extracted = tensor.extract %cst_1[%49, %50] : tensor<16x8xf32>
      linalg.yield %extracted : f32
    } -> tensor<1x8x8xf32>
    %extracted_slice = tensor.extract_slice %5[0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x8x4xf32>
    %extracted_slice_5 = tensor.extract_slice %5[0, 0, 4] [1, 8, 4] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x8x4xf32>
    %expanded = tensor.expand_shape %extracted_slice [[0], [1], [2, 3]] output_shape [1, 8, 1, 4] : tensor<1x8x4xf32> into tensor<1x8x1x4xf32>
    %6 = tensor.empty() : tensor<1x8x1x4x2xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x8x1x4xf32>) outs(%6 : tensor<1x8x1x4x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1x4x2xf32>
    %collapsed = tensor.collapse_shape %7 [[0], [1], [2], [3, 4]] : tensor<1x8x1x4x2xf32> into tensor<1x8x1x8xf32>
    %expanded_6 = tensor.expand_shape %extracted_slice_5 [[0], [1], [2, 3]] output_shape [1, 8, 1, 4] : tensor<1x8x4xf32> into tensor<1x8x1x4xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6 : tensor<1x8x1x4xf32>) outs(%6 : tensor<1x8x1x4x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1x4x2xf32>
    %collapsed_7 = tensor.collapse_shape %8 [[0], [1], [2], [3, 4]] : tensor<1x8x1x4x2xf32> into tensor<1x8x1x8xf32>
    %9 = tensor.empty() : tensor<1x8x4x16xf32>
    %extracted_slice_8 = tensor.extract_slice %0[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %extracted_slice_9 = tensor.extract_slice %0[0, 0, 0, 8] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %10 = tensor.empty() : tensor<1x8x4x8xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_8, %collapsed_7 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %extracted_slice_10 = tensor.extract_slice %extracted_slice_8[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %extracted_slice_11 = tensor.extract_slice %extracted_slice_8[0, 0, 0, 1] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %12 = tensor.empty() : tensor<1x8x4x4xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_11 : tensor<1x8x4x4xf32>) outs(%12 : tensor<1x8x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.negf %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x4xf32>
    %expanded_12 = tensor.expand_shape %13 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %expanded_13 = tensor.expand_shape %extracted_slice_10 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %concat = tensor.concat dim(4) %expanded_12, %expanded_13 : (tensor<1x8x4x4x1xf32>, tensor<1x8x4x4x1xf32>) -> tensor<1x8x4x4x2xf32>
    %collapsed_14 = tensor.collapse_shape %concat [[0], [1], [2], [3, 4]] : tensor<1x8x4x4x2xf32> into tensor<1x8x4x8xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_14, %collapsed : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %14 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.addf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %concat_15 = tensor.concat dim(3) %15, %extracted_slice_9 : (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) -> tensor<1x8x4x16xf32>
    %16 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%concat_15 : tensor<1x8x4x16xf32>) outs(%16 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %extracted_slice_16 = tensor.extract_slice %1[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %extracted_slice_17 = tensor.extract_slice %1[0, 0, 0, 8] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_16, %collapsed_7 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %extracted_slice_18 = tensor.extract_slice %extracted_slice_16[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %extracted_slice_19 = tensor.extract_slice %extracted_slice_16[0, 0, 0, 1] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_19 : tensor<1x8x4x4xf32>) outs(%12 : tensor<1x8x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.negf %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x4xf32>
    %expanded_20 = tensor.expand_shape %18 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %expanded_21 = tensor.expand_shape %extracted_slice_18 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %concat_22 = tensor.concat dim(4) %expanded_20, %expanded_21 : (tensor<1x8x4x4x1xf32>, tensor<1x8x4x4x1xf32>) -> tensor<1x8x4x4x2xf32>
    %collapsed_23 = tensor.collapse_shape %concat_22 [[0], [1], [2], [3, 4]] : tensor<1x8x4x4x2xf32> into tensor<1x8x4x8xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_23, %collapsed : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %19 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.addf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %concat_24 = tensor.concat dim(3) %20, %extracted_slice_17 : (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) -> tensor<1x8x4x16xf32>
    %transposed_25 = linalg.transpose ins(%2 : tensor<1x8x4x16xf32>) outs(%16 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %21 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_26 = linalg.transpose ins(%concat_24 : tensor<1x8x4x16xf32>) outs(%21 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_27 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_28 = tensor.collapse_shape %transposed_26 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %22 = tensor.empty() : tensor<4x8x8xf32>
    %23 = linalg.fill ins(%cst_2 : f32) outs(%22 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %24 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%23 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_29 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %25 = tensor.empty() : tensor<1x4x8x8xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.divf %in, %cst_4 : f32
      linalg.yield %46 : f32
    } -> tensor<1x4x8x8xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%maskc, %26, %cst_0 : tensor<8x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: i1, %in_36: f32, %in_37: f32, %out: f32):
      %46 = arith.select %in, %in_36, %in_37 : f32
      linalg.yield %46 : f32
    } -> tensor<1x4x8x8xf32>
    %40 = linalg.softmax dimension(3) ins(%29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    %collapsed_31 = tensor.collapse_shape %40 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_32 = tensor.collapse_shape %transposed_25 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %41 = tensor.empty() : tensor<4x8x16xf32>
    %42 = linalg.fill ins(%cst_2 : f32) outs(%41 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %43 = linalg.batch_matmul ins(%collapsed_31, %collapsed_32 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%42 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_33 = tensor.expand_shape %43 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<1x4x8x16xf32>) outs(%9 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_35 = tensor.collapse_shape %transposed_34 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_35 : tensor<1x8x64xf32>
}

// -----

// Near miss: the same with the table's halves read the other way round
// (cos where GPT-J reads sin): x cos' + rot(x) sin' with cos' = sin is no
// rotation. The RoPE stays generic; the attention is still raised, and its
// mask, a causal i1 constant, becomes `causal` (Q and K are not rotations).

// CHECK-LABEL: func.func @gptj_sin_cos_swapped
//   CHECK-NOT: pe.rope
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} scale(2.500000e-01) causal
func.func @gptj_sin_cos_swapped(%0: tensor<1x8x4x16xf32>, %1: tensor<1x8x4x16xf32>, %2: tensor<1x8x4x16xf32>, %3: tensor<1x8xi64>) -> tensor<1x8x64xf32> {
        %maskc = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
    %c16_i64 = arith.constant 16 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %cst_1 = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [8.414709568e-01, 9.983342141e-02, 9.999833070e-03, 9.999999311e-04, 5.403023362e-01, 9.950041771e-01, 9.999499917e-01, 9.999995232e-01], [9.092974067e-01, 1.986693293e-01, 1.999866590e-02, 1.999998698e-03, -4.161468446e-01, 9.800665975e-01, 9.998000264e-01, 9.999980330e-01], [1.411200017e-01, 2.955202162e-01, 2.999549918e-02, 2.999995602e-03, -9.899924994e-01, 9.553365111e-01, 9.995500445e-01, 9.999955297e-01], [-7.568024993e-01, 3.894183636e-01, 3.998933360e-02, 3.999989480e-03, -6.536436081e-01, 9.210609794e-01, 9.992001057e-01, 9.999920130e-01], [-9.589242935e-01, 4.794255495e-01, 4.997916520e-02, 4.999979399e-03, 2.836622000e-01, 8.775825500e-01, 9.987502694e-01, 9.999874830e-01], [-2.794154882e-01, 5.646424890e-01, 5.996400490e-02, 5.999964196e-03, 9.601702690e-01, 8.253356218e-01, 9.982005358e-01, 9.999819994e-01], [6.569865942e-01, 6.442176700e-01, 6.994284689e-02, 6.999942940e-03, 7.539022565e-01, 7.648422122e-01, 9.975510240e-01, 9.999755025e-01], [9.893582463e-01, 7.173560858e-01, 7.991468906e-02, 7.999914698e-03, -1.455000341e-01, 6.967067122e-01, 9.968016744e-01, 9.999679923e-01], [4.121184945e-01, 7.833269238e-01, 8.987854421e-02, 8.999879472e-03, -9.111302495e-01, 6.216099262e-01, 9.959527254e-01, 9.999595284e-01], [-5.440211296e-01, 8.414709568e-01, 9.983341396e-02, 9.999834001e-03, -8.390715122e-01, 5.403023362e-01, 9.950041771e-01, 9.999499917e-01], [-9.999902248e-01, 8.912073970e-01, 1.097782999e-01, 1.099977922e-02, 4.425697960e-03, 4.535961151e-01, 9.939560890e-01, 9.999395013e-01], [-5.365729332e-01, 9.320390821e-01, 1.197122037e-01, 1.199971233e-02, 8.438539505e-01, 3.623577058e-01, 9.928086400e-01, 9.999279976e-01], [4.201670289e-01, 9.635581970e-01, 1.296341419e-01, 1.299963426e-02, 9.074468017e-01, 2.674987614e-01, 9.915618896e-01, 9.999154806e-01], [9.906073809e-01, 9.854497313e-01, 1.395431161e-01, 1.399954315e-02, 1.367372125e-01, 1.699671596e-01, 9.902160168e-01, 9.999020100e-01], [6.502878666e-01, 9.974949956e-01, 1.494381279e-01, 1.499943808e-02, -7.596879005e-01, 7.073719800e-02, 9.887710810e-01, 9.998875260e-01]]> : tensor<16x8xf32>
    %cst_2 = arith.constant 0.000000e+00 : f32
    %c0_i8 = arith.constant 0 : i8
    %cst_3 = arith.constant 0xFF800000 : f32
    %cst_4 = arith.constant 4.000000e+00 : f32
    %4 = tensor.empty() : tensor<1x8x8xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<1x8xi64>) outs(%4 : tensor<1x8x8xf32>) {
    ^bb0(%in: i64, %out: f32):
      %46 = arith.cmpi slt, %in, %c0_i64 : i64
      %47 = arith.addi %in, %c16_i64 : i64
      %48 = arith.select %46, %47, %in : i64
      %49 = arith.index_cast %in : i64 to index
      %50 = linalg.index 2 : index
      %extracted = tensor.extract %cst_1[%49, %50] : tensor<16x8xf32>
      linalg.yield %extracted : f32
    } -> tensor<1x8x8xf32>
    %extracted_slice = tensor.extract_slice %5[0, 0, 4] [1, 8, 4] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x8x4xf32>
    %extracted_slice_5 = tensor.extract_slice %5[0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x8x4xf32>
    %expanded = tensor.expand_shape %extracted_slice [[0], [1], [2, 3]] output_shape [1, 8, 1, 4] : tensor<1x8x4xf32> into tensor<1x8x1x4xf32>
    %6 = tensor.empty() : tensor<1x8x1x4x2xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x8x1x4xf32>) outs(%6 : tensor<1x8x1x4x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1x4x2xf32>
    %collapsed = tensor.collapse_shape %7 [[0], [1], [2], [3, 4]] : tensor<1x8x1x4x2xf32> into tensor<1x8x1x8xf32>
    %expanded_6 = tensor.expand_shape %extracted_slice_5 [[0], [1], [2, 3]] output_shape [1, 8, 1, 4] : tensor<1x8x4xf32> into tensor<1x8x1x4xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6 : tensor<1x8x1x4xf32>) outs(%6 : tensor<1x8x1x4x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x1x4x2xf32>
    %collapsed_7 = tensor.collapse_shape %8 [[0], [1], [2], [3, 4]] : tensor<1x8x1x4x2xf32> into tensor<1x8x1x8xf32>
    %9 = tensor.empty() : tensor<1x8x4x16xf32>
    %extracted_slice_8 = tensor.extract_slice %0[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %extracted_slice_9 = tensor.extract_slice %0[0, 0, 0, 8] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %10 = tensor.empty() : tensor<1x8x4x8xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_8, %collapsed_7 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %extracted_slice_10 = tensor.extract_slice %extracted_slice_8[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %extracted_slice_11 = tensor.extract_slice %extracted_slice_8[0, 0, 0, 1] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %12 = tensor.empty() : tensor<1x8x4x4xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_11 : tensor<1x8x4x4xf32>) outs(%12 : tensor<1x8x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.negf %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x4xf32>
    %expanded_12 = tensor.expand_shape %13 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %expanded_13 = tensor.expand_shape %extracted_slice_10 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %concat = tensor.concat dim(4) %expanded_12, %expanded_13 : (tensor<1x8x4x4x1xf32>, tensor<1x8x4x4x1xf32>) -> tensor<1x8x4x4x2xf32>
    %collapsed_14 = tensor.collapse_shape %concat [[0], [1], [2], [3, 4]] : tensor<1x8x4x4x2xf32> into tensor<1x8x4x8xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_14, %collapsed : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %14 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.addf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %concat_15 = tensor.concat dim(3) %15, %extracted_slice_9 : (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) -> tensor<1x8x4x16xf32>
    %16 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%concat_15 : tensor<1x8x4x16xf32>) outs(%16 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %extracted_slice_16 = tensor.extract_slice %1[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %extracted_slice_17 = tensor.extract_slice %1[0, 0, 0, 8] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<1x8x4x8xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_16, %collapsed_7 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %extracted_slice_18 = tensor.extract_slice %extracted_slice_16[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %extracted_slice_19 = tensor.extract_slice %extracted_slice_16[0, 0, 0, 1] [1, 8, 4, 4] [1, 1, 1, 2] : tensor<1x8x4x8xf32> to tensor<1x8x4x4xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_19 : tensor<1x8x4x4xf32>) outs(%12 : tensor<1x8x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.negf %in : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x4xf32>
    %expanded_20 = tensor.expand_shape %18 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %expanded_21 = tensor.expand_shape %extracted_slice_18 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 4, 1] : tensor<1x8x4x4xf32> into tensor<1x8x4x4x1xf32>
    %concat_22 = tensor.concat dim(4) %expanded_20, %expanded_21 : (tensor<1x8x4x4x1xf32>, tensor<1x8x4x4x1xf32>) -> tensor<1x8x4x4x2xf32>
    %collapsed_23 = tensor.collapse_shape %concat_22 [[0], [1], [2], [3, 4]] : tensor<1x8x4x4x2xf32> into tensor<1x8x4x8xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_23, %collapsed : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.mulf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %19 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%10 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_36: f32, %out: f32):
      %46 = arith.addf %in, %in_36 : f32
      linalg.yield %46 : f32
    } -> tensor<1x8x4x8xf32>
    %concat_24 = tensor.concat dim(3) %20, %extracted_slice_17 : (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) -> tensor<1x8x4x16xf32>
    %transposed_25 = linalg.transpose ins(%2 : tensor<1x8x4x16xf32>) outs(%16 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %21 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_26 = linalg.transpose ins(%concat_24 : tensor<1x8x4x16xf32>) outs(%21 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_27 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_28 = tensor.collapse_shape %transposed_26 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %22 = tensor.empty() : tensor<4x8x8xf32>
    %23 = linalg.fill ins(%cst_2 : f32) outs(%22 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %24 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%23 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_29 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %25 = tensor.empty() : tensor<1x4x8x8xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.divf %in, %cst_4 : f32
      linalg.yield %46 : f32
    } -> tensor<1x4x8x8xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%maskc, %26, %cst_0 : tensor<8x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: i1, %in_36: f32, %in_37: f32, %out: f32):
      %46 = arith.select %in, %in_36, %in_37 : f32
      linalg.yield %46 : f32
    } -> tensor<1x4x8x8xf32>
    %40 = linalg.softmax dimension(3) ins(%29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    %collapsed_31 = tensor.collapse_shape %40 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_32 = tensor.collapse_shape %transposed_25 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %41 = tensor.empty() : tensor<4x8x16xf32>
    %42 = linalg.fill ins(%cst_2 : f32) outs(%41 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %43 = linalg.batch_matmul ins(%collapsed_31, %collapsed_32 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%42 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_33 = tensor.expand_shape %43 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<1x4x8x16xf32>) outs(%9 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_35 = tensor.collapse_shape %transposed_34 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_35 : tensor<1x8x64xf32>
}

// -----

// BLOOM attention (as iree-turbine + iree-compile --compile-to=input emit a
// module written like BLOOM's): a fused QKV [1, 8, 4, 3, 16] (Q, K, V a
// slot of dim 3 each), K permuted (0, 2, 3, 1); ALiBi slopes 0.25^(h+1)
// computed through an iota and math.powf, key positions from an iota
// generic; an i1 mask from two iota tensors and select(keep, s, finfo.min).

// CHECK-LABEL: func.func @bloom_attention
//       CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x16xf32>
//       CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 1, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x16xf32>
//       CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 2, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x16xf32>
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} scale(2.500000e-01) causal alibi(8.000000e+00)
func.func @bloom_attention(%0: tensor<1x8x192xf32>) -> tensor<1x8x64xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant dense<2.500000e-01> : tensor<f32>
    %cst_0 = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %cst_1 = arith.constant 0.000000e+00 : f32
    %cst_2 = arith.constant 0xFF800000 : f32
    %cst_3 = arith.constant 1.000000e+00 : f32
    %cst_4 = arith.constant 2.500000e-01 : f32
    %expanded = tensor.expand_shape %0 [[0], [1], [2, 3, 4]] output_shape [1, 8, 4, 3, 16] : tensor<1x8x192xf32> into tensor<1x8x4x3x16xf32>
    %extracted_slice = tensor.extract_slice %expanded[0, 0, 0, 0, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x1x16xf32>
    %collapsed = tensor.collapse_shape %extracted_slice [[0], [1], [2, 3], [4]] : tensor<1x8x4x1x16xf32> into tensor<1x8x4x16xf32>
    %1 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%collapsed : tensor<1x8x4x16xf32>) outs(%1 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %extracted_slice_5 = tensor.extract_slice %expanded[0, 0, 0, 1, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x1x16xf32>
    %collapsed_6 = tensor.collapse_shape %extracted_slice_5 [[0], [1], [2, 3], [4]] : tensor<1x8x4x1x16xf32> into tensor<1x8x4x16xf32>
    %2 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_7 = linalg.transpose ins(%collapsed_6 : tensor<1x8x4x16xf32>) outs(%2 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %extracted_slice_8 = tensor.extract_slice %expanded[0, 0, 0, 2, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x1x16xf32>
    %collapsed_9 = tensor.collapse_shape %extracted_slice_8 [[0], [1], [2, 3], [4]] : tensor<1x8x4x1x16xf32> into tensor<1x8x4x16xf32>
    %transposed_10 = linalg.transpose ins(%collapsed_9 : tensor<1x8x4x16xf32>) outs(%1 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %3 = tensor.empty() : tensor<4xf32>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%3 : tensor<4xf32>) {
    ^bb0(%out: f32):
      %38 = linalg.index 0 : index
      %39 = arith.index_cast %38 : index to i64
      %40 = arith.sitofp %39 : i64 to f32
      %41 = arith.addf %40, %cst_3 : f32
      linalg.yield %41 : f32
    } -> tensor<4xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cst, %4 : tensor<f32>, tensor<4xf32>) outs(%3 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %38 = math.powf %in, %in_25 : f32
      linalg.yield %38 : f32
    } -> tensor<4xf32>
    %6 = tensor.empty() : tensor<8xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%6 : tensor<8xf32>) {
    ^bb0(%out: f32):
      %38 = linalg.index 0 : index
      %39 = arith.index_cast %38 : index to i64
      %40 = arith.sitofp %39 : i64 to f32
      %41 = arith.addf %40, %cst_1 : f32
      linalg.yield %41 : f32
    } -> tensor<8xf32>
    %expanded_11 = tensor.expand_shape %5 [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
    %expanded_12 = tensor.expand_shape %7 [[0, 1, 2]] output_shape [1, 1, 8] : tensor<8xf32> into tensor<1x1x8xf32>
    %8 = tensor.empty() : tensor<4x1x8xf32>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_11, %expanded_12 : tensor<4x1x1xf32>, tensor<1x1x8xf32>) outs(%8 : tensor<4x1x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %38 = arith.mulf %in, %in_25 : f32
      linalg.yield %38 : f32
    } -> tensor<4x1x8xf32>
    %expanded_13 = tensor.expand_shape %9 [[0, 1], [2], [3]] output_shape [1, 4, 1, 8] : tensor<4x1x8xf32> into tensor<1x4x1x8xf32>
    %collapsed_14 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_15 = tensor.collapse_shape %transposed_7 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %10 = tensor.empty() : tensor<4x8x8xf32>
    %11 = linalg.fill ins(%cst_1 : f32) outs(%10 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %12 = linalg.batch_matmul ins(%collapsed_14, %collapsed_15 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%11 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_16 = tensor.expand_shape %12 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %13 = tensor.empty() : tensor<1x4x8x8xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_16 : tensor<1x4x8x8xf32>) outs(%13 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.mulf %in, %cst_4 : f32
      linalg.yield %38 : f32
    } -> tensor<1x4x8x8xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_13, %14 : tensor<1x4x1x8xf32>, tensor<1x4x8x8xf32>) outs(%13 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %38 = arith.addf %in, %in_25 : f32
      linalg.yield %38 : f32
    } -> tensor<1x4x8x8xf32>
    %16 = tensor.empty() : tensor<8xi64>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%16 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %38 = linalg.index 0 : index
      %39 = arith.index_cast %38 : index to i64
      linalg.yield %39 : i64
    } -> tensor<8xi64>
    %expanded_17 = tensor.expand_shape %17 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %expanded_18 = tensor.expand_shape %17 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %18 = tensor.empty() : tensor<8x8xi1>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_17, %expanded_18 : tensor<8x1xi64>, tensor<1x8xi64>) outs(%18 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %in_25: i64, %out: i1):
      %38 = arith.cmpi sge, %in, %in_25 : i64
      linalg.yield %38 : i1
    } -> tensor<8x8xi1>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19, %15, %cst_0 : tensor<8x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) outs(%13 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: i1, %in_25: f32, %in_26: f32, %out: f32):
      %38 = arith.select %in, %in_25, %in_26 : f32
      linalg.yield %38 : f32
    } -> tensor<1x4x8x8xf32>
    %21 = tensor.empty() : tensor<1x4x8xi64>
    %22 = linalg.fill ins(%c0_i64 : i64) outs(%21 : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
    %23 = tensor.empty() : tensor<1x4x8xf32>
    %24 = linalg.fill ins(%cst_2 : f32) outs(%23 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %25:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x4x8x8xf32>) outs(%24, %22 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_25: i64):
      %38 = linalg.index 3 : index
      %39 = arith.index_cast %38 : index to i64
      %40 = arith.maximumf %in, %out : f32
      %41 = arith.cmpf ogt, %in, %out : f32
      %42 = arith.select %41, %39, %out_25 : i64
      linalg.yield %40, %42 : f32, i64
    } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
    %expanded_19 = tensor.expand_shape %25#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %expanded_19 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%13 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %38 = arith.subf %in, %in_25 : f32
      linalg.yield %38 : f32
    } -> tensor<1x4x8x8xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26 : tensor<1x4x8x8xf32>) outs(%13 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = math.exp %in : f32
      linalg.yield %38 : f32
    } -> tensor<1x4x8x8xf32>
    %28 = tensor.empty() : tensor<1x4x8x1xf32>
    %29 = linalg.fill ins(%cst_1 : f32) outs(%28 : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
    %30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%27 : tensor<1x4x8x8xf32>) outs(%29 : tensor<1x4x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %38 = arith.addf %in, %out : f32
      linalg.yield %38 : f32
    } -> tensor<1x4x8x1xf32>
    %31 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %30 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%13 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %38 = arith.divf %in, %in_25 : f32
      linalg.yield %38 : f32
    } -> tensor<1x4x8x8xf32>
    %collapsed_20 = tensor.collapse_shape %31 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_21 = tensor.collapse_shape %transposed_10 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %32 = tensor.empty() : tensor<4x8x16xf32>
    %33 = linalg.fill ins(%cst_1 : f32) outs(%32 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %34 = linalg.batch_matmul ins(%collapsed_20, %collapsed_21 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%33 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_22 = tensor.expand_shape %34 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %35 = tensor.empty() : tensor<1x8x4x16xf32>
    %transposed_23 = linalg.transpose ins(%expanded_22 : tensor<1x4x8x16xf32>) outs(%35 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_24 = tensor.collapse_shape %transposed_23 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_24 : tensor<1x8x64xf32>
}

// -----

// Near miss: slopes 0.25^(h+1) + 0.01, not the slopes of any max_bias.

// CHECK-REMARK: remark: not raised as pe.attention: a bias term is neither a mask
// CHECK-LABEL: func.func @bloom_slopes_not_alibi
//   CHECK-NOT: pe.attention
func.func @bloom_slopes_not_alibi(%0: tensor<1x8x192xf32>) -> tensor<1x8x64xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant dense<2.500000e-01> : tensor<f32>
    %cst_0 = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %cst_1 = arith.constant 0.000000e+00 : f32
    %cst_2 = arith.constant 0xFF800000 : f32
    %cst_3 = arith.constant 0.00999999977 : f32
    %cst_4 = arith.constant 1.000000e+00 : f32
    %cst_5 = arith.constant 2.500000e-01 : f32
    %expanded = tensor.expand_shape %0 [[0], [1], [2, 3, 4]] output_shape [1, 8, 4, 3, 16] : tensor<1x8x192xf32> into tensor<1x8x4x3x16xf32>
    %extracted_slice = tensor.extract_slice %expanded[0, 0, 0, 0, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x1x16xf32>
    %collapsed = tensor.collapse_shape %extracted_slice [[0], [1], [2, 3], [4]] : tensor<1x8x4x1x16xf32> into tensor<1x8x4x16xf32>
    %1 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%collapsed : tensor<1x8x4x16xf32>) outs(%1 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %extracted_slice_6 = tensor.extract_slice %expanded[0, 0, 0, 1, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x1x16xf32>
    %collapsed_7 = tensor.collapse_shape %extracted_slice_6 [[0], [1], [2, 3], [4]] : tensor<1x8x4x1x16xf32> into tensor<1x8x4x16xf32>
    %2 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_8 = linalg.transpose ins(%collapsed_7 : tensor<1x8x4x16xf32>) outs(%2 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %extracted_slice_9 = tensor.extract_slice %expanded[0, 0, 0, 2, 0] [1, 8, 4, 1, 16] [1, 1, 1, 1, 1] : tensor<1x8x4x3x16xf32> to tensor<1x8x4x1x16xf32>
    %collapsed_10 = tensor.collapse_shape %extracted_slice_9 [[0], [1], [2, 3], [4]] : tensor<1x8x4x1x16xf32> into tensor<1x8x4x16xf32>
    %transposed_11 = linalg.transpose ins(%collapsed_10 : tensor<1x8x4x16xf32>) outs(%1 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %3 = tensor.empty() : tensor<4xf32>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%3 : tensor<4xf32>) {
    ^bb0(%out: f32):
      %39 = linalg.index 0 : index
      %40 = arith.index_cast %39 : index to i64
      %41 = arith.sitofp %40 : i64 to f32
      %42 = arith.addf %41, %cst_4 : f32
      linalg.yield %42 : f32
    } -> tensor<4xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cst, %4 : tensor<f32>, tensor<4xf32>) outs(%3 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_26: f32, %out: f32):
      %39 = math.powf %in, %in_26 : f32
      linalg.yield %39 : f32
    } -> tensor<4xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%5 : tensor<4xf32>) outs(%3 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %39 = arith.addf %in, %cst_3 : f32
      linalg.yield %39 : f32
    } -> tensor<4xf32>
    %7 = tensor.empty() : tensor<8xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%7 : tensor<8xf32>) {
    ^bb0(%out: f32):
      %39 = linalg.index 0 : index
      %40 = arith.index_cast %39 : index to i64
      %41 = arith.sitofp %40 : i64 to f32
      %42 = arith.addf %41, %cst_1 : f32
      linalg.yield %42 : f32
    } -> tensor<8xf32>
    %expanded_12 = tensor.expand_shape %6 [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
    %expanded_13 = tensor.expand_shape %8 [[0, 1, 2]] output_shape [1, 1, 8] : tensor<8xf32> into tensor<1x1x8xf32>
    %9 = tensor.empty() : tensor<4x1x8xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_12, %expanded_13 : tensor<4x1x1xf32>, tensor<1x1x8xf32>) outs(%9 : tensor<4x1x8xf32>) {
    ^bb0(%in: f32, %in_26: f32, %out: f32):
      %39 = arith.mulf %in, %in_26 : f32
      linalg.yield %39 : f32
    } -> tensor<4x1x8xf32>
    %expanded_14 = tensor.expand_shape %10 [[0, 1], [2], [3]] output_shape [1, 4, 1, 8] : tensor<4x1x8xf32> into tensor<1x4x1x8xf32>
    %collapsed_15 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_16 = tensor.collapse_shape %transposed_8 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %11 = tensor.empty() : tensor<4x8x8xf32>
    %12 = linalg.fill ins(%cst_1 : f32) outs(%11 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %13 = linalg.batch_matmul ins(%collapsed_15, %collapsed_16 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%12 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_17 = tensor.expand_shape %13 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %14 = tensor.empty() : tensor<1x4x8x8xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_17 : tensor<1x4x8x8xf32>) outs(%14 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %39 = arith.mulf %in, %cst_5 : f32
      linalg.yield %39 : f32
    } -> tensor<1x4x8x8xf32>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_14, %15 : tensor<1x4x1x8xf32>, tensor<1x4x8x8xf32>) outs(%14 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_26: f32, %out: f32):
      %39 = arith.addf %in, %in_26 : f32
      linalg.yield %39 : f32
    } -> tensor<1x4x8x8xf32>
    %17 = tensor.empty() : tensor<8xi64>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%17 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %39 = linalg.index 0 : index
      %40 = arith.index_cast %39 : index to i64
      linalg.yield %40 : i64
    } -> tensor<8xi64>
    %expanded_18 = tensor.expand_shape %18 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %expanded_19 = tensor.expand_shape %18 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %19 = tensor.empty() : tensor<8x8xi1>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_18, %expanded_19 : tensor<8x1xi64>, tensor<1x8xi64>) outs(%19 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %in_26: i64, %out: i1):
      %39 = arith.cmpi sge, %in, %in_26 : i64
      linalg.yield %39 : i1
    } -> tensor<8x8xi1>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %16, %cst_0 : tensor<8x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) outs(%14 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: i1, %in_26: f32, %in_27: f32, %out: f32):
      %39 = arith.select %in, %in_26, %in_27 : f32
      linalg.yield %39 : f32
    } -> tensor<1x4x8x8xf32>
    %22 = tensor.empty() : tensor<1x4x8xi64>
    %23 = linalg.fill ins(%c0_i64 : i64) outs(%22 : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
    %24 = tensor.empty() : tensor<1x4x8xf32>
    %25 = linalg.fill ins(%cst_2 : f32) outs(%24 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %26:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%21 : tensor<1x4x8x8xf32>) outs(%25, %23 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_26: i64):
      %39 = linalg.index 3 : index
      %40 = arith.index_cast %39 : index to i64
      %41 = arith.maximumf %in, %out : f32
      %42 = arith.cmpf ogt, %in, %out : f32
      %43 = arith.select %42, %40, %out_26 : i64
      linalg.yield %41, %43 : f32, i64
    } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
    %expanded_20 = tensor.expand_shape %26#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %expanded_20 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%14 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_26: f32, %out: f32):
      %39 = arith.subf %in, %in_26 : f32
      linalg.yield %39 : f32
    } -> tensor<1x4x8x8xf32>
    %28 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27 : tensor<1x4x8x8xf32>) outs(%14 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %39 = math.exp %in : f32
      linalg.yield %39 : f32
    } -> tensor<1x4x8x8xf32>
    %29 = tensor.empty() : tensor<1x4x8x1xf32>
    %30 = linalg.fill ins(%cst_1 : f32) outs(%29 : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
    %31 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%28 : tensor<1x4x8x8xf32>) outs(%30 : tensor<1x4x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %39 = arith.addf %in, %out : f32
      linalg.yield %39 : f32
    } -> tensor<1x4x8x1xf32>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%28, %31 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%14 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_26: f32, %out: f32):
      %39 = arith.divf %in, %in_26 : f32
      linalg.yield %39 : f32
    } -> tensor<1x4x8x8xf32>
    %collapsed_21 = tensor.collapse_shape %32 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_22 = tensor.collapse_shape %transposed_11 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %33 = tensor.empty() : tensor<4x8x16xf32>
    %34 = linalg.fill ins(%cst_1 : f32) outs(%33 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %35 = linalg.batch_matmul ins(%collapsed_21, %collapsed_22 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%34 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_23 = tensor.expand_shape %35 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %36 = tensor.empty() : tensor<1x8x4x16xf32>
    %transposed_24 = linalg.transpose ins(%expanded_23 : tensor<1x4x8x16xf32>) outs(%36 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_25 = tensor.collapse_shape %transposed_24 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_25 : tensor<1x8x64xf32>
}

// -----

// Meta's LLaMA attention, its rotary embedding in complex form: x as
// [..., 8, 2] pairs, real and imaginary parts, re c - im s and re s + im c,
// stacked and flattened; the cos and sin tables constants sliced at
// start_pos 2; repeat_kv through expand + reshape (GQA 4/2); triu(-inf, 1)
// added. Both are raised: the rotation reads table rows from 2 on, so its
// positions are 2..9 (the pairs (2i, 2i+1): interleaved); the attention
// reads the rotated Q and K, and its causal mask, computed from indices,
// stays a mask operand (`causal` would compare the rotations' positions).

// CHECK-LABEL: func.func @meta_llama_attention
//  CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x4x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x8x2x16xf32>
//       CHECK: %[[POS:.*]] = arith.constant dense<[2, 3, 4, 5, 6, 7, 8, 9]> : tensor<8xi64>
//       CHECK: pe.rope #pe.rope<rotary_dim = 16, style = interleaved> %[[Q]], %[[POS]] layout(bshd)
//       CHECK: pe.rope #pe.rope<rotary_dim = 16, style = interleaved> %[[K]], %{{.*}} layout(bshd)
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x1x8x8xf32>) scale(2.500000e-01) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
func.func @meta_llama_attention(%0: tensor<1x8x4x16xf32>, %1: tensor<1x8x2x16xf32>, %2: tensor<1x8x2x16xf32>) -> tensor<1x8x64xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00], [8.414709568e-01, 3.109835982e-01, 9.983342141e-02, 3.161750734e-02, 9.999833070e-03, 3.162272507e-03, 9.999999311e-04, 3.162277862e-04], [9.092974067e-01, 5.911270976e-01, 1.986693293e-01, 6.320340186e-02, 1.999866590e-02, 6.324513350e-03, 1.999998698e-03, 6.324555143e-04], [1.411200017e-01, 8.126488924e-01, 2.955202162e-01, 9.472609311e-02, 2.999549918e-02, 9.486691095e-03, 2.999995602e-03, 9.486832423e-04], [-7.568024993e-01, 9.535807371e-01, 3.894183636e-01, 1.261540800e-01, 3.998933360e-02, 1.264877431e-02, 3.999989480e-03, 1.264910796e-03], [-9.589242935e-01, 9.999465346e-01, 4.794255495e-01, 1.574559063e-01, 4.997916520e-02, 1.581072994e-02, 4.999979399e-03, 1.581138233e-03], [-2.794154882e-01, 9.471482038e-01, 5.646424890e-01, 1.886002868e-01, 5.996400490e-02, 1.897252910e-02, 5.999964196e-03, 1.897365553e-03], [6.569865942e-01, 8.004215956e-01, 6.442176700e-01, 2.195561081e-01, 6.994284689e-02, 2.213413641e-02, 6.999942940e-03, 2.213592641e-03], [9.893582463e-01, 5.743178129e-01, 7.173560858e-01, 2.502923608e-01, 7.991468906e-02, 2.529552393e-02, 7.999914698e-03, 2.529819496e-03], [4.121184945e-01, 2.912592292e-01, 7.833269238e-01, 2.807783484e-01, 8.987854421e-02, 2.845665812e-02, 8.999879472e-03, 2.846046118e-03], [-5.440211296e-01, -2.068356983e-02, 8.414709568e-01, 3.109836280e-01, 9.983341396e-02, 3.161750734e-02, 9.999834001e-03, 3.162272507e-03], [-9.999902248e-01, -3.305749595e-01, 8.912073970e-01, 3.408778906e-01, 1.097782999e-01, 3.477803990e-02, 1.099977922e-02, 3.478498664e-03], [-5.365729332e-01, -6.076834202e-01, 9.320390821e-01, 3.704313338e-01, 1.197122037e-01, 3.793822601e-02, 1.199971233e-02, 3.794724355e-03], [4.201670289e-01, -8.245284557e-01, 9.635581970e-01, 3.996143639e-01, 1.296341419e-01, 4.109803587e-02, 1.299963426e-02, 4.110949580e-03], [9.906073809e-01, -9.596053958e-01, 9.854497313e-01, 4.283978045e-01, 1.395431161e-01, 4.425742850e-02, 1.399954315e-02, 4.427174572e-03], [6.502878666e-01, -9.995186925e-01, 9.974949956e-01, 4.567529261e-01, 1.494381279e-01, 4.741638154e-02, 1.499943808e-02, 4.743399099e-03], [-2.879033089e-01, -9.403103590e-01, 9.995735884e-01, 4.846512973e-01, 1.593182087e-01, 5.057486147e-02, 1.599931903e-02, 5.059623159e-03], [-9.613974690e-01, -7.878518701e-01, 9.916648269e-01, 5.120650530e-01, 1.691823453e-01, 5.373283476e-02, 1.699918136e-02, 5.375846289e-03], [-7.509872317e-01, -5.572628975e-01, 9.738476276e-01, 5.389667749e-01, 1.790295690e-01, 5.689026788e-02, 1.799902879e-02, 5.692069419e-03], [1.498772055e-01, -2.714101076e-01, 9.463000894e-01, 5.653296113e-01, 1.888588965e-01, 6.004713476e-02, 1.899885759e-02, 6.008291617e-03], [9.129452705e-01, 4.135828838e-02, 9.092974067e-01, 5.911271572e-01, 1.986693144e-01, 6.320340186e-02, 1.999866776e-02, 6.324513350e-03], [8.366556168e-01, 3.500247598e-01, 8.632093072e-01, 6.163336039e-01, 2.084598988e-01, 6.635903567e-02, 2.099845745e-02, 6.640734617e-03], [-8.851309307e-03, 6.239799261e-01, 8.084963560e-01, 6.409237981e-01, 2.182296216e-01, 6.951400638e-02, 2.199822664e-02, 6.956954952e-03], [-8.462203741e-01, 8.360552192e-01, 7.457052469e-01, 6.648730636e-01, 2.279775143e-01, 7.266827673e-02, 2.299797349e-02, 7.273174822e-03], [-9.055783749e-01, 9.652192593e-01, 6.754630804e-01, 6.881575584e-01, 2.377026230e-01, 7.582183182e-02, 2.399769612e-02, 7.589394227e-03], [-1.323517561e-01, 9.986631870e-01, 5.984721184e-01, 7.107539773e-01, 2.474039644e-01, 7.897461951e-02, 2.499739639e-02, 7.905612700e-03], [7.625584602e-01, 9.330701828e-01, 5.155012608e-01, 7.326396704e-01, 2.570805550e-01, 8.212662488e-02, 2.599707060e-02, 8.221830241e-03], [9.563759565e-01, 7.749450207e-01, 4.273798466e-01, 7.537927628e-01, 2.667314112e-01, 8.527780324e-02, 2.699672058e-02, 8.538046852e-03], [2.709057927e-01, 5.399689674e-01, 3.349882066e-01, 7.741921544e-01, 2.763556540e-01, 8.842812479e-02, 2.799634263e-02, 8.854262531e-03], [-6.636338830e-01, 2.514453232e-01, 2.392492443e-01, 7.938174009e-01, 2.859522104e-01, 9.157757461e-02, 2.899593674e-02, 9.170477279e-03], [-9.880316257e-01, -6.201484054e-02, 1.411200017e-01, 8.126489520e-01, 2.955201864e-01, 9.472609311e-02, 2.999550104e-02, 9.486691095e-03], [-4.040376544e-01, -3.693250120e-01, 4.158052057e-02, 8.306678534e-01, 3.050586283e-01, 9.787367284e-02, 3.099503554e-02, 9.802903980e-03]]> : tensor<32x8xf32>
    %cst_1 = arith.constant dense<[[1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [5.403023362e-01, 9.504153132e-01, 9.950041771e-01, 9.995000362e-01, 9.999499917e-01, 9.999949932e-01, 9.999995232e-01, 9.999999404e-01], [-4.161468446e-01, 8.065783978e-01, 9.800665975e-01, 9.980006814e-01, 9.998000264e-01, 9.999800324e-01, 9.999980330e-01, 9.999998212e-01], [-9.899924994e-01, 5.827536583e-01, 9.553365111e-01, 9.955033660e-01, 9.995500445e-01, 9.999549985e-01, 9.999955297e-01, 9.999995828e-01], [-6.536436081e-01, 3.011374772e-01, 9.210609794e-01, 9.920106530e-01, 9.992001057e-01, 9.999200106e-01, 9.999920130e-01, 9.999992251e-01], [2.836622000e-01, -1.034233812e-02, 8.775825500e-01, 9.875259995e-01, 9.987502694e-01, 9.998750091e-01, 9.999874830e-01, 9.999987483e-01], [9.601702690e-01, -3.207964003e-01, 8.253356218e-01, 9.820539355e-01, 9.982005358e-01, 9.998199940e-01, 9.999819994e-01, 9.999982119e-01], [7.539022565e-01, -5.994374752e-01, 7.648422122e-01, 9.755998850e-01, 9.975510240e-01, 9.997550249e-01, 9.999755025e-01, 9.999975562e-01], [-1.455000341e-01, -8.186324239e-01, 6.967067122e-01, 9.681702852e-01, 9.968016744e-01, 9.996800423e-01, 9.999679923e-01, 9.999967813e-01], [-9.111302495e-01, -9.566441774e-01, 6.216099262e-01, 9.597726464e-01, 9.959527254e-01, 9.995950460e-01, 9.999595284e-01, 9.999959469e-01], [-8.390715122e-01, -9.997860789e-01, 5.403023362e-01, 9.504152536e-01, 9.950041771e-01, 9.995000362e-01, 9.999499917e-01, 9.999949932e-01], [4.425697960e-03, -9.437797666e-01, 4.535961151e-01, 9.401075840e-01, 9.939560890e-01, 9.993950725e-01, 9.999395013e-01, 9.999939799e-01], [8.438539505e-01, -7.941793203e-01, 3.623577058e-01, 9.288598895e-01, 9.928086400e-01, 9.992800951e-01, 9.999279976e-01, 9.999927878e-01], [9.074468017e-01, -5.658205152e-01, 2.674987614e-01, 9.166833758e-01, 9.915618896e-01, 9.991551042e-01, 9.999154806e-01, 9.999915361e-01], [1.367372125e-01, -2.813494802e-01, 1.699671596e-01, 9.035902619e-01, 9.902160168e-01, 9.990201592e-01, 9.999020100e-01, 9.999902248e-01], [-7.596879005e-01, 3.102235124e-02, 7.073719800e-02, 8.895936012e-01, 9.887710810e-01, 9.988752007e-01, 9.998875260e-01, 9.999887347e-01], [-9.576594830e-01, 3.403181732e-01, -2.919954620e-02, 8.747074604e-01, 9.872272611e-01, 9.987202883e-01, 9.998720288e-01, 9.999871850e-01], [-2.751633525e-01, 6.158648133e-01, -1.288445443e-01, 8.589466810e-01, 9.855847955e-01, 9.985553622e-01, 9.998555183e-01, 9.999855757e-01], [6.603167057e-01, 8.303360939e-01, -2.272021621e-01, 8.423269987e-01, 9.838436842e-01, 9.983804226e-01, 9.998379946e-01, 9.999837875e-01], [9.887046218e-01, 9.624637961e-01, -3.232895434e-01, 8.248651028e-01, 9.820042253e-01, 9.981955290e-01, 9.998195171e-01, 9.999819398e-01], [4.080820680e-01, 9.991443753e-01, -4.161468446e-01, 8.065783978e-01, 9.800665975e-01, 9.980006814e-01, 9.998000264e-01, 9.999800324e-01], [-5.477292538e-01, 9.367404580e-01, -5.048462152e-01, 7.874851823e-01, 9.780309200e-01, 9.977958202e-01, 9.997795224e-01, 9.999779463e-01], [-9.999608397e-01, 7.814403772e-01, -5.885011554e-01, 7.676045299e-01, 9.758974314e-01, 9.975809455e-01, 9.997580051e-01, 9.999758005e-01], [-5.328330398e-01, 5.486452579e-01, -6.662759781e-01, 7.469563484e-01, 9.736664295e-01, 9.973561764e-01, 9.997355342e-01, 9.999735355e-01], [4.241790175e-01, 2.614416778e-01, -7.373937964e-01, 7.255612612e-01, 9.713379741e-01, 9.971213937e-01, 9.997119904e-01, 9.999712110e-01], [9.912028313e-01, -5.168933049e-02, -8.011435866e-01, 7.034406662e-01, 9.689124227e-01, 9.968765974e-01, 9.996874928e-01, 9.999687672e-01], [6.469193101e-01, -3.596943319e-01, -8.568888307e-01, 6.806167364e-01, 9.663900137e-01, 9.966219068e-01, 9.996620417e-01, 9.999662042e-01], [-2.921388149e-01, -6.320286393e-01, -9.040721655e-01, 6.571121812e-01, 9.637709260e-01, 9.963572025e-01, 9.996355176e-01, 9.999635816e-01], [-9.626058936e-01, -8.416849375e-01, -9.422223568e-01, 6.329506040e-01, 9.610554576e-01, 9.960825443e-01, 9.996080399e-01, 9.999607801e-01], [-7.480575442e-01, -9.678714871e-01, -9.709581733e-01, 6.081561446e-01, 9.582439065e-01, 9.957979321e-01, 9.995795488e-01, 9.999579787e-01], [1.542514563e-01, -9.980752468e-01, -9.899924994e-01, 5.827535391e-01, 9.553365111e-01, 9.955033660e-01, 9.995500445e-01, 9.999549985e-01], [9.147423506e-01, -9.293003082e-01, -9.991351366e-01, 5.567682385e-01, 9.523335695e-01, 9.951988459e-01, 9.995195270e-01, 9.999519587e-01]]> : tensor<32x8xf32>
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %cst_2 = arith.constant 0.000000e+00 : f32
    %cst_3 = arith.constant 0xFF800000 : f32
    %cst_4 = arith.constant 4.000000e+00 : f32
    %extracted_slice = tensor.extract_slice %cst_1[2, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
    %expanded = tensor.expand_shape %extracted_slice [[0, 1], [2, 3]] output_shape [1, 8, 1, 8] : tensor<8x8xf32> into tensor<1x8x1x8xf32>
    %extracted_slice_5 = tensor.extract_slice %cst_0[2, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
    %expanded_6 = tensor.expand_shape %extracted_slice_5 [[0, 1], [2, 3]] output_shape [1, 8, 1, 8] : tensor<8x8xf32> into tensor<1x8x1x8xf32>
    %expanded_7 = tensor.expand_shape %0 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 2] : tensor<1x8x4x16xf32> into tensor<1x8x4x8x2xf32>
    %extracted_slice_8 = tensor.extract_slice %expanded_7[0, 0, 0, 0, 0] [1, 8, 4, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x4x8x2xf32> to tensor<1x8x4x8x1xf32>
    %collapsed = tensor.collapse_shape %extracted_slice_8 [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x1xf32> into tensor<1x8x4x8xf32>
    %extracted_slice_9 = tensor.extract_slice %expanded_7[0, 0, 0, 0, 1] [1, 8, 4, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x4x8x2xf32> to tensor<1x8x4x8x1xf32>
    %collapsed_10 = tensor.collapse_shape %extracted_slice_9 [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x1xf32> into tensor<1x8x4x8xf32>
    %3 = tensor.empty() : tensor<1x8x4x8xf32>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %expanded : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_10, %expanded_6 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4, %5 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.subf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %expanded_6 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_10, %expanded : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %8 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.addf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %expanded_11 = tensor.expand_shape %6 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 1] : tensor<1x8x4x8xf32> into tensor<1x8x4x8x1xf32>
    %expanded_12 = tensor.expand_shape %9 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 1] : tensor<1x8x4x8xf32> into tensor<1x8x4x8x1xf32>
    %concat = tensor.concat dim(4) %expanded_11, %expanded_12 : (tensor<1x8x4x8x1xf32>, tensor<1x8x4x8x1xf32>) -> tensor<1x8x4x8x2xf32>
    %collapsed_13 = tensor.collapse_shape %concat [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x2xf32> into tensor<1x8x4x16xf32>
    %expanded_14 = tensor.expand_shape %1 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 2] : tensor<1x8x2x16xf32> into tensor<1x8x2x8x2xf32>
    %extracted_slice_15 = tensor.extract_slice %expanded_14[0, 0, 0, 0, 0] [1, 8, 2, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x2x8x2xf32> to tensor<1x8x2x8x1xf32>
    %collapsed_16 = tensor.collapse_shape %extracted_slice_15 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x1xf32> into tensor<1x8x2x8xf32>
    %extracted_slice_17 = tensor.extract_slice %expanded_14[0, 0, 0, 0, 1] [1, 8, 2, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x2x8x2xf32> to tensor<1x8x2x8x1xf32>
    %collapsed_18 = tensor.collapse_shape %extracted_slice_17 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x1xf32> into tensor<1x8x2x8xf32>
    %10 = tensor.empty() : tensor<1x8x2x8xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_16, %expanded : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_18, %expanded_6 : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %12 : tensor<1x8x2x8xf32>, tensor<1x8x2x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.subf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_16, %expanded_6 : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_18, %expanded : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %15 : tensor<1x8x2x8xf32>, tensor<1x8x2x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.addf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %expanded_19 = tensor.expand_shape %13 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 1] : tensor<1x8x2x8xf32> into tensor<1x8x2x8x1xf32>
    %expanded_20 = tensor.expand_shape %16 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 1] : tensor<1x8x2x8xf32> into tensor<1x8x2x8x1xf32>
    %concat_21 = tensor.concat dim(4) %expanded_19, %expanded_20 : (tensor<1x8x2x8x1xf32>, tensor<1x8x2x8x1xf32>) -> tensor<1x8x2x8x2xf32>
    %collapsed_22 = tensor.collapse_shape %concat_21 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x2xf32> into tensor<1x8x2x16xf32>
    %17 = tensor.empty() : tensor<1x8x2x2x16xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_22 : tensor<1x8x2x16xf32>) outs(%17 : tensor<1x8x2x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x2x2x16xf32>
    %collapsed_23 = tensor.collapse_shape %18 [[0], [1], [2, 3], [4]] : tensor<1x8x2x2x16xf32> into tensor<1x8x4x16xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x8x2x16xf32>) outs(%17 : tensor<1x8x2x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x2x2x16xf32>
    %collapsed_24 = tensor.collapse_shape %19 [[0], [1], [2, 3], [4]] : tensor<1x8x2x2x16xf32> into tensor<1x8x4x16xf32>
    %20 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%collapsed_13 : tensor<1x8x4x16xf32>) outs(%20 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %transposed_25 = linalg.transpose ins(%collapsed_24 : tensor<1x8x4x16xf32>) outs(%20 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %21 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_26 = linalg.transpose ins(%collapsed_23 : tensor<1x8x4x16xf32>) outs(%21 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_27 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_28 = tensor.collapse_shape %transposed_26 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %22 = tensor.empty() : tensor<4x8x8xf32>
    %23 = linalg.fill ins(%cst_2 : f32) outs(%22 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %24 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%23 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_29 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %25 = tensor.empty() : tensor<1x4x8x8xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.divf %in, %cst_4 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %27 = tensor.empty() : tensor<8x8xf32>
    %28 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<8x8xf32>) outs(%27 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %cst_3 : f32
    } -> tensor<8x8xf32>
    %29 = tensor.empty() : tensor<8xi64>
    %30 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%29 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %54 = linalg.index 0 : index
      %55 = arith.index_cast %54 : index to i64
      linalg.yield %55 : i64
    } -> tensor<8xi64>
    %expanded_30 = tensor.expand_shape %30 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %expanded_31 = tensor.expand_shape %30 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %31 = tensor.empty() : tensor<8x1xi64>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_30 : tensor<8x1xi64>) outs(%31 : tensor<8x1xi64>) {
    ^bb0(%in: i64, %out: i64):
      %54 = arith.addi %in, %c1_i64 : i64
      linalg.yield %54 : i64
    } -> tensor<8x1xi64>
    %33 = tensor.empty() : tensor<8x8xi1>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_31, %32 : tensor<1x8xi64>, tensor<8x1xi64>) outs(%33 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %in_38: i64, %out: i1):
      %54 = arith.cmpi sge, %in, %in_38 : i64
      linalg.yield %54 : i1
    } -> tensor<8x8xi1>
    %35 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%34, %28, %cst : tensor<8x8xi1>, tensor<8x8xf32>, tensor<f32>) outs(%27 : tensor<8x8xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %54 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %54 : f32
    } -> tensor<8x8xf32>
    %36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26, %35 : tensor<1x4x8x8xf32>, tensor<8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.addf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %37 = tensor.empty() : tensor<1x4x8xi64>
    %38 = linalg.fill ins(%c0_i64 : i64) outs(%37 : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
    %39 = tensor.empty() : tensor<1x4x8xf32>
    %40 = linalg.fill ins(%cst_3 : f32) outs(%39 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %41:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%36 : tensor<1x4x8x8xf32>) outs(%40, %38 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_38: i64):
      %54 = linalg.index 3 : index
      %55 = arith.index_cast %54 : index to i64
      %56 = arith.maximumf %in, %out : f32
      %57 = arith.cmpf ogt, %in, %out : f32
      %58 = arith.select %57, %55, %out_38 : i64
      linalg.yield %56, %58 : f32, i64
    } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
    %expanded_32 = tensor.expand_shape %41#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
    %42 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %expanded_32 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.subf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %43 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%42 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = math.exp %in : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %44 = tensor.empty() : tensor<1x4x8x1xf32>
    %45 = linalg.fill ins(%cst_2 : f32) outs(%44 : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
    %46 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%43 : tensor<1x4x8x8xf32>) outs(%45 : tensor<1x4x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.addf %in, %out : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x1xf32>
    %47 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%43, %46 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.divf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %collapsed_33 = tensor.collapse_shape %47 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_34 = tensor.collapse_shape %transposed_25 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %48 = tensor.empty() : tensor<4x8x16xf32>
    %49 = linalg.fill ins(%cst_2 : f32) outs(%48 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %50 = linalg.batch_matmul ins(%collapsed_33, %collapsed_34 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%49 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_35 = tensor.expand_shape %50 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %51 = tensor.empty() : tensor<1x8x4x16xf32>
    %transposed_36 = linalg.transpose ins(%expanded_35 : tensor<1x4x8x16xf32>) outs(%51 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_37 = tensor.collapse_shape %transposed_36 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_37 : tensor<1x8x64xf32>
}

// -----

// Meta's LLaMA as the issue's importer spelled it: each rotation one
// two-result generic (re c - im s, re s + im c), repeat_kv in BSHD through
// linalg.broadcast. Raised as above.

// CHECK-LABEL: func.func @meta_llama_fused_generic
//  CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x4x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x8x2x16xf32>
//       CHECK: %[[POS:.*]] = arith.constant dense<[2, 3, 4, 5, 6, 7, 8, 9]> : tensor<8xi64>
//       CHECK: pe.rope #pe.rope<rotary_dim = 16, style = interleaved> %[[Q]], %[[POS]] layout(bshd)
//       CHECK: pe.rope #pe.rope<rotary_dim = 16, style = interleaved> %[[K]], %[[POS]] layout(bshd)
//       CHECK: pe.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x1x8x8xf32>) scale(2.500000e-01) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
func.func @meta_llama_fused_generic(%0: tensor<1x8x4x16xf32>, %1: tensor<1x8x2x16xf32>, %2: tensor<1x8x2x16xf32>) -> tensor<1x8x64xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00], [8.414709568e-01, 3.109835982e-01, 9.983342141e-02, 3.161750734e-02, 9.999833070e-03, 3.162272507e-03, 9.999999311e-04, 3.162277862e-04], [9.092974067e-01, 5.911270976e-01, 1.986693293e-01, 6.320340186e-02, 1.999866590e-02, 6.324513350e-03, 1.999998698e-03, 6.324555143e-04], [1.411200017e-01, 8.126488924e-01, 2.955202162e-01, 9.472609311e-02, 2.999549918e-02, 9.486691095e-03, 2.999995602e-03, 9.486832423e-04], [-7.568024993e-01, 9.535807371e-01, 3.894183636e-01, 1.261540800e-01, 3.998933360e-02, 1.264877431e-02, 3.999989480e-03, 1.264910796e-03], [-9.589242935e-01, 9.999465346e-01, 4.794255495e-01, 1.574559063e-01, 4.997916520e-02, 1.581072994e-02, 4.999979399e-03, 1.581138233e-03], [-2.794154882e-01, 9.471482038e-01, 5.646424890e-01, 1.886002868e-01, 5.996400490e-02, 1.897252910e-02, 5.999964196e-03, 1.897365553e-03], [6.569865942e-01, 8.004215956e-01, 6.442176700e-01, 2.195561081e-01, 6.994284689e-02, 2.213413641e-02, 6.999942940e-03, 2.213592641e-03], [9.893582463e-01, 5.743178129e-01, 7.173560858e-01, 2.502923608e-01, 7.991468906e-02, 2.529552393e-02, 7.999914698e-03, 2.529819496e-03], [4.121184945e-01, 2.912592292e-01, 7.833269238e-01, 2.807783484e-01, 8.987854421e-02, 2.845665812e-02, 8.999879472e-03, 2.846046118e-03], [-5.440211296e-01, -2.068356983e-02, 8.414709568e-01, 3.109836280e-01, 9.983341396e-02, 3.161750734e-02, 9.999834001e-03, 3.162272507e-03], [-9.999902248e-01, -3.305749595e-01, 8.912073970e-01, 3.408778906e-01, 1.097782999e-01, 3.477803990e-02, 1.099977922e-02, 3.478498664e-03], [-5.365729332e-01, -6.076834202e-01, 9.320390821e-01, 3.704313338e-01, 1.197122037e-01, 3.793822601e-02, 1.199971233e-02, 3.794724355e-03], [4.201670289e-01, -8.245284557e-01, 9.635581970e-01, 3.996143639e-01, 1.296341419e-01, 4.109803587e-02, 1.299963426e-02, 4.110949580e-03], [9.906073809e-01, -9.596053958e-01, 9.854497313e-01, 4.283978045e-01, 1.395431161e-01, 4.425742850e-02, 1.399954315e-02, 4.427174572e-03], [6.502878666e-01, -9.995186925e-01, 9.974949956e-01, 4.567529261e-01, 1.494381279e-01, 4.741638154e-02, 1.499943808e-02, 4.743399099e-03], [-2.879033089e-01, -9.403103590e-01, 9.995735884e-01, 4.846512973e-01, 1.593182087e-01, 5.057486147e-02, 1.599931903e-02, 5.059623159e-03], [-9.613974690e-01, -7.878518701e-01, 9.916648269e-01, 5.120650530e-01, 1.691823453e-01, 5.373283476e-02, 1.699918136e-02, 5.375846289e-03], [-7.509872317e-01, -5.572628975e-01, 9.738476276e-01, 5.389667749e-01, 1.790295690e-01, 5.689026788e-02, 1.799902879e-02, 5.692069419e-03], [1.498772055e-01, -2.714101076e-01, 9.463000894e-01, 5.653296113e-01, 1.888588965e-01, 6.004713476e-02, 1.899885759e-02, 6.008291617e-03], [9.129452705e-01, 4.135828838e-02, 9.092974067e-01, 5.911271572e-01, 1.986693144e-01, 6.320340186e-02, 1.999866776e-02, 6.324513350e-03], [8.366556168e-01, 3.500247598e-01, 8.632093072e-01, 6.163336039e-01, 2.084598988e-01, 6.635903567e-02, 2.099845745e-02, 6.640734617e-03], [-8.851309307e-03, 6.239799261e-01, 8.084963560e-01, 6.409237981e-01, 2.182296216e-01, 6.951400638e-02, 2.199822664e-02, 6.956954952e-03], [-8.462203741e-01, 8.360552192e-01, 7.457052469e-01, 6.648730636e-01, 2.279775143e-01, 7.266827673e-02, 2.299797349e-02, 7.273174822e-03], [-9.055783749e-01, 9.652192593e-01, 6.754630804e-01, 6.881575584e-01, 2.377026230e-01, 7.582183182e-02, 2.399769612e-02, 7.589394227e-03], [-1.323517561e-01, 9.986631870e-01, 5.984721184e-01, 7.107539773e-01, 2.474039644e-01, 7.897461951e-02, 2.499739639e-02, 7.905612700e-03], [7.625584602e-01, 9.330701828e-01, 5.155012608e-01, 7.326396704e-01, 2.570805550e-01, 8.212662488e-02, 2.599707060e-02, 8.221830241e-03], [9.563759565e-01, 7.749450207e-01, 4.273798466e-01, 7.537927628e-01, 2.667314112e-01, 8.527780324e-02, 2.699672058e-02, 8.538046852e-03], [2.709057927e-01, 5.399689674e-01, 3.349882066e-01, 7.741921544e-01, 2.763556540e-01, 8.842812479e-02, 2.799634263e-02, 8.854262531e-03], [-6.636338830e-01, 2.514453232e-01, 2.392492443e-01, 7.938174009e-01, 2.859522104e-01, 9.157757461e-02, 2.899593674e-02, 9.170477279e-03], [-9.880316257e-01, -6.201484054e-02, 1.411200017e-01, 8.126489520e-01, 2.955201864e-01, 9.472609311e-02, 2.999550104e-02, 9.486691095e-03], [-4.040376544e-01, -3.693250120e-01, 4.158052057e-02, 8.306678534e-01, 3.050586283e-01, 9.787367284e-02, 3.099503554e-02, 9.802903980e-03]]> : tensor<32x8xf32>
    %cst_1 = arith.constant dense<[[1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [5.403023362e-01, 9.504153132e-01, 9.950041771e-01, 9.995000362e-01, 9.999499917e-01, 9.999949932e-01, 9.999995232e-01, 9.999999404e-01], [-4.161468446e-01, 8.065783978e-01, 9.800665975e-01, 9.980006814e-01, 9.998000264e-01, 9.999800324e-01, 9.999980330e-01, 9.999998212e-01], [-9.899924994e-01, 5.827536583e-01, 9.553365111e-01, 9.955033660e-01, 9.995500445e-01, 9.999549985e-01, 9.999955297e-01, 9.999995828e-01], [-6.536436081e-01, 3.011374772e-01, 9.210609794e-01, 9.920106530e-01, 9.992001057e-01, 9.999200106e-01, 9.999920130e-01, 9.999992251e-01], [2.836622000e-01, -1.034233812e-02, 8.775825500e-01, 9.875259995e-01, 9.987502694e-01, 9.998750091e-01, 9.999874830e-01, 9.999987483e-01], [9.601702690e-01, -3.207964003e-01, 8.253356218e-01, 9.820539355e-01, 9.982005358e-01, 9.998199940e-01, 9.999819994e-01, 9.999982119e-01], [7.539022565e-01, -5.994374752e-01, 7.648422122e-01, 9.755998850e-01, 9.975510240e-01, 9.997550249e-01, 9.999755025e-01, 9.999975562e-01], [-1.455000341e-01, -8.186324239e-01, 6.967067122e-01, 9.681702852e-01, 9.968016744e-01, 9.996800423e-01, 9.999679923e-01, 9.999967813e-01], [-9.111302495e-01, -9.566441774e-01, 6.216099262e-01, 9.597726464e-01, 9.959527254e-01, 9.995950460e-01, 9.999595284e-01, 9.999959469e-01], [-8.390715122e-01, -9.997860789e-01, 5.403023362e-01, 9.504152536e-01, 9.950041771e-01, 9.995000362e-01, 9.999499917e-01, 9.999949932e-01], [4.425697960e-03, -9.437797666e-01, 4.535961151e-01, 9.401075840e-01, 9.939560890e-01, 9.993950725e-01, 9.999395013e-01, 9.999939799e-01], [8.438539505e-01, -7.941793203e-01, 3.623577058e-01, 9.288598895e-01, 9.928086400e-01, 9.992800951e-01, 9.999279976e-01, 9.999927878e-01], [9.074468017e-01, -5.658205152e-01, 2.674987614e-01, 9.166833758e-01, 9.915618896e-01, 9.991551042e-01, 9.999154806e-01, 9.999915361e-01], [1.367372125e-01, -2.813494802e-01, 1.699671596e-01, 9.035902619e-01, 9.902160168e-01, 9.990201592e-01, 9.999020100e-01, 9.999902248e-01], [-7.596879005e-01, 3.102235124e-02, 7.073719800e-02, 8.895936012e-01, 9.887710810e-01, 9.988752007e-01, 9.998875260e-01, 9.999887347e-01], [-9.576594830e-01, 3.403181732e-01, -2.919954620e-02, 8.747074604e-01, 9.872272611e-01, 9.987202883e-01, 9.998720288e-01, 9.999871850e-01], [-2.751633525e-01, 6.158648133e-01, -1.288445443e-01, 8.589466810e-01, 9.855847955e-01, 9.985553622e-01, 9.998555183e-01, 9.999855757e-01], [6.603167057e-01, 8.303360939e-01, -2.272021621e-01, 8.423269987e-01, 9.838436842e-01, 9.983804226e-01, 9.998379946e-01, 9.999837875e-01], [9.887046218e-01, 9.624637961e-01, -3.232895434e-01, 8.248651028e-01, 9.820042253e-01, 9.981955290e-01, 9.998195171e-01, 9.999819398e-01], [4.080820680e-01, 9.991443753e-01, -4.161468446e-01, 8.065783978e-01, 9.800665975e-01, 9.980006814e-01, 9.998000264e-01, 9.999800324e-01], [-5.477292538e-01, 9.367404580e-01, -5.048462152e-01, 7.874851823e-01, 9.780309200e-01, 9.977958202e-01, 9.997795224e-01, 9.999779463e-01], [-9.999608397e-01, 7.814403772e-01, -5.885011554e-01, 7.676045299e-01, 9.758974314e-01, 9.975809455e-01, 9.997580051e-01, 9.999758005e-01], [-5.328330398e-01, 5.486452579e-01, -6.662759781e-01, 7.469563484e-01, 9.736664295e-01, 9.973561764e-01, 9.997355342e-01, 9.999735355e-01], [4.241790175e-01, 2.614416778e-01, -7.373937964e-01, 7.255612612e-01, 9.713379741e-01, 9.971213937e-01, 9.997119904e-01, 9.999712110e-01], [9.912028313e-01, -5.168933049e-02, -8.011435866e-01, 7.034406662e-01, 9.689124227e-01, 9.968765974e-01, 9.996874928e-01, 9.999687672e-01], [6.469193101e-01, -3.596943319e-01, -8.568888307e-01, 6.806167364e-01, 9.663900137e-01, 9.966219068e-01, 9.996620417e-01, 9.999662042e-01], [-2.921388149e-01, -6.320286393e-01, -9.040721655e-01, 6.571121812e-01, 9.637709260e-01, 9.963572025e-01, 9.996355176e-01, 9.999635816e-01], [-9.626058936e-01, -8.416849375e-01, -9.422223568e-01, 6.329506040e-01, 9.610554576e-01, 9.960825443e-01, 9.996080399e-01, 9.999607801e-01], [-7.480575442e-01, -9.678714871e-01, -9.709581733e-01, 6.081561446e-01, 9.582439065e-01, 9.957979321e-01, 9.995795488e-01, 9.999579787e-01], [1.542514563e-01, -9.980752468e-01, -9.899924994e-01, 5.827535391e-01, 9.553365111e-01, 9.955033660e-01, 9.995500445e-01, 9.999549985e-01], [9.147423506e-01, -9.293003082e-01, -9.991351366e-01, 5.567682385e-01, 9.523335695e-01, 9.951988459e-01, 9.995195270e-01, 9.999519587e-01]]> : tensor<32x8xf32>
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %cst_2 = arith.constant 0.000000e+00 : f32
    %cst_3 = arith.constant 0xFF800000 : f32
    %cst_4 = arith.constant 4.000000e+00 : f32
    %extracted_slice = tensor.extract_slice %cst_1[2, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
    %expanded = tensor.expand_shape %extracted_slice [[0, 1], [2, 3]] output_shape [1, 8, 1, 8] : tensor<8x8xf32> into tensor<1x8x1x8xf32>
    %extracted_slice_5 = tensor.extract_slice %cst_0[2, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
    %expanded_6 = tensor.expand_shape %extracted_slice_5 [[0, 1], [2, 3]] output_shape [1, 8, 1, 8] : tensor<8x8xf32> into tensor<1x8x1x8xf32>
    %expanded_7 = tensor.expand_shape %0 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 2] : tensor<1x8x4x16xf32> into tensor<1x8x4x8x2xf32>
    %extracted_slice_8 = tensor.extract_slice %expanded_7[0, 0, 0, 0, 0] [1, 8, 4, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x4x8x2xf32> to tensor<1x8x4x8x1xf32>
    %collapsed = tensor.collapse_shape %extracted_slice_8 [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x1xf32> into tensor<1x8x4x8xf32>
    %extracted_slice_9 = tensor.extract_slice %expanded_7[0, 0, 0, 0, 1] [1, 8, 4, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x4x8x2xf32> to tensor<1x8x4x8x1xf32>
    %collapsed_10 = tensor.collapse_shape %extracted_slice_9 [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x1xf32> into tensor<1x8x4x8xf32>
    %3 = tensor.empty() : tensor<1x8x4x8xf32>
    %6:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %collapsed_10, %expanded, %expanded_6 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>, tensor<1x8x1x8xf32>) outs(%3, %3 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) {
    ^bb0(%re: f32, %im: f32, %c: f32, %s: f32, %o0: f32, %o1: f32):
      %a = arith.mulf %re, %c : f32
      %b = arith.mulf %im, %s : f32
      %r = arith.subf %a, %b : f32
      %d = arith.mulf %re, %s : f32
      %e = arith.mulf %im, %c : f32
      %i = arith.addf %d, %e : f32
      linalg.yield %r, %i : f32, f32
    } -> (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>)
    %expanded_11 = tensor.expand_shape %6#0 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 1] : tensor<1x8x4x8xf32> into tensor<1x8x4x8x1xf32>
    %expanded_12 = tensor.expand_shape %6#1 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 1] : tensor<1x8x4x8xf32> into tensor<1x8x4x8x1xf32>
    %concat = tensor.concat dim(4) %expanded_11, %expanded_12 : (tensor<1x8x4x8x1xf32>, tensor<1x8x4x8x1xf32>) -> tensor<1x8x4x8x2xf32>
    %collapsed_13 = tensor.collapse_shape %concat [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x2xf32> into tensor<1x8x4x16xf32>
    %expanded_14 = tensor.expand_shape %1 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 2] : tensor<1x8x2x16xf32> into tensor<1x8x2x8x2xf32>
    %extracted_slice_15 = tensor.extract_slice %expanded_14[0, 0, 0, 0, 0] [1, 8, 2, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x2x8x2xf32> to tensor<1x8x2x8x1xf32>
    %collapsed_16 = tensor.collapse_shape %extracted_slice_15 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x1xf32> into tensor<1x8x2x8xf32>
    %extracted_slice_17 = tensor.extract_slice %expanded_14[0, 0, 0, 0, 1] [1, 8, 2, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x2x8x2xf32> to tensor<1x8x2x8x1xf32>
    %collapsed_18 = tensor.collapse_shape %extracted_slice_17 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x1xf32> into tensor<1x8x2x8xf32>
    %10 = tensor.empty() : tensor<1x8x2x8xf32>
    %13:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_16, %collapsed_18, %expanded, %expanded_6 : tensor<1x8x2x8xf32>, tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>, tensor<1x8x1x8xf32>) outs(%10, %10 : tensor<1x8x2x8xf32>, tensor<1x8x2x8xf32>) {
    ^bb0(%re: f32, %im: f32, %c: f32, %s: f32, %o0: f32, %o1: f32):
      %a = arith.mulf %re, %c : f32
      %b = arith.mulf %im, %s : f32
      %r = arith.subf %a, %b : f32
      %d = arith.mulf %re, %s : f32
      %e = arith.mulf %im, %c : f32
      %i = arith.addf %d, %e : f32
      linalg.yield %r, %i : f32, f32
    } -> (tensor<1x8x2x8xf32>, tensor<1x8x2x8xf32>)
    %expanded_19 = tensor.expand_shape %13#0 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 1] : tensor<1x8x2x8xf32> into tensor<1x8x2x8x1xf32>
    %expanded_20 = tensor.expand_shape %13#1 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 1] : tensor<1x8x2x8xf32> into tensor<1x8x2x8x1xf32>
    %concat_21 = tensor.concat dim(4) %expanded_19, %expanded_20 : (tensor<1x8x2x8x1xf32>, tensor<1x8x2x8x1xf32>) -> tensor<1x8x2x8x2xf32>
    %collapsed_22 = tensor.collapse_shape %concat_21 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x2xf32> into tensor<1x8x2x16xf32>
    %17 = tensor.empty() : tensor<1x8x2x2x16xf32>
    %18 = linalg.broadcast ins(%collapsed_22 : tensor<1x8x2x16xf32>) outs(%17 : tensor<1x8x2x2x16xf32>) dimensions = [3]
    %collapsed_23 = tensor.collapse_shape %18 [[0], [1], [2, 3], [4]] : tensor<1x8x2x2x16xf32> into tensor<1x8x4x16xf32>
    %19 = linalg.broadcast ins(%2 : tensor<1x8x2x16xf32>) outs(%17 : tensor<1x8x2x2x16xf32>) dimensions = [3]
    %collapsed_24 = tensor.collapse_shape %19 [[0], [1], [2, 3], [4]] : tensor<1x8x2x2x16xf32> into tensor<1x8x4x16xf32>
    %20 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%collapsed_13 : tensor<1x8x4x16xf32>) outs(%20 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %transposed_25 = linalg.transpose ins(%collapsed_24 : tensor<1x8x4x16xf32>) outs(%20 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %21 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_26 = linalg.transpose ins(%collapsed_23 : tensor<1x8x4x16xf32>) outs(%21 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_27 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_28 = tensor.collapse_shape %transposed_26 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %22 = tensor.empty() : tensor<4x8x8xf32>
    %23 = linalg.fill ins(%cst_2 : f32) outs(%22 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %24 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%23 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_29 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %25 = tensor.empty() : tensor<1x4x8x8xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.divf %in, %cst_4 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %27 = tensor.empty() : tensor<8x8xf32>
    %28 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<8x8xf32>) outs(%27 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %cst_3 : f32
    } -> tensor<8x8xf32>
    %29 = tensor.empty() : tensor<8xi64>
    %30 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%29 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %54 = linalg.index 0 : index
      %55 = arith.index_cast %54 : index to i64
      linalg.yield %55 : i64
    } -> tensor<8xi64>
    %expanded_30 = tensor.expand_shape %30 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %expanded_31 = tensor.expand_shape %30 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %31 = tensor.empty() : tensor<8x1xi64>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_30 : tensor<8x1xi64>) outs(%31 : tensor<8x1xi64>) {
    ^bb0(%in: i64, %out: i64):
      %54 = arith.addi %in, %c1_i64 : i64
      linalg.yield %54 : i64
    } -> tensor<8x1xi64>
    %33 = tensor.empty() : tensor<8x8xi1>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_31, %32 : tensor<1x8xi64>, tensor<8x1xi64>) outs(%33 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %in_38: i64, %out: i1):
      %54 = arith.cmpi sge, %in, %in_38 : i64
      linalg.yield %54 : i1
    } -> tensor<8x8xi1>
    %35 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%34, %28, %cst : tensor<8x8xi1>, tensor<8x8xf32>, tensor<f32>) outs(%27 : tensor<8x8xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %54 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %54 : f32
    } -> tensor<8x8xf32>
    %36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26, %35 : tensor<1x4x8x8xf32>, tensor<8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.addf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %37 = tensor.empty() : tensor<1x4x8xi64>
    %38 = linalg.fill ins(%c0_i64 : i64) outs(%37 : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
    %39 = tensor.empty() : tensor<1x4x8xf32>
    %40 = linalg.fill ins(%cst_3 : f32) outs(%39 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %41:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%36 : tensor<1x4x8x8xf32>) outs(%40, %38 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_38: i64):
      %54 = linalg.index 3 : index
      %55 = arith.index_cast %54 : index to i64
      %56 = arith.maximumf %in, %out : f32
      %57 = arith.cmpf ogt, %in, %out : f32
      %58 = arith.select %57, %55, %out_38 : i64
      linalg.yield %56, %58 : f32, i64
    } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
    %expanded_32 = tensor.expand_shape %41#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
    %42 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %expanded_32 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.subf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %43 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%42 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = math.exp %in : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %44 = tensor.empty() : tensor<1x4x8x1xf32>
    %45 = linalg.fill ins(%cst_2 : f32) outs(%44 : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
    %46 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%43 : tensor<1x4x8x8xf32>) outs(%45 : tensor<1x4x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.addf %in, %out : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x1xf32>
    %47 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%43, %46 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.divf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %collapsed_33 = tensor.collapse_shape %47 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_34 = tensor.collapse_shape %transposed_25 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %48 = tensor.empty() : tensor<4x8x16xf32>
    %49 = linalg.fill ins(%cst_2 : f32) outs(%48 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %50 = linalg.batch_matmul ins(%collapsed_33, %collapsed_34 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%49 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_35 = tensor.expand_shape %50 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %51 = tensor.empty() : tensor<1x8x4x16xf32>
    %transposed_36 = linalg.transpose ins(%expanded_35 : tensor<1x4x8x16xf32>) outs(%51 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_37 = tensor.collapse_shape %transposed_36 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_37 : tensor<1x8x64xf32>
}

// -----

// Near miss: K and V tiled (torch.repeat): query head h reads KV head h % 2,
// which is not GQA's h / 2.

// CHECK-REMARK: remark: not raised as pe.attention: K and V are not read at the batch and KV head of the query (h / n)
// CHECK-LABEL: func.func @meta_llama_tiled_kv
//   CHECK-NOT: pe.attention
func.func @meta_llama_tiled_kv(%0: tensor<1x8x4x16xf32>, %1: tensor<1x8x2x16xf32>, %2: tensor<1x8x2x16xf32>) -> tensor<1x8x64xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = arith.constant dense<[[0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00], [8.414709568e-01, 3.109835982e-01, 9.983342141e-02, 3.161750734e-02, 9.999833070e-03, 3.162272507e-03, 9.999999311e-04, 3.162277862e-04], [9.092974067e-01, 5.911270976e-01, 1.986693293e-01, 6.320340186e-02, 1.999866590e-02, 6.324513350e-03, 1.999998698e-03, 6.324555143e-04], [1.411200017e-01, 8.126488924e-01, 2.955202162e-01, 9.472609311e-02, 2.999549918e-02, 9.486691095e-03, 2.999995602e-03, 9.486832423e-04], [-7.568024993e-01, 9.535807371e-01, 3.894183636e-01, 1.261540800e-01, 3.998933360e-02, 1.264877431e-02, 3.999989480e-03, 1.264910796e-03], [-9.589242935e-01, 9.999465346e-01, 4.794255495e-01, 1.574559063e-01, 4.997916520e-02, 1.581072994e-02, 4.999979399e-03, 1.581138233e-03], [-2.794154882e-01, 9.471482038e-01, 5.646424890e-01, 1.886002868e-01, 5.996400490e-02, 1.897252910e-02, 5.999964196e-03, 1.897365553e-03], [6.569865942e-01, 8.004215956e-01, 6.442176700e-01, 2.195561081e-01, 6.994284689e-02, 2.213413641e-02, 6.999942940e-03, 2.213592641e-03], [9.893582463e-01, 5.743178129e-01, 7.173560858e-01, 2.502923608e-01, 7.991468906e-02, 2.529552393e-02, 7.999914698e-03, 2.529819496e-03], [4.121184945e-01, 2.912592292e-01, 7.833269238e-01, 2.807783484e-01, 8.987854421e-02, 2.845665812e-02, 8.999879472e-03, 2.846046118e-03], [-5.440211296e-01, -2.068356983e-02, 8.414709568e-01, 3.109836280e-01, 9.983341396e-02, 3.161750734e-02, 9.999834001e-03, 3.162272507e-03], [-9.999902248e-01, -3.305749595e-01, 8.912073970e-01, 3.408778906e-01, 1.097782999e-01, 3.477803990e-02, 1.099977922e-02, 3.478498664e-03], [-5.365729332e-01, -6.076834202e-01, 9.320390821e-01, 3.704313338e-01, 1.197122037e-01, 3.793822601e-02, 1.199971233e-02, 3.794724355e-03], [4.201670289e-01, -8.245284557e-01, 9.635581970e-01, 3.996143639e-01, 1.296341419e-01, 4.109803587e-02, 1.299963426e-02, 4.110949580e-03], [9.906073809e-01, -9.596053958e-01, 9.854497313e-01, 4.283978045e-01, 1.395431161e-01, 4.425742850e-02, 1.399954315e-02, 4.427174572e-03], [6.502878666e-01, -9.995186925e-01, 9.974949956e-01, 4.567529261e-01, 1.494381279e-01, 4.741638154e-02, 1.499943808e-02, 4.743399099e-03], [-2.879033089e-01, -9.403103590e-01, 9.995735884e-01, 4.846512973e-01, 1.593182087e-01, 5.057486147e-02, 1.599931903e-02, 5.059623159e-03], [-9.613974690e-01, -7.878518701e-01, 9.916648269e-01, 5.120650530e-01, 1.691823453e-01, 5.373283476e-02, 1.699918136e-02, 5.375846289e-03], [-7.509872317e-01, -5.572628975e-01, 9.738476276e-01, 5.389667749e-01, 1.790295690e-01, 5.689026788e-02, 1.799902879e-02, 5.692069419e-03], [1.498772055e-01, -2.714101076e-01, 9.463000894e-01, 5.653296113e-01, 1.888588965e-01, 6.004713476e-02, 1.899885759e-02, 6.008291617e-03], [9.129452705e-01, 4.135828838e-02, 9.092974067e-01, 5.911271572e-01, 1.986693144e-01, 6.320340186e-02, 1.999866776e-02, 6.324513350e-03], [8.366556168e-01, 3.500247598e-01, 8.632093072e-01, 6.163336039e-01, 2.084598988e-01, 6.635903567e-02, 2.099845745e-02, 6.640734617e-03], [-8.851309307e-03, 6.239799261e-01, 8.084963560e-01, 6.409237981e-01, 2.182296216e-01, 6.951400638e-02, 2.199822664e-02, 6.956954952e-03], [-8.462203741e-01, 8.360552192e-01, 7.457052469e-01, 6.648730636e-01, 2.279775143e-01, 7.266827673e-02, 2.299797349e-02, 7.273174822e-03], [-9.055783749e-01, 9.652192593e-01, 6.754630804e-01, 6.881575584e-01, 2.377026230e-01, 7.582183182e-02, 2.399769612e-02, 7.589394227e-03], [-1.323517561e-01, 9.986631870e-01, 5.984721184e-01, 7.107539773e-01, 2.474039644e-01, 7.897461951e-02, 2.499739639e-02, 7.905612700e-03], [7.625584602e-01, 9.330701828e-01, 5.155012608e-01, 7.326396704e-01, 2.570805550e-01, 8.212662488e-02, 2.599707060e-02, 8.221830241e-03], [9.563759565e-01, 7.749450207e-01, 4.273798466e-01, 7.537927628e-01, 2.667314112e-01, 8.527780324e-02, 2.699672058e-02, 8.538046852e-03], [2.709057927e-01, 5.399689674e-01, 3.349882066e-01, 7.741921544e-01, 2.763556540e-01, 8.842812479e-02, 2.799634263e-02, 8.854262531e-03], [-6.636338830e-01, 2.514453232e-01, 2.392492443e-01, 7.938174009e-01, 2.859522104e-01, 9.157757461e-02, 2.899593674e-02, 9.170477279e-03], [-9.880316257e-01, -6.201484054e-02, 1.411200017e-01, 8.126489520e-01, 2.955201864e-01, 9.472609311e-02, 2.999550104e-02, 9.486691095e-03], [-4.040376544e-01, -3.693250120e-01, 4.158052057e-02, 8.306678534e-01, 3.050586283e-01, 9.787367284e-02, 3.099503554e-02, 9.802903980e-03]]> : tensor<32x8xf32>
    %cst_1 = arith.constant dense<[[1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00], [5.403023362e-01, 9.504153132e-01, 9.950041771e-01, 9.995000362e-01, 9.999499917e-01, 9.999949932e-01, 9.999995232e-01, 9.999999404e-01], [-4.161468446e-01, 8.065783978e-01, 9.800665975e-01, 9.980006814e-01, 9.998000264e-01, 9.999800324e-01, 9.999980330e-01, 9.999998212e-01], [-9.899924994e-01, 5.827536583e-01, 9.553365111e-01, 9.955033660e-01, 9.995500445e-01, 9.999549985e-01, 9.999955297e-01, 9.999995828e-01], [-6.536436081e-01, 3.011374772e-01, 9.210609794e-01, 9.920106530e-01, 9.992001057e-01, 9.999200106e-01, 9.999920130e-01, 9.999992251e-01], [2.836622000e-01, -1.034233812e-02, 8.775825500e-01, 9.875259995e-01, 9.987502694e-01, 9.998750091e-01, 9.999874830e-01, 9.999987483e-01], [9.601702690e-01, -3.207964003e-01, 8.253356218e-01, 9.820539355e-01, 9.982005358e-01, 9.998199940e-01, 9.999819994e-01, 9.999982119e-01], [7.539022565e-01, -5.994374752e-01, 7.648422122e-01, 9.755998850e-01, 9.975510240e-01, 9.997550249e-01, 9.999755025e-01, 9.999975562e-01], [-1.455000341e-01, -8.186324239e-01, 6.967067122e-01, 9.681702852e-01, 9.968016744e-01, 9.996800423e-01, 9.999679923e-01, 9.999967813e-01], [-9.111302495e-01, -9.566441774e-01, 6.216099262e-01, 9.597726464e-01, 9.959527254e-01, 9.995950460e-01, 9.999595284e-01, 9.999959469e-01], [-8.390715122e-01, -9.997860789e-01, 5.403023362e-01, 9.504152536e-01, 9.950041771e-01, 9.995000362e-01, 9.999499917e-01, 9.999949932e-01], [4.425697960e-03, -9.437797666e-01, 4.535961151e-01, 9.401075840e-01, 9.939560890e-01, 9.993950725e-01, 9.999395013e-01, 9.999939799e-01], [8.438539505e-01, -7.941793203e-01, 3.623577058e-01, 9.288598895e-01, 9.928086400e-01, 9.992800951e-01, 9.999279976e-01, 9.999927878e-01], [9.074468017e-01, -5.658205152e-01, 2.674987614e-01, 9.166833758e-01, 9.915618896e-01, 9.991551042e-01, 9.999154806e-01, 9.999915361e-01], [1.367372125e-01, -2.813494802e-01, 1.699671596e-01, 9.035902619e-01, 9.902160168e-01, 9.990201592e-01, 9.999020100e-01, 9.999902248e-01], [-7.596879005e-01, 3.102235124e-02, 7.073719800e-02, 8.895936012e-01, 9.887710810e-01, 9.988752007e-01, 9.998875260e-01, 9.999887347e-01], [-9.576594830e-01, 3.403181732e-01, -2.919954620e-02, 8.747074604e-01, 9.872272611e-01, 9.987202883e-01, 9.998720288e-01, 9.999871850e-01], [-2.751633525e-01, 6.158648133e-01, -1.288445443e-01, 8.589466810e-01, 9.855847955e-01, 9.985553622e-01, 9.998555183e-01, 9.999855757e-01], [6.603167057e-01, 8.303360939e-01, -2.272021621e-01, 8.423269987e-01, 9.838436842e-01, 9.983804226e-01, 9.998379946e-01, 9.999837875e-01], [9.887046218e-01, 9.624637961e-01, -3.232895434e-01, 8.248651028e-01, 9.820042253e-01, 9.981955290e-01, 9.998195171e-01, 9.999819398e-01], [4.080820680e-01, 9.991443753e-01, -4.161468446e-01, 8.065783978e-01, 9.800665975e-01, 9.980006814e-01, 9.998000264e-01, 9.999800324e-01], [-5.477292538e-01, 9.367404580e-01, -5.048462152e-01, 7.874851823e-01, 9.780309200e-01, 9.977958202e-01, 9.997795224e-01, 9.999779463e-01], [-9.999608397e-01, 7.814403772e-01, -5.885011554e-01, 7.676045299e-01, 9.758974314e-01, 9.975809455e-01, 9.997580051e-01, 9.999758005e-01], [-5.328330398e-01, 5.486452579e-01, -6.662759781e-01, 7.469563484e-01, 9.736664295e-01, 9.973561764e-01, 9.997355342e-01, 9.999735355e-01], [4.241790175e-01, 2.614416778e-01, -7.373937964e-01, 7.255612612e-01, 9.713379741e-01, 9.971213937e-01, 9.997119904e-01, 9.999712110e-01], [9.912028313e-01, -5.168933049e-02, -8.011435866e-01, 7.034406662e-01, 9.689124227e-01, 9.968765974e-01, 9.996874928e-01, 9.999687672e-01], [6.469193101e-01, -3.596943319e-01, -8.568888307e-01, 6.806167364e-01, 9.663900137e-01, 9.966219068e-01, 9.996620417e-01, 9.999662042e-01], [-2.921388149e-01, -6.320286393e-01, -9.040721655e-01, 6.571121812e-01, 9.637709260e-01, 9.963572025e-01, 9.996355176e-01, 9.999635816e-01], [-9.626058936e-01, -8.416849375e-01, -9.422223568e-01, 6.329506040e-01, 9.610554576e-01, 9.960825443e-01, 9.996080399e-01, 9.999607801e-01], [-7.480575442e-01, -9.678714871e-01, -9.709581733e-01, 6.081561446e-01, 9.582439065e-01, 9.957979321e-01, 9.995795488e-01, 9.999579787e-01], [1.542514563e-01, -9.980752468e-01, -9.899924994e-01, 5.827535391e-01, 9.553365111e-01, 9.955033660e-01, 9.995500445e-01, 9.999549985e-01], [9.147423506e-01, -9.293003082e-01, -9.991351366e-01, 5.567682385e-01, 9.523335695e-01, 9.951988459e-01, 9.995195270e-01, 9.999519587e-01]]> : tensor<32x8xf32>
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %cst_2 = arith.constant 0.000000e+00 : f32
    %cst_3 = arith.constant 0xFF800000 : f32
    %cst_4 = arith.constant 4.000000e+00 : f32
    %extracted_slice = tensor.extract_slice %cst_1[2, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
    %expanded = tensor.expand_shape %extracted_slice [[0, 1], [2, 3]] output_shape [1, 8, 1, 8] : tensor<8x8xf32> into tensor<1x8x1x8xf32>
    %extracted_slice_5 = tensor.extract_slice %cst_0[2, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
    %expanded_6 = tensor.expand_shape %extracted_slice_5 [[0, 1], [2, 3]] output_shape [1, 8, 1, 8] : tensor<8x8xf32> into tensor<1x8x1x8xf32>
    %expanded_7 = tensor.expand_shape %0 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 2] : tensor<1x8x4x16xf32> into tensor<1x8x4x8x2xf32>
    %extracted_slice_8 = tensor.extract_slice %expanded_7[0, 0, 0, 0, 0] [1, 8, 4, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x4x8x2xf32> to tensor<1x8x4x8x1xf32>
    %collapsed = tensor.collapse_shape %extracted_slice_8 [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x1xf32> into tensor<1x8x4x8xf32>
    %extracted_slice_9 = tensor.extract_slice %expanded_7[0, 0, 0, 0, 1] [1, 8, 4, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x4x8x2xf32> to tensor<1x8x4x8x1xf32>
    %collapsed_10 = tensor.collapse_shape %extracted_slice_9 [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x1xf32> into tensor<1x8x4x8xf32>
    %3 = tensor.empty() : tensor<1x8x4x8xf32>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %expanded : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_10, %expanded_6 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4, %5 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.subf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %expanded_6 : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_10, %expanded : tensor<1x8x4x8xf32>, tensor<1x8x1x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %8 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) outs(%3 : tensor<1x8x4x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.addf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x4x8xf32>
    %expanded_11 = tensor.expand_shape %6 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 1] : tensor<1x8x4x8xf32> into tensor<1x8x4x8x1xf32>
    %expanded_12 = tensor.expand_shape %9 [[0], [1], [2], [3, 4]] output_shape [1, 8, 4, 8, 1] : tensor<1x8x4x8xf32> into tensor<1x8x4x8x1xf32>
    %concat = tensor.concat dim(4) %expanded_11, %expanded_12 : (tensor<1x8x4x8x1xf32>, tensor<1x8x4x8x1xf32>) -> tensor<1x8x4x8x2xf32>
    %collapsed_13 = tensor.collapse_shape %concat [[0], [1], [2], [3, 4]] : tensor<1x8x4x8x2xf32> into tensor<1x8x4x16xf32>
    %expanded_14 = tensor.expand_shape %1 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 2] : tensor<1x8x2x16xf32> into tensor<1x8x2x8x2xf32>
    %extracted_slice_15 = tensor.extract_slice %expanded_14[0, 0, 0, 0, 0] [1, 8, 2, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x2x8x2xf32> to tensor<1x8x2x8x1xf32>
    %collapsed_16 = tensor.collapse_shape %extracted_slice_15 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x1xf32> into tensor<1x8x2x8xf32>
    %extracted_slice_17 = tensor.extract_slice %expanded_14[0, 0, 0, 0, 1] [1, 8, 2, 8, 1] [1, 1, 1, 1, 1] : tensor<1x8x2x8x2xf32> to tensor<1x8x2x8x1xf32>
    %collapsed_18 = tensor.collapse_shape %extracted_slice_17 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x1xf32> into tensor<1x8x2x8xf32>
    %10 = tensor.empty() : tensor<1x8x2x8xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_16, %expanded : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_18, %expanded_6 : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %12 : tensor<1x8x2x8xf32>, tensor<1x8x2x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.subf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_16, %expanded_6 : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_18, %expanded : tensor<1x8x2x8xf32>, tensor<1x8x1x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.mulf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %15 : tensor<1x8x2x8xf32>, tensor<1x8x2x8xf32>) outs(%10 : tensor<1x8x2x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.addf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x8x2x8xf32>
    %expanded_19 = tensor.expand_shape %13 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 1] : tensor<1x8x2x8xf32> into tensor<1x8x2x8x1xf32>
    %expanded_20 = tensor.expand_shape %16 [[0], [1], [2], [3, 4]] output_shape [1, 8, 2, 8, 1] : tensor<1x8x2x8xf32> into tensor<1x8x2x8x1xf32>
    %concat_21 = tensor.concat dim(4) %expanded_19, %expanded_20 : (tensor<1x8x2x8x1xf32>, tensor<1x8x2x8x1xf32>) -> tensor<1x8x2x8x2xf32>
    %collapsed_22 = tensor.collapse_shape %concat_21 [[0], [1], [2], [3, 4]] : tensor<1x8x2x8x2xf32> into tensor<1x8x2x16xf32>
    %17 = tensor.empty() : tensor<1x8x2x2x16xf32>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_22 : tensor<1x8x2x16xf32>) outs(%17 : tensor<1x8x2x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x2x2x16xf32>
    %collapsed_23 = tensor.collapse_shape %18 [[0], [1], [2, 3], [4]] : tensor<1x8x2x2x16xf32> into tensor<1x8x4x16xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x8x2x16xf32>) outs(%17 : tensor<1x8x2x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x2x2x16xf32>
    %collapsed_24 = tensor.collapse_shape %19 [[0], [1], [2, 3], [4]] : tensor<1x8x2x2x16xf32> into tensor<1x8x4x16xf32>
    %20 = tensor.empty() : tensor<1x4x8x16xf32>
    %transposed = linalg.transpose ins(%collapsed_13 : tensor<1x8x4x16xf32>) outs(%20 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %transposed_25 = linalg.transpose ins(%collapsed_24 : tensor<1x8x4x16xf32>) outs(%20 : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3] 
    %21 = tensor.empty() : tensor<1x4x16x8xf32>
    %transposed_26 = linalg.transpose ins(%collapsed_23 : tensor<1x8x4x16xf32>) outs(%21 : tensor<1x4x16x8xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_27 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %collapsed_28 = tensor.collapse_shape %transposed_26 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
    %22 = tensor.empty() : tensor<4x8x8xf32>
    %23 = linalg.fill ins(%cst_2 : f32) outs(%22 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %24 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%23 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %expanded_29 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
    %25 = tensor.empty() : tensor<1x4x8x8xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.divf %in, %cst_4 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %27 = tensor.empty() : tensor<8x8xf32>
    %28 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<8x8xf32>) outs(%27 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %cst_3 : f32
    } -> tensor<8x8xf32>
    %29 = tensor.empty() : tensor<8xi64>
    %30 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%29 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %54 = linalg.index 0 : index
      %55 = arith.index_cast %54 : index to i64
      linalg.yield %55 : i64
    } -> tensor<8xi64>
    %expanded_30 = tensor.expand_shape %30 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %expanded_31 = tensor.expand_shape %30 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %31 = tensor.empty() : tensor<8x1xi64>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_30 : tensor<8x1xi64>) outs(%31 : tensor<8x1xi64>) {
    ^bb0(%in: i64, %out: i64):
      %54 = arith.addi %in, %c1_i64 : i64
      linalg.yield %54 : i64
    } -> tensor<8x1xi64>
    %33 = tensor.empty() : tensor<8x8xi1>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded_31, %32 : tensor<1x8xi64>, tensor<8x1xi64>) outs(%33 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %in_38: i64, %out: i1):
      %54 = arith.cmpi sge, %in, %in_38 : i64
      linalg.yield %54 : i1
    } -> tensor<8x8xi1>
    %35 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%34, %28, %cst : tensor<8x8xi1>, tensor<8x8xf32>, tensor<f32>) outs(%27 : tensor<8x8xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %54 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %54 : f32
    } -> tensor<8x8xf32>
    %36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26, %35 : tensor<1x4x8x8xf32>, tensor<8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.addf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %37 = tensor.empty() : tensor<1x4x8xi64>
    %38 = linalg.fill ins(%c0_i64 : i64) outs(%37 : tensor<1x4x8xi64>) -> tensor<1x4x8xi64>
    %39 = tensor.empty() : tensor<1x4x8xf32>
    %40 = linalg.fill ins(%cst_3 : f32) outs(%39 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %41:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%36 : tensor<1x4x8x8xf32>) outs(%40, %38 : tensor<1x4x8xf32>, tensor<1x4x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_38: i64):
      %54 = linalg.index 3 : index
      %55 = arith.index_cast %54 : index to i64
      %56 = arith.maximumf %in, %out : f32
      %57 = arith.cmpf ogt, %in, %out : f32
      %58 = arith.select %57, %55, %out_38 : i64
      linalg.yield %56, %58 : f32, i64
    } -> (tensor<1x4x8xf32>, tensor<1x4x8xi64>)
    %expanded_32 = tensor.expand_shape %41#0 [[0], [1], [2, 3]] output_shape [1, 4, 8, 1] : tensor<1x4x8xf32> into tensor<1x4x8x1xf32>
    %42 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %expanded_32 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.subf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %43 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%42 : tensor<1x4x8x8xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = math.exp %in : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %44 = tensor.empty() : tensor<1x4x8x1xf32>
    %45 = linalg.fill ins(%cst_2 : f32) outs(%44 : tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
    %46 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%43 : tensor<1x4x8x8xf32>) outs(%45 : tensor<1x4x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.addf %in, %out : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x1xf32>
    %47 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%43, %46 : tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) outs(%25 : tensor<1x4x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %54 = arith.divf %in, %in_38 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x8x8xf32>
    %collapsed_33 = tensor.collapse_shape %47 [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
    %collapsed_34 = tensor.collapse_shape %transposed_25 [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
    %48 = tensor.empty() : tensor<4x8x16xf32>
    %49 = linalg.fill ins(%cst_2 : f32) outs(%48 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %50 = linalg.batch_matmul ins(%collapsed_33, %collapsed_34 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%49 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %expanded_35 = tensor.expand_shape %50 [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<4x8x16xf32> into tensor<1x4x8x16xf32>
    %51 = tensor.empty() : tensor<1x8x4x16xf32>
    %transposed_36 = linalg.transpose ins(%expanded_35 : tensor<1x4x8x16xf32>) outs(%51 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_37 = tensor.collapse_shape %transposed_36 [[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
  return %collapsed_37 : tensor<1x8x64xf32>
}
