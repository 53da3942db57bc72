//! A builder: emits instructions at an insertion cursor inside a function, with typed helpers,
//! structured `if` and counted loops (merge instructions included), and helper functions that
//! are emitted once per module.

use super::{Block, Function, Inst, Module, Operand, Origin};
use rspirv::grammar::OperandKind;
use spirv::{Op, Word};

/// Where the next instruction goes: function `function`, block `block`, before instruction
/// `index` of that block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub function: usize,
    pub block: usize,
    pub index: usize,
}

/// What [`Builder::loop_blocks`] made: block indices and labels, and the function.
struct LoopBlocks {
    pre_label: Word,
    header: usize,
    header_label: Word,
    body_block: usize,
    body_label: Word,
    cont: usize,
    cont_label: Word,
    merge_label: Word,
    f: usize,
}

pub struct Builder<'m> {
    pub module: &'m mut Module,
    pub cursor: Cursor,
    /// The origin given to every instruction emitted (the instruction being replaced).
    pub origin: Option<Origin>,
}

impl<'m> Builder<'m> {
    pub fn new(module: &'m mut Module, cursor: Cursor) -> Builder<'m> {
        Builder { module, cursor, origin: None }
    }

    /// A cursor before the terminator of block `block` of function `function`.
    pub fn before_terminator(module: &'m mut Module, function: usize, block: usize) -> Builder<'m> {
        let b = &module.functions[function].blocks[block];
        let index = b.insts.len() - usize::from(b.terminator().is_some());
        Builder::new(module, Cursor { function, block, index })
    }

    pub fn with_origin(mut self, origin: Option<Origin>) -> Self {
        self.origin = origin;
        self
    }

    fn block_mut(&mut self) -> &mut Block {
        &mut self.module.functions[self.cursor.function].blocks[self.cursor.block]
    }

    /// Inserts `inst` at the cursor and moves the cursor past it.
    pub fn insert(&mut self, mut inst: Inst) {
        if inst.origin.is_none() {
            inst.origin = self.origin;
        }
        let at = self.cursor.index;
        self.block_mut().insts.insert(at, inst);
        self.cursor.index += 1;
    }

    /// Emits `op` with result type `ty` and `operands`; returns the new result id.
    pub fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.module.alloc_id();
        self.insert(Inst::new(op, Some(ty), Some(id), operands));
        id
    }

    /// Emits `op` on id operands.
    pub fn op(&mut self, op: Op, ty: Word, args: &[Word]) -> Word {
        self.emit(op, ty, args.iter().map(|a| Operand::Id(*a)).collect())
    }

    /// Emits an instruction without a result.
    pub fn emit_void(&mut self, op: Op, operands: Vec<Operand>) {
        self.insert(Inst::new(op, None, None, operands));
    }

    pub fn iadd(&mut self, ty: Word, a: Word, b: Word) -> Word {
        self.op(Op::IAdd, ty, &[a, b])
    }
    pub fn imul(&mut self, ty: Word, a: Word, b: Word) -> Word {
        self.op(Op::IMul, ty, &[a, b])
    }
    /// Integer `v` made 32 bits wide (see [`crate::analysis::Types::conversion_to_32`]), as a value of `uint`.
    pub fn to_32_bits(&mut self, types: &crate::analysis::Types, uint: Word, v: Word) -> Word {
        match types.conversion_to_32(v) {
            Some(op) => self.op(op, uint, &[v]),
            None => v,
        }
    }
    /// Access-chain index `index` (any integer type) plus the 32-bit unsigned `offset` (see
    /// [`crate::analysis::Types::index_sum`]).
    pub fn index_plus(&mut self, types: &crate::analysis::Types, index: Word, offset: Word) -> Word {
        let plan = types.index_sum(self.module, index);
        plan.emit(index, offset, |op, ty, args| self.op(op, ty, args))
    }
    pub fn bitcast(&mut self, ty: Word, v: Word) -> Word {
        self.op(Op::Bitcast, ty, &[v])
    }
    pub fn select(&mut self, ty: Word, cond: Word, a: Word, b: Word) -> Word {
        self.op(Op::Select, ty, &[cond, a, b])
    }
    pub fn copy_object(&mut self, ty: Word, v: Word) -> Word {
        self.op(Op::CopyObject, ty, &[v])
    }

    /// `OpCompositeExtract` of literal index `index`.
    pub fn composite_extract(&mut self, ty: Word, composite: Word, index: u32) -> Word {
        self.emit(Op::CompositeExtract, ty, vec![Operand::Id(composite), Operand::Literal(index)])
    }

    pub fn load(&mut self, ty: Word, pointer: Word) -> Word {
        self.op(Op::Load, ty, &[pointer])
    }

    pub fn store(&mut self, pointer: Word, value: Word) {
        self.emit_void(Op::Store, vec![Operand::Id(pointer), Operand::Id(value)]);
    }

    pub fn access_chain(&mut self, ty: Word, base: Word, indices: &[Word]) -> Word {
        let mut ops = vec![Operand::Id(base)];
        ops.extend(indices.iter().map(|i| Operand::Id(*i)));
        self.emit(Op::AccessChain, ty, ops)
    }

    /// Moves the instructions from the cursor on (the terminator included) into a new block,
    /// and fixes the `OpPhi`s of the moved terminator's successors to name it. Returns the new
    /// block's index; the cursor stays at the end of the shortened block.
    fn split(&mut self) -> usize {
        let Cursor { function, block, index } = self.cursor;
        let label = self.module.alloc_id();
        let f = &mut self.module.functions[function];
        let old_label = f.blocks[block].id();
        let rest = f.blocks[block].insts.split_off(index);
        let mut new = Block::new(label);
        new.label.origin = self.origin;
        new.insts = rest;
        let succs: Vec<Word> = new.terminator().map(|t| t.operands.iter().filter_map(Operand::id).collect()).unwrap_or_default();
        for b in f.blocks.iter_mut().filter(|b| succs.contains(&b.id())) {
            for phi in b.insts.iter_mut().filter(|i| i.is(Op::Phi)) {
                for pair in phi.operands.chunks_mut(2) {
                    if pair.get(1) == Some(&Operand::Id(old_label)) {
                        pair[1] = Operand::Id(label);
                    }
                }
            }
        }
        f.blocks.insert(block + 1, new);
        block + 1
    }

    fn new_block_after(&mut self, after: usize) -> (usize, Word) {
        let label = self.module.alloc_id();
        let mut b = Block::new(label);
        b.label.origin = self.origin;
        self.module.functions[self.cursor.function].blocks.insert(after + 1, b);
        (after + 1, label)
    }

    fn label_of(&self, block: usize) -> Word {
        self.module.functions[self.cursor.function].blocks[block].id()
    }

    /// `if (cond) { then(..) }` at the cursor: the current block is split, the condition
    /// branches to a new block that `then` fills (with the builder at its end), and the cursor
    /// continues at the start of the merge block.
    pub fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Builder<'_>)) {
        let head = self.cursor.block;
        let merge = self.split();
        let (then_block, then_label) = self.new_block_after(head);
        let merge = merge + 1; // shifted by the inserted then-block
        let merge_label = self.label_of(merge);
        self.cursor = Cursor { function: self.cursor.function, block: head, index: self.module.functions[self.cursor.function].blocks[head].insts.len() };
        self.emit_void(Op::SelectionMerge, vec![Operand::Id(merge_label), Operand::Enum(OperandKind::SelectionControl, 0)]);
        self.emit_void(Op::BranchConditional, vec![Operand::Id(cond), Operand::Id(then_label), Operand::Id(merge_label)]);
        self.cursor = Cursor { function: self.cursor.function, block: then_block, index: 0 };
        then(self);
        self.emit_void(Op::Branch, vec![Operand::Id(merge_label)]);
        // `then` may have added blocks: find the merge block again.
        let merge = self.module.functions[self.cursor.function].block_index(merge_label).unwrap_or(merge);
        self.cursor = Cursor { function: self.cursor.function, block: merge, index: 0 };
    }

    /// `if (cond) { then(..) } else { other(..) }` at the cursor, as [`Builder::if_then`] with
    /// a second arm; the cursor continues at the start of the merge block.
    pub fn if_then_else(&mut self, cond: Word, then: impl FnOnce(&mut Builder<'_>), other: impl FnOnce(&mut Builder<'_>)) {
        let head = self.cursor.block;
        let merge = self.split();
        let (then_block, then_label) = self.new_block_after(head);
        let (else_block, else_label) = self.new_block_after(then_block);
        let merge = merge + 2; // shifted by the inserted arms
        let merge_label = self.label_of(merge);
        let f = self.cursor.function;
        self.cursor = Cursor { function: f, block: head, index: self.module.functions[f].blocks[head].insts.len() };
        self.emit_void(Op::SelectionMerge, vec![Operand::Id(merge_label), Operand::Enum(OperandKind::SelectionControl, 0)]);
        self.emit_void(Op::BranchConditional, vec![Operand::Id(cond), Operand::Id(then_label), Operand::Id(else_label)]);
        self.cursor = Cursor { function: f, block: then_block, index: 0 };
        then(self);
        self.emit_void(Op::Branch, vec![Operand::Id(merge_label)]);
        // `then` may have added blocks: find the else block again.
        let else_block = self.module.functions[f].block_index(else_label).unwrap_or(else_block);
        self.cursor = Cursor { function: f, block: else_block, index: 0 };
        other(self);
        self.emit_void(Op::Branch, vec![Operand::Id(merge_label)]);
        let merge = self.module.functions[f].block_index(merge_label).unwrap_or(merge);
        self.cursor = Cursor { function: f, block: merge, index: 0 };
    }

    /// The blocks of a structured loop at the cursor: the rest of the block moves to a merge
    /// block, and a header, body and continue block come between, the shortened block
    /// branching to the header.
    fn loop_blocks(&mut self) -> LoopBlocks {
        let pre = self.cursor.block;
        let pre_label = self.label_of(pre);
        self.split();
        let (header, header_label) = self.new_block_after(pre);
        let (body_block, body_label) = self.new_block_after(header);
        let (cont, cont_label) = self.new_block_after(body_block);
        let merge_label = self.label_of(cont + 1);
        let f = self.cursor.function;
        self.cursor = Cursor { function: f, block: pre, index: self.module.functions[f].blocks[pre].insts.len() };
        self.emit_void(Op::Branch, vec![Operand::Id(header_label)]);
        LoopBlocks { pre_label, header, header_label, body_block, body_label, cont, cont_label, merge_label, f }
    }

    /// A new `Function` variable of type `ty` at the top of the cursor's function.
    pub fn function_variable(&mut self, ty: Word) -> Word {
        self.function_variable_with(ty, None)
    }

    /// [`Builder::function_variable`] with an optional initializer (a constant of `ty`).
    pub fn function_variable_with(&mut self, ty: Word, initializer: Option<Word>) -> Word {
        let ptr = self.module.type_pointer(spirv::StorageClass::Function, ty);
        let id = self.module.alloc_id();
        let f = self.cursor.function;
        let mut operands = vec![Operand::storage_class(spirv::StorageClass::Function)];
        operands.extend(initializer.map(Operand::Id));
        let var = Inst::new(Op::Variable, Some(ptr), Some(id), operands).from_origin(self.origin);
        self.module.functions[f].blocks[0].insts.insert(0, var);
        if self.cursor.block == 0 {
            self.cursor.index += 1;
        }
        id
    }

    /// `do { done = body(..) } while (!done)` at the cursor, as a structured loop that leaves
    /// from its header only (header with a phi of `done` and `OpLoopMerge`, body, continue
    /// block, merge block); the cursor continues at the start of the merge block. Values of the
    /// body are not available there: pass them through a variable (SwiftShader runs the code
    /// after a loop left from its body only for the invocations that left last). A loop header
    /// the cursor is in first gets the loop's other instructions moved out to a block of their
    /// own, so that the header keeps its `OpLoopMerge` and its phis.
    pub fn retry_loop(&mut self, body: impl FnOnce(&mut Builder<'_>) -> Word) {
        self.separate_loop_header();
        let boolean = self.module.type_bool();
        let not_yet = self.module.constant_bool(false);
        let LoopBlocks { pre_label, header, header_label, body_block, body_label, cont, cont_label, merge_label, f } = self.loop_blocks();
        let (finished, done) = (self.module.alloc_id(), self.module.alloc_id());
        self.cursor = Cursor { function: f, block: header, index: 0 };
        self.insert(Inst::new(Op::Phi, Some(boolean), Some(finished), vec![Operand::Id(not_yet), Operand::Id(pre_label), Operand::Id(done), Operand::Id(cont_label)]));
        self.emit_void(Op::LoopMerge, vec![Operand::Id(merge_label), Operand::Id(cont_label), Operand::Enum(OperandKind::LoopControl, 0)]);
        self.emit_void(Op::BranchConditional, vec![Operand::Id(finished), Operand::Id(merge_label), Operand::Id(body_label)]);
        self.cursor = Cursor { function: f, block: body_block, index: 0 };
        let result = body(self);
        self.emit_void(Op::Branch, vec![Operand::Id(cont_label)]);
        let cont = self.module.functions[f].block_index(cont_label).unwrap_or(cont);
        self.cursor = Cursor { function: f, block: cont, index: 0 };
        self.insert(Inst::new(Op::CopyObject, Some(boolean), Some(done), vec![Operand::Id(result)]));
        self.emit_void(Op::Branch, vec![Operand::Id(header_label)]);
        let merge = self.module.functions[f].block_index(merge_label).unwrap_or(cont + 1);
        self.cursor = Cursor { function: f, block: merge, index: 0 };
    }

    /// An atomic read-modify-write built from `OpAtomicCompareExchange` on the 32-bit word at
    /// `word_ptr`, at the cursor: a [`Builder::retry_loop`] that reads the word, lets `update`
    /// compute the new word from it (emitting at the builder) and retries until the exchange
    /// finds the word unchanged. `equal` and `unequal` are the exchange's semantics on success
    /// and failure. `into` gets the word as it was before the update took effect.
    pub fn compare_exchange_loop(&mut self, into: Word, word_ptr: Word, scope: Word, (equal, unequal): (Word, Word), update: impl FnOnce(&mut Builder<'_>, Word) -> Word) {
        let u = self.module.type_int(32, false);
        // The word leaves the loop through a variable (see `retry_loop`).
        let found_word = self.function_variable(u);
        self.retry_loop(|b| {
            let relaxed = b.module.constant_u32(0);
            let word = b.op(Op::AtomicLoad, u, &[word_ptr, scope, relaxed]);
            b.store(found_word, word);
            let next = update(b, word);
            let found = b.op(Op::AtomicCompareExchange, u, &[word_ptr, scope, equal, unequal, next, word]);
            let boolean = b.module.type_bool();
            b.op(Op::IEqual, boolean, &[found, word])
        });
        self.insert(Inst::new(Op::Load, Some(u), Some(into), vec![Operand::Id(found_word)]));
    }

    /// Where the cursor's block is a loop header: everything after its phis but its
    /// `OpLoopMerge` moves into a new block that the header branches to, and the cursor follows.
    /// A header that was its own continue target names the new block instead (it now holds the
    /// back edge).
    pub(crate) fn separate_loop_header(&mut self) {
        let Cursor { function, block, index } = self.cursor;
        let insts = &self.module.functions[function].blocks[block].insts;
        let Some(at) = insts.iter().position(|i| i.is(Op::LoopMerge)) else { return };
        let first = insts.iter().position(|i| !matches!(i.op(), Some(Op::Phi | Op::Line | Op::NoLine))).unwrap_or(insts.len());
        let id = self.module.alloc_id();
        if let Some(rest) = super::cfg::separate_loop_header(&mut self.module.functions[function], block, id, true) {
            let moved = if at < index { 1 } else { 0 };
            self.cursor = Cursor { function, block: rest, index: index - first - moved };
        }
    }

    /// `for (i = start; i < end; i++) { body(.., i) }` over 32-bit unsigned `i`, at the cursor,
    /// as a structured loop (header with `OpLoopMerge`, body, continue block, merge block).
    pub fn counted_loop(&mut self, start: Word, end: Word, body: impl FnOnce(&mut Builder<'_>, Word)) {
        self.counted_loop_with(start, end, spirv::LoopControl::NONE, body);
    }

    /// [`Builder::counted_loop`] with the loop's `control` (`DontUnroll`, for one).
    pub fn counted_loop_with(&mut self, start: Word, end: Word, control: spirv::LoopControl, body: impl FnOnce(&mut Builder<'_>, Word)) {
        let uint = self.module.type_int(32, false);
        let boolean = self.module.type_bool();
        let one = self.module.constant_u32(1);
        let LoopBlocks { pre_label, header, header_label, body_block, body_label, cont, cont_label, merge_label, f } = self.loop_blocks();
        // Header: i = phi(start, next); loop merge; i < end.
        let i = self.module.alloc_id();
        let next = self.module.alloc_id();
        self.cursor = Cursor { function: f, block: header, index: 0 };
        self.insert(Inst::new(Op::Phi, Some(uint), Some(i), vec![Operand::Id(start), Operand::Id(pre_label), Operand::Id(next), Operand::Id(cont_label)]));
        let cond = self.op(Op::ULessThan, boolean, &[i, end]);
        self.emit_void(Op::LoopMerge, vec![Operand::Id(merge_label), Operand::Id(cont_label), Operand::Enum(OperandKind::LoopControl, control.bits())]);
        self.emit_void(Op::BranchConditional, vec![Operand::Id(cond), Operand::Id(body_label), Operand::Id(merge_label)]);
        self.cursor = Cursor { function: f, block: body_block, index: 0 };
        body(self, i);
        self.emit_void(Op::Branch, vec![Operand::Id(cont_label)]);
        let cont = self.module.functions[f].block_index(cont_label).unwrap_or(cont);
        self.cursor = Cursor { function: f, block: cont, index: 0 };
        self.insert(Inst::new(Op::IAdd, Some(uint), Some(next), vec![Operand::Id(i), Operand::Id(one)]));
        self.emit_void(Op::Branch, vec![Operand::Id(header_label)]);
        let merge = self.module.functions[f].block_index(merge_label).unwrap_or(cont + 1);
        self.cursor = Cursor { function: f, block: merge, index: 0 };
    }
}

impl Module {
    /// Rewrites, in every function, each instruction `matches` accepts: it is taken out, and
    /// `rewrite` emits what replaces it at a builder standing where it stood (with its origin);
    /// the walk goes on after what `rewrite` emitted. `state` is the rewrite's, which `matches`
    /// reads. Returns the opcodes of the instructions rewritten, in order.
    pub fn rewrite_matching<S>(
        &mut self,
        state: &mut S,
        matches: impl Fn(&S, &Inst) -> bool,
        mut rewrite: impl FnMut(&mut S, &mut Builder<'_>, &Inst) -> crate::error::Result<()>,
    ) -> crate::error::Result<Vec<u32>> {
        let mut rewritten = Vec::new();
        for function in 0..self.functions.len() {
            let mut block = 0;
            while block < self.functions[function].blocks.len() {
                let mut index = 0;
                while index < self.functions[function].blocks[block].insts.len() {
                    if !matches(state, &self.functions[function].blocks[block].insts[index]) {
                        index += 1;
                        continue;
                    }
                    let inst = self.functions[function].blocks[block].insts.remove(index);
                    let mut b = Builder::new(self, Cursor { function, block, index }).with_origin(inst.origin);
                    rewrite(state, &mut b, &inst)?;
                    (block, index) = (b.cursor.block, b.cursor.index);
                    rewritten.push(inst.opcode);
                }
                block += 1;
            }
        }
        Ok(rewritten)
    }

    /// Where the instruction with result `id` is, if a function holds it.
    pub fn cursor_of(&self, id: Word) -> Option<Cursor> {
        self.functions
            .iter()
            .enumerate()
            .find_map(|(function, f)| f.blocks.iter().enumerate().find_map(|(block, b)| b.insts.iter().position(|i| i.result_id == Some(id)).map(|index| Cursor { function, block, index })))
    }

    /// The function named `name` (by `OpName`), built by `build` the first time it is asked for.
    /// `build` receives the module, the new function's id and its parameter ids, and returns its
    /// blocks.
    pub fn helper_function(&mut self, name: &str, ret: Word, params: &[Word], build: impl FnOnce(&mut Module, &[Word]) -> Vec<Block>) -> Word {
        if let Some(f) = self.functions.iter().find(|f| self.name_of(f.id()).as_deref() == Some(name)) {
            return f.id();
        }
        let fn_ty = self.type_function(ret, params);
        let id = self.alloc_id();
        let param_ids: Vec<Word> = params.iter().map(|_| self.alloc_id()).collect();
        let blocks = build(self, &param_ids);
        let def = Inst::new(Op::Function, Some(ret), Some(id), vec![Operand::Enum(OperandKind::FunctionControl, 0), Operand::Id(fn_ty)]);
        let params = params.iter().zip(&param_ids).map(|(t, p)| Inst::new(Op::FunctionParameter, Some(*t), Some(*p), vec![])).collect();
        self.functions.push(Function { def, params, blocks, end: Inst::new(Op::FunctionEnd, None, None, vec![]) });
        self.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(id), Operand::string(name)]));
        id
    }
}
