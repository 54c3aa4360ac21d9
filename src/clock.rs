//! Time and id generation, injected so the core never reads the system clock behind a
//! caller's back: the CLI builds a [`Clock`] that reads the real time at each call, or one
//! frozen at a fixed instant for sealed tests (which then get reproducible ids and commit
//! hashes).

use std::cell::{Cell, RefCell};
use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};
use ulid::Ulid;

/// The characters of a conversation id people see and type: its time to about the second
/// (a ULID's first 8 characters are its milliseconds over 1,024). A new conversation id is
/// made to differ from every other id of its store there, so eight characters name it.
pub const SHORT_ID: usize = 8;

/// The time bits below [`SHORT_ID`]: ids whose times differ only there share 8 characters.
const BELOW_SHORT_ID: u32 = 10;

/// How many later seconds a new conversation id tries before it settles for one that shares
/// its short id (it is still unique by its random part).
const SECONDS_TRIED: u64 = 4096;

pub struct Clock {
    /// `None`: the system clock, read at each call, so a record is stamped when it is made
    /// (a `query` answer when it arrives, not when the command started).
    fixed: Option<DateTime<Utc>>,
    ids: RefCell<IdSource>,
    /// The second (ms >> 10) of the last conversation id made: the next takes a later one.
    conversation_second: Cell<Option<u64>>,
}

enum IdSource {
    /// Monotonic within the process, random across processes; the last id made.
    Random(Option<Ulid>),
    /// `(timestamp, n)`: unique as long as each process gets its own instant, which is how the
    /// test harness drives it.
    Counter(u64),
}

impl Clock {
    /// The real time, read at each call, and random ids.
    pub fn system() -> Clock {
        Clock { fixed: None, ids: RefCell::new(IdSource::Random(None)), conversation_second: Cell::new(None) }
    }

    /// A frozen instant and counter-based ids: every run with the same instant produces the
    /// same ids.
    pub fn fixed(now: DateTime<Utc>) -> Clock {
        Clock { fixed: Some(now), ids: RefCell::new(IdSource::Counter(0)), conversation_second: Cell::new(None) }
    }

    /// The current time: the system clock read now, or the fixed instant.
    pub fn now(&self) -> DateTime<Utc> {
        self.fixed.unwrap_or_else(Utc::now)
    }

    /// `now` as stored in events: RFC 3339, milliseconds, UTC.
    pub fn timestamp(&self) -> String {
        self.now().to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// A new ULID: 26 characters, sortable by creation time, safe as a path segment.
    pub fn new_id(&self) -> String {
        let now = self.now();
        let system_time: SystemTime = now.into();
        let mut source = self.ids.borrow_mut();
        let ulid = match &mut *source {
            IdSource::Random(last) => {
                let next = after(*last, Ulid::from_datetime(system_time));
                *last = Some(next);
                next
            }
            IdSource::Counter(n) => {
                *n += 1;
                Ulid::from_parts(now.timestamp_millis() as u64, u128::from(*n))
            }
        };
        ulid.to_string()
    }

    /// A new conversation id, its [`SHORT_ID`] characters unlike those of any id `taken`
    /// says the store has and of any this clock made before. Ids made in one millisecond
    /// (an import's subagent conversations) would share twelve characters; instead each
    /// takes the next free second, dated up to a few seconds ahead. Its order among ids
    /// (creation order) is kept; the time a conversation was created is in its `meta.json`.
    pub fn new_conversation_id(&self, taken: &dyn Fn(&str) -> bool) -> String {
        let now = u64::try_from(self.now().timestamp_millis()).unwrap_or_default();
        let this_second = now >> BELOW_SHORT_ID;
        let mut second = this_second.max(self.conversation_second.get().map_or(0, |s| s + 1));
        for _ in 0..SECONDS_TRIED {
            if !taken(&short_id_of(second)) {
                break;
            }
            second += 1;
        }
        self.conversation_second.set(Some(second));
        let ms = if second == this_second { now } else { second << BELOW_SHORT_ID };
        let random = match &mut *self.ids.borrow_mut() {
            IdSource::Random(_) => Ulid::from_datetime(SystemTime::now()).random(),
            IdSource::Counter(n) => {
                *n += 1;
                u128::from(*n)
            }
        };
        Ulid::from_parts(ms, random).to_string()
    }
}

/// The short id every id made in `second` (ms >> 10) starts with.
fn short_id_of(second: u64) -> String {
    Ulid::from_parts(second << BELOW_SHORT_ID, 0).to_string().chars().take(SHORT_ID).collect()
}

/// The id to make after `last`, given a `fresh` one (now, random): `fresh` when its instant
/// is later; else (the same millisecond, or the clock stepped back) one above `last` by a
/// random step below 2^72. Ids stay ordered, and ids made together (a reply's events) differ
/// within a character or two of their random part, not only in the last, as a step of 1
/// (ulid's `Generator`) would leave them. Conversation ids, which people type, are made
/// apart in time instead ([`Clock::new_conversation_id`]).
fn after(last: Option<Ulid>, fresh: Ulid) -> Ulid {
    const RANDOM_BITS: u32 = 80;
    let Some(last) = last.filter(|l| fresh.timestamp_ms() <= l.timestamp_ms()) else {
        return fresh;
    };
    let room = ((1u128 << RANDOM_BITS) - 1) - last.random();
    if room == 0 {
        // The millisecond is used up: borrow the next one, as a clock a moment ahead would.
        return Ulid::from_parts(last.timestamp_ms() + 1, fresh.random());
    }
    // A random step below 2^72 and within the room left, so a `last` near the top still
    // moves by a wide random amount rather than by 1 (which would leave two ids alike in all
    // but their last character). `fresh`'s top bits are its random ones.
    let bits = room.min(1 << 72).ilog2();
    let step = 1 + (fresh.random() >> (RANDOM_BITS - bits));
    Ulid::from_parts(last.timestamp_ms(), last.random() + step)
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
    fn system_clock_is_read_at_each_call_and_fixed_clock_is_not() {
        let system = Clock::system();
        let (t1, s1) = (system.now(), system.timestamp());
        std::thread::sleep(std::time::Duration::from_millis(5));
        let (t2, s2) = (system.now(), system.timestamp());
        assert!(t2 > t1, "{t1} then {t2}");
        assert!(s2 > s1, "{s1} then {s2}");

        let t = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap().to_utc();
        let fixed = Clock::fixed(t);
        let first = fixed.timestamp();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(first, "2026-01-01T00:00:00.000Z");
        assert_eq!((fixed.now(), fixed.timestamp()), (t, first));
    }

    #[test]
    fn system_ids_follow_the_clock_and_stay_ordered() {
        let clock = Clock::system();
        let a = clock.new_id();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = clock.new_id();
        let ms = |id: &str| Ulid::from_string(id).unwrap().timestamp_ms();
        assert!(ms(&b) >= ms(&a) + 5, "{a} then {b}");
        assert!(a < b);
    }

    #[test]
    fn ids_made_in_one_millisecond_are_ordered_and_differ_early() {
        let fresh = |r: u128| Ulid::from_parts(1_000, r);
        let mut last = None;
        let mut ids = Vec::new();
        for r in [5u128, 1 << 79, 3, (1 << 80) - 1, 7] {
            let next = after(last, fresh(r));
            last = Some(next);
            ids.push(next);
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        // With a full random part a step of 1 would do: the millisecond rolls over only then.
        let full = Ulid::from_parts(1_000, (1 << 80) - 1);
        assert_eq!(after(Some(full), fresh(9)), Ulid::from_parts(1_001, 9));
        // A later millisecond starts afresh.
        assert_eq!(after(Some(full), Ulid::from_parts(2_000, 4)), Ulid::from_parts(2_000, 4));
        // Near the top of the random part the step shrinks to the room left, not to 1
        // (ids made after one starting `ZZ` shared 25 characters).
        let high = Ulid::from_parts(1_000, (1 << 80) - (1 << 70));
        for r in [1u128 << 79, (1 << 80) - 1, 12_345_678_901_234_567] {
            let next = after(Some(high), fresh(r));
            assert!(next > high && next.timestamp_ms() == 1_000, "{high} {next}");
        }
        let next = after(Some(high), fresh((1 << 80) - 1));
        let shared = high.to_string().chars().zip(next.to_string().chars()).take_while(|(x, y)| x == y).count();
        assert!(shared < 20, "{high} {next}");
        // Real ids made back to back share far less than 25 characters.
        let clock = Clock::system();
        let (a, b) = (clock.new_id(), clock.new_id());
        let shared = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        assert!(shared < 20, "{a} {b}");
    }

    #[test]
    fn conversation_ids_made_together_differ_in_their_short_id_and_stay_ordered() {
        let t = DateTime::parse_from_rfc3339("2026-01-01T00:00:00.5Z").unwrap().to_utc();
        for clock in [Clock::fixed(t), Clock::system()] {
            let first = clock.new_conversation_id(&|_| false);
            // The next second is taken in the store: the one after it is used.
            let taken = short_id_of((Ulid::from_string(&first).unwrap().timestamp_ms() >> BELOW_SHORT_ID) + 1);
            let ids: Vec<String> = (0..5).map(|_| clock.new_conversation_id(&|short| short == taken)).collect();
            let all: Vec<&String> = std::iter::once(&first).chain(&ids).collect();
            assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
            let mut shorts: Vec<&str> = all.iter().map(|id| &id[..SHORT_ID]).collect();
            assert!(!shorts.contains(&taken.as_str()), "{all:?}");
            shorts.dedup();
            assert_eq!(shorts.len(), all.len(), "{all:?}");
            assert!(all.iter().all(|id| is_ulid(id)));
        }
        // The first one of a fixed clock is dated at its instant, as `new_id` would be.
        let fixed = Clock::fixed(t);
        assert_eq!(
            Ulid::from_string(&fixed.new_conversation_id(&|_| false)).unwrap().timestamp_ms(),
            1_767_225_600_500
        );
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
