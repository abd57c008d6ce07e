//! Fig. 4 of the HCMPI paper: a task awaits a receive request.
//!
//! Every rank sends its rank number to the next rank; a data-driven task
//! awaiting the receive request reads the buffer once the message arrived.
//! Run: `mpiexec -n 2 target/release/examples/fig4_await`.

use std::sync::Mutex;

use hc_mpi::{Hcmpi, ANY_SOURCE};

fn main() -> Result<(), hc_mpi::Error> {
    let hc = Hcmpi::init()?;
    let world = hc.world();
    let (rank, size) = (hc.rank(), hc.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let received = Mutex::new(None);
    let request = world.irecv(vec![0i32; 4], ANY_SOURCE, 3)?;
    hc.finish(|s| -> Result<(), hc_mpi::Error> {
        world.isend(vec![rank; 4], next, 3)?;
        s.spawn_await(&[&request], |_| {
            // async AWAIT(r) IN(recv_buf): the request is complete, so this
            // task may read the received buffer in place.
            let (data, status) = request.get().expect("awaited request completed");
            *received.lock().unwrap() = Some((data.clone(), status));
        });
        Ok(())
    })?;
    let (data, status) = received
        .into_inner()
        .unwrap()
        .expect("the awaiting task ran");
    assert_eq!(data, vec![prev; 4], "rank {rank} received the wrong data");
    assert_eq!((status.source, status.tag, status.count), (prev, 3, 4));
    println!(
        "rank {rank}/{size}: fig4 await OK (received {data:?} from {})",
        status.source
    );
    Ok(())
}
