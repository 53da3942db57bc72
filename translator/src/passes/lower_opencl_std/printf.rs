//! OpenCL C's `printf` -> `NonSemantic.DebugPrintf`, which Vulkan's validation layer prints
//! (with its debug-printf feature on) and drivers otherwise ignore; `printf` returns 0.
//!
//! The format string and `%s` arguments must be constant strings (what producers write for
//! literals: a `UniformConstant` byte array reached through bitcasts and constant indices); `%s`
//! arguments are written into the format. Conversions keep their letter, widths and
//! precisions stay; the flags DebugPrintf lacks (`-`, `+`, ` `, `#`) go, and length modifiers
//! except `l` for 64-bit integers, and OpenCL's vector forms (`%v4hlf`) become DebugPrintf's
//! (`%v4f`). Doubles (float arguments promoted by C's rules) print as floats, and 8- and 16-bit
//! integer vectors widen to 32 bits. Refused by name: `%c`, `%p`, `*` widths and precisions,
//! and formats that are not constants.

use super::Lower;
use crate::error::{Error, Result};
use crate::ir::{Inst, Operand};
use spirv::{Op, Word};

impl Lower<'_, '_> {
    /// Emits the `DebugPrintf` for `printf` instruction `inst`; returns ids of `OpFConvert`s
    /// to double it no longer needs (to remove where nothing else uses them).
    pub(super) fn printf(&mut self, inst: &Inst, args: &[Word]) -> Result<Vec<Word>> {
        let bad = |l: &Self, m: &str| Error::Invalid { site: l.b.module.site(inst), message: format!("printf: {m}") };
        let (&format_ptr, values) = args.split_first().ok_or_else(|| bad(self, "no format string"))?;
        let format = self.constant_string(format_ptr).ok_or_else(|| bad(self, "the format string is not a constant string"))?;
        let mut out = String::new();
        let mut operands: Vec<Word> = Vec::new();
        let mut dropped = Vec::new();
        let mut values = values.iter().copied();
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                out.push_str("%%");
                continue;
            }
            // %[flags][width][.precision][vN][length]conversion
            let mut spec = String::from("%");
            // DebugPrintf knows the flag `0` only: `-`, `+`, ` ` and `#` go.
            while let Some(&f) = chars.peek().filter(|f| "-+ #0".contains(**f)) {
                if f == '0' {
                    spec.push(f);
                }
                chars.next();
            }
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit() || **d == '.' || **d == '*') {
                if d == '*' {
                    return Err(bad(self, "`*` widths and precisions have no DebugPrintf form"));
                }
                spec.push(d);
                chars.next();
            }
            let mut vector = String::new();
            if chars.peek() == Some(&'v') {
                chars.next();
                vector.push('v');
                while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    vector.push(d);
                    chars.next();
                }
            }
            while chars.peek().is_some_and(|l| "hlLjzt".contains(*l)) {
                chars.next();
            }
            let conv = chars.next().ok_or_else(|| bad(self, "the format ends inside a conversion"))?;
            let value = values.next().ok_or_else(|| bad(self, &format!("no argument for `{spec}{vector}{conv}`")))?;
            match conv {
                's' => {
                    let text = self.constant_string(value).ok_or_else(|| bad(self, "a `%s` argument that is not a constant string"))?;
                    out.push_str(&text.replace('%', "%%"));
                }
                'd' | 'i' | 'o' | 'u' | 'x' | 'X' => {
                    let (v, wide) = self.printf_integer(value, matches!(conv, 'd' | 'i'));
                    out.push_str(&spec);
                    out.push_str(&vector);
                    if wide {
                        out.push('l');
                    }
                    out.push(conv);
                    operands.push(v);
                }
                'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                    let (v, gone) = self.printf_float(value);
                    dropped.extend(gone);
                    out.push_str(&spec);
                    out.push_str(&vector);
                    out.push(conv);
                    operands.push(v);
                }
                other => return Err(bad(self, &format!("`%{other}` has no DebugPrintf form"))),
            }
        }
        let set = self.b.module.ext_inst_import("NonSemantic.DebugPrintf");
        if self.b.module.version() < (1, 6) && !self.b.module.has_extension("SPV_KHR_non_semantic_info") {
            self.b.module.extensions.push(Inst::new(Op::Extension, None, None, vec![Operand::string("SPV_KHR_non_semantic_info")]));
        }
        let string = self.b.module.alloc_id();
        self.b.module.debug_source.push(Inst::new(Op::String, None, Some(string), vec![Operand::string(&out)]));
        let void = self.b.module.type_void();
        let mut ops = vec![Operand::Id(set), Operand::Literal(1), Operand::Id(string)];
        ops.extend(operands.into_iter().map(Operand::Id));
        self.b.emit(Op::ExtInst, void, ops);
        Ok(dropped)
    }

    /// An integer argument as DebugPrintf takes it: 32- or 64-bit components (narrower vector
    /// components widened, sign-extended for signed conversions); whether it is 64-bit.
    fn printf_integer(&mut self, v: Word, signed: bool) -> (Word, bool) {
        let ty = self.types.type_of(v).unwrap_or(0);
        let (_, n, w, is_float) = self.shape(ty);
        if is_float || w >= 32 {
            return (v, w == 64);
        }
        let i = self.b.module.type_int(32, false);
        let wide = if n > 1 { self.b.module.type_vector(i, n) } else { i };
        (self.op(if signed { Op::SConvert } else { Op::UConvert }, wide, &[v]), false)
    }

    /// A float argument as a 32-bit float (or vector); the `OpFConvert` to double it came
    /// from, when it came from one.
    fn printf_float(&mut self, v: Word) -> (Word, Option<Word>) {
        let ty = self.types.type_of(v).unwrap_or(0);
        let (_, n, w, _) = self.shape(ty);
        if w == 32 {
            return (v, None);
        }
        // A float promoted to double: print the float itself.
        let promoted = self.b.module.functions.iter().flat_map(|f| f.insts()).find(|i| i.result_id == Some(v) && i.is(Op::FConvert)).and_then(|i| i.id(0).ok());
        if let Some(src) = promoted.filter(|s| self.types.type_of(*s).is_some_and(|t| self.shape(t).2 == 32)) {
            return (src, Some(v));
        }
        let f = self.b.module.type_float(32);
        let narrow = if n > 1 { self.b.module.type_vector(f, n) } else { f };
        // A constant (clang folds the promotion of literals): the float constant itself.
        if let Some(c) = self.narrowed_constant(v, f, narrow) {
            return (c, None);
        }
        (self.op(Op::FConvert, narrow, &[v]), None)
    }

    /// Double constant `v` (scalar or composite) as a constant of 32-bit type `narrow`.
    fn narrowed_constant(&mut self, v: Word, f: Word, narrow: Word) -> Option<Word> {
        let def = self.b.module.globals().iter().find(|g| g.result_id == Some(v))?.clone();
        match def.op()? {
            Op::Constant => {
                let lo = def.operands.first()?.word()?;
                let hi = def.operands.get(1)?.word()?;
                let x = f64::from_bits(u64::from(lo) | (u64::from(hi) << 32)) as f32;
                Some(self.b.module.intern(Op::Constant, Some(f), vec![Operand::Literal(x.to_bits())]))
            }
            Op::ConstantComposite => {
                let parts: Vec<Word> = def.operands.iter().filter_map(Operand::id).map(|p| self.narrowed_constant(p, f, f)).collect::<Option<_>>()?;
                Some(self.b.module.constant_composite(narrow, &parts))
            }
            Op::ConstantNull => Some(self.b.module.constant_null(narrow)),
            _ => None,
        }
    }

    /// The text of a constant string `p` points at (through bitcasts, copies and access chains
    /// with constant indices into bytes), up to its NUL.
    fn constant_string(&self, p: Word) -> Option<String> {
        let mut at = p;
        let mut offset = 0usize;
        let var = loop {
            if let Some(g) = self.b.module.globals().iter().find(|g| g.result_id == Some(at)) {
                break g.clone();
            }
            let def = self.b.module.functions.iter().flat_map(|f| f.insts()).find(|i| i.result_id == Some(at))?;
            match def.op()? {
                Op::Bitcast | Op::CopyObject | Op::PtrCastToGeneric | Op::GenericCastToPtr => {}
                Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                    for idx in def.operands.iter().skip(1).filter_map(Operand::id) {
                        offset += self.types.const_u32(idx)? as usize;
                    }
                }
                _ => return None,
            }
            at = def.id(0).ok()?;
        };
        if !var.is(Op::Variable) {
            return None;
        }
        let init = var.operands.get(1).and_then(Operand::id)?;
        let def = self.b.module.globals().iter().find(|g| g.result_id == Some(init))?;
        let bytes: Vec<u8> = match def.op()? {
            Op::ConstantComposite => def.operands.iter().map(|o| o.id().and_then(|c| self.types.const_u32(c)).map(|b| b as u8)).collect::<Option<_>>()?,
            Op::ConstantNull => vec![0],
            _ => return None,
        };
        let tail = bytes.get(offset..)?;
        let end = tail.iter().position(|b| *b == 0).unwrap_or(tail.len());
        Some(String::from_utf8_lossy(&tail[..end]).into_owned())
    }
}
