//! `WidenArbitraryIntegers`: integers of widths other than 8, 16, 32 and 64
//! (SPV_INTEL_arbitrary_precision_integers) become 32-bit integers, or 64-bit ones above 32 bits.
//! clang's optimizer narrows index arithmetic to such widths (`i % 64` becomes an `i6`), and
//! llvm-spirv keeps them where the extension is enabled, as DPC++ enables it.
//!
//! Rewrite: an `N`-bit value is held zero-extended in its wider type: bits `N` and up are 0.
//! Instructions whose results can carry bits past `N` (add, subtract, multiply, shift left,
//! not, negate, conversions to a narrower or a signed wider type, float-to-integer conversions,
//! signed bit-field extracts) are followed by an and with `2^N - 1`; zero counts are corrected
//! for the width; those that read a value as
//! signed (signed division, remainder, modulo, comparison, arithmetic shift right, conversions of
//! signed values, `SMin`-style extended instructions, access-chain indices) sign-extend their
//! operands from bit `N - 1` first (`(x << (W - N)) >> (W - N)`, arithmetically). Bit reversal
//! shifts its result down by `W - N`. Constants, spec constants and `OpSwitch` literals keep their
//! low `N` bits. Values that only move (phis, selects, composites, loads and stores of function
//! or private variables, calls) and operations exact on zero-extended values (and, or, xor,
//! logical shift right, unsigned division and comparison, bit counts, unsigned extended
//! instructions) keep their instructions; then each odd type becomes its wider one, types that
//! became identical merge and wrap decorations on widened results go (the requirement step then
//! drops the capability and its extension).
//!
//! Refused by name (opcode, word offset, width): such integers in memory other than function or
//! private variables (their layout there is the producer's), and instructions not listed above
//! on them (bitcasts, atomics, carries, extended multiplies, group arithmetic, spec-constant
//! operations). Widths past 64 bits are refused when the module is read.
//!
//! Preconditions: none. Applies to every target (no Vulkan device has the capability); changes
//! only modules with such integers. Runs before every pass that reads integer widths.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand, Origin};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{GlslStd450Op as GL, Op, OpenclStd100Op as CL, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct WidenArbitraryIntegers;

impl Pass for WidenArbitraryIntegers {
    fn name(&self) -> &'static str {
        "widen-arbitrary-integers"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let odd: HashMap<Word, u32> =
            module.globals().iter().filter(|g| g.is(Op::TypeInt)).filter_map(|g| Some((g.result_id?, g.word_opt(0)?))).filter(|(_, w)| !matches!(w, 8 | 16 | 32 | 64)).collect();
        if odd.is_empty() {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let target = cx.target.name.clone();
        let widths = Widths { odd: &odd, types: &types };
        check_memory(module, &widths, &target)?;
        widen_constants(module, &widths, &target, &mut outcome)?;
        let mut widened = HashSet::new();
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    if let (Some(r), Some(_)) = (inst.result_id, inst.result_type.and_then(|t| widths.of_type(t))) {
                        widened.insert(r);
                    }
                    rewrite(module, &widths, inst, &mut out, &target, &mut outcome)?;
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        module.drop_wrap_decorations(|id| widened.contains(&id));
        for g in module.globals_mut().iter_mut() {
            if let Some(w) = g.result_id.and_then(|r| odd.get(&r)) {
                g.operands[0] = Operand::Literal(wide(*w));
            }
        }
        module.merge_duplicate_types();
        outcome.notes.push(format!("integers of widths {:?} held in 32 or 64 bits", odd.values().copied().collect::<std::collections::BTreeSet<_>>()));
        outcome.changed = true;
        Ok(outcome)
    }
}

/// The width an `n`-bit integer is held in.
fn wide(n: u32) -> u32 {
    if n <= 32 {
        32
    } else {
        64
    }
}

/// Literal words of `value` at width `w` (32 or 64).
fn literal(w: u32, value: u64) -> Vec<Operand> {
    if w > 32 {
        vec![Operand::Literal(value as u32), Operand::Literal((value >> 32) as u32)]
    } else {
        vec![Operand::Literal(value as u32)]
    }
}

/// `2^n - 1`.
fn mask_of(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

struct Widths<'a> {
    odd: &'a HashMap<Word, u32>,
    types: &'a Types,
}

impl Widths<'_> {
    /// (scalar odd type, width, vector size) of an odd integer scalar or vector type.
    fn of_type(&self, ty: Word) -> Option<(Word, u32, u32)> {
        let (c, n) = self.types.vector(ty).unwrap_or((ty, 1));
        self.odd.get(&c).map(|w| (c, *w, n))
    }

    fn of_value(&self, v: Word) -> Option<(Word, u32, u32)> {
        self.of_type(self.types.type_of(v)?)
    }

    /// The width of an odd integer type `ty` holds anywhere (members, elements, pointees).
    fn held(&self, ty: Word, seen: &mut HashSet<Word>) -> Option<u32> {
        if let Some(n) = self.odd.get(&ty) {
            return Some(*n);
        }
        if !seen.insert(ty) {
            return None;
        }
        let def = self.types.defs.get(&ty)?;
        let parts: Vec<Word> = match def.op() {
            Some(Op::TypeStruct) => def.operands.iter().filter_map(Operand::id).collect(),
            Some(Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector | Op::TypeMatrix | Op::TypeCooperativeMatrixKHR | Op::TypeCooperativeMatrixNV) => {
                def.operands.first().and_then(Operand::id).into_iter().collect()
            }
            Some(Op::TypePointer) => def.operands.get(1).and_then(Operand::id).into_iter().collect(),
            _ => vec![],
        };
        parts.into_iter().find_map(|p| self.held(p, seen))
    }
}

fn unsupported(module: &Module, inst: &Inst, width: u32, target: &str, what: &str) -> Error {
    Error::Unsupported { site: module.site(inst), target: target.to_string(), missing: format!("{width}-bit integers (SPV_INTEL_arbitrary_precision_integers) {what}") }
}

/// Pointers to odd integers in memory whose layout a producer defines are refused; so are matrix
/// types of them (no device lists such components).
fn check_memory(module: &Module, widths: &Widths<'_>, target: &str) -> Result<()> {
    for g in module.globals() {
        let Some(width) = g.result_id.and_then(|id| widths.held(id, &mut HashSet::new())) else { continue };
        match g.op() {
            Some(Op::TypePointer) => {
                let class = g.word_opt(0).unwrap_or(0);
                if class != StorageClass::Function as u32 && class != StorageClass::Private as u32 {
                    let class = StorageClass::from_u32(class).map_or_else(|| format!("storage class {class}"), |c| format!("{c:?}"));
                    return Err(unsupported(module, g, width, target, &format!("in {class} memory (their layout there is the producer's)")));
                }
            }
            Some(Op::TypeCooperativeMatrixKHR | Op::TypeCooperativeMatrixNV) => return Err(unsupported(module, g, width, target, "as matrix components")),
            _ => {}
        }
    }
    Ok(())
}

/// Constants and spec constants keep their low `N` bits; spec-constant operations on odd
/// integers are refused.
fn widen_constants(module: &mut Module, widths: &Widths<'_>, target: &str, outcome: &mut Outcome) -> Result<()> {
    for g in module.globals() {
        let odd_operand = g.operands.iter().skip(1).filter_map(Operand::id).find_map(|v| widths.of_value(v));
        if let (true, Some((_, n, _))) = (g.is(Op::SpecConstantOp), g.result_type.and_then(|t| widths.of_type(t)).or(odd_operand)) {
            return Err(unsupported(module, g, n, target, "in a spec-constant operation"));
        }
    }
    for g in module.globals_mut().iter_mut() {
        if !matches!(g.op(), Some(Op::Constant | Op::SpecConstant)) {
            continue;
        }
        let Some((_, n, _)) = g.result_type.and_then(|t| widths.of_type(t)) else { continue };
        let value = g.operands.iter().filter_map(Operand::word).enumerate().fold(0u64, |v, (k, w)| v | (u64::from(w) << (32 * k.min(1))));
        g.operands = literal(wide(n), value & mask_of(n));
        outcome.count(g.opcode);
    }
    Ok(())
}

/// Appends instructions to a block being rewritten, each with the origin of what it replaces.
struct Emitter<'o> {
    out: &'o mut Vec<Inst>,
    origin: Option<Origin>,
}

impl Emitter<'_> {
    fn emit(&mut self, module: &mut Module, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = module.alloc_id();
        self.out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(self.origin));
        id
    }

    /// Gives the last instruction appended the id of the instruction it replaces.
    fn name_last(&mut self, id: Word) {
        if let Some(last) = self.out.last_mut() {
            last.result_id = Some(id);
        }
    }

    fn op(&mut self, module: &mut Module, op: Op, ty: Word, args: &[Word]) -> Word {
        self.emit(module, op, ty, args.iter().map(|a| Operand::Id(*a)).collect())
    }

    /// A constant of odd integer scalar or vector type `ty` (scalar `scalar`, width `n`) with
    /// every component `value`.
    fn constant(module: &mut Module, ty: Word, (scalar, n, count): (Word, u32, u32), value: u64) -> Word {
        let c = module.intern(Op::Constant, Some(scalar), literal(wide(n), value));
        if count > 1 {
            module.intern(Op::ConstantComposite, Some(ty), vec![Operand::Id(c); count as usize])
        } else {
            c
        }
    }

    /// `v` (of odd type `ty`) with bits `n` and up cleared.
    fn truncate(&mut self, module: &mut Module, ty: Word, shape: (Word, u32, u32), v: Word) -> Word {
        let mask = Emitter::constant(module, ty, shape, mask_of(shape.1));
        self.op(module, Op::BitwiseAnd, ty, &[v, mask])
    }

    /// `v` (of odd type `ty`) sign-extended from bit `n - 1` through its wide type.
    fn sign_extend(&mut self, module: &mut Module, ty: Word, shape: (Word, u32, u32), v: Word) -> Word {
        let by = Emitter::constant(module, ty, shape, u64::from(wide(shape.1) - shape.1));
        let up = self.op(module, Op::ShiftLeftLogical, ty, &[v, by]);
        self.op(module, Op::ShiftRightArithmetic, ty, &[up, by])
    }
}

/// Instructions exact on zero-extended values, or that only move them.
fn exact(op: Op) -> bool {
    matches!(
        op,
        Op::Phi
            | Op::Select
            | Op::CopyObject
            | Op::CompositeConstruct
            | Op::CompositeExtract
            | Op::CompositeInsert
            | Op::VectorShuffle
            | Op::VectorExtractDynamic
            | Op::VectorInsertDynamic
            | Op::Load
            | Op::Store
            | Op::Variable
            | Op::Undef
            | Op::FunctionCall
            | Op::ReturnValue
            | Op::BitwiseAnd
            | Op::BitwiseOr
            | Op::BitwiseXor
            | Op::ShiftRightLogical
            | Op::UDiv
            | Op::UMod
            | Op::IEqual
            | Op::INotEqual
            | Op::ULessThan
            | Op::ULessThanEqual
            | Op::UGreaterThan
            | Op::UGreaterThanEqual
            | Op::ConvertUToF
            | Op::BitFieldUExtract
            | Op::BitFieldInsert
            | Op::BitCount
    )
}

/// Instructions whose results can carry bits past the width: their results are masked.
fn carries_high_bits(op: Op) -> bool {
    matches!(op, Op::IAdd | Op::ISub | Op::IMul | Op::ShiftLeftLogical | Op::Not | Op::SNegate | Op::ConvertFToU | Op::ConvertFToS | Op::BitFieldSExtract)
}

/// Value `v` sign-extended through its wide type where it is odd: a scalar constant as a constant
/// (a struct member's index must stay one), anything else by shifts.
fn as_signed(module: &mut Module, widths: &Widths<'_>, e: &mut Emitter<'_>, v: Word) -> Word {
    let (Some(shape), Some(ty)) = (widths.of_value(v), widths.types.type_of(v)) else { return v };
    let (_, n, _) = shape;
    match widths.types.constants.get(&v) {
        Some(words) => {
            let value = words.iter().enumerate().fold(0u64, |acc, (k, w)| acc | (u64::from(*w) << (32 * k.min(1))));
            let extended = ((value << (64 - n)) as i64 >> (64 - n)) as u64;
            Emitter::constant(module, ty, shape, extended & mask_of(wide(n)))
        }
        None => e.sign_extend(module, ty, shape, v),
    }
}

/// Rewrites one instruction (see the module comment), appending the result to `out`.
fn rewrite(module: &mut Module, widths: &Widths<'_>, mut inst: Inst, out: &mut Vec<Inst>, target: &str, outcome: &mut Outcome) -> Result<()> {
    let Some(op) = inst.op() else {
        out.push(inst);
        return Ok(());
    };
    // Memory of them seen as other types would see the wide layout, not the producer's.
    if matches!(op, Op::Bitcast | Op::CopyMemorySized) {
        let pointee = |v: &Word| widths.types.type_of(*v).filter(|t| widths.types.pointer(*t).is_some()).and_then(|t| widths.held(t, &mut HashSet::new()));
        if let Some(n) = inst
            .operands
            .iter()
            .filter_map(Operand::id)
            .find_map(|v| pointee(&v))
            .or_else(|| inst.result_type.filter(|t| widths.types.pointer(*t).is_some()).and_then(|t| widths.held(t, &mut HashSet::new())))
        {
            return Err(unsupported(module, &inst, n, target, &format!("in memory reached through {} (their layout there is the producer's)", inst.name())));
        }
    }
    let result = inst.result_type.and_then(|t| widths.of_type(t));
    let operand_ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
    let odd_operand = operand_ids.iter().find_map(|v| widths.of_value(*v));
    let Some((_, n, _)) = result.or(odd_operand) else {
        out.push(inst);
        return Ok(());
    };
    let (ty, id, origin) = (inst.result_type.unwrap_or_default(), inst.result_id.unwrap_or_default(), inst.origin);
    let mut e = Emitter { out, origin };
    // Sign-extends the id operands at `positions` that are odd.
    // Sign-extends the id operands at `positions` that are odd.
    let sign_extend_operands = |module: &mut Module, inst: &mut Inst, e: &mut Emitter<'_>, positions: &[usize]| {
        for &k in positions {
            if let Some(v) = inst.operands.get(k).and_then(Operand::id) {
                inst.operands[k] = Operand::Id(as_signed(module, widths, e, v));
            }
        }
    };
    // Emits `inst` under a fresh id, then `finish` on its value under the original id.
    let then = |module: &mut Module, mut inst: Inst, e: &mut Emitter<'_>, finish: &dyn Fn(&mut Module, &mut Emitter<'_>, Word) -> Word| {
        let tmp = module.alloc_id();
        inst.result_id = Some(tmp);
        e.out.push(inst);
        finish(module, e, tmp);
        e.name_last(id);
    };
    let truncated = |module: &mut Module, e: &mut Emitter<'_>, v: Word| match result {
        Some(shape) => e.truncate(module, ty, shape, v),
        None => v,
    };
    match op {
        _ if exact(op) => e.out.push(inst),
        // An odd operand where the result is not odd: a shift amount, a bit-field offset or
        // count (exact).
        _ if carries_high_bits(op) && result.is_none() => e.out.push(inst),
        _ if carries_high_bits(op) => {
            then(module, inst, &mut e, &truncated);
            outcome.count(op as u32);
        }
        Op::SDiv | Op::SRem | Op::SMod => {
            sign_extend_operands(module, &mut inst, &mut e, &[0, 1]);
            then(module, inst, &mut e, &truncated);
            outcome.count(op as u32);
        }
        Op::ShiftRightArithmetic => {
            sign_extend_operands(module, &mut inst, &mut e, &[0]);
            then(module, inst, &mut e, &truncated);
            outcome.count(op as u32);
        }
        Op::SLessThan | Op::SLessThanEqual | Op::SGreaterThan | Op::SGreaterThanEqual | Op::ConvertSToF => {
            sign_extend_operands(module, &mut inst, &mut e, &[0, 1]);
            e.out.push(inst);
            outcome.count(op as u32);
        }
        Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
            // Indices are signed.
            let positions: Vec<usize> = (1..inst.operands.len()).collect();
            sign_extend_operands(module, &mut inst, &mut e, &positions);
            e.out.push(inst);
            outcome.count(op as u32);
        }
        Op::BitReverse => {
            let Some(shape) = result else { return Err(unsupported(module, &inst, n, target, "reversed into a wider type")) };
            then(module, inst, &mut e, &|module: &mut Module, e: &mut Emitter<'_>, v: Word| {
                let by = Emitter::constant(module, ty, shape, u64::from(wide(shape.1) - shape.1));
                e.op(module, Op::ShiftRightLogical, ty, &[v, by])
            });
            outcome.count(op as u32);
        }
        Op::UConvert | Op::SConvert => {
            convert(module, widths, &inst, &mut e)?;
            outcome.count(op as u32);
        }
        Op::Switch => {
            let selector = inst.operands.first().and_then(Operand::id).and_then(|v| widths.of_value(v));
            if let Some((_, n, _)) = selector {
                let step = if n > 32 { 3 } else { 2 };
                let high = if n > 32 { 1 } else { 0 };
                let keep = if n > 32 { mask_of(n - 32) } else { mask_of(n) } as u32;
                for case in inst.operands[2..].chunks_mut(step) {
                    if let Some(Operand::Literal(w)) = case.get_mut(high) {
                        *w &= keep;
                    }
                }
                outcome.count(op as u32);
            }
            e.out.push(inst);
        }
        Op::ExtInst => {
            extended(module, widths, inst, &mut e, target, result, n)?;
            outcome.count(op as u32);
        }
        _ => return Err(unsupported(module, &inst, n, target, &format!("as operands or results of {}", inst.name()))),
    }
    Ok(())
}

/// `OpUConvert`/`OpSConvert` from or to an odd width: sign-extend an odd source the conversion
/// extends as signed, convert between the wide types (a copy or bitcast where they are the
/// same width), clear the high bits of an odd result that may have them.
fn convert(module: &mut Module, widths: &Widths<'_>, inst: &Inst, e: &mut Emitter<'_>) -> Result<()> {
    let (ty, id, source) = (inst.ty()?, inst.result()?, inst.id(0)?);
    let types = widths.types;
    let width = |t: Word| widths.of_type(t).map(|s| s.1).or_else(|| types.int(types.vector(t).map_or(t, |v| v.0)).map(|i| i.0));
    let source_ty = types.type_of(source).ok_or_else(|| inst.malformed("converts a value of unknown type".into()))?;
    let (Some(s), Some(d)) = (width(source_ty), width(ty)) else { return Err(inst.malformed("converts a non-integer".into())) };
    let signed = inst.is(Op::SConvert);
    let mut v = source;
    if let (true, true, Some(shape)) = (signed, s < d, widths.of_type(source_ty)) {
        v = e.sign_extend(module, source_ty, shape, v);
    }
    let (ws, wd) = (if widths.of_type(source_ty).is_some() { wide(s) } else { s }, if widths.of_type(ty).is_some() { wide(d) } else { d });
    let needs_mask = widths.of_type(ty).filter(|_| d < s || (signed && s < d));
    v = if ws != wd {
        e.op(module, inst.op().unwrap_or(Op::UConvert), ty, &[v])
    } else {
        // Same wide width: the same type once widened if signedness agrees, else a bitcast.
        let same = types.int(types.vector(source_ty).map_or(source_ty, |c| c.0)).map(|i| i.1) == types.int(types.vector(ty).map_or(ty, |c| c.0)).map(|i| i.1);
        e.op(module, if same { Op::CopyObject } else { Op::Bitcast }, ty, &[v])
    };
    if let Some(shape) = needs_mask {
        e.truncate(module, ty, shape, v);
    }
    e.name_last(id);
    Ok(())
}

/// Extended instructions on odd integers: unsigned minimum, maximum, clamp and bit counts are
/// exact; signed minimum, maximum, clamp and absolute value sign-extend their operands and clear
/// the result's high bits; leading and trailing zero counts are corrected for the width. Others
/// are refused.
fn extended(module: &mut Module, widths: &Widths<'_>, mut inst: Inst, e: &mut Emitter<'_>, target: &str, result: Option<(Word, u32, u32)>, n: u32) -> Result<()> {
    let set = inst.operands.first().and_then(Operand::id).and_then(|s| module.ext_inst_imports.iter().find(|i| i.result_id == Some(s))).and_then(|i| i.string(0));
    let number = inst.word_opt(1).unwrap_or(u32::MAX);
    let (exact, signed) = match set.as_deref() {
        Some("OpenCL.std") => {
            let op = CL::from_u32(number);
            (matches!(op, Some(CL::u_min | CL::u_max | CL::u_clamp | CL::popcount)), matches!(op, Some(CL::s_min | CL::s_max | CL::s_clamp | CL::s_abs)))
        }
        Some("GLSL.std.450") => {
            let op = GL::from_u32(number);
            (matches!(op, Some(GL::UMin | GL::UMax | GL::UClamp)), matches!(op, Some(GL::SMin | GL::SMax | GL::SClamp | GL::SAbs)))
        }
        _ => (false, false),
    };
    let (ty, id) = (inst.ty()?, inst.result()?);
    // Leading zeros counted in the wide type include its `W - N` extra ones; trailing zeros of
    // 0 are `N`, not `W`.
    let count = match (set.as_deref(), result) {
        (Some("OpenCL.std"), Some(shape)) => CL::from_u32(number).filter(|op| matches!(op, CL::clz | CL::ctz)).map(|op| (op, shape)),
        _ => None,
    };
    if let Some((op, shape)) = count {
        let tmp = module.alloc_id();
        let set_id = inst.operands.first().and_then(Operand::id).unwrap_or_default();
        inst.result_id = Some(tmp);
        e.out.push(inst);
        if op == CL::clz {
            let extra = Emitter::constant(module, ty, shape, u64::from(wide(shape.1) - shape.1));
            e.op(module, Op::ISub, ty, &[tmp, extra]);
        } else {
            let width = Emitter::constant(module, ty, shape, u64::from(shape.1));
            e.emit(module, Op::ExtInst, ty, vec![Operand::Id(set_id), Operand::Literal(CL::u_min as u32), Operand::Id(tmp), Operand::Id(width)]);
        }
        e.name_last(id);
        return Ok(());
    }
    match (exact, signed, result) {
        (true, ..) => e.out.push(inst),
        (_, true, Some(shape)) => {
            for k in 2..inst.operands.len() {
                if let Some(v) = inst.operands[k].id() {
                    inst.operands[k] = Operand::Id(as_signed(module, widths, e, v));
                }
            }
            let tmp = module.alloc_id();
            inst.result_id = Some(tmp);
            e.out.push(inst);
            e.truncate(module, ty, shape, tmp);
            e.name_last(id);
        }
        _ => {
            let name = format!("as operands or results of {} instruction {number}", set.unwrap_or_else(|| "an extended".into()));
            return Err(unsupported(module, &inst, n, target, &name));
        }
    }
    Ok(())
}
