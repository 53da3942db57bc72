//! Checks that a module's resource interface fits the pipeline layout matbridge builds for it
//! (storage and uniform buffers at set 0, bindings `0..bindings`, optional push constants,
//! 32-bit specialization constants) and that it has the compute entry point asked for, and says
//! which bindings are uniform buffers.
//!
//! Vulkan leaves a mismatch undefined, and drivers do not all survive one: a storage buffer
//! decorated `DescriptorSet 100` crashes lavapipe and SwiftShader in vkCreateComputePipelines.
//! So the runtime refuses such modules with an error that names the variable or constant.

use crate::error::{Error, Result};
use crate::pipeline::PipelineDesc;
use ash::vk;
use matbridge_translator::ir::{Inst, Module, Operand};
use spirv::{Decoration, ExecutionModel, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

fn mismatch(what: String) -> Error {
    Error::InterfaceMismatch(what)
}

/// Checks `module` against `desc`; see the module documentation. Returns the descriptor type of
/// each binding `0..desc.bindings` (storage buffers where the module does not use a binding).
pub(crate) fn check(module: &Module, desc: &PipelineDesc<'_>) -> Result<Vec<vk::DescriptorType>> {
    let mut types = vec![vk::DescriptorType::STORAGE_BUFFER; desc.bindings as usize];
    let mut seen: HashMap<Word, Word> = HashMap::new();
    // The entry point, and the global variables it uses: those that any function refers to
    // (a superset of the entry point's static use) and, from SPIR-V 1.4, that it lists. Vulkan
    // matches only statically used resources with the layout; glslang lists every global, used
    // or not (a `buffer_reference` block's instance name is an unused storage buffer at binding
    // 0).
    let entry = module
        .entry_points
        .iter()
        .find(|i| i.word_opt(0) == Some(ExecutionModel::GLCompute as u32) && i.string(2).as_deref() == Some(desc.entry_point))
        .ok_or_else(|| mismatch(format!("the module has no GLCompute entry point named `{}`", desc.entry_point)))?;
    let used: HashSet<Word> = module.functions.iter().flat_map(|f| f.insts()).flat_map(Inst::used_ids).collect();
    let interface: HashSet<Word> = if module.version() >= (1, 4) { entry.operands.iter().skip(3).filter_map(Operand::id).filter(|v| used.contains(v)).collect() } else { used };

    let mut decorations: HashMap<(Word, Word), Word> = HashMap::new();
    for d in module.annotations.iter().filter(|i| i.is(Op::Decorate)) {
        if let (Some(target), Some(dec)) = (d.operands.first().and_then(Operand::id), d.word_opt(1)) {
            decorations.insert((target, dec), d.word_opt(2).unwrap_or(0));
        }
    }
    let defs: HashMap<Word, &Inst> = module.globals().iter().filter_map(|i| i.result_id.map(|id| (id, i))).collect();
    let class = |c: StorageClass| c as Word;

    for var in module.globals().iter().filter(|i| i.is(Op::Variable)) {
        let (Some(id), Some(storage), Some(ptr)) = (var.result_id, var.word_opt(0), var.result_type) else { continue };
        if !interface.contains(&id) {
            continue;
        }
        let name = format!("variable %{id} (word offset {})", var.at());
        if storage == class(StorageClass::StorageBuffer) || storage == class(StorageClass::Uniform) || storage == class(StorageClass::UniformConstant) {
            let set = decorations.get(&(id, Decoration::DescriptorSet as Word)).copied().unwrap_or(0);
            let binding = decorations.get(&(id, Decoration::Binding as Word)).copied();
            if storage == class(StorageClass::UniformConstant) && binding.is_none() {
                continue;
            }
            if set != 0 || binding.is_none_or(|b| b >= desc.bindings) {
                return Err(mismatch(format!(
                    "{name} is at descriptor set {set}, binding {}; the pipeline has buffers at set 0, bindings 0..{}",
                    binding.map_or("none".to_string(), |b| b.to_string()),
                    desc.bindings
                )));
            }
            // A Uniform-class block is a storage buffer only when its struct is a BufferBlock.
            let buffer_block = || {
                let pointee = defs.get(&ptr).filter(|p| p.is(Op::TypePointer)).and_then(|p| p.operands.get(1).and_then(Operand::id));
                pointee.is_some_and(|s| decorations.contains_key(&(s, Decoration::BufferBlock as Word)))
            };
            let Some(binding) = binding else { continue };
            if storage == class(StorageClass::UniformConstant) {
                // Storage images and storage texel buffers (Sampled 2) are the opaque kinds.
                let pointee = defs.get(&ptr).filter(|p| p.is(Op::TypePointer)).and_then(|p| p.operands.get(1).and_then(Operand::id)).and_then(|t| defs.get(&t));
                let kind = match pointee.filter(|t| t.is(Op::TypeImage) && t.word_opt(5) == Some(2)) {
                    Some(t) if t.word_opt(1) == Some(spirv::Dim::DimBuffer as u32) => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
                    Some(_) => vk::DescriptorType::STORAGE_IMAGE,
                    None => return Err(mismatch(format!("{name} is a sampled image, sampler or other opaque resource; the pipeline binds buffers and storage images only"))),
                };
                if let Some(other) = seen.insert(binding, id).filter(|_| types[binding as usize] != kind) {
                    return Err(mismatch(format!("{name} and variable %{other} share binding {binding} as different kinds of descriptor")));
                }
                types[binding as usize] = kind;
                continue;
            }
            let is_uniform = storage == class(StorageClass::Uniform) && !buffer_block();
            // Variables may alias a binding, but only as one kind of descriptor.
            let kind = if is_uniform { vk::DescriptorType::UNIFORM_BUFFER } else { vk::DescriptorType::STORAGE_BUFFER };
            if let Some(other) = seen.insert(binding, id).filter(|_| types[binding as usize] != kind) {
                return Err(mismatch(format!("{name} and variable %{other} share binding {binding} as a uniform and a storage buffer")));
            }
            types[binding as usize] = kind;
        } else if storage == class(StorageClass::PushConstant) && desc.push_constant_bytes == 0 {
            return Err(mismatch(format!("{name} is a push-constant block, and the pipeline declares no push constants")));
        }
    }

    // Specialization constants are passed as 4 bytes each: the constant must be a bool or a
    // 32-bit scalar.
    let spec_ids: HashMap<Word, Word> = decorations.iter().filter(|((_, d), _)| *d == Decoration::SpecId as Word).map(|((id, _), spec)| (*spec, *id)).collect();
    for s in desc.spec_constants {
        let Some(constant) = spec_ids.get(&s.id).and_then(|id| defs.get(id)) else { continue };
        let ok = match constant.op() {
            Some(Op::SpecConstantTrue | Op::SpecConstantFalse) => true,
            Some(Op::SpecConstant) => constant.result_type.and_then(|t| defs.get(&t)).is_some_and(|t| (t.is(Op::TypeInt) || t.is(Op::TypeFloat)) && t.word_opt(0) == Some(32)),
            _ => false,
        };
        if !ok {
            return Err(mismatch(format!("specialization constant {} (word offset {}) is not a bool or 32-bit scalar, and is given 4 bytes", s.id, constant.at())));
        }
    }
    Ok(types)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::SpecConstant;

    /// A compute kernel with a storage buffer at (0, 1), a push-constant block and a 64-bit
    /// specialization constant (id 3) beside a 32-bit one (id 4).
    const KERNEL: &str = r#"
               OpCapability Shader
               OpCapability Int64
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %buf %pc
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %buf_t Block
               OpMemberDecorate %buf_t 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 1
               OpDecorate %pc_t Block
               OpMemberDecorate %pc_t 0 Offset 0
               OpDecorate %wide SpecId 3
               OpDecorate %narrow SpecId 4
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %u64 = OpTypeInt 64 0
       %wide = OpSpecConstant %u64 7
     %narrow = OpSpecConstant %uint 7
      %buf_t = OpTypeStruct %uint
      %buf_p = OpTypePointer StorageBuffer %buf_t
        %buf = OpVariable %buf_p StorageBuffer
       %pc_t = OpTypeStruct %uint
       %pc_p = OpTypePointer PushConstant %pc_t
         %pc = OpVariable %pc_p PushConstant
       %zero = OpConstant %uint 0
      %buf_e = OpTypePointer StorageBuffer %uint
       %pc_e = OpTypePointer PushConstant %uint
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %bp = OpAccessChain %buf_e %buf %zero
         %bv = OpLoad %uint %bp
         %pp = OpAccessChain %pc_e %pc %zero
         %pv = OpLoad %uint %pp
               OpReturn
               OpFunctionEnd
"#;

    fn module(text: &str) -> Option<Module> {
        let present = matbridge_translator::tools::find("spirv-as").is_some();
        assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        present.then(|| Module::from_words(&matbridge_translator::tools::assemble(text, "vulkan1.3").unwrap()).unwrap())
    }

    fn desc<'a>(spirv: &'a [u32], bindings: u32, push: u32, spec: &'a [SpecConstant]) -> PipelineDesc<'a> {
        PipelineDesc { spirv, bindings, push_constant_bytes: push, spec_constants: spec, ..Default::default() }
    }

    #[test]
    fn a_fitting_module_passes_and_each_misfit_is_named() {
        let Some(m) = module(KERNEL) else { return };
        let err = |d: &PipelineDesc<'_>| check(&m, d).unwrap_err().to_string();
        check(&m, &desc(&[], 2, 4, &[SpecConstant::u32(4, 1), SpecConstant::u32(9, 1)])).unwrap();
        assert!(err(&desc(&[], 1, 4, &[])).contains("descriptor set 0, binding 1; the pipeline has buffers at set 0, bindings 0..1"));
        assert!(err(&desc(&[], 2, 0, &[])).contains("push-constant block"));
        assert!(err(&desc(&[], 2, 4, &[SpecConstant::u32(3, 1)])).contains("specialization constant 3"));
        assert!(err(&PipelineDesc { entry_point: "other", ..desc(&[], 2, 4, &[]) }).contains("no GLCompute entry point named `other`"));
        // The same buffer in another set, and as a uniform buffer.
        let Some(m) = module(&KERNEL.replace("%buf DescriptorSet 0", "%buf DescriptorSet 100")) else { return };
        assert!(check(&m, &desc(&[], 2, 4, &[])).unwrap_err().to_string().contains("descriptor set 100"));
        let Some(m) = module(&KERNEL.replace("StorageBuffer", "Uniform")) else { return };
        assert_eq!(check(&m, &desc(&[], 2, 4, &[])).unwrap(), [vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::UNIFORM_BUFFER]);
        // Before SPIR-V 1.4, the variables a function refers to; an unused one may sit anywhere.
        let unused = KERNEL
            .replace("%main \"main\" %buf %pc", "%main \"main\"")
            .replace("         %bp = OpAccessChain %buf_e %buf %zero\n         %bv = OpLoad %uint %bp\n         %pp = OpAccessChain %pc_e %pc %zero\n         %pv = OpLoad %uint %pp\n", "");
        let Some(old) = module(&unused) else { return };
        let mut words = old.to_words();
        words[1] = 0x0001_0300;
        let old = Module::from_words(&words).unwrap();
        check(&old, &desc(&[], 1, 0, &[])).unwrap();
        // From SPIR-V 1.4, a variable the entry point lists but no function uses (glslang lists
        // every global) may sit anywhere too.
        let listed = KERNEL.replace("%buf %pc", "%buf %pc %far").replace("       %pc_t = OpTypeStruct %uint", "        %far = OpVariable %buf_p StorageBuffer\n       %pc_t = OpTypeStruct %uint");
        let Some(m) = module(&listed.replace("OpDecorate %buf Binding 1", "OpDecorate %buf Binding 1\n               OpDecorate %far DescriptorSet 3\n               OpDecorate %far Binding 9"))
        else {
            return;
        };
        check(&m, &desc(&[], 2, 4, &[])).unwrap();
        // Uniform-class BufferBlock structs are storage buffers (SPIR-V before 1.3).
        let Some(m) = module(&KERNEL.replace("StorageBuffer", "Uniform").replace("%buf_t Block", "%buf_t BufferBlock")) else { return };
        assert_eq!(check(&m, &desc(&[], 2, 4, &[])).unwrap(), [vk::DescriptorType::STORAGE_BUFFER; 2]);
        // One binding both ways.
        let both = KERNEL.replace("%buf %pc", "%buf %pc %ubuf").replace(
            "       %pc_t = OpTypeStruct %uint",
            "     %ubuf_p = OpTypePointer Uniform %buf_t\n       %ubuf = OpVariable %ubuf_p Uniform\n     %ubuf_e = OpTypePointer Uniform %uint\n       %pc_t = OpTypeStruct %uint",
        );
        let both = both
            .replace("OpDecorate %buf Binding 1", "OpDecorate %buf Binding 1\n               OpDecorate %ubuf DescriptorSet 0\n               OpDecorate %ubuf Binding 1")
            .replace("               OpReturn", "         %up = OpAccessChain %ubuf_e %ubuf %zero\n         %uv = OpLoad %uint %up\n               OpReturn");
        let Some(m) = module(&both) else { return };
        assert!(check(&m, &desc(&[], 2, 4, &[])).unwrap_err().to_string().contains("share binding 1 as a uniform and a storage buffer"));
    }
}
