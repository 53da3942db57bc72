//! What a module needs: its capabilities, extensions and minimum SPIR-V version, derived from
//! the instructions it uses, and which device feature each capability needs.
//!
//! [`derive()`] runs once at the end of every pipeline. Capabilities come from the grammar: an
//! instruction's own capability list, the capability lists of the enumerants among its
//! operands (a storage class, a decoration, an FP encoding, ...), and the width rules for
//! types (an `OpTypeInt 8` needs `Int8` unless only storage uses it). A requirement is met when
//! one of its capabilities is declared or implied by a declared one; otherwise its first
//! capability is added. A declared capability that only instructions could require and that
//! nothing requires any more (what a pass lowered) is removed, with the extensions that only it
//! needed. Then [`check_target`] names every remaining capability whose device feature the
//! target lacks, and where the module uses it, and every float-control execution mode the
//! target does not honour for its width.
//!
//! The grammar tables do not carry versions, so the version rules are written here, as are the
//! extensions that became core.

use crate::error::{Error, Result, Site};
use crate::ir::{capability_closure as closure, implied_capabilities as implied, Inst, Module, Operand};
use crate::profile::{DeviceCaps, FloatControls, FloatControlsIndependence, SubgroupOp};
use rspirv::dr::Operand as DrOperand;
use rspirv::grammar::OperandKind as K;
use spirv::{Capability as C, Decoration, ExecutionMode, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// A device feature a capability needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    ShaderFloat16,
    ShaderFloat64,
    ShaderInt8,
    ShaderInt16,
    ShaderInt64,
    StorageBuffer8BitAccess,
    StorageBuffer16BitAccess,
    StoragePushConstant8,
    StoragePushConstant16,
    AtomicFloat16Add,
    AtomicFloat16MinMax,
    AtomicFloat32Add,
    Int64Atomics,
    AtomicFloat32MinMax,
    BufferDeviceAddress,
    VulkanMemoryModel,
    WorkgroupExplicitLayout,
    WorkgroupExplicitLayout8Bit,
    WorkgroupExplicitLayout16Bit,
    VariablePointersStorageBuffer,
    VariablePointers,
    IntegerDotProduct,
    CooperativeMatrix,
    CooperativeMatrix2,
    BFloat16,
    Subgroup(SubgroupOp),
    /// Capabilities of OpenCL kernels, which no Vulkan device has: a pass must lower them.
    KernelEnvironment,
    /// A vendor extension matbridge translates away (SPV_NV_cooperative_matrix, the Intel
    /// matrix extensions); reaching the device with it means no pass lowered it.
    Translated(&'static str),
    /// A capability only Intel's (or Altera's) SPIR-V extensions enable, which no Vulkan driver
    /// matbridge targets accepts and no pass translates.
    Vendor(&'static str),
}

impl Feature {
    pub fn describe(self) -> String {
        match self {
            Feature::ShaderFloat16 => "shaderFloat16".into(),
            Feature::ShaderFloat64 => "shaderFloat64".into(),
            Feature::ShaderInt8 => "shaderInt8".into(),
            Feature::ShaderInt16 => "shaderInt16".into(),
            Feature::ShaderInt64 => "shaderInt64".into(),
            Feature::StorageBuffer8BitAccess => "storageBuffer8BitAccess".into(),
            Feature::StorageBuffer16BitAccess => "storageBuffer16BitAccess".into(),
            Feature::StoragePushConstant8 => "storagePushConstant8".into(),
            Feature::StoragePushConstant16 => "storagePushConstant16".into(),
            Feature::AtomicFloat16Add => "shaderBufferFloat16AtomicAdd and shaderSharedFloat16AtomicAdd".into(),
            Feature::AtomicFloat16MinMax => "shaderBufferFloat16AtomicMinMax and shaderSharedFloat16AtomicMinMax".into(),
            Feature::AtomicFloat32Add => "shaderBufferFloat32AtomicAdd and shaderSharedFloat32AtomicAdd".into(),
            Feature::Int64Atomics => "shaderBufferInt64Atomics and shaderSharedInt64Atomics".into(),
            Feature::AtomicFloat32MinMax => "shaderBufferFloat32AtomicMinMax and shaderSharedFloat32AtomicMinMax".into(),
            Feature::BufferDeviceAddress => "bufferDeviceAddress".into(),
            Feature::VulkanMemoryModel => "vulkanMemoryModel".into(),
            Feature::WorkgroupExplicitLayout => "workgroupMemoryExplicitLayout".into(),
            Feature::WorkgroupExplicitLayout8Bit => "workgroupMemoryExplicitLayout8BitAccess".into(),
            Feature::WorkgroupExplicitLayout16Bit => "workgroupMemoryExplicitLayout16BitAccess".into(),
            Feature::VariablePointersStorageBuffer => "variablePointersStorageBuffer".into(),
            Feature::VariablePointers => "variablePointers".into(),
            Feature::IntegerDotProduct => "shaderIntegerDotProduct".into(),
            Feature::CooperativeMatrix => "VK_KHR_cooperative_matrix".into(),
            Feature::CooperativeMatrix2 => "VK_NV_cooperative_matrix2".into(),
            Feature::BFloat16 => "VK_KHR_shader_bfloat16".into(),
            Feature::Subgroup(op) => format!("subgroup operation {}", op.name()),
            Feature::KernelEnvironment => "the OpenCL kernel environment (no Vulkan device has it; OpenCL kernels are not lowered yet)".into(),
            Feature::Translated(what) => format!("{what} (translate the module for this device first)"),
            Feature::Vendor(ext) => format!("{ext}, a vendor extension matbridge does not translate (Vulkan drivers refuse it without naming it)"),
        }
    }
}

/// The one table of which capability needs which device feature, used by the translator's
/// target check and by the runtime's pipeline check. `None`: every Vulkan device has it.
pub fn feature_for(cap: C) -> Option<Feature> {
    use Feature as F;
    Some(match cap {
        C::Float16 => F::ShaderFloat16,
        C::Float64 => F::ShaderFloat64,
        C::Int8 => F::ShaderInt8,
        C::Int16 => F::ShaderInt16,
        C::Int64 => F::ShaderInt64,
        C::StorageBuffer8BitAccess | C::UniformAndStorageBuffer8BitAccess => F::StorageBuffer8BitAccess,
        C::StorageBuffer16BitAccess | C::UniformAndStorageBuffer16BitAccess => F::StorageBuffer16BitAccess,
        C::StoragePushConstant8 => F::StoragePushConstant8,
        C::StoragePushConstant16 => F::StoragePushConstant16,
        C::AtomicFloat16AddEXT => F::AtomicFloat16Add,
        C::AtomicFloat16MinMaxEXT => F::AtomicFloat16MinMax,
        C::AtomicFloat32AddEXT => F::AtomicFloat32Add,
        C::Int64Atomics => F::Int64Atomics,
        C::AtomicFloat32MinMaxEXT => F::AtomicFloat32MinMax,
        C::PhysicalStorageBufferAddresses => F::BufferDeviceAddress,
        C::VulkanMemoryModel | C::VulkanMemoryModelDeviceScope => F::VulkanMemoryModel,
        C::WorkgroupMemoryExplicitLayoutKHR => F::WorkgroupExplicitLayout,
        C::WorkgroupMemoryExplicitLayout8BitAccessKHR => F::WorkgroupExplicitLayout8Bit,
        C::WorkgroupMemoryExplicitLayout16BitAccessKHR => F::WorkgroupExplicitLayout16Bit,
        C::VariablePointersStorageBuffer => F::VariablePointersStorageBuffer,
        C::VariablePointers => F::VariablePointers,
        C::DotProduct | C::DotProductInputAll | C::DotProductInput4x8Bit | C::DotProductInput4x8BitPacked => F::IntegerDotProduct,
        C::CooperativeMatrixKHR => F::CooperativeMatrix,
        C::CooperativeMatrixReductionsNV
        | C::CooperativeMatrixConversionsNV
        | C::CooperativeMatrixPerElementOperationsNV
        | C::CooperativeMatrixTensorAddressingNV
        | C::CooperativeMatrixBlockLoadsNV
        | C::TensorAddressingNV => F::CooperativeMatrix2,
        C::BFloat16TypeKHR | C::BFloat16DotProductKHR | C::BFloat16CooperativeMatrixKHR => F::BFloat16,
        C::GroupNonUniform => F::Subgroup(SubgroupOp::Basic),
        C::GroupNonUniformVote => F::Subgroup(SubgroupOp::Vote),
        C::GroupNonUniformArithmetic => F::Subgroup(SubgroupOp::Arithmetic),
        C::GroupNonUniformBallot => F::Subgroup(SubgroupOp::Ballot),
        C::GroupNonUniformShuffle => F::Subgroup(SubgroupOp::Shuffle),
        C::GroupNonUniformShuffleRelative => F::Subgroup(SubgroupOp::ShuffleRelative),
        C::GroupNonUniformClustered => F::Subgroup(SubgroupOp::Clustered),
        C::GroupNonUniformQuad => F::Subgroup(SubgroupOp::Quad),
        C::GroupNonUniformRotateKHR => F::Subgroup(SubgroupOp::Rotate),
        C::CooperativeMatrixNV => F::Translated("VK_NV_cooperative_matrix"),
        C::BFloat16ConversionINTEL => F::Translated("SPV_INTEL_bfloat16_conversion"),
        C::SubgroupMatrixMultiplyAccumulateINTEL => F::Translated("SPV_INTEL_subgroup_matrix_multiply_accumulate"),
        C::Subgroup2DBlockIOINTEL | C::Subgroup2DBlockTransformINTEL | C::Subgroup2DBlockTransposeINTEL => F::Translated("SPV_INTEL_2d_block_io"),
        C::ArbitraryPrecisionIntegersALTERA => F::Translated("SPV_INTEL_arbitrary_precision_integers"),
        C::VectorAnyINTEL => F::Translated("SPV_INTEL_vector_compute"),
        C::SplitBarrierINTEL => F::Translated("SPV_INTEL_split_barrier"),
        C::SubgroupBufferPrefetchINTEL => F::Translated("SPV_INTEL_subgroup_buffer_prefetch"),
        C::Kernel
        | C::Addresses
        | C::Linkage
        | C::Vector16
        | C::Float16Buffer
        | C::GenericPointer
        | C::Groups
        | C::DeviceEnqueue
        | C::Pipes
        | C::LiteralSampler
        | C::ImageBasic
        | C::ImageReadWrite
        | C::ImageMipmap
        | C::NamedBarrier
        | C::PipeStorage
        | C::SubgroupDispatch
        | C::SubgroupShuffleINTEL
        | C::SubgroupBufferBlockIOINTEL
        | C::SubgroupImageBlockIOINTEL => F::KernelEnvironment,
        other => {
            // Left by no pass: a vendor capability reaching a driver makes pipeline creation
            // fail without a word, so it is named here.
            let exts = DrOperand::Capability(other).required_extensions();
            match exts.first() {
                Some(first) if exts.iter().all(|e| e.starts_with("SPV_INTEL_") || e.starts_with("SPV_ALTERA_")) => F::Vendor(first),
                _ => return None,
            }
        }
    })
}

/// Whether `target` has `feature`.
pub fn target_has(target: &DeviceCaps, feature: Feature) -> bool {
    use Feature as F;
    match feature {
        F::ShaderFloat16 => target.shader_float16,
        F::ShaderFloat64 => target.shader_float64,
        F::ShaderInt8 => target.shader_int8,
        F::ShaderInt16 => target.shader_int16,
        F::ShaderInt64 => target.shader_int64,
        F::StorageBuffer8BitAccess => target.storage_buffer_8bit,
        F::StorageBuffer16BitAccess => target.storage_buffer_16bit,
        F::StoragePushConstant8 => target.storage_push_constant_8bit,
        F::StoragePushConstant16 => target.storage_push_constant_16bit,
        F::AtomicFloat16Add => target.atomic_float16_add,
        F::AtomicFloat16MinMax => target.atomic_float16_min_max,
        F::AtomicFloat32Add => target.atomic_float32_add,
        F::Int64Atomics => target.int64_atomics,
        F::AtomicFloat32MinMax => target.atomic_float32_min_max,
        F::BufferDeviceAddress => target.buffer_device_address,
        F::VulkanMemoryModel => target.vulkan_memory_model,
        F::WorkgroupExplicitLayout => target.workgroup_explicit_layout,
        F::WorkgroupExplicitLayout8Bit => target.workgroup_explicit_layout_8bit,
        F::WorkgroupExplicitLayout16Bit => target.workgroup_explicit_layout_16bit,
        F::VariablePointersStorageBuffer => target.variable_pointers_storage_buffer,
        F::VariablePointers => target.variable_pointers,
        F::IntegerDotProduct => target.integer_dot_product,
        F::CooperativeMatrix => target.has_cooperative_matrix(),
        F::CooperativeMatrix2 => target.cooperative_matrix2,
        F::BFloat16 => target.shader_bfloat16,
        F::Subgroup(op) => target.has_subgroup_op(op),
        F::KernelEnvironment | F::Translated(_) | F::Vendor(_) => false,
    }
}

fn capability(word: Word) -> Option<C> {
    C::from_u32(word)
}

/// An enumerant operand as rspirv's data representation, to ask the grammar what it needs.
fn dr_operand(kind: K, w: Word) -> Option<DrOperand> {
    Some(match kind {
        K::StorageClass => DrOperand::StorageClass(spirv::StorageClass::from_u32(w)?),
        K::Decoration => DrOperand::Decoration(spirv::Decoration::from_u32(w)?),
        K::BuiltIn => DrOperand::BuiltIn(spirv::BuiltIn::from_u32(w)?),
        K::ExecutionModel => DrOperand::ExecutionModel(spirv::ExecutionModel::from_u32(w)?),
        K::ExecutionMode => DrOperand::ExecutionMode(spirv::ExecutionMode::from_u32(w)?),
        K::AddressingModel => DrOperand::AddressingModel(spirv::AddressingModel::from_u32(w)?),
        K::MemoryModel => DrOperand::MemoryModel(spirv::MemoryModel::from_u32(w)?),
        K::GroupOperation => DrOperand::GroupOperation(spirv::GroupOperation::from_u32(w)?),
        K::FPEncoding => DrOperand::FPEncoding(spirv::FPEncoding::from_u32(w)?),
        K::Dim => DrOperand::Dim(spirv::Dim::from_u32(w)?),
        K::ImageFormat => DrOperand::ImageFormat(spirv::ImageFormat::from_u32(w)?),
        K::Scope => DrOperand::Scope(spirv::Scope::from_u32(w)?),
        K::CooperativeMatrixUse => DrOperand::CooperativeMatrixUse(spirv::CooperativeMatrixUse::from_u32(w)?),
        K::CooperativeMatrixLayout => DrOperand::CooperativeMatrixLayout(spirv::CooperativeMatrixLayout::from_u32(w)?),
        K::PackedVectorFormat => DrOperand::PackedVectorFormat(spirv::PackedVectorFormat::from_u32(w)?),
        K::MemoryAccess => DrOperand::MemoryAccess(spirv::MemoryAccess::from_bits_retain(w)),
        K::MemorySemantics => DrOperand::MemorySemantics(spirv::MemorySemantics::from_bits_retain(w)),
        K::FunctionControl => DrOperand::FunctionControl(spirv::FunctionControl::from_bits_retain(w)),
        K::LoopControl => DrOperand::LoopControl(spirv::LoopControl::from_bits_retain(w)),
        K::FPFastMathMode => DrOperand::FPFastMathMode(spirv::FPFastMathMode::from_bits_retain(w)),
        K::CooperativeMatrixOperands => DrOperand::CooperativeMatrixOperands(spirv::CooperativeMatrixOperands::from_bits_retain(w)),
        K::MatrixMultiplyAccumulateOperands => DrOperand::MatrixMultiplyAccumulateOperands(spirv::MatrixMultiplyAccumulateOperands::from_bits_retain(w)),
        K::TensorAddressingOperands => DrOperand::TensorAddressingOperands(spirv::TensorAddressingOperands::from_bits_retain(w)),
        _ => return None,
    })
}

/// Capabilities only the use of instructions, operands or types can require; a declared one
/// that nothing requires any more is removed. (Others, such as the 16-bit storage
/// capabilities, describe how memory is used and stay as declared.)
fn instruction_derived() -> &'static HashSet<C> {
    static SET: OnceLock<HashSet<C>> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set: HashSet<C> = rspirv::grammar::INSTRUCTION_TABLE.iter().flat_map(|i| i.capabilities.iter().copied()).collect();
        set.extend([C::Int8, C::Int16, C::Int64, C::Int64Atomics, C::ArbitraryPrecisionIntegersALTERA, C::VectorAnyINTEL, C::Float16, C::Float64, C::BFloat16TypeKHR, C::BFloat16CooperativeMatrixKHR]);
        // Capabilities a storage or memory model stands for, and which no other use needs.
        set.remove(&C::Shader);
        set.remove(&C::Matrix);
        set.remove(&C::Kernel);
        set.remove(&C::Addresses);
        set.remove(&C::Linkage);
        set.extend([C::DotProductInputAll, C::DotProductInput4x8Bit, C::DotProductInput4x8BitPacked]);
        // Block loads: needed by the decode functions of tensor loads.
        set.insert(C::CooperativeMatrixBlockLoadsNV);
        // Float controls: needed by the execution modes that name them.
        set.extend([C::DenormPreserve, C::DenormFlushToZero, C::SignedZeroInfNanPreserve, C::RoundingModeRTE, C::RoundingModeRTZ]);
        // 8- and 16-bit storage: derived from the pointer types that hold such data.
        set.extend(STORAGE_CAPABILITIES.iter().flat_map(|(_, caps)| caps.iter().copied()));
        // Explicit workgroup layouts: derived from workgroup pointers to blocks.
        set.extend([C::WorkgroupMemoryExplicitLayoutKHR, C::WorkgroupMemoryExplicitLayout8BitAccessKHR, C::WorkgroupMemoryExplicitLayout16BitAccessKHR]);
        // Variable pointers: derived from the logical pointers only they allow.
        set.extend([C::VariablePointers, C::VariablePointersStorageBuffer]);
        set
    })
}

/// The storage capabilities of 8- and 16-bit data per storage class: `[8-bit, 16-bit]`.
const STORAGE_CAPABILITIES: [(StorageClass, [C; 2]); 6] = [
    (StorageClass::StorageBuffer, [C::StorageBuffer8BitAccess, C::StorageBuffer16BitAccess]),
    (StorageClass::PhysicalStorageBuffer, [C::StorageBuffer8BitAccess, C::StorageBuffer16BitAccess]),
    (StorageClass::Uniform, [C::UniformAndStorageBuffer8BitAccess, C::UniformAndStorageBuffer16BitAccess]),
    (StorageClass::PushConstant, [C::StoragePushConstant8, C::StoragePushConstant16]),
    (StorageClass::Input, [C::Int8, C::StorageInputOutput16]),
    (StorageClass::Output, [C::Int8, C::StorageInputOutput16]),
];

/// For every type id: whether it holds 8-bit and 16-bit scalars (through vectors, matrices,
/// arrays and struct members; not through pointers).
pub(crate) fn narrow_types(module: &Module) -> HashMap<Word, (bool, bool)> {
    let mut out: HashMap<Word, (bool, bool)> = HashMap::new();
    for inst in module.globals() {
        let Some(id) = inst.result_id.filter(|_| inst.result_type.is_none()) else {
            continue;
        };
        let flags = match inst.op() {
            Some(Op::TypeInt | Op::TypeFloat) => (inst.word_opt(0) == Some(8), inst.word_opt(0) == Some(16)),
            Some(Op::TypeVector | Op::TypeMatrix | Op::TypeArray | Op::TypeRuntimeArray | Op::TypeStruct) => {
                let members: Vec<Word> =
                    if inst.is(Op::TypeStruct) { inst.operands.iter().filter_map(Operand::id).collect() } else { inst.operands.first().and_then(Operand::id).into_iter().collect() };
                members.iter().filter_map(|m| out.get(m)).fold((false, false), |a, b| (a.0 || b.0, a.1 || b.1))
            }
            _ => continue,
        };
        out.insert(id, flags);
    }
    out
}

/// The 8- and 16-bit scalar types (`OpTypeInt`, `OpTypeFloat`) the functions compute with: a
/// value of the type (or of a vector of it) that an instruction other than a load, a store, a
/// copy or a width-only conversion makes or takes. A module with only the 8- or 16-bit storage
/// capabilities may use such types for nothing else; a pass that, say, bit-casts an f16 to a
/// `ushort` needs `Int16` too.
fn narrow_computed(module: &Module) -> HashSet<Word> {
    let types = crate::analysis::Types::new(module);
    // The 8- or 16-bit scalar type of a value, or of its vector's or cooperative matrix's
    // components.
    let component = |ty: Word| match types.defs.get(&ty) {
        Some(t) if t.is(Op::TypeCooperativeMatrixKHR) || t.is(Op::TypeCooperativeMatrixNV) => t.id(0).ok(),
        _ => Some(types.vector(ty).map_or(ty, |(c, _)| c)),
    };
    let narrow = |ty: Word| component(ty).filter(|&c| matches!(types.scalar_width(c), Some(8 | 16)));
    let mut out = HashSet::new();
    for inst in module.functions.iter().flat_map(|f| f.insts()) {
        if matches!(inst.op(), Some(Op::Load | Op::Store | Op::CopyObject | Op::UConvert | Op::SConvert | Op::FConvert)) {
            continue;
        }
        out.extend(inst.result_type.and_then(narrow));
        out.extend(inst.operands.iter().filter_map(Operand::id).filter_map(|v| types.type_of(v)).filter_map(narrow));
        // spirv-val holds a bitcast of a pointer to the rule for every 8- or 16-bit type its
        // pointee holds.
        if inst.is(Op::Bitcast) {
            let pointers = inst.result_type.into_iter().chain(inst.operands.iter().filter_map(Operand::id).filter_map(|v| types.type_of(v)));
            for p in pointers.filter_map(|t| types.pointer(t)).map(|(_, pointee)| pointee) {
                held_scalars(&types, p, &mut out);
            }
        }
    }
    out
}

/// Adds the 8- and 16-bit scalar types that type `ty` holds (through vectors, matrices, arrays
/// and struct members; not through pointers) to `out`.
fn held_scalars(types: &crate::analysis::Types, ty: Word, out: &mut HashSet<Word>) {
    let Some(d) = types.defs.get(&ty) else { return };
    match d.op() {
        Some(Op::TypeInt | Op::TypeFloat) if matches!(d.word_opt(0), Some(8 | 16)) => {
            out.insert(ty);
        }
        Some(Op::TypeVector | Op::TypeMatrix | Op::TypeArray | Op::TypeRuntimeArray) => {
            if let Ok(e) = d.id(0) {
                held_scalars(types, e, out);
            }
        }
        Some(Op::TypeStruct) => {
            for m in d.operands.iter().filter_map(Operand::id) {
                held_scalars(types, m, out);
            }
        }
        _ => {}
    }
}

/// Extensions that became core, with the version.
fn core_since(ext: &str) -> Option<(u8, u8)> {
    Some(match ext {
        "SPV_KHR_storage_buffer_storage_class" | "SPV_KHR_16bit_storage" | "SPV_KHR_variable_pointers" | "SPV_KHR_device_group" | "SPV_KHR_multiview" | "SPV_KHR_shader_draw_parameters" => (1, 3),
        "SPV_KHR_no_integer_wrap_decoration" | "SPV_GOOGLE_decorate_string" | "SPV_GOOGLE_hlsl_functionality1" | "SPV_KHR_float_controls" => (1, 4),
        "SPV_KHR_8bit_storage"
        | "SPV_KHR_vulkan_memory_model"
        | "SPV_KHR_physical_storage_buffer"
        | "SPV_EXT_physical_storage_buffer"
        | "SPV_EXT_descriptor_indexing"
        | "SPV_EXT_shader_viewport_index_layer" => (1, 5),
        "SPV_KHR_integer_dot_product" | "SPV_KHR_terminate_invocation" => (1, 6),
        _ => return None,
    })
}

/// One requirement: any of these capabilities, and the first instruction that needs it.
struct Need<'a> {
    any_of: Vec<C>,
    inst: &'a Inst,
}

/// Everything the module's instructions require, each distinct requirement once (with the first
/// instruction that has it).
fn needs<'m>(module: &'m Module, input_closure: &HashSet<C>) -> Vec<Need<'m>> {
    let mut out: Vec<Need<'m>> = Vec::new();
    let mut seen: HashSet<Vec<C>> = HashSet::new();
    let mut push = |any_of: &[C], inst: &'m Inst| {
        if !any_of.is_empty() && !seen.contains(any_of) {
            seen.insert(any_of.to_vec());
            out.push(Need { any_of: any_of.to_vec(), inst });
        }
    };
    let declared: HashSet<C> = module.declared_capabilities().filter_map(capability).collect();
    let storage8 = [C::StorageBuffer8BitAccess, C::UniformAndStorageBuffer8BitAccess, C::StoragePushConstant8].iter().any(|c| declared.contains(c));
    let storage16 = [C::StorageBuffer16BitAccess, C::UniformAndStorageBuffer16BitAccess, C::StoragePushConstant16, C::StorageInputOutput16].iter().any(|c| declared.contains(c));
    let mut bf16_types = HashSet::new();
    let computed = narrow_computed(module);
    let narrow = narrow_types(module);
    let variable_pointers = variable_pointers(module);
    // 64-bit integer types: atomics on them need Int64Atomics (a validation rule, not the
    // grammar's).
    let int64: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::TypeInt) && g.word_opt(0) == Some(64)).filter_map(|g| g.result_id).collect();
    let value_types: HashMap<Word, Word> = module.all_insts().filter_map(|i| Some((i.result_id?, i.result_type?))).collect();
    // The grammar's capabilities of an enumerant, looked up once per distinct operand.
    let mut enum_caps: HashMap<(K, Word), Vec<C>> = HashMap::new();
    for inst in module.all_insts() {
        let op = inst.op();
        if matches!(op, Some(Op::Capability | Op::Extension)) {
            continue;
        }
        if let Some(info) = inst.info() {
            push(info.capabilities, inst);
        }
        if let Some(need) = variable_pointers.need(inst) {
            push(need, inst);
        }
        for o in &inst.operands {
            if let Operand::Enum(kind, w) = o {
                let caps = enum_caps.entry((*kind, *w)).or_insert_with(|| dr_operand(*kind, *w).map(|d| d.required_capabilities()).unwrap_or_default());
                push(caps, inst);
            }
        }
        // A built-in's capabilities (`BuiltIn SubgroupId` needs GroupNonUniform), however the
        // decoration's parameter was decoded.
        let decoration_at = match op {
            Some(Op::Decorate) => Some(1),
            Some(Op::MemberDecorate) => Some(2),
            _ => None,
        };
        if let Some(at) = decoration_at.filter(|at| inst.word_opt(*at) == Some(spirv::Decoration::BuiltIn as u32)) {
            if let Some(w) = inst.word_opt(at + 1) {
                let caps = enum_caps.entry((K::BuiltIn, w)).or_insert_with(|| dr_operand(K::BuiltIn, w).map(|d| d.required_capabilities()).unwrap_or_default());
                push(caps, inst);
            }
        }
        if op.is_some_and(|o| crate::passes::lower_kernel_pointers::is_atomic(o) || o == Op::AtomicCompareExchangeWeak) {
            let value_type = match op {
                Some(Op::AtomicStore) => inst.operands.get(3).and_then(Operand::id).and_then(|v| value_types.get(&v).copied()),
                _ => inst.result_type,
            };
            if value_type.is_some_and(|t| int64.contains(&t)) {
                push(&[C::Int64Atomics], inst);
            }
        }
        let width = inst.word_opt(0);
        let encoded = inst.operands.len() > 1;
        match (op, width) {
            // Dot products on vectors need one of the vector-input capabilities.
            (Some(Op::SDot | Op::UDot | Op::SUDot | Op::SDotAccSat | Op::UDotAccSat | Op::SUDotAccSat), _) => {
                let packed = inst.operands.iter().any(|o| matches!(o, Operand::Enum(K::PackedVectorFormat, _)));
                push(if packed { &[C::DotProductInput4x8BitPacked] } else { &[C::DotProductInputAll, C::DotProductInput4x8Bit] }, inst);
            }
            // 8- and 16-bit data in a storage class needs its storage capability.
            (Some(Op::TypePointer), _) => {
                let class = inst.word_opt(0).and_then(StorageClass::from_u32);
                let pointee = inst.operands.get(1).and_then(Operand::id);
                let held = pointee.and_then(|t| narrow.get(&t)).copied().unwrap_or_default();
                // A workgroup block is an explicit layout, with its 8- and 16-bit accesses.
                if class == Some(StorageClass::Workgroup) && pointee.is_some_and(|t| module.decoration(t, spirv::Decoration::Block).is_some()) {
                    push(&[C::WorkgroupMemoryExplicitLayoutKHR], inst);
                    if held.0 {
                        push(&[C::WorkgroupMemoryExplicitLayout8BitAccessKHR], inst);
                    }
                    if held.1 {
                        push(&[C::WorkgroupMemoryExplicitLayout16BitAccessKHR], inst);
                    }
                }
                if let Some((_, [c8, c16])) = STORAGE_CAPABILITIES.iter().find(|(c, _)| Some(*c) == class) {
                    if held.0 {
                        push(&[*c8], inst);
                    }
                    if held.1 {
                        push(&[*c16], inst);
                    }
                }
            }
            // Width rules for types.
            (Some(Op::TypeInt), Some(8)) if !storage8 || input_closure.contains(&C::Int8) || inst.result_id.is_some_and(|t| computed.contains(&t)) => push(&[C::Int8], inst),
            (Some(Op::TypeInt), Some(16)) if !storage16 || input_closure.contains(&C::Int16) || inst.result_id.is_some_and(|t| computed.contains(&t)) => push(&[C::Int16], inst),
            (Some(Op::TypeInt), Some(64)) => push(&[C::Int64], inst),
            (Some(Op::TypeInt), Some(w)) if !matches!(w, 8 | 16 | 32) => push(&[C::ArbitraryPrecisionIntegersALTERA], inst),
            // Vectors of 8 or 16 components (OpenCL's `float8`, `char16`).
            (Some(Op::TypeVector), _) if matches!(inst.word_opt(1), Some(8 | 16)) => push(&[C::Vector16], inst),
            // Vectors of other sizes (SPV_INTEL_vector_compute).
            (Some(Op::TypeVector), _) if !matches!(inst.word_opt(1), Some(2..=4)) => push(&[C::VectorAnyINTEL], inst),
            (Some(Op::TypeFloat), Some(16)) if !encoded && (!storage16 || input_closure.contains(&C::Float16) || inst.result_id.is_some_and(|t| computed.contains(&t))) => push(&[C::Float16], inst),
            (Some(Op::TypeFloat), Some(16)) if inst.word_opt(1) == Some(spirv::FPEncoding::BFloat16KHR as u32) => bf16_types.extend(inst.result_id),
            (Some(Op::TypeFloat), Some(64)) => push(&[C::Float64], inst),
            (Some(Op::TypeCooperativeMatrixKHR), _) if inst.operands.first().and_then(Operand::id).is_some_and(|t| bf16_types.contains(&t)) => push(&[C::BFloat16CooperativeMatrixKHR], inst),
            _ => {}
        }
    }
    out
}

/// What logical addressing allows only with variable pointers (SPIR-V 2.16.1, "logical pointer
/// type" rules, and SPV_KHR_variable_pointers): a `StorageBuffer` pointer needs
/// `VariablePointersStorageBuffer`, a `Workgroup` one `VariablePointers`, where `OpSelect`,
/// `OpPhi`, `OpFunctionCall`, `OpPtrAccessChain` or `OpLoad` makes it, where it is compared,
/// where a call takes one that is not a memory object declaration, and where a variable holds
/// one (an `OpUndef` pointer, which lowering can leave unused, needs nothing). glslang declares
/// `VariablePointers` for `#pragma use_variable_pointers` whether or not the code needs it; a
/// module that does not keeps running on devices without the feature.
struct VariablePointers {
    /// Logical addressing: PhysicalStorageBuffer64 counts, kernels' physical addressing does not.
    logical: bool,
    /// Pointer type id -> the storage class of a pointer variable pointers can make.
    classes: HashMap<Word, StorageClass>,
    /// Value id -> (defining opcode, result type).
    defs: HashMap<Word, (Option<Op>, Word)>,
    /// Composite and pointer types that hold such pointers (a variable of such a pointer type
    /// needs them).
    holders: HashSet<Word>,
}

fn variable_pointers(module: &Module) -> VariablePointers {
    let logical = module.memory_model.first().and_then(|i| i.word_opt(0)).is_none_or(|a| a == spirv::AddressingModel::Logical as u32 || a == spirv::AddressingModel::PhysicalStorageBuffer64 as u32);
    let mut classes = HashMap::new();
    let mut holders = HashSet::new();
    for inst in module.globals() {
        let Some(id) = inst.result_id.filter(|_| inst.result_type.is_none()) else {
            continue;
        };
        let members: Vec<Word> = match inst.op() {
            Some(Op::TypePointer) => {
                let class = inst.word_opt(0).and_then(StorageClass::from_u32);
                if let Some(c) = class.filter(|c| matches!(c, StorageClass::StorageBuffer | StorageClass::Workgroup)) {
                    classes.insert(id, c);
                }
                inst.operands.get(1).and_then(Operand::id).into_iter().collect()
            }
            Some(Op::TypeStruct) => inst.operands.iter().filter_map(Operand::id).collect(),
            Some(Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector) => inst.operands.first().and_then(Operand::id).into_iter().collect(),
            _ => continue,
        };
        if members.iter().any(|m| classes.contains_key(m) || holders.contains(m)) {
            holders.insert(id);
        }
    }
    let defs = module.all_insts().filter_map(|i| Some((i.result_id?, (i.op(), i.result_type?)))).collect();
    VariablePointers { logical, classes, defs, holders }
}

impl VariablePointers {
    fn capability(class: StorageClass) -> &'static [C] {
        if class == StorageClass::StorageBuffer {
            &[C::VariablePointersStorageBuffer]
        } else {
            &[C::VariablePointers]
        }
    }

    /// The class of a value's pointer type, where variable pointers could make it.
    fn class_of(&self, value: Word) -> Option<StorageClass> {
        self.defs.get(&value).and_then(|(_, ty)| self.classes.get(ty)).copied()
    }

    fn need(&self, inst: &Inst) -> Option<&'static [C]> {
        if !self.logical {
            return None;
        }
        let op = inst.op()?;
        // Memory that holds logical pointers.
        if op == Op::Variable && inst.result_type.is_some_and(|t| self.holders.contains(&t)) {
            return Some(&[C::VariablePointers]);
        }
        if let Some(class) = inst.result_type.and_then(|t| self.classes.get(&t)) {
            if matches!(op, Op::Select | Op::Phi | Op::FunctionCall | Op::PtrAccessChain | Op::Load) {
                return Some(Self::capability(*class));
            }
        }
        match op {
            Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff => inst.operands.iter().filter_map(Operand::id).find_map(|v| self.class_of(v)).map(Self::capability),
            Op::FunctionCall => inst
                .operands
                .iter()
                .skip(1)
                .filter_map(Operand::id)
                .filter(|v| !matches!(self.defs.get(v), Some((Some(Op::Variable | Op::FunctionParameter), _))))
                .find_map(|v| self.class_of(v))
                .map(Self::capability),
            _ => None,
        }
    }
}

/// Lowest SPIR-V version whose core covers what the module uses.
fn needed_version(module: &Module) -> (u8, u8) {
    let mut needed = (1, 0);
    let has = |e: &str| module.has_extension(e);
    for c in module.declared_capabilities().filter_map(capability) {
        let v = match c {
            C::GroupNonUniform
            | C::GroupNonUniformVote
            | C::GroupNonUniformArithmetic
            | C::GroupNonUniformBallot
            | C::GroupNonUniformShuffle
            | C::GroupNonUniformShuffleRelative
            | C::GroupNonUniformClustered
            | C::GroupNonUniformQuad => (1, 3),
            C::VulkanMemoryModel if !has("SPV_KHR_vulkan_memory_model") => (1, 5),
            // SPIRV-Tools accepts SPV_KHR_vulkan_memory_model from 1.3 on.
            C::VulkanMemoryModel => (1, 3),
            C::PhysicalStorageBufferAddresses if !has("SPV_KHR_physical_storage_buffer") && !has("SPV_EXT_physical_storage_buffer") => (1, 5),
            C::DotProduct | C::DotProductInputAll | C::DotProductInput4x8Bit | C::DotProductInput4x8BitPacked if !has("SPV_KHR_integer_dot_product") => (1, 6),
            _ => (1, 0),
        };
        needed = needed.max(v);
    }
    let mut var_class: HashMap<Word, Word> = HashMap::new();
    for inst in module.globals().iter().filter(|i| i.is(Op::Variable)) {
        let class = inst.word_opt(0).unwrap_or(0);
        if let Some(id) = inst.result_id {
            var_class.insert(id, class);
        }
        if class == StorageClass::StorageBuffer as u32 && !has("SPV_KHR_storage_buffer_storage_class") {
            needed = needed.max((1, 3));
        }
    }
    if module.execution_modes.iter().any(|i| i.is(Op::ExecutionModeId)) || module.annotations.iter().any(|i| i.is(Op::DecorateId)) {
        needed = needed.max((1, 2));
    }
    // MLIR's serializer writes NoSignedWrap and NoUnsignedWrap into SPIR-V 1.3 modules without
    // SPV_KHR_no_integer_wrap_decoration; 1.4 has them in core.
    let wrap = |i: &Inst| i.is(Op::Decorate) && matches!(i.word_opt(1), Some(d) if d == Decoration::NoSignedWrap as u32 || d == Decoration::NoUnsignedWrap as u32);
    if !has("SPV_KHR_no_integer_wrap_decoration") && module.annotations.iter().any(wrap) {
        needed = needed.max((1, 4));
    }
    // Entry points listing non-Input/Output globals were written for 1.4's interface rules.
    for ep in &module.entry_points {
        for id in ep.operands.iter().skip(3).filter_map(Operand::id) {
            if let Some(class) = var_class.get(&id) {
                if *class != StorageClass::Input as u32 && *class != StorageClass::Output as u32 {
                    needed = needed.max((1, 4));
                }
            }
        }
    }
    needed
}

/// Highest SPIR-V version a Vulkan API version accepts.
pub fn max_spirv_for(api: &str) -> (u8, u8) {
    let mut parts = api.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    match (parts.next().unwrap_or(1), parts.next().unwrap_or(0)) {
        (1, 0) => (1, 0),
        (1, 1) => (1, 3),
        (1, 2) => (1, 5),
        _ => (1, 6),
    }
}

/// Derives the capabilities, extensions and version of `module` from what it uses.
/// `input_capabilities` are those the module declared before any pass ran.
pub fn derive(module: &mut Module, input_capabilities: &[Word], target: &DeviceCaps) -> Result<()> {
    let removed = derive_capabilities(module, input_capabilities, target);
    derive_version(module, target)?;
    derive_extensions(module, &removed);
    Ok(())
}

/// Drops duplicate and no longer required capabilities, then declares every requirement the
/// remaining ones do not meet. Returns the dropped capabilities.
fn derive_capabilities(module: &mut Module, input_capabilities: &[Word], target: &DeviceCaps) -> Vec<C> {
    let input_closure = closure(input_capabilities.iter().filter_map(|w| capability(*w)));
    let needs: Vec<Vec<C>> = needs(module, &input_closure).into_iter().map(|n| n.any_of).collect();
    // A declared capability that only instructions could require goes when no requirement
    // names it (one implied by a capability that stays, stays too: it costs nothing). A
    // requirement with choices names the declared one the target runs, else the one it would
    // be met with, else all: a declared `GroupNonUniformClustered` does not stay for an
    // `OpGroupNonUniformBitwiseOr Reduce` on a target without clustered operations.
    let declared: Vec<C> = module.declared_capabilities().filter_map(capability).collect();
    let runs = |c: &C| feature_for(*c).is_none_or(|f| target_has(target, f));
    let named: HashSet<C> = needs
        .iter()
        .flat_map(|n| match n.iter().find(|c| declared.contains(c) && runs(c)).or_else(|| n.iter().find(|c| **c != C::Kernel && runs(c))) {
            Some(c) if n.len() > 1 => vec![*c],
            _ => n.clone(),
        })
        .collect();
    let derived = instruction_derived();
    let removable = |c: &C| derived.contains(c) && !named.contains(c);
    let staying = closure(declared.iter().copied().filter(|c| !removable(c)));
    let mut removed: Vec<C> = Vec::new();
    let mut seen = HashSet::new();
    module.capabilities.retain(|i| {
        let Some(c) = i.word_opt(0).and_then(capability) else {
            return true;
        };
        if !seen.insert(c) {
            return false; // duplicate declaration
        }
        let drop = removable(&c) && !staying.contains(&c);
        if drop {
            removed.push(c);
        }
        !drop
    });
    let mut have = closure(module.declared_capabilities().filter_map(capability));
    // Needs with one choice first: what they add may meet the others (GroupNonUniformBallot
    // meets `BuiltIn SubgroupLocalInvocationId`'s Kernel-or-GroupNonUniform). Where a choice is
    // left, the first the target runs wins, and Kernel goes last: no Vulkan device has it.
    let mut needs = needs;
    needs.sort_by_key(|n| n.len());
    for any_of in &needs {
        if any_of.iter().any(|c| have.contains(c)) {
            continue;
        }
        // The first choice the target can run, else the first that is not Kernel.
        let c = any_of.iter().copied().find(|c| *c != C::Kernel && runs(c)).or_else(|| any_of.iter().copied().find(|c| *c != C::Kernel)).unwrap_or(any_of[0]);
        implied(c, &mut have);
        module.capabilities.push(Inst::new(Op::Capability, None, None, vec![Operand::Enum(K::Capability, c as u32)]));
    }
    removed
}

/// Raises the version header to what the module uses (never lowers it).
fn derive_version(module: &mut Module, target: &DeviceCaps) -> Result<()> {
    let needed = needed_version(module).max(module.version());
    let max = max_spirv_for(&target.api_version);
    if needed > max {
        return Err(Error::Unsupported {
            site: Box::new(Site { opcode: "module header".into(), offset: Some(1), index: None, function: None }),
            target: target.name.clone(),
            missing: format!("SPIR-V {}.{} (Vulkan {} accepts up to {}.{})", needed.0, needed.1, target.api_version, max.0, max.1),
        });
    }
    if needed != module.version() {
        log::info!("raising the SPIR-V version from {:?} to {:?}", module.version(), needed);
        let before = module.version();
        module.set_version(needed.0, needed.1);
        // From 1.4 on, interfaces list every global variable an entry point uses.
        if before < (1, 4) && needed >= (1, 4) {
            module.rebuild_entry_interfaces();
        }
    }
    Ok(())
}

/// Extensions: those only `removed` capabilities needed go, and so do those of instructions
/// that no instruction or capability left needs; those the remaining capabilities need (and
/// the version does not cover) are added; duplicates go.
fn derive_extensions(module: &mut Module, removed: &[C]) {
    let version = module.version();
    let lists: Vec<Vec<&'static str>> = module.declared_capabilities().filter_map(capability).map(|c| DrOperand::Capability(c).required_extensions()).collect();
    let still_needed: HashSet<&'static str> = lists.iter().flatten().copied().collect();
    let removed_exts: HashSet<&'static str> = removed.iter().flat_map(|c| DrOperand::Capability(*c).required_extensions()).collect();
    let used_by_instructions: HashSet<&'static str> = module.all_insts().filter_map(|i| i.info()).flat_map(|i| i.extensions.iter().copied()).collect();
    let instruction_extensions = crate::ir::grammar::instruction_extensions();
    let mut seen = HashSet::new();
    module.extensions.retain(|i| {
        let name = i.string(0).unwrap_or_default();
        let name = name.as_str();
        let only_for_removed = removed_exts.contains(name) && !still_needed.contains(name);
        let instructions_gone = instruction_extensions.contains(name) && !used_by_instructions.contains(name) && !still_needed.contains(name);
        seen.insert(name.to_string()) && !only_for_removed && !instructions_gone
    });
    for list in lists {
        if list.iter().any(|e| seen.contains(*e)) {
            continue;
        }
        if let Some(e) = list.into_iter().find(|e| core_since(e).is_none_or(|v| version < v)) {
            seen.insert(e.to_string());
            module.extensions.push(Inst::new(Op::Extension, None, None, vec![Operand::string(e)]));
        }
    }
}

/// Fails naming the first capability whose device feature `target` lacks, and the instruction
/// that needs it.
pub fn check_target(module: &Module, target: &DeviceCaps) -> Result<()> {
    for decl in &module.capabilities {
        // SPV_INTEL_joint_matrix's capabilities the grammar lacks, left by every pass (the
        // KHR form's checked instructions and interpretations): no driver takes them.
        if let Some(name) = decl.word_opt(0).and_then(crate::ir::grammar::intel_cooperative_matrix::capability_name) {
            return Err(Error::Unsupported {
                site: module.site(decl),
                target: target.name.clone(),
                missing: format!("a lowering of capability {name} (SPV_INTEL_joint_matrix), which no pass translates and no Vulkan driver accepts"),
            });
        }
        let Some(c) = decl.word_opt(0).and_then(capability) else {
            continue;
        };
        let Some(feature) = feature_for(c) else {
            continue;
        };
        if target_has(target, feature) {
            continue;
        }
        // Name the first instruction that needs it, else the declaration.
        let user = needs(module, &HashSet::new()).into_iter().find(|n| n.any_of.contains(&c)).map(|n| n.inst);
        let site = module.site(user.unwrap_or(decl));
        return Err(Error::MissingCapability { capability: format!("{c:?}"), site, feature: feature.describe(), target: target.name.clone() });
    }
    if let Some((inst, missing)) = float_controls_missing(module, target) {
        return Err(Error::Unsupported { site: module.site(inst), target: target.name.clone(), missing });
    }
    if !target.subgroup_extended_types {
        if let Some(user) = crate::passes::lower_subgroup_extended_types::first_user(module) {
            return Err(Error::Unsupported { site: module.site(user), target: target.name.clone(), missing: "shaderSubgroupExtendedTypes (a sub-group operation on 8-, 16- or 64-bit values)".into() });
        }
    }
    Ok(())
}

/// The float-control execution modes of `module` (`OpExecutionMode %f DenormPreserve 32`):
/// entry point, mode, float width and the instruction.
pub fn float_control_modes(module: &Module) -> Vec<(Word, ExecutionMode, u32, &Inst)> {
    module
        .execution_modes
        .iter()
        .filter(|m| m.is(Op::ExecutionMode))
        .filter_map(|m| {
            let mode = m.word_opt(1).and_then(ExecutionMode::from_u32)?;
            FloatControls::is_float_control(mode).then_some(())?;
            Some((m.word_opt(0)?, mode, m.word_opt(2)?, m))
        })
        .collect()
}

/// The first float-control execution mode of `module` that `target` does not honour, and
/// what it lacks: the mode's property for its width (`shaderDenormPreserveFloat32`), or, where
/// the device sets widths' denormal or rounding modes only alike
/// (`denormBehaviorIndependence`, `roundingModeIndependence`), an entry point that sets two
/// of them apart. Vulkan leaves such a pipeline undefined and drivers need not check it.
pub fn float_controls_missing<'m>(module: &'m Module, target: &DeviceCaps) -> Option<(&'m Inst, String)> {
    use ExecutionMode as M;
    let modes = float_control_modes(module);
    let controls = &target.float_controls;
    for (_, mode, width, inst) in &modes {
        if controls.supports(*mode, *width) != Some(true) {
            let property = FloatControls::property(*mode, *width).unwrap_or_default();
            return Some((inst, format!("{property} (execution mode {mode:?} {width})")));
        }
    }
    let groups: [(&[M], FloatControlsIndependence, &str); 2] = [
        (&[M::DenormPreserve, M::DenormFlushToZero], controls.denorm_behavior_independence, "denormBehaviorIndependence"),
        (&[M::RoundingModeRTE, M::RoundingModeRTZ], controls.rounding_mode_independence, "roundingModeIndependence"),
    ];
    for (group, independence, property) in groups {
        // Widths that must agree: all of them, or 16 with 64.
        let tied = |width: u32| match independence {
            FloatControlsIndependence::All => false,
            FloatControlsIndependence::Only32Bit => width != 32,
            FloatControlsIndependence::None => true,
        };
        let mut first: HashMap<Word, (M, u32)> = HashMap::new();
        for (entry, mode, width, inst) in modes.iter().filter(|m| group.contains(&m.1) && tied(m.2)) {
            match first.get(entry) {
                Some((other, other_width)) if other != mode => {
                    return Some((inst, format!("{property} ALL: the entry point sets {other:?} for {other_width}-bit and {mode:?} for {width}-bit floats")));
                }
                Some(_) => {}
                None => {
                    first.insert(*entry, (*mode, *width));
                }
            }
        }
    }
    None
}
