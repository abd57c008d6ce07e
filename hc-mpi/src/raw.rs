//! Raw MPI handles that may travel from computation tasks to the
//! communication engine, and small wrappers over the MPI calls that report
//! errors (rsmpi's safe layer discards MPI return codes, so every call whose
//! failure hc-mpi must see goes through `mpi::ffi` here).

use std::os::raw::c_int;

use mpi::ffi;

/// An MPI handle (communicator, datatype, op) that is only ever *used* by the
/// communication engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle<H>(pub(crate) H);

// SAFETY: handles are opaque identifiers; computation tasks only copy them
// into operations, and only the holder of the engine role (the one thread
// calling MPI at a time, see `engine::holder`) passes them to MPI.
unsafe impl<H> Send for Handle<H> {}
// SAFETY: as above; shared references only read the identifier.
unsafe impl<H> Sync for Handle<H> {}

pub(crate) type RawComm = Handle<ffi::MPI_Comm>;
pub(crate) type RawOp = Handle<ffi::MPI_Op>;

/// The MPI datatype of `E`, alive as long as this value. Created on the
/// engine only: a derived datatype (`#[derive(Equivalence)]`) is created and
/// committed by MPI calls on first use.
///
/// A hand-written `Equivalence` may return an owned `UserDatatype`, which
/// `MPI_Type_free`s its handle when dropped; the handle must outlive the
/// call that uses it. Freeing it after an operation is posted is allowed:
/// "any communication that is currently using this datatype will complete
/// normally" (MPI 4.0 §5.1.10).
pub(crate) struct DatatypeOf<E: mpi::datatype::Equivalence>(E::Out);

impl<E: mpi::datatype::Equivalence> DatatypeOf<E> {
    pub(crate) fn new() -> Self {
        DatatypeOf(E::equivalent_datatype())
    }

    /// The handle, valid while `self` lives.
    pub(crate) fn raw(&self) -> ffi::MPI_Datatype {
        use mpi::raw::AsRaw;
        self.0.as_raw()
    }
}

/// `MPI_REQUEST_NULL`, for out-parameters.
pub(crate) fn null_request() -> ffi::MPI_Request {
    // SAFETY: reading an immutable MPI constant.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// A zeroed status, ready for MPI to fill in.
pub(crate) fn empty_status() -> ffi::MPI_Status {
    // SAFETY: MPI_Status is a plain C struct of integers; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// `MPI_Error_class` (MPI 4.0 §9.4).
pub(crate) fn error_class(code: c_int) -> c_int {
    let mut class = code;
    // SAFETY: plain out-parameter call; valid on the engine.
    unsafe { ffi::MPI_Error_class(code, &mut class) };
    class
}

/// `MPI_Error_string` (MPI 4.0 §9.4).
pub(crate) fn error_string(code: c_int) -> String {
    let mut buffer = vec![0u8; ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING + 1 bytes as required.
    unsafe { ffi::MPI_Error_string(code, buffer.as_mut_ptr().cast(), &mut len) };
    buffer.truncate(len.max(0) as usize);
    String::from_utf8_lossy(&buffer).trim().to_owned()
}

/// `MPI_Get_count` (MPI 4.0 §3.2.5): elements of `E` in `status`; `None`
/// when not a whole number (MPI_UNDEFINED). Engine only.
pub(crate) fn get_count<E: mpi::datatype::Equivalence>(status: &ffi::MPI_Status) -> Option<usize> {
    let mut count: c_int = 0;
    let datatype = DatatypeOf::<E>::new();
    // SAFETY: `status` was filled in by MPI; out-parameter call.
    unsafe { ffi::MPI_Get_count(status, datatype.raw(), &mut count) };
    // SAFETY: reading an immutable MPI constant.
    let undefined = unsafe { ffi::RSMPI_UNDEFINED };
    (count != undefined && count >= 0).then_some(count as usize)
}

/// `MPI_Test_cancelled` (MPI 4.0 §3.8.4).
pub(crate) fn test_cancelled(status: &ffi::MPI_Status) -> bool {
    let mut flag: c_int = 0;
    // SAFETY: `status` was filled in by MPI; out-parameter call.
    unsafe { ffi::MPI_Test_cancelled(status, &mut flag) };
    flag != 0
}
