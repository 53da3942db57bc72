//! `OpenCL.std` vector functions: `shuffle` and `shuffle2` (an `OpVectorShuffle` for a constant
//! mask, else one dynamic extract per component, the mask's components taken modulo the number
//! of input components as OpenCL specifies), and the vector and half-vector loads and stores
//! `vloadn`, `vstoren`, `vload_half(n)`, `vloada_halfn`, `vstore_half(n)` and `vstorea_halfn`
//! (element by element through the element pointer, converted where the pointer is to halves;
//! the aligned forms step 4 halves for 3-component vectors).
//!
//! Conversions of loaded halves are `NoContraction`, so that Mesa does not fold `f32(f16(x))`
//! to `x` where it forwards an invocation's own store of the element to its load; NVIDIA's
//! compiler folds that round trip regardless.
//!
//! The `_r` stores with a directed rounding mode (`rtz`, `rtp`, `rtn`) round as `rounding.rs`
//! computes it; the others convert as the driver does (to nearest even).

use super::Lower;
use crate::error::{Error, Result};
use crate::ir::{Inst, Operand};
use spirv::{Decoration, FPRoundingMode, Op, OpenclStd100Op as CL, Word};

/// The functions this file lowers.
pub(super) fn handles(op: CL) -> bool {
    use CL::*;
    matches!(op, shuffle | shuffle2 | vloadn | vstoren | vload_half | vload_halfn | vloada_halfn | vstore_half | vstore_half_r | vstore_halfn | vstore_halfn_r | vstorea_halfn | vstorea_halfn_r)
}

impl Lower<'_, '_> {
    /// `op` with arguments `args` (ids only): `Some` value, or `None` for a store.
    pub(super) fn vector(&mut self, inst: &Inst, op: CL, ty: Word, args: &[Word]) -> Result<Option<Word>> {
        let a = |k: usize| args.get(k).copied().ok_or_else(|| Error::Invalid { site: Box::default(), message: format!("OpenCL.std {op:?} lacks operand {k}") });
        use CL::*;
        match op {
            shuffle => Ok(Some(self.shuffle(ty, a(0)?, None, a(1)?))),
            shuffle2 => Ok(Some(self.shuffle(ty, a(0)?, Some(a(1)?), a(2)?))),
            vloadn | vload_half | vload_halfn | vloada_halfn => {
                let (offset, p) = (a(0)?, a(1)?);
                let (s, count, _, _) = self.shape(ty);
                if let Some(n) = inst.operands.get(4).and_then(Operand::word).filter(|n| op == vloadn && *n != count) {
                    return Err(Error::Invalid { site: self.b.module.site(inst), message: format!("vloadn of {n} elements into a {count}-component result") });
                }
                let stride = if op == vloada_halfn && count == 3 { 4 } else { count };
                let (elem_ptr_ty, elem) = self.pointee(p).ok_or_else(|| self.unsupported(inst, &format!("{op:?} from a non-pointer")))?;
                let otype = self.types.type_of(offset).unwrap_or(0);
                let base = if stride == 1 { offset } else { self.scaled(offset, otype, stride) };
                let mut parts = Vec::new();
                for k in 0..count {
                    let idx = self.add_const(base, otype, k);
                    let ptr = self.op(Op::PtrAccessChain, elem_ptr_ty, &[p, idx]);
                    let v = self.b.load(elem, ptr);
                    parts.push(if elem == s {
                        v
                    } else {
                        let f = self.op(Op::FConvert, s, &[v]);
                        // Exact (see the module comment).
                        self.b.module.decorate(f, Decoration::NoContraction, &[]);
                        f
                    });
                }
                Ok(Some(if count == 1 { parts[0] } else { self.op(Op::CompositeConstruct, ty, &parts) }))
            }
            _ => {
                let mut rounding = None;
                if let Some(mode) = inst.operands.last().and_then(Operand::word).filter(|_| matches!(op, vstore_half_r | vstore_halfn_r | vstorea_halfn_r)) {
                    rounding = Some(FPRoundingMode::from_u32(mode).ok_or_else(|| self.unsupported(inst, &format!("OpenCL.std {op:?} with rounding mode {mode}")))?);
                }
                let (data, offset, p) = (a(0)?, a(1)?, a(2)?);
                let dty = self.types.type_of(data).unwrap_or(0);
                let (s, count, _, _) = self.shape(dty);
                let stride = if matches!(op, vstorea_halfn | vstorea_halfn_r) && count == 3 { 4 } else { count };
                let (elem_ptr_ty, elem) = self.pointee(p).ok_or_else(|| self.unsupported(inst, &format!("{op:?} to a non-pointer")))?;
                let otype = self.types.type_of(offset).unwrap_or(0);
                let base = if stride == 1 { offset } else { self.scaled(offset, otype, stride) };
                for k in 0..count {
                    let idx = self.add_const(base, otype, k);
                    let ptr = self.op(Op::PtrAccessChain, elem_ptr_ty, &[p, idx]);
                    let v = if count == 1 { data } else { self.b.composite_extract(s, data, k) };
                    let v = match rounding {
                        _ if elem == s => v,
                        Some(mode) if mode != FPRoundingMode::RTE => self.narrowed_float(v, self.shape(s).2, 16, 1, mode),
                        _ => self.op(Op::FConvert, elem, &[v]),
                    };
                    self.b.store(ptr, v);
                }
                Ok(None)
            }
        }
    }

    /// `shuffle(x, mask)` / `shuffle2(x, y, mask)`: result component i is input component
    /// `mask[i] % total` of x (then y).
    fn shuffle(&mut self, ty: Word, x: Word, y: Option<Word>, mask: Word) -> Word {
        let xty = self.types.type_of(x).unwrap_or(0);
        let (scalar, xn, _, _) = self.shape(xty);
        let total = if y.is_some() { 2 * xn } else { xn };
        let mty = self.types.type_of(mask).unwrap_or(0);
        let (mscalar, mn, _, _) = self.shape(mty);
        if let Some(lanes) = self.constant_lanes(mask, mn) {
            let mut ops = vec![Operand::Id(x), Operand::Id(y.unwrap_or(x))];
            ops.extend(lanes.iter().map(|l| Operand::Literal(l % total)));
            return self.b.emit(Op::VectorShuffle, ty, ops);
        }
        let bt = self.bool_ty(1);
        let mut parts = Vec::new();
        for i in 0..mn {
            let m = if mn == 1 { mask } else { self.b.composite_extract(mscalar, mask, i) };
            let lim = self.splat_i(mscalar, i64::from(total - 1));
            let k = self.op(Op::BitwiseAnd, mscalar, &[m, lim]);
            parts.push(match y {
                None => self.op(Op::VectorExtractDynamic, scalar, &[x, k]),
                Some(y) => {
                    let low = self.splat_i(mscalar, i64::from(xn - 1));
                    let within = self.op(Op::BitwiseAnd, mscalar, &[k, low]);
                    let from_x = self.op(Op::VectorExtractDynamic, scalar, &[x, within]);
                    let from_y = self.op(Op::VectorExtractDynamic, scalar, &[y, within]);
                    let xn_c = self.splat_i(mscalar, i64::from(xn));
                    let in_y = self.op(Op::UGreaterThanEqual, bt, &[k, xn_c]);
                    self.b.select(scalar, in_y, from_y, from_x)
                }
            });
        }
        if parts.len() == 1 {
            parts[0]
        } else {
            self.op(Op::CompositeConstruct, ty, &parts)
        }
    }

    /// The low words of a constant vector's `n` components (`OpConstantComposite` of
    /// `OpConstant`s, or `OpConstantNull`).
    fn constant_lanes(&self, v: Word, n: u32) -> Option<Vec<u32>> {
        let d = self.b.module.globals().iter().find(|i| i.result_id == Some(v))?;
        match d.op()? {
            Op::ConstantNull => Some(vec![0; n as usize]),
            Op::ConstantComposite => d.operands.iter().map(|o| o.id().and_then(|c| self.types.const_u32(c))).collect(),
            Op::Constant if n == 1 => self.types.const_u32(v).map(|c| vec![c]),
            _ => None,
        }
    }
}
