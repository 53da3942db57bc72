//! Scalar f32 code for the helper functions of `trigonometry.rs` and `exponentials.rs`: an
//! emitter with one method per operation on floats and 32-bit words, and the helper's frame.

use super::Lower;
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Block, Inst, Operand};
use spirv::{GlslStd450Op as G, Op, Word};

/// Emits f32 and u32 instructions at a builder's cursor.
pub(super) struct Scalar<'a, 'b> {
    pub(super) b: &'a mut Builder<'b>,
    pub(super) glsl: Word,
}

impl Lower<'_, '_> {
    /// The function `name` of one f32 parameter returning `ret`, whose body `build` emits
    /// (returning its value); built the first time it is asked for.
    pub(super) fn scalar_helper(&mut self, name: &str, ret: Word, build: impl FnOnce(&mut Scalar<'_, '_>, Word) -> Word) -> Word {
        let glsl = self.glsl;
        let module = &mut *self.b.module;
        if let Some(f) = module.functions.iter().find(|f| module.name_of(f.id()).as_deref() == Some(name)) {
            return f.id();
        }
        let f32_ty = module.type_float(32);
        let result = module.alloc_id();
        let id = module.helper_function(name, ret, &[f32_ty], |m, _| {
            let mut body = Block::new(m.alloc_id());
            body.insts.push(Inst::new(Op::ReturnValue, None, None, vec![Operand::Id(result)]));
            vec![body]
        });
        let f = module.functions.len() - 1;
        let x = module.functions[f].params[0].result_id.unwrap_or(0);
        let mut h = Builder::new(module, Cursor { function: f, block: 0, index: 0 });
        let value = build(&mut Scalar { b: &mut h, glsl }, x);
        h.insert(Inst::new(Op::CopyObject, Some(ret), Some(result), vec![Operand::Id(value)]));
        id
    }

    /// `x` (a float or half scalar or vector of type `ty`) through helper `helper` (f32 to f32)
    /// component by component.
    pub(super) fn per_component(&mut self, ty: Word, x: Word, helper: Word) -> Word {
        let (scalar, n, width, _) = self.shape(ty);
        let f32_ty = self.b.module.type_float(32);
        let mut parts = Vec::new();
        for k in 0..n {
            let element = if n == 1 { x } else { self.b.composite_extract(scalar, x, k) };
            let wide = if width == 32 { element } else { self.op(Op::FConvert, f32_ty, &[element]) };
            let v = self.b.emit(Op::FunctionCall, f32_ty, vec![Operand::Id(helper), Operand::Id(wide)]);
            parts.push(if width == 32 { v } else { self.op(Op::FConvert, scalar, &[v]) });
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
        self.b.module.type_float(32)
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
    pub(super) fn fop(&mut self, op: Op, a: Word, b: Word) -> Word {
        let f = self.f();
        self.b.op(op, f, &[a, b])
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
