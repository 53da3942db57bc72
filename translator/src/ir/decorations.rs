//! Decorations, built-in variables and global variables: look up, or create once.

use super::{Inst, Module, Operand};
use rspirv::grammar::OperandKind;
use spirv::{BuiltIn, Decoration, Op, StorageClass, Word};

impl Module {
    /// The `OpDecorate`s of `id`.
    pub fn decorations_of(&self, id: Word) -> impl Iterator<Item = &Inst> {
        self.annotations.iter().filter(move |a| a.is(Op::Decorate) && a.operands.first() == Some(&Operand::Id(id)))
    }

    /// The parameters of `id`'s decoration `d`, if it has one.
    pub fn decoration(&self, id: Word, d: Decoration) -> Option<Vec<Word>> {
        self.decorations_of(id).find(|a| a.word_opt(1) == Some(d as u32)).map(|a| a.operands[2..].iter().filter_map(Operand::word).collect())
    }

    /// Decorates `id` with `d` and literal `params` unless it already is.
    pub fn decorate(&mut self, id: Word, d: Decoration, params: &[Word]) {
        if self.decoration(id, d).is_some() {
            return;
        }
        let mut ops = vec![Operand::Id(id), Operand::decoration(d)];
        ops.extend(params.iter().map(|p| Operand::Literal(*p)));
        self.interner.clear();
        self.annotations.push(Inst::new(Op::Decorate, None, None, ops));
    }

    /// The `Offset` of member `member` of struct type `st`, if it has one.
    pub fn member_offset(&self, st: Word, member: u32) -> Option<u32> {
        self.annotations
            .iter()
            .find(|a| a.is(Op::MemberDecorate) && a.word_opt(0) == Some(st) && a.word_opt(1) == Some(member) && a.word_opt(2) == Some(Decoration::Offset as u32))
            .and_then(|a| a.word_opt(3))
    }

    /// The variable decorated `BuiltIn b`, if any.
    pub fn builtin_variable(&self, b: BuiltIn) -> Option<Word> {
        self.annotations
            .iter()
            .find(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::BuiltIn as u32) && a.word_opt(2) == Some(b as u32))
            .and_then(|a| a.operands.first().and_then(Operand::id))
            .filter(|id| self.globals().iter().any(|g| g.is(Op::Variable) && g.result_id == Some(*id)))
    }

    /// The pointee type of global variable `var` (its pointer type's), if it is one.
    pub fn variable_pointee(&self, var: Word) -> Option<Word> {
        let ptr = self.globals().iter().find(|g| g.result_id == Some(var) && g.is(Op::Variable))?.result_type?;
        self.globals().iter().find(|t| t.result_id == Some(ptr) && t.is(Op::TypePointer))?.id(1).ok()
    }

    /// The `Input` variable of built-in `b` with pointee type `ty`: the module's own, or a new
    /// one; either way listed in every entry point's interface (an earlier pass may have dropped
    /// the module's own from an entry point that no longer used it).
    pub fn get_or_add_builtin(&mut self, b: BuiltIn, ty: Word) -> Word {
        if let Some(v) = self.builtin_variable(b) {
            for ep in &mut self.entry_points {
                if !ep.operands.iter().skip(interface_start(ep)).any(|o| o.id() == Some(v)) {
                    ep.operands.push(Operand::Id(v));
                }
            }
            return v;
        }
        let ptr = self.type_pointer(StorageClass::Input, ty);
        let var = self.add_global_variable(ptr, StorageClass::Input, None);
        self.decorate(var, Decoration::BuiltIn, &[b as u32]);
        var
    }

    /// Adds a global `OpVariable` of pointer type `ptr` and adds it to every entry point's
    /// interface where the SPIR-V version requires it (Input and Output always; every storage
    /// class from 1.4 on).
    pub fn add_global_variable(&mut self, ptr: Word, class: StorageClass, initializer: Option<Word>) -> Word {
        let id = self.alloc_id();
        let mut ops = vec![Operand::Enum(OperandKind::StorageClass, class as u32)];
        ops.extend(initializer.map(Operand::Id));
        self.add_global(Inst::new(Op::Variable, Some(ptr), Some(id), ops));
        if matches!(class, StorageClass::Input | StorageClass::Output) || self.version() >= (1, 4) {
            for ep in &mut self.entry_points {
                ep.operands.push(Operand::Id(id));
            }
        }
        id
    }

    /// Makes every entry point's interface list exactly the global variables its function and
    /// the functions it calls use (Input and Output only before SPIR-V 1.4, every storage class
    /// from 1.4 on). Passes that add or remove globals call it once at the end.
    pub fn rebuild_entry_interfaces(&mut self) {
        for (e, used) in self.interface_uses() {
            let ep = &mut self.entry_points[e];
            ep.operands.truncate(interface_start(ep));
            ep.operands.extend(used.into_iter().map(Operand::Id));
        }
    }

    /// Adds to every entry point's interface the global variables its functions use and it does
    /// not list yet (as [`Module::rebuild_entry_interfaces`] counts them), keeping the rest.
    /// Returns how many it added.
    pub fn complete_entry_interfaces(&mut self) -> usize {
        let mut added = 0;
        for (e, used) in self.interface_uses() {
            let ep = &mut self.entry_points[e];
            let listed: std::collections::HashSet<Word> = ep.operands[interface_start(ep)..].iter().filter_map(Operand::id).collect();
            for id in used.into_iter().filter(|id| !listed.contains(id)) {
                ep.operands.push(Operand::Id(id));
                added += 1;
            }
        }
        added
    }

    /// For each entry point (by index), the global variables its interface must list, in order
    /// of first use: its function's, then those of the functions it calls in module order.
    fn interface_uses(&self) -> Vec<(usize, Vec<Word>)> {
        let all_classes = self.version() >= (1, 4);
        let vars: std::collections::HashMap<Word, u32> = self.globals().iter().filter(|g| g.is(Op::Variable)).filter_map(|g| Some((g.result_id?, g.word_opt(0)?))).collect();
        let mut out = Vec::new();
        for (e, ep) in self.entry_points.iter().enumerate() {
            let Some(f) = ep.operands.get(1).and_then(Operand::id) else { continue };
            let reached = self.functions_reached_from([f]);
            let funcs = self.functions.iter().filter(|x| x.id() == f).chain(self.functions.iter().filter(|x| x.id() != f && reached.contains(&x.id())));
            let mut used: Vec<Word> = Vec::new();
            for inst in funcs.flat_map(|func| func.insts()) {
                for id in inst.used_ids() {
                    if let Some(class) = vars.get(&id) {
                        let io = *class == StorageClass::Input as u32 || *class == StorageClass::Output as u32;
                        if (io || all_classes) && !used.contains(&id) {
                            used.push(id);
                        }
                    }
                }
            }
            out.push((e, used));
        }
        out
    }
}

/// The index of the first interface operand of `OpEntryPoint` `ep` (after the execution model,
/// the function and the name).
fn interface_start(ep: &Inst) -> usize {
    2 + ep.operands.iter().skip(2).take_while(|o| matches!(o, Operand::String(_))).count()
}
