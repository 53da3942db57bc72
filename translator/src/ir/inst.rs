//! Instructions: opcode, result type and result id apart, operands typed by the grammar.

use super::grammar::{self, op_name};
use crate::error::{Error, Result};
use rspirv::grammar::OperandKind;
use spirv::{Op, Word};

/// One operand, as the grammar types it. Every variant keeps its words exactly.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// An `<id>` (IdRef, IdScope, IdMemorySemantics, ids of pairs).
    Id(Word),
    /// A literal word: integers, floats, context-dependent numbers, extended-instruction and
    /// spec-constant opcodes, and the words of instructions the grammar does not know.
    Literal(Word),
    /// An enumerant or mask of the given kind (StorageClass, Decoration, MemoryAccess, ...).
    Enum(OperandKind, Word),
    /// A literal string's words (NUL-terminated, padded), as they came.
    String(Vec<Word>),
}

impl Operand {
    pub fn id(&self) -> Option<Word> {
        match self {
            Operand::Id(id) => Some(*id),
            _ => None,
        }
    }

    /// The single word of an id, literal or enumerant.
    pub fn word(&self) -> Option<Word> {
        match self {
            Operand::Id(w) | Operand::Literal(w) | Operand::Enum(_, w) => Some(*w),
            Operand::String(_) => None,
        }
    }

    pub fn word_count(&self) -> usize {
        match self {
            Operand::String(s) => s.len(),
            _ => 1,
        }
    }

    fn push_words(&self, out: &mut Vec<Word>) {
        match self {
            Operand::Id(w) | Operand::Literal(w) | Operand::Enum(_, w) => out.push(*w),
            Operand::String(s) => out.extend_from_slice(s),
        }
    }

    /// A string operand from text.
    pub fn string(s: &str) -> Operand {
        Operand::String(string_words(s))
    }

    /// A storage-class operand.
    pub fn storage_class(class: spirv::StorageClass) -> Operand {
        Operand::Enum(OperandKind::StorageClass, class as Word)
    }

    /// A decoration operand.
    pub fn decoration(d: spirv::Decoration) -> Operand {
        Operand::Enum(OperandKind::Decoration, d as Word)
    }
}

/// Where an instruction came from: the word offset and position of the input instruction it
/// is, or that it replaces. Instructions a pass creates copy the origin of what they replace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Origin {
    pub offset: u32,
    pub index: u32,
}

/// One instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inst {
    pub opcode: u32,
    pub result_type: Option<Word>,
    pub result_id: Option<Word>,
    pub operands: Vec<Operand>,
    pub origin: Option<Origin>,
}

impl Inst {
    pub fn new(op: Op, result_type: Option<Word>, result_id: Option<Word>, operands: Vec<Operand>) -> Inst {
        Inst { opcode: op as u32, result_type, result_id, operands, origin: None }
    }

    /// The same instruction, carrying `origin`.
    pub fn from_origin(mut self, origin: Option<Origin>) -> Inst {
        self.origin = origin;
        self
    }

    /// The opcode as the `spirv` crate's enum; `None` for opcodes it does not know.
    pub fn op(&self) -> Option<Op> {
        Op::from_u32(self.opcode)
    }

    pub fn is(&self, op: Op) -> bool {
        self.opcode == op as u32
    }

    pub fn name(&self) -> String {
        op_name(self.opcode)
    }

    /// Word offset in the input module (0 for instructions with no origin).
    pub fn at(&self) -> usize {
        self.origin.map_or(0, |o| o.offset as usize)
    }

    /// Operand `k` (after the result type and id).
    pub fn operand(&self, k: usize) -> Result<&Operand> {
        self.operands.get(k).ok_or_else(|| self.malformed(format!("has no operand {k}")))
    }

    /// Operand `k` as an id.
    pub fn id(&self, k: usize) -> Result<Word> {
        self.operand(k)?.id().ok_or_else(|| self.malformed(format!("operand {k} is not an id")))
    }

    /// Operand `k` as a single word (literal, enumerant or id).
    pub fn word(&self, k: usize) -> Result<Word> {
        self.operand(k)?.word().ok_or_else(|| self.malformed(format!("operand {k} is a string")))
    }

    /// Operand `k` as a word if present.
    pub fn word_opt(&self, k: usize) -> Option<Word> {
        self.operands.get(k).and_then(Operand::word)
    }

    /// The first `N` operands as ids.
    pub fn ids<const N: usize>(&self) -> Result<[Word; N]> {
        let mut out = [0; N];
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = self.id(k)?;
        }
        Ok(out)
    }

    /// The result type, or an error naming the instruction.
    pub fn ty(&self) -> Result<Word> {
        self.result_type.ok_or_else(|| self.malformed("has no result type".into()))
    }

    /// The result id, or an error naming the instruction.
    pub fn result(&self) -> Result<Word> {
        self.result_id.ok_or_else(|| self.malformed("has no result id".into()))
    }

    /// Operand `k` decoded as a string.
    pub fn string(&self, k: usize) -> Option<String> {
        match self.operands.get(k)? {
            Operand::String(words) => Some(words_to_string(words)),
            _ => None,
        }
    }

    /// Every id the instruction refers to (result type included, result id not).
    pub fn used_ids(&self) -> impl Iterator<Item = Word> + '_ {
        self.result_type.into_iter().chain(self.operands.iter().filter_map(Operand::id))
    }

    /// Applies `f` to every id the instruction refers to (result type included, result id not).
    pub fn map_used_ids(&mut self, mut f: impl FnMut(Word) -> Word) {
        if let Some(t) = self.result_type.as_mut() {
            *t = f(*t);
        }
        for o in self.operands.iter_mut() {
            if let Operand::Id(id) = o {
                *id = f(*id);
            }
        }
    }

    /// Words the instruction takes, the first word included.
    pub fn word_count(&self) -> usize {
        1 + usize::from(self.result_type.is_some()) + usize::from(self.result_id.is_some()) + self.operands.iter().map(Operand::word_count).sum::<usize>()
    }

    /// Appends the instruction's words to `out`.
    pub fn encode(&self, out: &mut Vec<Word>) {
        let start = out.len();
        out.push(self.opcode);
        out.extend(self.result_type);
        out.extend(self.result_id);
        for o in &self.operands {
            o.push_words(out);
        }
        out[start] |= ((out.len() - start) as Word) << 16;
    }

    pub(crate) fn malformed(&self, what: String) -> Error {
        Error::Malformed { offset: self.at(), message: format!("{} {what}", self.name()) }
    }

    /// Grammar information for this opcode, if known.
    pub fn info(&self) -> Option<&'static grammar::OpInfo> {
        grammar::info(self.opcode)
    }
}

/// Encodes a string as SPIR-V literal words (NUL-terminated, padded).
pub fn string_words(s: &str) -> Vec<Word> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Decodes SPIR-V literal string words.
pub fn words_to_string(words: &[Word]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}
