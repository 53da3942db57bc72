//! `DoubleRoundingFromFloor`: `GLSL.std.450` `RoundEven`, `Round` and `Trunc` of 64-bit
//! floats -> code on `Floor`.
//!
//! lavapipe before Mesa 26 (gallivm on LLVM 15) rounds doubles with the thresholds of floats:
//! `RoundEven`, `Round` and `Trunc` give back any value past 2^23 unchanged
//! (`rint(24229960.55)` is 24229960.55) and `RoundEven` takes ties toward zero
//! (`rint(1.5)` is 1), while `Floor` and `Ceil` are right. Every OpenCL `rint`, `round`,
//! `trunc`, `sinpi` and `tanpi` of doubles, and a shader's `roundEven` of doubles, meets them.
//! With `a = |x|`, `f = Floor(a)` and `d = a - f` (exact):
//!
//! - `Trunc`: `f`;
//! - `RoundEven`: `f + 1` where `d > 1/2`, or `d = 1/2` and `f` is odd;
//! - `Round`: `f + 1` where `d >= 1/2` (half away from zero, one of the directions `Round`
//!   allows);
//!
//! then `x`'s sign: the negated magnitude below zero (so `-0.3` gives `-0`), and zeros as they
//! are. Infinities and NaNs come through unchanged (`d` is NaN, so the comparisons fail, and
//! `f` is `a`).
//!
//! Preconditions: none (scalars and vectors alike). Applies where the target's workarounds ask
//! for it; runs after the passes that emit these instructions (`lower-opencl-std`).

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{GlslStd450Op as G, Op, Word};

pub struct DoubleRoundingFromFloor;

impl Pass for DoubleRoundingFromFloor {
    fn name(&self) -> &'static str {
        "double-rounding-from-floor"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.double_rounding_from_floor
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let Some(glsl) = glsl_import(module) else { return Ok(outcome) };
        let types = Types::new(module);
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    match rounding_of_double(&types, glsl, &inst) {
                        Some((op, x)) => {
                            let mut e = Emitter { module: &mut *module, out: &mut out, origin: inst.origin };
                            e.rewrite(&types, op, inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0), glsl, x);
                            outcome.count(op as u32);
                            outcome.changed = true;
                        }
                        None => out.push(inst),
                    }
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}

/// The first `RoundEven`, `Round` or `Trunc` of doubles in `module`, if any: the runtime
/// translates such modules for drivers with this quirk.
pub fn first_user(module: &Module) -> Option<Word> {
    let glsl = glsl_import(module)?;
    let types = Types::new(module);
    module.functions.iter().flat_map(|f| f.insts()).find(|i| rounding_of_double(&types, glsl, i).is_some()).and_then(|i| i.result_id)
}

fn glsl_import(module: &Module) -> Option<Word> {
    module.ext_inst_imports.iter().find(|i| i.string(0).as_deref() == Some("GLSL.std.450")).and_then(|i| i.result_id)
}

/// `(the instruction, its operand)` where `inst` is one this pass rewrites.
fn rounding_of_double(types: &Types, glsl: Word, inst: &Inst) -> Option<(G, Word)> {
    if !inst.is(Op::ExtInst) || inst.word_opt(0) != Some(glsl) || inst.result_id.is_none() {
        return None;
    }
    let op = match inst.word_opt(1)? {
        n if n == G::RoundEven as u32 => G::RoundEven,
        n if n == G::Round as u32 => G::Round,
        n if n == G::Trunc as u32 => G::Trunc,
        _ => return None,
    };
    let ty = inst.result_type?;
    let scalar = types.vector(ty).map_or(ty, |(s, _)| s);
    let (64, None) = types.float(scalar)? else { return None };
    Some((op, inst.word_opt(2)?))
}

/// Appends instructions to `out`.
struct Emitter<'a> {
    module: &'a mut Module,
    out: &'a mut Vec<Inst>,
    origin: Option<crate::ir::Origin>,
}

impl Emitter<'_> {
    fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.module.alloc_id();
        self.emit_as(op, ty, id, operands);
        id
    }

    fn emit_as(&mut self, op: Op, ty: Word, id: Word, operands: Vec<Operand>) {
        self.out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(self.origin));
    }

    fn op(&mut self, op: Op, ty: Word, args: &[Word]) -> Word {
        self.emit(op, ty, args.iter().map(|a| Operand::Id(*a)).collect())
    }

    fn gl(&mut self, glsl: Word, g: G, ty: Word, x: Word) -> Word {
        self.emit(Op::ExtInst, ty, vec![Operand::Id(glsl), Operand::Literal(g as u32), Operand::Id(x)])
    }

    /// The double `v` as a constant of `ty` (scalar or vector).
    fn splat(&mut self, types: &Types, ty: Word, v: f64) -> Word {
        match types.vector(ty) {
            Some((scalar, n)) => {
                let c = self.module.constant_float(scalar, 64, None, v);
                self.module.constant_composite(ty, &vec![c; n as usize])
            }
            None => self.module.constant_float(ty, 64, None, v),
        }
    }

    /// The rewrite of `op` of `x` into `result` (see the module comment).
    fn rewrite(&mut self, types: &Types, op: G, ty: Word, result: Word, glsl: Word, x: Word) {
        let boolean = self.module.type_bool();
        let bt = match types.vector(ty) {
            Some((_, n)) => self.module.type_vector(boolean, n),
            None => boolean,
        };
        let zero = self.splat(types, ty, 0.0);
        let a = self.gl(glsl, G::FAbs, ty, x);
        let f = self.gl(glsl, G::Floor, ty, a);
        let magnitude = if op == G::Trunc {
            f
        } else {
            let (half, one) = (self.splat(types, ty, 0.5), self.splat(types, ty, 1.0));
            let d = self.op(Op::FSub, ty, &[a, f]);
            let up = if op == G::Round {
                self.op(Op::FOrdGreaterThanEqual, bt, &[d, half])
            } else {
                let above = self.op(Op::FOrdGreaterThan, bt, &[d, half]);
                let tie = self.op(Op::FOrdEqual, bt, &[d, half]);
                let h = self.op(Op::FMul, ty, &[f, half]);
                let whole = self.gl(glsl, G::Floor, ty, h);
                let odd = self.op(Op::FOrdNotEqual, bt, &[h, whole]);
                let odd_tie = self.op(Op::LogicalAnd, bt, &[tie, odd]);
                self.op(Op::LogicalOr, bt, &[above, odd_tie])
            };
            let step = self.op(Op::Select, ty, &[up, one, zero]);
            self.op(Op::FAdd, ty, &[f, step])
        };
        let negative = self.op(Op::FOrdLessThan, bt, &[x, zero]);
        let negated = self.op(Op::FNegate, ty, &[magnitude]);
        let signed = self.op(Op::Select, ty, &[negative, negated, magnitude]);
        let is_zero = self.op(Op::FOrdEqual, bt, &[x, zero]);
        self.emit_as(Op::Select, ty, result, vec![Operand::Id(is_zero), Operand::Id(x), Operand::Id(signed)]);
    }
}
