//! Kernel lowering on inputs real producers do not emit but may: loops with several entries,
//! and the repairs of producer defects.

use matbridge_translator::{tools, translate, DeviceCaps, Error};

fn tools_present() -> bool {
    let present = tools::find("spirv-as").is_some();
    assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
    present
}

/// A loop with two entries (both %a and %b are reached from the entry block and branch to
/// each other) gets one header (`reduce-irreducible-loops`) and then structures: the
/// translation validates for Vulkan.
#[test]
fn loops_with_two_entries_get_one_header_and_validate() {
    if !tools_present() {
        return;
    }
    let text = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpName %k "k"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
         %fn = OpTypeFunction %void %uint
          %k = OpFunction %void None %fn
          %n = OpFunctionParameter %uint
      %entry = OpLabel
         %c0 = OpULessThan %bool %n %uint_1
               OpBranchConditional %c0 %a %b
          %a = OpLabel
         %c1 = OpIEqual %bool %n %uint_0
               OpBranchConditional %c1 %b %exit
          %b = OpLabel
         %c2 = OpIEqual %bool %n %uint_1
               OpBranchConditional %c2 %a %exit
       %exit = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(text, "opencl1.2").unwrap();
    let (out, report) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    assert!(report.passes.iter().any(|p| p.name == "reduce-irreducible-loops" && p.changed), "{:?}", report.passes.iter().filter(|p| p.changed).map(|p| p.name).collect::<Vec<_>>());
    tools::validate(&out, "vulkan1.3").unwrap();
}

/// A kernel whose loop exits to two places and whose switch falls through validates for
/// Vulkan after structurizing, and a duplicated decoration (as llvm-spirv 2024 writes) is gone.
#[test]
fn structurized_kernels_validate_and_duplicate_decorations_go() {
    if !tools_present() {
        return;
    }
    let text = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpDecorate %next NoSignedWrap
               OpDecorate %next NoSignedWrap
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_7 = OpConstant %uint 7
    %ptr_cw = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %ptr_cw %uint
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %ptr_cw
          %n = OpFunctionParameter %uint
      %entry = OpLabel
               OpBranch %head
       %head = OpLabel
          %i = OpPhi %uint %uint_0 %entry %next %latch
       %done = OpUGreaterThanEqual %bool %i %n
               OpBranchConditional %done %out1 %body
       %body = OpLabel
         %is7 = OpIEqual %bool %i %uint_7
               OpBranchConditional %is7 %out2 %latch
      %latch = OpLabel
       %next = OpIAdd %uint %i %uint_1
               OpSwitch %i %head 3 %case3 4 %case4
      %case3 = OpLabel
               OpBranch %case4
      %case4 = OpLabel
               OpBranch %head
       %out1 = OpLabel
               OpStore %p %i Aligned 4
               OpReturn
       %out2 = OpLabel
               OpStore %p %uint_7 Aligned 4
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(text, "opencl1.2").unwrap();
    for caps in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let (out, _) = translate(&words, &caps).unwrap_or_else(|e| panic!("{}: {e}", caps.name));
        tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", caps.name));
        let dis = tools::disassemble(&out).unwrap();
        assert!(dis.contains("OpLoopMerge") && dis.contains("OpSelectionMerge"), "{dis}");
        assert_eq!(dis.matches("NoSignedWrap").count(), 1, "{dis}");
    }
}

/// float8 in workgroup memory (flattened to components by the pointer lowering) translates and
/// validates; a float8 inside a struct in a buffer cannot be split into vectors of four, and the
/// error names what holds it instead of writing a module that needs `Vector16`.
#[test]
fn wide_vectors_in_workgroup_memory_split_and_in_structs_are_refused() {
    if !tools_present() {
        return;
    }
    let kernel = |holder: &str, body: &str| {
        format!(
            r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Vector16
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
      %float = OpTypeFloat 32
    %v8float = OpTypeVector %float 8
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_4 = OpConstant %uint 4
        %arr = OpTypeArray %v8float %uint_4
      %p_arr = OpTypePointer Workgroup %arr
       %p_v8 = OpTypePointer Workgroup %v8float
      %p_out = OpTypePointer CrossWorkgroup %v8float
     %holder = OpTypeStruct {holder} %float
   %p_holder = OpTypePointer CrossWorkgroup %holder
       %tile = OpVariable %p_arr Workgroup
         %fn = OpTypeFunction %void %p_out %p_holder
          %k = OpFunction %void None %fn
        %out = OpFunctionParameter %p_out
         %in = OpFunctionParameter %p_holder
      %entry = OpLabel
{body}
               OpReturn
               OpFunctionEnd
"#
        )
    };
    let local = "        %ptr = OpInBoundsAccessChain %p_v8 %tile %uint_0
          %v = OpLoad %v8float %ptr Aligned 32
               OpStore %out %v Aligned 32";
    let member = "        %ptr = OpInBoundsAccessChain %p_out %in %uint_0
          %v = OpLoad %v8float %ptr Aligned 32
               OpStore %out %v Aligned 32";
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader()] {
        let words = tools::assemble(&kernel("%float", local), "opencl1.2").unwrap();
        let (out, _) = translate(&words, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
        let words = tools::assemble(&kernel("%v8float", member), "opencl1.2").unwrap();
        let err = translate(&words, &target).unwrap_err().to_string();
        assert!(err.contains("vectors of more than 4 components in structs"), "{}: {err}", target.name);
    }
}

/// A pointer stepped from a PhysicalStorageBuffer pointer to f16 and carried around a loop by a
/// phi has no value once its type is legalized into words: refused by name on SwiftShader (the
/// phi is met before the step that feeds its back edge), accepted where f16 storage exists.
#[test]
fn stepped_narrow_pointers_in_phis_are_refused() {
    if !tools_present() {
        return;
    }
    let text = r#"
               OpCapability Shader
               OpCapability Float16
               OpCapability StorageBuffer16BitAccess
               OpCapability PhysicalStorageBufferAddresses
               OpCapability VariablePointers
               OpMemoryModel PhysicalStorageBuffer64 GLSL450
               OpEntryPoint GLCompute %main "main" %pc
               OpExecutionMode %main LocalSize 1 1 1
               OpMemberDecorate %P 0 Offset 0
               OpDecorate %P Block
               OpDecorate %ptr_half ArrayStride 2
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
       %half = OpTypeFloat 16
   %ptr_half = OpTypePointer PhysicalStorageBuffer %half
          %P = OpTypeStruct %ptr_half
     %ptr_pc = OpTypePointer PushConstant %P
   %ptr_pc_p = OpTypePointer PushConstant %ptr_half
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_8 = OpConstant %uint 8
     %half_1 = OpConstant %half 0x1p+0
         %pc = OpVariable %ptr_pc PushConstant
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %pp = OpAccessChain %ptr_pc_p %pc %uint_0
      %start = OpLoad %ptr_half %pp
               OpBranch %head
       %head = OpLabel
          %p = OpPhi %ptr_half %start %entry %next %cont
          %i = OpPhi %uint %uint_0 %entry %i1 %cont
               OpLoopMerge %exit %cont None
               OpBranch %body
       %body = OpLabel
               OpStore %p %half_1 Aligned 2
       %next = OpPtrAccessChain %ptr_half %p %uint_1
         %i1 = OpIAdd %uint %i %uint_1
       %more = OpULessThan %bool %i1 %uint_8
               OpBranchConditional %more %cont %exit
       %cont = OpLabel
               OpBranch %head
       %exit = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(text, "vulkan1.3").unwrap();
    let (native, _) = translate(&words, &DeviceCaps::lavapipe()).expect("lavapipe has f16 storage");
    tools::validate(&native, "vulkan1.3").unwrap();
    let err = translate(&words, &DeviceCaps::swiftshader()).unwrap_err();
    match &err {
        Error::Unsupported { site, missing, .. } => {
            assert_eq!(site.opcode, "OpPhi", "{err}");
            assert!(missing.contains("8- or 16-bit data"), "{err}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// A call of a function the module only declares (what clang writes at -O0 for a C99 `inline`
/// function that is not `static`) is refused naming the function, not left in the output.
#[test]
fn calls_of_imported_functions_are_refused_naming_them() {
    if !tools_present() {
        return;
    }
    let text = r#"
               OpCapability Addresses
               OpCapability Linkage
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpName %helper "helper"
               OpDecorate %helper LinkageAttributes "helper" Import
       %void = OpTypeVoid
      %float = OpTypeFloat 32
     %hfn = OpTypeFunction %float %float
         %fn = OpTypeFunction %void %float
     %helper = OpFunction %float None %hfn
          %x = OpFunctionParameter %float
               OpFunctionEnd
          %k = OpFunction %void None %fn
          %a = OpFunctionParameter %float
      %entry = OpLabel
          %r = OpFunctionCall %float %helper %a
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(text, "opencl1.2").unwrap();
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader()] {
        let e = translate(&words, &target).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Invalid { .. }) && msg.contains("OpFunctionCall") && msg.contains("calls helper") && msg.contains("without a body"), "{msg}");
    }
}

/// An image argument's interface, and the formats the launch gives it: a kernel that does not
/// say whether an integer image is signed (SPIR-V 1.0 has no SignExtend) takes the bound
/// image's signedness, its texels bit cast, and so does one that reads a float image as
/// integers.
#[test]
fn image_arguments_take_the_format_of_the_bound_image() {
    use matbridge_translator::kernel::{set_image_formats, ChannelOrder, ChannelType, ImageAccess, ImageFormat, KernelAbi, KernelArg, ScalarKind};
    use matbridge_translator::Module;
    if !tools_present() {
        return;
    }
    let text = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability ImageBasic
               OpCapability ImageReadWrite
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
     %v2uint = OpTypeVector %uint 2
     %v4uint = OpTypeVector %uint 4
     %uint_1 = OpConstant %uint 1
        %one = OpConstantComposite %v2uint %uint_1 %uint_1
        %img = OpTypeImage %void 2D 0 0 0 0 Unknown ReadWrite
         %fn = OpTypeFunction %void %img %v2uint
          %k = OpFunction %void None %fn
          %i = OpFunctionParameter %img
          %p = OpFunctionParameter %v2uint
      %entry = OpLabel
          %t = OpImageRead %v4uint %i %p
         %p1 = OpIAdd %v2uint %p %one
               OpImageWrite %i %p1 %t
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(text, "opencl1.2").unwrap();
    let (out, _) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let module = Module::from_words(&out).unwrap();
    let abi = KernelAbi::read(&module, "k").unwrap();
    assert_eq!(abi.args[0], KernelArg::Image { offset: 16, binding: 0, dims: 2, arrayed: false, texel_buffer: false, texel: ScalarKind::Uint, access: ImageAccess::ReadWrite });
    let mut signed = module.clone();
    set_image_formats(&mut signed, "k", &[(0, ImageFormat::new(ChannelOrder::RGBA, ChannelType::SignedInt16))]).unwrap();
    let words = signed.to_words();
    tools::validate(&words, "vulkan1.3").unwrap();
    let text = tools::disassemble(&words).unwrap();
    assert!(text.contains("OpTypeImage %int 2D 0 0 0 2 Rgba16i") && text.contains("OpBitcast %v4uint") && text.contains("OpBitcast %v4int"), "{text}");
    assert!(!text.contains("WithoutFormat"), "{text}");
    // A float image bound where the kernel reads integers: the bits are reinterpreted.
    let mut float = module.clone();
    set_image_formats(&mut float, "k", &[(0, ImageFormat::new(ChannelOrder::R, ChannelType::Float))]).unwrap();
    let words = float.to_words();
    tools::validate(&words, "vulkan1.3").unwrap();
    let text = tools::disassemble(&words).unwrap();
    assert!(text.contains("OpTypeImage %float 2D 0 0 0 2 R32f") && text.contains("OpBitcast %v4float"), "{text}");
}
