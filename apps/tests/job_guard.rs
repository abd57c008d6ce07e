//! A panic on one rank of a driver that runs MPI itself (the plain MPI and
//! MPI + rayon baselines) ends the whole job with its message, instead of
//! leaving the other ranks waiting for it: the `panic_on_one_rank` example
//! under `mpiexec`, at 2 to 4 ranks.

use hcmpi_testkit::{one_job_at_a_time, shared_launcher, test_timeout};

#[test]
fn a_panic_on_one_rank_ends_the_job() {
    let exe = hcmpi_testkit::example_path("panic_on_one_rank");
    let launcher = shared_launcher();
    for ranks in 2..=4 {
        let context = format!("{ranks} ranks");
        let _one_at_a_time = one_job_at_a_time();
        let cmd = launcher.command(ranks, &exe, &[] as &[&str]);
        let out = launcher
            .run_command(cmd, ranks, &exe, test_timeout())
            .unwrap_or_else(|err| panic!("{context}: {err}"));
        out.expect_job_failure(
            None,
            "rank 1: panic_on_one_rank: a panic is ending this rank; aborting the MPI job",
            "rank 0 received",
            &context,
        );
        assert!(
            out.stderr.contains("rank 1 fails on purpose"),
            "{context}: the panic's own message is missing\n{}",
            out.stderr
        );
    }
}
