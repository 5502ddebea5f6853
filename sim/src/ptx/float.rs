//! Floating-point semantics of PTX (ISA chapter "Floating-Point Instructions" and `cvt`):
//! correctly rounded `.rn/.rz/.rm/.rp` arithmetic, `.ftz`, `.sat`, NaN rules and conversions.
//!
//! Directed rounding: the round-to-nearest result `r` is exact or one ulp from the directed one;
//! the sign of the exact error (`TwoSum` for add, an FMA residual for mul/div/sqrt) says which
//! neighbour the directed mode wants. Core has no float math without std, so square roots,
//! FMAs and the transcendentals come from `libm`.

use core::cmp::Ordering;

use super::inst::{Round, Ty};

/// PTX's canonical NaNs.
pub const NAN_F32: u32 = 0x7FFF_FFFF;
pub const NAN_F64: u64 = 0x7FFF_FFFF_FFFF_FFFF;

pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

fn next_up32(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let b = x.to_bits();
    f32::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down32(x: f32) -> f32 {
    -next_up32(-x)
}

fn next_up64(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down64(x: f64) -> f64 {
    -next_up64(-x)
}

/// Moves the round-to-nearest result `r` to the directed result, given the sign of
/// `exact - r`.
macro_rules! directed {
    ($name:ident, $t:ty, $up:ident, $down:ident) => {
        pub fn $name(r: $t, err: Ordering, mode: Round) -> $t {
            if r.is_nan() {
                return r;
            }
            if r.is_infinite() {
                // Overflow: the directed modes stop at the largest finite value on their side.
                return match (mode, r > 0.0) {
                    (Round::Rz, true) | (Round::Rm, true) => <$t>::MAX,
                    (Round::Rz, false) | (Round::Rp, false) => <$t>::MIN,
                    _ => r,
                };
            }
            match (mode, err) {
                (Round::Rz, Ordering::Less) if r > 0.0 => $down(r),
                (Round::Rz, Ordering::Greater) if r < 0.0 => $up(r),
                (Round::Rm, Ordering::Less) => $down(r),
                (Round::Rp, Ordering::Greater) => $up(r),
                _ => r,
            }
        }
    };
}
directed!(directed32, f32, next_up32, next_down32);
directed!(directed64, f64, next_up64, next_down64);

fn sign32(x: f32) -> Ordering {
    x.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}
fn sign64(x: f64) -> Ordering {
    x.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}
fn mul_sign(a: Ordering, b: Ordering) -> Ordering {
    match (a, b) {
        (Ordering::Equal, _) | (_, Ordering::Equal) => Ordering::Equal,
        (x, y) if x == y => Ordering::Greater,
        _ => Ordering::Less,
    }
}

macro_rules! arith {
    ($add:ident, $mul:ident, $div:ident, $sqrt:ident, $t:ty, $fma:path, $sqrtf:path, $dir:ident, $sign:ident) => {
        pub fn $add(a: $t, b: $t, mode: Round) -> $t {
            let s = a + b;
            if matches!(mode, Round::Rn | Round::None) || !s.is_finite() && !(a.is_finite() && b.is_finite()) {
                return s;
            }
            if s.is_infinite() {
                return $dir(s, Ordering::Equal, mode);
            }
            // TwoSum: the exact error of the rounded sum.
            let bb = s - a;
            let e = (a - (s - bb)) + (b - bb);
            let r = $dir(s, $sign(e), mode);
            // An exact zero sum of opposite signs is -0 when rounding toward -inf.
            if r == 0.0 && e == 0.0 && mode == Round::Rm && (a != 0.0 || b != 0.0) {
                return -0.0;
            }
            r
        }
        pub fn $mul(a: $t, b: $t, mode: Round) -> $t {
            let p = a * b;
            if matches!(mode, Round::Rn | Round::None) || !(a.is_finite() && b.is_finite()) {
                return p;
            }
            if p.is_infinite() {
                return $dir(p, Ordering::Equal, mode);
            }
            $dir(p, $sign($fma(a, b, -p)), mode)
        }
        pub fn $div(a: $t, b: $t, mode: Round) -> $t {
            let q = a / b;
            if matches!(mode, Round::Rn | Round::None | Round::Approx) || !(a.is_finite() && b.is_finite()) || b == 0.0
            {
                return q;
            }
            if q.is_infinite() {
                return $dir(q, Ordering::Equal, mode);
            }
            // a - q*b is exact; the true quotient is above q when it has b's sign.
            $dir(q, mul_sign($sign($fma(-q, b, a)), $sign(b)), mode)
        }
        pub fn $sqrt(a: $t, mode: Round) -> $t {
            let r = $sqrtf(a);
            if matches!(mode, Round::Rn | Round::None | Round::Approx) || !r.is_finite() || r == 0.0 {
                return r;
            }
            $dir(r, $sign($fma(-r, r, a)), mode)
        }
    };
}
arith!(add32, mul32, div32, sqrt32, f32, libm::fmaf, libm::sqrtf, directed32, sign32);
arith!(add64, mul64, div64, sqrt64, f64, libm::fma, libm::sqrt, directed64, sign64);

pub fn fma32(a: f32, b: f32, c: f32) -> f32 {
    libm::fmaf(a, b, c)
}

pub fn fma64(a: f64, b: f64, c: f64) -> f64 {
    libm::fma(a, b, c)
}

/// `min`/`max`: a NaN operand yields the other; both NaN yield the canonical NaN; -0 < +0.
pub fn min_max64(a: f64, b: f64, max: bool) -> Option<f64> {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => None,
        (true, false) => Some(b),
        (false, true) => Some(a),
        _ if a == 0.0 && b == 0.0 => {
            let a_neg = a.is_sign_negative();
            Some(if a_neg != max { a } else { b })
        }
        _ => Some(if (a < b) != max { a } else { b }),
    }
}

/// Saturates to [0, 1]; NaN becomes 0.
pub fn sat64(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// Rounds `x` to an integral value by an integer rounding mode.
pub fn round_integral(x: f64, mode: Round) -> f64 {
    match mode {
        Round::Rni => libm::rint(x),
        Round::Rmi => libm::floor(x),
        Round::Rpi => libm::ceil(x),
        Round::Rzi => libm::trunc(x),
        _ => x,
    }
}

pub fn round_integral32(x: f32, mode: Round) -> f32 {
    match mode {
        Round::Rni => libm::rintf(x),
        Round::Rmi => libm::floorf(x),
        Round::Rpi => libm::ceilf(x),
        Round::Rzi => libm::truncf(x),
        _ => x,
    }
}

/// An integer value (as i128) to f32 with a rounding mode.
pub fn int_to_f32(v: i128, mode: Round) -> f32 {
    let r = v as f32;
    let back = r as i128;
    let err = if r.is_infinite() { Ordering::Equal } else { v.cmp(&back) };
    directed32(r, err, mode)
}

pub fn int_to_f64(v: i128, mode: Round) -> f64 {
    let r = v as f64;
    let back = r as i128;
    let err = if r.is_infinite() { Ordering::Equal } else { v.cmp(&back) };
    directed64(r, err, mode)
}

/// f64 to f32 with a rounding mode.
pub fn f64_to_f32(x: f64, mode: Round) -> f32 {
    let r = x as f32;
    if x.is_nan() {
        return f32::from_bits(NAN_F32);
    }
    if r.is_infinite() && x.is_finite() {
        return directed32(r, Ordering::Equal, mode);
    }
    let err = x.partial_cmp(&(r as f64)).unwrap_or(Ordering::Equal);
    directed32(r, err, mode)
}

/// A float (as f64) to an integer type: rounded by `mode` (truncation when none), NaN to 0,
/// saturated to the type's range (PTX float-to-int conversions always saturate).
pub fn float_to_int(x: f64, mode: Round, ty: Ty) -> u64 {
    if x.is_nan() {
        return 0;
    }
    let r = round_integral(x, if mode == Round::None { Round::Rzi } else { mode });
    let (lo, hi): (i128, i128) = match (ty.bits(), ty.is_signed()) {
        (8, true) => (i8::MIN as i128, i8::MAX as i128),
        (16, true) => (i16::MIN as i128, i16::MAX as i128),
        (32, true) => (i32::MIN as i128, i32::MAX as i128),
        (64, true) => (i64::MIN as i128, i64::MAX as i128),
        (8, false) => (0, u8::MAX as i128),
        (16, false) => (0, u16::MAX as i128),
        (32, false) => (0, u32::MAX as i128),
        _ => (0, u64::MAX as i128),
    };
    // `as i128` saturates at i128's range, far outside every PTX type.
    ((r as i128).clamp(lo, hi)) as u64
}

/// `sin/cos/ex2/lg2.approx.f32`: libm (error < 1 ulp, within the ISA's bounds).
pub fn sin32(x: f32) -> f32 {
    libm::sinf(x)
}
pub fn cos32(x: f32) -> f32 {
    libm::cosf(x)
}
pub fn ex2_32(x: f32) -> f32 {
    libm::exp2f(x)
}
pub fn lg2_32(x: f32) -> f32 {
    libm::log2f(x)
}
pub fn sqrt_f64(x: f64) -> f64 {
    libm::sqrt(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_brackets_the_exact_value() {
        // 1/3 is between the rz/rm result and the rp result, one ulp apart.
        let lo = div32(1.0, 3.0, Round::Rz);
        let hi = div32(1.0, 3.0, Round::Rp);
        assert_eq!(div32(1.0, 3.0, Round::Rm), lo);
        assert_eq!(hi.to_bits(), lo.to_bits() + 1);
        assert!((lo as f64) < 1.0 / 3.0 && (hi as f64) > 1.0 / 3.0);
        // Exact results are never moved.
        assert_eq!(div32(1.0, 4.0, Round::Rp), 0.25);
        assert_eq!(sqrt32(4.0, Round::Rz), 2.0);
        let s = sqrt32(2.0, Round::Rz);
        assert!((s as f64) * (s as f64) < 2.0);
        assert!((sqrt32(2.0, Round::Rp) as f64).powi(2) > 2.0);
        // add: 1 + 2^-30 rounds to 1 (rn, rz, rm), to next_up(1) for rp.
        let tiny = f32::from_bits(0x3080_0000);
        assert_eq!(add32(1.0, tiny, Round::Rz), 1.0);
        assert_eq!(add32(1.0, tiny, Round::Rp), next_up32(1.0));
        assert_eq!(add32(-1.0, -tiny, Round::Rz), -1.0);
        assert_eq!(add32(-1.0, -tiny, Round::Rm), -next_up32(1.0));
        assert_eq!(mul32(f32::MAX, 2.0, Round::Rz), f32::MAX);
    }

    #[test]
    fn conversions_round_and_saturate() {
        assert_eq!(float_to_int(2.5, Round::Rni, Ty::S32), 2);
        assert_eq!(float_to_int(3.5, Round::Rni, Ty::S32), 4);
        assert_eq!(float_to_int(-2.5, Round::Rmi, Ty::S32) as i32, -3);
        assert_eq!(float_to_int(-2.5, Round::Rpi, Ty::S32) as i32, -2);
        assert_eq!(float_to_int(1e20, Round::Rzi, Ty::S32), i32::MAX as u64);
        assert_eq!(float_to_int(-1.0, Round::Rzi, Ty::U32), 0);
        assert_eq!(float_to_int(f64::NAN, Round::Rzi, Ty::S64), 0);
        assert_eq!(int_to_f32(16_777_217, Round::Rn), 16_777_216.0);
        assert_eq!(int_to_f32(16_777_217, Round::Rp), 16_777_218.0);
        assert_eq!(int_to_f32(-16_777_217, Round::Rz), -16_777_216.0);
        assert_eq!(f64_to_f32(1.0 + 1e-12, Round::Rp), next_up32(1.0));
        assert_eq!(f64_to_f32(1.0 + 1e-12, Round::Rz), 1.0);
        assert_eq!(min_max64(-0.0, 0.0, false).map(f64::to_bits), Some((-0.0f64).to_bits()));
        assert_eq!(min_max64(f64::NAN, 3.0, true), Some(3.0));
        assert_eq!(min_max64(f64::NAN, f64::NAN, true), None);
    }
}
