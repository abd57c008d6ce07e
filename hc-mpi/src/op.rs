//! What a communication task asks the communication worker to do.

use std::any::Any;
use std::fmt;
use std::os::raw::c_void;
use std::sync::Arc;

use crate::raw::{DatatypeOf, RawComm};
use crate::request::RequestCell;

/// A buffer MPI reads or writes while the operation is in flight, with the
/// owner that keeps its memory alive (a `Vec<E>`, boxed) until completion.
pub(crate) struct Buffer {
    pub(crate) ptr: *mut c_void,
    pub(crate) count: i32,
    pub(crate) datatype: DatatypeOf,
    pub(crate) owner: Box<dyn Any + Send>,
    /// Shrinks the owner to the received element count (receives).
    pub(crate) truncate: Option<fn(&mut (dyn Any + Send), usize)>,
}

// SAFETY: `ptr` points into the heap block of `owner` (a Vec's buffer), which
// moves with it and is only accessed by MPI on the communication worker while
// the operation is in flight.
unsafe impl Send for Buffer {}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} elements", self.count)
    }
}

impl Buffer {
    /// Takes ownership of `data` and describes its storage for MPI.
    pub(crate) fn from_vec<E: mpi::datatype::Equivalence + Send + 'static>(
        mut data: Vec<E>,
        op: &'static str,
    ) -> Result<Buffer, crate::Error> {
        let count = i32::try_from(data.len()).map_err(|_| crate::Error::BufferTooLarge {
            op,
            len: data.len(),
        })?;
        let ptr = data.as_mut_ptr().cast::<c_void>();
        let datatype = DatatypeOf::of::<E>();
        Ok(Buffer {
            ptr,
            count,
            datatype,
            // Moving the Vec into a Box moves its header, not its heap block:
            // `ptr` stays valid.
            owner: Box::new(data),
            truncate: None,
        })
    }

    /// Makes completion truncate the vector to the received count.
    pub(crate) fn truncating<E: 'static>(mut self) -> Self {
        self.truncate = Some(|owner, count| {
            if let Some(data) = owner.downcast_mut::<Vec<E>>() {
                data.truncate(count);
            }
        });
        self
    }
}

/// The operation of a communication task.
#[derive(Debug)]
pub(crate) enum Operation {
    /// `MPI_Isend` / `MPI_Issend` (MPI 4.0 §3.7.2).
    Send {
        buffer: Buffer,
        dest: i32,
        tag: i32,
        comm: RawComm,
        synchronous: bool,
        request: Arc<RequestCell>,
    },
    /// `MPI_Irecv` (MPI 4.0 §3.7.2).
    Recv {
        buffer: Buffer,
        source: i32,
        tag: i32,
        comm: RawComm,
        request: Arc<RequestCell>,
    },
    /// Polled `MPI_Iprobe` until a matching message is pending (§3.8.1);
    /// `count` is reported in elements of `datatype`.
    Probe {
        source: i32,
        tag: i32,
        comm: RawComm,
        datatype: DatatypeOf,
        request: Arc<RequestCell>,
    },
    /// `MPI_Cancel` of another in-flight request (§3.8.4).
    Cancel { target: Arc<RequestCell> },
    /// `MPI_Comm_idup` / `MPI_Comm_split` (MPI 4.0 §7.4.2): a new
    /// communicator; `new` is where MPI writes its handle.
    CommCreate {
        split: Option<(i32, i32)>,
        comm: RawComm,
        new: Box<RawComm>,
        request: Arc<RequestCell>,
    },
    /// A non-blocking collective (MPI 4.0 §6.12).
    Collective {
        kind: crate::collective::CollectiveKind,
        send: Option<Buffer>,
        recv: Option<Buffer>,
        op: Option<crate::user_op::OpSpec>,
        comm: RawComm,
        request: Arc<RequestCell>,
    },
}

impl Operation {
    /// The request this operation completes, if any.
    pub(crate) fn request(&self) -> Option<&Arc<RequestCell>> {
        match self {
            Operation::Send { request, .. }
            | Operation::Recv { request, .. }
            | Operation::Probe { request, .. }
            | Operation::Collective { request, .. }
            | Operation::CommCreate { request, .. } => Some(request),
            Operation::Cancel { .. } => None,
        }
    }

    /// The operation's name, as in [`Error`](crate::Error) values.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Operation::Send {
                synchronous: true, ..
            } => "issend",
            Operation::Send { .. } => "isend",
            Operation::Recv { .. } => "irecv",
            Operation::Probe { .. } => "probe",
            Operation::Cancel { .. } => "cancel",
            Operation::Collective { kind, .. } => kind.name(),
            Operation::CommCreate { split: None, .. } => "comm_idup",
            Operation::CommCreate { .. } => "comm_split",
        }
    }

    /// A short description for diagnostics (pending-at-shutdown reports).
    pub(crate) fn describe(&self) -> String {
        match self {
            Operation::Send {
                buffer,
                dest,
                tag,
                synchronous,
                ..
            } => format!(
                "{}(dest={dest}, tag={tag}, {buffer:?})",
                if *synchronous { "issend" } else { "isend" }
            ),
            Operation::Recv {
                buffer,
                source,
                tag,
                ..
            } => {
                format!("irecv(source={source}, tag={tag}, {buffer:?})")
            }
            Operation::Probe { source, tag, .. } => format!("probe(source={source}, tag={tag})"),
            Operation::Cancel { .. } => "cancel".to_owned(),
            Operation::Collective { kind, .. } => format!("{kind:?}"),
            Operation::CommCreate { split: None, .. } => "comm_idup".to_owned(),
            Operation::CommCreate {
                split: Some((color, key)),
                ..
            } => {
                format!("comm_split(color={color}, key={key})")
            }
        }
    }
}
