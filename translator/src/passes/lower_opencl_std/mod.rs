//! `LowerOpenclStd`: `OpenCL.std` extended instructions and OpenCL-only conversion semantics ->
//! `GLSL.std.450` and plain instructions.
//!
//! Rewrite, in place (the result id stays):
//! - `sin`, `cos`, `tan` and `sincos`, `exp`, `exp2`, `exp10`, `log`, `log2`, `log10`, `pow`,
//!   `powr`, `pown`, `rootn`, `cbrt`, `hypot`, `expm1`, `log1p`, the hyperbolic functions and
//!   their inverses, and `asin`, `acos`, `atan`, `atan2` and their `pi` forms, of floats,
//!   halves and doubles, and `tgamma`, `lgamma` and `lgamma_r`, call helpers accurate to
//!   OpenCL's bounds
//!   (`trigonometry.rs`, `double_trigonometry.rs`, `exponentials.rs`, `powers.rs`,
//!   `hyperbolic.rs`, `inverse_trigonometry.rs`, `gamma.rs`).
//! - Instructions with a `GLSL.std.450` twin of the same semantics become it: the same
//!   `sqrt`, `rsqrt`, `fabs`, `floor`, `ceil`, `trunc`, `rint`,
//!   `fma`/`mad`, `fmin`/`fmax` (as `NMin`/`NMax`: a NaN operand yields the other, as OpenCL
//!   says), `fclamp`, `mix`, `step`, `smoothstep`, `sign`, `degrees`, `radians`, `ldexp`, the
//!   geometric functions, integer `min`/`max`/`clamp`/`abs`, and the `half_`/`native_` variants.
//! - The rest become plain code: `round` (half away from zero), `fmod`, `remainder` and
//!   `remquo` (exactly, `exact_remainder.rs`),
//!   `degrees` and `radians` of doubles, `nan`, `copysign`, `fdim`, `clz`, `ctz`,
//!   `popcount`,
//!   `rotate`, `mul_hi`/`mad_hi`, `mul24`/`mad24`, `add_sat`/`sub_sat`, `hadd`/`rhadd`,
//!   `abs_diff`, `u_abs`, `bitselect`, `select`; `prefetch` goes. Functions
//!   with results through pointers, exponents, integer powers, the `pi`
//!   trigonometry, `erf`, `upsample` and `mad_sat` are in `special.rs`; shuffles and vector
//!   and half-vector loads and stores in `vectors.rs`.
//! - Conversions decorated `SaturatedConversion` clamp to the result's range first (NaN -> 0);
//!   float-to-integer conversions with an `FPRoundingMode` round first; conversions to float
//!   with one are computed as `rounding.rs` says; the decorations go.
//!
//! `printf` becomes `NonSemantic.DebugPrintf` (`printf.rs`).
//!
//! Preconditions: the module declares `Kernel` (runs before `lower-kernel-interface`). Any
//! other `OpenCL.std` instruction (an unknown number, a function of doubles that would become
//! a `GLSL.std.450` instruction of 16- and 32-bit floats only, a rounding mode the type cannot
//! take) is an error naming it.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Capability, Decoration, FPRoundingMode, GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};
use std::collections::{HashMap, HashSet};

mod double_error_function;
mod double_trigonometry;
mod doubles;
mod exact_remainder;
mod exponentials;
mod gamma;
mod hyperbolic;
mod inverse_trigonometry;
mod powers;
mod printf;
mod rounding;
mod scalar;
mod special;
mod trigonometry;
mod vectors;

pub struct LowerOpenclStd;

impl Pass for LowerOpenclStd {
    fn name(&self) -> &'static str {
        "lower-opencl-std"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let cl_set = module.ext_inst_imports.iter().find(|i| i.string(0).as_deref() == Some("OpenCL.std")).and_then(|i| i.result_id);
        let saturated: HashSet<Word> = decorated(module, Decoration::SaturatedConversion).into_keys().collect();
        let rounding: HashMap<Word, u32> = decorated(module, Decoration::FPRoundingMode).into_iter().filter_map(|(k, v)| Some((k, v?))).collect();
        let types = Types::new(module);
        let glsl = module.ext_inst_import("GLSL.std.450");
        let mut dead = Vec::new();
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
                for inst in body {
                    let is_cl = cl_set.is_some() && inst.is(Op::ExtInst) && inst.operands.first().and_then(Operand::id) == cl_set;
                    let conv = matches!(inst.op(), Some(Op::ConvertFToS | Op::ConvertFToU | Op::SConvert | Op::UConvert | Op::SatConvertSToU | Op::SatConvertUToS));
                    let r = inst.result_id.unwrap_or(0);
                    let sat = conv && saturated.contains(&r);
                    let round = matches!(inst.op(), Some(Op::ConvertFToS | Op::ConvertFToU)).then(|| rounding.get(&r).copied()).flatten();
                    let to_float = matches!(inst.op(), Some(Op::FConvert | Op::ConvertSToF | Op::ConvertUToF));
                    let round_to_float = to_float.then(|| rounding.get(&r).and_then(|m| FPRoundingMode::from_u32(*m))).flatten();
                    if !is_cl && !sat && round.is_none() && round_to_float.is_none() && !matches!(inst.op(), Some(Op::SatConvertSToU | Op::SatConvertUToS)) {
                        module.functions[f].blocks[b].insts.push(inst);
                        continue;
                    }
                    outcome.count(inst.opcode);
                    let index = module.functions[f].blocks[b].insts.len();
                    let mut bl = Builder::new(module, Cursor { function: f, block: b, index }).with_origin(inst.origin);
                    let mut cx = Lower { b: &mut bl, types: &types, glsl, dead: &mut dead };
                    let value = if is_cl {
                        cx.ext_inst(&inst)?
                    } else if let Some(mode) = round_to_float {
                        let rounded = cx.rounded_conversion(&inst, inst.id(0)?, mode)?;
                        if rounded.is_none() {
                            // Exact, or to nearest from an integer: the conversion stays as it is.
                            cx.b.insert(inst.clone());
                        }
                        rounded
                    } else {
                        cx.conversion(&inst, sat || matches!(inst.op(), Some(Op::SatConvertSToU | Op::SatConvertUToS)), round)?
                    };
                    if let Some(v) = value {
                        let ty = inst.ty()?;
                        bl.insert(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(v)]));
                    }
                }
            }
        }
        // Promotions only printf used go (SwiftShader has no doubles).
        if !dead.is_empty() {
            let used: HashSet<Word> = module.all_insts().flat_map(|i| i.used_ids().collect::<Vec<_>>()).collect();
            let gone: HashSet<Word> = dead.into_iter().filter(|d| !used.contains(d)).collect();
            for f in &mut module.functions {
                for b in &mut f.blocks {
                    b.insts.retain(|i| !i.result_id.is_some_and(|r| gone.contains(&r)));
                }
            }
        }
        // The import goes with its last use (drivers need not know the set: SwiftShader stops).
        if let Some(set) = cl_set {
            let used = module.all_insts().any(|i| i.is(Op::ExtInst) && i.operands.first() == Some(&Operand::Id(set)));
            if !used {
                module.ext_inst_imports.retain(|i| i.result_id != Some(set));
                module.debug_names.retain(|n| n.operands.first() != Some(&Operand::Id(set)));
            }
        }
        let ids: HashSet<Word> = saturated.into_iter().chain(rounding.into_keys()).collect();
        module.annotations.retain(|a| {
            let rounding_or_sat = a.word_opt(1).is_some_and(|d| d == Decoration::SaturatedConversion as u32 || d == Decoration::FPRoundingMode as u32);
            !(rounding_or_sat && a.operands.first().and_then(Operand::id).is_some_and(|t| ids.contains(&t)))
        });
        Ok(outcome)
    }
}

fn decorated(module: &Module, d: Decoration) -> HashMap<Word, Option<u32>> {
    module.annotations.iter().filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(d as u32)).filter_map(|a| Some((a.operands.first()?.id()?, a.word_opt(2)))).collect()
}

struct Lower<'a, 'b> {
    b: &'a mut Builder<'b>,
    types: &'a Types,
    glsl: Word,
    /// Results a lowering left without uses (`printf`'s promotions to double).
    dead: &'a mut Vec<Word>,
}

impl Lower<'_, '_> {
    fn gl(&mut self, op: G, ty: Word, args: &[Word]) -> Word {
        let mut ops = vec![Operand::Id(self.glsl), Operand::Literal(op as u32)];
        ops.extend(args.iter().map(|a| Operand::Id(*a)));
        self.b.emit(Op::ExtInst, ty, ops)
    }

    fn op(&mut self, op: Op, ty: Word, args: &[Word]) -> Word {
        self.b.op(op, ty, args)
    }

    /// (scalar type, component count, width, is float) of `ty`.
    fn shape(&self, ty: Word) -> (Word, u32, u32, bool) {
        let (s, n) = self.types.vector(ty).unwrap_or((ty, 1));
        match (self.types.int(s), self.types.float(s)) {
            (Some((w, _)), _) => (s, n, w, false),
            (_, Some((w, _))) => (s, n, w, true),
            _ => (s, n, 32, false),
        }
    }

    /// A constant of `ty` (scalar or vector) from a float or integer value.
    fn splat_f(&mut self, ty: Word, v: f64) -> Word {
        let (s, n, w, _) = self.shape(ty);
        let c = match w {
            64 => self.b.module.intern(Op::Constant, Some(s), vec![Operand::Literal(v.to_bits() as u32), Operand::Literal((v.to_bits() >> 32) as u32)]),
            16 => self.b.module.intern(Op::Constant, Some(s), vec![Operand::Literal(half::f16::from_f64(v).to_bits() as u32)]),
            _ => self.b.module.intern(Op::Constant, Some(s), vec![Operand::Literal((v as f32).to_bits())]),
        };
        self.splat(ty, c, n)
    }

    fn splat_i(&mut self, ty: Word, v: i64) -> Word {
        let (s, n, w, _) = self.shape(ty);
        let signed = self.types.int(s).is_some_and(|i| i.1);
        let c = self.b.module.constant_int(s, w, signed, v as u64);
        self.splat(ty, c, n)
    }

    fn splat(&mut self, ty: Word, c: Word, n: u32) -> Word {
        if n == 1 {
            c
        } else {
            let parts = vec![c; n as usize];
            self.b.module.constant_composite(ty, &parts)
        }
    }

    fn bool_ty(&mut self, n: u32) -> Word {
        let b = self.b.module.type_bool();
        if n == 1 {
            b
        } else {
            self.b.module.type_vector(b, n)
        }
    }

    /// The `OpenCL.std` instruction `inst` as a value of its result type (`None` when it has
    /// no result to keep).
    fn ext_inst(&mut self, inst: &Inst) -> Result<Option<Word>> {
        let number = inst.word(1)?;
        let args: Vec<Word> = inst.operands.iter().skip(2).filter_map(Operand::id).collect();
        let ty = inst.ty()?;
        let Some(op) = CL::from_u32(number) else { return Err(self.unsupported(inst, &format!("OpenCL.std instruction {number}"))) };
        let a = |k: usize| args.get(k).copied().ok_or_else(|| Error::Invalid { site: Box::default(), message: format!("OpenCL.std {op:?} lacks operand {k}") });
        let (_, _, width, is_float) = self.shape(ty);
        // `half_` and `native_` forms of doubles (which OpenCL C does not have) are the
        // plain functions: GLSL.std.450 has no 64-bit forms for them to become.
        let op = if is_float && width == 64 { doubles::plain(op).unwrap_or(op) } else { op };
        if is_float && width == 64 && matches!(op, CL::degrees | CL::radians) {
            let k = if op == CL::degrees { 180.0 / std::f64::consts::PI } else { std::f64::consts::PI / 180.0 };
            let k = self.splat_f(ty, k);
            return Ok(Some(self.op(Op::FMul, ty, &[a(0)?, k])));
        }
        if op == CL::nan {
            return Ok(Some(self.nan_with_payload(ty, a(0)?)));
        }
        let direct = |op: CL| -> Option<G> {
            use CL::*;
            Some(match op {
                acos => G::Acos,
                acosh => G::Acosh,
                asin => G::Asin,
                asinh => G::Asinh,
                atan => G::Atan,
                atanh => G::Atanh,
                ceil => G::Ceil,
                half_cos | native_cos => G::Cos,
                cosh => G::Cosh,
                exp | half_exp | native_exp => G::Exp,
                exp2 | half_exp2 | native_exp2 => G::Exp2,
                fabs => G::FAbs,
                floor => G::Floor,
                fma | mad => G::Fma,
                fmax | fmax_common => G::NMax,
                fmin | fmin_common => G::NMin,
                log | half_log | native_log => G::Log,
                log2 | half_log2 | native_log2 => G::Log2,
                pow | powr | half_powr | native_powr => G::Pow,
                rint => G::RoundEven,
                rsqrt | half_rsqrt | native_rsqrt => G::InverseSqrt,
                half_sin | native_sin => G::Sin,
                sinh => G::Sinh,
                sqrt | half_sqrt | native_sqrt => G::Sqrt,
                half_tan | native_tan => G::Tan,
                tanh => G::Tanh,
                trunc => G::Trunc,
                fclamp => G::NClamp,
                degrees => G::Degrees,
                radians => G::Radians,
                mix => G::FMix,
                step => G::Step,
                smoothstep => G::SmoothStep,
                sign => G::FSign,
                cross => G::Cross,
                distance | fast_distance => G::Distance,
                length | fast_length => G::Length,
                normalize | fast_normalize => G::Normalize,
                ldexp => G::Ldexp,
                s_abs => G::SAbs,
                s_max => G::SMax,
                u_max => G::UMax,
                s_min => G::SMin,
                u_min => G::UMin,
                s_clamp => G::SClamp,
                u_clamp => G::UClamp,
                _ => return None,
            })
        };
        if matches!(op, CL::exp | CL::exp2 | CL::exp10 | CL::log | CL::log2 | CL::log10) {
            if let Some(v) = self.precise_exponential(op, ty, a(0)?) {
                return Ok(Some(v));
            }
        }
        if matches!(op, CL::pow | CL::powr | CL::pown | CL::rootn | CL::cbrt | CL::hypot) {
            if let Some(v) = self.precise_power(op, ty, &args) {
                return Ok(Some(v));
            }
        }
        if matches!(op, CL::expm1 | CL::log1p | CL::sinh | CL::cosh | CL::tanh | CL::asinh | CL::acosh | CL::atanh) {
            if let Some(v) = self.precise_hyperbolic(op, ty, a(0)?) {
                return Ok(Some(v));
            }
        }
        if matches!(op, CL::asin | CL::acos | CL::atan | CL::atan2 | CL::asinpi | CL::acospi | CL::atanpi | CL::atan2pi) {
            if let Some(v) = self.precise_inverse_trigonometry(op, ty, &args) {
                return Ok(Some(v));
            }
        }
        if let Some(g) = direct(op) {
            if is_float && width == 64 && doubles::narrow_only(g) {
                return Err(self.unsupported(inst, &format!("OpenCL.std {op:?} of doubles (GLSL.std.450's {g:?} takes only 16- and 32-bit floats)")));
            }
            return Ok(Some(self.gl(g, ty, &args)));
        }
        if matches!(op, CL::sin | CL::cos | CL::tan) {
            let x = a(0)?;
            if !self.precise_math_serves(ty) {
                // Not floats or halves (doubles were refused above): GLSL.std.450's.
                let g = match op {
                    CL::sin => G::Sin,
                    CL::cos => G::Cos,
                    _ => G::Tan,
                };
                return Ok(Some(self.gl(g, ty, &args)));
            }
            let (s, c, t) = self.precise_sin_cos_tan(ty, x);
            return Ok(Some(match op {
                CL::sin => s,
                CL::cos => c,
                _ => t,
            }));
        }
        if matches!(op, CL::tgamma | CL::lgamma | CL::lgamma_r) {
            let v = match op {
                CL::tgamma => self.precise_gamma(ty, a(0)?),
                CL::lgamma => self.precise_log_gamma(ty, a(0)?, None),
                _ => {
                    // The sign goes through a pointer to `int` (`intn` for vectors).
                    let (_, n, _, _) = self.shape(ty);
                    let int = self.int32(n);
                    if self.pointee(a(1)?).map(|(_, t)| t) != Some(int) {
                        return Err(self.unsupported(inst, "OpenCL.std lgamma_r whose sign pointer is not to 32-bit integers of the value's component count"));
                    }
                    self.precise_log_gamma(ty, a(0)?, Some(a(1)?))
                }
            };
            if let Some(v) = v {
                return Ok(Some(v));
            }
        }
        if special::handles(op) {
            return self.special(inst, op, ty, &args).map(Some);
        }
        if vectors::handles(op) {
            return self.vector(inst, op, ty, &args);
        }
        if op == CL::printf {
            let gone = self.printf(inst, &args)?;
            self.dead.extend(gone);
            return Ok(Some(self.splat_i(ty, 0)));
        }
        let (s, n, w, _) = self.shape(ty);
        use CL::*;
        Ok(Some(match op {
            round => {
                // trunc(x + copysign(0.5 - ulp/4, x)) is off for large values; use
                // t = trunc(x); t + sign(x) where |x - t| >= 0.5.
                let x = a(0)?;
                let t = self.gl(G::Trunc, ty, &[x]);
                let d = self.op(Op::FSub, ty, &[x, t]);
                let ad = self.gl(G::FAbs, ty, &[d]);
                let half = self.splat_f(ty, 0.5);
                let bt = self.bool_ty(n);
                let up = self.op(Op::FOrdGreaterThanEqual, bt, &[ad, half]);
                let sg = self.gl(G::FSign, ty, &[x]);
                let t2 = self.op(Op::FAdd, ty, &[t, sg]);
                self.b.select(ty, up, t2, t)
            }
            fmod => match self.exact_fmod(ty, a(0)?, a(1)?) {
                Some(v) => v,
                None => self.op(Op::FRem, ty, &[a(0)?, a(1)?]),
            },
            exp10 | half_exp10 | native_exp10 => {
                let k = self.splat_f(ty, std::f64::consts::LOG2_10);
                let m = self.op(Op::FMul, ty, &[a(0)?, k]);
                self.gl(G::Exp2, ty, &[m])
            }
            log10 | half_log10 | native_log10 => {
                let l = self.gl(G::Log2, ty, &[a(0)?]);
                let k = self.splat_f(ty, std::f64::consts::LOG10_2);
                self.op(Op::FMul, ty, &[l, k])
            }
            log1p => {
                let one = self.splat_f(ty, 1.0);
                let s1 = self.op(Op::FAdd, ty, &[a(0)?, one]);
                self.gl(G::Log, ty, &[s1])
            }
            expm1 => {
                let e = self.gl(G::Exp, ty, &[a(0)?]);
                let one = self.splat_f(ty, 1.0);
                self.op(Op::FSub, ty, &[e, one])
            }
            cbrt => {
                let x = a(0)?;
                let ax = self.gl(G::FAbs, ty, &[x]);
                let third = self.splat_f(ty, 1.0 / 3.0);
                let p = self.gl(G::Pow, ty, &[ax, third]);
                let sg = self.gl(G::FSign, ty, &[x]);
                self.op(Op::FMul, ty, &[p, sg])
            }
            copysign => self.copysign(ty, a(0)?, a(1)?),
            fdim => {
                let d = self.op(Op::FSub, ty, &[a(0)?, a(1)?]);
                let z = self.splat_f(ty, 0.0);
                self.gl(G::NMax, ty, &[d, z])
            }
            hypot => {
                let xx = self.op(Op::FMul, ty, &[a(0)?, a(0)?]);
                let yy = self.op(Op::FMul, ty, &[a(1)?, a(1)?]);
                let s2 = self.op(Op::FAdd, ty, &[xx, yy]);
                self.gl(G::Sqrt, ty, &[s2])
            }
            native_divide | half_divide => self.op(Op::FDiv, ty, &[a(0)?, a(1)?]),
            native_recip | half_recip => {
                let one = self.splat_f(ty, 1.0);
                self.op(Op::FDiv, ty, &[one, a(0)?])
            }
            u_abs => a(0)?,
            clz | ctz | popcount => self.bit_count(op, ty, a(0)?, n, w)?,
            rotate => {
                let x = a(0)?;
                let mask = self.splat_i(ty, i64::from(w) - 1);
                let k = self.op(Op::BitwiseAnd, ty, &[a(1)?, mask]);
                let wv = self.splat_i(ty, i64::from(w));
                let rk = self.op(Op::ISub, ty, &[wv, k]);
                let rk = self.op(Op::BitwiseAnd, ty, &[rk, mask]);
                let l = self.op(Op::ShiftLeftLogical, ty, &[x, k]);
                let r = self.op(Op::ShiftRightLogical, ty, &[x, rk]);
                self.op(Op::BitwiseOr, ty, &[l, r])
            }
            s_mul_hi | u_mul_hi | s_mad_hi | u_mad_hi => {
                let signed = matches!(op, s_mul_hi | s_mad_hi);
                let pair = self.b.module.type_struct(&[ty, ty]);
                let m = self.op(if signed { Op::SMulExtended } else { Op::UMulExtended }, pair, &[a(0)?, a(1)?]);
                let hi = self.b.composite_extract(ty, m, 1);
                if matches!(op, s_mad_hi | u_mad_hi) {
                    self.op(Op::IAdd, ty, &[hi, a(2)?])
                } else {
                    hi
                }
            }
            s_mul24 | u_mul24 => self.op(Op::IMul, ty, &[a(0)?, a(1)?]),
            s_mad24 | u_mad24 => {
                let m = self.op(Op::IMul, ty, &[a(0)?, a(1)?]);
                self.op(Op::IAdd, ty, &[m, a(2)?])
            }
            u_add_sat => {
                let r = self.op(Op::IAdd, ty, &[a(0)?, a(1)?]);
                let bt = self.bool_ty(n);
                let over = self.op(Op::ULessThan, bt, &[r, a(0)?]);
                let max = self.splat_i(ty, -1);
                self.b.select(ty, over, max, r)
            }
            u_sub_sat => {
                let r = self.op(Op::ISub, ty, &[a(0)?, a(1)?]);
                let bt = self.bool_ty(n);
                let under = self.op(Op::ULessThan, bt, &[a(0)?, a(1)?]);
                let zero = self.splat_i(ty, 0);
                self.b.select(ty, under, zero, r)
            }
            s_add_sat | s_sub_sat => {
                let (x, y) = (a(0)?, a(1)?);
                let sub = op == s_sub_sat;
                let r = self.op(if sub { Op::ISub } else { Op::IAdd }, ty, &[x, y]);
                // Overflow: add: x, y same sign and r's sign differs; sub: x, y differ and r differs from x.
                let xr = self.op(Op::BitwiseXor, ty, &[x, r]);
                let xy = self.op(Op::BitwiseXor, ty, &[x, y]);
                let t = if sub { xy } else { self.op(Op::Not, ty, &[xy]) };
                let ov = self.op(Op::BitwiseAnd, ty, &[xr, t]);
                let zero = self.splat_i(ty, 0);
                let bt = self.bool_ty(n);
                let overflow = self.op(Op::SLessThan, bt, &[ov, zero]);
                let neg = self.op(Op::SLessThan, bt, &[x, zero]);
                let min = self.splat_i(ty, i64::MIN >> (64 - w));
                let max = self.splat_i(ty, i64::MAX >> (64 - w));
                let sat = self.b.select(ty, neg, min, max);
                self.b.select(ty, overflow, sat, r)
            }
            s_hadd | u_hadd | s_rhadd | u_rhadd => {
                let (x, y) = (a(0)?, a(1)?);
                let one = self.splat_i(ty, 1);
                let shift = if matches!(op, s_hadd | s_rhadd) { Op::ShiftRightArithmetic } else { Op::ShiftRightLogical };
                let hx = self.op(shift, ty, &[x, one]);
                let hy = self.op(shift, ty, &[y, one]);
                let s2 = self.op(Op::IAdd, ty, &[hx, hy]);
                let low = self.op(if matches!(op, s_rhadd | u_rhadd) { Op::BitwiseOr } else { Op::BitwiseAnd }, ty, &[x, y]);
                let low = self.op(Op::BitwiseAnd, ty, &[low, one]);
                self.op(Op::IAdd, ty, &[s2, low])
            }
            s_abs_diff | u_abs_diff => {
                let (x, y) = (a(0)?, a(1)?);
                let bt = self.bool_ty(n);
                let lt = self.op(if op == s_abs_diff { Op::SLessThan } else { Op::ULessThan }, bt, &[x, y]);
                let d1 = self.op(Op::ISub, ty, &[y, x]);
                let d2 = self.op(Op::ISub, ty, &[x, y]);
                self.b.select(ty, lt, d1, d2)
            }
            bitselect => {
                let is_float = self.types.float(s).is_some();
                let it = if is_float { self.uint_like(ty) } else { ty };
                let cv = |l: &mut Self, v: Word| if is_float { l.b.bitcast(it, v) } else { v };
                let (x, y, c) = (cv(self, a(0)?), cv(self, a(1)?), cv(self, a(2)?));
                let nc = self.op(Op::Not, it, &[c]);
                let l = self.op(Op::BitwiseAnd, it, &[x, nc]);
                let r = self.op(Op::BitwiseAnd, it, &[y, c]);
                let v = self.op(Op::BitwiseOr, it, &[l, r]);
                if is_float {
                    self.b.bitcast(ty, v)
                } else {
                    v
                }
            }
            select => {
                // Scalars: c != 0; vectors: the most significant bit of each component of c.
                let (x, y, c) = (a(0)?, a(1)?, a(2)?);
                let cty = self.types.type_of(c).unwrap_or(ty);
                let (_, cn, _, _) = self.shape(cty);
                let bt = self.bool_ty(cn);
                let zero = self.splat_i(cty, 0);
                let cond = if cn == 1 { self.op(Op::INotEqual, bt, &[c, zero]) } else { self.op(Op::SLessThan, bt, &[c, zero]) };
                self.b.select(ty, cond, y, x)
            }
            prefetch => return Ok(None),
            other => return Err(self.unsupported(inst, &format!("OpenCL.std {other:?}"))),
        }))
    }

    fn unsupported(&self, inst: &Inst, what: &str) -> Error {
        Error::Invalid { site: self.b.module.site(inst), message: format!("{what} has no Vulkan lowering yet") }
    }

    /// (pointer type, pointee type) of pointer value `p`.
    fn pointee(&self, p: Word) -> Option<(Word, Word)> {
        let t = self.types.type_of(p)?;
        let d = self.types.defs.get(&t).filter(|d| d.is(Op::TypePointer))?;
        Some((t, d.id(1).ok()?))
    }

    fn scaled(&mut self, v: Word, ty: Word, k: u32) -> Word {
        let c = self.splat_i(ty, i64::from(k));
        self.op(Op::IMul, ty, &[v, c])
    }

    fn add_const(&mut self, v: Word, ty: Word, k: u32) -> Word {
        if k == 0 {
            return v;
        }
        let c = self.splat_i(ty, i64::from(k));
        self.op(Op::IAdd, ty, &[v, c])
    }

    /// `clz`, `ctz`, `popcount` for 8- to 64-bit integers (Vulkan's bit instructions take 32).
    fn bit_count(&mut self, op: CL, ty: Word, x: Word, n: u32, w: u32) -> Result<Word> {
        let u32t = self.b.module.type_int(32, false);
        let u32v = if n > 1 { self.b.module.type_vector(u32t, n) } else { u32t };
        let bt = self.bool_ty(n);
        let narrow = |l: &mut Self, v: Word| -> Word {
            if w == 32 {
                l.b.bitcast(u32v, v)
            } else {
                l.op(Op::UConvert, u32v, &[v])
            }
        };
        let back = |l: &mut Self, v: Word| -> Word {
            if w == 32 {
                l.b.bitcast(ty, v)
            } else {
                let ut = l.b.module.type_int(w, false);
                let ut = if n > 1 { l.b.module.type_vector(ut, n) } else { ut };
                let c = l.op(Op::UConvert, ut, &[v]);
                if ut == ty {
                    c
                } else {
                    l.b.bitcast(ty, c)
                }
            }
        };
        let (lo, hi) = if w == 64 {
            let lo = self.op(Op::UConvert, u32v, &[x]);
            let sh = self.splat_i(ty, 32);
            let h = self.op(Op::ShiftRightLogical, ty, &[x, sh]);
            (lo, Some(self.op(Op::UConvert, u32v, &[h])))
        } else {
            (narrow(self, x), None)
        };
        let clz32 = |l: &mut Self, v: Word| -> Word {
            let msb = l.gl(G::FindUMsb, u32v, &[v]);
            let c31 = l.splat_i(u32v, 31);
            l.op(Op::ISub, u32v, &[c31, msb])
        };
        let ctz32 = |l: &mut Self, v: Word| -> Word {
            let lsb = l.gl(G::FindILsb, u32v, &[v]);
            let zero = l.splat_i(u32v, 0);
            let is0 = l.op(Op::IEqual, bt, &[v, zero]);
            let c32 = l.splat_i(u32v, 32);
            l.b.select(u32v, is0, c32, lsb)
        };
        let r = match (op, hi) {
            (CL::popcount, None) => self.op(Op::BitCount, u32v, &[lo]),
            (CL::popcount, Some(h)) => {
                let a = self.op(Op::BitCount, u32v, &[lo]);
                let b = self.op(Op::BitCount, u32v, &[h]);
                self.op(Op::IAdd, u32v, &[a, b])
            }
            (CL::clz, None) => {
                let c = clz32(self, lo);
                let d = self.splat_i(u32v, 32 - i64::from(w));
                self.op(Op::ISub, u32v, &[c, d])
            }
            (CL::clz, Some(h)) => {
                let ch = clz32(self, h);
                let cl = clz32(self, lo);
                let c32 = self.splat_i(u32v, 32);
                let cl = self.op(Op::IAdd, u32v, &[cl, c32]);
                let zero = self.splat_i(u32v, 0);
                let h0 = self.op(Op::IEqual, bt, &[h, zero]);
                self.b.select(u32v, h0, cl, ch)
            }
            (CL::ctz, None) => {
                let c = ctz32(self, lo);
                let cw = self.splat_i(u32v, i64::from(w));
                self.gl(G::UMin, u32v, &[c, cw])
            }
            (_, Some(h)) => {
                let cl = ctz32(self, lo);
                let ch = ctz32(self, h);
                let c32 = self.splat_i(u32v, 32);
                let ch = self.op(Op::IAdd, u32v, &[ch, c32]);
                let zero = self.splat_i(u32v, 0);
                let l0 = self.op(Op::IEqual, bt, &[lo, zero]);
                self.b.select(u32v, l0, ch, cl)
            }
            _ => unreachable!("bit_count is called for clz, ctz and popcount"),
        };
        Ok(back(self, r))
    }

    /// A conversion with saturation and/or a rounding mode.
    fn conversion(&mut self, inst: &Inst, saturate: bool, round: Option<u32>) -> Result<Option<Word>> {
        let ty = inst.ty()?;
        let mut x = inst.id(0)?;
        let from = self.types.type_of(x).unwrap_or(0);
        let (_, n, fw, from_float) = self.shape(from);
        let (_, _, w, _) = self.shape(ty);
        let op = inst.op().unwrap_or(Op::Nop);
        if let Some(mode) = round {
            let g = match FPRoundingMode::from_u32(mode) {
                Some(FPRoundingMode::RTE) => G::RoundEven,
                Some(FPRoundingMode::RTP) => G::Ceil,
                Some(FPRoundingMode::RTN) => G::Floor,
                _ => G::Trunc,
            };
            x = self.gl(g, from, &[x]);
        }
        let to_signed = matches!(op, Op::ConvertFToS | Op::SConvert | Op::SatConvertUToS);
        let (lo, hi): (i128, i128) = if to_signed { (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1) } else { (0, (1i128 << w) - 1) };
        if saturate {
            if from_float {
                // Clamp in float to the largest representable values inside the range; NaN -> 0.
                let fmax = largest_float_at_most(hi, fw);
                let lo_c = self.splat_f(from, lo as f64);
                let hi_c = self.splat_f(from, fmax);
                let c = self.gl(G::NClamp, from, &[x, lo_c, hi_c]);
                let bt = self.bool_ty(n);
                let nan = self.op(Op::IsNan, bt, &[x]);
                let zero = self.splat_f(from, 0.0);
                x = self.b.select(from, nan, zero, c);
            } else {
                // Integer to integer: clamp in the source type where the bounds fit it.
                let from_signed = matches!(op, Op::SConvert | Op::SatConvertSToU);
                let (flo, fhi): (i128, i128) = if from_signed { (-(1i128 << (fw - 1)), (1i128 << (fw - 1)) - 1) } else { (0, (1i128 << fw) - 1) };
                let lo2 = lo.max(flo);
                let hi2 = hi.min(fhi);
                let lo_c = self.splat_i(from, lo2 as i64);
                let hi_c = self.splat_i(from, hi2 as i64);
                x = if from_signed { self.gl(G::SClamp, from, &[x, lo_c, hi_c]) } else { self.gl(G::UClamp, from, &[x, lo_c, hi_c]) };
            }
        }
        let plain = match op {
            Op::SatConvertSToU | Op::SatConvertUToS => {
                if fw == w {
                    Op::Bitcast
                } else if op == Op::SatConvertSToU {
                    Op::SConvert
                } else {
                    Op::UConvert
                }
            }
            other => other,
        };
        let mut v = if plain == Op::Bitcast { self.b.bitcast(ty, x) } else { self.op(plain, ty, &[x]) };
        if saturate && from_float {
            // Values at or above 2^w (2^(w-1) signed) are not representable below the
            // maximum in floating point: they saturate to it explicitly.
            let limit = self.splat_f(from, (hi + 1) as f64);
            let bt = self.bool_ty(n);
            let big = self.op(Op::FOrdGreaterThanEqual, bt, &[inst.id(0)?, limit]);
            let max = self.splat_i(ty, hi as i64);
            v = self.b.select(ty, big, max, v);
        }
        Ok(Some(v))
    }
}

/// The largest float of `width` bits that is at most `hi`.
fn largest_float_at_most(hi: i128, width: u32) -> f64 {
    let mantissa = match width {
        16 => 11,
        64 => 53,
        _ => 24,
    };
    let v = hi as f64;
    if hi <= 0 {
        return v;
    }
    let bits = 128 - hi.leading_zeros();
    if bits <= mantissa {
        return v;
    }
    let drop = bits - mantissa;
    ((hi >> drop) << drop) as f64
}
