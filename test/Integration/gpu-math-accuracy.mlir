// The f32 math of GPU kernels (pe-gpu-lower-math: polynomials instead of
// libdevice, rounding in arith) evaluated on the CPU against float64 libm at
// 1,000,000 points: sin and cos on [-pi, pi] (the reduced RoPE angle) within
// 3e-7 absolute, exp on [-20, 0] (softmax) within 1.5e-7 relative, and
// roundeven/floor/ceil/trunc of f64 exact on [-4, 4] in steps of 1/8, and
// f64 exp (run-time RoPE frequencies) within 4.5e-16 relative (2 ulp) of
// libm on [-708, 709.7], with exp(0) = 1, exp(-746) = 0, exp(710) = inf,
// exp(NaN) = NaN and a subnormal exp(-745). The references call libm
// directly (@exp), out of the pass's reach.
// RUN: pe-opt %s --pe-gpu-lower-math | pe-compile --emit=jit - | FileCheck %s
// The five checks in order (sin, cos, exp, rounding, f64 exp), 1 = within
// bounds:
// CHECK: ( 1, 1, 1, 1, 1 )

llvm.func @exp(f64) -> f64

/// The largest |f(x_i) - ref(x_i)| (relative when `relative`) over
/// x_i = lo + (hi - lo) * i / n, i < n, x_i rounded to f32.
func.func @max_error(%which: index, %lo: f64, %hi: f64, %relative: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000000 : index
  %nf = arith.constant 1000000.0 : f64
  %zero = arith.constant 0.0 : f64
  %width = arith.subf %hi, %lo : f64
  %worst = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f64
    %t = arith.divf %if, %nf : f64
    %x64 = math.fma %t, %width, %lo : f64
    %x = arith.truncf %x64 : f64 to f32
    %xd = arith.extf %x : f32 to f64
    %pair:2 = scf.index_switch %which -> f32, f64
    case 0 {
      %s = math.sin %x : f32
      %r = math.sin %xd : f64
      scf.yield %s, %r : f32, f64
    }
    case 1 {
      %s = math.cos %x : f32
      %r = math.cos %xd : f64
      scf.yield %s, %r : f32, f64
    }
    default {
      %s = math.exp %x : f32
      %r = llvm.call @exp(%xd) : (f64) -> f64
      scf.yield %s, %r : f32, f64
    }
    %got = arith.extf %pair#0 : f32 to f64
    %diff = arith.subf %got, %pair#1 : f64
    %rel = arith.divf %diff, %pair#1 : f64
    %e = arith.select %relative, %rel, %diff : f64
    %ae = math.absf %e : f64
    %m2 = arith.maximumf %m, %ae : f64
    scf.yield %m2 : f64
  }
  return %worst : f64
}

/// 1 if roundeven, floor, ceil and trunc of k / 8 (k in [-32, 32]) match
/// the exact values computed with integer arithmetic.
func.func @rounding_exact() -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c65 = arith.constant 65 : index
  %true = arith.constant true
  %eighth = arith.constant 0.125 : f64
  %c32 = arith.constant 32 : i64
  %c8 = arith.constant 8 : i64
  %c4 = arith.constant 4 : i64
  %c1i = arith.constant 1 : i64
  %c0i = arith.constant 0 : i64
  %ok = scf.for %i = %c0 to %c65 step %c1 iter_args(%all = %true) -> (i1) {
    %ii = arith.index_cast %i : index to i64
    %k = arith.subi %ii, %c32 : i64
    %kf = arith.sitofp %k : i64 to f64
    %x = arith.mulf %kf, %eighth : f64
    // floor(k / 8) and ceil(k / 8) with integers.
    %fl = arith.floordivsi %k, %c8 : i64
    %ce = arith.ceildivsi %k, %c8 : i64
    %tr = arith.divsi %k, %c8 : i64
    // round half to even: r = floor(k/8 + 1/2) unless exactly half and odd.
    %fl8 = arith.muli %fl, %c8 : i64
    %r8 = arith.subi %k, %fl8 : i64
    %above = arith.cmpi sgt, %r8, %c4 : i64
    %half = arith.cmpi eq, %r8, %c4 : i64
    %flodd0 = arith.andi %fl, %c1i : i64
    %flodd = arith.cmpi ne, %flodd0, %c0i : i64
    %up0 = arith.andi %half, %flodd : i1
    %up = arith.ori %above, %up0 : i1
    %flp1 = arith.addi %fl, %c1i : i64
    %re = arith.select %up, %flp1, %fl : i64
    %gre = math.roundeven %x : f64
    %gfl = math.floor %x : f64
    %gce = math.ceil %x : f64
    %gtr = math.trunc %x : f64
    %wre = arith.sitofp %re : i64 to f64
    %wfl = arith.sitofp %fl : i64 to f64
    %wce = arith.sitofp %ce : i64 to f64
    %wtr = arith.sitofp %tr : i64 to f64
    %e1 = arith.cmpf oeq, %gre, %wre : f64
    %e2 = arith.cmpf oeq, %gfl, %wfl : f64
    %e3 = arith.cmpf oeq, %gce, %wce : f64
    %e4 = arith.cmpf oeq, %gtr, %wtr : f64
    %a1 = arith.andi %e1, %e2 : i1
    %a2 = arith.andi %e3, %e4 : i1
    %a3 = arith.andi %a1, %a2 : i1
    %all2 = arith.andi %all, %a3 : i1
    scf.yield %all2 : i1
  }
  %r = arith.extui %ok : i1 to i64
  return %r : i64
}

/// 1 if math.exp of f64 is within `bound` relative of libm's exp at 10^6
/// points of [-708, 709.7] and right at the special points.
func.func @exp64_ok(%bound: f64) -> i1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000000 : index
  %nf = arith.constant 1000000.0 : f64
  %lo = arith.constant -708.0 : f64
  %width = arith.constant 1417.7 : f64
  %zero = arith.constant 0.0 : f64
  %worst = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f64
    %t = arith.divf %if, %nf : f64
    %x = math.fma %t, %width, %lo : f64
    %got = math.exp %x : f64
    %want = llvm.call @exp(%x) : (f64) -> f64
    %diff = arith.subf %got, %want : f64
    %rel = arith.divf %diff, %want : f64
    %ae = math.absf %rel : f64
    %m2 = arith.maximumf %m, %ae : f64
    scf.yield %m2 : f64
  }
  %ok = arith.cmpf olt, %worst, %bound : f64
  %one = arith.constant 1.0 : f64
  %inf = arith.constant 0x7FF0000000000000 : f64
  %nan = arith.constant 0x7FF8000000000000 : f64
  %m746 = arith.constant -746.0 : f64
  %m745 = arith.constant -745.0 : f64
  %p710 = arith.constant 710.0 : f64
  %e0 = math.exp %zero : f64
  %e1 = math.exp %m746 : f64
  %e2 = math.exp %p710 : f64
  %e3 = math.exp %nan : f64
  %e4 = math.exp %m745 : f64
  %s0 = arith.cmpf oeq, %e0, %one : f64
  %s1 = arith.cmpf oeq, %e1, %zero : f64
  %s2 = arith.cmpf oeq, %e2, %inf : f64
  %s3 = arith.cmpf uno, %e3, %e3 : f64
  %s4 = arith.cmpf ogt, %e4, %zero : f64
  %a0 = arith.andi %ok, %s0 : i1
  %a1 = arith.andi %a0, %s1 : i1
  %a2 = arith.andi %a1, %s2 : i1
  %a3 = arith.andi %a2, %s3 : i1
  %a4 = arith.andi %a3, %s4 : i1
  return %a4 : i1
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %pi = arith.constant 3.14159265358979311 : f64
  %mpi = arith.constant -3.14159265358979311 : f64
  %m20 = arith.constant -20.0 : f64
  %z = arith.constant 0.0 : f64
  %false = arith.constant false
  %true = arith.constant true
  %abs_bound = arith.constant 3.0e-7 : f64
  %rel_bound = arith.constant 1.5e-7 : f64
  %es = func.call @max_error(%c0, %mpi, %pi, %false) : (index, f64, f64, i1) -> f64
  %ec = func.call @max_error(%c1, %mpi, %pi, %false) : (index, f64, f64, i1) -> f64
  %ee = func.call @max_error(%c2, %m20, %z, %true) : (index, f64, f64, i1) -> f64
  %oks = arith.cmpf olt, %es, %abs_bound : f64
  %okc = arith.cmpf olt, %ec, %abs_bound : f64
  %oke = arith.cmpf olt, %ee, %rel_bound : f64
  %rounding = func.call @rounding_exact() : () -> i64
  %one = arith.constant 1 : i64
  %okr = arith.cmpi eq, %rounding, %one : i64
  %exp64_bound = arith.constant 4.5e-16 : f64
  %ok64 = func.call @exp64_ok(%exp64_bound) : (f64) -> i1
  %flags = vector.from_elements %oks, %okc, %oke, %okr, %ok64 : vector<5xi1>
  %wide = arith.extui %flags : vector<5xi1> to vector<5xi64>
  vector.print %wide : vector<5xi64>
  return
}
