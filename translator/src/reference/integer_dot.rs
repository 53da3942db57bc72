//! SPV_KHR_integer_dot_product: OpSDot, OpUDot, OpSUDot and their AccSat forms.
//!
//! Inputs are given as components already read at their declared width (`i64` holding the
//! component's bit pattern interpreted per the instruction's signedness), results as the low
//! `width` bits.

/// Signedness of the two operands: SDot (signed, signed), UDot (unsigned, unsigned),
/// SUDot (signed, unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DotKind {
    S,
    U,
    Su,
}

/// Extends the low `bits` of `raw` as signed or unsigned.
pub fn extend(raw: u64, bits: u32, signed: bool) -> i128 {
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let v = raw & mask;
    if signed && bits < 64 && v & (1 << (bits - 1)) != 0 {
        v as i128 - (1i128 << bits)
    } else if signed && bits == 64 {
        v as i64 as i128
    } else {
        v as i128
    }
}

/// The exact dot product of two vectors of `comp_bits`-wide components (raw bit patterns).
pub fn exact_dot(kind: DotKind, a: &[u64], b: &[u64], comp_bits: u32) -> i128 {
    let (sa, sb) = match kind {
        DotKind::S => (true, true),
        DotKind::U => (false, false),
        DotKind::Su => (true, false),
    };
    a.iter().zip(b).map(|(x, y)| extend(*x, comp_bits, sa) * extend(*y, comp_bits, sb)).sum()
}

/// Low `width` bits of a value.
pub fn wrap(v: i128, width: u32) -> u64 {
    let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    (v as u64) & mask
}

/// `OpSDot` / `OpUDot` / `OpSUDot`: the low `width` bits of the exact dot product.
pub fn dot(kind: DotKind, a: &[u64], b: &[u64], comp_bits: u32, width: u32) -> u64 {
    wrap(exact_dot(kind, a, b, comp_bits), width)
}

/// The AccSat forms: dot product plus accumulator, saturated to the result type. SDot and SUDot
/// saturate signed, UDot unsigned. (The spec leaves the result undefined when the dot product
/// itself overflows the result width; this model computes it exactly.)
pub fn dot_acc_sat(kind: DotKind, a: &[u64], b: &[u64], acc: u64, comp_bits: u32, width: u32) -> u64 {
    let d = exact_dot(kind, a, b, comp_bits);
    if kind == DotKind::U {
        let acc = extend(acc, width, false);
        let max = if width == 64 { u64::MAX as i128 } else { (1i128 << width) - 1 };
        wrap((acc + d).min(max), width)
    } else {
        let acc = extend(acc, width, true);
        let min = -(1i128 << (width - 1));
        let max = (1i128 << (width - 1)) - 1;
        wrap((acc + d).clamp(min, max), width)
    }
}

/// Splits a packed 4x8 operand into its four bytes, component 0 in the least significant byte.
pub fn unpack4x8(v: u32) -> [u64; 4] {
    [0, 1, 2, 3].map(|i| ((v >> (8 * i)) & 0xff) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_components_follow_byte_significance() {
        assert_eq!(unpack4x8(0x0403_02ff), [0xff, 2, 3, 4]);
        // SDot: 0xff is -1.
        assert_eq!(dot(DotKind::S, &unpack4x8(0x0403_02ff), &unpack4x8(0x0101_0101), 8, 32), 8);
        // UDot: 0xff is 255.
        assert_eq!(dot(DotKind::U, &unpack4x8(0x0403_02ff), &unpack4x8(0x0101_0101), 8, 32), 264);
        // SUDot: first signed, second unsigned.
        assert_eq!(dot(DotKind::Su, &unpack4x8(0xff), &unpack4x8(0xff), 8, 32) as u32 as i32, -255);
    }

    #[test]
    fn narrow_results_keep_the_low_bits() {
        // 4 * (127*127) = 64516 = 0xfc04 -> low 8 bits 0x04.
        let a = [127u64; 4];
        assert_eq!(dot(DotKind::S, &a, &a, 8, 8), 0x04);
        assert_eq!(dot(DotKind::S, &a, &a, 8, 16), 0xfc04);
    }

    #[test]
    fn acc_sat_saturates_per_signedness() {
        let a = [127u64; 4];
        assert_eq!(dot_acc_sat(DotKind::S, &a, &a, i32::MAX as u64, 8, 32), i32::MAX as u32 as u64);
        let neg = [0x80u64; 4]; // -128
        assert_eq!(dot_acc_sat(DotKind::Su, &neg, &[255; 4], i32::MIN as u32 as u64, 8, 32), i32::MIN as u32 as u64);
        assert_eq!(dot_acc_sat(DotKind::U, &[255; 4], &[255; 4], u32::MAX as u64 - 5, 8, 32), u32::MAX as u64);
        assert_eq!(dot_acc_sat(DotKind::U, &[1; 4], &[1; 4], 10, 8, 32), 14);
    }
}
