//! What no pass needs to touch passes through untouched; slightly wrong inputs come out valid;
//! shapes and types the target lists nowhere are clear errors.

use matbridge_translator::ir::grammar::legacy_joint_matrix;
use matbridge_translator::ir::{Module, MAGIC};
use matbridge_translator::{tools, translate, DeviceCaps, Error};
use spirv::{Capability, Op};

fn tools_present() -> bool {
    let present = tools::find("spirv-as").is_some();
    assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
    present
}

#[test]
fn execution_mode_id_and_unknown_opcodes_pass_through() {
    if !tools_present() {
        return;
    }
    // glslang (vulkan1.3 target) emits the NV matmul's workgroup size as LocalSizeId, an
    // OpExecutionModeId that rspirv's loader rejects.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/in/nv_to_khr/nv_matmul_s8.spvasm")).unwrap();
    assert!(text.contains("OpExecutionModeId %main LocalSizeId"));
    let words = tools::assemble(&text, "vulkan1.3").unwrap();
    let (out, _) = translate(&words, &DeviceCaps::h100()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let dis = tools::disassemble(&out).unwrap();
    assert!(dis.contains("OpExecutionModeId %main LocalSizeId"), "{dis}");

    // A legacy joint-matrix type (unknown to rspirv and SPIRV-Tools) is decoded from the
    // translator's own table: one without its Scope and Use is refused, naming it.
    let joint_type = [(5 << 16) | legacy_joint_matrix::TYPE_JOINT_MATRIX, 20, 7, 8, 9];
    let cap = (2 << 16) | Op::Capability as u32;
    let mut raw = vec![MAGIC, 0x0001_0500, 0, 30, 0, cap, Capability::Shader as u32, cap, legacy_joint_matrix::CAPABILITY];
    // Its operands, defined before it: %7 = f32, %10 = u32, %8 = %9 = 8.
    let word = |op: Op, n: u32| (n << 16) | op as u32;
    raw.extend_from_slice(&[word(Op::TypeFloat, 3), 7, 32, word(Op::TypeInt, 4), 10, 32, 0, word(Op::Constant, 4), 10, 8, 8, word(Op::Constant, 4), 10, 9, 8]);
    raw.extend_from_slice(&joint_type);
    let err = translate(&raw, &DeviceCaps::lavapipe()).unwrap_err().to_string();
    assert!(err.contains("OpTypeJointMatrixINTEL") && err.contains("lacks its Component Type, Rows, Columns or Scope"), "{err}");
}

#[test]
fn an_old_version_header_is_raised_to_what_the_module_uses() {
    if !tools_present() {
        return;
    }
    let mut words = matbridge_translator_test_kernel();
    words[1] = 0x0001_0000; // claims SPIR-V 1.0 but uses GroupNonUniform (1.3)
    assert!(tools::validate(&words, "vulkan1.3").is_err());
    let (out, report) = translate(&words, &DeviceCaps::swiftshader()).unwrap();
    assert_eq!(report.output_version, "1.3");
    tools::validate(&out, "vulkan1.3").unwrap();
}

/// A subgroup-arithmetic compute shader in SPIR-V 1.3.
fn matbridge_translator_test_kernel() -> Vec<u32> {
    let text = r#"
               OpCapability Shader
               OpCapability GroupNonUniform
               OpCapability GroupNonUniformArithmetic
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %buf Block
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %var DescriptorSet 0
               OpDecorate %var Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %buf = OpTypeStruct %uint
        %ptr = OpTypePointer StorageBuffer %buf
       %pint = OpTypePointer StorageBuffer %uint
        %var = OpVariable %ptr StorageBuffer
         %c0 = OpConstant %uint 0
         %c3 = OpConstant %uint 3
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %p = OpAccessChain %pint %var %c0
          %v = OpLoad %uint %p
          %s = OpGroupNonUniformIAdd %uint %c3 Reduce %v
               OpStore %p %s
               OpReturn
               OpFunctionEnd
"#;
    tools::assemble(text, "vulkan1.1").unwrap()
}

#[test]
fn unlisted_component_types_and_malformed_input_are_named() {
    if !tools_present() {
        return;
    }
    // An fp8 (E4M3) cooperative matrix: the H100 lists no fp8 shape.
    let text = r#"
               OpCapability Shader
               OpCapability Float8EXT
               OpCapability Float8CooperativeMatrixEXT
               OpCapability CooperativeMatrixKHR
               OpCapability VulkanMemoryModel
               OpExtension "SPV_EXT_float8"
               OpExtension "SPV_KHR_cooperative_matrix"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 32 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
         %f8 = OpTypeFloat 8 Float8E4M3EXT
         %c3 = OpConstant %uint 3
        %c16 = OpConstant %uint 16
         %c0 = OpConstant %uint 0
        %mat = OpTypeCooperativeMatrixKHR %f8 %c3 %c16 %c16 %c0
       %pmat = OpTypePointer Function %mat
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %m = OpVariable %pmat Function
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(text, "vulkan1.3").unwrap();
    let err = translate(&words, &DeviceCaps::h100()).unwrap_err();
    match &err {
        Error::Unsupported { site, missing, .. } => {
            assert_eq!(site.opcode, "OpTypeCooperativeMatrixKHR");
            assert!(missing.contains("e4m3"), "{err}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    // Truncated modules name the word offset.
    let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, (4 << 16) | Op::Capability as u32, Capability::Shader as u32]).unwrap_err();
    assert!(err.to_string().contains("word offset 5"), "{err}");
}

/// Declarations no valid module has are refused by the parser, naming the word offset: an id
/// defined twice, a vector of 5 components, a 7-bit integer.
#[test]
fn impossible_declarations_are_refused_where_they_are() {
    let inst = |op: Op, operands: &[u32]| -> Vec<u32> {
        let mut w = vec![((operands.len() as u32 + 1) << 16) | op as u32];
        w.extend_from_slice(operands);
        w
    };
    let module = |body: &[Vec<u32>]| -> Vec<u32> {
        let mut w = vec![MAGIC, 0x10300, 0, 10, 0];
        w.extend(inst(Op::Capability, &[Capability::Shader as u32]));
        for i in body {
            w.extend(i);
        }
        w
    };
    let twice = module(&[inst(Op::TypeInt, &[1, 32, 0]), inst(Op::TypeFloat, &[1, 32])]);
    let err = Module::from_words(&twice).unwrap_err().to_string();
    assert!(err.contains("defines id 1 again (first defined at word offset 7)") && err.contains("word offset 11"), "{err}");
    let vector = module(&[inst(Op::TypeInt, &[1, 32, 0]), inst(Op::TypeVector, &[2, 1, 5])]);
    let err = Module::from_words(&vector).unwrap_err().to_string();
    assert!(err.contains("5 components"), "{err}");
    let odd = module(&[inst(Op::TypeInt, &[1, 65, 0])]);
    let err = Module::from_words(&odd).unwrap_err().to_string();
    assert!(err.contains("65 bits wide"), "{err}");
    let odd = module(&[inst(Op::TypeFloat, &[1, 24])]);
    let err = Module::from_words(&odd).unwrap_err().to_string();
    assert!(err.contains("OpTypeFloat is 24 bits wide"), "{err}");
}
