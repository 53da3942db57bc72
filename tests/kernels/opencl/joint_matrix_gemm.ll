; llvm-spirv: --spirv-ext=+SPV_KHR_cooperative_matrix,+SPV_INTEL_joint_matrix
; A GEMM as DPC++ writes one with SYCL's joint_matrix, in SPV_INTEL_joint_matrix's KHR form:
; D (m x n, f32) = A (m x k, f16, row-major) x B (k x n, f16, row-major), each sub-group
; computing a 32 x 32 tile of D from TM x 2 matrix tiles (16 x 16 x 16 or Intel's 8 x 16 x 16)
; whose accumulators a K loop carries, in work-groups of four sub-groups. The plain kernels load
; and store with joint_matrix_load and joint_matrix_store (m and n multiples of 32, k of 16);
; the _checked ones with joint_matrix_load_checked and joint_matrix_store_checked over the
; m x n x k region (any m, n and k: tiles past the edges read zeros and write nothing), in
; ceil(m / 32) x ceil(n / 32) sub-groups.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

declare spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0), target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1), target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2), i32)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z75__spirv_CompositeConstruct_R45__spirv_CooperativeMatrixKHR__float_3_16_16_2f(float)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0), target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32)
declare spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z74__spirv_CompositeConstruct_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2f(float)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS1DF16_il(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS1DF16_iiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1), i32, i64)
declare spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1), i32, i32, i32, i32, i32, i64)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32, i64)
declare spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2il(ptr addrspace(1), target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2), i32, i64)
declare spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1), i32, i32, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2), i32, i32, i32, i64)
declare spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2iiil(ptr addrspace(1), i32, i32, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2), i32, i32, i32, i64)

define spir_kernel void @jm_gemm_16x16_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %m, i32 %n, i32 %k) !intel_reqd_sub_group_size !32 !reqd_work_group_size !1128 {
entry:
  %gid = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %gid32 = trunc i64 %gid to i32
  %tile = udiv i32 %gid32, 32
  %n31 = add i32 %n, 31
  %tiles_n = udiv i32 %n31, 32
  %tr = udiv i32 %tile, %tiles_n
  %tc = urem i32 %tile, %tiles_n
  %m0 = mul i32 %tr, 32
  %n0 = mul i32 %tc, 32
  %k64 = zext i32 %k to i64
  %n64 = zext i32 %n to i64
  %zero = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z75__spirv_CompositeConstruct_R45__spirv_CooperativeMatrixKHR__float_3_16_16_2f(float 0.0)
  %row0 = add i32 %m0, 0
  %row1 = add i32 %m0, 16
  %col0 = add i32 %n0, 0
  %col1 = add i32 %n0, 16
  %any = icmp ugt i32 %k, 0
  br i1 %any, label %loop, label %done
loop:
  %k0 = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %acc01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %acc10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %acc11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %k0_64 = zext i32 %k0 to i64
  %arow0 = zext i32 %row0 to i64
  %aoff0a = mul i64 %arow0, %k64
  %aoff0 = add i64 %aoff0a, %k0_64
  %pa0 = getelementptr inbounds half, ptr addrspace(1) %a, i64 %aoff0
  %ma0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS1DF16_il(ptr addrspace(1) %pa0, i32 0, i64 %k64)
  %arow1 = zext i32 %row1 to i64
  %aoff1a = mul i64 %arow1, %k64
  %aoff1 = add i64 %aoff1a, %k0_64
  %pa1 = getelementptr inbounds half, ptr addrspace(1) %a, i64 %aoff1
  %ma1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS1DF16_il(ptr addrspace(1) %pa1, i32 0, i64 %k64)
  %bcol0 = zext i32 %col0 to i64
  %boff0a = mul i64 %k0_64, %n64
  %boff0 = add i64 %boff0a, %bcol0
  %pb0 = getelementptr inbounds half, ptr addrspace(1) %b, i64 %boff0
  %mb0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %pb0, i32 0, i64 %n64)
  %bcol1 = zext i32 %col1 to i64
  %boff1a = mul i64 %k0_64, %n64
  %boff1 = add i64 %boff1a, %bcol1
  %pb1 = getelementptr inbounds half, ptr addrspace(1) %b, i64 %boff1
  %mb1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %pb1, i32 0, i64 %n64)
  %nacc00 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc00, i32 0)
  %nacc01 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc01, i32 0)
  %nacc10 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc10, i32 0)
  %nacc11 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc11, i32 0)
  %k1 = add i32 %k0, 16
  %more = icmp ult i32 %k1, %k
  br i1 %more, label %loop, label %done
done:
  %res00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %res01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %res10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %res11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %drow00 = zext i32 %row0 to i64
  %dcol00 = zext i32 %col0 to i64
  %doff00a = mul i64 %drow00, %n64
  %doff00 = add i64 %doff00a, %dcol00
  %pd00 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff00
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2il(ptr addrspace(1) %pd00, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res00, i32 0, i64 %n64)
  %drow01 = zext i32 %row0 to i64
  %dcol01 = zext i32 %col1 to i64
  %doff01a = mul i64 %drow01, %n64
  %doff01 = add i64 %doff01a, %dcol01
  %pd01 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff01
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2il(ptr addrspace(1) %pd01, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res01, i32 0, i64 %n64)
  %drow10 = zext i32 %row1 to i64
  %dcol10 = zext i32 %col0 to i64
  %doff10a = mul i64 %drow10, %n64
  %doff10 = add i64 %doff10a, %dcol10
  %pd10 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff10
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2il(ptr addrspace(1) %pd10, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res10, i32 0, i64 %n64)
  %drow11 = zext i32 %row1 to i64
  %dcol11 = zext i32 %col1 to i64
  %doff11a = mul i64 %drow11, %n64
  %doff11 = add i64 %doff11a, %dcol11
  %pd11 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff11
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2il(ptr addrspace(1) %pd11, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res11, i32 0, i64 %n64)
  ret void
}

define spir_kernel void @jm_gemm_16x16_sg32_checked(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %m, i32 %n, i32 %k) !intel_reqd_sub_group_size !32 !reqd_work_group_size !1128 {
entry:
  %gid = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %gid32 = trunc i64 %gid to i32
  %tile = udiv i32 %gid32, 32
  %n31 = add i32 %n, 31
  %tiles_n = udiv i32 %n31, 32
  %tr = udiv i32 %tile, %tiles_n
  %tc = urem i32 %tile, %tiles_n
  %m0 = mul i32 %tr, 32
  %n0 = mul i32 %tc, 32
  %k64 = zext i32 %k to i64
  %n64 = zext i32 %n to i64
  %zero = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z75__spirv_CompositeConstruct_R45__spirv_CooperativeMatrixKHR__float_3_16_16_2f(float 0.0)
  %row0 = add i32 %m0, 0
  %row1 = add i32 %m0, 16
  %col0 = add i32 %n0, 0
  %col1 = add i32 %n0, 16
  %any = icmp ugt i32 %k, 0
  br i1 %any, label %loop, label %done
loop:
  %k0 = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %acc01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %acc10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %acc11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %k0_64 = zext i32 %k0 to i64
  %ma0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row0, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row1, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %mb0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col0, i32 0, i32 %k, i32 %n, i64 %n64)
  %mb1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col1, i32 0, i32 %k, i32 %n, i64 %n64)
  %nacc00 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc00, i32 0)
  %nacc01 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc01, i32 0)
  %nacc10 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc10, i32 0)
  %nacc11 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %acc11, i32 0)
  %k1 = add i32 %k0, 16
  %more = icmp ult i32 %k1, %k
  br i1 %more, label %loop, label %done
done:
  %res00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %res01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %res10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %res11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res00, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res01, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res10, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS145__spirv_CooperativeMatrixKHR__float_3_16_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 16, 16, 2) %res11, i32 0, i32 %m, i32 %n, i64 %n64)
  ret void
}

define spir_kernel void @jm_gemm_8x16_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %m, i32 %n, i32 %k) !intel_reqd_sub_group_size !32 !reqd_work_group_size !1128 {
entry:
  %gid = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %gid32 = trunc i64 %gid to i32
  %tile = udiv i32 %gid32, 32
  %n31 = add i32 %n, 31
  %tiles_n = udiv i32 %n31, 32
  %tr = udiv i32 %tile, %tiles_n
  %tc = urem i32 %tile, %tiles_n
  %m0 = mul i32 %tr, 32
  %n0 = mul i32 %tc, 32
  %k64 = zext i32 %k to i64
  %n64 = zext i32 %n to i64
  %zero = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z74__spirv_CompositeConstruct_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2f(float 0.0)
  %row0 = add i32 %m0, 0
  %row1 = add i32 %m0, 8
  %row2 = add i32 %m0, 16
  %row3 = add i32 %m0, 24
  %col0 = add i32 %n0, 0
  %col1 = add i32 %n0, 16
  %any = icmp ugt i32 %k, 0
  br i1 %any, label %loop, label %done
loop:
  %k0 = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %acc01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %acc10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %acc11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %acc20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %acc21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %acc30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %acc31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  %k0_64 = zext i32 %k0 to i64
  %arow0 = zext i32 %row0 to i64
  %aoff0a = mul i64 %arow0, %k64
  %aoff0 = add i64 %aoff0a, %k0_64
  %pa0 = getelementptr inbounds half, ptr addrspace(1) %a, i64 %aoff0
  %ma0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %pa0, i32 0, i64 %k64)
  %arow1 = zext i32 %row1 to i64
  %aoff1a = mul i64 %arow1, %k64
  %aoff1 = add i64 %aoff1a, %k0_64
  %pa1 = getelementptr inbounds half, ptr addrspace(1) %a, i64 %aoff1
  %ma1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %pa1, i32 0, i64 %k64)
  %arow2 = zext i32 %row2 to i64
  %aoff2a = mul i64 %arow2, %k64
  %aoff2 = add i64 %aoff2a, %k0_64
  %pa2 = getelementptr inbounds half, ptr addrspace(1) %a, i64 %aoff2
  %ma2 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %pa2, i32 0, i64 %k64)
  %arow3 = zext i32 %row3 to i64
  %aoff3a = mul i64 %arow3, %k64
  %aoff3 = add i64 %aoff3a, %k0_64
  %pa3 = getelementptr inbounds half, ptr addrspace(1) %a, i64 %aoff3
  %ma3 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z79__spirv_CooperativeMatrixLoadKHR_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_il(ptr addrspace(1) %pa3, i32 0, i64 %k64)
  %bcol0 = zext i32 %col0 to i64
  %boff0a = mul i64 %k0_64, %n64
  %boff0 = add i64 %boff0a, %bcol0
  %pb0 = getelementptr inbounds half, ptr addrspace(1) %b, i64 %boff0
  %mb0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %pb0, i32 0, i64 %n64)
  %bcol1 = zext i32 %col1 to i64
  %boff1a = mul i64 %k0_64, %n64
  %boff1 = add i64 %boff1a, %bcol1
  %pb1 = getelementptr inbounds half, ptr addrspace(1) %b, i64 %boff1
  %mb1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z80__spirv_CooperativeMatrixLoadKHR_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_il(ptr addrspace(1) %pb1, i32 0, i64 %n64)
  %nacc00 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc00, i32 0)
  %nacc01 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc01, i32 0)
  %nacc10 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc10, i32 0)
  %nacc11 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc11, i32 0)
  %nacc20 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc20, i32 0)
  %nacc21 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc21, i32 0)
  %nacc30 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc30, i32 0)
  %nacc31 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc31, i32 0)
  %k1 = add i32 %k0, 16
  %more = icmp ult i32 %k1, %k
  br i1 %more, label %loop, label %done
done:
  %res00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %res01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %res10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %res11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %res20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %res21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %res30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %res31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  %drow00 = zext i32 %row0 to i64
  %dcol00 = zext i32 %col0 to i64
  %doff00a = mul i64 %drow00, %n64
  %doff00 = add i64 %doff00a, %dcol00
  %pd00 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff00
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd00, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res00, i32 0, i64 %n64)
  %drow01 = zext i32 %row0 to i64
  %dcol01 = zext i32 %col1 to i64
  %doff01a = mul i64 %drow01, %n64
  %doff01 = add i64 %doff01a, %dcol01
  %pd01 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff01
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd01, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res01, i32 0, i64 %n64)
  %drow10 = zext i32 %row1 to i64
  %dcol10 = zext i32 %col0 to i64
  %doff10a = mul i64 %drow10, %n64
  %doff10 = add i64 %doff10a, %dcol10
  %pd10 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff10
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd10, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res10, i32 0, i64 %n64)
  %drow11 = zext i32 %row1 to i64
  %dcol11 = zext i32 %col1 to i64
  %doff11a = mul i64 %drow11, %n64
  %doff11 = add i64 %doff11a, %dcol11
  %pd11 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff11
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd11, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res11, i32 0, i64 %n64)
  %drow20 = zext i32 %row2 to i64
  %dcol20 = zext i32 %col0 to i64
  %doff20a = mul i64 %drow20, %n64
  %doff20 = add i64 %doff20a, %dcol20
  %pd20 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff20
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd20, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res20, i32 0, i64 %n64)
  %drow21 = zext i32 %row2 to i64
  %dcol21 = zext i32 %col1 to i64
  %doff21a = mul i64 %drow21, %n64
  %doff21 = add i64 %doff21a, %dcol21
  %pd21 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff21
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd21, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res21, i32 0, i64 %n64)
  %drow30 = zext i32 %row3 to i64
  %dcol30 = zext i32 %col0 to i64
  %doff30a = mul i64 %drow30, %n64
  %doff30 = add i64 %doff30a, %dcol30
  %pd30 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff30
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd30, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res30, i32 0, i64 %n64)
  %drow31 = zext i32 %row3 to i64
  %dcol31 = zext i32 %col1 to i64
  %doff31a = mul i64 %drow31, %n64
  %doff31 = add i64 %doff31a, %dcol31
  %pd31 = getelementptr inbounds float, ptr addrspace(1) %d, i64 %doff31
  call spir_func void @_Z33__spirv_CooperativeMatrixStoreKHRPU3AS1fPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2il(ptr addrspace(1) %pd31, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res31, i32 0, i64 %n64)
  ret void
}

define spir_kernel void @jm_gemm_8x16_sg32_checked(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %m, i32 %n, i32 %k) !intel_reqd_sub_group_size !32 !reqd_work_group_size !1128 {
entry:
  %gid = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %gid32 = trunc i64 %gid to i32
  %tile = udiv i32 %gid32, 32
  %n31 = add i32 %n, 31
  %tiles_n = udiv i32 %n31, 32
  %tr = udiv i32 %tile, %tiles_n
  %tc = urem i32 %tile, %tiles_n
  %m0 = mul i32 %tr, 32
  %n0 = mul i32 %tc, 32
  %k64 = zext i32 %k to i64
  %n64 = zext i32 %n to i64
  %zero = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z74__spirv_CompositeConstruct_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2f(float 0.0)
  %row0 = add i32 %m0, 0
  %row1 = add i32 %m0, 8
  %row2 = add i32 %m0, 16
  %row3 = add i32 %m0, 24
  %col0 = add i32 %n0, 0
  %col1 = add i32 %n0, 16
  %any = icmp ugt i32 %k, 0
  br i1 %any, label %loop, label %done
loop:
  %k0 = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %acc01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %acc10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %acc11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %acc20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %acc21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %acc30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %acc31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  %k0_64 = zext i32 %k0 to i64
  %ma0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row0, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row1, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma2 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row2, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma3 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row3, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %mb0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col0, i32 0, i32 %k, i32 %n, i64 %n64)
  %mb1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col1, i32 0, i32 %k, i32 %n, i64 %n64)
  %nacc00 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc00, i32 0)
  %nacc01 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc01, i32 0)
  %nacc10 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc10, i32 0)
  %nacc11 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc11, i32 0)
  %nacc20 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc20, i32 0)
  %nacc21 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc21, i32 0)
  %nacc30 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc30, i32 0)
  %nacc31 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc31, i32 0)
  %k1 = add i32 %k0, 16
  %more = icmp ult i32 %k1, %k
  br i1 %more, label %loop, label %done
done:
  %res00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %res01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %res10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %res11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %res20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %res21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %res30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %res31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res00, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res01, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res10, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res11, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row2, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res20, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row2, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res21, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row3, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res30, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row3, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res31, i32 0, i32 %m, i32 %n, i64 %n64)
  ret void
}

define spir_kernel void @jm_gemm_8x16_sg16_checked(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %m, i32 %n, i32 %k) !intel_reqd_sub_group_size !16 !reqd_work_group_size !1064 {
entry:
  %gid = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %gid32 = trunc i64 %gid to i32
  %tile = udiv i32 %gid32, 16
  %n31 = add i32 %n, 31
  %tiles_n = udiv i32 %n31, 32
  %tr = udiv i32 %tile, %tiles_n
  %tc = urem i32 %tile, %tiles_n
  %m0 = mul i32 %tr, 32
  %n0 = mul i32 %tc, 32
  %k64 = zext i32 %k to i64
  %n64 = zext i32 %n to i64
  %zero = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z74__spirv_CompositeConstruct_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2f(float 0.0)
  %row0 = add i32 %m0, 0
  %row1 = add i32 %m0, 8
  %row2 = add i32 %m0, 16
  %row3 = add i32 %m0, 24
  %col0 = add i32 %n0, 0
  %col1 = add i32 %n0, 16
  %any = icmp ugt i32 %k, 0
  br i1 %any, label %loop, label %done
loop:
  %k0 = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %acc01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %acc10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %acc11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %acc20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %acc21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %acc30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %acc31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  %k0_64 = zext i32 %k0 to i64
  %ma0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row0, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row1, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma2 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row2, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma3 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row3, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %mb0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col0, i32 0, i32 %k, i32 %n, i64 %n64)
  %mb1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col1, i32 0, i32 %k, i32 %n, i64 %n64)
  %nacc00 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc00, i32 0)
  %nacc01 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc01, i32 0)
  %nacc10 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc10, i32 0)
  %nacc11 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc11, i32 0)
  %nacc20 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc20, i32 0)
  %nacc21 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc21, i32 0)
  %nacc30 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc30, i32 0)
  %nacc31 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc31, i32 0)
  %k1 = add i32 %k0, 16
  %more = icmp ult i32 %k1, %k
  br i1 %more, label %loop, label %done
done:
  %res00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %res01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %res10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %res11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %res20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %res21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %res30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %res31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res00, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res01, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res10, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res11, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row2, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res20, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row2, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res21, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row3, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res30, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row3, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res31, i32 0, i32 %m, i32 %n, i64 %n64)
  ret void
}

define spir_kernel void @jm_gemm_8x16_sg8_checked(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d, i32 %m, i32 %n, i32 %k) !intel_reqd_sub_group_size !8 !reqd_work_group_size !1032 {
entry:
  %gid = call spir_func i64 @_Z33__spirv_BuiltInGlobalInvocationIdi(i32 0)
  %gid32 = trunc i64 %gid to i32
  %tile = udiv i32 %gid32, 8
  %n31 = add i32 %n, 31
  %tiles_n = udiv i32 %n31, 32
  %tr = udiv i32 %tile, %tiles_n
  %tc = urem i32 %tile, %tiles_n
  %m0 = mul i32 %tr, 32
  %n0 = mul i32 %tc, 32
  %k64 = zext i32 %k to i64
  %n64 = zext i32 %n to i64
  %zero = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z74__spirv_CompositeConstruct_R44__spirv_CooperativeMatrixKHR__float_3_8_16_2f(float 0.0)
  %row0 = add i32 %m0, 0
  %row1 = add i32 %m0, 8
  %row2 = add i32 %m0, 16
  %row3 = add i32 %m0, 24
  %col0 = add i32 %n0, 0
  %col1 = add i32 %n0, 16
  %any = icmp ugt i32 %k, 0
  br i1 %any, label %loop, label %done
loop:
  %k0 = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %acc01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %acc10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %acc11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %acc20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %acc21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %acc30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %acc31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  %k0_64 = zext i32 %k0 to i64
  %ma0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row0, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row1, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma2 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row2, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %ma3 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) @_Z88__spirv_CooperativeMatrixLoadCheckedINTEL_R43__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS1DF16_iiiiil(ptr addrspace(1) %a, i32 %row3, i32 %k0, i32 0, i32 %m, i32 %k, i64 %k64)
  %mb0 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col0, i32 0, i32 %k, i32 %n, i64 %n64)
  %mb1 = call spir_func target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) @_Z89__spirv_CooperativeMatrixLoadCheckedINTEL_R44__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS1DF16_iiiiil(ptr addrspace(1) %b, i32 %k0, i32 %col1, i32 0, i32 %k, i32 %n, i64 %n64)
  %nacc00 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc00, i32 0)
  %nacc01 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma0, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc01, i32 0)
  %nacc10 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc10, i32 0)
  %nacc11 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma1, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc11, i32 0)
  %nacc20 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc20, i32 0)
  %nacc21 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma2, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc21, i32 0)
  %nacc30 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc30, i32 0)
  %nacc31 = call spir_func target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) @_Z34__spirv_CooperativeMatrixMulAddKHRPU3AS143__spirv_CooperativeMatrixKHR__half_3_8_16_0PU3AS144__spirv_CooperativeMatrixKHR__half_3_16_16_1PU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2i(target("spirv.CooperativeMatrixKHR", half, 3, 8, 16, 0) %ma3, target("spirv.CooperativeMatrixKHR", half, 3, 16, 16, 1) %mb1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %acc31, i32 0)
  %k1 = add i32 %k0, 16
  %more = icmp ult i32 %k1, %k
  br i1 %more, label %loop, label %done
done:
  %res00 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc00, %loop ]
  %res01 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc01, %loop ]
  %res10 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc10, %loop ]
  %res11 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc11, %loop ]
  %res20 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc20, %loop ]
  %res21 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc21, %loop ]
  %res30 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc30, %loop ]
  %res31 = phi target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) [ %zero, %entry ], [ %nacc31, %loop ]
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res00, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row0, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res01, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res10, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row1, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res11, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row2, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res20, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row2, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res21, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row3, i32 %col0, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res30, i32 0, i32 %m, i32 %n, i64 %n64)
  call spir_func void @_Z42__spirv_CooperativeMatrixStoreCheckedINTELPU3AS1fiiPU3AS144__spirv_CooperativeMatrixKHR__float_3_8_16_2iiil(ptr addrspace(1) %d, i32 %row3, i32 %col1, target("spirv.CooperativeMatrixKHR", float, 3, 8, 16, 2) %res31, i32 0, i32 %m, i32 %n, i64 %n64)
  ret void
}

!8 = !{i32 8}
!16 = !{i32 16}
!32 = !{i32 32}
!1032 = !{i32 32, i32 1, i32 1}
!1064 = !{i32 64, i32 1, i32 1}
!1128 = !{i32 128, i32 1, i32 1}
