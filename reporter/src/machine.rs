//! The machine a report was measured on, named on every chart.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How the numbers of a report were taken: `run.json` in its data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The machine and the date.
    pub machine: Machine,
    /// Whether it was a `--quick` run (fewer repetitions, smaller problems).
    pub quick: bool,
    /// The steps that failed: their figures are missing from the page.
    #[serde(default)]
    pub failed: Vec<String>,
}

/// Where and when the numbers were taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// Cores available to the benchmarks.
    pub cores: usize,
    /// The CPU's model name (`/proc/cpuinfo`), or `unknown CPU`.
    pub cpu: String,
    /// The MPI library's own name and version (`MPI_Get_library_version`),
    /// first line.
    pub mpi: String,
    /// The date of the run, `YYYY-MM-DD` (UTC).
    pub date: String,
}

impl Machine {
    /// This machine, today.
    pub fn current() -> Machine {
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu: cpu_model().unwrap_or_else(|| "unknown CPU".into()),
            mpi: mpi_library(),
            date: utc_date(SystemTime::now()),
        }
    }

    /// One line for a chart or a page: `2 cores · CPU · MPI · date`.
    ///
    /// ```
    /// let m = report::Machine {
    ///     cores: 2,
    ///     cpu: "Some CPU".into(),
    ///     mpi: "MPICH 4.0".into(),
    ///     date: "2026-11-24".into(),
    /// };
    /// assert_eq!(m.caption(), "2 cores · Some CPU · MPICH 4.0 · 2026-11-24");
    /// ```
    pub fn caption(&self) -> String {
        let plural = if self.cores == 1 { "" } else { "s" };
        format!(
            "{} core{plural} · {} · {} · {}",
            self.cores, self.cpu, self.mpi, self.date
        )
    }
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == "model name").then(|| value.split_whitespace().collect::<Vec<_>>())
        })
        .map(|words| words.join(" "))
}

fn mpi_library() -> String {
    // MPI_Get_library_version may be called before MPI_Init (MPI 4.0
    // §9.1.1), so the report needs no MPI job of its own.
    let version = mpi::environment::library_version().unwrap_or_default();
    // MPICH separates its first line with a tab: one space per gap reads
    // the same on a chart.
    let first = version.lines().find(|l| !l.trim().is_empty());
    first.map_or_else(
        || "unknown MPI".into(),
        |l| l.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

/// `YYYY-MM-DD` of `time` in UTC.
pub fn utc_date(time: SystemTime) -> String {
    let days = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (the inverse of
/// the "days from civil" count of H. Hinnant's date algorithms): shift to
/// eras of 400 years that start on March 1, so leap days end a year.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_of_known_days() {
        let at = |secs: u64| utc_date(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01");
        assert_eq!(at(86_399), "1970-01-01");
        assert_eq!(at(951_782_400), "2000-02-29");
        assert_eq!(at(951_868_800), "2000-03-01");
        assert_eq!(at(1_709_164_800), "2024-02-29");
        assert_eq!(at(1_735_603_200), "2024-12-31");
        assert_eq!(at(1_735_689_600), "2025-01-01");
    }

    #[test]
    fn every_day_follows_the_previous_one() {
        let mut previous = civil_from_days(0);
        for day in 1..200_000 {
            let (y, m, d) = civil_from_days(day);
            let (py, pm, pd) = previous;
            let next_day = y == py && m == pm && d == pd + 1;
            let next_month = y == py && m == pm + 1 && d == 1;
            let next_year = y == py + 1 && m == 1 && d == 1 && pm == 12 && pd == 31;
            assert!(
                next_day || next_month || next_year,
                "{previous:?} -> {:?}",
                (y, m, d)
            );
            assert!(d <= 31 && (1..=12).contains(&m));
            previous = (y, m, d);
        }
    }
}
