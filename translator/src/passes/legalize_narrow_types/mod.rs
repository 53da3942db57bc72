//! `LegalizeNarrowTypes`: 16- and 8-bit types become 32-bit ones on devices without them
//! (SwiftShader has neither shaderFloat16, shaderInt8, shaderInt16 nor 8/16-bit storage).
//!
//! **Values.** f16 and bf16 values are held in f32 and rounded to the nearest narrow value, ties
//! to even, after every operation whose result can be inexact, so each operation gives the
//! narrow type's result (an `Fma` or a sub-group reduction rounds once, at its end; a 32-bit
//! integer converted to bf16 passes through f32 rounded to odd, so it too rounds once). 8- and
//! 16-bit integers are held in 32-bit integers of the same signedness, zero-extended: operations
//! whose low bits do not depend on the high ones (add, subtract, multiply, shift left, not,
//! negate) mask their result, operations that read a sign (signed division and remainder,
//! arithmetic shift, signed comparison, min, max, abs, sign extension, conversion to float)
//! sign-extend their operands first. Constants are rewritten; bit casts repack lanes. Wrap
//! decorations on widened results go: 32-bit arithmetic wraps elsewhere than narrow arithmetic.
//!
//! **Memory.** Function, private and workgroup variables hold the widened types (a workgroup
//! array of f16 takes twice the room), except where widening would take an entry point past the
//! target's workgroup memory: then every workgroup variable of narrow data (with a size, an array
//! length a specialization-constant expression included) is held packed in 32-bit words and
//! accessed as a block is, laid out at natural alignment (a struct's members at multiples of
//! their size, array elements at their size rounded up to that), stores of part of a word being
//! atomic and-or pairs of workgroup scope. A workgroup variable that narrow atomics reach is
//! packed in any case (its atomics become compare-and-swap loops on words, as in blocks).
//! Storage, uniform and push-constant blocks holding narrow data are redeclared as arrays of 32-bit words (`blocks.rs`): an access chain into one becomes a
//! byte offset computed from the block's `Offset`, `ArrayStride` and `MatrixStride` decorations
//! (matrices column- or row-major: a row-major matrix's column is read and written element by
//! element), a load reads the words it covers and unpacks the bits, a store of whole aligned
//! words writes them, and a store of part of a word clears and sets its bits with two atomics,
//! so that neighbours written by other invocations survive.
//!
//! `PhysicalStorageBuffer` pointers to narrow data stay addresses: their types become pointers
//! to a block of words, and loads and stores through them (and through access chains and
//! `OpPtrAccessChain` steps from them) read and write words as through a block.
//!
//! A device with 8- or 16-bit storage but not in push constants gets the same rewrite for the
//! modules whose push constants hold such data, and one without the f16 atomics a module uses
//! for that module (unless all of them are through buffer references and the target has 64-bit
//! integers: `emulate-float-atomics` builds those on the word's address). Atomics on narrow
//! elements of blocks become compare-and-swap loops on their words (`atomics.rs`). A buffer
//! reference derived from another (an access chain) that is stored or put into a composite
//! becomes an address again: its word's pointer, bit-cast (its offset a multiple of 4 bytes).
//!
//! Preconditions: runs after cooperative-matrix emulation (no matrix of a narrow type is left)
//! and after the kernel passes; a `PhysicalStorageBuffer` pointer to narrow data that is
//! accessed holds a 4-byte aligned address. Refused by name: narrow atomics on function or
//! private variables, pointers into a redeclared block that are passed to functions, stored,
//! or chosen by a phi or select (and derived buffer references at offsets not known to be
//! whole words, or passed to functions or phis), and instructions with narrow
//! operands the pass does not know. Applies where the target lacks 16-bit floats, 8- or 16-bit
//! integers, 8- or 16-bit storage, or bf16, where it lacks them in push constants or the f16
//! atomics a module uses, and to every module with atomics on 8- or 16-bit integers (no Vulkan
//! device has those).

mod atomics;
pub(crate) use atomics::unequal_semantics;
mod blocks;
mod codec;
mod spec_ops;

use crate::analysis::derived_pointers::derived_pointers;
use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use blocks::{Layouts, Ptr, View};
use codec::{low_mask, Emit};
use spirv::{FPEncoding, GlslStd450Op as GLOp, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct LegalizeNarrowTypes;

/// A narrow scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Narrow {
    F16,
    Bf16,
    Int { bits: u32, signed: bool },
}

impl Narrow {
    fn bits(self) -> u32 {
        match self {
            Narrow::F16 | Narrow::Bf16 => 16,
            Narrow::Int { bits, .. } => bits,
        }
    }
}

/// What a module needs beyond plain 8- and 16-bit types.
#[derive(Clone, Copy, Debug, Default)]
struct Uses {
    /// 8-bit and 16-bit data in push constants.
    push8: bool,
    push16: bool,
    /// f16 atomics: load, store or exchange; add; min or max.
    f16_atomic: bool,
    f16_atomic_add: bool,
    f16_atomic_min_max: bool,
    /// Every f16 atomic is through a buffer reference, where `emulate-float-atomics` builds
    /// those the target lacks from 32-bit ones on the word's address (with 64-bit integers)
    /// without widening f16.
    f16_atomics_through_references: bool,
    /// Atomics on 8-bit and 16-bit integers, which Vulkan has on no device.
    int8_atomic: bool,
    int16_atomic: bool,
}

impl Uses {
    /// Everything: what a target must have for any module to keep its narrow types.
    const ALL: Uses =
        Uses { push8: true, push16: true, f16_atomic: true, f16_atomic_add: true, f16_atomic_min_max: true, f16_atomics_through_references: false, int8_atomic: true, int16_atomic: true };

    fn of(module: &Module, types: &Types) -> Uses {
        let (push8, push16) = push_constant_widths(module, types);
        let mut uses = Uses { push8, push16, f16_atomics_through_references: true, ..Uses::default() };
        let pointer = |p: Word| types.type_of(p).and_then(|t| types.pointer(t));
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            let Some(op) = inst.op().filter(|op| crate::passes::lower_kernel_pointers::is_atomic(*op)) else { continue };
            let Some((class, element)) = inst.operands.first().and_then(Operand::id).and_then(pointer) else { continue };
            if types.float(element) == Some((16, None)) && class != StorageClass::PhysicalStorageBuffer as u32 {
                uses.f16_atomics_through_references = false;
            }
            match (types.float(element), types.int(element), op) {
                (Some((16, None)), _, Op::AtomicFAddEXT) => uses.f16_atomic_add = true,
                (Some((16, None)), _, Op::AtomicFMinEXT | Op::AtomicFMaxEXT) => uses.f16_atomic_min_max = true,
                (Some((16, None)), _, _) => uses.f16_atomic = true,
                (_, Some((8, _)), _) => uses.int8_atomic = true,
                (_, Some((16, _)), _) => uses.int16_atomic = true,
                _ => {}
            }
        }
        uses
    }
}

/// Which narrow types `target` cannot hold in a module that `uses` what it says: (f16, bf16,
/// 8-bit integers, 16-bit integers). Narrow atomics the target lacks (all integer ones) are
/// built from 32-bit ones on words, so they make their type missing.
fn missing(target: &DeviceCaps, uses: Uses) -> (bool, bool, bool, bool) {
    let storage8 = target.storage_buffer_8bit && (!uses.push8 || target.storage_push_constant_8bit);
    let storage16 = target.storage_buffer_16bit && (!uses.push16 || target.storage_push_constant_16bit);
    let f16_atomics = (!uses.f16_atomic || target.atomic_float16) && (!uses.f16_atomic_add || target.atomic_float16_add) && (!uses.f16_atomic_min_max || target.atomic_float16_min_max);
    let f16_atomics = f16_atomics || (uses.f16_atomics_through_references && target.shader_int64);
    let f16 = !(target.shader_float16 && storage16 && f16_atomics);
    let bf16 = !target.shader_bfloat16;
    let i8 = !(target.shader_int8 && storage8) || uses.int8_atomic;
    let i16 = !(target.shader_int16 && storage16) || uses.int16_atomic;
    (f16, bf16, i8, i16)
}

/// Whether the module's push-constant blocks hold 8-bit and 16-bit scalars.
fn push_constant_widths(module: &Module, types: &Types) -> (bool, bool) {
    let holds = crate::requirements::narrow_types(module);
    module
        .globals()
        .iter()
        .filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::PushConstant as u32))
        .filter_map(|g| g.result_type.and_then(|t| types.defs.get(&t)).and_then(|d| d.id(1).ok()))
        .filter_map(|pointee| holds.get(&pointee))
        .fold((false, false), |a, b| (a.0 || b.0, a.1 || b.1))
}

impl Pass for LegalizeNarrowTypes {
    fn name(&self) -> &'static str {
        "legalize-narrow-types"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        let (f16, bf16, i8, i16) = missing(target, Uses::ALL);
        f16 || bf16 || i8 || i16
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let (f16, bf16, i8, i16) = missing(cx.target, Uses::of(module, &types));
        let mut scalars = HashMap::new();
        for g in module.globals() {
            let Some(id) = g.result_id else { continue };
            let kind = if let Some((w, encoding)) = types.float(id) {
                match (w, encoding) {
                    (16, None) if f16 => Some(Narrow::F16),
                    (16, Some(e)) if bf16 && e == FPEncoding::BFloat16KHR as u32 => Some(Narrow::Bf16),
                    _ => None,
                }
            } else if let Some((bits, signed)) = types.int(id) {
                ((bits == 8 && i8) || (bits == 16 && i16)).then_some(Narrow::Int { bits, signed })
            } else {
                None
            };
            if let Some(kind) = kind {
                scalars.insert(id, kind);
            }
        }
        if scalars.is_empty() {
            return Ok(outcome);
        }
        // Every type holding a narrow scalar (types precede their uses). A
        // PhysicalStorageBuffer pointer is an address, not narrow data: those to narrow data
        // are kept apart, with their pointees.
        let mut narrow: HashSet<Word> = scalars.keys().copied().collect();
        let mut physical = HashMap::new();
        for g in module.globals() {
            if let (Some(id), None) = (g.result_id, g.result_type) {
                if g.is(Op::TypePointer) && g.word_opt(0) == Some(StorageClass::PhysicalStorageBuffer as u32) {
                    if let Some(pointee) = g.operands.get(1).and_then(Operand::id).filter(|t| narrow.contains(t)) {
                        physical.insert(id, pointee);
                    }
                } else if g.operands.iter().filter_map(Operand::id).any(|t| narrow.contains(&t)) {
                    narrow.insert(id);
                }
            }
        }
        // Widened arithmetic wraps at 32 bits, not at the narrow width (the product of two
        // zero-extended 16-bit values can overflow a signed 32-bit one): its wrap hints go.
        let widened: HashSet<Word> = module.all_insts().filter(|i| i.result_type.is_some_and(|t| narrow.contains(&t))).filter_map(|i| i.result_id).collect();
        module.drop_wrap_decorations(|id| widened.contains(&id));
        let glsl = module.ext_inst_import("GLSL.std.450");
        let mut lz = Legalize {
            target: cx.target,
            layouts: Layouts::new(module),
            types,
            scalars,
            narrow,
            widened: HashMap::new(),
            views: HashMap::new(),
            ptrs: HashMap::new(),
            tracked: HashSet::new(),
            physical: blocks::Physical::new(module, physical),
            packed: HashSet::new(),
            pending: Vec::new(),
            glsl,
        };
        lz.packed = lz.workgroup_to_pack(module);
        if !lz.packed.is_empty() {
            outcome.notes.push(format!(
                "{} workgroup variables of 8- or 16-bit data packed into 32-bit words (for their atomics, or where widened they would exceed the target's {} bytes)",
                lz.packed.len(),
                cx.target.limits.max_shared_memory_size
            ));
        }
        let moved = lz.materialize_spec_ops(module)?;
        if moved > 0 {
            lz.types = Types::new(module);
            outcome.notes.push(format!("{moved} specialization-constant operations on 8- or 16-bit values moved into function code"));
        }
        lz.globals(module)?;
        lz.track_pointers(module);
        for f in 0..module.functions.len() {
            lz.function(module, f, &mut outcome)?;
        }
        atomics::build_loops(module, std::mem::take(&mut lz.pending), lz.glsl);
        lz.remove_narrow_types(module);
        lz.physical.finish(module);
        outcome.changed = true;
        Ok(outcome)
    }
}

struct Legalize<'t> {
    target: &'t DeviceCaps,
    types: Types,
    layouts: Layouts,
    scalars: HashMap<Word, Narrow>,
    /// Every type that holds a narrow scalar.
    narrow: HashSet<Word>,
    widened: HashMap<Word, Word>,
    /// Redeclared blocks, by variable.
    views: HashMap<Word, View>,
    /// Pointers into redeclared blocks.
    ptrs: HashMap<Word, Ptr>,
    /// Every id that becomes a [`Ptr`]: known before the rewrite, so that a use ahead of the
    /// definition (a phi on a back edge) is refused like any other.
    tracked: HashSet<Word>,
    /// PhysicalStorageBuffer pointers to narrow data.
    physical: blocks::Physical,
    /// Workgroup variables of narrow data held packed in 32-bit words, as blocks are.
    packed: HashSet<Word>,
    /// Atomics on narrow data whose compare-and-swap loops are still to be built.
    pending: Vec<atomics::PendingAtomic>,
    glsl: Word,
}

/// Instructions that only move values: retyping their result is their whole rewrite.
const MOVES: &[Op] = &[
    Op::Phi,
    Op::Select,
    Op::CopyObject,
    Op::CopyLogical,
    Op::CompositeConstruct,
    Op::CompositeExtract,
    Op::CompositeInsert,
    Op::VectorShuffle,
    Op::VectorExtractDynamic,
    Op::VectorInsertDynamic,
    Op::Undef,
    Op::Load,
    Op::Store,
    Op::Variable,
    Op::AccessChain,
    Op::InBoundsAccessChain,
    Op::FunctionCall,
    Op::ReturnValue,
    Op::GroupNonUniformBroadcast,
    Op::GroupNonUniformBroadcastFirst,
    Op::GroupNonUniformShuffle,
    Op::GroupNonUniformShuffleXor,
    Op::GroupNonUniformShuffleUp,
    Op::GroupNonUniformShuffleDown,
    Op::GroupNonUniformQuadBroadcast,
    Op::GroupNonUniformQuadSwap,
    Op::GroupNonUniformRotateKHR,
    Op::GroupNonUniformAllEqual,
];

/// Instructions whose result does not change when narrow operands are held widened: exact
/// float operations, operations on zero-extended integers, unsigned and float comparisons.
const EXACT: &[Op] = &[
    Op::FNegate,
    Op::BitwiseAnd,
    Op::BitwiseOr,
    Op::BitwiseXor,
    Op::UDiv,
    Op::UMod,
    Op::ShiftRightLogical,
    Op::IEqual,
    Op::INotEqual,
    Op::UGreaterThan,
    Op::UGreaterThanEqual,
    Op::ULessThan,
    Op::ULessThanEqual,
    Op::FOrdEqual,
    Op::FOrdNotEqual,
    Op::FOrdLessThan,
    Op::FOrdGreaterThan,
    Op::FOrdLessThanEqual,
    Op::FOrdGreaterThanEqual,
    Op::FUnordEqual,
    Op::FUnordNotEqual,
    Op::FUnordLessThan,
    Op::FUnordGreaterThan,
    Op::FUnordLessThanEqual,
    Op::FUnordGreaterThanEqual,
    Op::IsNan,
    Op::IsInf,
    Op::GroupNonUniformFMin,
    Op::GroupNonUniformFMax,
    Op::GroupNonUniformUMax,
    Op::GroupNonUniformBitwiseOr,
    Op::GroupNonUniformBitwiseXor,
];

/// GLSL.std.450 float instructions whose result is exact in the operands' precision.
const EXACT_GLSL: &[GLOp] =
    &[GLOp::FAbs, GLOp::FSign, GLOp::Floor, GLOp::Ceil, GLOp::Trunc, GLOp::Round, GLOp::RoundEven, GLOp::Fract, GLOp::FMin, GLOp::FMax, GLOp::FClamp, GLOp::NMin, GLOp::NMax, GLOp::NClamp, GLOp::Step];

/// GLSL.std.450 integer instructions that read a sign.
const SIGNED_GLSL: &[GLOp] = &[GLOp::SAbs, GLOp::SSign, GLOp::SMin, GLOp::SMax, GLOp::SClamp, GLOp::FindSMsb];

/// GLSL.std.450 integer instructions exact on zero-extended operands.
const UNSIGNED_GLSL: &[GLOp] = &[GLOp::UMin, GLOp::UMax, GLOp::UClamp, GLOp::FindILsb, GLOp::FindUMsb];

impl Legalize<'_> {
    /// The workgroup variables of narrow data to hold packed in words: those that narrow atomics
    /// reach (through access chains), and all of them (that have a size) where widening them
    /// would take an entry point past the target's workgroup memory. The others are widened
    /// (their values read and written without packing).
    fn workgroup_to_pack(&mut self, m: &Module) -> HashSet<Word> {
        let limit = u64::from(self.target.limits.max_shared_memory_size);
        let narrow: Vec<(Word, Word)> = m
            .globals()
            .iter()
            .filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::Workgroup as u32))
            .filter_map(|g| Some((g.result_id?, self.types.defs.get(&g.result_type?)?.id(1).ok()?)))
            .filter(|(_, pointee)| self.narrow.contains(pointee))
            .collect();
        if narrow.is_empty() {
            return HashSet::new();
        }
        // Narrow atomics work on words: the variables they reach are packed in any case.
        let atomic: HashSet<Word> = m
            .functions
            .iter()
            .flat_map(|f| f.insts())
            .filter(|i| i.op().is_some_and(crate::passes::lower_kernel_pointers::is_atomic))
            .filter_map(|i| i.operands.first().and_then(Operand::id))
            .filter(|p| self.types.type_of(*p).and_then(|t| self.types.pointer(t)).is_some_and(|(_, pointee)| self.scalars.contains_key(&pointee)))
            .collect();
        let reaches_atomic = |v: Word| !atomic.is_empty() && m.functions.iter().any(|f| derived_pointers(f, v).iter().any(|p| atomic.contains(p)));
        let mut packed: HashSet<Word> = narrow.iter().filter(|(v, t)| reaches_atomic(*v) && self.layouts.lay_out_packed_variable(&self.types, *t)).map(|(v, _)| *v).collect();
        if limit == 0 {
            return packed;
        }
        let widened = |t: Word| self.scalars.contains_key(&t).then_some(4);
        let extra: HashMap<Word, u64> =
            narrow.iter().filter_map(|&(v, t)| Some((v, crate::specialize::workgroup_memory_with(m, t, &widened)?.saturating_sub(crate::specialize::workgroup_memory_of(m, t)?)))).collect();
        let over = m.entry_points.iter().filter_map(|e| e.string(2)).any(|entry| {
            crate::specialize::workgroup_memory(m, &entry).is_some_and(|(bytes, vars)| {
                let widened = vars.iter().filter_map(|v| extra.get(&v.id)).fold(bytes, |n, e| n.saturating_add(*e));
                widened > limit
            })
        });
        if over {
            packed.extend(narrow.into_iter().filter(|&(_, t)| self.layouts.lay_out_packed_variable(&self.types, t)).map(|(v, _)| v));
        }
        packed
    }

    fn is_view_class(class: Word) -> bool {
        [StorageClass::StorageBuffer, StorageClass::Uniform, StorageClass::PushConstant].iter().any(|c| *c as u32 == class)
    }

    fn unsupported(&self, module: &Module, inst: &Inst, what: String) -> Error {
        Error::Unsupported { site: module.site(inst), target: self.target.name.clone(), missing: what }
    }

    /// The narrow scalar kind and lane count of a scalar or vector type.
    fn lanes_of(&self, ty: Word) -> Option<(Narrow, u32)> {
        if let Some(k) = self.scalars.get(&ty) {
            return Some((*k, 1));
        }
        let (c, n) = self.types.vector(ty)?;
        self.scalars.get(&c).map(|k| (*k, n))
    }

    /// Lane count of a scalar or vector type.
    fn count(&self, ty: Word) -> u32 {
        self.types.vector(ty).map_or(1, |(_, n)| n)
    }

    /// The scalar type of a scalar or vector type.
    fn component(&self, ty: Word) -> Word {
        self.types.vector(ty).map_or(ty, |(c, _)| c)
    }

    fn value_is_narrow(&self, v: Word) -> bool {
        self.types.type_of(v).is_some_and(|t| self.narrow.contains(&t))
    }

    /// The type holding values of `ty`: its widened type where [`Self::widen`] made one.
    fn held(&self, ty: Word) -> Word {
        self.widened.get(&ty).copied().unwrap_or(ty)
    }

    /// The type that holds values of `ty` once narrow scalars are widened.
    fn widen(&mut self, m: &mut Module, ty: Word) -> Result<Word> {
        if !self.narrow.contains(&ty) {
            return Ok(ty);
        }
        if let Some(w) = self.widened.get(&ty) {
            return Ok(*w);
        }
        let def = self.types.defs.get(&ty).cloned().ok_or_else(|| Error::Malformed { offset: 0, message: format!("%{ty} is not a type") })?;
        let w = match (def.op(), self.scalars.get(&ty)) {
            (_, Some(Narrow::F16 | Narrow::Bf16)) => m.type_float(32),
            (_, Some(Narrow::Int { signed, .. })) => m.type_int(32, *signed),
            (Some(Op::TypeVector), None) => {
                let c = self.widen(m, def.id(0)?)?;
                m.type_vector(c, def.word(1)?)
            }
            (Some(Op::TypeMatrix), None) => {
                let c = self.widen(m, def.id(0)?)?;
                m.intern(Op::TypeMatrix, None, vec![Operand::Id(c), Operand::Literal(def.word(1)?)])
            }
            (Some(Op::TypeArray), None) => {
                let e = self.widen(m, def.id(0)?)?;
                m.type_array(e, def.id(1)?)
            }
            (Some(Op::TypeStruct), None) => {
                let members = def.operands.iter().filter_map(Operand::id).map(|t| self.widen(m, t)).collect::<Result<Vec<_>>>()?;
                let id = m.alloc_id();
                m.add_global(Inst::new(Op::TypeStruct, None, Some(id), members.into_iter().map(Operand::Id).collect()))
            }
            (Some(Op::TypePointer), None) if !Self::is_view_class(def.word(0)?) && def.word(0)? != StorageClass::PhysicalStorageBuffer as u32 => {
                let p = self.widen(m, def.id(1)?)?;
                m.intern(Op::TypePointer, None, vec![def.operands[0].clone(), Operand::Id(p)])
            }
            (Some(Op::TypeFunction), None) => {
                let ids: Vec<Word> = def.operands.iter().filter_map(Operand::id).collect();
                let ids = ids.into_iter().map(|t| self.widen(m, t)).collect::<Result<Vec<_>>>()?;
                m.type_function(ids[0], &ids[1..])
            }
            _ => {
                return Err(self.unsupported(
                    m,
                    &def,
                    "8- and 16-bit types here (only values, function, private and workgroup memory, and storage, uniform and push-constant blocks are widened)".into(),
                ))
            }
        };
        self.widened.insert(ty, w);
        Ok(w)
    }

    /// Rewrites narrow constants, retypes composites and variables, redeclares blocks.
    fn globals(&mut self, m: &mut Module) -> Result<()> {
        let count = m.globals().len();
        for i in 0..count {
            let g = m.globals()[i].clone();
            let Some(ty) = g.result_type.filter(|t| self.narrow.contains(t)) else { continue };
            match g.op() {
                Some(Op::Constant | Op::SpecConstant) => {
                    let Some(&kind) = self.scalars.get(&ty) else {
                        return Err(Error::Invalid { site: m.site(&g), message: format!("a scalar constant of composite type %{ty}") });
                    };
                    let bits = g.word(0)? & low_mask(kind.bits());
                    let value = match kind {
                        Narrow::F16 => half::f16::from_bits(bits as u16).to_f32().to_bits(),
                        Narrow::Bf16 => bits << 16,
                        Narrow::Int { .. } => bits,
                    };
                    let w = self.widen(m, ty)?;
                    let g = &mut m.globals_mut()[i];
                    g.result_type = Some(w);
                    g.operands = vec![Operand::Literal(value)];
                }
                Some(Op::ConstantComposite | Op::ConstantNull | Op::Undef | Op::SpecConstantComposite) => {
                    let w = self.widen(m, ty)?;
                    m.globals_mut()[i].result_type = Some(w);
                }
                Some(Op::Variable) => {
                    let class = g.word(0)?;
                    if Self::is_view_class(class) {
                        let view = blocks::redeclare(m, &self.types, &self.layouts, &g)?;
                        self.views.insert(g.result()?, view);
                    } else if self.packed.contains(&g.result()?) {
                        let view = blocks::redeclare_workgroup(m, &self.types, &self.layouts, &g)?;
                        self.views.insert(g.result()?, view);
                    } else {
                        let w = self.widen(m, ty)?;
                        m.globals_mut()[i].result_type = Some(w);
                    }
                }
                _ => return Err(self.unsupported(m, &g, "8- and 16-bit types in this instruction".into())),
            }
        }
        Ok(())
    }

    fn function(&mut self, m: &mut Module, f: usize, outcome: &mut Outcome) -> Result<()> {
        let def = m.functions[f].def.clone();
        if let Some(t) = def.result_type.filter(|t| self.narrow.contains(t)) {
            m.functions[f].def.result_type = Some(self.widen(m, t)?);
        }
        let fn_ty = def.id(1)?;
        if self.narrow.contains(&fn_ty) {
            let w = self.widen(m, fn_ty)?;
            m.functions[f].def.operands[1] = Operand::Id(w);
        }
        for p in 0..m.functions[f].params.len() {
            let param = m.functions[f].params[p].clone();
            if let Some(t) = param.result_type.filter(|t| self.narrow.contains(t)) {
                let w = self.widen(m, t)?;
                m.functions[f].params[p].result_type = Some(w);
            }
        }
        let blocks = std::mem::take(&mut m.functions[f].blocks);
        let mut rebuilt = Vec::with_capacity(blocks.len());
        let mut failure = None;
        for mut block in blocks {
            let insts = std::mem::take(&mut block.insts);
            let mut e = Emit { m, out: Vec::with_capacity(insts.len()), origin: None, glsl: self.glsl };
            for inst in insts {
                e.origin = inst.origin;
                let opcode = inst.opcode;
                match self.rewrite(&mut e, inst) {
                    Ok(true) => outcome.count(opcode),
                    Ok(false) => {}
                    Err(err) => {
                        failure = Some(err);
                        break;
                    }
                }
            }
            block.insts = e.out;
            rebuilt.push(block);
            if failure.is_some() {
                break;
            }
        }
        m.functions[f].blocks = rebuilt;
        failure.map_or(Ok(()), Err)
    }

    /// Rewrites one instruction into `e`; whether it changed.
    fn rewrite(&mut self, e: &mut Emit<'_>, mut inst: Inst) -> Result<bool> {
        if self.block_access(e, &inst)? {
            return Ok(true);
        }
        let Some(op) = inst.op() else {
            e.out.push(inst);
            return Ok(false);
        };
        let old_ty = inst.result_type;
        let result_narrow = old_ty.is_some_and(|t| self.narrow.contains(&t));
        let any_narrow = inst.operands.iter().filter_map(Operand::id).any(|v| self.value_is_narrow(v));
        if !result_narrow && !any_narrow {
            e.out.push(inst);
            return Ok(false);
        }
        let ty = match old_ty {
            Some(t) => Some(self.widen(e.m, t)?),
            None => None,
        };
        inst.result_type = ty;
        if MOVES.contains(&op) || EXACT.contains(&op) {
            e.out.push(inst);
            return Ok(true);
        }
        let (Some(old_ty), Some(ty), Some(id)) = (old_ty, ty, inst.result_id) else {
            if op == Op::Switch {
                return self.switch(e, inst);
            }
            return Err(self.unsupported(e.m, &inst, format!("8- and 16-bit operands of {}", inst.name())));
        };
        let n = self.count(old_ty);
        let args: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
        let result = self.lanes_of(old_ty);
        match (op, result) {
            // Float arithmetic: compute in f32, round.
            (Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FRem | Op::FMod | Op::VectorTimesScalar | Op::Dot | Op::GroupNonUniformFAdd | Op::GroupNonUniformFMul, Some((kind, n))) => {
                let wide = e.emit_as(None, op, ty, inst.operands);
                e.round(kind, n, wide, Some(id));
            }
            (Op::ExtInst, _) => return self.ext_inst(e, inst, old_ty),
            (Op::FConvert | Op::ConvertSToF | Op::ConvertUToF, Some((kind, n))) => {
                let from = self.types.type_of(args[0]).unwrap_or(0);
                let wide_int = op != Op::FConvert && self.lanes_of(from).is_none() && self.types.int(self.component(from)).is_some_and(|(w, _)| w == 32);
                let v = if kind == Narrow::Bf16 && wide_int {
                    // Converting to f32 would round once and to bf16 again.
                    e.int_to_f32_sticky(n, from, args[0], op == Op::ConvertSToF)
                } else {
                    self.float_operand(e, op, args[0], from, n)
                };
                match self.lanes_of(from) {
                    Some((k, _)) if k == kind => {
                        e.emit_as(Some(id), Op::CopyObject, ty, vec![Operand::Id(v)]);
                    }
                    _ => {
                        e.round(kind, n, v, Some(id));
                    }
                }
            }
            (Op::FConvert | Op::ConvertSToF | Op::ConvertUToF, None) => {
                // From a narrow value to a wider type.
                let from = self.types.type_of(args[0]).unwrap_or(0);
                let v = self.float_operand(e, op, args[0], from, n);
                // By shape, not id: a module may declare f32 more than once.
                if self.types.float(self.component(old_ty)) == Some((32, None)) {
                    e.emit_as(Some(id), Op::CopyObject, ty, vec![Operand::Id(v)]);
                } else {
                    e.emit_as(Some(id), Op::FConvert, ty, vec![Operand::Id(v)]);
                }
            }
            // Integer arithmetic whose low bits are right: mask. (An exclusive scan's first
            // invocation gets the 32-bit identity, all ones for UMin and BitwiseAnd.)
            (
                Op::IAdd
                | Op::ISub
                | Op::IMul
                | Op::ShiftLeftLogical
                | Op::Not
                | Op::SNegate
                | Op::GroupNonUniformIAdd
                | Op::GroupNonUniformIMul
                | Op::GroupNonUniformUMin
                | Op::GroupNonUniformBitwiseAnd,
                Some((Narrow::Int { bits, .. }, n)),
            ) => {
                let wide = e.emit_as(None, op, ty, inst.operands);
                self.mask_into(e, ty, n, wide, bits, id);
            }
            // Operations that read a sign: sign-extend, then mask a narrow result.
            (
                Op::SDiv
                | Op::SRem
                | Op::SMod
                | Op::ShiftRightArithmetic
                | Op::SGreaterThan
                | Op::SGreaterThanEqual
                | Op::SLessThan
                | Op::SLessThanEqual
                | Op::GroupNonUniformSMin
                | Op::GroupNonUniformSMax,
                _,
            ) => {
                let operands = self.sign_extended(e, &inst.operands, op == Op::ShiftRightArithmetic);
                match result {
                    Some((Narrow::Int { bits, .. }, n)) => {
                        let mut wide = e.emit_as(None, op, ty, operands);
                        if matches!(op, Op::GroupNonUniformSMin | Op::GroupNonUniformSMax) {
                            // An exclusive scan's first invocation gets the 32-bit identity:
                            // the narrow type's limit instead.
                            let low = e.splat_u32(n, (-(1i64 << (bits - 1))) as u32);
                            let high = e.splat_u32(n, (1u32 << (bits - 1)) - 1);
                            wide = e.emit_as(None, Op::ExtInst, ty, vec![Operand::Id(e.glsl), Operand::Literal(GLOp::SClamp as u32), Operand::Id(wide), Operand::Id(low), Operand::Id(high)]);
                        }
                        self.mask_into(e, ty, n, wide, bits, id);
                    }
                    _ => {
                        e.emit_as(Some(id), op, ty, operands);
                    }
                }
            }
            (Op::SConvert | Op::UConvert, _) => self.int_convert(e, op, id, old_ty, ty, args[0])?,
            // A narrow integer result is held zero-extended.
            (Op::ConvertFToS | Op::ConvertFToU, Some((Narrow::Int { bits, .. }, n))) => {
                let wide = e.emit_as(None, op, ty, inst.operands);
                self.mask_into(e, ty, n, wide, bits, id);
            }
            // From a narrow float held in f32: exact.
            (Op::ConvertFToS | Op::ConvertFToU, _) => {
                e.emit_as(Some(id), op, ty, inst.operands);
            }
            (Op::Bitcast, _) => self.bitcast(e, id, old_ty, ty, args[0])?,
            _ => return Err(self.unsupported(e.m, &inst, format!("8- and 16-bit operands or results of {}", inst.name()))),
        }
        Ok(true)
    }

    fn mask_into(&self, e: &mut Emit<'_>, ty: Word, n: u32, v: Word, bits: u32, id: Word) {
        let m = e.splat_u32(n, low_mask(bits));
        e.emit_as(Some(id), Op::BitwiseAnd, ty, vec![Operand::Id(v), Operand::Id(m)]);
    }

    /// `operands` with each narrow integer sign-extended (only the first when `first_only`).
    fn sign_extended(&mut self, e: &mut Emit<'_>, operands: &[Operand], first_only: bool) -> Vec<Operand> {
        let mut out = Vec::with_capacity(operands.len());
        let mut seen = 0;
        for o in operands {
            let narrow = o.id().and_then(|v| self.types.type_of(v)).and_then(|t| self.lanes_of(t).map(|l| (t, l)));
            match (o, narrow) {
                (Operand::Id(v), Some((t, (Narrow::Int { bits, .. }, n)))) if !(first_only && seen > 0) => {
                    let wt = self.held(t);
                    out.push(Operand::Id(e.sext(wt, n, *v, bits)));
                }
                _ => out.push(o.clone()),
            }
            if o.id().is_some() {
                seen += 1;
            }
        }
        out
    }

    /// `v` (of old type `from`, `n` lanes) as f32 for a conversion `op`: narrow floats are
    /// already, narrow integers are sign-extended for `ConvertSToF` and converted.
    fn float_operand(&mut self, e: &mut Emit<'_>, op: Op, v: Word, from: Word, n: u32) -> Word {
        let f = e.float(n);
        match (self.lanes_of(from), op) {
            (Some((Narrow::F16 | Narrow::Bf16, _)), _) => v,
            (Some((Narrow::Int { bits, .. }, _)), Op::ConvertSToF) => {
                let wt = self.held(from);
                let s = e.sext(wt, n, v, bits);
                e.op(Op::ConvertSToF, f, &[s])
            }
            (Some((Narrow::Int { .. }, _)), _) => e.op(Op::ConvertUToF, f, &[v]),
            (None, Op::FConvert) if self.types.float(self.component(from)).is_some_and(|(w, _)| w == 32) => v,
            (None, op) => e.op(op, f, &[v]),
        }
    }

    /// `SConvert` / `UConvert` from or to a narrow integer.
    fn int_convert(&mut self, e: &mut Emit<'_>, op: Op, id: Word, old_ty: Word, ty: Word, v: Word) -> Result<()> {
        let n = self.count(old_ty);
        let from = self.types.type_of(v).unwrap_or(0);
        let from_w = self.held(from);
        let from_bits = match self.lanes_of(from) {
            Some((k, _)) => k.bits(),
            None => self.types.int(self.component(from)).map_or(32, |(w, _)| w),
        };
        let to_bits = match self.lanes_of(old_ty) {
            Some((k, _)) => k.bits(),
            None => self.types.int(self.component(old_ty)).map_or(32, |(w, _)| w),
        };
        // The source as 32 bits, extended as `op` says. A narrow type the target has (8-bit
        // integers, where only 16-bit ones are legalized) is converted to 32 bits first.
        let mut x = v;
        let mut xt = from_w;
        if self.lanes_of(from).is_none() && from_bits < 32 {
            let t = e.m.type_int(32, op == Op::SConvert);
            xt = e.lanes(t, n);
            x = e.op(op, xt, &[v]);
        } else if from_bits < 32 && op == Op::SConvert {
            x = e.sext(from_w, n, x, from_bits);
        } else if from_bits > 32 {
            xt = e.uint(n);
            x = e.op(Op::UConvert, xt, &[x]);
        }
        if self.lanes_of(old_ty).is_none() && to_bits < 32 {
            // Truncated into a narrow type the target has.
            let signed = self.types.int(self.component(old_ty)).is_some_and(|(_, s)| s);
            e.emit_as(Some(id), if signed { Op::SConvert } else { Op::UConvert }, ty, vec![Operand::Id(x)]);
        } else if to_bits > 32 {
            let s32 = e.m.type_int(32, op == Op::SConvert);
            let s32 = e.lanes(s32, n);
            let x = e.coerce(s32, xt, x);
            e.emit_as(Some(id), op, ty, vec![Operand::Id(x)]);
        } else if to_bits < 32 && (to_bits < from_bits || op == Op::SConvert) {
            let x = e.coerce(ty, xt, x);
            self.mask_into(e, ty, n, x, to_bits, id);
        } else {
            e.coerce_into(id, ty, xt, x);
        }
        Ok(())
    }

    fn ext_inst(&mut self, e: &mut Emit<'_>, mut inst: Inst, old_ty: Word) -> Result<bool> {
        let is_glsl = inst.operands.first().and_then(Operand::id).is_some_and(|s| e.m.ext_inst_imports.iter().any(|i| i.result_id == Some(s) && i.string(0).as_deref() == Some("GLSL.std.450")));
        let which = inst.word_opt(1).and_then(GLOp::from_u32);
        let (Some(which), true) = (which, is_glsl) else {
            return Err(self.unsupported(e.m, &inst, "8- and 16-bit operands of this extended instruction".into()));
        };
        let id = inst.result()?;
        let ty = inst.ty()?;
        match self.lanes_of(old_ty) {
            Some((Narrow::F16 | Narrow::Bf16, _)) if EXACT_GLSL.contains(&which) => e.out.push(inst),
            Some((kind @ (Narrow::F16 | Narrow::Bf16), n)) if !SIGNED_GLSL.contains(&which) && !UNSIGNED_GLSL.contains(&which) => {
                inst.result_id = Some(e.m.alloc_id());
                let wide = inst.result_id.unwrap_or_default();
                e.out.push(inst);
                e.round(kind, n, wide, Some(id));
            }
            _ if UNSIGNED_GLSL.contains(&which) || (EXACT_GLSL.contains(&which) && self.lanes_of(old_ty).is_none()) => e.out.push(inst),
            result if SIGNED_GLSL.contains(&which) => {
                let mut operands = inst.operands[..2].to_vec();
                operands.extend(self.sign_extended(e, &inst.operands[2..], false));
                match result {
                    Some((Narrow::Int { bits, .. }, n)) => {
                        let wide = e.emit_as(None, Op::ExtInst, ty, operands);
                        self.mask_into(e, ty, n, wide, bits, id);
                    }
                    _ => {
                        e.emit_as(Some(id), Op::ExtInst, ty, operands);
                    }
                }
            }
            _ => return Err(self.unsupported(e.m, &inst, format!("8- and 16-bit operands or results of GLSL.std.450 {which:?}"))),
        }
        Ok(true)
    }

    /// A switch on a narrow integer: its literals as the zero-extended selector has them.
    fn switch(&mut self, e: &mut Emit<'_>, mut inst: Inst) -> Result<bool> {
        let sel = inst.id(0)?;
        let Some((Narrow::Int { bits, .. }, 1)) = self.types.type_of(sel).and_then(|t| self.lanes_of(t)) else {
            return Err(self.unsupported(e.m, &inst, "a switch on this selector".into()));
        };
        for pair in inst.operands[2..].chunks_mut(2) {
            if let Some(Operand::Literal(v)) = pair.first_mut() {
                *v &= low_mask(bits);
            }
        }
        e.out.push(inst);
        Ok(true)
    }

    /// A bit cast from or to narrow lanes: the source's bits as 32-bit words, then the
    /// destination's lanes from them.
    fn bitcast(&mut self, e: &mut Emit<'_>, id: Word, old_ty: Word, ty: Word, v: Word) -> Result<()> {
        let from = self.types.type_of(v).unwrap_or(0);
        let bits = |l: &Self, t: Word| {
            let c = l.component(t);
            let width = l.lanes_of(t).map(|(k, _)| k.bits()).or_else(|| l.types.int(c).map(|(w, _)| w)).or_else(|| l.types.float(c).map(|(w, _)| w)).unwrap_or(0);
            width * l.count(t)
        };
        if bits(self, from) != bits(self, old_ty) || bits(self, from) == 0 {
            return Err(Error::Invalid {
                site: e.m.site(&Inst::new(Op::Bitcast, Some(old_ty), Some(id), vec![Operand::Id(v)]).from_origin(e.origin)),
                message: format!("a bit cast of %{v} between types of different sizes"),
            });
        }
        let words = self.pack_words(e, v, from);
        let out = self.unpack_words(e, &words, old_ty, ty);
        e.emit_as(Some(id), Op::CopyObject, ty, vec![Operand::Id(out)]);
        Ok(())
    }

    /// The bits of `v` (old type `ty`: a scalar or vector) as u32 words, lowest first.
    fn pack_words(&mut self, e: &mut Emit<'_>, v: Word, ty: Word) -> Vec<Word> {
        let n = self.count(ty);
        let u = e.uint(1);
        let comp = self.component(ty);
        let wide_comp = self.held(comp);
        let lane = |e: &mut Emit<'_>, i: u32| if n == 1 { v } else { e.extract(wide_comp, v, i) };
        match self.lanes_of(ty) {
            Some((kind, _)) => {
                let bits = kind.bits();
                let lanes: Vec<Word> = (0..n)
                    .map(|i| {
                        let x = lane(e, i);
                        e.encode(kind, wide_comp, x)
                    })
                    .collect();
                pack_lanes(e, &lanes, bits)
            }
            None => {
                let width = self.types.scalar_width(comp).unwrap_or(32);
                if width == 64 {
                    let u2 = e.uint(2);
                    (0..n)
                        .flat_map(|i| {
                            let x = lane(e, i);
                            let pair = e.op(Op::Bitcast, u2, &[x]);
                            [e.extract(u, pair, 0), e.extract(u, pair, 1)]
                        })
                        .collect()
                } else if width < 32 {
                    // A narrow type the target has (a `ushort` beside a legalized bf16): its bits
                    // zero-extended.
                    let narrow_uint = e.m.type_int(width, false);
                    let lanes: Vec<Word> = (0..n)
                        .map(|i| {
                            let x = lane(e, i);
                            let bits = e.coerce(narrow_uint, comp, x);
                            e.op(Op::UConvert, u, &[bits])
                        })
                        .collect();
                    pack_lanes(e, &lanes, width)
                } else {
                    (0..n)
                        .map(|i| {
                            let x = lane(e, i);
                            e.coerce(u, comp, x)
                        })
                        .collect()
                }
            }
        }
    }

    /// A value of old type `old_ty` (held as `ty`) from u32 words, lowest first.
    fn unpack_words(&mut self, e: &mut Emit<'_>, words: &[Word], old_ty: Word, ty: Word) -> Word {
        let n = self.count(old_ty);
        let u = e.uint(1);
        let comp = self.component(old_ty);
        let wide_comp = self.held(comp);
        let lanes: Vec<Word> = match self.lanes_of(old_ty) {
            Some((kind, _)) => {
                let bits = kind.bits();
                (0..n)
                    .map(|i| {
                        let word = words[(i * bits / 32) as usize];
                        let s = e.m.constant_u32(i * bits % 32);
                        let shifted = e.op(Op::ShiftRightLogical, u, &[word, s]);
                        let b = e.mask(u, 1, shifted, bits);
                        e.decode(kind, wide_comp, b)
                    })
                    .collect()
            }
            None => {
                let width = self.types.scalar_width(comp).unwrap_or(32);
                if width == 64 {
                    let u2 = e.uint(2);
                    (0..n as usize)
                        .map(|i| {
                            let pair = e.op(Op::CompositeConstruct, u2, &[words[2 * i], words[2 * i + 1]]);
                            e.op(Op::Bitcast, comp, &[pair])
                        })
                        .collect()
                } else if width < 32 {
                    let narrow_uint = e.m.type_int(width, false);
                    (0..n as usize)
                        .map(|i| {
                            let word = words[(i as u32 * width / 32) as usize];
                            let s = e.m.constant_u32(i as u32 * width % 32);
                            let shifted = e.op(Op::ShiftRightLogical, u, &[word, s]);
                            let bits = e.op(Op::UConvert, narrow_uint, &[shifted]);
                            e.coerce(comp, narrow_uint, bits)
                        })
                        .collect()
                } else {
                    (0..n as usize).map(|i| e.coerce(comp, u, words[i])).collect()
                }
            }
        };
        if n == 1 {
            lanes[0]
        } else {
            e.op(Op::CompositeConstruct, ty, &lanes)
        }
    }

    /// Removes every narrow type, and the decorations and names of removed ids.
    fn remove_narrow_types(&mut self, m: &mut Module) {
        let gone = |id: Option<Word>| id.is_some_and(|id| self.narrow.contains(&id));
        m.globals_mut().retain(|g| !gone(g.result_id));
        let defined: HashSet<Word> = m.globals().iter().filter_map(|g| g.result_id).chain(m.functions.iter().flat_map(|f| f.insts().filter_map(|i| i.result_id).collect::<Vec<_>>())).collect();
        let targets_gone = |i: &Inst| i.operands.first().and_then(Operand::id).is_some_and(|t| !defined.contains(&t));
        m.annotations.retain(|a| !targets_gone(a));
        m.debug_names.retain(|a| !targets_gone(a));
        m.interner.clear();
    }
}

/// `lanes` (u32 values holding `bits`-bit lanes in their low bits) packed into u32 words, lowest
/// lane in the lowest bits.
fn pack_lanes(e: &mut Emit<'_>, lanes: &[Word], bits: u32) -> Vec<Word> {
    let u = e.uint(1);
    lanes
        .chunks((32 / bits.max(1)).max(1) as usize)
        .map(|chunk| {
            let mut word = chunk[0];
            for (j, part) in chunk.iter().enumerate().skip(1) {
                let s = e.m.constant_u32(j as u32 * bits);
                let shifted = e.op(Op::ShiftLeftLogical, u, &[*part, s]);
                word = e.op(Op::BitwiseOr, u, &[word, shifted]);
            }
            word
        })
        .collect()
}
