use super::builder::{Builder, Cursor};
use super::*;
use crate::error::Error;
use crate::tools;
use spirv::{Op, StorageClass};

const SHADER: u32 = spirv::Capability::Shader as u32;
const CAPABILITY: u32 = Op::Capability as u32;

fn word(op: Op, count: u32) -> u32 {
    (count << 16) | op as u32
}

#[test]
fn rejects_truncated_and_bad_headers() {
    assert!(matches!(Module::from_words(&[1, 2, 3]), Err(Error::NotSpirv(_))));
    assert!(matches!(Module::from_words(&[0xdead, 0, 0, 5, 0]), Err(Error::NotSpirv(_))));
    let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, word(Op::Capability, 5), SHADER]).unwrap_err();
    assert_eq!(err, Error::Malformed { offset: 5, message: "OpCapability claims 5 words but only 2 remain".into() });
    let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, CAPABILITY]).unwrap_err();
    assert!(err.to_string().contains("word count of 0"), "{err}");
}

#[test]
fn short_instructions_and_broken_function_layout_are_malformed() {
    // OpTypeInt %2 32 without its signedness operand.
    let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, word(Op::TypeInt, 3), 2, 32]).unwrap_err();
    assert_eq!(err, Error::Malformed { offset: 5, message: "OpTypeInt has 2 operand words, the grammar requires at least 3".into() });
    // %void, %fn, then: OpFunction %void %4 None %fn; OpLabel %5; OpReturn; OpFunctionEnd.
    let head = [MAGIC, 0x10300, 0, 10, 0, word(Op::TypeVoid, 2), 2, word(Op::TypeFunction, 3), 3, 2];
    let function = [word(Op::Function, 5), 2, 4, 0, 3, word(Op::Label, 2), 5, word(Op::Return, 1), word(Op::FunctionEnd, 1)];
    let module = |body: &[u32]| -> crate::Result<Module> { Module::from_words(&[&head[..], body].concat()) };
    assert_eq!(module(&function).unwrap().to_words(), [&head[..], &function[..]].concat());
    let no_end = module(&function[..8]).unwrap_err();
    assert!(no_end.to_string().contains("word offset 10") && no_end.to_string().contains("no OpFunctionEnd"), "{no_end}");
    let unterminated = module(&[&function[..7], &function[8..]].concat()).unwrap_err();
    assert!(unterminated.to_string().contains("OpFunctionEnd inside a block that has not been terminated"), "{unterminated}");
    let no_label = module(&[&function[..5], &function[7..]].concat()).unwrap_err();
    assert!(no_label.to_string().contains("OpReturn before the function's first block"), "{no_label}");
    let stray = module(&[word(Op::Return, 1)]).unwrap_err();
    assert!(stray.to_string().contains("OpReturn outside a function"), "{stray}");
}

#[test]
fn legacy_joint_matrix_results_are_visible_and_round_trip() {
    // OpTypeJointMatrixINTEL %7 (component %8, rows %9, ...): from the table of opcodes the
    // grammar lacks.
    let joint = grammar::info(6184).map(|i| i.opcode).unwrap();
    // Its operands defined before it: %8 = f32, %11 = u32, %9 = %10 = 8.
    let operands = [word(Op::TypeFloat, 3), 8, 32, word(Op::TypeInt, 4), 11, 32, 0, word(Op::Constant, 4), 11, 9, 8, word(Op::Constant, 4), 11, 10, 8];
    let words = [&[MAGIC, 0x10300, 0, 12, 0, word(Op::Capability, 2), SHADER][..], &operands, &[(5 << 16) | joint, 7, 8, 9, 10]].concat();
    let m = Module::from_words(&words).unwrap();
    assert_eq!(m.to_words().len(), words.len());
    let def = m.globals().iter().find(|i| i.opcode == joint).unwrap();
    assert_eq!((def.result_id, def.name().as_str()), (Some(7), "OpTypeJointMatrixINTEL"));
    assert_eq!(def.operands, vec![Operand::Id(8), Operand::Id(9), Operand::Id(10)]);
    // Unknown opcodes keep their words as literals.
    let unknown = vec![MAGIC, 0x10300, 0, 10, 0, (3 << 16) | 0xfffe, 1, 2];
    assert_eq!(Module::from_words(&unknown).unwrap().to_words(), unknown);
}

#[test]
fn big_endian_input_is_accepted() {
    let words = [MAGIC, 0x10300, 0, 10, 0, word(Op::Capability, 2), SHADER];
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    assert_eq!(Module::from_bytes(&bytes).unwrap().to_words(), words);
}

const KERNEL: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpName %main "main"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
         %c7 = OpConstant %uint 7
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;

fn tools_present() -> bool {
    let present = tools::find("spirv-as").is_some();
    assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
    present
}

/// The function body of a disassembly, without the header comments.
fn body(words: &[u32]) -> String {
    tools::validate(words, "vulkan1.3").unwrap();
    let dis = tools::disassemble(words).unwrap();
    let text: Vec<&str> = dis.lines().filter(|l| !l.starts_with(';')).map(str::trim).collect();
    text.join("\n")
}

#[test]
fn types_and_constants_are_interned() {
    if !tools_present() {
        return;
    }
    let mut m = Module::from_words(&tools::assemble(KERNEL, "vulkan1.3").unwrap()).unwrap();
    let bound = m.header.bound;
    let uint = m.type_int(32, false);
    let seven = m.constant_u32(7);
    assert_eq!(m.header.bound, bound, "existing type and constant are found, not added");
    let v4 = m.type_vector(uint, 4);
    assert_eq!(m.type_vector(uint, 4), v4);
    let int = m.type_int(32, true);
    let minus = m.constant_i32(-1);
    assert_eq!(m.constant_int(int, 32, true, u32::MAX as u64), minus);
    let ptr = m.type_pointer(StorageClass::Function, v4);
    assert_eq!(m.type_pointer(StorageClass::Function, v4), ptr);
    assert_ne!(m.type_struct(&[uint]), m.type_struct(&[uint]), "structs are never shared");
    assert_eq!(m.header.bound, bound + 6);
    let out = body(&m.to_words());
    assert!(out.contains("%uint_7 = OpConstant %uint 7") && seven == m.globals().iter().find(|g| g.is(Op::Constant)).unwrap().result_id.unwrap());
    for line in ["%v4uint = OpTypeVector %uint 4", "%int = OpTypeInt 32 1", "%int_n1 = OpConstant %int -1", "%_ptr_Function_v4uint = OpTypePointer Function %v4uint"] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
}

#[test]
fn builder_emits_structured_if_and_loop() {
    if !tools_present() {
        return;
    }
    let mut m = Module::from_words(&tools::assemble(KERNEL, "vulkan1.3").unwrap()).unwrap();
    let uint = m.type_int(32, false);
    let boolean = m.type_bool();
    let zero = m.constant_u32(0);
    let seven = m.constant_u32(7);
    let ptr = m.type_pointer(StorageClass::Function, uint);
    let mut b = Builder::new(&mut m, Cursor { function: 0, block: 0, index: 0 });
    let var = b.module.alloc_id();
    b.insert(Inst::new(Op::Variable, Some(ptr), Some(var), vec![Operand::storage_class(StorageClass::Function)]));
    b.store(var, zero);
    b.counted_loop(zero, seven, |b, i| {
        let old = b.load(uint, var);
        let sum = b.iadd(uint, old, i);
        b.store(var, sum);
    });
    let total = b.load(uint, var);
    let big = b.op(Op::UGreaterThan, boolean, &[total, seven]);
    b.if_then(big, |b| b.store(var, zero));
    let out = body(&m.to_words());
    for line in ["OpLoopMerge", "OpPhi %uint %uint_0", "OpULessThan %bool", "OpSelectionMerge", "OpBranchConditional", "OpUGreaterThan %bool"] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
    // Entry, header, body, continue, then the if's head (the loop's merge), then and merge.
    assert_eq!(out.matches("OpLabel").count(), 7, "{out}");
    assert!(out.trim_end().ends_with("OpReturn\nOpFunctionEnd"), "{out}");
}

#[test]
fn def_use_cfg_and_decorations() {
    if !tools_present() {
        return;
    }
    let mut m = Module::from_words(&tools::assemble(KERNEL, "vulkan1.4").unwrap()).unwrap();
    let uint = m.type_int(32, false);
    let v3 = m.type_vector(uint, 3);
    let gid = m.get_or_add_builtin(spirv::BuiltIn::GlobalInvocationId, v3);
    assert_eq!(m.get_or_add_builtin(spirv::BuiltIn::GlobalInvocationId, v3), gid, "found, not added twice");
    assert_eq!(m.entry_points[0].operands.last(), Some(&Operand::Id(gid)));
    let seven = m.constant_u32(7);
    let six = m.constant_u32(6);
    let mut b = Builder::new(&mut m, Cursor { function: 0, block: 0, index: 0 });
    let boolean = b.module.type_bool();
    let x = b.op(Op::IAdd, uint, &[seven, seven]);
    let cond = b.op(Op::UGreaterThan, boolean, &[x, six]);
    b.if_then(cond, |b| {
        b.op(Op::IMul, uint, &[x, x]);
    });
    let du = def_use::DefUse::new(&m);
    assert_eq!(du.uses(x).len(), 3);
    m.replace_all_uses(seven, six);
    assert!(def_use::DefUse::new(&m).uses(seven).is_empty());
    let cfg = cfg::Cfg::new(&m.functions[0]);
    assert_eq!(cfg.labels.len(), 3);
    assert_eq!(cfg.succs[0].len(), 2);
    assert!(cfg.dominates(0, 1) && cfg.dominates(0, 2) && !cfg.dominates(1, 2));
    let out = body(&m.to_words());
    assert!(out.contains("OpDecorate %gl_GlobalInvocationID BuiltIn GlobalInvocationId"), "{out}");
}

#[test]
fn helper_functions_are_emitted_once() {
    if !tools_present() {
        return;
    }
    let mut m = Module::from_words(&tools::assemble(KERNEL, "vulkan1.3").unwrap()).unwrap();
    let uint = m.type_int(32, false);
    let build = |m: &mut Module, params: &[spirv::Word]| {
        let label = m.alloc_id();
        let sum = m.alloc_id();
        let mut block = Block::new(label);
        block.insts.push(Inst::new(Op::IAdd, Some(uint), Some(sum), vec![Operand::Id(params[0]), Operand::Id(params[0])]));
        block.insts.push(Inst::new(Op::ReturnValue, None, None, vec![Operand::Id(sum)]));
        vec![block]
    };
    let double = m.helper_function("matbridge.double", uint, &[uint], build);
    assert_eq!(m.helper_function("matbridge.double", uint, &[uint], build), double, "found by name, not built again");
    let seven = m.constant_u32(7);
    let mut b = Builder::new(&mut m, Cursor { function: 0, block: 0, index: 0 });
    let twice = b.op(Op::FunctionCall, uint, &[double, seven]);
    b.op(Op::FunctionCall, uint, &[double, twice]);
    assert_eq!(m.functions.len(), 2);
    let out = body(&m.to_words());
    assert!(out.contains("OpName %matbridge_double \"matbridge.double\"") && out.matches("OpFunctionCall %uint %matbridge_double").count() == 2, "{out}");
}

#[test]
fn types_that_contain_themselves_are_malformed() {
    // %2 = OpTypeStruct %2: a cycle a walk over types would never leave.
    let err = Module::from_words(&[MAGIC, 0x10300, 0, 10, 0, word(Op::TypeStruct, 3), 2, 2]).unwrap_err();
    assert_eq!(err, Error::Malformed { offset: 5, message: "OpTypeStruct uses %2, which is not defined before it (types and constants must be)".into() });
    // A forward-declared pointer may be used before its OpTypePointer.
    let forward = [word(Op::TypeForwardPointer, 3), 3, 5349, word(Op::TypeStruct, 3), 2, 3, word(Op::TypePointer, 4), 3, 5349, 2];
    Module::from_words(&[&[MAGIC, 0x10300, 0, 10, 0][..], &forward].concat()).unwrap();
}

/// `main` reads a storage buffer only through a function it calls, and the sub-group built-in
/// only in a block a pass is about to rewrite.
const CALLEE_GLOBALS: &str = r#"
               OpCapability Shader
               OpCapability GroupNonUniform
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %buf %lane
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %lane BuiltIn SubgroupLocalInvocationId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %Block 0 Offset 0
               OpDecorate %Block Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
        %arr = OpTypeRuntimeArray %uint
      %Block = OpTypeStruct %arr
     %ptr_sb = OpTypePointer StorageBuffer %Block
    %ptr_elt = OpTypePointer StorageBuffer %uint
   %ptr_lane = OpTypePointer Input %uint
        %buf = OpVariable %ptr_sb StorageBuffer
       %lane = OpVariable %ptr_lane Input
     %fn_get = OpTypeFunction %uint %uint
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %l = OpLoad %uint %lane
          %x = OpFunctionCall %uint %get %l
               OpReturn
               OpFunctionEnd
        %get = OpFunction %uint None %fn_get
          %i = OpFunctionParameter %uint
      %gentr = OpLabel
          %p = OpAccessChain %ptr_elt %buf %uint_0 %i
          %v = OpLoad %uint %p
               OpReturnValue %v
               OpFunctionEnd
"#;

#[test]
fn entry_interfaces_cover_callees_and_reused_builtins() {
    if !tools_present() {
        return;
    }
    let mut m = Module::from_words(&tools::assemble(CALLEE_GLOBALS, "vulkan1.3").unwrap()).unwrap();
    let interface = |m: &Module| -> Vec<spirv::Word> { m.entry_points[0].operands.iter().skip(3).filter_map(Operand::id).collect() };
    let (buf, lane) = (interface(&m)[0], interface(&m)[1]);
    // The buffer is used only in `get`: a rebuild keeps it.
    m.rebuild_entry_interfaces();
    assert_eq!(interface(&m), vec![lane, buf]);
    // A pass replaces the lane id by a constant: the rebuild drops the built-in ...
    let zero = m.constant_u32(0);
    let load = m.functions[0].insts().find(|i| i.is(Op::Load)).and_then(|i| i.result_id).unwrap();
    m.functions[0].blocks[0].insts.retain(|i| !i.is(Op::Load));
    m.replace_all_uses(load, zero);
    m.rebuild_entry_interfaces();
    assert_eq!(interface(&m), vec![buf]);
    // ... and a later pass that reads it again gets the module's variable back in the interface.
    let uint = m.type_int(32, false);
    assert_eq!(m.get_or_add_builtin(spirv::BuiltIn::SubgroupLocalInvocationId, uint), lane);
    let mut b = Builder::new(&mut m, Cursor { function: 0, block: 0, index: 0 });
    b.load(uint, lane);
    assert_eq!(interface(&m), vec![buf, lane]);
    body(&m.to_words());
}
