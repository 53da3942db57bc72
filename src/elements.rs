//! Little-endian element bytes read as numbers, for every component type: how the probe and
//! launch files read results back from buffers.

use matbridge_translator::profile::ComponentType;

/// The element of type `t` at the start of `b` as a number; fp8 (which has no model here) is
/// NaN, and so is a slice shorter than the element.
pub fn decode(t: ComponentType, b: &[u8]) -> f64 {
    use ComponentType::*;
    let Some(b) = b.get(..(t.bits() / 8) as usize) else { return f64::NAN };
    let word = |b: &[u8]| [b[0], b[1], b[2], b[3]];
    let dword = |b: &[u8]| b.try_into().unwrap_or([0; 8]);
    match t {
        F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
        Bf16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
        F32 => f32::from_le_bytes(word(b)) as f64,
        F64 => f64::from_le_bytes(dword(b)),
        S8 => b[0] as i8 as f64,
        U8 => b[0] as f64,
        S16 => i16::from_le_bytes([b[0], b[1]]) as f64,
        U16 => u16::from_le_bytes([b[0], b[1]]) as f64,
        S32 => i32::from_le_bytes(word(b)) as f64,
        U32 => u32::from_le_bytes(word(b)) as f64,
        S64 => i64::from_le_bytes(dword(b)) as f64,
        U64 => u64::from_le_bytes(dword(b)) as f64,
        E4m3 | E5m2 => f64::NAN,
    }
}
