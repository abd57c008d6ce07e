//! Accumulation operations and the value types accumulators reduce.
//!
//! Values travel through the phaser tree as 64-bit patterns (one atomic
//! cell per node and phase parity); [`AccumValue`] converts to and from
//! them and defines each operation with its identity.

use std::fmt::Debug;

use crate::mode::PhaserError;
use crate::tree::Combiner;

/// A reduction operation of an accumulator (after `MPI_Op`'s predefined
/// operations, MPI 4.0 §6.9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccumOp {
    /// Sum (wrapping for integers).
    Sum,
    /// Product (wrapping for integers).
    Prod,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Bitwise and (integers).
    BitAnd,
    /// Bitwise or (integers).
    BitOr,
    /// Bitwise exclusive or (integers).
    BitXor,
    /// Logical and: non-zero is true, the result is 0 or 1 (integers).
    LogicalAnd,
    /// Logical or (integers).
    LogicalOr,
    /// Logical exclusive or (integers).
    LogicalXor,
}

impl AccumOp {
    /// Every operation.
    pub const ALL: [AccumOp; 10] = [
        AccumOp::Sum,
        AccumOp::Prod,
        AccumOp::Min,
        AccumOp::Max,
        AccumOp::BitAnd,
        AccumOp::BitOr,
        AccumOp::BitXor,
        AccumOp::LogicalAnd,
        AccumOp::LogicalOr,
        AccumOp::LogicalXor,
    ];

    /// The operation's name (`SUM`, `BAND`, … as in MPI).
    ///
    /// ```
    /// assert_eq!(hcmpi_phasers::AccumOp::BitAnd.name(), "BAND");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            AccumOp::Sum => "SUM",
            AccumOp::Prod => "PROD",
            AccumOp::Min => "MIN",
            AccumOp::Max => "MAX",
            AccumOp::BitAnd => "BAND",
            AccumOp::BitOr => "BOR",
            AccumOp::BitXor => "BXOR",
            AccumOp::LogicalAnd => "LAND",
            AccumOp::LogicalOr => "LOR",
            AccumOp::LogicalXor => "LXOR",
        }
    }

    /// The hc-mpi reduction with the same meaning.
    ///
    /// ```
    /// assert_eq!(hcmpi_phasers::AccumOp::Max.mpi(), hc_mpi::ReduceOp::Max);
    /// ```
    #[cfg(feature = "mpi")]
    pub fn mpi(self) -> hc_mpi::ReduceOp {
        use hc_mpi::ReduceOp as R;
        match self {
            AccumOp::Sum => R::Sum,
            AccumOp::Prod => R::Prod,
            AccumOp::Min => R::Min,
            AccumOp::Max => R::Max,
            AccumOp::BitAnd => R::BitAnd,
            AccumOp::BitOr => R::BitOr,
            AccumOp::BitXor => R::BitXor,
            AccumOp::LogicalAnd => R::LogicalAnd,
            AccumOp::LogicalOr => R::LogicalOr,
            AccumOp::LogicalXor => R::LogicalXor,
        }
    }

    fn index(self) -> u8 {
        self as u8
    }

    fn from_index(index: u8) -> AccumOp {
        AccumOp::ALL[index as usize]
    }
}

/// A type an accumulator can reduce: integers and floats up to 64 bits.
pub trait AccumValue: Copy + Send + Sync + PartialEq + Debug + 'static {
    /// The value as a 64-bit pattern.
    fn to_bits(self) -> u64;
    /// The value of a pattern made by [`to_bits`](Self::to_bits).
    fn from_bits(bits: u64) -> Self;
    /// The identity of `op`, or `None` if `op` is not defined for the type.
    fn identity(op: AccumOp) -> Option<Self>;
    /// `a op b` (only called for operations with an identity).
    fn combine(op: AccumOp, a: Self, b: Self) -> Self;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl AccumValue for $t {
            fn to_bits(self) -> u64 {
                self as u64
            }
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
            fn identity(op: AccumOp) -> Option<Self> {
                Some(match op {
                    AccumOp::Sum | AccumOp::BitOr | AccumOp::BitXor => 0,
                    AccumOp::LogicalOr | AccumOp::LogicalXor => 0,
                    AccumOp::Prod | AccumOp::LogicalAnd => 1,
                    AccumOp::Min => <$t>::MAX,
                    AccumOp::Max => <$t>::MIN,
                    AccumOp::BitAnd => !0,
                })
            }
            fn combine(op: AccumOp, a: Self, b: Self) -> Self {
                match op {
                    AccumOp::Sum => a.wrapping_add(b),
                    AccumOp::Prod => a.wrapping_mul(b),
                    AccumOp::Min => a.min(b),
                    AccumOp::Max => a.max(b),
                    AccumOp::BitAnd => a & b,
                    AccumOp::BitOr => a | b,
                    AccumOp::BitXor => a ^ b,
                    AccumOp::LogicalAnd => <$t>::from(a != 0 && b != 0),
                    AccumOp::LogicalOr => <$t>::from(a != 0 || b != 0),
                    AccumOp::LogicalXor => <$t>::from((a != 0) != (b != 0)),
                }
            }
        }
    )*};
}

int_value!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_value {
    ($($t:ty),*) => {$(
        impl AccumValue for $t {
            fn to_bits(self) -> u64 {
                u64::from(<$t>::to_bits(self))
            }
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as _)
            }
            fn identity(op: AccumOp) -> Option<Self> {
                match op {
                    AccumOp::Sum => Some(0.0),
                    AccumOp::Prod => Some(1.0),
                    AccumOp::Min => Some(<$t>::INFINITY),
                    AccumOp::Max => Some(<$t>::NEG_INFINITY),
                    _ => None,
                }
            }
            fn combine(op: AccumOp, a: Self, b: Self) -> Self {
                match op {
                    AccumOp::Sum => a + b,
                    AccumOp::Prod => a * b,
                    AccumOp::Min => a.min(b),
                    AccumOp::Max => a.max(b),
                    _ => unreachable!("float accumulators reject {op:?} at creation"),
                }
            }
        }
    )*};
}

float_value!(f32, f64);

fn combine_bits<V: AccumValue, const OP: u8>(a: u64, b: u64) -> u64 {
    V::combine(AccumOp::from_index(OP), V::from_bits(a), V::from_bits(b)).to_bits()
}

/// The tree's combiner for `V` under `op`.
pub(crate) fn combiner<V: AccumValue>(op: AccumOp) -> Result<Combiner, PhaserError> {
    let identity = V::identity(op).ok_or(PhaserError::UnsupportedOp {
        op: op.name(),
        ty: std::any::type_name::<V>(),
    })?;
    let combine: fn(u64, u64) -> u64 = match op.index() {
        0 => combine_bits::<V, 0>,
        1 => combine_bits::<V, 1>,
        2 => combine_bits::<V, 2>,
        3 => combine_bits::<V, 3>,
        4 => combine_bits::<V, 4>,
        5 => combine_bits::<V, 5>,
        6 => combine_bits::<V, 6>,
        7 => combine_bits::<V, 7>,
        8 => combine_bits::<V, 8>,
        _ => combine_bits::<V, 9>,
    };
    Ok(Combiner {
        identity: identity.to_bits(),
        combine,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce<V: AccumValue>(op: AccumOp, values: &[V]) -> V {
        let c = combiner::<V>(op).unwrap();
        V::from_bits(
            values
                .iter()
                .fold(c.identity, |acc, v| (c.combine)(acc, v.to_bits())),
        )
    }

    #[test]
    fn operation_indices_round_trip() {
        for op in AccumOp::ALL {
            assert_eq!(AccumOp::from_index(op.index()), op);
        }
    }

    #[test]
    fn integer_operations() {
        let v = [3i32, -7, 12, 0, 5];
        assert_eq!(reduce(AccumOp::Sum, &v), 13);
        assert_eq!(reduce(AccumOp::Prod, &[3i64, -7, 2]), -42);
        assert_eq!(reduce(AccumOp::Min, &v), -7);
        assert_eq!(reduce(AccumOp::Max, &v), 12);
        assert_eq!(reduce(AccumOp::BitAnd, &[0b1110u8, 0b0111]), 0b0110);
        assert_eq!(reduce(AccumOp::BitOr, &[0b1000u16, 0b0001]), 0b1001);
        assert_eq!(reduce(AccumOp::BitXor, &[0b1100u64, 0b1010]), 0b0110);
        assert_eq!(reduce(AccumOp::LogicalAnd, &v), 0);
        assert_eq!(reduce(AccumOp::LogicalOr, &v), 1);
        assert_eq!(reduce(AccumOp::LogicalXor, &[1i8, 5, 0]), 0);
        assert_eq!(reduce::<u32>(AccumOp::Min, &[]), u32::MAX);
    }

    #[test]
    fn negative_integers_survive_the_bit_pattern() {
        for x in [-1i8, i8::MIN, 7] {
            assert_eq!(i8::from_bits(x.to_bits()), x);
        }
        assert_eq!(i64::from_bits((-5i64).to_bits()), -5);
    }

    #[test]
    fn float_operations() {
        assert_eq!(reduce(AccumOp::Sum, &[0.5f64, 0.25, 2.0]), 2.75);
        assert_eq!(reduce(AccumOp::Max, &[0.5f32, -3.0, 2.0]), 2.0);
        assert_eq!(reduce(AccumOp::Min, &[0.5f32, -3.0, 2.0]), -3.0);
        assert!(matches!(
            combiner::<f64>(AccumOp::BitXor),
            Err(PhaserError::UnsupportedOp { .. })
        ));
    }
}
