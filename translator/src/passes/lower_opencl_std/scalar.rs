//! Scalar f32 code for the helper functions of `trigonometry.rs` and `exponentials.rs`: an
//! emitter with one method per operation on floats and 32-bit words, and the helper's frame.

use super::Lower;
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Block, Inst, Operand};
use spirv::{Decoration, GlslStd450Op as G, Op, Word};

/// Emits float (f32, or f64 for the double helpers) and u32 instructions at a builder's cursor.
pub(super) struct Scalar<'a, 'b> {
    pub(super) b: &'a mut Builder<'b>,
    pub(super) glsl: Word,
    /// The width of the floats `f`, `fd` and `fop` make: 32 or 64.
    pub(super) width: u32,
}

impl Lower<'_, '_> {
    /// The function `name` of one f32 parameter returning `ret`, whose body `build` emits
    /// (returning its value); built the first time it is asked for.
    pub(super) fn scalar_helper(&mut self, name: &str, ret: Word, build: impl FnOnce(&mut Scalar<'_, '_>, Word) -> Word) -> Word {
        let f32_ty = self.b.module.type_float(32);
        self.helper(name, ret, &[f32_ty], |s, p| build(s, p[0]))
    }

    /// The width of the helpers that serve float type `ty` (scalar or vector): 64 for doubles,
    /// 32 for floats and halves, `None` for other types (bfloat16).
    pub(super) fn helper_width(&self, ty: Word) -> Option<u32> {
        let (scalar, _, width, is_float) = self.shape(ty);
        let plain = self.types.float(scalar).is_some_and(|(_, encoding)| encoding.is_none());
        match (is_float && plain, width) {
            (true, 64) => Some(64),
            (true, 16 | 32) => Some(32),
            _ => None,
        }
    }

    /// The helper `matbridge.<name>_f32` (or `_f64` for `width` 64) of one float, built by
    /// `build` the first time.
    pub(super) fn unary_helper(&mut self, width: u32, name: &str, build: impl FnOnce(&mut Scalar<'_, '_>, Word) -> Word) -> Word {
        let ty = self.b.module.type_float(width);
        self.helper_of_width(width, &format!("matbridge.{name}_f{width}"), ty, &[ty], |s, p| build(s, p[0]))
    }

    /// The function `name` of parameters of types `params` (f32 or 32-bit integers) returning
    /// `ret`, whose body `build` emits; built the first time it is asked for.
    pub(super) fn helper(&mut self, name: &str, ret: Word, params: &[Word], build: impl FnOnce(&mut Scalar<'_, '_>, &[Word]) -> Word) -> Word {
        self.helper_of_width(32, name, ret, params, build)
    }

    /// [`Lower::helper`] whose floats are `width` bits wide.
    pub(super) fn helper_of_width(&mut self, width: u32, name: &str, ret: Word, params: &[Word], build: impl FnOnce(&mut Scalar<'_, '_>, &[Word]) -> Word) -> Word {
        let glsl = self.glsl;
        let module = &mut *self.b.module;
        if let Some(f) = module.functions.iter().find(|f| module.name_of(f.id()).as_deref() == Some(name)) {
            return f.id();
        }
        let result = module.alloc_id();
        let id = module.helper_function(name, ret, params, |m, _| {
            let mut body = Block::new(m.alloc_id());
            body.insts.push(Inst::new(Op::ReturnValue, None, None, vec![Operand::Id(result)]));
            vec![body]
        });
        let f = module.functions.len() - 1;
        let args: Vec<Word> = module.functions[f].params.iter().map(|p| p.result_id.unwrap_or(0)).collect();
        let mut h = Builder::new(module, Cursor { function: f, block: 0, index: 0 });
        let value = build(&mut Scalar { b: &mut h, glsl, width }, &args);
        h.insert(Inst::new(Op::CopyObject, Some(ret), Some(result), vec![Operand::Id(value)]));
        id
    }

    /// `helper` (float and 32-bit integer parameters, a float result: f64 for doubles, else
    /// f32) applied component by component to `args` (scalars or vectors of `ty`'s component
    /// count; half components go to f32 and back).
    pub(super) fn per_component_of(&mut self, ty: Word, args: &[Word], helper: Word) -> Word {
        let (scalar, n, width, _) = self.shape(ty);
        // Double helpers take doubles; the others f32 (halves widened).
        let f32_ty = if width == 64 { scalar } else { self.b.module.type_float(32) };
        let mut parts = Vec::new();
        for k in 0..n {
            let mut ops = vec![Operand::Id(helper)];
            for a in args {
                let a_ty = self.types.type_of(*a).unwrap_or(ty);
                let (a_scalar, _, a_width, a_float) = self.shape(a_ty);
                let element = if n == 1 { *a } else { self.b.composite_extract(a_scalar, *a, k) };
                let wide = if a_float && a_width == 16 { self.op(Op::FConvert, f32_ty, &[element]) } else { element };
                ops.push(Operand::Id(wide));
            }
            let v = self.b.emit(Op::FunctionCall, f32_ty, ops);
            parts.push(if width != 16 { v } else { self.op(Op::FConvert, scalar, &[v]) });
        }
        if n == 1 {
            parts[0]
        } else {
            self.op(Op::CompositeConstruct, ty, &parts)
        }
    }

    /// `args` (half, float or double scalars or vectors of `ty`'s component count) through
    /// `helper`, floats (f64 for doubles, else f32) to a vector of `count` of them, component
    /// by component: each of the `count` parts as a value of `ty` (halves widened to f32 and
    /// back).
    pub(super) fn per_component_parts(&mut self, ty: Word, args: &[Word], helper: Word, count: u32) -> Vec<Word> {
        let (scalar, n, width, _) = self.shape(ty);
        let wide_ty = if width == 64 { scalar } else { self.b.module.type_float(32) };
        let all_ty = self.b.module.type_vector(wide_ty, count);
        let mut parts = vec![Vec::new(); count as usize];
        for k in 0..n {
            let mut ops = vec![Operand::Id(helper)];
            for x in args {
                let element = if n == 1 { *x } else { self.b.composite_extract(scalar, *x, k) };
                ops.push(Operand::Id(if width != 16 { element } else { self.op(Op::FConvert, wide_ty, &[element]) }));
            }
            let all = self.b.emit(Op::FunctionCall, all_ty, ops);
            for (j, part) in parts.iter_mut().enumerate() {
                let v = self.b.composite_extract(wide_ty, all, j as u32);
                part.push(if width != 16 { v } else { self.op(Op::FConvert, scalar, &[v]) });
            }
        }
        parts.into_iter().map(|p| if n == 1 { p[0] } else { self.op(Op::CompositeConstruct, ty, &p) }).collect()
    }

    /// `x` (a float or half scalar or vector of type `ty`) through helper `helper` (f32 to f32)
    /// component by component.
    pub(super) fn per_component(&mut self, ty: Word, x: Word, helper: Word) -> Word {
        let (scalar, n, width, _) = self.shape(ty);
        // Double helpers take doubles; the others f32.
        let f32_ty = if width == 64 { scalar } else { self.b.module.type_float(32) };
        let mut parts = Vec::new();
        for k in 0..n {
            let element = if n == 1 { x } else { self.b.composite_extract(scalar, x, k) };
            let wide = if width != 16 { element } else { self.op(Op::FConvert, f32_ty, &[element]) };
            let v = self.b.emit(Op::FunctionCall, f32_ty, vec![Operand::Id(helper), Operand::Id(wide)]);
            parts.push(if width != 16 { v } else { self.op(Op::FConvert, scalar, &[v]) });
        }
        if n == 1 {
            parts[0]
        } else {
            self.op(Op::CompositeConstruct, ty, &parts)
        }
    }
}

impl Scalar<'_, '_> {
    pub(super) fn f(&mut self) -> Word {
        self.b.module.type_float(self.width)
    }
    /// A float constant of the emitter's width.
    pub(super) fn fd(&mut self, v: f64) -> Word {
        let ty = self.f();
        self.b.module.constant_float(ty, self.width, None, v)
    }
    /// `f32` bits for floats, `f64` bits for doubles: the constant of the emitter's width.
    pub(super) fn fw(&mut self, single: u32, double: u64) -> Word {
        if self.width == 64 {
            self.fd(f64::from_bits(double))
        } else {
            self.fbits(single)
        }
    }
    /// The high word (sign, exponent and 20 significand bits) of double `x`.
    pub(super) fn high_word(&mut self, x: Word) -> Word {
        let u = self.u();
        let uvec2 = self.b.module.type_vector(u, 2);
        let words = self.gl(G::UnpackDouble2x32, uvec2, &[x]);
        self.b.composite_extract(u, words, 1)
    }
    /// Double `x` with its high word replaced by `high`.
    pub(super) fn with_high_word(&mut self, x: Word, high: Word) -> Word {
        let u = self.u();
        let uvec2 = self.b.module.type_vector(u, 2);
        let words = self.gl(G::UnpackDouble2x32, uvec2, &[x]);
        let low = self.b.composite_extract(u, words, 0);
        let words = self.b.op(Op::CompositeConstruct, uvec2, &[low, high]);
        let f = self.f();
        self.gl(G::PackDouble2x32, f, &[words])
    }
    /// The double whose high word is `high` and low word zero.
    pub(super) fn double_of_high_word(&mut self, high: Word) -> Word {
        let u = self.u();
        let uvec2 = self.b.module.type_vector(u, 2);
        let zero = self.uc(0);
        let words = self.b.op(Op::CompositeConstruct, uvec2, &[zero, high]);
        let f = self.f();
        self.gl(G::PackDouble2x32, f, &[words])
    }
    pub(super) fn u(&mut self) -> Word {
        self.b.module.type_int(32, false)
    }
    pub(super) fn fc(&mut self, v: f32) -> Word {
        self.b.module.constant_f32(v)
    }
    pub(super) fn uc(&mut self, v: u32) -> Word {
        self.b.module.constant_u32(v)
    }
    /// `a op b` on floats, `NoContraction`: the helpers' error-free splits need each product
    /// and sum rounded on its own.
    pub(super) fn fop(&mut self, op: Op, a: Word, b: Word) -> Word {
        let f = self.f();
        let v = self.b.op(op, f, &[a, b]);
        self.b.module.decorate(v, Decoration::NoContraction, &[]);
        v
    }
    /// `x` with the low bits of its significand cleared (its bits and `mask`).
    pub(super) fn masked(&mut self, x: Word, mask: u32) -> Word {
        let (f, u) = (self.f(), self.u());
        let bits = self.b.bitcast(u, x);
        let m = self.uc(mask);
        let kept = self.uop(Op::BitwiseAnd, bits, m);
        self.b.bitcast(f, kept)
    }
    /// `c0 + t (c1 + t (c2 + ...))` for coefficients given as double bits (rounded to the
    /// emitter's width).
    pub(super) fn horner_of_bits(&mut self, t: Word, coefficients: &[u64]) -> Word {
        let cs: Vec<Word> = coefficients.iter().map(|c| self.fd(f64::from_bits(*c))).collect();
        let mut p = cs[cs.len() - 1];
        for c in cs[..cs.len() - 1].iter().rev() {
            let tp = self.fop(Op::FMul, t, p);
            p = self.fop(Op::FAdd, *c, tp);
        }
        p
    }
    /// A function-scope array of the constants `values` of type `element` (initialized where
    /// the function starts), for [`Scalar::table_element`].
    pub(super) fn constant_table(&mut self, element: Word, values: &[Word]) -> Word {
        let length = self.uc(values.len() as u32);
        let array = self.b.module.type_array(element, length);
        let init = self.b.module.constant_composite(array, values);
        self.b.function_variable_with(array, Some(init))
    }
    /// Element `index` of `table`, a [`Scalar::constant_table`] of `element`s.
    pub(super) fn table_element(&mut self, table: Word, element: Word, index: Word) -> Word {
        let ptr = self.b.module.type_pointer(spirv::StorageClass::Function, element);
        let at = self.b.access_chain(ptr, table, &[index]);
        self.b.load(element, at)
    }
    /// A call of helper `f` returning f32.
    pub(super) fn call(&mut self, f: Word, args: &[Word]) -> Word {
        let ty = self.f();
        let mut ops = vec![Operand::Id(f)];
        ops.extend(args.iter().map(|a| Operand::Id(*a)));
        self.b.emit(Op::FunctionCall, ty, ops)
    }
    /// The f32 `bits`.
    pub(super) fn fbits(&mut self, bits: u32) -> Word {
        self.fc(f32::from_bits(bits))
    }
    pub(super) fn uop(&mut self, op: Op, a: Word, b: Word) -> Word {
        let u = self.u();
        self.b.op(op, u, &[a, b])
    }
    pub(super) fn test(&mut self, op: Op, a: Word, b: Word) -> Word {
        let boolean = self.b.module.type_bool();
        self.b.op(op, boolean, &[a, b])
    }
    pub(super) fn pick_f(&mut self, cond: Word, a: Word, b: Word) -> Word {
        let f = self.f();
        self.b.select(f, cond, a, b)
    }
    pub(super) fn pick_u(&mut self, cond: Word, a: Word, b: Word) -> Word {
        let u = self.u();
        self.b.select(u, cond, a, b)
    }
    pub(super) fn gl(&mut self, op: G, ty: Word, args: &[Word]) -> Word {
        let mut ops = vec![Operand::Id(self.glsl), Operand::Literal(op as u32)];
        ops.extend(args.iter().map(|a| Operand::Id(*a)));
        self.b.emit(Op::ExtInst, ty, ops)
    }
}
