//! Raw MPI handles that may travel from computation tasks to the
//! communication worker, and small wrappers over the MPI calls that report
//! errors (rsmpi's safe layer discards MPI return codes, so every call whose
//! failure hc-mpi must see goes through `mpi::ffi` here).

use std::os::raw::c_int;

use mpi::ffi;

/// An MPI handle (communicator, datatype, op) that is only ever *used* on the
/// communication worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle<H>(pub(crate) H);

// SAFETY: handles are opaque identifiers; computation tasks only copy them
// into communication task records, and only the communication worker (the
// one thread that calls MPI, MPI_THREAD_FUNNELED) passes them to MPI.
unsafe impl<H> Send for Handle<H> {}
// SAFETY: as above; shared references only read the identifier.
unsafe impl<H> Sync for Handle<H> {}

pub(crate) type RawComm = Handle<ffi::MPI_Comm>;
pub(crate) type RawDatatype = Handle<ffi::MPI_Datatype>;
pub(crate) type RawOp = Handle<ffi::MPI_Op>;

/// The MPI datatype of an element type, resolved only on the communication
/// worker. A derived datatype (`#[derive(Equivalence)]`) is created and
/// committed by MPI calls on first use, which `MPI_THREAD_FUNNELED` (and
/// rsmpi, which panics otherwise) allows only on the thread that initialized
/// MPI; so computation tasks carry this resolver instead of the handle.
#[derive(Clone, Copy)]
pub(crate) struct DatatypeOf(fn() -> RawDatatype);

impl DatatypeOf {
    pub(crate) fn of<E: mpi::datatype::Equivalence>() -> Self {
        use mpi::raw::AsRaw;
        DatatypeOf(|| Handle(E::equivalent_datatype().as_raw()))
    }

    /// The handle; call on the communication worker only.
    pub(crate) fn resolve(self) -> RawDatatype {
        (self.0)()
    }
}

impl std::fmt::Debug for DatatypeOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DatatypeOf")
    }
}

/// A zeroed status, ready for MPI to fill in.
pub(crate) fn empty_status() -> ffi::MPI_Status {
    // SAFETY: MPI_Status is a plain C struct of integers; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// `MPI_Error_class` (MPI 4.0 §9.4).
pub(crate) fn error_class(code: c_int) -> c_int {
    let mut class = code;
    // SAFETY: plain out-parameter call; valid on the communication worker.
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

/// `MPI_Get_count` (MPI 4.0 §3.2.5): elements of `datatype` in `status`;
/// `None` when not a whole number (MPI_UNDEFINED).
pub(crate) fn get_count(status: &ffi::MPI_Status, datatype: RawDatatype) -> Option<usize> {
    let mut count: c_int = 0;
    // SAFETY: `status` was filled in by MPI; out-parameter call.
    unsafe { ffi::MPI_Get_count(status, datatype.0, &mut count) };
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
