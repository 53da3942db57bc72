//! Atomics on 8- and 16-bit data held in 32-bit words: a compare-and-swap loop on the word.
//!
//! While the blocks are rewritten, an atomic on a narrow element becomes the address of its
//! word, its bit position, a placeholder for the word's old value and the old element read from
//! that value ([`Legalize::narrow_atomic`]); the placeholders then become loops
//! ([`build_loops`]) that read the word, compute the element's new value (rounded, wrapped or
//! saturated as the narrow type gives), put it into the word and retry until
//! `OpAtomicCompareExchange` finds the word unchanged. Neighbouring elements in the word are
//! left as other invocations make them. An `OpAtomicLoad` needs no loop.

use super::codec::{low_mask, Emit};
use super::{Legalize, Narrow};
use crate::error::Result;
use crate::ir::builder::Builder;
use crate::ir::{Inst, Module, Operand, Origin};
use spirv::{GlslStd450Op as GLOp, MemorySemantics, Op, StorageClass, Word};

/// What an atomic does to the element.
#[derive(Clone, Copy, Debug)]
enum Update {
    /// The new value is `value` (`OpAtomicExchange`, `OpAtomicStore`).
    Exchange(Word),
    /// `value` where the old value equals `comparator`.
    CompareExchange { value: Word, comparator: Word },
    /// `op(old, value)`: an atomic's arithmetic instruction.
    Apply(Op, Word),
}

/// A compare-and-swap loop to build at the `OpUndef` placeholder `old`.
pub(super) struct PendingAtomic {
    /// The placeholder: the word's value before the atomic took effect.
    old: Word,
    word_ptr: Word,
    scope: Word,
    equal: Word,
    unequal: Word,
    /// Bit position of the element in the word.
    shift: Word,
    kind: Narrow,
    /// The element's held (widened) type.
    held: Word,
    update: Update,
    origin: Option<Origin>,
}

/// The semantics of a failed compare-and-swap given those of the atomic: its release part
/// dropped (a failed exchange writes nothing); where no ordering is left (a release-only
/// atomic), relaxed with no storage classes, which Vulkan requires of relaxed semantics.
pub(crate) fn unequal_semantics(m: &mut Module, types: &crate::analysis::Types, semantics: Word) -> Word {
    let value = types.const_u32(semantics).map_or(0, |s| {
        let mut s = MemorySemantics::from_bits_truncate(s);
        if s.intersects(MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::SEQUENTIALLY_CONSISTENT) {
            s.remove(MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::SEQUENTIALLY_CONSISTENT);
            s.insert(MemorySemantics::ACQUIRE);
        }
        s.remove(MemorySemantics::RELEASE | MemorySemantics::MAKE_AVAILABLE);
        if !s.contains(MemorySemantics::ACQUIRE) {
            s &= MemorySemantics::VOLATILE;
        }
        s.bits()
    });
    m.constant_u32(value)
}

impl Legalize<'_> {
    /// Rewrites atomic `inst` on narrow element `p` of `kind` (phase one: everything but the
    /// loop, which [`build_loops`] adds at the placeholder).
    pub(super) fn narrow_atomic(&mut self, e: &mut Emit<'_>, inst: &Inst, p: super::blocks::Ptr, kind: Narrow) -> Result<()> {
        let op = inst.op().unwrap_or(Op::Nop);
        if matches!(p.view.class, StorageClass::Uniform | StorageClass::PushConstant) {
            return Err(self.unsupported(e.m, inst, "an atomic on a uniform or push-constant block".into()));
        }
        let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
        let (Some(&scope), Some(&semantics)) = (ids.get(1), ids.get(2)) else {
            return Err(self.unsupported(e.m, inst, "an atomic without scope and semantics".into()));
        };
        let held = self.widen(e.m, p.pointee)?;
        let argument = |k: usize| ids.get(k).copied();
        let update = match op {
            Op::AtomicLoad => None,
            Op::AtomicStore | Op::AtomicExchange => argument(3).map(Update::Exchange),
            Op::AtomicCompareExchange => argument(4).zip(argument(5)).map(|(value, comparator)| Update::CompareExchange { value, comparator }),
            Op::AtomicIIncrement | Op::AtomicIDecrement => {
                let one = e.m.constant_u32(1);
                let one = if self.types.int(p.pointee).is_some_and(|(_, s)| s) { e.op(Op::Bitcast, held, &[one]) } else { one };
                Some(Update::Apply(if op == Op::AtomicIIncrement { Op::IAdd } else { Op::ISub }, one))
            }
            Op::AtomicIAdd => argument(3).map(|v| Update::Apply(Op::IAdd, v)),
            Op::AtomicISub => argument(3).map(|v| Update::Apply(Op::ISub, v)),
            Op::AtomicAnd => argument(3).map(|v| Update::Apply(Op::BitwiseAnd, v)),
            Op::AtomicOr => argument(3).map(|v| Update::Apply(Op::BitwiseOr, v)),
            Op::AtomicXor => argument(3).map(|v| Update::Apply(Op::BitwiseXor, v)),
            Op::AtomicSMin | Op::AtomicSMax | Op::AtomicUMin | Op::AtomicUMax | Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT => argument(3).map(|v| Update::Apply(op, v)),
            _ => return Err(self.unsupported(e.m, inst, format!("{} on 8- or 16-bit data", inst.name()))),
        };
        let word_ptr = self.word_ptr(e, p)?;
        let shift = self.bit_shift(e, p.offset);
        let u = e.uint(1);
        let old = match update {
            None => e.op(Op::AtomicLoad, u, &[word_ptr, scope, semantics]),
            Some(update) => {
                let unequal = if op == Op::AtomicCompareExchange { ids[3] } else { unequal_semantics(e.m, &self.types, semantics) };
                let old = e.m.alloc_id();
                e.emit_as(Some(old), Op::Undef, u, vec![]);
                self.pending.push(PendingAtomic { old, word_ptr, scope, equal: semantics, unequal, shift, kind, held, update, origin: inst.origin });
                old
            }
        };
        if let Some(result) = inst.result_id {
            let shifted = e.op(Op::ShiftRightLogical, u, &[old, shift]);
            let bits = e.mask(u, 1, shifted, kind.bits());
            let v = e.decode(kind, held, bits);
            e.coerce_into(result, held, held, v);
        }
        Ok(())
    }
}

/// The element's new bits (low bits of a u32, the rest clear) from its old `bits`.
fn new_bits(e: &mut Emit<'_>, a: &PendingAtomic, bits: Word) -> Word {
    let u = e.uint(1);
    let n = a.kind.bits();
    let encode = |e: &mut Emit<'_>, v: Word| {
        let b = e.encode(a.kind, a.held, v);
        e.mask(u, 1, b, n)
    };
    match a.update {
        Update::Exchange(v) => encode(e, v),
        Update::CompareExchange { value, comparator } => {
            let want = encode(e, comparator);
            let boolean = e.boolean(1);
            let same = e.op(Op::IEqual, boolean, &[bits, want]);
            let new = encode(e, value);
            e.op(Op::Select, u, &[same, new, bits])
        }
        Update::Apply(op, v) => {
            let old = e.decode(a.kind, a.held, bits);
            let r = match op {
                Op::AtomicFAddEXT => {
                    let sum = e.op(Op::FAdd, a.held, &[old, v]);
                    e.round(a.kind, 1, sum, None)
                }
                Op::AtomicFMinEXT => e.ext(a.held, GLOp::FMin, &[old, v]),
                Op::AtomicFMaxEXT => e.ext(a.held, GLOp::FMax, &[old, v]),
                Op::AtomicUMin => e.ext(a.held, GLOp::UMin, &[old, v]),
                Op::AtomicUMax => e.ext(a.held, GLOp::UMax, &[old, v]),
                Op::AtomicSMin | Op::AtomicSMax => {
                    let (x, y) = (e.sext(a.held, 1, old, n), e.sext(a.held, 1, v, n));
                    e.ext(a.held, if op == Op::AtomicSMin { GLOp::SMin } else { GLOp::SMax }, &[x, y])
                }
                _ => e.op(op, a.held, &[old, v]),
            };
            encode(e, r)
        }
    }
}

/// Replaces every placeholder with its compare-and-swap loop.
pub(super) fn build_loops(m: &mut Module, pending: Vec<PendingAtomic>, glsl: Word) {
    for a in pending {
        let Some(cursor) = m.cursor_of(a.old) else { continue };
        m.functions[cursor.function].blocks[cursor.block].insts.remove(cursor.index);
        let mut b = Builder::new(m, cursor).with_origin(a.origin);
        b.compare_exchange_loop(a.old, a.word_ptr, a.scope, (a.equal, a.unequal), |b, word| {
            let mut e = Emit { m: &mut *b.module, out: Vec::new(), origin: a.origin, glsl };
            let u = e.uint(1);
            let shifted = e.op(Op::ShiftRightLogical, u, &[word, a.shift]);
            let bits = e.mask(u, 1, shifted, a.kind.bits());
            let new = new_bits(&mut e, &a, bits);
            let lane = e.m.constant_u32(low_mask(a.kind.bits()));
            let lane = e.op(Op::ShiftLeftLogical, u, &[lane, a.shift]);
            let keep = e.op(Op::Not, u, &[lane]);
            let kept = e.op(Op::BitwiseAnd, u, &[word, keep]);
            let placed = e.op(Op::ShiftLeftLogical, u, &[new, a.shift]);
            let next = e.op(Op::BitwiseOr, u, &[kept, placed]);
            for inst in std::mem::take(&mut e.out) {
                b.insert(inst);
            }
            next
        });
    }
}
