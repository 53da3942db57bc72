//! The probe kernel of one cooperative-matrix shape: one sub-group loads A, B and C, applies
//! `iterations` (specialization constant 0) multiply-adds `D = A * B + D` with the operand
//! flags the shape's component types and saturation call for, and stores D row-major.
//!
//! Bindings: 0 A, 1 B, 2 C, 3 D, each a storage buffer of its component type. The module
//! declares `Shader`, `CooperativeMatrixKHR` and the Vulkan memory model: the translator
//! derives the rest.

use matbridge_translator::profile::{ComponentType, CoopMatShape};
use rspirv::dr::{Builder, Operand};
use spirv::{
    AddressingModel, Capability, CooperativeMatrixLayout, CooperativeMatrixOperands, CooperativeMatrixUse, Decoration, ExecutionMode, ExecutionModel, FPEncoding, FunctionControl, LoopControl,
    MemoryModel, Scope, StorageClass, Word,
};
use std::collections::HashMap;

/// How A, B and C lie in memory (D is always row-major).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layouts {
    /// A, B and C row-major.
    RowMajor,
    /// A, B and C column-major.
    ColumnMajor,
}

impl Layouts {
    pub const BOTH: [Layouts; 2] = [Layouts::RowMajor, Layouts::ColumnMajor];

    fn spirv(self) -> u32 {
        match self {
            Layouts::RowMajor => CooperativeMatrixLayout::RowMajorKHR as u32,
            Layouts::ColumnMajor => CooperativeMatrixLayout::ColumnMajorKHR as u32,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Layouts::RowMajor => "row-major",
            Layouts::ColumnMajor => "column-major",
        }
    }
}

/// Whether the probe can express `c` (fp8 has no CPU model here).
pub fn supported(c: ComponentType) -> bool {
    !matches!(c, ComponentType::E4m3 | ComponentType::E5m2)
}

/// The SPIR-V words of the probe kernel of `shape` for sub-groups of `subgroup` invocations.
pub fn build(shape: &CoopMatShape, layouts: Layouts, subgroup: u32) -> Result<Vec<u32>, rspirv::dr::Error> {
    let mut b = Builder::new();
    b.set_version(1, 6);
    b.capability(Capability::Shader);
    b.capability(Capability::CooperativeMatrixKHR);
    // Cooperative matrices in shaders require the Vulkan memory model.
    b.capability(Capability::VulkanMemoryModel);
    b.extension("SPV_KHR_cooperative_matrix");
    b.memory_model(AddressingModel::Logical, MemoryModel::Vulkan);
    let void = b.type_void();
    let fn_ty = b.type_function(void, vec![]);
    let uint = b.type_int(32, 0);
    let boolean = b.type_bool();
    // rspirv interns types but not constants: one id per value, so that equal matrix types
    // (C and D of one type) are one type.
    let mut constants: HashMap<u32, Word> = HashMap::new();
    let mut c = move |b: &mut Builder, v: u32| *constants.entry(v).or_insert_with(|| b.constant_bit32(uint, v));
    let (zero, one) = (c(&mut b, 0), c(&mut b, 1));
    let scope = c(&mut b, Scope::Subgroup as u32);
    let (m, n, k) = (c(&mut b, shape.m), c(&mut b, shape.n), c(&mut b, shape.k));

    // One storage buffer per operand, a struct per element type.
    let mut blocks: HashMap<ComponentType, (Word, Word)> = HashMap::new();
    let mut buffer = |b: &mut Builder, t: ComponentType, binding: u32| -> (Word, Word, Word) {
        let elem = scalar(b, t);
        let (st, ptr_elem) = *blocks.entry(t).or_insert_with(|| {
            let arr = b.type_runtime_array(elem);
            b.decorate(arr, Decoration::ArrayStride, [Operand::LiteralBit32(t.bits() / 8)]);
            let st = b.type_struct([arr]);
            b.decorate(st, Decoration::Block, []);
            b.member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
            (st, b.type_pointer(None, StorageClass::StorageBuffer, elem))
        });
        let ptr = b.type_pointer(None, StorageClass::StorageBuffer, st);
        let var = b.variable(ptr, None, StorageClass::StorageBuffer, None);
        b.decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        b.decorate(var, Decoration::Binding, [Operand::LiteralBit32(binding)]);
        (var, ptr_elem, elem)
    };
    let (va, pa, ea) = buffer(&mut b, shape.a, 0);
    let (vb, pb, eb) = buffer(&mut b, shape.b, 1);
    let (vc, pc, ec) = buffer(&mut b, shape.c, 2);
    let (vd, pd, ed) = buffer(&mut b, shape.result, 3);
    let (use_a, use_b, use_acc) =
        (c(&mut b, CooperativeMatrixUse::MatrixAKHR as u32), c(&mut b, CooperativeMatrixUse::MatrixBKHR as u32), c(&mut b, CooperativeMatrixUse::MatrixAccumulatorKHR as u32));
    let ta = b.type_cooperative_matrix_khr(ea, scope, m, k, use_a);
    let tb = b.type_cooperative_matrix_khr(eb, scope, k, n, use_b);
    let tc = b.type_cooperative_matrix_khr(ec, scope, m, n, use_acc);
    let td = b.type_cooperative_matrix_khr(ed, scope, m, n, use_acc);
    let iterations = b.spec_constant_bit32(uint, 1);
    b.decorate(iterations, Decoration::SpecId, [Operand::LiteralBit32(0)]);
    let layout = c(&mut b, layouts.spirv());
    let row_major = c(&mut b, CooperativeMatrixLayout::RowMajorKHR as u32);
    let (stride_a, stride_b, stride_c) = match layouts {
        Layouts::RowMajor => (shape.k, shape.n, shape.n),
        Layouts::ColumnMajor => (shape.m, shape.k, shape.m),
    };
    let (sa, sb, sc) = (c(&mut b, stride_a), c(&mut b, stride_b), c(&mut b, stride_c));

    let mut operands = CooperativeMatrixOperands::NONE_KHR;
    if shape.a.is_signed_integer() {
        operands |= CooperativeMatrixOperands::MATRIX_A_SIGNED_COMPONENTS_KHR;
    }
    if shape.b.is_signed_integer() {
        operands |= CooperativeMatrixOperands::MATRIX_B_SIGNED_COMPONENTS_KHR;
    }
    if shape.c.is_signed_integer() {
        operands |= CooperativeMatrixOperands::MATRIX_C_SIGNED_COMPONENTS_KHR;
    }
    if shape.result.is_signed_integer() {
        operands |= CooperativeMatrixOperands::MATRIX_RESULT_SIGNED_COMPONENTS_KHR;
    }
    if shape.saturating {
        operands |= CooperativeMatrixOperands::SATURATING_ACCUMULATION_KHR;
    }

    let f = b.begin_function(void, None, FunctionControl::NONE, fn_ty)?;
    let entry = b.begin_block(None)?;
    let (header, body, cont, merge) = (b.id(), b.id(), b.id(), b.id());
    let ptr = |b: &mut Builder, p: Word, var: Word| b.access_chain(p, None, var, [zero, zero]);
    let (a_ptr, b_ptr, c_ptr, d_ptr) = (ptr(&mut b, pa, va)?, ptr(&mut b, pb, vb)?, ptr(&mut b, pc, vc)?, ptr(&mut b, pd, vd)?);
    let a = b.cooperative_matrix_load_khr(ta, None, a_ptr, layout, Some(sa), None, [])?;
    let bm = b.cooperative_matrix_load_khr(tb, None, b_ptr, layout, Some(sb), None, [])?;
    let c0 = b.cooperative_matrix_load_khr(tc, None, c_ptr, layout, Some(sc), None, [])?;
    // The accumulator starts as C converted to the result type where they differ.
    let d0 = if tc == td { c0 } else { convert(&mut b, shape, td, c0)? };
    b.branch(header)?;
    b.begin_block(Some(header))?;
    let (i_next, acc_next) = (b.id(), b.id());
    let i = b.phi(uint, None, [(zero, entry), (i_next, cont)])?;
    let acc = b.phi(td, None, [(d0, entry), (acc_next, cont)])?;
    let more = b.u_less_than(boolean, None, i, iterations)?;
    b.loop_merge(merge, cont, LoopControl::NONE, [])?;
    b.branch_conditional(more, body, merge, [])?;
    b.begin_block(Some(body))?;
    b.cooperative_matrix_mul_add_khr(td, Some(acc_next), a, bm, acc, Some(operands))?;
    b.branch(cont)?;
    b.begin_block(Some(cont))?;
    b.i_add(uint, Some(i_next), i, one)?;
    b.branch(header)?;
    b.begin_block(Some(merge))?;
    b.cooperative_matrix_store_khr(d_ptr, acc, row_major, Some(n), None, [])?;
    b.ret()?;
    b.end_function()?;
    b.entry_point(ExecutionModel::GLCompute, f, "main", [va, vb, vc, vd]);
    b.execution_mode(f, ExecutionMode::LocalSize, [subgroup, 1, 1]);
    use rspirv::binary::Assemble;
    Ok(b.module().assemble())
}

/// The scalar type of `t`.
fn scalar(b: &mut Builder, t: ComponentType) -> Word {
    use ComponentType::*;
    match t {
        F16 | F32 | F64 => b.type_float(t.bits(), None),
        Bf16 => b.type_float(16, Some(FPEncoding::BFloat16KHR)),
        E4m3 => b.type_float(8, Some(FPEncoding::Float8E4M3EXT)),
        E5m2 => b.type_float(8, Some(FPEncoding::Float8E5M2EXT)),
        S8 | S16 | S32 | S64 => b.type_int(t.bits(), 1),
        U8 | U16 | U32 | U64 => b.type_int(t.bits(), 0),
    }
}

/// C converted to the result's matrix type.
fn convert(b: &mut Builder, shape: &CoopMatShape, td: Word, c: Word) -> Result<Word, rspirv::dr::Error> {
    let r = shape.result;
    let from = shape.c;
    if r.is_integer() && from.is_integer() {
        if r.is_signed_integer() {
            b.s_convert(td, None, c)
        } else {
            b.u_convert(td, None, c)
        }
    } else if r.is_integer() {
        if r.is_signed_integer() {
            b.convert_f_to_s(td, None, c)
        } else {
            b.convert_f_to_u(td, None, c)
        }
    } else if from.is_integer() {
        if from.is_signed_integer() {
            b.convert_s_to_f(td, None, c)
        } else {
            b.convert_u_to_f(td, None, c)
        }
    } else {
        b.f_convert(td, None, c)
    }
}
