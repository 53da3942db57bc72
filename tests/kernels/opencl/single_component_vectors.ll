; llvm-spirv: --spirv-ext=+all
; Vectors of one component as Intel's Triton backend leaves them in its LLVM IR (masked loads
; of <1 x float>, shuffles between one and two components, comparisons and selects of one lane,
; bit casts of one float), which llvm-spirv with every extension enabled writes as
; SPV_INTEL_vector_compute's one-component vectors. Per work-item g, with x = in[g] and
; m = x * s: wide[g] = m + 1, and bits[g] = the bits of (m > 0 ? m : -0.5) + (x + 2), plus 1.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

declare spir_func i64 @_Z13get_global_idj(i32)

define spir_kernel void @single_component_vectors(ptr addrspace(1) %bits, ptr addrspace(1) %wide, ptr addrspace(1) %in, float %s) {
entry:
  %g = call spir_func i64 @_Z13get_global_idj(i32 0)
  %p = getelementptr <1 x float>, ptr addrspace(1) %in, i64 %g
  %x = load <1 x float>, ptr addrspace(1) %p, align 4
  %sv = insertelement <1 x float> poison, float %s, i32 0
  %m = fmul <1 x float> %x, %sv
  %mx = shufflevector <1 x float> %m, <1 x float> %x, <2 x i32> <i32 0, i32 1>
  %w = fadd <2 x float> %mx, <float 1.0, float 2.0>
  %positive = fcmp ogt <1 x float> %m, zeroinitializer
  %kept = select <1 x i1> %positive, <1 x float> %m, <1 x float> <float -0.5>
  %x2 = shufflevector <2 x float> %w, <2 x float> poison, <1 x i32> <i32 1>
  %t = fadd <1 x float> %kept, %x2
  %tb = bitcast <1 x float> %t to <1 x i32>
  %next = add <1 x i32> %tb, <i32 1>
  %q = getelementptr <1 x i32>, ptr addrspace(1) %bits, i64 %g
  store <1 x i32> %next, ptr addrspace(1) %q, align 4
  %m1 = extractelement <2 x float> %w, i64 0
  %r = getelementptr float, ptr addrspace(1) %wide, i64 %g
  store float %m1, ptr addrspace(1) %r, align 4
  ret void
}

!opencl.ocl.version = !{!0}
!opencl.spir.version = !{!0}
!0 = !{i32 2, i32 0}
