//! Instruction emission for the narrow-type legalization: rounding to f16 and bf16, masking and
//! sign extension of narrow integers, and the conversions between a narrow value held in 32 bits
//! and the bits it has in memory.

use super::Narrow;
use crate::ir::{Inst, Module, Operand, Origin};
use spirv::{GlslStd450Op as GLOp, Op, Word};

/// Appends instructions to a block being rebuilt.
pub(super) struct Emit<'m> {
    pub m: &'m mut Module,
    pub out: Vec<Inst>,
    pub origin: Option<Origin>,
    pub glsl: Word,
}

impl Emit<'_> {
    /// Emits `op` with result `id` (a new one when `None`) and returns the result.
    pub fn emit_as(&mut self, id: Option<Word>, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = id.unwrap_or_else(|| self.m.alloc_id());
        self.out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(self.origin));
        id
    }

    pub fn op(&mut self, op: Op, ty: Word, args: &[Word]) -> Word {
        self.emit_as(None, op, ty, args.iter().map(|a| Operand::Id(*a)).collect())
    }

    pub fn void(&mut self, op: Op, operands: Vec<Operand>) {
        self.out.push(Inst::new(op, None, None, operands).from_origin(self.origin));
    }

    pub fn ext(&mut self, ty: Word, inst: GLOp, args: &[Word]) -> Word {
        let mut ops = vec![Operand::Id(self.glsl), Operand::Literal(inst as u32)];
        ops.extend(args.iter().map(|a| Operand::Id(*a)));
        self.emit_as(None, Op::ExtInst, ty, ops)
    }

    pub fn extract(&mut self, ty: Word, composite: Word, index: u32) -> Word {
        self.emit_as(None, Op::CompositeExtract, ty, vec![Operand::Id(composite), Operand::Literal(index)])
    }

    /// `ty` with `n` lanes: the scalar itself, or a vector of it.
    pub fn lanes(&mut self, scalar: Word, n: u32) -> Word {
        if n == 1 {
            scalar
        } else {
            self.m.type_vector(scalar, n)
        }
    }

    pub fn uint(&mut self, n: u32) -> Word {
        let u = self.m.type_int(32, false);
        self.lanes(u, n)
    }

    pub fn float(&mut self, n: u32) -> Word {
        let f = self.m.type_float(32);
        self.lanes(f, n)
    }

    pub fn boolean(&mut self, n: u32) -> Word {
        let b = self.m.type_bool();
        self.lanes(b, n)
    }

    /// A 32-bit unsigned constant splat over `n` lanes.
    pub fn splat_u32(&mut self, n: u32, value: u32) -> Word {
        let c = self.m.constant_u32(value);
        let u = self.m.type_int(32, false);
        self.splat(c, n, u)
    }

    pub fn splat_f32(&mut self, n: u32, value: f32) -> Word {
        let c = self.m.constant_f32(value);
        let f = self.m.type_float(32);
        self.splat(c, n, f)
    }

    fn splat(&mut self, c: Word, n: u32, scalar: Word) -> Word {
        if n == 1 {
            return c;
        }
        let ty = self.m.type_vector(scalar, n);
        self.m.constant_composite(ty, &vec![c; n as usize])
    }

    /// The low `bits` of `v` (an integer of `n` lanes, typed `ty`), the rest cleared.
    pub fn mask(&mut self, ty: Word, n: u32, v: Word, bits: u32) -> Word {
        let m = self.splat_u32(n, low_mask(bits));
        self.op(Op::BitwiseAnd, ty, &[v, m])
    }

    /// `v`'s low `bits` sign-extended over 32 bits.
    pub fn sext(&mut self, ty: Word, n: u32, v: Word, bits: u32) -> Word {
        let s = self.splat_u32(n, 32 - bits);
        let up = self.op(Op::ShiftLeftLogical, ty, &[v, s]);
        self.op(Op::ShiftRightArithmetic, ty, &[up, s])
    }

    /// `v` (an f32 of `n` lanes) rounded to the nearest `kind` value, ties to even, into result
    /// `into` (a new one when `None`).
    pub fn round(&mut self, kind: Narrow, n: u32, v: Word, into: Option<Word>) -> Word {
        let (u, f, b) = (self.uint(n), self.float(n), self.boolean(n));
        let bits = self.op(Op::Bitcast, u, &[v]);
        let abs_mask = self.splat_u32(n, 0x7fff_ffff);
        let a = self.op(Op::BitwiseAnd, u, &[bits, abs_mask]);
        let sign = self.op(Op::BitwiseXor, u, &[bits, a]);
        // Add half an ulp of the narrow type, minus one when the kept lsb is even, and cut.
        let drop = if kind == Narrow::Bf16 { 16 } else { 13 };
        let shift = self.splat_u32(n, drop);
        let one = self.splat_u32(n, 1);
        let kept = self.op(Op::ShiftRightLogical, u, &[a, shift]);
        let lsb = self.op(Op::BitwiseAnd, u, &[kept, one]);
        let half = self.splat_u32(n, (1 << (drop - 1)) - 1);
        let biased = self.op(Op::IAdd, u, &[a, half]);
        let biased = self.op(Op::IAdd, u, &[biased, lsb]);
        let cut = self.splat_u32(n, !low_mask(drop));
        let mut r = self.op(Op::BitwiseAnd, u, &[biased, cut]);
        if kind == Narrow::F16 {
            // Below f16's smallest normal, 2^-14: steps of 2^-24.
            let af = self.op(Op::Bitcast, f, &[a]);
            let up = self.splat_f32(n, 16_777_216.0);
            let scaled = self.op(Op::FMul, f, &[af, up]);
            let even = self.ext(f, GLOp::RoundEven, &[scaled]);
            let down = self.splat_f32(n, 1.0 / 16_777_216.0);
            let sub = self.op(Op::FMul, f, &[even, down]);
            let sub = self.op(Op::Bitcast, u, &[sub]);
            let min_normal = self.splat_u32(n, 0x3880_0000);
            let is_sub = self.op(Op::ULessThan, b, &[a, min_normal]);
            r = self.op(Op::Select, u, &[is_sub, sub, r]);
            // From 65520 on: infinity.
            let overflow = self.splat_u32(n, 0x477f_f000);
            let inf = self.splat_u32(n, 0x7f80_0000);
            let big = self.op(Op::UGreaterThanEqual, b, &[a, overflow]);
            r = self.op(Op::Select, u, &[big, inf, r]);
        }
        // NaNs stay NaNs (quiet).
        let inf = self.splat_u32(n, 0x7f80_0000);
        let quiet = self.splat_u32(n, 0x0040_0000);
        let nan = self.op(Op::UGreaterThan, b, &[a, inf]);
        let qnan = self.op(Op::BitwiseOr, u, &[a, quiet]);
        r = self.op(Op::Select, u, &[nan, qnan, r]);
        let r = self.op(Op::BitwiseOr, u, &[r, sign]);
        self.emit_as(into, Op::Bitcast, f, vec![Operand::Id(r)])
    }

    /// The 32-bit integer `v` (of type `ty`, `n` lanes, signed when `signed`) as f32, exact where it has at most
    /// 24 significant bits; otherwise its bits below the top 24 are folded into the lowest kept
    /// one (round to odd), so that rounding the result to bf16 rounds `v` once, as a direct
    /// conversion would.
    pub fn int_to_f32_sticky(&mut self, n: u32, ty: Word, v: Word, signed: bool) -> Word {
        let (u, f, b) = (self.uint(n), self.float(n), self.boolean(n));
        let x = self.coerce(u, ty, v);
        let zero = self.splat_u32(n, 0);
        let (mag, negative) = if signed {
            let negative = self.op(Op::SLessThan, b, &[x, zero]);
            let minus = self.op(Op::ISub, u, &[zero, x]);
            (self.op(Op::Select, u, &[negative, minus, x]), Some(negative))
        } else {
            (x, None)
        };
        let eight = self.splat_u32(n, 8);
        let high = self.op(Op::ShiftRightLogical, u, &[mag, eight]);
        let low_mask = self.splat_u32(n, 0xff);
        let low = self.op(Op::BitwiseAnd, u, &[mag, low_mask]);
        let inexact = self.op(Op::INotEqual, b, &[low, zero]);
        let one = self.splat_u32(n, 1);
        let sticky = self.op(Op::Select, u, &[inexact, one, zero]);
        let high = self.op(Op::BitwiseOr, u, &[high, sticky]);
        let high = self.op(Op::ConvertUToF, f, &[high]);
        let scale = self.splat_f32(n, 256.0);
        let big = self.op(Op::FMul, f, &[high, scale]);
        let small = self.op(Op::ConvertUToF, f, &[mag]);
        let limit = self.splat_u32(n, 1 << 24);
        let is_big = self.op(Op::UGreaterThanEqual, b, &[mag, limit]);
        let r = self.op(Op::Select, f, &[is_big, big, small]);
        match negative {
            Some(negative) => {
                let minus = self.op(Op::FNegate, f, &[r]);
                self.op(Op::Select, f, &[negative, minus, r])
            }
            None => r,
        }
    }

    /// The widened value (typed `ty`) of a scalar `kind` whose memory bits are the low bits of
    /// the u32 `bits` (the rest clear).
    pub fn decode(&mut self, kind: Narrow, ty: Word, bits: Word) -> Word {
        match kind {
            Narrow::F16 => {
                // Integer arithmetic rather than UnpackHalf2x16, whose infinities and NaNs
                // drivers get wrong (SwiftShader).
                let (u, f, b) = (self.uint(1), self.float(1), self.boolean(1));
                let c = |e: &mut Self, v: u32| e.m.constant_u32(v);
                let (c8000, c7fff, c7c00, c3ff, c16, c13) = (c(self, 0x8000), c(self, 0x7fff), c(self, 0x7c00), c(self, 0x3ff), c(self, 16), c(self, 13));
                let sign = self.op(Op::BitwiseAnd, u, &[bits, c8000]);
                let sign = self.op(Op::ShiftLeftLogical, u, &[sign, c16]);
                let mag = self.op(Op::BitwiseAnd, u, &[bits, c7fff]);
                let exp = self.op(Op::BitwiseAnd, u, &[bits, c7c00]);
                let man = self.op(Op::BitwiseAnd, u, &[bits, c3ff]);
                let shifted = self.op(Op::ShiftLeftLogical, u, &[mag, c13]);
                let rebias = c(self, (127 - 15) << 23);
                let normal = self.op(Op::IAdd, u, &[shifted, rebias]);
                let special = c(self, 0x7f80_0000);
                let man13 = self.op(Op::ShiftLeftLogical, u, &[man, c13]);
                let special = self.op(Op::BitwiseOr, u, &[special, man13]);
                let is_special = self.op(Op::IEqual, b, &[exp, c7c00]);
                let r = self.op(Op::Select, u, &[is_special, special, normal]);
                let manf = self.op(Op::ConvertUToF, f, &[man]);
                let scale = self.m.constant_f32(1.0 / 16_777_216.0);
                let sub = self.op(Op::FMul, f, &[manf, scale]);
                let sub = self.op(Op::Bitcast, u, &[sub]);
                let zero = c(self, 0);
                let is_sub = self.op(Op::IEqual, b, &[exp, zero]);
                let r = self.op(Op::Select, u, &[is_sub, sub, r]);
                let r = self.op(Op::BitwiseOr, u, &[r, sign]);
                self.op(Op::Bitcast, ty, &[r])
            }
            Narrow::Bf16 => {
                let u = self.uint(1);
                let sixteen = self.m.constant_u32(16);
                let up = self.op(Op::ShiftLeftLogical, u, &[bits, sixteen]);
                self.op(Op::Bitcast, ty, &[up])
            }
            Narrow::Int { .. } => {
                let u = self.m.type_int(32, false);
                self.coerce(ty, u, bits)
            }
        }
    }

    /// The memory bits (low bits of a u32) of the widened scalar `v` of `kind` typed `ty`.
    pub fn encode(&mut self, kind: Narrow, ty: Word, v: Word) -> Word {
        let u = self.uint(1);
        match kind {
            Narrow::F16 => {
                // `v` is an f16 value (or an infinity or NaN): the conversion is exact.
                let (f, b) = (self.float(1), self.boolean(1));
                let c = |e: &mut Self, v: u32| e.m.constant_u32(v);
                let x = self.op(Op::Bitcast, u, &[v]);
                let c16 = c(self, 16);
                let hi = self.op(Op::ShiftRightLogical, u, &[x, c16]);
                let c8000 = c(self, 0x8000);
                let sign = self.op(Op::BitwiseAnd, u, &[hi, c8000]);
                let c7fffffff = c(self, 0x7fff_ffff);
                let a = self.op(Op::BitwiseAnd, u, &[x, c7fffffff]);
                let rebias = c(self, (127 - 15) << 23);
                let normal = self.op(Op::ISub, u, &[a, rebias]);
                let c13 = c(self, 13);
                let normal = self.op(Op::ShiftRightLogical, u, &[normal, c13]);
                let af = self.op(Op::Bitcast, f, &[a]);
                let scale = self.m.constant_f32(16_777_216.0);
                let sub = self.op(Op::FMul, f, &[af, scale]);
                let sub = self.op(Op::ConvertFToU, u, &[sub]);
                let min_normal = c(self, 0x3880_0000);
                let is_sub = self.op(Op::ULessThan, b, &[a, min_normal]);
                let r = self.op(Op::Select, u, &[is_sub, sub, normal]);
                let inf = c(self, 0x7f80_0000);
                let is_inf = self.op(Op::IEqual, b, &[a, inf]);
                let c7c00 = c(self, 0x7c00);
                let r = self.op(Op::Select, u, &[is_inf, c7c00, r]);
                let is_nan = self.op(Op::UGreaterThan, b, &[a, inf]);
                let c7e00 = c(self, 0x7e00);
                let r = self.op(Op::Select, u, &[is_nan, c7e00, r]);
                self.op(Op::BitwiseOr, u, &[r, sign])
            }
            Narrow::Bf16 => {
                let bits = self.op(Op::Bitcast, u, &[v]);
                let sixteen = self.m.constant_u32(16);
                self.op(Op::ShiftRightLogical, u, &[bits, sixteen])
            }
            Narrow::Int { .. } => self.coerce(u, ty, v),
        }
    }

    /// `v` of type `from` as type `to` (same widths): a bit cast where the types differ.
    pub fn coerce(&mut self, to: Word, from: Word, v: Word) -> Word {
        if to == from {
            v
        } else {
            self.op(Op::Bitcast, to, &[v])
        }
    }

    /// `v` of type `from` into result `id` of type `to`: a copy, or a bit cast.
    pub fn coerce_into(&mut self, id: Word, to: Word, from: Word, v: Word) {
        let op = if to == from { Op::CopyObject } else { Op::Bitcast };
        self.emit_as(Some(id), op, to, vec![Operand::Id(v)]);
    }
}

/// A word with the low `bits` set.
pub(super) fn low_mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}
