//! Capabilities, extensions and versions derived from what a module uses, and checked against
//! the target: the cases real producers hit.

use matbridge_translator::{tools, translate, DeviceCaps};

fn tools_present() -> bool {
    let present = tools::find("spirv-as").is_some();
    assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
    present
}

/// A compute kernel whose body is `body`, over `%v4char`/`%v4uchar` operands loaded from a buffer.
fn dot_kernel(extra_caps: &str, body: &str) -> String {
    format!(
        r#"
               OpCapability Shader
               OpCapability DotProduct
{extra_caps}
               OpExtension "SPV_KHR_integer_dot_product"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %var
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %buf Block
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %var DescriptorSet 0
               OpDecorate %var Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %int = OpTypeInt 32 1
       %char = OpTypeInt 8 1
      %uchar = OpTypeInt 8 0
     %v4char = OpTypeVector %char 4
    %v4uchar = OpTypeVector %uchar 4
        %buf = OpTypeStruct %int
        %ptr = OpTypePointer StorageBuffer %buf
       %pint = OpTypePointer StorageBuffer %int
        %var = OpVariable %ptr StorageBuffer
         %c0 = OpConstant %int 0
         %c3 = OpConstant %char 3
        %c5u = OpConstant %uchar 250
          %a = OpConstantComposite %v4char %c3 %c3 %c3 %c3
          %b = OpConstantComposite %v4uchar %c5u %c5u %c5u %c5u
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %p = OpAccessChain %pint %var %c0
        %acc = OpLoad %int %p
{body}
               OpReturn
               OpFunctionEnd
"#
    )
}

#[test]
fn mixed_signedness_dot_products_lower_to_valid_code_keeping_int8() {
    if !tools_present() {
        return;
    }
    let text = dot_kernel(
        "               OpCapability DotProductInput4x8Bit",
        "          %d = OpSUDot %int %a %b\n          %s = OpSUDotAccSat %int %a %b %acc\n         %t = OpIAdd %int %d %s\n               OpStore %p %t",
    );
    let words = tools::assemble(&text, "vulkan1.3").unwrap();
    // generic-subgroup has no shaderInt8: the 8-bit lanes are held in 32-bit integers.
    let (out, _) = translate(&words, &DeviceCaps::generic_subgroup()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    assert!(!tools::disassemble(&out).unwrap().contains("Int8"), "generic-subgroup has no Int8");
    let mut target = DeviceCaps::lavapipe();
    target.integer_dot_product = false;
    let (out, _) = translate(&words, &target).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let dis = tools::disassemble(&out).unwrap();
    assert!(!dis.contains("Dot"), "{dis}");
    // DotProductInput4x8Bit implied Int8; the 8-bit vectors are still there.
    assert!(dis.contains("OpCapability Int8"), "{dis}");
    // Zero extension of the unsigned operand goes through an unsigned type.
    assert!(dis.contains("OpUConvert %uint"), "{dis}");
}

#[test]
fn an_old_header_with_the_vulkan_memory_model_extension_is_raised() {
    if !tools_present() {
        return;
    }
    let text = r#"
               OpCapability Shader
               OpCapability VulkanMemoryModel
               OpExtension "SPV_KHR_vulkan_memory_model"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let mut words = tools::assemble(text, "vulkan1.3").unwrap();
    words[1] = 0x0001_0000; // as glslang wrote NV cooperative-matrix shaders in 2019
    assert!(tools::validate(&words, "vulkan1.3").is_err());
    let (out, report) = translate(&words, &DeviceCaps::h100()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    assert_ne!(report.output_version, "1.0");
}

#[test]
fn capabilities_the_target_lacks_are_named_with_their_use() {
    if !tools_present() {
        return;
    }
    // An OpenCL kernel becomes a Vulkan compute shader; one whose parameter has no lowering
    // (an image) is refused naming the parameter and the instruction.
    let kernel = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
          %k = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(kernel, "opencl1.2").unwrap();
    let (out, _) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    assert!(tools::disassemble(&out).unwrap().contains("OpEntryPoint GLCompute"));
    let image_kernel = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability ImageBasic
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
        %img = OpTypeImage %void 2D 0 0 0 0 Unknown ReadOnly
         %fn = OpTypeFunction %void %img
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %img
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    // An image becomes a storage image, an image buffer (image1d_buffer_t) a storage texel
    // buffer; a depth image is refused by name.
    let words = tools::assemble(image_kernel, "opencl1.2").unwrap();
    let (out, _) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let words = tools::assemble(&image_kernel.replace("OpTypeImage %void 2D", "OpTypeImage %void Buffer").replace("ImageBasic", "ImageBasic\n OpCapability ImageBuffer"), "opencl1.2").unwrap();
    let (out, _) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let words = tools::assemble(&image_kernel.replace("OpTypeImage %void 2D 0", "OpTypeImage %void 2D 1"), "opencl1.2").unwrap();
    let err = translate(&words, &DeviceCaps::lavapipe()).unwrap_err().to_string();
    assert!(err.contains("image argument 0 of kernel `k`") && err.contains("depth image") && err.contains("OpFunctionParameter") && err.contains("word offset"), "{err}");
    // Int64 for SwiftShader, which lacks it (16-bit types are widened there instead).
    {
        let (cap, ty) = ("Int64", "OpTypeInt 64 0");
        let text = format!(
            "OpCapability Shader\nOpCapability {cap}\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%t = {ty}\n%pt = OpTypePointer Function %t\n%main = OpFunction %void None %fn\n%entry = OpLabel\n%v = OpVariable %pt Function\nOpReturn\nOpFunctionEnd\n"
        );
        let words = tools::assemble(&text, "vulkan1.3").unwrap();
        let err = translate(&words, &DeviceCaps::swiftshader()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&format!("capability {cap}")) && msg.contains(ty.split(' ').next().unwrap()) && msg.contains("SwiftShader"), "{msg}");
        assert!(translate(&words, &DeviceCaps::lavapipe()).is_ok(), "lavapipe has {cap}");
    }
}

/// A vendor capability no pass translates is named, with the instruction that needs it, instead
/// of reaching a driver that fails the pipeline without a word; producer hints of the same
/// vendor go instead (`drop-producer-hints`).
#[test]
fn vendor_capabilities_are_named_and_hints_dropped() {
    if !tools_present() {
        return;
    }
    let shader = r#"
               OpCapability Shader
               OpCapability IntegerFunctions2INTEL
               OpExtension "SPV_INTEL_shader_integer_functions2"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %buf Block
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %v DescriptorSet 0
               OpDecorate %v Binding 0
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
        %buf = OpTypeStruct %uint
        %ptr = OpTypePointer StorageBuffer %buf
       %uptr = OpTypePointer StorageBuffer %uint
     %uint_0 = OpConstant %uint 0
          %v = OpVariable %ptr StorageBuffer
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
          %l = OpLabel
          %p = OpAccessChain %uptr %v %uint_0
          %x = OpLoad %uint %p
          %y = OpUCountLeadingZerosINTEL %uint %x
               OpStore %p %y
               OpReturn
               OpFunctionEnd
"#;
    let words = tools::assemble(shader, "vulkan1.3").unwrap();
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let err = translate(&words, &target).unwrap_err().to_string();
        assert!(err.contains("IntegerFunctions2INTEL") && err.contains("SPV_INTEL_shader_integer_functions2") && err.contains("OpUCountLeadingZerosINTEL") && err.contains("word offset"), "{err}");
    }
    // The same shader with a hint instead: an accuracy decoration on the load.
    let hinted = shader
        .replace("OpCapability IntegerFunctions2INTEL", "OpCapability FPMaxErrorINTEL")
        .replace("SPV_INTEL_shader_integer_functions2", "SPV_INTEL_fp_max_error")
        .replace("OpDecorate %buf Block", "OpDecorate %buf Block\n OpDecorate %x FPMaxErrorDecorationINTEL 2.5")
        .replace("%y = OpUCountLeadingZerosINTEL %uint %x", "%y = OpNot %uint %x");
    let words = tools::assemble(&hinted, "vulkan1.3").unwrap();
    let (out, _) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let text = tools::disassemble(&out).unwrap();
    assert!(!text.contains("FPMaxError") && !text.contains("SPV_INTEL"), "{text}");
}

/// f32 atomic add, min and max a target lacks become loops; one on an image texel, which has no
/// word to loop on, is refused naming the instruction and the memory.
#[test]
fn float_atomics_the_target_lacks_are_emulated_or_refused_by_name() {
    if !tools_present() {
        return;
    }
    let kernel = |pointer: &str| {
        format!(
            r#"
               OpCapability Shader
               OpCapability AtomicFloat32AddEXT
               OpExtension "SPV_EXT_shader_atomic_float_add"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %buf %img
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %block Block
               OpMemberDecorate %block 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
               OpDecorate %img DescriptorSet 0
               OpDecorate %img Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %v2int = OpTypeVector %int 2
      %block = OpTypeStruct %float
       %pbuf = OpTypePointer StorageBuffer %block
        %pfs = OpTypePointer StorageBuffer %float
      %image = OpTypeImage %float 2D 0 0 0 2 R32f
       %pimg = OpTypePointer UniformConstant %image
        %pfi = OpTypePointer Image %float
        %buf = OpVariable %pbuf StorageBuffer
        %img = OpVariable %pimg UniformConstant
         %c0 = OpConstant %int 0
        %uc0 = OpConstant %uint 0
        %uc1 = OpConstant %uint 1
      %coord = OpConstantComposite %v2int %c0 %c0
        %one = OpConstant %float 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %s = OpAccessChain %pfs %buf %c0
          %t = OpImageTexelPointer %pfi %img %coord %uc0
          %r = OpAtomicFAddEXT %float {pointer} %uc1 %uc0 %one
               OpReturn
               OpFunctionEnd
"#
        )
    };
    let buffer = tools::assemble(&kernel("%s"), "vulkan1.3").unwrap();
    let (out, _) = translate(&buffer, &DeviceCaps::swiftshader()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let text = tools::disassemble(&out).unwrap();
    assert!(!text.contains("OpAtomicFAddEXT") && !text.contains("AtomicFloat32AddEXT") && text.contains("OpAtomicCompareExchange"), "{text}");
    // Kept where the target has it.
    let (out, _) = translate(&buffer, &DeviceCaps::lavapipe()).unwrap();
    assert!(tools::disassemble(&out).unwrap().contains("OpAtomicFAddEXT"));
    let image = tools::assemble(&kernel("%t"), "vulkan1.3").unwrap();
    let e = translate(&image, &DeviceCaps::swiftshader()).unwrap_err().to_string();
    assert!(e.contains("OpAtomicFAddEXT at word offset") && e.contains("f32 OpAtomicFAddEXT on Image memory"), "{e}");
}

/// MLIR's SPIR-V serializer (IREE) decorates arithmetic with NoSignedWrap in SPIR-V 1.3 modules
/// without SPV_KHR_no_integer_wrap_decoration: the output is raised to 1.4, whose core has it.
#[test]
fn integer_wrap_decorations_raise_the_version() {
    if !tools_present() {
        return;
    }
    let text = r#"
               OpCapability Shader
               OpExtension "SPV_KHR_storage_buffer_storage_class"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %buf Block
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %var DescriptorSet 0
               OpDecorate %var Binding 0
               OpDecorate %sum NoSignedWrap
               OpDecorate %sum NoUnsignedWrap
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %buf = OpTypeStruct %uint
        %ptr = OpTypePointer StorageBuffer %buf
      %puint = OpTypePointer StorageBuffer %uint
        %var = OpVariable %ptr StorageBuffer
         %c0 = OpConstant %uint 0
         %c1 = OpConstant %uint 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %p = OpAccessChain %puint %var %c0
          %x = OpLoad %uint %p
        %sum = OpIAdd %uint %x %c1
               OpStore %p %sum
               OpReturn
               OpFunctionEnd
"#;
    // Assembled as 1.3 (spirv-as checks no extension requirement of decorations).
    let input = tools::assemble(text, "vulkan1.1spv1.4").map(|mut w| {
        w[1] = 0x0001_0300;
        w
    });
    let input = input.expect("assembles");
    assert!(tools::validate(&input, "vulkan1.3").is_err(), "the input is invalid as IREE writes it");
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let (out, report) = translate(&input, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        assert_eq!(report.output_version, "1.4", "{}", target.name);
        tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
    }
}

/// A compute shader declaring VariablePointers, over a storage buffer `%var` of floats and a
/// workgroup array `%wg`, with function variables `locals` and body `body`; `%cond` is a
/// runtime condition.
fn pointer_kernel(functions: &str, locals: &str, body: &str) -> String {
    format!(
        r#"
               OpCapability Shader
               OpCapability VariablePointers
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %var %wg %lid
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %lid BuiltIn LocalInvocationIndex
               OpDecorate %rt ArrayStride 4
               OpDecorate %buf Block
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %var DescriptorSet 0
               OpDecorate %var Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
         %c0 = OpConstant %uint 0
         %c1 = OpConstant %uint 1
         %c4 = OpConstant %uint 4
         %rt = OpTypeRuntimeArray %float
        %buf = OpTypeStruct %rt
       %pbuf = OpTypePointer StorageBuffer %buf
        %psb = OpTypePointer StorageBuffer %float
        %arr = OpTypeArray %float %c4
       %parr = OpTypePointer Workgroup %arr
        %pwg = OpTypePointer Workgroup %float
      %puint = OpTypePointer Input %uint
       %ppsb = OpTypePointer Function %psb
       %f_sb = OpTypeFunction %float %psb
        %var = OpVariable %pbuf StorageBuffer
         %wg = OpVariable %parr Workgroup
        %lid = OpVariable %puint Input
{functions}
       %main = OpFunction %void None %fn
      %entry = OpLabel
{locals}
          %i = OpLoad %uint %lid
       %cond = OpULessThan %bool %i %c1
         %e0 = OpAccessChain %psb %var %c0 %c0
         %e1 = OpAccessChain %psb %var %c0 %c1
         %w0 = OpAccessChain %pwg %wg %c0
{body}
               OpReturn
               OpFunctionEnd
"#
    )
}

/// Variable pointers stay only where the code needs them: glslang declares `VariablePointers`
/// for `#pragma use_variable_pointers` whatever the code does (the Vulkan CTS's `*_varptr`
/// cooperative-matrix cases), and such a module runs on SwiftShader, which has none. Pointers
/// that only variable pointers allow keep the capability for their storage class, and a target
/// without it names the instruction.
#[test]
fn variable_pointers_stay_only_where_the_code_needs_them() {
    if !tools_present() {
        return;
    }
    let caps_of = |text: &str, target: &DeviceCaps| -> Result<Vec<String>, String> {
        let words = tools::assemble(text, "vulkan1.3").unwrap();
        let (out, _) = translate(&words, target).map_err(|e| e.to_string())?;
        tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let dis = tools::disassemble(&out).unwrap();
        Ok(dis.lines().filter_map(|l| l.trim().strip_prefix("OpCapability VariablePointers")).map(|c| format!("VariablePointers{c}")).collect())
    };
    let (lavapipe, swiftshader) = (DeviceCaps::lavapipe(), DeviceCaps::swiftshader());
    // Declared, not needed: dropped for every target.
    let plain = pointer_kernel("", "", "          %x = OpLoad %float %e0\n               OpStore %w0 %x");
    assert_eq!(caps_of(&plain, &lavapipe).unwrap(), Vec::<String>::new());
    assert_eq!(caps_of(&plain, &swiftshader).unwrap(), Vec::<String>::new());
    // (functions, locals, body, capability it needs, instruction named where the target lacks it)
    let cases = [
        ("", "", "          %p = OpSelect %psb %cond %e0 %e1\n          %x = OpLoad %float %p\n               OpStore %w0 %x", "VariablePointersStorageBuffer", "OpSelect"),
        (
            "",
            "",
            "          %q = OpAccessChain %pwg %wg %c1\n          %p = OpSelect %pwg %cond %w0 %q\n          %x = OpLoad %float %e0\n               OpStore %p %x",
            "VariablePointers",
            "OpSelect",
        ),
        (
            "",
            "          %v = OpVariable %ppsb Function",
            "               OpStore %v %e1\n          %p = OpLoad %psb %v\n          %x = OpLoad %float %p\n               OpStore %w0 %x",
            "VariablePointers",
            "OpVariable",
        ),
        (
            "        %get = OpFunction %float None %f_sb\n         %pp = OpFunctionParameter %psb\n         %gl = OpLabel\n         %gx = OpLoad %float %pp\n               OpReturnValue %gx\n               OpFunctionEnd",
            "",
            "          %x = OpFunctionCall %float %get %e1\n               OpStore %w0 %x",
            "VariablePointersStorageBuffer",
            "OpFunctionCall",
        ),
    ];
    for (functions, locals, body, cap, inst) in cases {
        let text = pointer_kernel(functions, locals, body);
        assert_eq!(caps_of(&text, &lavapipe).unwrap(), vec![cap.to_string()], "{body}");
        let err = caps_of(&text, &swiftshader).unwrap_err();
        assert!(err.contains(&format!("capability {cap} ")) && err.contains(inst), "{body}: {err}");
    }
}

/// Float controls are device properties per width. A shader's `DenormPreserve 32` stays where
/// the target honours it and goes, with a note in the report, where it does not (the driver
/// keeps or flushes denormals as it does by default); so does a denormal mode that sets widths
/// apart where the device ties them. A rounding mode the target does not honour is refused
/// naming the property. OpenCL kernels get `SignedZeroInfNanPreserve` for their float widths
/// where the target honours it, unless the producer's fast-math flags relax them, and
/// `NoContraction` on the arithmetic of kernels marked `ContractionOff`; a producer's float
/// control the target lacks is dropped.
#[test]
fn float_controls_are_checked_per_width_and_kernels_keep_ieee_semantics() {
    if !tools_present() {
        return;
    }
    let shader = |modes: &str| {
        format!(
            "OpCapability Shader\nOpCapability DenormPreserve\nOpCapability DenormFlushToZero\nOpCapability RoundingModeRTZ\nOpCapability Float64\nOpExtension \"SPV_KHR_float_controls\"\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n{modes}\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%main = OpFunction %void None %fn\n%entry = OpLabel\nOpReturn\nOpFunctionEnd\n"
        )
    };
    let notes = |report: &matbridge_translator::pipeline::Report| -> String {
        report.passes.iter().filter(|p| p.name == "legalize-float-controls").flat_map(|p| p.notes.clone()).collect::<Vec<_>>().join("; ")
    };
    let words = tools::assemble(&shader("OpExecutionMode %main DenormPreserve 32"), "vulkan1.3").unwrap();
    let (out, report) = translate(&words, &DeviceCaps::swiftshader()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let text = tools::disassemble(&out).unwrap();
    assert!(!text.contains("DenormPreserve") && !text.contains("SPV_KHR_float_controls"), "{text}");
    assert!(notes(&report).contains("main: DenormPreserve 32 dropped (shaderDenormPreserveFloat32 is false)"), "{}", notes(&report));
    let mut honours = DeviceCaps::lavapipe();
    honours.float_controls.denorm_preserve.f32 = true;
    honours.float_controls.denorm_preserve.f64 = true;
    honours.float_controls.denorm_flush_to_zero.f64 = true;
    let (out, _) = translate(&words, &honours).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    assert!(tools::disassemble(&out).unwrap().contains("DenormPreserve 32"));
    // A rounding mode the target does not honour is refused by name.
    let words = tools::assemble(&shader("OpExecutionMode %main RoundingModeRTZ 32"), "vulkan1.3").unwrap();
    let err = translate(&words, &DeviceCaps::lavapipe()).unwrap_err().to_string();
    assert!(err.contains("shaderRoundingModeRTZFloat32") && err.contains("RoundingModeRTZ 32") && err.contains("OpExecutionMode") && err.contains("word offset"), "{err}");
    assert!(translate(&words, &DeviceCaps::h100()).is_ok(), "the H100 rounds toward zero where asked");
    // 32-bit floats apart from the rest, but here 64-bit ones set apart from 16-bit ones: the
    // later goes.
    honours.float_controls.denorm_preserve.f16 = true;
    honours.float_controls.denorm_flush_to_zero.f32 = true;
    honours.float_controls.denorm_behavior_independence = matbridge_translator::profile::FloatControlsIndependence::Only32Bit;
    let words = tools::assemble(&shader("OpExecutionMode %main DenormPreserve 16\nOpExecutionMode %main DenormFlushToZero 64\nOpExecutionMode %main DenormFlushToZero 32"), "vulkan1.3").unwrap();
    let (out, report) = translate(&words, &honours).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let text = tools::disassemble(&out).unwrap();
    assert!(text.contains("DenormPreserve 16") && !text.contains("DenormFlushToZero 64") && text.contains("DenormFlushToZero 32"), "{text}");
    assert!(
        notes(&report).contains("main: DenormFlushToZero 64 dropped (needs denormBehaviorIndependence ALL: the entry point sets DenormPreserve for 16-bit and DenormFlushToZero for 64-bit floats)"),
        "{}",
        notes(&report)
    );
    honours.float_controls.denorm_behavior_independence = matbridge_translator::profile::FloatControlsIndependence::All;
    let (out, _) = translate(&words, &honours).unwrap();
    assert!(tools::disassemble(&out).unwrap().contains("DenormFlushToZero 64"));

    // A kernel: separate multiply and add (ContractionOff), and a producer's DenormPreserve.
    let kernel = |decorations: &str| {
        format!(
            r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Float64
               OpCapability DenormPreserve
               OpExtension "SPV_KHR_float_controls"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpExecutionMode %k ContractionOff
               OpExecutionMode %k DenormPreserve 32
{decorations}
       %void = OpTypeVoid
      %float = OpTypeFloat 32
     %double = OpTypeFloat 64
        %ptr = OpTypePointer CrossWorkgroup %float
       %dptr = OpTypePointer CrossWorkgroup %double
         %fn = OpTypeFunction %void %ptr %dptr
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %ptr
          %q = OpFunctionParameter %dptr
      %entry = OpLabel
          %a = OpLoad %float %p
          %m = OpFMul %float %a %a
          %s = OpFAdd %float %m %a
               OpStore %p %s
          %d = OpLoad %double %q
         %dm = OpFMul %double %d %d
               OpStore %q %dm
               OpReturn
               OpFunctionEnd
"#
        )
    };
    let words = tools::assemble(&kernel(""), "opencl1.2").unwrap();
    let (out, report) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let text = tools::disassemble(&out).unwrap();
    for want in ["SignedZeroInfNanPreserve 32", "SignedZeroInfNanPreserve 64", "OpCapability SignedZeroInfNanPreserve"] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
    assert_eq!(text.matches("NoContraction").count(), 3, "{text}");
    // lavapipe does not honour DenormPreserve: the producer's hint goes.
    assert!(!text.contains("DenormPreserve") && !text.contains("ContractionOff"), "{text}");
    let pass = report.passes.iter().find(|p| p.name == "preserve-kernel-float-semantics").unwrap();
    assert!(pass.changed, "{pass:?}");
    // Honoured, it stays.
    let (out, _) = translate(&words, &honours).unwrap();
    assert!(tools::disassemble(&out).unwrap().contains("DenormPreserve 32"));
    // Fast math on the float multiply (-cl-finite-math-only) leaves floats free, not doubles.
    let words = tools::assemble(&kernel("OpDecorate %m FPFastMathMode NotNaN|NotInf"), "opencl1.2").unwrap();
    let (out, _) = translate(&words, &DeviceCaps::lavapipe()).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let text = tools::disassemble(&out).unwrap();
    assert!(!text.contains("SignedZeroInfNanPreserve 32") && text.contains("SignedZeroInfNanPreserve 64"), "{text}");
    // A target that honours none: no mode.
    let mut none = DeviceCaps::lavapipe();
    none.float_controls = Default::default();
    let words = tools::assemble(&kernel(""), "opencl1.2").unwrap();
    let (out, _) = translate(&words, &none).unwrap();
    tools::validate(&out, "vulkan1.3").unwrap();
    let text = tools::disassemble(&out).unwrap();
    assert!(!text.contains("SignedZeroInfNanPreserve") && !text.contains("SPV_KHR_float_controls") && text.contains("NoContraction"), "{text}");
}

/// SPV_NV_cooperative_matrix2 on targets without it, or without its matrices: sub-group
/// operations are lowered to valid KHR code or emulated (the capabilities and the extension go); what cannot be lowered is refused naming
/// the instruction and why: a 2x2 reduction of an odd matrix, scratch beyond the target's
/// workgroup memory, and a band of a workgroup-scope matrix loaded with a layout chosen at
/// run time. Workgroup-scope matrices become sub-group-scope bands.
#[test]
fn cooperative_matrix2_operations_are_lowered_or_refused_by_name() {
    if !tools_present() {
        return;
    }
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/in/lower_cooperative_matrix2/reduce_map.spvasm")).unwrap();
    let translated = |text: &str, target: &DeviceCaps| tools::assemble(text, "vulkan1.3").map_err(|e| e.to_string()).and_then(|w| translate(&w, target).map_err(|e| e.to_string()));
    let lavapipe = DeviceCaps::lavapipe();
    let (words, report) = translated(&base, &lavapipe).unwrap();
    tools::validate(&words, "vulkan1.3").unwrap();
    let text = tools::disassemble(&words).unwrap();
    assert!(!text.contains("NV") && !text.contains("CooperativeMatrix"), "{text}");
    let pass = report.passes.iter().find(|p| p.name == "lower-cooperative-matrix2").unwrap();
    // lavapipe has no cooperative matrices: the emulation reduces rows and applies the
    // per-element function itself; the transpose goes through workgroup memory.
    assert_eq!(pass.rewritten.get("OpCooperativeMatrixTransposeNV"), Some(&1), "{pass:?}");
    assert_eq!(pass.rewritten.get("OpCooperativeMatrixReduceNV"), None, "{pass:?}");
    let (words, report) = translated(&base, &DeviceCaps::h100()).unwrap();
    tools::validate(&words, "vulkan1.3").unwrap();
    let pass = report.passes.iter().find(|p| p.name == "lower-cooperative-matrix2").unwrap();
    assert_eq!(pass.rewritten.get("OpCooperativeMatrixReduceNV"), Some(&1), "the H100 lists no 8x8 f32 accumulator: {pass:?}");

    // 2x2 of a 7x8 matrix.
    let odd = base.replace("%uint_8 = OpConstant %uint 8", "%uint_8 = OpConstant %uint 8\n     %uint_7 = OpConstant %uint 7\n     %uint_4 = OpConstant %uint 4").replace(
        "%acc = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_8 %uint_8 %uint_2",
        "%acc = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_7 %uint_8 %uint_2\n   %half_acc = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_3 %uint_4 %uint_2",
    );
    let odd =
        odd.replace("%sum = OpCooperativeMatrixReduceNV %acc %m Row %add", "%quad = OpCooperativeMatrixReduceNV %half_acc %m 2x2 %add\n        %sum = OpCooperativeMatrixReduceNV %acc %m Row %add");
    let err = translated(&odd, &lavapipe).unwrap_err();
    assert!(err.contains("OpCooperativeMatrixReduceNV") && err.contains("2x2 reduction of a 7x8 matrix into a 3x4 one"), "{err}");

    // 1,024 invocations in sub-groups of 4: 256 areas of 8x8 floats.
    let big = base.replace("LocalSize 32 1 1", "LocalSize 1024 1 1");
    let err = translated(&big, &DeviceCaps::swiftshader()).unwrap_err();
    assert!(err.contains("OpCooperativeMatrixReduceNV") && err.contains("bytes of workgroup memory") && err.contains("more than the target's 32768"), "{err}");

    // Workgroup scope: sub-group-scope bands (replicated B matrices) on every target, the
    // transpose of a band into a B matrix and the stores gathered or guarded.
    let workgroup = base.replace("OpTypeCooperativeMatrixKHR %float %uint_3", "OpTypeCooperativeMatrixKHR %float %uint_2");
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let (words, report) = translated(&workgroup, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
        let pass = report.passes.iter().find(|p| p.name == "lower-cooperative-matrix2").unwrap();
        assert_eq!(pass.rewritten.get("OpCooperativeMatrixStoreKHR"), Some(&2), "{}: {pass:?}", target.name);
        assert_eq!(pass.rewritten.get("OpCooperativeMatrixTransposeNV"), Some(&1), "{}: {pass:?}", target.name);
    }
    // A band's load needs a layout it can move along.
    let chosen = workgroup.replace(
        "%m = OpCooperativeMatrixLoadKHR %acc %p0 %uint_0 %uint_8",
        "%f0 = OpLoad %float %p0\n        %lay = OpBitcast %uint %f0\n          %m = OpCooperativeMatrixLoadKHR %acc %p0 %lay %uint_8",
    );
    let err = translated(&chosen, &lavapipe).unwrap_err();
    assert!(err.contains("OpCooperativeMatrixLoadKHR") && err.contains("layout is not a constant row- or column-major one"), "{err}");
}

/// Block loads (decode functions) on targets without coopmat2: lowered to per-element calls,
/// the storage-buffer decoder cloned to read the buffer's words, and a decoder that does more
/// with its block pointer than chains, casts and loads refused by name.
#[test]
fn block_load_decode_functions_are_lowered_or_refused_by_name() {
    if !tools_present() {
        return;
    }
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/kernels/nv2_block_loads.spvasm")).unwrap();
    let translated = |text: &str, target: &DeviceCaps| {
        let input = tools::assemble(text, "vulkan1.3").map_err(|e| e.to_string())?;
        matbridge_translator::translate_specialized(&input, target, &[(0, 128)]).map_err(|e| e.to_string())
    };
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let (words, report) = translated(&base, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
        let text = tools::disassemble(&words).unwrap();
        assert!(!text.contains("DecodeFunc") && !text.contains("BlockLoads"), "{}: {text}", target.name);
        // The storage buffer's decoder reads a view of the buffer as words; the buffer
        // reference's is called as it is.
        assert!(text.contains("OpName %decodeQ4_1_u1_2__u1_2___words") || text.contains("decodeQ4(1;u1[2];u1[2];.words"), "{}: {text}", target.name);
        assert!(text.lines().any(|l| l.contains("OpFunctionCall") && l.contains("%decodeQ8_1_u1_2__u1_2__ ")), "{}: {text}", target.name);
        let pass = report.passes.iter().find(|p| p.name == "lower-cooperative-matrix2").unwrap();
        assert_eq!(pass.rewritten.get("OpCooperativeMatrixLoadTensorNV"), Some(&2), "{}: {pass:?}", target.name);
    }
    // A decoder that writes its block.
    let writes = base.replace("%51 = OpLoad %ushort %50 Aligned 2", "%51 = OpLoad %ushort %50 Aligned 2\n               OpStore %50 %51 Aligned 2");
    let err = translated(&writes, &DeviceCaps::lavapipe()).unwrap_err();
    assert!(err.contains("OpCooperativeMatrixLoadTensorNV") && err.contains("decodeQ4") && err.contains("OpStore of its block pointer"), "{err}");
}

/// A compute shader whose one DPAS is `dpas` (over `%a` a uint, `%b` a uvec4, `%c` a vec2, `%k`
/// a uint loaded from the buffer), storing its first component.
fn dpas_shader(dpas: &str) -> String {
    format!(
        r#"
               OpCapability Shader
               OpCapability GroupNonUniform
               OpCapability SubgroupMatrixMultiplyAccumulateINTEL
               OpExtension "SPV_INTEL_subgroup_matrix_multiply_accumulate"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %buf Block
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %v DescriptorSet 0
               OpDecorate %v Binding 0
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %float = OpTypeFloat 32
     %v2uint = OpTypeVector %uint 2
     %v4uint = OpTypeVector %uint 4
    %v2float = OpTypeVector %float 2
        %buf = OpTypeStruct %uint
        %ptr = OpTypePointer StorageBuffer %buf
       %uptr = OpTypePointer StorageBuffer %uint
     %uint_0 = OpConstant %uint 0
     %uint_8 = OpConstant %uint 8
          %v = OpVariable %ptr StorageBuffer
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
          %l = OpLabel
          %p = OpAccessChain %uptr %v %uint_0
          %a = OpLoad %uint %p
          %k = OpLoad %uint %p
          %b = OpCompositeConstruct %v4uint %a %a %a %a
         %cf = OpConvertUToF %float %a
          %c = OpCompositeConstruct %v2float %cf %cf
         %ci = OpCompositeConstruct %v2uint %a %a
          %d = {dpas}
         %d0 = OpCompositeExtract %float %d 0
         %du = OpBitcast %uint %d0
               OpStore %p %du
               OpReturn
               OpFunctionEnd
"#
    )
}

/// Intel's DPAS is lowered to sub-group code on every target; a DPAS the spec does not define
/// (or a newer extension's form) is refused naming the instruction and what is wrong.
#[test]
fn dpas_is_lowered_everywhere_or_refused_by_name() {
    if !tools_present() {
        return;
    }
    // M = 2, K = 8 f16 at N = 8 (the pipeline's required sub-group size): A a uint of two
    // halves, every other row per invocation.
    let good = dpas_shader("OpSubgroupMatrixMultiplyAccumulateINTEL %v2float %uint_8 %a %b %c MatrixAPackedFloat16INTEL|MatrixBPackedFloat16INTEL");
    let mut module = matbridge_translator::Module::from_words(&tools::assemble(&good, "vulkan1.3").unwrap()).unwrap();
    matbridge_translator::kernel::require_shader_subgroup_size(&mut module, "main", 8).unwrap();
    let words = module.to_words();
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let (out, report) = translate(&words, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        tools::validate(&out, "vulkan1.3").unwrap();
        let text = tools::disassemble(&out).unwrap();
        // Broadcasts where the device runs 8, workgroup exchanges or shuffles where it emulates 8.
        assert!(!text.contains("INTEL") && (text.contains("OpGroupNonUniformBroadcast") || text.contains("OpGroupNonUniformShuffle ") || text.contains("OpControlBarrier")), "{}: {text}", target.name);
        assert!(report.passes.iter().any(|p| p.name == "lower-subgroup-matrix-multiply-accumulate" && p.changed), "{}", target.name);
    }
    let refused = [
        ("OpSubgroupMatrixMultiplyAccumulateINTEL %v2float %k %a %b %c MatrixAPackedFloat16INTEL|MatrixBPackedFloat16INTEL", "not a 32-bit integer constant"),
        // fp8 A (a newer Intel extension's bit) is patched into the words below.
        ("OpSubgroupMatrixMultiplyAccumulateINTEL %v2float %uint_8 %a %b %c MatrixAPackedFloat16INTEL|MatrixBPackedFloat16INTEL|MatrixATF32INTEL", "0x4000"),
        ("OpSubgroupMatrixMultiplyAccumulateINTEL %v2float %uint_8 %a %b %c MatrixAPackedFloat16INTEL|MatrixAPackedBFloat16INTEL|MatrixBPackedFloat16INTEL", "two element types"),
        ("OpSubgroupMatrixMultiplyAccumulateINTEL %v2float %uint_8 %a %a %c MatrixAPackedFloat16INTEL|MatrixBPackedFloat16INTEL", "Matrix B of 1 components"),
        ("OpSubgroupMatrixMultiplyAccumulateINTEL %v2float %uint_8 %a %b %ci MatrixAPackedInt8INTEL|MatrixBPackedInt8INTEL", "mixes integer and floating-point"),
        ("OpSubgroupMatrixMultiplyAccumulateINTEL %v2float %uint_8 %a %b %c MatrixAPackedFloat16INTEL|MatrixBPackedFloat16INTEL|MatrixResultBFloat16INTEL", "16-bit integer"),
    ];
    for (dpas, want) in refused {
        let mut words = tools::assemble(&dpas_shader(dpas), "vulkan1.3").unwrap();
        if want == "0x4000" {
            let at = words.iter().position(|w| *w == (8 << 16) | spirv::Op::SubgroupMatrixMultiplyAccumulateINTEL as u32).unwrap();
            words[at + 7] = 0x4c00;
        }
        // No required size: N is lavapipe's 8.
        let err = translate(&words, &DeviceCaps::lavapipe()).unwrap_err().to_string();
        assert!(err.contains(want) && err.contains("OpSubgroupMatrixMultiplyAccumulateINTEL") && err.contains("word offset"), "{dpas}: {err}");
    }
}

/// Intel's DPAS built-ins that OpenCL C reaches through imported functions are resolved; those
/// with no SPIR-V instruction are refused naming the call and why.
#[test]
fn intel_matrix_builtin_calls_without_an_instruction_are_refused_by_name() {
    if !tools_present() {
        return;
    }
    let kernel = |name: &str, k: &str| {
        let mangled = format!("_Z{}{name}hjj", name.len());
        format!(
            r#"
               OpCapability Addresses
               OpCapability Linkage
               OpCapability Kernel
               OpCapability Int8
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpDecorate %f LinkageAttributes "{mangled}" Import
       %uint = OpTypeInt 32 0
      %uchar = OpTypeInt 8 0
       %void = OpTypeVoid
         %ft = OpTypeFunction %uint %uchar %uint %uint
         %kt = OpTypeFunction %void
         %c1 = OpConstant %uchar 1
         %c2 = OpConstant %uint 2
          %f = OpFunction %uint None %ft
         %p0 = OpFunctionParameter %uchar
         %p1 = OpFunctionParameter %uint
         %p2 = OpFunctionParameter %uint
               OpFunctionEnd
          %k = OpFunction %void None %kt
          %l = OpLabel
          %u = OpUndef %uint
          %r = OpFunctionCall %uint %f %c1 {k} %c2
               OpReturn
               OpFunctionEnd
"#
        )
    };
    for (name, k, want) in [
        ("intel_sub_group_i2_i8_matrix_mad_k32", "%c2", "2-bit A elements"),
        ("intel_sub_group_i8_i8_split_matrix_mad_k32", "%c2", "split forms"),
        ("__spirv_SubgroupMatrixMultiplyAccumulateINTEL", "%u", "takes 3 arguments"),
    ] {
        let words = tools::assemble(&kernel(name, k), "spv1.2").unwrap();
        let err = translate(&words, &DeviceCaps::lavapipe()).unwrap_err().to_string();
        assert!(err.contains(want) && err.contains(name) && err.contains("OpFunctionCall"), "{name}: {err}");
    }
}
