//! User-defined reduction operations (MPI 4.0 §6.9.5, `MPI_Op_create`).
//!
//! MPI calls a user function with no context pointer, so a Rust closure
//! cannot be handed to it without a run-time trampoline generator. Instead a
//! reduction is a *type* implementing [`Reduction`]; hc-mpi instantiates one
//! `extern "C"` trampoline per type, and the communication worker — the only
//! thread allowed to call MPI — creates the `MPI_Op` the first time the
//! reduction is used and frees it at shutdown, before `MPI_Finalize`.
//! See `examples/collectives_suite.rs` for a use.

use std::any::TypeId;
use std::os::raw::{c_int, c_void};

use mpi::ffi;

use crate::raw::{Handle, RawOp};

/// A user-defined reduction: an associative function combining elements of
/// one type. Implement it on a (usually empty) marker type and pass
/// [`ReduceOp::user::<MyReduction>()`](crate::ReduceOp::user) to any
/// reduction collective.
///
/// ```
/// use hc_mpi::Reduction;
///
/// /// Keeps the larger magnitude, with its sign.
/// struct MaxMagnitude;
/// impl Reduction for MaxMagnitude {
///     type Element = i64;
///     fn combine(input: &i64, inout: &mut i64) {
///         if input.abs() > inout.abs() {
///             *inout = *input;
///         }
///     }
/// }
/// ```
pub trait Reduction: 'static {
    /// The element type it combines; the reduced vector's element type must
    /// be exactly this type.
    type Element: 'static;
    /// Whether `combine` is commutative (MPI may then reorder operands).
    const COMMUTATIVE: bool = true;
    /// Folds `input` into `inout`: `*inout = input ∘ *inout`, where `input`
    /// comes from the lower rank (MPI 4.0 §6.9.5).
    fn combine(input: &Self::Element, inout: &mut Self::Element);
}

type UserFunction =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut ffi::MPI_Datatype);

/// A [`Reduction`] as MPI sees it: its trampoline and commutativity.
/// Two are equal when they come from the same reduction type.
#[derive(Clone, Copy)]
pub struct UserOp {
    reduction: TypeId,
    function: UserFunction,
    commutative: bool,
    element: TypeId,
    name: &'static str,
}

impl std::fmt::Debug for UserOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserOp")
            .field("reduction", &self.name)
            .field("commutative", &self.commutative)
            .finish()
    }
}

impl PartialEq for UserOp {
    fn eq(&self, other: &UserOp) -> bool {
        self.reduction == other.reduction
    }
}

impl Eq for UserOp {}

impl UserOp {
    pub(crate) fn of<R: Reduction>() -> UserOp {
        UserOp {
            reduction: TypeId::of::<R>(),
            function: trampoline::<R>,
            commutative: R::COMMUTATIVE,
            element: TypeId::of::<R::Element>(),
            name: std::any::type_name::<R>(),
        }
    }

    /// Whether the reduction combines elements of type `E`.
    pub(crate) fn accepts<E: 'static>(&self) -> bool {
        self.element == TypeId::of::<E>()
    }

    /// The reduction's type name, for error messages.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }
}

/// The `MPI_User_function` of reduction `R`.
///
/// # Safety
/// Called by MPI only, with `invec` and `inoutvec` pointing to `*len`
/// elements of the datatype the reduction's buffers were described with,
/// which the API layer checked is `R::Element`'s.
unsafe extern "C" fn trampoline<R: Reduction>(
    invec: *mut c_void,
    inoutvec: *mut c_void,
    len: *mut c_int,
    _datatype: *mut ffi::MPI_Datatype,
) {
    // SAFETY: MPI passes a valid count; both vectors hold that many
    // `R::Element`s (this function's contract) and do not overlap (MPI
    // 4.0 §6.9.5: they are distinct buffers).
    let (input, inout) = unsafe {
        let n = usize::try_from(*len).unwrap_or(0);
        (
            std::slice::from_raw_parts(invec as *const R::Element, n),
            std::slice::from_raw_parts_mut(inoutvec as *mut R::Element, n),
        )
    };
    // Unwinding out of an `extern "C"` function aborts; say why first.
    let combined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for (a, b) in input.iter().zip(inout.iter_mut()) {
            R::combine(a, b);
        }
    }));
    if combined.is_err() {
        eprintln!(
            "hc-mpi: user reduction {} panicked inside MPI; aborting",
            std::any::type_name::<R>()
        );
        std::process::abort();
    }
}

/// The reduction a collective asks for, as carried to the worker.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OpSpec {
    Predefined(RawOp),
    User(UserOp),
}

/// The `MPI_Op`s the communication worker created for user reductions.
#[derive(Debug, Default)]
pub(crate) struct UserOps {
    created: Vec<(UserOp, RawOp)>,
}

impl UserOps {
    /// The MPI handle for `spec`, creating it on first use; an MPI error
    /// code if `MPI_Op_create` fails. Communication worker only.
    pub(crate) fn resolve(&mut self, spec: OpSpec) -> Result<RawOp, c_int> {
        let user = match spec {
            OpSpec::Predefined(op) => return Ok(op),
            OpSpec::User(user) => user,
        };
        if let Some((_, op)) = self.created.iter().find(|(u, _)| *u == user) {
            return Ok(*op);
        }
        let mut op = std::mem::MaybeUninit::<ffi::MPI_Op>::uninit();
        // SAFETY: called on the communication worker (the only MPI thread);
        // the trampoline has the `MPI_User_function` signature and lives
        // for the whole program; `op` is written by the call.
        let code = unsafe {
            ffi::MPI_Op_create(
                Some(user.function),
                c_int::from(user.commutative),
                op.as_mut_ptr(),
            )
        };
        if code != ffi::MPI_SUCCESS as c_int {
            return Err(code);
        }
        // SAFETY: MPI_Op_create succeeded, so it wrote the handle.
        let op = Handle(unsafe { op.assume_init() });
        self.created.push((user, op));
        Ok(op)
    }

    /// Frees every created operation (shutdown, before `MPI_Finalize`).
    pub(crate) fn free_all(&mut self) {
        for (_, mut op) in self.created.drain(..) {
            // SAFETY: created by `resolve`, freed once; no collective using
            // it is in flight any more at shutdown.
            unsafe { ffi::MPI_Op_free(&mut op.0) };
        }
    }
}
