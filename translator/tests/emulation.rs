//! Emulation decisions that snapshots would show only in thousands of lines.

use matbridge_translator::{tools, translate, DeviceCaps};

fn tools_present() -> bool {
    let present = tools::find("spirv-as").is_some();
    assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
    present
}

/// A kernel that loads 16x16 f32 A, B and C and chains `count` MulAdds into one result.
fn chained_mul_adds(count: usize) -> String {
    let mut body = String::from("         %d0 = OpCooperativeMatrixMulAddKHR %acc %a %b %c\n");
    for i in 1..count {
        body += &format!("         %d{i} = OpCooperativeMatrixMulAddKHR %acc %a %b %d{}\n", i - 1);
    }
    format!(
        r#"
               OpCapability Shader
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixKHR
               OpExtension "SPV_KHR_cooperative_matrix"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %arr ArrayStride 4
               OpDecorate %blk Block
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
    %uint_16 = OpConstant %uint 16
   %uint_256 = OpConstant %uint 256
   %uint_512 = OpConstant %uint 512
        %arr = OpTypeRuntimeArray %float
        %blk = OpTypeStruct %arr
       %pblk = OpTypePointer StorageBuffer %blk
     %pfloat = OpTypePointer StorageBuffer %float
        %buf = OpVariable %pblk StorageBuffer
       %ma_t = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_0
       %mb_t = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_1
        %acc = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_2
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %pa = OpAccessChain %pfloat %buf %uint_0 %uint_0
          %a = OpCooperativeMatrixLoadKHR %ma_t %pa %uint_0 %uint_16
         %pb = OpAccessChain %pfloat %buf %uint_0 %uint_256
          %b = OpCooperativeMatrixLoadKHR %mb_t %pb %uint_0 %uint_16
         %pc = OpAccessChain %pfloat %buf %uint_0 %uint_512
          %c = OpCooperativeMatrixLoadKHR %acc %pc %uint_0 %uint_16
{body}               OpCooperativeMatrixStoreKHR %pc %d{last} %uint_0 %uint_16
               OpReturn
               OpFunctionEnd
"#,
        last = count - 1
    )
}

/// Loops in the translation of `count` chained MulAdds for `target` (checked with spirv-val).
fn loops(count: usize, target: &DeviceCaps) -> usize {
    let input = tools::assemble(&chained_mul_adds(count), "vulkan1.3").expect("assembles");
    let (out, _) = translate(&input, target).unwrap_or_else(|e| panic!("{count} MulAdds for {}: {e}", target.name));
    tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{count} MulAdds for {}: {e}", target.name));
    tools::disassemble(&out).expect("disassembles").lines().filter(|l| l.contains("OpLoopMerge")).count()
}

/// A function's MulAdds are straight-line code up to 8192 multiply-adds per lane in all, and
/// loop over K past it: SwiftShader (sub-group 4, 1024 per 16x16x16 MulAdd) unrolls eight of
/// twelve, lavapipe (sub-group 8, 512 each) all twelve.
#[test]
fn mul_adds_past_the_unrolling_budget_loop_over_k() {
    if !tools_present() {
        return;
    }
    let swiftshader = DeviceCaps::swiftshader();
    assert_eq!(loops(12, &swiftshader), loops(8, &swiftshader) + 4);
    let lavapipe = DeviceCaps::lavapipe();
    assert_eq!(loops(12, &lavapipe), loops(8, &lavapipe));
}
