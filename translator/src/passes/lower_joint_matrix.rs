//! `LowerJointMatrix`: SPV_INTEL_joint_matrix -> SPV_KHR_cooperative_matrix, in both forms a
//! module can carry (the spec's revision, and the older one llvm-spirv writes for DPC++; see
//! [`crate::ir::grammar::legacy_joint_matrix`]). The KHR module then runs natively, tiled or
//! emulated like any other.
//!
//! Rewrite:
//! - each joint-matrix type becomes `OpTypeCooperativeMatrixKHR` under the same id, with its
//!   rows, columns, Subgroup scope and Use. A type without a Use (llvm-spirv's oldest form)
//!   takes the one the multiply-adds it reaches give it (an accumulator where none). Component
//!   Type Interpretations: `TF32` keeps the f32 component, `Bfloat16` makes the 16-bit integer
//!   component a bf16 float (`OpTypeFloat 16 BFloat16KHR`);
//! - `OpJointMatrixLoadINTEL`/`StoreINTEL` become the KHR load and store: the Layout's
//!   `RowMajor`/`ColumnMajor` the KHR layout, the Stride (in elements of the component type)
//!   kept, the pointer cast to point at the component type's storage where it points at another
//!   type (llvm-spirv's untyped `i8` pointers), the memory operands kept (llvm-spirv's constant
//!   id read back into flags) with `Aligned` to the component's size added where absent. The
//!   `Packed` (VNNI) layout of a B matrix (2; 3, DPC++'s first API's `packed_b`, in llvm-spirv's
//!   form) becomes the KHR form's `PackedINTEL`, which `stage-packed-matrices` lowers;
//! - `OpJointMatrixMadINTEL` and its `SU`/`US`/`UU` forms become `OpCooperativeMatrixMulAddKHR`
//!   with the signedness operands: the plain form reads integer components as signed where the
//!   type is signed or the module's integers have no signedness (a kernel's: DPC++ uses the
//!   plain form for signed x signed), the others as their names say, the accumulator signed but
//!   for `UU`. A TF32
//!   operand is multiplied with the low 13 bits of every element's mantissa cleared (the
//!   precision TF32 holds), through a copy;
//! - `OpJointMatrixWorkItemLengthINTEL` becomes `OpCooperativeMatrixLengthKHR` (converted to the
//!   result's integer type);
//! - `OpVectorExtractDynamic` and `OpVectorInsertDynamic` of a matrix go through a `Function`
//!   variable holding it (an access chain to the element); element reads and writes of a bf16
//!   matrix (these, `OpCompositeExtract`/`Insert`, and `OpCompositeConstruct`'s fill value) are
//!   bitcast between the 16-bit integer the module sees and the bf16 component;
//! - `OpJointMatrixGetElementCoordINTEL` stays: on the KHR type it is the KHR form's
//!   `OpCooperativeMatrixGetElementCoordINTEL`, which `lower-matrix-element-coords` answers.
//!
//! Refused by name (the instruction or type and why): Workgroup scope, `PackedInt2`/`PackedInt4`
//! interpretations (no cooperative-matrix component holds packed integers), the `Packed`
//! layout on an A or accumulator matrix, components other than 8-, 16- and 32-bit integers
//! and 16- and 32-bit floats, operands that are not constants where the spec requires them,
//! and a matrix type used in two roles.
//!
//! Preconditions: none beyond a module that decodes. Applies to every target; leaves no
//! joint-matrix type, instruction (but the coordinate query) or capability (the requirement
//! step adds the KHR ones).

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::grammar::{intel_cooperative_matrix as icm, legacy_joint_matrix as jm};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{CooperativeMatrixLayout, CooperativeMatrixOperands as Flags, CooperativeMatrixUse, FPEncoding, MemoryAccess, Op, Scope, StorageClass, Word};
use std::collections::HashMap;

pub struct LowerJointMatrix;

/// How a matrix's components are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Interpretation {
    None,
    Tf32,
    Bfloat16,
}

/// A joint-matrix type, parsed.
#[derive(Clone, Debug)]
struct JointType {
    /// The component type the module reads and writes (a 16-bit integer for bf16).
    component: Word,
    rows: Word,
    cols: Word,
    usage: Option<CooperativeMatrixUse>,
    interpretation: Interpretation,
    /// The KHR component type.
    khr_component: Word,
    /// Integer components: width and signedness word.
    int: Option<(u32, bool)>,
}

/// The Use of joint-matrix Use value `v` (the same numbers as KHR's).
fn usage(v: u32) -> Option<CooperativeMatrixUse> {
    [CooperativeMatrixUse::MatrixAKHR, CooperativeMatrixUse::MatrixBKHR, CooperativeMatrixUse::MatrixAccumulatorKHR].into_iter().find(|u| *u as u32 == v)
}

fn use_name(u: CooperativeMatrixUse) -> &'static str {
    match u {
        CooperativeMatrixUse::MatrixAKHR => "MatrixA",
        CooperativeMatrixUse::MatrixBKHR => "MatrixB",
        _ => "Accumulator",
    }
}

fn is_joint_type(inst: &Inst) -> bool {
    inst.opcode == jm::TYPE_JOINT_MATRIX || inst.opcode == jm::TYPE_JOINT_MATRIX_WITH_LAYOUT
}

impl JointType {
    fn parse(module: &mut Module, types: &Types, inst: &Inst) -> std::result::Result<JointType, String> {
        let ids: Vec<Word> = inst.operands.iter().map(|o| o.id().ok_or("has an operand that is not an id")).collect::<std::result::Result<_, _>>()?;
        // llvm-spirv's form has the Layout before the Scope.
        let skip = usize::from(inst.opcode == jm::TYPE_JOINT_MATRIX_WITH_LAYOUT);
        let (Some(&component), Some(&rows), Some(&cols), Some(&scope)) = (ids.first(), ids.get(1), ids.get(2), ids.get(3 + skip)) else {
            return Err("lacks its Component Type, Rows, Columns or Scope".into());
        };
        let constant = |what: &str, id: Word| types.const_u32(id).ok_or_else(|| format!("has a {what} (%{id}) that is not a 32-bit integer constant"));
        for (what, id) in [("Rows", rows), ("Columns", cols)] {
            if constant(what, id)? == 0 {
                return Err(format!("has 0 {what}"));
            }
        }
        if constant("Scope", scope)? != Scope::Subgroup as u32 {
            return Err(format!("has scope {} (only Subgroup joint matrices are lowered: KHR cooperative matrices of other scopes have no device)", types.const_u32(scope).unwrap_or(0)));
        }
        let usage = match ids.get(4 + skip) {
            Some(&u) => Some(usage(constant("Use", u)?).ok_or_else(|| format!("has Use {} (0, 1 and 2 are defined)", types.const_u32(u).unwrap_or(0)))?),
            None => None,
        };
        let interpretation = match ids.get(5 + skip).map(|&i| constant("Component Type Interpretation", i)).transpose()? {
            None | Some(0) => Interpretation::None,
            Some(1) => Interpretation::Tf32,
            Some(2) => Interpretation::Bfloat16,
            Some(v @ (3 | 4)) => {
                return Err(format!(
                    "has the {} Component Type Interpretation (no cooperative-matrix component type holds packed {}-bit integers)",
                    if v == 3 { "PackedInt2" } else { "PackedInt4" },
                    if v == 3 { 2 } else { 4 }
                ))
            }
            Some(v) => return Err(format!("has Component Type Interpretation {v} (0 to 4 are defined)")),
        };
        let int = types.int(component);
        let float = types.float(component).filter(|(_, e)| e.is_none()).map(|(w, _)| w);
        let khr_component = match (interpretation, int, float) {
            (Interpretation::None, Some((8 | 16 | 32, _)), _) | (Interpretation::None, _, Some(16 | 32)) | (Interpretation::Tf32, _, Some(32)) => component,
            (Interpretation::Bfloat16, Some((16, _)), _) => module.type_float_encoded(16, FPEncoding::BFloat16KHR),
            (Interpretation::Tf32, ..) => return Err("has the TF32 interpretation on a component that is not a 32-bit float".into()),
            (Interpretation::Bfloat16, ..) => return Err("has the Bfloat16 interpretation on a component that is not a 16-bit integer".into()),
            _ => return Err("has a component type that is not an 8-, 16- or 32-bit integer or a 16- or 32-bit float".into()),
        };
        let int = int.filter(|_| interpretation == Interpretation::None);
        Ok(JointType { component, rows, cols, usage, interpretation, khr_component, int })
    }
}

impl Pass for LowerJointMatrix {
    fn name(&self) -> &'static str {
        "lower-joint-matrix"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let defs: Vec<Inst> = module.globals().iter().filter(|i| is_joint_type(i)).cloned().collect();
        if defs.is_empty() {
            if let Some(inst) = module.functions.iter().flat_map(|f| f.insts()).find(|i| jm_instruction(i) && i.opcode != jm::GET_ELEMENT_COORD) {
                return Err(Error::Invalid { site: module.site(inst), message: "a joint-matrix instruction in a module that declares no joint-matrix type".into() });
            }
            return Ok(outcome);
        }
        let types = Types::new(module);
        let mut joint: HashMap<Word, JointType> = HashMap::new();
        for d in &defs {
            let t = JointType::parse(module, &types, d).map_err(|m| Error::Invalid { site: module.site(d), message: format!("the joint-matrix type {m}") })?;
            joint.insert(d.result_id.unwrap_or_default(), t);
        }
        infer_uses(module, &types, &mut joint)?;
        let ids_only = defs.iter().any(|d| d.opcode == jm::TYPE_JOINT_MATRIX_WITH_LAYOUT);
        let signless = !types.defs.values().any(|d| d.is(Op::TypeInt) && d.word_opt(1) == Some(1));
        let mut l = Lowering { types, joint, uint: module.type_int(32, false), ids_only, signless };
        for opcode in module.rewrite_matching(&mut l, |l, i| l.involves(i), |l, b, inst| l.rewrite(b, inst))? {
            outcome.count(opcode);
        }
        // The types, in place.
        let subgroup = module.constant_u32(Scope::Subgroup as u32);
        for (id, t) in &l.joint {
            let u = module.constant_u32(t.usage.unwrap_or(CooperativeMatrixUse::MatrixAccumulatorKHR) as u32);
            let operands = [t.khr_component, subgroup, t.rows, t.cols, u].map(Operand::Id).to_vec();
            if let Some(g) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(*id)) {
                *g = Inst { opcode: Op::TypeCooperativeMatrixKHR as u32, result_type: None, result_id: Some(*id), operands, origin: g.origin };
            }
        }
        // Constant matrices of bf16 matrices hold the bits of their 16-bit integer.
        let bf16: HashMap<Word, Word> = l.joint.iter().filter(|(_, t)| t.interpretation == Interpretation::Bfloat16).map(|(id, t)| (*id, t.khr_component)).collect();
        let constants: HashMap<Word, Inst> = module.globals().iter().filter(|g| g.is(Op::Constant)).filter_map(|g| Some((g.result_id?, g.clone()))).collect();
        let mut fixed = Vec::new();
        for g in module.globals().iter().filter(|g| g.is(Op::ConstantComposite) || g.is(Op::SpecConstantComposite)) {
            let Some(&component) = g.result_type.and_then(|t| bf16.get(&t)) else { continue };
            if let Some(c) = g.operands.first().and_then(Operand::id).and_then(|c| constants.get(&c)) {
                fixed.push((g.result_id, component, c.operands.clone()));
            }
        }
        for (composite, component, bits) in fixed {
            let c = module.intern(Op::Constant, Some(component), bits);
            if let Some(g) = module.globals_mut().iter_mut().find(|g| g.result_id == composite) {
                g.operands = vec![Operand::Id(c)];
            }
        }
        module.capabilities.retain(|c| c.word_opt(0).is_none_or(|w| w != jm::CAPABILITY && !jm::OTHER_CAPABILITIES.contains(&w)));
        drop_unused_extension(module);
        module.reorder_globals();
        outcome.changed = true;
        outcome.notes.push(format!("{} joint-matrix types lowered to KHR cooperative matrices", l.joint.len()));
        Ok(outcome)
    }
}

fn jm_instruction(inst: &Inst) -> bool {
    jm::is_instruction(inst.opcode)
}

fn is_mad(opcode: u32) -> bool {
    [jm::MAD, jm::SU_MAD, jm::US_MAD, jm::UU_MAD].contains(&opcode)
}

/// Gives every type without a Use the one its multiply-adds give it; checks the others.
fn infer_uses(module: &Module, types: &Types, joint: &mut HashMap<Word, JointType>) -> Result<()> {
    for inst in module.functions.iter().flat_map(|f| f.insts()).filter(|i| is_mad(i.opcode)) {
        let roles = [(0, CooperativeMatrixUse::MatrixAKHR), (1, CooperativeMatrixUse::MatrixBKHR), (2, CooperativeMatrixUse::MatrixAccumulatorKHR)];
        let mut typed: Vec<(Word, CooperativeMatrixUse)> = roles.iter().filter_map(|&(k, u)| Some((types.type_of(inst.id(k).ok()?)?, u))).collect();
        typed.extend(inst.result_type.map(|t| (t, CooperativeMatrixUse::MatrixAccumulatorKHR)));
        if typed.len() != 4 || typed.iter().any(|(t, _)| !joint.contains_key(t)) {
            return Err(Error::Invalid { site: module.site(inst), message: "a joint-matrix multiply-add whose operands or result are not joint matrices".into() });
        }
        for (t, u) in typed {
            let jt = joint.get_mut(&t).expect("checked above");
            match jt.usage {
                None => jt.usage = Some(u),
                Some(have) if have != u => {
                    return Err(Error::Invalid {
                        site: module.site(inst),
                        message: format!("joint-matrix type %{t} is used as {} here and as {} elsewhere (a cooperative matrix has one Use)", use_name(u), use_name(have)),
                    })
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// The analyses the rewrite of each instruction reads.
struct Lowering {
    types: Types,
    joint: HashMap<Word, JointType>,
    uint: Word,
    /// The module's joint matrices are in llvm-spirv's form.
    ids_only: bool,
    /// The module's integers have no signedness (a kernel's).
    signless: bool,
}

impl Lowering {
    fn matrix_of_value(&self, v: Word) -> Option<&JointType> {
        self.types.type_of(v).and_then(|t| self.joint.get(&t))
    }

    fn involves(&self, inst: &Inst) -> bool {
        match inst.op() {
            _ if jm_instruction(inst) => true,
            Some(Op::VectorExtractDynamic | Op::VectorInsertDynamic) => inst.operands.first().and_then(Operand::id).is_some_and(|v| self.matrix_of_value(v).is_some()),
            Some(Op::CompositeExtract | Op::CompositeInsert | Op::CompositeConstruct) => {
                let matrix = match inst.op() {
                    Some(Op::CompositeExtract) => inst.operands.first().and_then(Operand::id).and_then(|v| self.matrix_of_value(v)),
                    _ => inst.result_type.and_then(|t| self.joint.get(&t)),
                };
                matrix.is_some_and(|t| t.interpretation == Interpretation::Bfloat16)
            }
            _ => false,
        }
    }

    fn invalid(b: &Builder<'_>, inst: &Inst, message: String) -> Error {
        Error::Invalid { site: b.module.site(inst), message }
    }

    fn rewrite(&mut self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let opcode = inst.opcode;
        match inst.op() {
            _ if opcode == jm::LOAD => self.load(b, inst),
            _ if opcode == jm::STORE => self.store(b, inst),
            _ if is_mad(opcode) => self.mad(b, inst),
            _ if opcode == jm::WORK_ITEM_LENGTH => {
                let m = inst.id(0)?;
                let ty = self.types.type_of(m).filter(|t| self.joint.contains_key(t)).ok_or_else(|| Self::invalid(b, inst, format!("%{m} is not a joint matrix")))?;
                let uint = self.uint;
                let len = b.op(Op::CooperativeMatrixLengthKHR, uint, &[ty]);
                self.finish_int(b, inst, len)
            }
            _ if opcode == jm::GET_ELEMENT_COORD => {
                // The same instruction on the KHR type: `lower-matrix-element-coords` answers it.
                let m = inst.id(0)?;
                if self.matrix_of_value(m).is_none() {
                    return Err(Self::invalid(b, inst, format!("%{m} is not a joint matrix")));
                }
                b.insert(inst.clone());
                Ok(())
            }
            Some(Op::VectorExtractDynamic) => {
                let [m, index] = inst.ids()?;
                let t = self.matrix_of_value(m).cloned().ok_or_else(|| Self::invalid(b, inst, format!("%{m} is not a joint matrix")))?;
                let var = b.function_variable(self.types.type_of(m).unwrap_or_default());
                b.store(var, m);
                let ptr = b.module.type_pointer(StorageClass::Function, t.khr_component);
                let element = b.access_chain(ptr, var, &[index]);
                let v = b.load(t.khr_component, element);
                self.finish_element(b, inst, &t, v)
            }
            Some(Op::VectorInsertDynamic) => {
                let [m, value, index] = inst.ids()?;
                let ty = inst.ty()?;
                let t = self.matrix_of_value(m).cloned().ok_or_else(|| Self::invalid(b, inst, format!("%{m} is not a joint matrix")))?;
                let var = b.function_variable(ty);
                b.store(var, m);
                let ptr = b.module.type_pointer(StorageClass::Function, t.khr_component);
                let element = b.access_chain(ptr, var, &[index]);
                let value = self.to_component(b, &t, value);
                b.store(element, value);
                b.insert(Inst::new(Op::Load, Some(ty), Some(inst.result()?), vec![Operand::Id(var)]));
                Ok(())
            }
            Some(Op::CompositeExtract) => {
                let m = inst.id(0)?;
                let t = self.matrix_of_value(m).cloned().ok_or_else(|| Self::invalid(b, inst, format!("%{m} is not a joint matrix")))?;
                let v = b.emit(Op::CompositeExtract, t.khr_component, inst.operands.clone());
                self.finish_element(b, inst, &t, v)
            }
            Some(Op::CompositeInsert | Op::CompositeConstruct) => {
                let ty = inst.ty()?;
                let t = self.joint.get(&ty).cloned().ok_or_else(|| Self::invalid(b, inst, format!("%{ty} is not a joint-matrix type")))?;
                let mut operands = inst.operands.clone();
                if let Some(Operand::Id(v)) = operands.first().cloned() {
                    operands[0] = Operand::Id(self.to_component(b, &t, v));
                }
                b.insert(Inst { operands, ..inst.clone() });
                Ok(())
            }
            _ => Err(Self::invalid(b, inst, "an instruction the joint-matrix lowering does not know".into())),
        }
    }

    /// A bf16 component as the 16-bit integer the module reads, under `inst`'s result id.
    fn finish_element(&self, b: &mut Builder<'_>, inst: &Inst, t: &JointType, v: Word) -> Result<()> {
        let op = if t.interpretation == Interpretation::Bfloat16 { Op::Bitcast } else { Op::CopyObject };
        b.insert(Inst::new(op, Some(inst.ty()?), Some(inst.result()?), vec![Operand::Id(v)]));
        Ok(())
    }

    /// The module's value `v` of a component as the KHR component (bf16 from its bits).
    fn to_component(&self, b: &mut Builder<'_>, t: &JointType, v: Word) -> Word {
        if t.interpretation == Interpretation::Bfloat16 {
            b.bitcast(t.khr_component, v)
        } else {
            v
        }
    }

    /// The 32-bit unsigned `v` converted to `inst`'s integer result type, under its id.
    fn finish_int(&self, b: &mut Builder<'_>, inst: &Inst, v: Word) -> Result<()> {
        let ty = inst.ty()?;
        let op = match self.types.int(ty) {
            Some((32, _)) => Op::CopyObject,
            Some(_) => Op::UConvert,
            None => return Err(Self::invalid(b, inst, "OpJointMatrixWorkItemLengthINTEL with a result that is not an integer".into())),
        };
        let v = if op == Op::CopyObject && ty != self.uint { b.bitcast(ty, v) } else { v };
        b.insert(Inst::new(op, Some(ty), Some(inst.result()?), vec![Operand::Id(v)]));
        Ok(())
    }

    /// Pointer, stride, layout and memory operands of a load (`first` = 0) or store (1).
    fn access(&self, b: &mut Builder<'_>, inst: &Inst, first: usize, t: &JointType) -> Result<(Word, Word, Word, Vec<Operand>)> {
        let id = |k: usize| inst.id(k).map_err(|_| Self::invalid(b, inst, format!("operand {k} is not an id")));
        let pointer = id(0)?;
        let stride = id(first + 1)?;
        let layout = id(first + 2)?;
        let ids_only = inst.operands.iter().all(|o| o.id().is_some()) && inst.operands.len() > first + 3 && self.ids_only;
        // Packed is 2; DPC++'s first matrix API numbered its layouts row_major, col_major,
        // packed_a, packed_b, so llvm-spirv's form may say 3 for a packed B.
        let packed_b = t.usage == Some(CooperativeMatrixUse::MatrixBKHR);
        let layout = match self.types.const_u32(layout) {
            Some(0) => CooperativeMatrixLayout::RowMajorKHR as u32,
            Some(1) => CooperativeMatrixLayout::ColumnMajorKHR as u32,
            Some(2) if packed_b => icm::LAYOUT_PACKED,
            Some(3) if packed_b && self.ids_only => icm::LAYOUT_PACKED,
            Some(v @ (2 | 3)) => {
                return Err(Self::invalid(
                    b,
                    inst,
                    format!(
                        "the Packed (VNNI) layout (value {v}) on a {} matrix (it is defined for the B matrix, whose rows it packs)",
                        use_name(t.usage.unwrap_or(CooperativeMatrixUse::MatrixAccumulatorKHR))
                    ),
                ))
            }
            Some(v) => return Err(Self::invalid(b, inst, format!("layout {v} (RowMajor 0, ColumnMajor 1 and Packed 2 are defined)"))),
            None => return Err(Self::invalid(b, inst, format!("a Layout (%{layout}) that is not a 32-bit integer constant"))),
        };
        // Memory operands: a literal mask and its parameters, or (llvm-spirv) the Scope and a
        // constant mask.
        let (mask, mut rest): (u32, Vec<Operand>) = if ids_only {
            let scope = id(first + 3)?;
            if self.types.const_u32(scope) != Some(Scope::Subgroup as u32) {
                return Err(Self::invalid(b, inst, format!("a Scope (%{scope}) that is not the constant Subgroup")));
            }
            let mask = inst.operands.get(first + 4).and_then(Operand::id).and_then(|m| self.types.const_u32(m)).unwrap_or(0);
            let align = inst.operands.get(first + 5).and_then(Operand::id).and_then(|a| self.types.const_u32(a));
            let keep = MemoryAccess::VOLATILE | MemoryAccess::NONTEMPORAL;
            let mut m = mask & keep.bits();
            let mut rest = Vec::new();
            if let Some(a) = align.filter(|a| mask & MemoryAccess::ALIGNED.bits() != 0 && a.is_power_of_two()) {
                m |= MemoryAccess::ALIGNED.bits();
                rest.push(Operand::Literal(a));
            }
            (m, rest)
        } else {
            let mask = inst.word_opt(first + 3).unwrap_or(0);
            (mask, inst.operands.get(first + 4..).map(<[Operand]>::to_vec).unwrap_or_default())
        };
        let (class, pointee) = self.types.type_of(pointer).and_then(|p| self.types.pointer(p)).ok_or_else(|| Self::invalid(b, inst, format!("the Pointer %{pointer} is not a pointer")))?;
        let class = StorageClass::from_u32(class).unwrap_or(StorageClass::Generic);
        let pointer = if pointee == t.component {
            pointer
        } else {
            let p = b.module.type_pointer(class, t.component);
            b.bitcast(p, pointer)
        };
        let mut mask = mask;
        if mask & MemoryAccess::ALIGNED.bits() == 0 && matches!(class, StorageClass::CrossWorkgroup | StorageClass::Generic | StorageClass::PhysicalStorageBuffer) {
            let bytes = self.types.scalar_width(t.component).unwrap_or(8).div_ceil(8);
            mask |= MemoryAccess::ALIGNED.bits();
            // The alignment literal comes before the ids of the later flags.
            rest.insert(0, Operand::Literal(bytes));
        }
        let mut memory = vec![Operand::Enum(OperandKind::MemoryAccess, mask)];
        memory.extend(rest);
        let layout = b.module.constant_u32(layout);
        Ok((pointer, stride, layout, memory))
    }

    fn load(&self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let ty = inst.ty()?;
        let t = self.joint.get(&ty).cloned().ok_or_else(|| Self::invalid(b, inst, format!("a load of %{ty}, which is not a joint-matrix type")))?;
        let (pointer, stride, layout, memory) = self.access(b, inst, 0, &t)?;
        let mut operands = vec![Operand::Id(pointer), Operand::Id(layout), Operand::Id(stride)];
        operands.extend(memory);
        b.insert(Inst::new(Op::CooperativeMatrixLoadKHR, Some(ty), Some(inst.result()?), operands));
        Ok(())
    }

    fn store(&self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let object = inst.id(1)?;
        let t = self.matrix_of_value(object).cloned().ok_or_else(|| Self::invalid(b, inst, format!("a store of %{object}, which is not a joint matrix")))?;
        let (pointer, stride, layout, memory) = self.access(b, inst, 1, &t)?;
        let mut operands = vec![Operand::Id(pointer), Operand::Id(object), Operand::Id(layout), Operand::Id(stride)];
        operands.extend(memory);
        b.emit_void(Op::CooperativeMatrixStoreKHR, operands);
        Ok(())
    }

    fn mad(&self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let [a, bm, c] = [0, 1, 2].map(|k| inst.id(k).unwrap_or_default());
        let ty = inst.ty()?;
        if let Some(&s) = inst.operands.get(3).and_then(Operand::id).as_ref() {
            if self.types.const_u32(s) != Some(Scope::Subgroup as u32) {
                return Err(Self::invalid(b, inst, format!("a Scope (%{s}) that is not the constant Subgroup")));
            }
        }
        let [ta, tb, tc] = [a, bm, c].map(|v| self.matrix_of_value(v).cloned());
        let (Some(ta), Some(tb), Some(tc), Some(tr)) = (ta, tb, tc, self.joint.get(&ty).cloned()) else {
            return Err(Self::invalid(b, inst, "a multiply-add of values that are not joint matrices".into()));
        };
        let dims = |t: &JointType| (self.types.const_u32(t.rows).unwrap_or(0), self.types.const_u32(t.cols).unwrap_or(0));
        let ((m, k), (k2, n), (m2, n2), (m3, n3)) = (dims(&ta), dims(&tb), dims(&tc), dims(&tr));
        if k != k2 || m != m2 || n != n2 || (m, n) != (m3, n3) {
            return Err(Self::invalid(b, inst, format!("A {m}x{k} times B {k2}x{n} plus C {m2}x{n2} into {m3}x{n3} does not compose")));
        }
        // Signedness: the plain form by the types (signless counts as signed), the others by name.
        let signed = |t: &JointType| t.int.is_some_and(|(_, s)| s || self.signless);
        let (sa, sb, sc) = match inst.opcode {
            o if o == jm::SU_MAD => (true, false, true),
            o if o == jm::US_MAD => (false, true, true),
            o if o == jm::UU_MAD => (false, false, false),
            _ => (signed(&ta), signed(&tb), signed(&tc)),
        };
        let ints = [&ta, &tb, &tc].iter().all(|t| t.int.is_some());
        let mut flags = Flags::NONE_KHR;
        if ints {
            for (on, f) in
                [(sa, Flags::MATRIX_A_SIGNED_COMPONENTS_KHR), (sb, Flags::MATRIX_B_SIGNED_COMPONENTS_KHR), (sc, Flags::MATRIX_C_SIGNED_COMPONENTS_KHR | Flags::MATRIX_RESULT_SIGNED_COMPONENTS_KHR)]
            {
                if on {
                    flags |= f;
                }
            }
        }
        let a = if ta.interpretation == Interpretation::Tf32 { self.to_tf32(b, a) } else { a };
        let bm = if tb.interpretation == Interpretation::Tf32 { self.to_tf32(b, bm) } else { bm };
        let operands = vec![Operand::Id(a), Operand::Id(bm), Operand::Id(c), Operand::Enum(OperandKind::CooperativeMatrixOperands, flags.bits())];
        b.insert(Inst::new(Op::CooperativeMatrixMulAddKHR, Some(ty), Some(inst.result()?), operands));
        Ok(())
    }

    /// A copy of f32 matrix `m` whose elements keep TF32's precision.
    fn to_tf32(&self, b: &mut Builder<'_>, m: Word) -> Word {
        let ty = self.types.type_of(m).unwrap_or_default();
        let f32_ty = self.joint.get(&ty).map_or(ty, |t| t.khr_component);
        tf32_copy(b, self.uint, ty, f32_ty, m)
    }
}

/// A copy of `m`, a matrix of type `ty` with 32-bit float components `f32_ty`, whose elements
/// keep TF32's precision (the low 13 bits of the mantissa cleared), through a `Function`
/// variable; `uint` is the 32-bit unsigned integer type.
pub(crate) fn tf32_copy(b: &mut Builder<'_>, uint: Word, ty: Word, f32_ty: Word, m: Word) -> Word {
    let mask = b.module.constant_u32(0xffff_e000);
    let var = b.function_variable(ty);
    b.store(var, m);
    let len = b.op(Op::CooperativeMatrixLengthKHR, uint, &[ty]);
    let zero = b.module.constant_u32(0);
    let ptr = b.module.type_pointer(StorageClass::Function, f32_ty);
    b.counted_loop(zero, len, |b, i| {
        let element = b.access_chain(ptr, var, &[i]);
        let v = b.load(f32_ty, element);
        let bits = b.bitcast(uint, v);
        let kept = b.op(Op::BitwiseAnd, uint, &[bits, mask]);
        let v = b.bitcast(f32_ty, kept);
        b.store(element, v);
    });
    b.load(ty, var)
}

/// Removes the SPV_INTEL_joint_matrix extension where no capability of it is left (the passes
/// that lower its parts each remove their own capability).
pub(crate) fn drop_unused_extension(module: &mut Module) {
    if !module.capabilities.iter().any(|c| c.word_opt(0).and_then(icm::capability_name).is_some()) {
        module.extensions.retain(|e| e.string(0).as_deref() != Some(jm::EXTENSION));
    }
}

/// Removes SPV_INTEL_joint_matrix capability `cap`, and the extension where none of its
/// capabilities is left (llvm-spirv declares it for the KHR form's Packed layout without any);
/// whether the module declared `cap`.
pub(crate) fn drop_capability(module: &mut Module, cap: Word) -> bool {
    let before = module.capabilities.len();
    module.capabilities.retain(|c| c.word_opt(0) != Some(cap));
    drop_unused_extension(module);
    module.capabilities.len() < before
}
