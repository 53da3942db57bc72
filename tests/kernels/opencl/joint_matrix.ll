; llvm-spirv: --spirv-ext=+SPV_INTEL_joint_matrix
; SPV_INTEL_joint_matrix as DPC++ reaches llvm-spirv: the SPIR-V friendly LLVM IR of SYCL's
; joint_matrix (target("spirv.JointMatrixINTEL", component, rows, columns, layout, scope, use
; [, interpretation]) values and __spirv_JointMatrix*INTEL calls), which llvm-spirv writes in its
; own form of the extension. Each kernel is one sub-group: D = A * B + C, A, B and C loaded at
; the strides and layouts given (0 row-major, 1 column-major), D stored like C;
; scale_elements then sets every element x of D to 2x + 1 through the work-item's elements, and
; fill_f32 starts from C filled with 0.5 instead of loading it; the *_packed kernels load B in the
; Packed (VNNI) layout (mad_bf16_packed prefetching it first); element_coords* add 64 x row +
; column to every element of D through the element coordinates; store_packed stores B into D in
; the Packed layout; mad_f16_local loads A and B from local memory (mad_f16_local_bytes from
; local byte arrays, mad_f16_local_arg from a local-memory argument of 768 bytes); mad_f16_local_store stores D
; into local memory, which the work-items copy out.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_0(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_1(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_2(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_3(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0), target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_4(ptr addrspace(1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 1, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_5(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_6(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_7(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_8(target("spirv.JointMatrixINTEL", half, 8, 16, 1, 3, 0), target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1), target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_9(ptr addrspace(1), target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_10(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_11(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_12(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_13(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0), target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_14(ptr addrspace(1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_15(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_16(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_17(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_18(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0), target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1), target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_19(ptr addrspace(1), target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_20(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_21(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_22(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_23(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0), target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_24(ptr addrspace(1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_25(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_26(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_27(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z29__spirv_JointMatrixSUMadINTEL_28(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0), target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_29(ptr addrspace(1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_30(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_31(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_32(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z29__spirv_JointMatrixUSMadINTEL_33(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0), target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_34(ptr addrspace(1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_35(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_36(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_37(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z29__spirv_JointMatrixUUMadINTEL_38(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0), target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_39(ptr addrspace(1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_40(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 32, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_41(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_42(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_43(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0), target("spirv.JointMatrixINTEL", i8, 32, 16, 0, 3, 1), target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_44(ptr addrspace(1), target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i16, 8, 16, 0, 3, 0, 2) @_Z28__spirv_JointMatrixLoadINTEL_45(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i16, 16, 16, 0, 3, 1, 2) @_Z28__spirv_JointMatrixLoadINTEL_46(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_47(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_48(target("spirv.JointMatrixINTEL", i16, 8, 16, 0, 3, 0, 2), target("spirv.JointMatrixINTEL", i16, 16, 16, 0, 3, 1, 2), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_49(ptr addrspace(1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1) @_Z28__spirv_JointMatrixLoadINTEL_50(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 1, 1) @_Z28__spirv_JointMatrixLoadINTEL_51(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_52(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_53(target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1), target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 1, 1), target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_54(ptr addrspace(1), target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_55(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_56(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_57(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_58(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0), target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_59(ptr addrspace(1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i64, i32, i32, i32)
declare spir_func i64 @_Z38__spirv_JointMatrixWorkItemLengthINTEL_60(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2))
declare spir_func float @_Z28__spirv_VectorExtractDynamic_61(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i64)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_VectorInsertDynamic_62(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), float, i64)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1) @_Z28__spirv_JointMatrixLoadINTEL_63(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 1, 3, 1, 1) @_Z28__spirv_JointMatrixLoadINTEL_64(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_65(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_66(target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1), target("spirv.JointMatrixINTEL", float, 8, 8, 1, 3, 1, 1), target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_67(ptr addrspace(1), target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z26__spirv_CompositeConstruct_68(float)
declare spir_func target("spirv.JointMatrixINTEL", i16, 16, 16, 2, 3, 1, 2) @_Z28__spirv_JointMatrixLoadINTEL_70(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_71(target("spirv.JointMatrixINTEL", i16, 8, 16, 0, 3, 0, 2), target("spirv.JointMatrixINTEL", i16, 16, 16, 2, 3, 1, 2), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i32)
declare spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 3, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_72(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_73(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0), target("spirv.JointMatrixINTEL", i8, 32, 8, 3, 3, 1), target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2), i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 2, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_74(ptr addrspace(1), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_75(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0), target("spirv.JointMatrixINTEL", half, 16, 16, 2, 3, 1), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i32)
declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_77(ptr addrspace(1), target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1), i64, i32, i32, i32)
declare spir_func void @_Z38__spirv_CooperativeMatrixPrefetchINTEL(ptr addrspace(1), i32, i32, i32, i32, i64)
declare spir_func <2 x i32> @_Z39__spirv_JointMatrixGetElementCoordINTEL_76(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i64)

define spir_kernel void @mad_f16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_0(ptr addrspace(1) %a, i64 24, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_1(ptr addrspace(1) %b, i64 20, i32 1, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_2(ptr addrspace(1) %c, i64 18, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_3(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_4(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 18, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_f16_sg8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 1, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_5(ptr addrspace(1) %a, i64 16, i32 1, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_6(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_7(ptr addrspace(1) %c, i64 16, i32 1, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_8(target("spirv.JointMatrixINTEL", half, 8, 16, 1, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_9(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 1, 3, 2) %md, i64 16, i32 1, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_f16_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_10(ptr addrspace(1) %a, i64 24, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_11(ptr addrspace(1) %b, i64 20, i32 1, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_12(ptr addrspace(1) %c, i64 18, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_13(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_14(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 18, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_half_acc(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_15(ptr addrspace(1) %a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_16(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_17(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_18(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_19(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_s8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_20(ptr addrspace(1) %a, i64 40, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_21(ptr addrspace(1) %b, i64 12, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_22(ptr addrspace(1) %c, i64 8, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_23(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_24(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %md, i64 8, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_su8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_25(ptr addrspace(1) %a, i64 40, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_26(ptr addrspace(1) %b, i64 12, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_27(ptr addrspace(1) %c, i64 8, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z29__spirv_JointMatrixSUMadINTEL_28(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_29(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %md, i64 8, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_us8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_30(ptr addrspace(1) %a, i64 40, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_31(ptr addrspace(1) %b, i64 12, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_32(ptr addrspace(1) %c, i64 8, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z29__spirv_JointMatrixUSMadINTEL_33(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_34(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %md, i64 8, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_uu8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_35(ptr addrspace(1) %a, i64 40, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_36(ptr addrspace(1) %b, i64 12, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_37(ptr addrspace(1) %c, i64 8, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z29__spirv_JointMatrixUUMadINTEL_38(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", i8, 32, 8, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_39(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %md, i64 8, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_s8_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_40(ptr addrspace(1) %a, i64 32, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i8, 32, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_41(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_42(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_43(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", i8, 32, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_44(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", i32, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_bf16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", i16, 8, 16, 0, 3, 0, 2) @_Z28__spirv_JointMatrixLoadINTEL_45(ptr addrspace(1) %a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i16, 16, 16, 0, 3, 1, 2) @_Z28__spirv_JointMatrixLoadINTEL_46(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_47(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_48(target("spirv.JointMatrixINTEL", i16, 8, 16, 0, 3, 0, 2) %ma, target("spirv.JointMatrixINTEL", i16, 16, 16, 0, 3, 1, 2) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_49(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_tf32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1) @_Z28__spirv_JointMatrixLoadINTEL_50(ptr addrspace(1) %a, i64 8, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 1, 1) @_Z28__spirv_JointMatrixLoadINTEL_51(ptr addrspace(1) %b, i64 8, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_52(ptr addrspace(1) %c, i64 8, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_53(target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1) %ma, target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 1, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_54(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) %md, i64 8, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @scale_elements(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_55(ptr addrspace(1) %a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_56(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_57(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_58(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  %len = call spir_func i64 @_Z38__spirv_JointMatrixWorkItemLengthINTEL_60(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) [ %md, %entry ], [ %upd, %loop ]
  %x = call spir_func float @_Z28__spirv_VectorExtractDynamic_61(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, i64 %i)
  %y = fmul float %x, 2.0
  %z = fadd float %y, 1.0
  %upd = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_VectorInsertDynamic_62(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, float %z, i64 %i)
  %next = add nuw i64 %i, 1
  %more = icmp ult i64 %next, %len
  br i1 %more, label %loop, label %done
done:
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_59(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %upd, i64 16, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @fill_f32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1) @_Z28__spirv_JointMatrixLoadINTEL_63(ptr addrspace(1) %a, i64 8, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 1, 3, 1, 1) @_Z28__spirv_JointMatrixLoadINTEL_64(ptr addrspace(1) %b, i64 8, i32 1, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z26__spirv_CompositeConstruct_68(float 0x3FE0000000000000)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_66(target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 0, 1) %ma, target("spirv.JointMatrixINTEL", float, 8, 8, 1, 3, 1, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_67(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 8, 0, 3, 2) %md, i64 8, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_bf16_packed(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  call spir_func void @_Z38__spirv_CooperativeMatrixPrefetchINTEL(ptr addrspace(1) %b, i32 8, i32 32, i32 0, i32 0, i64 36)
  %ma = call spir_func target("spirv.JointMatrixINTEL", i16, 8, 16, 0, 3, 0, 2) @_Z28__spirv_JointMatrixLoadINTEL_45(ptr addrspace(1) %a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i16, 16, 16, 2, 3, 1, 2) @_Z28__spirv_JointMatrixLoadINTEL_70(ptr addrspace(1) %b, i64 36, i32 2, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_47(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_71(target("spirv.JointMatrixINTEL", i16, 8, 16, 0, 3, 0, 2) %ma, target("spirv.JointMatrixINTEL", i16, 16, 16, 2, 3, 1, 2) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_49(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_s8_packed(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !8 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_20(ptr addrspace(1) %a, i64 40, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", i8, 32, 8, 3, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_72(ptr addrspace(1) %b, i64 32, i32 3, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_22(ptr addrspace(1) %c, i64 8, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_73(target("spirv.JointMatrixINTEL", i8, 8, 32, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", i8, 32, 8, 3, 3, 1) %mb, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_24(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", i32, 8, 8, 0, 3, 2) %md, i64 8, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @mad_f16_packed_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_10(ptr addrspace(1) %a, i64 24, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 2, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_74(ptr addrspace(1) %b, i64 34, i32 2, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_12(ptr addrspace(1) %c, i64 18, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_75(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 2, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_14(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 18, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @element_coords(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_55(ptr addrspace(1) %a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_56(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_57(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_58(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  %len = call spir_func i64 @_Z38__spirv_JointMatrixWorkItemLengthINTEL_60(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) [ %md, %entry ], [ %upd, %loop ]
  %x = call spir_func float @_Z28__spirv_VectorExtractDynamic_61(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, i64 %i)
  %rc = call spir_func <2 x i32> @_Z39__spirv_JointMatrixGetElementCoordINTEL_76(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, i64 %i)
  %r = extractelement <2 x i32> %rc, i32 0
  %col = extractelement <2 x i32> %rc, i32 1
  %r64 = mul i32 %r, 64
  %pos = add i32 %r64, %col
  %posf = uitofp i32 %pos to float
  %z = fadd float %x, %posf
  %upd = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_VectorInsertDynamic_62(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, float %z, i64 %i)
  %next = add nuw i64 %i, 1
  %more = icmp ult i64 %next, %len
  br i1 %more, label %loop, label %done
done:
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_59(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %upd, i64 16, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @element_coords_sg32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !32 {
entry:
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_10(ptr addrspace(1) %a, i64 24, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_11(ptr addrspace(1) %b, i64 20, i32 1, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_12(ptr addrspace(1) %c, i64 18, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_13(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 1, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  %len = call spir_func i64 @_Z38__spirv_JointMatrixWorkItemLengthINTEL_60(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) [ %md, %entry ], [ %upd, %loop ]
  %x = call spir_func float @_Z28__spirv_VectorExtractDynamic_61(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, i64 %i)
  %rc = call spir_func <2 x i32> @_Z39__spirv_JointMatrixGetElementCoordINTEL_76(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, i64 %i)
  %r = extractelement <2 x i32> %rc, i32 0
  %col = extractelement <2 x i32> %rc, i32 1
  %r64 = mul i32 %r, 64
  %pos = add i32 %r64, %col
  %posf = uitofp i32 %pos to float
  %z = fadd float %x, %posf
  %upd = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_VectorInsertDynamic_62(target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %acc, float %z, i64 %i)
  %next = add nuw i64 %i, 1
  %more = icmp ult i64 %next, %len
  br i1 %more, label %loop, label %done
done:
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_14(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %upd, i64 18, i32 0, i32 3, i32 0)
  ret void
}

define spir_kernel void @store_packed(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_56(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_77(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, i64 36, i32 2, i32 3, i32 0)
  ret void
}

; A and B staged through local memory by the sub-group's work-items (DPC++'s tiled GEMMs load
; joint matrices from local accessors), C from global memory. (Each tile its own array:
; llvm-spirv writes OpUndef for a constant address inside one.)
@tile_a = internal addrspace(3) global [128 x half] undef, align 2
@tile_b = internal addrspace(3) global [256 x half] undef, align 2

declare spir_func i32 @_Z40__spirv_BuiltInSubgroupLocalInvocationIdv()
declare spir_func void @_Z22__spirv_ControlBarrieriii(i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_78(ptr addrspace(3), i64, i32, i32, i32)
declare spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_79(ptr addrspace(3), i64, i32, i32, i32)

define spir_kernel void @mad_f16_local(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %lid = call spir_func i32 @_Z40__spirv_BuiltInSubgroupLocalInvocationIdv()
  br label %copy_a
copy_a:
  %i = phi i32 [ %lid, %entry ], [ %next_a, %copy_a ]
  %at = zext i32 %i to i64
  %from_a = getelementptr inbounds half, ptr addrspace(1) %a, i64 %at
  %x = load half, ptr addrspace(1) %from_a, align 2
  %to_a = getelementptr inbounds [128 x half], ptr addrspace(3) @tile_a, i64 0, i64 %at
  store half %x, ptr addrspace(3) %to_a, align 2
  %next_a = add nuw nsw i32 %i, 16
  %more_a = icmp ult i32 %next_a, 128
  br i1 %more_a, label %copy_a, label %copy_b
copy_b:
  %j = phi i32 [ %lid, %copy_a ], [ %next_b, %copy_b ]
  %bt = zext i32 %j to i64
  %from_b = getelementptr inbounds half, ptr addrspace(1) %b, i64 %bt
  %y = load half, ptr addrspace(1) %from_b, align 2
  %to_b = getelementptr inbounds [256 x half], ptr addrspace(3) @tile_b, i64 0, i64 %bt
  store half %y, ptr addrspace(3) %to_b, align 2
  %next_b = add nuw nsw i32 %j, 16
  %more_b = icmp ult i32 %next_b, 256
  br i1 %more_b, label %copy_b, label %compute
compute:
  call spir_func void @_Z22__spirv_ControlBarrieriii(i32 2, i32 2, i32 272)
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_78(ptr addrspace(3) @tile_a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_79(ptr addrspace(3) @tile_b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_57(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_58(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_59(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  ret void
}

; The same with the tiles in byte arrays, copied byte by byte (a matrix of halves read through
; a local array of another element size).
@bytes_a = internal addrspace(3) global [256 x i8] undef, align 4
@bytes_b = internal addrspace(3) global [512 x i8] undef, align 4

define spir_kernel void @mad_f16_local_bytes(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %lid = call spir_func i32 @_Z40__spirv_BuiltInSubgroupLocalInvocationIdv()
  br label %copy_a
copy_a:
  %i = phi i32 [ %lid, %entry ], [ %next_a, %copy_a ]
  %at = zext i32 %i to i64
  %from_a = getelementptr inbounds i8, ptr addrspace(1) %a, i64 %at
  %x = load i8, ptr addrspace(1) %from_a, align 1
  %to_a = getelementptr inbounds [256 x i8], ptr addrspace(3) @bytes_a, i64 0, i64 %at
  store i8 %x, ptr addrspace(3) %to_a, align 1
  %next_a = add nuw nsw i32 %i, 16
  %more_a = icmp ult i32 %next_a, 256
  br i1 %more_a, label %copy_a, label %copy_b
copy_b:
  %j = phi i32 [ %lid, %copy_a ], [ %next_b, %copy_b ]
  %bt = zext i32 %j to i64
  %from_b = getelementptr inbounds i8, ptr addrspace(1) %b, i64 %bt
  %y = load i8, ptr addrspace(1) %from_b, align 1
  %to_b = getelementptr inbounds [512 x i8], ptr addrspace(3) @bytes_b, i64 0, i64 %bt
  store i8 %y, ptr addrspace(3) %to_b, align 1
  %next_b = add nuw nsw i32 %j, 16
  %more_b = icmp ult i32 %next_b, 512
  br i1 %more_b, label %copy_b, label %compute
compute:
  call spir_func void @_Z22__spirv_ControlBarrieriii(i32 2, i32 2, i32 272)
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_78(ptr addrspace(3) @bytes_a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_79(ptr addrspace(3) @bytes_b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_57(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_58(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_59(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  ret void
}

; The same with both tiles in one local-memory argument (SYCL's local accessor), B after A.
define spir_kernel void @mad_f16_local_arg(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d, ptr addrspace(3) %tiles) !intel_reqd_sub_group_size !16 {
entry:
  %lid = call spir_func i32 @_Z40__spirv_BuiltInSubgroupLocalInvocationIdv()
  %tile_b = getelementptr inbounds half, ptr addrspace(3) %tiles, i64 128
  br label %copy
copy:
  %i = phi i32 [ %lid, %entry ], [ %next, %copy ]
  %at = zext i32 %i to i64
  %in_a = icmp ult i32 %i, 128
  %b_at = sub i64 %at, 128
  %from_a = getelementptr inbounds half, ptr addrspace(1) %a, i64 %at
  %from_b = getelementptr inbounds half, ptr addrspace(1) %b, i64 %b_at
  %from = select i1 %in_a, ptr addrspace(1) %from_a, ptr addrspace(1) %from_b
  %x = load half, ptr addrspace(1) %from, align 2
  %to = getelementptr inbounds half, ptr addrspace(3) %tiles, i64 %at
  store half %x, ptr addrspace(3) %to, align 2
  %next = add nuw nsw i32 %i, 16
  %more = icmp ult i32 %next, 384
  br i1 %more, label %copy, label %compute
compute:
  call spir_func void @_Z22__spirv_ControlBarrieriii(i32 2, i32 2, i32 272)
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_78(ptr addrspace(3) %tiles, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_79(ptr addrspace(3) %tile_b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_57(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_58(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_59(ptr addrspace(1) %d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  ret void
}

; D stored into local memory and copied out by the work-items (an epilogue through local
; memory).
@tile_d = internal addrspace(3) global [128 x float] undef, align 4

declare spir_func void @_Z29__spirv_JointMatrixStoreINTEL_80(ptr addrspace(3), target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2), i64, i32, i32, i32)

define spir_kernel void @mad_f16_local_store(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) !intel_reqd_sub_group_size !16 {
entry:
  %lid = call spir_func i32 @_Z40__spirv_BuiltInSubgroupLocalInvocationIdv()
  %ma = call spir_func target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) @_Z28__spirv_JointMatrixLoadINTEL_55(ptr addrspace(1) %a, i64 16, i32 0, i32 3, i32 0)
  %mb = call spir_func target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) @_Z28__spirv_JointMatrixLoadINTEL_56(ptr addrspace(1) %b, i64 16, i32 0, i32 3, i32 0)
  %mc = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z28__spirv_JointMatrixLoadINTEL_57(ptr addrspace(1) %c, i64 16, i32 0, i32 3, i32 0)
  %md = call spir_func target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) @_Z27__spirv_JointMatrixMadINTEL_58(target("spirv.JointMatrixINTEL", half, 8, 16, 0, 3, 0) %ma, target("spirv.JointMatrixINTEL", half, 16, 16, 0, 3, 1) %mb, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %mc, i32 3)
  call spir_func void @_Z29__spirv_JointMatrixStoreINTEL_80(ptr addrspace(3) @tile_d, target("spirv.JointMatrixINTEL", float, 8, 16, 0, 3, 2) %md, i64 16, i32 0, i32 3, i32 0)
  call spir_func void @_Z22__spirv_ControlBarrieriii(i32 2, i32 2, i32 272)
  br label %copy
copy:
  %i = phi i32 [ %lid, %entry ], [ %next, %copy ]
  %at = zext i32 %i to i64
  %from = getelementptr inbounds [128 x float], ptr addrspace(3) @tile_d, i64 0, i64 %at
  %x = load float, ptr addrspace(3) %from, align 4
  %to = getelementptr inbounds float, ptr addrspace(1) %d, i64 %at
  store float %x, ptr addrspace(1) %to, align 4
  %next = add nuw nsw i32 %i, 16
  %more = icmp ult i32 %next, 128
  br i1 %more, label %copy, label %done
done:
  ret void
}

!8 = !{i32 8}
!16 = !{i32 16}
!32 = !{i32 32}
