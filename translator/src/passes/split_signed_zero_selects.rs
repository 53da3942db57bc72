//! `SplitSignedZeroSelects`: an `OpSelect` between constants that pairs `1.0` with `-0.0` or
//! `-1.0` with `+0.0` (in some component, as floats of the select's width) -> a select of the
//! constants' magnitude bits or'd with a select of their sign bits, on unsigned integers of
//! that width (bitcast back where the select is of floats).
//!
//! lavapipe before Mesa 26 folds a select between `1.0` and `0.0` to a conversion of the
//! condition (and one between `-1.0` and `-0.0` to its negation), matching zeros of either
//! sign to the pattern's, and does so for integer selects of those bits too: `c ? -0.0 : 1.0`
//! gives `+0.0`, `c ? -1.0 : 0.0` gives `-0.0` (and `c ? 0xbf800000 : 0` gives `0x80000000`),
//! although the driver advertises `SignedZeroInfNanPreserve`. OpenCL C writes such selects to
//! pick a sign for `copysign` or a product; clang turns a select of floats whose bits are
//! stored into one of integers. Neither half of the split matches: the magnitudes are
//! non-negative, so their pairs are the pattern's own zero, and the signs are `-0.0` and
//! `+0.0`, never `±1.0`.
//!
//! Float selects are rewritten only at widths an entry point declares
//! `SignedZeroInfNanPreserve` for (elsewhere the driver may drop the sign of zero anyway);
//! integer selects at every width, since there the folding changes the value.
//!
//! Preconditions: none (constants are `OpConstant`, `OpConstantNull` and `OpConstantComposite`
//! of them, of 16-, 32- and 64-bit components). Applies where the target's workarounds ask
//! for it.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::zero_sums_from_select::preserved_widths;
use crate::profile::DeviceCaps;
use spirv::{Op, Word};
use std::collections::{HashMap, HashSet};

pub struct SplitSignedZeroSelects;

impl Pass for SplitSignedZeroSelects {
    fn name(&self) -> &'static str {
        "split-signed-zero-selects"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.folds_signed_zero_selects
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let finder = Finder::new(module);
        if first(module, &finder).is_none() {
            return Ok(outcome);
        }
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    let (Some(split), Some(ty), Some(result)) = (finder.split(&inst), inst.result_type, inst.result_id) else {
                        out.push(inst);
                        continue;
                    };
                    let w = split.width;
                    let scalar = module.type_int(w, false);
                    let int_ty = if split.count > 1 { module.type_vector(scalar, split.count) } else { scalar };
                    let sign = 1u64 << (w - 1);
                    let constant = |module: &mut Module, bits: &[u64], mask: u64| -> Word {
                        let parts: Vec<Word> = bits.iter().map(|v| module.constant_int(scalar, w, false, v & mask)).collect();
                        if split.count > 1 {
                            module.constant_composite(int_ty, &parts)
                        } else {
                            parts[0]
                        }
                    };
                    let magnitude = sign - 1;
                    let (ma, mb) = (constant(module, &split.a, magnitude), constant(module, &split.b, magnitude));
                    let (sa, sb) = (constant(module, &split.a, sign), constant(module, &split.b, sign));
                    let [m, s] = [module.alloc_id(), module.alloc_id()];
                    let origin = inst.origin;
                    out.push(Inst::new(Op::Select, Some(int_ty), Some(m), vec![Operand::Id(split.condition), Operand::Id(ma), Operand::Id(mb)]).from_origin(origin));
                    out.push(Inst::new(Op::Select, Some(int_ty), Some(s), vec![Operand::Id(split.condition), Operand::Id(sa), Operand::Id(sb)]).from_origin(origin));
                    if int_ty == ty {
                        out.push(Inst::new(Op::BitwiseOr, Some(ty), Some(result), vec![Operand::Id(m), Operand::Id(s)]).from_origin(origin));
                    } else {
                        let bits = module.alloc_id();
                        out.push(Inst::new(Op::BitwiseOr, Some(int_ty), Some(bits), vec![Operand::Id(m), Operand::Id(s)]).from_origin(origin));
                        out.push(Inst::new(Op::Bitcast, Some(ty), Some(result), vec![Operand::Id(bits)]).from_origin(origin));
                    }
                    outcome.count(Op::Select as u32);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}

/// The first select this pass rewrites, if any: the runtime translates such modules for
/// drivers with this quirk.
pub fn first_user(module: &Module) -> Option<Word> {
    first(module, &Finder::new(module))
}

fn first(module: &Module, finder: &Finder) -> Option<Word> {
    module.functions.iter().flat_map(|f| f.insts()).find(|i| finder.split(i).is_some()).and_then(|i| i.result_id)
}

/// A select to split: its condition, its values' component bits, their width and count.
struct Split {
    condition: Word,
    a: Vec<u64>,
    b: Vec<u64>,
    width: u32,
    count: u32,
}

/// What decides which selects are split.
struct Finder {
    types: Types,
    preserved: HashSet<u32>,
    /// The component bits of each scalar or vector constant.
    constants: HashMap<Word, Vec<u64>>,
}

impl Finder {
    fn new(module: &Module) -> Finder {
        let types = Types::new(module);
        let mut constants: HashMap<Word, Vec<u64>> = HashMap::new();
        for g in module.globals() {
            let (Some(id), Some(ty)) = (g.result_id, g.result_type) else { continue };
            let bits = match g.op() {
                Some(Op::Constant) => types.constants.get(&id).map(|words| vec![words.iter().rev().fold(0u64, |v, w| (v << 32) | u64::from(*w))]),
                Some(Op::ConstantNull) => Some(vec![0; types.vector(ty).map_or(1, |(_, n)| n) as usize]),
                Some(Op::ConstantComposite) if types.vector(ty).is_some() => {
                    g.operands.iter().map(|o| o.id().and_then(|c| constants.get(&c)).and_then(|v| v.first().copied().filter(|_| v.len() == 1))).collect()
                }
                _ => None,
            };
            if let Some(bits) = bits {
                constants.insert(id, bits);
            }
        }
        Finder { types, preserved: preserved_widths(module), constants }
    }

    /// How `inst` is split, where it is a select this pass rewrites.
    fn split(&self, inst: &Inst) -> Option<Split> {
        if !inst.is(Op::Select) {
            return None;
        }
        let ty = inst.result_type?;
        let (component, count) = self.types.vector(ty).unwrap_or((ty, 1));
        let width = match (self.types.int(component), self.types.float(component)) {
            (Some((w, _)), _) => w,
            (None, Some((w, None))) if self.preserved.contains(&w) => w,
            _ => return None,
        };
        if !matches!(width, 16 | 32 | 64) {
            return None;
        }
        let [condition, a, b] = inst.ids::<3>().ok()?;
        let (a, b) = (self.constants.get(&a)?, self.constants.get(&b)?);
        if a.len() != count as usize || b.len() != count as usize {
            return None;
        }
        let (one, sign) = match width {
            16 => (u64::from(half::f16::ONE.to_bits()), 1u64 << 15),
            32 => (u64::from(1f32.to_bits()), 1u64 << 31),
            _ => (1f64.to_bits(), 1u64 << 63),
        };
        let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
        // A zero of the other sign beside `±1.0`.
        let bad = |x: u64, y: u64| [(one, sign), (one | sign, 0)].iter().any(|&(p, q)| (x & mask, y & mask) == (p, q) || (y & mask, x & mask) == (p, q));
        a.iter().zip(b).any(|(&x, &y)| bad(x, y)).then(|| Split { condition, a: a.clone(), b: b.clone(), width, count })
    }
}
