//! `SplitWideVectors`: OpenCL's vectors of 8 and 16 components (`float8`, `int16`, `uchar16`),
//! which need the `Vector16` capability no Vulkan device has, and the longer vectors of
//! SPV_INTEL_vector_compute (`VectorAnyINTEL`: Intel's Triton backend holds a 2D block read of
//! 64 halves in one `<64 x i16>`), become vectors of 4: `n / 4` of them for `n` components, and
//! a last one of the 1 to 3 left over (a scalar where 1).
//!
//! Every value of such a type is carried as its parts (components `4k..4k+3` in part `k`):
//!
//! - element-wise instructions (arithmetic, bitwise, shifts, comparisons, conversions, `OpSelect`,
//!   `OpVectorTimesScalar`, component-wise `GLSL.std.450` instructions), phis and copies apply
//!   part by part; `OpAny` / `OpAll` combine the parts' answers;
//! - `OpVectorShuffle`, `OpCompositeConstruct`, `OpCompositeExtract` / `Insert` and
//!   `OpVectorExtractDynamic` / `InsertDynamic` move components between parts;
//! - a `PhysicalStorageBuffer` pointer to a wide vector becomes a pointer to its 4-component part
//!   type (its `ArrayStride` the part's size): `OpPtrAccessChain` steps scale by the number of
//!   parts, and loads and stores access the parts one after another (`Aligned` at most a part's
//!   size);
//! - a `Function` variable of a wide vector (what clang keeps at -O0) becomes one variable per
//!   part, loaded and stored part by part;
//! - `OpBitcast` to or from a wide vector regroups its scalars at the other component width;
//! - constants, nulls and undefined values of wide types become their parts.
//!
//! Preconditions: a lowered kernel (`lower-kernel-pointers` ran; helper functions inlined). Wide
//! vectors in structs, function signatures, other variables, or `Function` variables used other
//! than by whole loads and stores are refused by name, and so are physical-buffer pointers to
//! vectors that are not a multiple of 4 components in a power-of-two number of parts (their size
//! in OpenCL's layout, a power of two, is not their parts' size). Applies to every target (none has `Vector16` or `VectorAnyINTEL`);
//! changes only modules that use such vectors.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Decoration, GlslStd450Op, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct SplitWideVectors;

/// A wide vector type: its component type, component count, the type of its parts of 4 and
/// that of its last part (of 1 to 4 components: a scalar where 1).
#[derive(Clone, Copy, Debug, Default)]
struct Wide {
    component: Word,
    count: u32,
    part: Word,
    last: Word,
}

impl Wide {
    fn parts(&self) -> u32 {
        self.count.div_ceil(4)
    }

    /// Components in part `k`.
    fn len(&self, k: usize) -> u32 {
        self.count.saturating_sub(4 * k as u32).min(4)
    }

    /// The type of part `k`.
    fn ty(&self, k: usize) -> Word {
        if k + 1 == self.parts() as usize {
            self.last
        } else {
            self.part
        }
    }

    /// Whether part `k` is a scalar (the last of a count one past a multiple of 4).
    fn scalar(&self, k: usize) -> bool {
        self.len(k) == 1
    }
}

/// Instructions applied component by component.
const ELEMENT_WISE: &[Op] = &[
    Op::FAdd,
    Op::FSub,
    Op::FMul,
    Op::FDiv,
    Op::FRem,
    Op::FMod,
    Op::FNegate,
    Op::IAdd,
    Op::ISub,
    Op::IMul,
    Op::SDiv,
    Op::UDiv,
    Op::SRem,
    Op::SMod,
    Op::UMod,
    Op::SNegate,
    Op::BitwiseAnd,
    Op::BitwiseOr,
    Op::BitwiseXor,
    Op::Not,
    Op::ShiftLeftLogical,
    Op::ShiftRightLogical,
    Op::ShiftRightArithmetic,
    Op::LogicalAnd,
    Op::LogicalOr,
    Op::LogicalNot,
    Op::LogicalEqual,
    Op::LogicalNotEqual,
    Op::IEqual,
    Op::INotEqual,
    Op::SLessThan,
    Op::SLessThanEqual,
    Op::SGreaterThan,
    Op::SGreaterThanEqual,
    Op::ULessThan,
    Op::ULessThanEqual,
    Op::UGreaterThan,
    Op::UGreaterThanEqual,
    Op::FOrdEqual,
    Op::FOrdNotEqual,
    Op::FOrdLessThan,
    Op::FOrdLessThanEqual,
    Op::FOrdGreaterThan,
    Op::FOrdGreaterThanEqual,
    Op::FUnordEqual,
    Op::FUnordNotEqual,
    Op::FUnordLessThan,
    Op::FUnordLessThanEqual,
    Op::FUnordGreaterThan,
    Op::FUnordGreaterThanEqual,
    Op::IsNan,
    Op::IsInf,
    Op::ConvertFToU,
    Op::ConvertFToS,
    Op::ConvertSToF,
    Op::ConvertUToF,
    Op::UConvert,
    Op::SConvert,
    Op::FConvert,
    Op::Select,
    Op::CopyObject,
    Op::VectorTimesScalar,
    Op::BitCount,
    Op::BitReverse,
];

/// `GLSL.std.450` instructions that are not component-wise.
const GLSL_WHOLE: &[GlslStd450Op] = &[
    GlslStd450Op::Length,
    GlslStd450Op::Distance,
    GlslStd450Op::Cross,
    GlslStd450Op::Normalize,
    GlslStd450Op::FaceForward,
    GlslStd450Op::Reflect,
    GlslStd450Op::Refract,
    GlslStd450Op::ModfStruct,
    GlslStd450Op::FrexpStruct,
    GlslStd450Op::Determinant,
    GlslStd450Op::MatrixInverse,
];

impl Pass for SplitWideVectors {
    fn name(&self) -> &'static str {
        "split-wide-vectors"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let target = cx.target.name.clone();
        let refuse = |module: &Module, inst: &Inst, what: &str| Error::Unsupported { site: module.site(inst), target: target.clone(), missing: format!("vectors of more than 4 components {what}") };
        let wide_types: Vec<(Word, Word, u32)> =
            module.globals().iter().filter(|g| g.is(Op::TypeVector) && g.word_opt(1).is_some_and(|n| n > 4)).filter_map(|g| Some((g.result_id?, g.id(0).ok()?, g.word_opt(1)?))).collect();
        if wide_types.is_empty() {
            return Ok(outcome);
        }
        let mut wides: HashMap<Word, Wide> = HashMap::new();
        for (ty, component, count) in wide_types {
            let part = module.type_vector(component, 4);
            let last = match count % 4 {
                0 => part,
                1 => component,
                r => module.type_vector(component, r),
            };
            wides.insert(ty, Wide { component, count, part, last });
        }
        // Pointers to wide vectors: physical-buffer ones, and those of `Function` variables
        // (which become one variable per part).
        let mut pointers: HashMap<Word, Wide> = HashMap::new();
        let mut variable_pointers: HashMap<Word, Wide> = HashMap::new();
        for g in module.globals() {
            let pointee = g.operands.get(1).and_then(Operand::id);
            if g.is(Op::TypePointer) && pointee.is_some_and(|p| wides.contains_key(&p)) {
                let w = wides[&pointee.unwrap_or(0)];
                match g.word_opt(0) {
                    Some(c) if c == StorageClass::PhysicalStorageBuffer as u32 && (!w.count.is_multiple_of(4) || !w.parts().is_power_of_two()) => {
                        return Err(refuse(module, g, &format!("behind physical buffer pointers unless a multiple of 4 in a power-of-two number of parts (this one has {})", w.count)))
                    }
                    Some(c) if c == StorageClass::PhysicalStorageBuffer as u32 => pointers.insert(g.result_id.unwrap_or(0), w),
                    Some(c) if c == StorageClass::Function as u32 => variable_pointers.insert(g.result_id.unwrap_or(0), w),
                    _ => return Err(refuse(module, g, "in variables other than private ones (or behind physical buffer pointers)")),
                };
            }
            let aggregate = matches!(g.op(), Some(Op::TypeStruct | Op::TypeArray | Op::TypeRuntimeArray | Op::TypeFunction));
            if aggregate && g.operands.iter().filter_map(Operand::id).any(|t| wides.contains_key(&t)) {
                return Err(refuse(module, g, "in structs, arrays or function signatures"));
            }
        }
        let wide_of = |v: Word| types.type_of(v).and_then(|t| wides.get(&t)).copied();
        // Every wide value's parts, allocated up front (phis name values defined later).
        let mut parts: HashMap<Word, Vec<Word>> = HashMap::new();
        let wide_results: Vec<(Word, Wide)> = module.all_insts().filter_map(|i| Some((i.result_id?, wides.get(&i.result_type?).copied()?))).collect();
        for (id, w) in &wide_results {
            let ids = (0..w.parts()).map(|_| module.alloc_id()).collect();
            parts.insert(*id, ids);
        }
        // Constants, nulls and undefined values of wide types.
        for i in 0..module.globals().len() {
            let g = module.globals()[i].clone();
            let (Some(id), Some(w)) = (g.result_id, g.result_type.and_then(|t| wides.get(&t).copied())) else { continue };
            let ids = parts_of(&parts, Some(id))?;
            for (k, part_id) in ids.iter().enumerate() {
                let inst = match g.op() {
                    Some(Op::ConstantComposite | Op::SpecConstantComposite) => {
                        let at = 4 * k..4 * k + w.len(k) as usize;
                        let comps = g.operands.get(at).ok_or_else(|| Error::Malformed { offset: 0, message: format!("composite %{id} has fewer components than its type") })?.to_vec();
                        if w.scalar(k) {
                            // A part of one component is that constituent itself.
                            if let (Some(c), Some(p)) = (comps[0].id(), parts.get_mut(&id).and_then(|p| p.get_mut(k))) {
                                *p = c;
                            }
                            continue;
                        }
                        Inst::new(g.op().unwrap_or(Op::ConstantComposite), Some(w.ty(k)), Some(*part_id), comps)
                    }
                    Some(Op::ConstantNull | Op::Undef) => Inst::new(g.op().unwrap_or(Op::Undef), Some(w.ty(k)), Some(*part_id), Vec::new()),
                    _ => return Err(refuse(module, &g, "in this constant")),
                };
                module.add_global(inst);
            }
        }
        let uint = module.type_int(32, false);
        let boolean = module.type_bool();
        // In id order: the new pointer types get the same ids every time.
        let mut by_id: Vec<(Word, Wide)> = variable_pointers.iter().map(|(&p, w)| (p, *w)).collect();
        by_id.sort_unstable_by_key(|(p, _)| *p);
        let part_pointers: HashMap<Word, Vec<Word>> = by_id.into_iter().map(|(p, w)| (p, (0..w.parts() as usize).map(|k| module.type_pointer(StorageClass::Function, w.ty(k))).collect())).collect();
        // Each wide `Function` variable's part variables.
        let mut variable_parts: HashMap<Word, (Vec<Word>, Wide)> = HashMap::new();
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(body.len());
                for inst in body {
                    let result_wide = inst.result_type.and_then(|t| wides.get(&t)).copied();
                    if let Some(&w) = inst.result_type.filter(|_| inst.is(Op::Variable)).and_then(|t| variable_pointers.get(&t)) {
                        let ptrs = part_pointers[&inst.result_type.unwrap_or(0)].clone();
                        let init = inst.operands.get(1).and_then(Operand::id);
                        let mut ids = Vec::new();
                        for (k, ptr) in ptrs.into_iter().enumerate() {
                            let id = module.alloc_id();
                            let mut ops = vec![inst.operands[0].clone()];
                            if let Some(i) = init {
                                ops.push(Operand::Id(part_of(&parts, i, k)?));
                            }
                            out.push(Inst::new(Op::Variable, Some(ptr), Some(id), ops).from_origin(inst.origin));
                            ids.push(id);
                        }
                        variable_parts.insert(inst.result_id.unwrap_or(0), (ids, w));
                        outcome.count(inst.opcode);
                        continue;
                    }
                    if let Some((vars, w)) = inst.operands.iter().filter_map(Operand::id).find_map(|v| variable_parts.get(&v)).cloned() {
                        // Whole loads and stores of a wide variable: part by part.
                        let on_var = inst.id(0).is_ok_and(|p| variable_parts.contains_key(&p));
                        match inst.op() {
                            Some(Op::Load) if on_var && result_wide.is_some() => {
                                for (k, (var, part_id)) in vars.iter().zip(parts_of(&parts, inst.result_id)?).enumerate() {
                                    let mut ops = vec![Operand::Id(*var)];
                                    ops.extend(part_memory_operands(&inst.operands[1..], w, k, &types));
                                    out.push(Inst::new(Op::Load, Some(w.ty(k)), Some(part_id), ops).from_origin(inst.origin));
                                }
                            }
                            Some(Op::Store) if on_var && inst.id(1).ok().and_then(wide_of).is_some() => {
                                for (k, (var, part)) in vars.iter().zip(parts_of(&parts, inst.id(1).ok())?).enumerate() {
                                    let mem = part_memory_operands(&inst.operands[2..], w, k, &types);
                                    let mut ops = vec![Operand::Id(*var), Operand::Id(part)];
                                    ops.extend(mem.iter().cloned());
                                    out.push(Inst::new(Op::Store, None, None, ops).from_origin(inst.origin));
                                }
                            }
                            _ => return Err(refuse(module, &inst, "in variables used other than by whole loads and stores")),
                        }
                        outcome.count(inst.opcode);
                        continue;
                    }
                    let operand_wide = inst.operands.iter().filter_map(Operand::id).any(|v| wide_of(v).is_some());
                    let steps = matches!(inst.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) && inst.result_type.is_some_and(|t| pointers.contains_key(&t));
                    // Pointers to wide vectors change type only (loads and stores of pointers,
                    // bitcasts, phis), except when they step.
                    if result_wide.is_none() && !operand_wide && !steps {
                        out.push(inst);
                        continue;
                    }
                    let mut e = Emit { m: module, out: &mut out, origin: inst.origin };
                    let op = inst.op();
                    // The scalar component `c` of vector value `v` (wide or not).
                    let component = |e: &mut Emit<'_>, v: Word, c: u32| -> Result<Word> {
                        Ok(match wide_of(v) {
                            Some(w) if w.scalar((c / 4) as usize) => part_of(&parts, v, (c / 4) as usize)?,
                            Some(w) => e.op(Op::CompositeExtract, w.component, vec![Operand::Id(part_of(&parts, v, (c / 4) as usize)?), Operand::Literal(c % 4)]),
                            None => {
                                let ty = types.type_of(v).and_then(|t| types.vector(t)).map_or(0, |(c, _)| c);
                                e.op(Op::CompositeExtract, ty, vec![Operand::Id(v), Operand::Literal(c)])
                            }
                        })
                    };
                    match op {
                        Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain) if steps => {
                            // The index counts wide vectors: scale it to parts.
                            let w = pointers[&inst.result_type.unwrap_or(0)];
                            let index = inst.id(1)?;
                            let shift = e.m.constant_u32(w.parts().trailing_zeros());
                            let ity = types.type_of(index).unwrap_or(uint);
                            let scaled = e.op(Op::ShiftLeftLogical, ity, vec![Operand::Id(index), Operand::Id(shift)]);
                            let mut ops = inst.operands.clone();
                            ops[1] = Operand::Id(scaled);
                            e.out.push(Inst::new(inst.op().unwrap_or(Op::PtrAccessChain), inst.result_type, inst.result_id, ops).from_origin(inst.origin));
                        }
                        Some(Op::Load) if result_wide.is_some() => {
                            let w = result_wide.unwrap_or_default();
                            let p = inst.id(0)?;
                            let ptr_ty = types.type_of(p).unwrap_or(0);
                            for (k, part_id) in parts_of(&parts, inst.result_id)?.iter().enumerate() {
                                let at = part_pointer_at(&mut e, p, ptr_ty, k as u32);
                                let mut ops = vec![Operand::Id(at)];
                                ops.extend(part_memory_operands(&inst.operands[1..], w, k, &types));
                                e.out.push(Inst::new(Op::Load, Some(w.ty(k)), Some(*part_id), ops).from_origin(inst.origin));
                            }
                        }
                        Some(Op::Store) if inst.id(1).ok().and_then(wide_of).is_some() => {
                            let (p, v) = (inst.id(0)?, inst.id(1)?);
                            let w = wide_of(v).unwrap_or_default();
                            let ptr_ty = types.type_of(p).unwrap_or(0);
                            for (k, part) in parts_of(&parts, Some(v))?.iter().enumerate() {
                                let at = part_pointer_at(&mut e, p, ptr_ty, k as u32);
                                let mut ops = vec![Operand::Id(at), Operand::Id(*part)];
                                ops.extend(part_memory_operands(&inst.operands[2..], w, k, &types));
                                e.out.push(Inst::new(Op::Store, None, None, ops).from_origin(inst.origin));
                            }
                        }
                        Some(Op::Phi) => {
                            let w = result_wide.ok_or_else(|| refuse(e.m, &inst, "in a phi of another type"))?;
                            for (k, part_id) in parts_of(&parts, inst.result_id)?.iter().enumerate() {
                                let mut ops = Vec::new();
                                for pair in inst.operands.chunks(2) {
                                    let v = pair[0].id().unwrap_or(0);
                                    ops.push(Operand::Id(if parts.contains_key(&v) { part_of(&parts, v, k)? } else { v }));
                                    ops.extend(pair.get(1).cloned());
                                }
                                e.out.push(Inst::new(Op::Phi, Some(w.ty(k)), Some(*part_id), ops).from_origin(inst.origin));
                            }
                        }
                        Some(Op::CompositeExtract) if inst.operands.len() == 2 => {
                            let c = inst.operands[1].word().unwrap_or(0);
                            let v = component(&mut e, inst.id(0)?, c)?;
                            e.out.push(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, vec![Operand::Id(v)]).from_origin(inst.origin));
                        }
                        Some(Op::CompositeInsert) if result_wide.is_some() && inst.operands.len() == 3 => {
                            let (obj, v, c) = (inst.id(0)?, inst.id(1)?, inst.operands[2].word().unwrap_or(0));
                            let w = result_wide.unwrap_or_default();
                            for (k, part_id) in parts_of(&parts, inst.result_id)?.iter().enumerate() {
                                let src = part_of(&parts, v, k)?;
                                let (op, ops) = match () {
                                    _ if k as u32 != c / 4 => (Op::CopyObject, vec![Operand::Id(src)]),
                                    _ if w.scalar(k) => (Op::CopyObject, vec![Operand::Id(obj)]),
                                    _ => (Op::CompositeInsert, vec![Operand::Id(obj), Operand::Id(src), Operand::Literal(c % 4)]),
                                };
                                e.out.push(Inst::new(op, Some(w.ty(k)), Some(*part_id), ops).from_origin(inst.origin));
                            }
                        }
                        Some(Op::VectorShuffle | Op::CompositeConstruct) => {
                            // The result's components, as (source, component) pairs.
                            let sources: Vec<(Word, u32)> = if op == Some(Op::VectorShuffle) {
                                let (v1, v2) = (inst.id(0)?, inst.id(1)?);
                                let n1 = vector_count(&types, &wides, v1);
                                inst.operands[2..]
                                    .iter()
                                    .map(|o| o.word().unwrap_or(0))
                                    .map(|c| {
                                        if c == u32::MAX {
                                            (v1, 0)
                                        } else if c < n1 {
                                            (v1, c)
                                        } else {
                                            (v2, c - n1)
                                        }
                                    })
                                    .collect()
                            } else {
                                inst.operands.iter().filter_map(Operand::id).flat_map(|v| (0..vector_count(&types, &wides, v).max(1)).map(move |c| (v, c))).collect()
                            };
                            let scalar = |e: &mut Emit<'_>, (v, c): (Word, u32)| if vector_count(&types, &wides, v) == 0 { Ok(v) } else { component(e, v, c) };
                            match result_wide {
                                Some(w) => {
                                    for (k, part_id) in parts_of(&parts, inst.result_id)?.iter().enumerate() {
                                        let group = sources.get(4 * k..4 * k + w.len(k) as usize).ok_or_else(|| refuse(e.m, &inst, "built from fewer components than the vector has"))?;
                                        let comps = group.iter().map(|s| scalar(&mut e, *s).map(Operand::Id)).collect::<Result<Vec<_>>>()?;
                                        let op = if w.scalar(k) { Op::CopyObject } else { Op::CompositeConstruct };
                                        e.out.push(Inst::new(op, Some(w.ty(k)), Some(*part_id), comps).from_origin(inst.origin));
                                    }
                                }
                                None => {
                                    let comps = sources.iter().map(|s| scalar(&mut e, *s).map(Operand::Id)).collect::<Result<Vec<_>>>()?;
                                    e.out.push(Inst::new(Op::CompositeConstruct, inst.result_type, inst.result_id, comps).from_origin(inst.origin));
                                }
                            }
                        }
                        Some(Op::VectorExtractDynamic | Op::VectorInsertDynamic) => {
                            let insert = op == Some(Op::VectorInsertDynamic);
                            let (v, index) = (inst.id(0)?, inst.id(if insert { 2 } else { 1 })?);
                            let w = wide_of(v).ok_or_else(|| refuse(e.m, &inst, "in this instruction"))?;
                            let ity = types.type_of(index).unwrap_or(uint);
                            let (width, signed) = types.int(ity).unwrap_or((32, false));
                            let (three, two) = (e.m.constant_int(ity, width, signed, 3), e.m.constant_u32(2));
                            let within = e.op(Op::BitwiseAnd, ity, vec![Operand::Id(index), Operand::Id(three)]);
                            let which = e.op(Op::ShiftRightLogical, ity, vec![Operand::Id(index), Operand::Id(two)]);
                            // The index within part `k`, kept inside a shorter last part (an index
                            // past a vector's end is undefined behaviour, even where unselected).
                            let within_part = |e: &mut Emit<'_>, k: usize| match w.len(k) {
                                4 => within,
                                n => {
                                    let last = e.m.constant_int(ity, width, signed, u64::from(n - 1));
                                    let inside = e.op(Op::ULessThanEqual, boolean, vec![Operand::Id(within), Operand::Id(last)]);
                                    e.op(Op::Select, ity, vec![Operand::Id(inside), Operand::Id(within), Operand::Id(last)])
                                }
                            };
                            let is_part = |e: &mut Emit<'_>, k: usize| {
                                let kc = e.m.constant_int(ity, width, signed, k as u64);
                                e.op(Op::IEqual, boolean, vec![Operand::Id(which), Operand::Id(kc)])
                            };
                            if insert {
                                // Each part: the component replaced where the index falls in it.
                                let value = inst.id(1)?;
                                for (k, part_id) in parts_of(&parts, inst.result_id)?.iter().enumerate() {
                                    let part = part_of(&parts, v, k)?;
                                    let is = is_part(&mut e, k);
                                    let (replaced, cond) = if w.scalar(k) {
                                        (value, is)
                                    } else {
                                        let at = within_part(&mut e, k);
                                        let replaced = e.op(Op::VectorInsertDynamic, w.ty(k), vec![Operand::Id(part), Operand::Id(value), Operand::Id(at)]);
                                        let bools = e.m.type_vector(boolean, w.len(k));
                                        (replaced, e.op(Op::CompositeConstruct, bools, vec![Operand::Id(is); w.len(k) as usize]))
                                    };
                                    e.out.push(Inst::new(Op::Select, Some(w.ty(k)), Some(*part_id), vec![Operand::Id(cond), Operand::Id(replaced), Operand::Id(part)]).from_origin(inst.origin));
                                }
                            } else {
                                let mut result = e.op(Op::VectorExtractDynamic, w.component, vec![Operand::Id(part_of(&parts, v, 0)?), Operand::Id(within)]);
                                for k in 1..w.parts() as usize {
                                    let part = part_of(&parts, v, k)?;
                                    let x = if w.scalar(k) {
                                        part
                                    } else {
                                        let at = within_part(&mut e, k);
                                        e.op(Op::VectorExtractDynamic, w.component, vec![Operand::Id(part), Operand::Id(at)])
                                    };
                                    let is = is_part(&mut e, k);
                                    result = e.op(Op::Select, w.component, vec![Operand::Id(is), Operand::Id(x), Operand::Id(result)]);
                                }
                                e.out.push(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, vec![Operand::Id(result)]).from_origin(inst.origin));
                            }
                        }
                        Some(Op::Any | Op::All) => {
                            let v = inst.id(0)?;
                            let w = wide_of(v).ok_or_else(|| refuse(e.m, &inst, "in this instruction"))?;
                            let combine = if op == Some(Op::Any) { Op::LogicalOr } else { Op::LogicalAnd };
                            let mut acc = e.op(op.unwrap_or(Op::Any), boolean, vec![Operand::Id(part_of(&parts, v, 0)?)]);
                            for k in 1..w.parts() {
                                let part = part_of(&parts, v, k as usize)?;
                                let x = if w.scalar(k as usize) { part } else { e.op(op.unwrap_or(Op::Any), boolean, vec![Operand::Id(part)]) };
                                acc = e.op(combine, boolean, vec![Operand::Id(acc), Operand::Id(x)]);
                            }
                            e.out.push(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, vec![Operand::Id(acc)]).from_origin(inst.origin));
                        }
                        Some(o) if result_wide.is_some() && (ELEMENT_WISE.contains(&o) || (o == Op::ExtInst && glsl_component_wise(e.m, &inst))) => {
                            let w = result_wide.unwrap_or_default();
                            // A scalar part scales by multiplying (`OpVectorTimesScalar` is of floats).
                            let op_of = |k: usize| if o == Op::VectorTimesScalar && w.scalar(k) { Op::FMul } else { o };
                            for (k, part_id) in parts_of(&parts, inst.result_id)?.iter().enumerate() {
                                let mut ops = Vec::with_capacity(inst.operands.len());
                                for operand in &inst.operands {
                                    ops.push(match operand.id().filter(|v| parts.contains_key(v)) {
                                        Some(v) => Operand::Id(part_of(&parts, v, k)?),
                                        None => operand.clone(),
                                    });
                                }
                                e.out.push(Inst::new(op_of(k), Some(w.ty(k)), Some(*part_id), ops).from_origin(inst.origin));
                            }
                        }
                        Some(Op::Bitcast) => {
                            // OpenCL's as_<type>n between vectors (and scalars) of one size:
                            // the source's scalars regrouped at the result's component width.
                            let (v, rt) = (inst.id(0)?, inst.ty()?);
                            let vt = types.type_of(v).unwrap_or(0);
                            let (src_comp, n) = wides.get(&vt).map(|w| (w.component, w.count)).or_else(|| types.vector(vt)).unwrap_or((vt, 1));
                            let (dst_comp, m) = result_wide.map(|w| (w.component, w.count)).or_else(|| types.vector(rt)).unwrap_or((rt, 1));
                            let (a, b) = (types.scalar_width(src_comp).unwrap_or(0), types.scalar_width(dst_comp).unwrap_or(0));
                            if a == 0 || b == 0 || n * a != m * b || !matches!(a.max(b) / a.min(b), 1 | 2 | 4 | 8) {
                                return Err(refuse(e.m, &inst, "in a bit cast between these types"));
                            }
                            let scalars = (0..n).map(|c| if n == 1 { Ok(v) } else { component(&mut e, v, c) }).collect::<Result<Vec<_>>>()?;
                            let dst = bitcast_scalars(&mut e, (src_comp, a), (dst_comp, b), &scalars, uint);
                            match result_wide {
                                Some(w) => {
                                    for (k, part_id) in parts_of(&parts, inst.result_id)?.iter().enumerate() {
                                        let comps = dst[4 * k..4 * k + w.len(k) as usize].iter().map(|c| Operand::Id(*c)).collect();
                                        let op = if w.scalar(k) { Op::CopyObject } else { Op::CompositeConstruct };
                                        e.out.push(Inst::new(op, Some(w.ty(k)), Some(*part_id), comps).from_origin(inst.origin));
                                    }
                                }
                                None if m == 1 => e.out.push(Inst::new(Op::CopyObject, Some(rt), inst.result_id, vec![Operand::Id(dst[0])]).from_origin(inst.origin)),
                                None => e.out.push(Inst::new(Op::CompositeConstruct, Some(rt), inst.result_id, dst.iter().map(|c| Operand::Id(*c)).collect()).from_origin(inst.origin)),
                            }
                        }
                        _ => return Err(refuse(e.m, &inst, "in this instruction")),
                    }
                    outcome.count(inst.opcode);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        // Pointer types now point at the parts, a part apart.
        for (&ptr, w) in &pointers {
            if let Some(pointee) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(ptr)).and_then(|d| d.operands.get_mut(1)) {
                *pointee = Operand::Id(w.part);
            }
            let stride = 4 * component_bytes(&types, w.component);
            for a in module.annotations.iter_mut().filter(|a| a.is(Op::Decorate) && a.word_opt(0) == Some(ptr) && a.word_opt(1) == Some(Decoration::ArrayStride as u32)) {
                if let Some(value) = a.operands.get_mut(2) {
                    *value = Operand::Literal(stride);
                }
            }
        }
        // The wide types, constants and variable pointer types go.
        let gone: HashSet<Word> = wides.keys().copied().chain(parts.keys().copied()).chain(variable_pointers.keys().copied()).collect();
        module.globals_mut().retain(|g| !g.result_id.is_some_and(|r| gone.contains(&r)));
        module.annotations.retain(|a| !a.operands.first().and_then(Operand::id).is_some_and(|t| gone.contains(&t)));
        module.debug_names.retain(|n| !n.operands.first().and_then(Operand::id).is_some_and(|t| gone.contains(&t)));
        module.interner.clear();
        module.merge_duplicate_types();
        outcome.changed = true;
        Ok(outcome)
    }
}

/// Part `k` of wide value `v`.
fn part_of(parts: &HashMap<Word, Vec<Word>>, v: Word, k: usize) -> Result<Word> {
    parts.get(&v).and_then(|p| p.get(k)).copied().ok_or_else(|| Error::Malformed { offset: 0, message: format!("%{v} is used as a vector of more than 4 components of another size") })
}

/// The parts of wide value `v`.
fn parts_of(parts: &HashMap<Word, Vec<Word>>, v: Option<Word>) -> Result<Vec<Word>> {
    v.and_then(|v| parts.get(&v)).cloned().ok_or_else(|| Error::Malformed { offset: 0, message: "a vector of more than 4 components without a result id".into() })
}

/// Emits into a rebuilt block.
struct Emit<'a> {
    m: &'a mut Module,
    out: &'a mut Vec<Inst>,
    origin: Option<crate::ir::Origin>,
}

impl Emit<'_> {
    fn op(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.m.alloc_id();
        self.out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(self.origin));
        id
    }
}

/// Scalars of type `src` (`a` bits) as scalars of type `dst` (`b` bits), the same bits in
/// order: one bit cast per scalar where the widths agree, a scalar split into a vector of
/// `a / b` or built from `b / a` of them otherwise (through 32-bit words where that ratio is 8).
fn bitcast_scalars(e: &mut Emit<'_>, (src, a): (Word, u32), (dst, b): (Word, u32), scalars: &[Word], uint: Word) -> Vec<Word> {
    let cast = |e: &mut Emit<'_>, ty: Word, v: Word| e.op(Op::Bitcast, ty, vec![Operand::Id(v)]);
    if a == b {
        return scalars.iter().map(|v| if src == dst { *v } else { cast(e, dst, *v) }).collect();
    }
    if a / b.min(a) == 8 || b / a.min(b) == 8 {
        // 64 and 8 bits: through 32-bit words.
        let words = bitcast_scalars(e, (src, a), (uint, 32), scalars, uint);
        return bitcast_scalars(e, (uint, 32), (dst, b), &words, uint);
    }
    if a > b {
        let r = a / b;
        let vec = e.m.type_vector(dst, r);
        scalars
            .iter()
            .flat_map(|v| {
                let split = cast(e, vec, *v);
                (0..r).map(|k| e.op(Op::CompositeExtract, dst, vec![Operand::Id(split), Operand::Literal(k)])).collect::<Vec<_>>()
            })
            .collect()
    } else {
        let r = (b / a) as usize;
        let vec = e.m.type_vector(src, r as u32);
        scalars
            .chunks(r)
            .map(|group| {
                let joined = e.op(Op::CompositeConstruct, vec, group.iter().map(|v| Operand::Id(*v)).collect());
                cast(e, dst, joined)
            })
            .collect()
    }
}

/// Components of vector value `v` (wide or not); 0 for a scalar.
fn vector_count(types: &Types, wides: &HashMap<Word, Wide>, v: Word) -> u32 {
    let Some(t) = types.type_of(v) else { return 0 };
    wides.get(&t).map(|w| w.count).or_else(|| types.vector(t).map(|(_, n)| n)).unwrap_or(0)
}

fn component_bytes(types: &Types, t: Word) -> u32 {
    crate::kernel::size_align(types, t).map_or(4, |(size, _)| size)
}

/// The pointer to part `k` of the wide vector `p` points at (`p` itself for the first).
fn part_pointer_at(e: &mut Emit<'_>, p: Word, ptr_ty: Word, k: u32) -> Word {
    if k == 0 {
        return p;
    }
    let kc = e.m.constant_u32(k);
    e.op(Op::PtrAccessChain, ptr_ty, vec![Operand::Id(p), Operand::Id(kc)])
}

/// A load's or store's memory operands for part `k`: `Aligned` capped at the part's size.
fn part_memory_operands(ops: &[Operand], w: Wide, k: usize, types: &Types) -> Vec<Operand> {
    let part_bytes = w.len(k).next_power_of_two() * component_bytes(types, w.component);
    let mut out = ops.to_vec();
    if let (Some(Operand::Enum(_, flags)), Some(Operand::Literal(a))) = (out.first(), out.get(1)) {
        if flags & spirv::MemoryAccess::ALIGNED.bits() != 0 {
            out[1] = Operand::Literal((*a).min(part_bytes));
        }
    }
    out
}

/// Whether `inst` (an `OpExtInst`) is a component-wise `GLSL.std.450` instruction.
fn glsl_component_wise(module: &Module, inst: &Inst) -> bool {
    let set = inst.id(0).ok();
    let glsl = module.ext_inst_imports.iter().any(|i| i.result_id == set && i.string(0).as_deref() == Some("GLSL.std.450"));
    let number = inst.operands.get(1).and_then(Operand::word).unwrap_or(0);
    glsl && !GLSL_WHOLE.iter().any(|g| *g as u32 == number)
}
