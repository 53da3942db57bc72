; llvm-spirv: --spirv-ext=+all
; VectorAnyINTEL vectors whose counts are no multiple of 4 (<6 x float>: parts of 4 and 2;
; <5 x i32>: of 4 and a scalar), built element by element, shuffled, computed on, compared,
; extracted at a dynamic index and stored element by element. Per work-item g, over the 6
; floats x of in[6 g..] and i = k[g]:
;   y = x * 2 + (5, 4, 3, 2, 1, 0), z = the shuffle (y[5], y[0..4]) of y, w = max(y, z),
;   out[6 g + j] = w[j]; picked[g] = w[i % 6];
;   n = (int5)(w[0..4]) * 3 - 1, nout[5 g + j] = n[j] > 2 ? n[j] : -n[j].
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

declare spir_func i64 @_Z13get_global_idj(i32)
declare <6 x float> @llvm.maxnum.v6f32(<6 x float>, <6 x float>)

define spir_kernel void @odd_vectors(ptr addrspace(1) %out, ptr addrspace(1) %picked, ptr addrspace(1) %nout, ptr addrspace(1) %in, ptr addrspace(1) %k) {
entry:
  %g = call spir_func i64 @_Z13get_global_idj(i32 0)
  %base = mul i64 %g, 6
  br label %load

load:
  %j = phi i64 [ 0, %entry ], [ %j1, %load ]
  %x = phi <6 x float> [ undef, %entry ], [ %x1, %load ]
  %at = add i64 %base, %j
  %p = getelementptr float, ptr addrspace(1) %in, i64 %at
  %e = load float, ptr addrspace(1) %p, align 4
  %j32 = trunc i64 %j to i32
  %x1 = insertelement <6 x float> %x, float %e, i32 %j32
  %j1 = add i64 %j, 1
  %more = icmp ult i64 %j1, 6
  br i1 %more, label %load, label %compute

compute:
  %x2 = fmul <6 x float> %x1, <float 2.0, float 2.0, float 2.0, float 2.0, float 2.0, float 2.0>
  %y = fadd <6 x float> %x2, <float 5.0, float 4.0, float 3.0, float 2.0, float 1.0, float 0.0>
  %z = shufflevector <6 x float> %y, <6 x float> poison, <6 x i32> <i32 5, i32 0, i32 1, i32 2, i32 3, i32 4>
  %w = call <6 x float> @llvm.maxnum.v6f32(<6 x float> %y, <6 x float> %z)
  %kp = getelementptr i32, ptr addrspace(1) %k, i64 %g
  %i = load i32, ptr addrspace(1) %kp, align 4
  %i6 = urem i32 %i, 6
  %pick = extractelement <6 x float> %w, i32 %i6
  %pp = getelementptr float, ptr addrspace(1) %picked, i64 %g
  store float %pick, ptr addrspace(1) %pp, align 4
  %w5 = shufflevector <6 x float> %w, <6 x float> poison, <5 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4>
  %n0 = fptosi <5 x float> %w5 to <5 x i32>
  %n1 = mul <5 x i32> %n0, <i32 3, i32 3, i32 3, i32 3, i32 3>
  %n = sub <5 x i32> %n1, <i32 1, i32 1, i32 1, i32 1, i32 1>
  %big = icmp sgt <5 x i32> %n, <i32 2, i32 2, i32 2, i32 2, i32 2>
  %neg = sub <5 x i32> zeroinitializer, %n
  %r = select <5 x i1> %big, <5 x i32> %n, <5 x i32> %neg
  %nbase = mul i64 %g, 5
  br label %store

store:
  %s = phi i64 [ 0, %compute ], [ %s1, %store ]
  %s32 = trunc i64 %s to i32
  %we = extractelement <6 x float> %w, i32 %s32
  %oat = add i64 %base, %s
  %op = getelementptr float, ptr addrspace(1) %out, i64 %oat
  store float %we, ptr addrspace(1) %op, align 4
  %s1 = add i64 %s, 1
  %smore = icmp ult i64 %s1, 6
  br i1 %smore, label %store, label %ints

ints:
  %r0 = extractelement <5 x i32> %r, i32 0
  %r1 = extractelement <5 x i32> %r, i32 1
  %r2 = extractelement <5 x i32> %r, i32 2
  %r3 = extractelement <5 x i32> %r, i32 3
  %r4 = extractelement <5 x i32> %r, i32 4
  %q0 = getelementptr i32, ptr addrspace(1) %nout, i64 %nbase
  store i32 %r0, ptr addrspace(1) %q0, align 4
  %q1 = getelementptr i32, ptr addrspace(1) %q0, i64 1
  store i32 %r1, ptr addrspace(1) %q1, align 4
  %q2 = getelementptr i32, ptr addrspace(1) %q0, i64 2
  store i32 %r2, ptr addrspace(1) %q2, align 4
  %q3 = getelementptr i32, ptr addrspace(1) %q0, i64 3
  store i32 %r3, ptr addrspace(1) %q3, align 4
  %q4 = getelementptr i32, ptr addrspace(1) %q0, i64 4
  store i32 %r4, ptr addrspace(1) %q4, align 4
  ret void
}

!opencl.ocl.version = !{!0}
!opencl.spir.version = !{!0}
!0 = !{i32 2, i32 0}
