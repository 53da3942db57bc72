//! Values as 32-bit words, for moving types a device's sub-group operations or a workgroup
//! array of `uint` do not carry: booleans as 0 or 1, 8- and 16-bit numbers zero-extended, 64-bit
//! numbers as two words, vectors component by component.

use crate::analysis::Types;
use crate::ir::builder::Builder;
use crate::ir::Module;
use spirv::{Op, Word};

/// How a scalar travels as 32-bit words.
#[derive(Clone, Copy)]
pub(crate) enum Packing {
    /// 0 or 1.
    Bool,
    /// A 32-bit number, bit-cast unless it is `uint` (`Some(type)` then).
    Word(Option<Word>),
    /// An 8- or 16-bit number: as the unsigned integer of its width (bit-cast from its type
    /// where that differs), zero-extended.
    Narrow { ty: Word, unsigned: Word },
    /// A 64-bit number, bit-cast to two words.
    Wide { ty: Word, pair: Word },
}

impl Packing {
    pub(crate) fn of(module: &mut Module, types: &Types, comp: Word) -> Option<Packing> {
        let uint = module.type_int(32, false);
        if types.defs.get(&comp).is_some_and(|d| d.is(Op::TypeBool)) {
            return Some(Packing::Bool);
        }
        Some(match types.scalar_width(comp)? {
            32 => Packing::Word((comp != uint).then_some(comp)),
            w @ (8 | 16) => Packing::Narrow { ty: comp, unsigned: module.type_int(w, false) },
            64 => Packing::Wide { ty: comp, pair: module.type_vector(uint, 2) },
            _ => return None,
        })
    }

    pub(crate) fn words(self) -> u32 {
        if matches!(self, Packing::Wide { .. }) {
            2
        } else {
            1
        }
    }

    pub(crate) fn pack(self, b: &mut Builder<'_>, x: Word, into: &mut Vec<Word>) {
        let uint = b.module.type_int(32, false);
        match self {
            Packing::Bool => {
                let one = b.module.constant_u32(1);
                let zero = b.module.constant_u32(0);
                into.push(b.select(uint, x, one, zero));
            }
            Packing::Word(None) => into.push(x),
            Packing::Word(Some(_)) => into.push(b.bitcast(uint, x)),
            Packing::Narrow { ty, unsigned } => {
                let bits = if ty == unsigned { x } else { b.bitcast(unsigned, x) };
                into.push(b.op(Op::UConvert, uint, &[bits]));
            }
            Packing::Wide { pair, .. } => {
                let v = b.bitcast(pair, x);
                into.push(b.composite_extract(uint, v, 0));
                into.push(b.composite_extract(uint, v, 1));
            }
        }
    }

    pub(crate) fn unpack(self, b: &mut Builder<'_>, words: &[Word]) -> Word {
        match self {
            Packing::Bool => {
                let boolean = b.module.type_bool();
                let zero = b.module.constant_u32(0);
                b.op(Op::INotEqual, boolean, &[words[0], zero])
            }
            Packing::Word(None) => words[0],
            Packing::Word(Some(ty)) => b.bitcast(ty, words[0]),
            Packing::Narrow { ty, unsigned } => {
                let bits = b.op(Op::UConvert, unsigned, &[words[0]]);
                if ty == unsigned {
                    bits
                } else {
                    b.bitcast(ty, bits)
                }
            }
            Packing::Wide { ty, pair } => {
                let v = b.op(Op::CompositeConstruct, pair, &[words[0], words[1]]);
                b.bitcast(ty, v)
            }
        }
    }
}

/// (component packing, component count) of a value of type `ty` that travels as words:
/// booleans and 8- to 64-bit numbers, and vectors of them.
pub(crate) fn packing_of(module: &mut Module, types: &Types, ty: Word) -> Option<(Packing, u32)> {
    let (comp, n) = types.vector(ty).unwrap_or((ty, 1));
    Some((Packing::of(module, types, comp)?, n))
}

/// `x` (of type `ty`, which [`packing_of`] carries) as its words.
pub(crate) fn to_words(b: &mut Builder<'_>, types: &Types, ty: Word, x: Word) -> Option<Vec<Word>> {
    let (packing, n) = packing_of(b.module, types, ty)?;
    let mut words = Vec::new();
    for k in 0..n {
        let comp = if n == 1 { x } else { b.composite_extract(types.vector(ty).map_or(ty, |v| v.0), x, k) };
        packing.pack(b, comp, &mut words);
    }
    Some(words)
}

/// The value of type `ty` whose words [`to_words`] gave.
pub(crate) fn from_words(b: &mut Builder<'_>, types: &Types, ty: Word, words: &[Word]) -> Option<Word> {
    let (packing, n) = packing_of(b.module, types, ty)?;
    join_words(b, (packing, n), ty, words)
}

/// [`from_words`] with the packing [`packing_of`] gave for `ty`.
pub(crate) fn join_words(b: &mut Builder<'_>, (packing, n): (Packing, u32), ty: Word, words: &[Word]) -> Option<Word> {
    let per = packing.words() as usize;
    if words.len() != per * n as usize {
        return None;
    }
    let parts: Vec<Word> = words.chunks(per).map(|w| packing.unpack(b, w)).collect();
    Some(if n == 1 { parts[0] } else { b.op(Op::CompositeConstruct, ty, &parts) })
}
