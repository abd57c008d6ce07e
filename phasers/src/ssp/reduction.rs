//! What a stale accumulator reduces with: one of the predefined
//! [`AccumOp`]s, or a user function with its identity.

use std::fmt;
use std::sync::Arc;

use crate::accum::{AccumOp, AccumValue};
use crate::ssp::SspError;

type Combine<V> = Arc<dyn Fn(V, V) -> V + Send + Sync>;

/// The reduction of a [`StaleAccum`](crate::StaleAccum): `SUM`, `MIN`,
/// `MAX`, `PROD` or any other [`AccumOp`], or a user function.
///
/// Contributions are combined as `combine(earlier, later)`: within a rank
/// in the order they arrive, across ranks in a fixed order (a rank's own
/// value, then each subtree's, see `ssp`), so every rank reads the same
/// bits for a phase. A user function must be associative; for the result
/// not to depend on arrival order within a rank it must be commutative too.
pub struct Reduction<V> {
    name: &'static str,
    identity: V,
    combine: Combine<V>,
    /// The predefined operation, if any (what the ranks compare).
    op: Option<AccumOp>,
}

impl<V> Clone for Reduction<V>
where
    V: Copy,
{
    fn clone(&self) -> Self {
        Reduction {
            name: self.name,
            identity: self.identity,
            combine: Arc::clone(&self.combine),
            op: self.op,
        }
    }
}

impl<V: fmt::Debug> fmt::Debug for Reduction<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reduction")
            .field("name", &self.name)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl<V: AccumValue> Reduction<V> {
    /// The predefined operation `op` on `V`.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction, SspError};
    ///
    /// assert_eq!(Reduction::<i64>::op(AccumOp::Max).unwrap().name(), "MAX");
    /// assert!(matches!(
    ///     Reduction::<f64>::op(AccumOp::BitXor),
    ///     Err(SspError::UnsupportedOp { .. })
    /// ));
    /// ```
    ///
    /// # Errors
    /// [`SspError::UnsupportedOp`] for a bitwise or logical `op` on floats.
    pub fn op(op: AccumOp) -> Result<Reduction<V>, SspError> {
        let identity = V::identity(op).ok_or(SspError::UnsupportedOp {
            op: op.name(),
            ty: std::any::type_name::<V>(),
        })?;
        Ok(Reduction {
            name: op.name(),
            identity,
            combine: Arc::new(move |a, b| V::combine(op, a, b)),
            op: Some(op),
        })
    }

    /// A user reduction `combine` with `identity` (`combine(identity, x)
    /// == x`), called `name` in messages.
    ///
    /// ```
    /// use hcmpi_phasers::Reduction;
    ///
    /// // The value of larger magnitude, with its sign.
    /// let r = Reduction::custom("MAXABS", 0i64, |a, b| if b.abs() > a.abs() { b } else { a });
    /// assert_eq!(r.combine(-7, 3), -7);
    /// ```
    pub fn custom(
        name: &'static str,
        identity: V,
        combine: impl Fn(V, V) -> V + Send + Sync + 'static,
    ) -> Reduction<V> {
        Reduction {
            name,
            identity,
            combine: Arc::new(combine),
            op: None,
        }
    }

    /// Its name (`SUM`, … or the user's).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its identity.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction};
    ///
    /// assert_eq!(Reduction::<u32>::op(AccumOp::Min).unwrap().identity(), u32::MAX);
    /// ```
    pub fn identity(&self) -> V {
        self.identity
    }

    /// `a` combined with `b`.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Reduction};
    ///
    /// assert_eq!(Reduction::<i32>::op(AccumOp::Prod).unwrap().combine(6, 7), 42);
    /// ```
    pub fn combine(&self, a: V, b: V) -> V {
        (self.combine)(a, b)
    }

    /// What the ranks compare at creation: the predefined operation's
    /// index, or for a user reduction a hash of its name and identity
    /// (functions cannot be compared; the top bit keeps it apart from the
    /// indices).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn fingerprint(&self) -> u64 {
        const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const FNV_PRIME: u64 = 0x0100_0000_01b3;
        match self.op {
            Some(op) => op as u64,
            None => {
                let bytes = self
                    .name
                    .bytes()
                    .chain(self.identity.to_bits().to_le_bytes());
                let hash = bytes.fold(FNV_OFFSET, |hash, byte| {
                    (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME)
                });
                hash | 1 << 63
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_reductions_differ_by_name_and_identity() {
        let max = |a: i64, b: i64| a.max(b);
        let fingerprint = |name, identity| Reduction::custom(name, identity, max).fingerprint();
        assert_eq!(fingerprint("MAXABS", 0), fingerprint("MAXABS", 0));
        assert_ne!(fingerprint("MAXABS", 0), fingerprint("MAXAB", 0));
        assert_ne!(fingerprint("MAXABS", 0), fingerprint("MAXABS", 1));
        let sum = Reduction::<i64>::op(AccumOp::Sum).unwrap().fingerprint();
        assert_ne!(fingerprint("SUM", 0), sum);
        assert!(sum < 1 << 63);
    }
}
