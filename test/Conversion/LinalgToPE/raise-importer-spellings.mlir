// Importer spellings nobody here wrote, raised only where the proof holds.
// RUN: pe-opt %s -split-input-file --pe-raise-positional-encodings | FileCheck %s

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
