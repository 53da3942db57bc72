//! `DoubleRoundingFromFloor`: `GLSL.std.450` `RoundEven`, `Round` and `Trunc` and `OpFRem`
//! of 64-bit floats -> code on `Floor`.
//!
//! lavapipe before Mesa 26 (gallivm on LLVM 15) rounds doubles with the thresholds of floats:
//! `RoundEven`, `Round` and `Trunc` give back any value past 2^23 unchanged
//! (`rint(24229960.55)` is 24229960.55) and `RoundEven` takes ties toward zero
//! (`rint(1.5)` is 1), and `OpFRem`, computed through that `Trunc`, is 0 or off by the divisor
//! there (`fmod(-843314856.53, 3.25)` gave 0), while `Floor`, `Ceil` and `OpFMod` are right.
//! Every OpenCL `rint`, `round`, `trunc`, `fmod`, `sinpi` and `tanpi` of doubles, and a
//! shader's `roundEven` or `%` of doubles, meets them. With `a = |x|`, `f = Floor(a)` and
//! `d = a - f` (exact):
//!
//! - `Trunc`: `f`;
//! - `RoundEven`: `f + 1` where `d > 1/2`, or `d = 1/2` and `f` is odd;
//! - `Round`: `f + 1` where `d >= 1/2` (half away from zero, one of the directions `Round`
//!   allows);
//!
//! then `x`'s sign: the negated magnitude below zero (so `-0.3` gives `-0`), and zeros as they
//! are. Infinities and NaNs come through unchanged (`d` is NaN, so the comparisons fail, and
//! `f` is `a`). `OpFRem x y` becomes `x - y Trunc(x / y)` (the formula Vulkan gives its
//! precision by, `NoContraction`) with that `Trunc`, a zero result with `x`'s sign, and `x`
//! where `y` is infinite and `x` finite.
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
        let types = Types::new(module);
        let found = glsl_import(module);
        if !module.functions.iter().flat_map(|f| f.insts()).any(|i| rewrite_of(&types, found, i).is_some()) {
            return Ok(outcome);
        }
        let glsl = module.ext_inst_import("GLSL.std.450");
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    let (Some(rewrite), Some(ty), Some(result)) = (rewrite_of(&types, Some(glsl), &inst), inst.result_type, inst.result_id) else {
                        out.push(inst);
                        continue;
                    };
                    let mut e = Emitter { module: &mut *module, out: &mut out, origin: inst.origin, glsl };
                    match rewrite {
                        Rewrite::Rounding(op, x) => {
                            e.rounding(&types, op, ty, Some(result), x);
                            outcome.count(op as u32);
                        }
                        Rewrite::Remainder(x, y) => {
                            e.remainder(&types, ty, result, x, y);
                            outcome.count(Op::FRem as u32);
                        }
                    }
                    outcome.changed = true;
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}

/// What the pass does to one instruction.
enum Rewrite {
    /// `RoundEven`, `Round` or `Trunc` of the operand.
    Rounding(G, Word),
    /// `OpFRem` of the operands.
    Remainder(Word, Word),
}

/// The first `RoundEven`, `Round`, `Trunc` or `OpFRem` of doubles in `module`, if any: the
/// runtime translates such modules for drivers with this quirk.
pub fn first_user(module: &Module) -> Option<Word> {
    let glsl = glsl_import(module);
    let types = Types::new(module);
    module.functions.iter().flat_map(|f| f.insts()).find(|i| rewrite_of(&types, glsl, i).is_some()).and_then(|i| i.result_id)
}

fn glsl_import(module: &Module) -> Option<Word> {
    module.ext_inst_imports.iter().find(|i| i.string(0).as_deref() == Some("GLSL.std.450")).and_then(|i| i.result_id)
}

/// The rewrite of `inst`, where it is one of doubles this pass rewrites.
fn rewrite_of(types: &Types, glsl: Option<Word>, inst: &Inst) -> Option<Rewrite> {
    inst.result_id?;
    if types.ieee_float_width(inst.result_type?)? != 64 {
        return None;
    }
    if inst.is(Op::FRem) {
        let [x, y] = inst.ids::<2>().ok()?;
        return Some(Rewrite::Remainder(x, y));
    }
    if !inst.is(Op::ExtInst) || glsl.is_none() || inst.word_opt(0) != glsl {
        return None;
    }
    let op = match inst.word_opt(1)? {
        n if n == G::RoundEven as u32 => G::RoundEven,
        n if n == G::Round as u32 => G::Round,
        n if n == G::Trunc as u32 => G::Trunc,
        _ => return None,
    };
    Some(Rewrite::Rounding(op, inst.word_opt(2)?))
}

/// Appends instructions to `out`.
struct Emitter<'a> {
    module: &'a mut Module,
    out: &'a mut Vec<Inst>,
    origin: Option<crate::ir::Origin>,
    glsl: Word,
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

    fn gl(&mut self, g: G, ty: Word, x: Word) -> Word {
        let glsl = self.glsl;
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

    /// Booleans of `ty`'s shape (a scalar or a vector of as many).
    fn booleans_like(&mut self, types: &Types, ty: Word) -> Word {
        let boolean = self.module.type_bool();
        match types.vector(ty) {
            Some((_, n)) => self.module.type_vector(boolean, n),
            None => boolean,
        }
    }

    /// `op` of `x` (see the module comment), into `result` where given.
    fn rounding(&mut self, types: &Types, op: G, ty: Word, result: Option<Word>, x: Word) -> Word {
        let bt = self.booleans_like(types, ty);
        let zero = self.splat(types, ty, 0.0);
        let a = self.gl(G::FAbs, ty, x);
        let f = self.gl(G::Floor, ty, a);
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
                let whole = self.gl(G::Floor, ty, h);
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
        let result = result.unwrap_or_else(|| self.module.alloc_id());
        self.emit_as(Op::Select, ty, result, vec![Operand::Id(is_zero), Operand::Id(x), Operand::Id(signed)]);
        result
    }

    /// `OpFRem x y` into `result`: `x - y trunc(x / y)` with [`Emitter::rounding`]'s `Trunc`,
    /// a zero of `x`'s sign, and `x` itself where `y` is infinite and `x` finite.
    fn remainder(&mut self, types: &Types, ty: Word, result: Word, x: Word, y: Word) {
        let bt = self.booleans_like(types, ty);
        let quotient = self.op(Op::FDiv, ty, &[x, y]);
        let whole = self.rounding(types, G::Trunc, ty, None, quotient);
        let product = self.op(Op::FMul, ty, &[y, whole]);
        let r = self.op(Op::FSub, ty, &[x, product]);
        for v in [product, r] {
            self.module.decorate(v, spirv::Decoration::NoContraction, &[]);
        }
        // A zero result has x's sign (x itself where x is a zero).
        let (zero, minus_zero, infinity) = (self.splat(types, ty, 0.0), self.splat(types, ty, -0.0), self.splat(types, ty, f64::INFINITY));
        let negative = self.op(Op::FOrdLessThan, bt, &[x, zero]);
        let signed_zero = self.op(Op::Select, ty, &[negative, minus_zero, zero]);
        let x_zero = self.op(Op::FOrdEqual, bt, &[x, zero]);
        let signed_zero = self.op(Op::Select, ty, &[x_zero, x, signed_zero]);
        let r_zero = self.op(Op::FOrdEqual, bt, &[r, zero]);
        let r = self.op(Op::Select, ty, &[r_zero, signed_zero, r]);
        // A finite x over an infinite y is x.
        let ay = self.gl(G::FAbs, ty, y);
        let ax = self.gl(G::FAbs, ty, x);
        let y_infinite = self.op(Op::FOrdEqual, bt, &[ay, infinity]);
        let x_finite = self.op(Op::FOrdLessThan, bt, &[ax, infinity]);
        let keep = self.op(Op::LogicalAnd, bt, &[y_infinite, x_finite]);
        self.emit_as(Op::Select, ty, result, vec![Operand::Id(keep), Operand::Id(x), Operand::Id(r)]);
    }
}
