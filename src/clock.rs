//! Time and id generation, injected so the core never reads the system clock behind a
//! caller's back: the CLI builds a [`Clock`] from the real time, or from a fixed instant for
//! sealed tests (which then get reproducible ids and commit hashes).

use std::cell::RefCell;
use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};
use ulid::Ulid;

pub struct Clock {
    now: DateTime<Utc>,
    ids: RefCell<IdSource>,
}

enum IdSource {
    /// Monotonic within the process, random across processes.
    Random(ulid::Generator),
    /// `(timestamp, n)`: unique as long as each process gets its own instant, which is how the
    /// test harness drives it.
    Counter(u64),
}

impl Clock {
    /// The real time and random ids.
    pub fn system() -> Clock {
        Clock { now: Utc::now(), ids: RefCell::new(IdSource::Random(ulid::Generator::new())) }
    }

    /// A frozen instant and counter-based ids: every run with the same instant produces the
    /// same ids.
    pub fn fixed(now: DateTime<Utc>) -> Clock {
        Clock { now, ids: RefCell::new(IdSource::Counter(0)) }
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.now
    }

    /// `now` as stored in events: RFC 3339, milliseconds, UTC.
    pub fn timestamp(&self) -> String {
        self.now.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// A new ULID: 26 characters, sortable by creation time, safe as a path segment.
    pub fn new_id(&self) -> String {
        let system_time: SystemTime = self.now.into();
        let mut source = self.ids.borrow_mut();
        let ulid = match &mut *source {
            IdSource::Random(generator) => generator
                .generate_from_datetime(system_time)
                // The generator only fails when 2^80 ids were made in one millisecond.
                .unwrap_or_else(|_| Ulid::from_datetime(system_time)),
            IdSource::Counter(n) => {
                *n += 1;
                Ulid::from_parts(self.now.timestamp_millis() as u64, u128::from(*n))
            }
        };
        ulid.to_string()
    }
}

/// Whether `s` has the shape of an id convo generated (a ULID).
pub fn is_ulid(s: &str) -> bool {
    Ulid::from_string(s).is_ok() && s.len() == 26
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_clock_ids_are_reproducible_and_ordered() {
        let t = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap().to_utc();
        let (a, b) = (Clock::fixed(t), Clock::fixed(t));
        let ids: Vec<String> = (0..3).map(|_| a.new_id()).collect();
        assert_eq!(ids, (0..3).map(|_| b.new_id()).collect::<Vec<_>>());
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(ids.iter().all(|id| is_ulid(id)));
    }

    #[test]
    fn system_ids_are_unique() {
        let clock = Clock::system();
        let mut ids: Vec<String> = (0..1000).map(|_| clock.new_id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 1000);
    }
}
