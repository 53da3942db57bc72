; llvm-spirv: --spirv-ext=+all
; Operations on vectors of 32 components as Triton's LLVM IR has them, written by llvm-spirv with
; SPV_INTEL_vector_compute: two 16-float loads joined by a shuffle, fma and maxnum built-ins, a
; comparison whose 32 lanes are bit cast into a mask word, a select, a dynamic extract and a
; constant insert, a conversion to halves, and whole-vector stores. Per work-item g, over the
; 32 floats v of in[32 g..]: w = v > 0 ? max(v * v + v, 0) : v, with w[3] = w[i];
; out[g] = w, hout[g] = w as halves, mask[g] = the bits of v > 0.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

declare spir_func i64 @_Z13get_global_idj(i32)
declare <32 x float> @llvm.fma.v32f32(<32 x float>, <32 x float>, <32 x float>)
declare <32 x float> @llvm.maxnum.v32f32(<32 x float>, <32 x float>)

define spir_kernel void @vector_any_ops(ptr addrspace(1) %out, ptr addrspace(1) %hout, ptr addrspace(1) %mask, ptr addrspace(1) %in, i32 %i) {
entry:
  %g = call spir_func i64 @_Z13get_global_idj(i32 0)
  %p = getelementptr <32 x float>, ptr addrspace(1) %in, i64 %g
  %a = load <16 x float>, ptr addrspace(1) %p, align 64
  %p2 = getelementptr <16 x float>, ptr addrspace(1) %p, i64 1
  %b = load <16 x float>, ptr addrspace(1) %p2, align 64
  %v = shufflevector <16 x float> %a, <16 x float> %b, <32 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15, i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>
  %f = call <32 x float> @llvm.fma.v32f32(<32 x float> %v, <32 x float> %v, <32 x float> %v)
  %m = call <32 x float> @llvm.maxnum.v32f32(<32 x float> %f, <32 x float> zeroinitializer)
  %c = fcmp ogt <32 x float> %v, zeroinitializer
  %s = select <32 x i1> %c, <32 x float> %m, <32 x float> %v
  %bits = bitcast <32 x i1> %c to i32
  %mp = getelementptr i32, ptr addrspace(1) %mask, i64 %g
  store i32 %bits, ptr addrspace(1) %mp, align 4
  %x = extractelement <32 x float> %s, i32 %i
  %s2 = insertelement <32 x float> %s, float %x, i32 3
  %h = fptrunc <32 x float> %s2 to <32 x half>
  %hp = getelementptr <32 x half>, ptr addrspace(1) %hout, i64 %g
  store <32 x half> %h, ptr addrspace(1) %hp, align 64
  %op = getelementptr <32 x float>, ptr addrspace(1) %out, i64 %g
  store <32 x float> %s2, ptr addrspace(1) %op, align 128
  ret void
}

!opencl.ocl.version = !{!0}
!opencl.spir.version = !{!0}
!0 = !{i32 2, i32 0}
