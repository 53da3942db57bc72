//! `LowerMatrixInterpretations`: SPV_INTEL_joint_matrix's Component Type Interpretations in the
//! KHR form current DPC++ writes: bits of a KHR multiply-add's Cooperative Matrix Operands that
//! say how to read its matrices' components, which no Vulkan device takes:
//! `MatrixAAndBTF32ComponentsINTEL` (0x20: A and B are f32 read as TF32),
//! `MatrixAAndBBFloat16ComponentsINTEL` (0x40: A and B hold bf16 bits in 16-bit integers),
//! `MatrixCBFloat16ComponentsINTEL` (0x80: C does) and `MatrixResultBFloat16ComponentsINTEL`
//! (0x100: the result does).
//!
//! Rewrite:
//! - every matrix type a multiply-add reads or writes as bf16 gets the bf16 component
//!   (`OpTypeFloat 16 BFloat16KHR`) in place of its 16-bit integer, and what the module does
//!   with single components of such matrices is bitcast between the two: `OpCompositeExtract`
//!   results, `OpCompositeInsert` and `OpCompositeConstruct` values, constant fills, and loads
//!   and stores through access chains into matrix variables (whose pointers then point at the
//!   bf16 component). KHR loads and stores of the matrices read the pointer as pointing at the
//!   component: one that points at another type is cast (the bits move unchanged); the
//!   bounds-checked ones (`lower-checked-matrix-access` lowers them later) cast theirs
//!   themselves, and a checked fill's Value is bitcast;
//! - TF32 operands are multiplied with the low 13 bits of every element's mantissa cleared (the
//!   precision TF32 holds), through a copy, as `lower-joint-matrix` does for the older form;
//! - the interpretation bits leave the operands.
//!
//! Preconditions: Kernel-form pointers (the pass runs before `lower-kernel-pointers`: casting a
//! pointer is an `OpBitcast`). Refused by name: a bf16 bit on a matrix whose components are not
//! 16-bit integers, TF32 on one whose are not 32-bit floats, a matrix type one multiply-add
//! reads as bf16 and another as integers, and any other instruction on a single component of a
//! bf16 matrix (an arithmetic or conversion of the whole matrix, a pointer to a component used
//! but by a load or store). The `CooperativeMatrixBFloat16ComponentTypeINTEL` and
//! `CooperativeMatrixTF32ComponentTypeINTEL` capabilities go.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::grammar::intel_cooperative_matrix as icm;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_joint_matrix::drop_capability;
use crate::passes::tile_cooperative_matrix::matrix;
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{FPEncoding, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct LowerMatrixInterpretations;

/// The interpretation bits of Cooperative Matrix Operands (SPV_INTEL_joint_matrix's KHR form).
pub(crate) mod bits {
    pub const TF32_A_AND_B: u32 = 0x20;
    pub const BF16_A_AND_B: u32 = 0x40;
    pub const BF16_C: u32 = 0x80;
    pub const BF16_RESULT: u32 = 0x100;
    pub const ALL: u32 = TF32_A_AND_B | BF16_A_AND_B | BF16_C | BF16_RESULT;
    /// `CooperativeMatrixTF32ComponentTypeINTEL`, `CooperativeMatrixBFloat16ComponentTypeINTEL`.
    pub const CAPABILITIES: [u32; 2] = [6436, 6437];
}

impl Pass for LowerMatrixInterpretations {
    fn name(&self) -> &'static str {
        "lower-matrix-interpretations"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        for cap in bits::CAPABILITIES {
            if drop_capability(module, cap) {
                outcome.count(Op::Capability as u32);
            }
        }
        let mul_adds: Vec<Inst> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(Op::CooperativeMatrixMulAddKHR) && mask(i) & bits::ALL != 0).cloned().collect();
        if mul_adds.is_empty() {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let bf16_types = bf16_types(module, &types)?;
        let bf16 = module.type_float_encoded(16, FPEncoding::BFloat16KHR);
        let mut l = Lowering { types, bf16_types, bf16, chains: HashSet::new(), uint: module.type_int(32, false) };
        for opcode in module.rewrite_matching(&mut l, |l, i| l.involves(i), |l, b, inst| l.rewrite(b, inst))? {
            outcome.count(opcode);
        }
        retype(module, &l.bf16_types, bf16);
        module.reorder_globals();
        outcome.notes.push(format!("{} matrix types read as bf16, {} multiply-adds with interpretations", l.bf16_types.len(), mul_adds.len()));
        Ok(outcome)
    }
}

/// Instructions that read a matrix's type or coordinates, not its components.
fn is_matrix_query(inst: &Inst) -> bool {
    use crate::ir::grammar::intel_cooperative_matrix as icm;
    inst.is(Op::CooperativeMatrixLengthKHR) || inst.opcode == icm::GET_ELEMENT_COORD
}

fn mask(inst: &Inst) -> u32 {
    inst.word_opt(3).unwrap_or(0)
}

/// Every matrix type a multiply-add reads or writes as bf16, checked against every other
/// multiply-add that uses it.
fn bf16_types(module: &Module, types: &Types) -> Result<HashSet<Word>> {
    let mul_adds: Vec<&Inst> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(Op::CooperativeMatrixMulAddKHR)).collect();
    // The matrix types of a multiply-add (A, B, C, result) and which of them it reads as bf16.
    let roles = |inst: &Inst| -> [(Word, bool); 4] {
        let m = mask(inst);
        let ty = |k: usize| inst.operands.get(k).and_then(Operand::id).and_then(|v| types.type_of(v)).unwrap_or_default();
        let ab = m & bits::BF16_A_AND_B != 0;
        [(ty(0), ab), (ty(1), ab), (ty(2), m & bits::BF16_C != 0), (inst.result_type.unwrap_or_default(), m & bits::BF16_RESULT != 0)]
    };
    let mut set = HashSet::new();
    for inst in &mul_adds {
        for (ty, as_bf16) in roles(inst) {
            if !as_bf16 {
                continue;
            }
            let ok = matrix(types, ty).is_some_and(|m| types.int(m.component).is_some_and(|(w, _)| w == 16));
            if !ok {
                return Err(Error::Invalid {
                    site: module.site(inst),
                    message: format!("a bf16 Cooperative Matrix Operand on %{ty}, which is not a cooperative matrix of 16-bit integers (the bits of bf16 values)"),
                });
            }
            set.insert(ty);
        }
        let m = mask(inst);
        if m & bits::TF32_A_AND_B != 0 {
            for (ty, _) in &roles(inst)[..2] {
                if matrix(types, *ty).is_none_or(|m| types.float(m.component) != Some((32, None))) {
                    return Err(Error::Invalid { site: module.site(inst), message: format!("MatrixAAndBTF32ComponentsINTEL on %{ty}, which is not a cooperative matrix of 32-bit floats") });
                }
            }
        }
    }
    for inst in &mul_adds {
        if let Some((ty, _)) = roles(inst).into_iter().find(|(ty, as_bf16)| !as_bf16 && set.contains(ty)) {
            return Err(Error::Invalid {
                site: module.site(inst),
                message: format!("matrix type %{ty} is read as bf16 by one multiply-add and as 16-bit integers by this one (a matrix type holds one kind of component)"),
            });
        }
    }
    Ok(set)
}

/// The bf16 matrix types get the bf16 component in place, and their constant fills bf16
/// constants of the same bits.
fn retype(module: &mut Module, retyped: &HashSet<Word>, bf16: Word) {
    let constants: HashMap<Word, Vec<Operand>> = module.globals().iter().filter(|g| g.is(Op::Constant)).filter_map(|g| Some((g.result_id?, g.operands.clone()))).collect();
    let constant_fills: Vec<(Word, Word)> = module
        .globals()
        .iter()
        .filter(|g| g.is(Op::ConstantComposite) || g.is(Op::SpecConstantComposite))
        .filter(|g| g.result_type.is_some_and(|t| retyped.contains(&t)))
        .filter_map(|g| Some((g.result_id?, g.operands.first().and_then(Operand::id)?)))
        .collect();
    let mut fills = Vec::new();
    for (composite, fill) in constant_fills {
        let value = match constants.get(&fill) {
            Some(bits) => module.intern(Op::Constant, Some(bf16), bits.clone()),
            None => module.constant_null(bf16),
        };
        fills.push((composite, value));
    }
    for g in module.globals_mut() {
        match g.result_id {
            Some(id) if retyped.contains(&id) && g.is(Op::TypeCooperativeMatrixKHR) => g.operands[0] = Operand::Id(bf16),
            Some(id) => {
                if let Some((_, value)) = fills.iter().find(|(c, _)| *c == id) {
                    g.operands = vec![Operand::Id(*value)];
                }
            }
            None => {}
        }
    }
}

struct Lowering {
    types: Types,
    bf16_types: HashSet<Word>,
    bf16: Word,
    /// Access chains to a component of a bf16 matrix, their pointers retyped.
    chains: HashSet<Word>,
    uint: Word,
}

impl Lowering {
    fn is_bf16_value(&self, v: Word) -> bool {
        self.types.type_of(v).is_some_and(|t| self.bf16_types.contains(&t))
    }

    /// Whether `ptr` points at a bf16 matrix.
    fn points_at_bf16(&self, ptr: Word) -> bool {
        self.types.type_of(ptr).and_then(|t| self.types.pointer(t)).is_some_and(|(_, pointee)| self.bf16_types.contains(&pointee))
    }

    fn involves(&self, inst: &Inst) -> bool {
        let first = inst.operands.first().and_then(Operand::id).unwrap_or_default();
        match inst.op() {
            Some(Op::CooperativeMatrixMulAddKHR) => mask(inst) & bits::ALL != 0,
            Some(Op::CompositeExtract) => self.is_bf16_value(first),
            Some(Op::CompositeInsert | Op::CompositeConstruct | Op::CooperativeMatrixLoadKHR) => inst.result_type.is_some_and(|t| self.bf16_types.contains(&t)),
            Some(Op::CooperativeMatrixStoreKHR) => inst.operands.get(1).and_then(Operand::id).is_some_and(|v| self.is_bf16_value(v)),
            Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => self.points_at_bf16(first),
            Some(Op::Load) => self.chains.contains(&first),
            Some(Op::Store) => self.chains.contains(&first),
            // Checked loads and stores cast their pointers to the component's themselves
            // (`lower-checked-matrix-access`); a checked fill's Value is an element.
            _ if inst.opcode == icm::LOAD_CHECKED || inst.opcode == icm::STORE_CHECKED => false,
            _ if inst.opcode == icm::CONSTRUCT_CHECKED => inst.result_type.is_some_and(|t| self.bf16_types.contains(&t)),
            // Whole matrices move as they are.
            Some(Op::Phi | Op::Select | Op::CopyObject | Op::ReturnValue | Op::FunctionCall | Op::Undef | Op::Variable) => false,
            _ if is_matrix_query(inst) => false,
            _ => {
                let result = inst.result_type.is_some_and(|t| self.bf16_types.contains(&t));
                result || inst.operands.iter().filter_map(Operand::id).any(|v| self.chains.contains(&v) || self.is_bf16_value(v))
            }
        }
    }

    fn invalid(b: &Builder<'_>, inst: &Inst, message: String) -> Error {
        Error::Invalid { site: b.module.site(inst), message }
    }

    fn rewrite(&mut self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let bf16 = self.bf16;
        match inst.op() {
            Some(Op::CooperativeMatrixMulAddKHR) => {
                let mut operands = inst.operands.clone();
                let m = mask(inst);
                if m & bits::TF32_A_AND_B != 0 {
                    for (k, operand) in operands.iter_mut().take(2).enumerate() {
                        let v = inst.id(k)?;
                        *operand = Operand::Id(self.to_tf32(b, v));
                    }
                }
                operands[3] = Operand::Enum(OperandKind::CooperativeMatrixOperands, m & !bits::ALL);
                b.insert(Inst { operands, ..inst.clone() });
            }
            Some(Op::CompositeExtract) => {
                let mut part = inst.clone();
                part.result_type = Some(bf16);
                part.result_id = None;
                let v = b.emit(Op::CompositeExtract, bf16, part.operands.clone());
                b.insert(Inst::new(Op::Bitcast, inst.result_type, inst.result_id, vec![Operand::Id(v)]));
            }
            Some(Op::CompositeInsert | Op::CompositeConstruct) => {
                let mut operands = inst.operands.clone();
                let v = inst.id(0)?;
                operands[0] = Operand::Id(b.bitcast(bf16, v));
                b.insert(Inst { operands, ..inst.clone() });
            }
            _ if inst.opcode == icm::CONSTRUCT_CHECKED => {
                let mut operands = inst.operands.clone();
                let v = inst.id(4).map_err(|_| Self::invalid(b, inst, "lacks its Value".into()))?;
                operands[4] = Operand::Id(b.bitcast(bf16, v));
                b.insert(Inst { operands, ..inst.clone() });
            }
            Some(Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR) => {
                let mut operands = inst.operands.clone();
                let ptr = inst.id(0)?;
                let (class, pointee) = self.types.type_of(ptr).and_then(|t| self.types.pointer(t)).ok_or_else(|| Self::invalid(b, inst, format!("the Pointer %{ptr} is not a pointer")))?;
                if pointee != bf16 {
                    let class = StorageClass::from_u32(class).unwrap_or(StorageClass::Generic);
                    let p = b.module.type_pointer(class, bf16);
                    operands[0] = Operand::Id(b.bitcast(p, ptr));
                }
                b.insert(Inst { operands, ..inst.clone() });
            }
            Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => {
                let ty = inst.ty()?;
                let (class, _) = self.types.pointer(ty).ok_or_else(|| Self::invalid(b, inst, "an access chain whose result is not a pointer".into()))?;
                let class = StorageClass::from_u32(class).unwrap_or(StorageClass::Generic);
                let p = b.module.type_pointer(class, bf16);
                self.chains.insert(inst.result()?);
                b.insert(Inst { result_type: Some(p), ..inst.clone() });
            }
            Some(Op::Load) if self.chains.contains(&inst.id(0)?) => {
                let v = b.emit(Op::Load, bf16, inst.operands.clone());
                b.insert(Inst::new(Op::Bitcast, inst.result_type, inst.result_id, vec![Operand::Id(v)]));
            }
            Some(Op::Store) if self.chains.contains(&inst.id(0)?) => {
                let mut operands = inst.operands.clone();
                let v = inst.id(1)?;
                operands[1] = Operand::Id(b.bitcast(bf16, v));
                b.insert(Inst { operands, ..inst.clone() });
            }
            _ if inst.operands.iter().filter_map(Operand::id).any(|v| self.chains.contains(&v)) => {
                return Err(Self::invalid(b, inst, "a use of a pointer to a component of a bf16 cooperative matrix other than a load or a store".into()));
            }
            _ => {
                return Err(Self::invalid(b, inst, "an instruction on a cooperative matrix that a multiply-add reads as bf16, which has no meaning on bf16 values held in 16-bit integers".into()));
            }
        }
        Ok(())
    }

    /// A copy of f32 matrix `m` whose elements keep TF32's precision (the low 13 bits of the
    /// mantissa cleared).
    fn to_tf32(&self, b: &mut Builder<'_>, m: Word) -> Word {
        let ty = self.types.type_of(m).unwrap_or_default();
        let f32_ty = matrix(&self.types, ty).map_or(ty, |t| t.component);
        crate::passes::lower_joint_matrix::tf32_copy(b, self.uint, ty, f32_ty, m)
    }
}
