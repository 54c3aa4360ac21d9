//! A conversation's stored lines as they are, at the speed of inflating them: `show
//! --format jsonl` and the JSONL export copy them through (they are canonical JSONL).
//!
//! Two things keep this fast whatever the size. Two worker threads inflate alternate batches
//! of the next segments while the caller writes the current one (bounded queues, so memory
//! stays a few segments), each reading a loose segment with one read(2) and inflating it
//! with its own zlib state: gix would map each object, and unmapping while other threads
//! run flushes every core's TLB (benches/README.md, `scale.py`). And a segment is checked to be JSON lines ([`event::check_stored`]) only once:
//! `.git/convo/checked` lists the blob ids known good, those convo wrote itself (from
//! validated input) and those a copy has checked before. A blob that came some other way (a
//! pull, git by hand) is checked when first copied. Like every file under `.git/convo/` it
//! is disposable: without it, everything is checked again.

use std::collections::HashSet;
use std::io::Write as _;
use std::sync::mpsc;

use gix::ObjectId;

use super::{Result, Store, StoreError, layout, txn::private_options};
use crate::event;

const FILE: &str = "checked";

/// Batches inflated ahead of the one being copied, and a batch's size: handing over one
/// 16 KiB segment at a time costs a context switch each, more than inflating it.
const AHEAD: usize = 2;
const BATCH: usize = 32;
/// Inflating is the whole cost: two workers take alternate batches (machines here have two
/// cores; more buys little once writing out is the limit).
const WORKERS: usize = 2;

type Segment = (String, ObjectId, Option<Vec<u8>>);

/// The stored lines of one conversation, a segment's bytes at a time (see the module's doc).
pub struct StoredLines<'a> {
    store: &'a Store,
    /// One queue per worker; batch `n` comes from queue `n % WORKERS`.
    queues: Vec<mpsc::Receiver<Vec<Segment>>>,
    next_queue: usize,
    /// How many batches the workers owe: a queue that closes before is a worker that died.
    batches: usize,
    batch: std::vec::IntoIter<Segment>,
    checked: HashSet<ObjectId>,
    newly: Vec<ObjectId>,
}

impl Iterator for StoredLines<'_> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        let (path, blob, bytes) = match self.batch.next() {
            Some(segment) => segment,
            None if self.next_queue == self.batches => return None,
            None => {
                let queue = &self.queues[self.next_queue % self.queues.len()];
                self.next_queue += 1;
                let Ok(batch) = queue.recv() else {
                    self.next_queue = self.batches;
                    return Some(Err(super::git_detail("read segments", "a reading thread stopped early")));
                };
                self.batch = batch.into_iter();
                self.batch.next()?
            }
        };
        Some((|| {
            // The worker's view of the objects can miss one a gc just packed: look again here.
            let bytes = match bytes {
                Some(bytes) => bytes,
                None => self.store.read_blob(blob)?,
            };
            if !self.checked.contains(&blob) {
                let text = std::str::from_utf8(&bytes)
                    .map_err(|_| StoreError::BadFile { path: path.clone(), message: "not UTF-8".into() })?;
                event::check_stored(text).map_err(|error| StoreError::Corrupt { path, error })?;
                self.newly.push(blob);
            }
            Ok(bytes)
        })())
    }
}

impl Drop for StoredLines<'_> {
    fn drop(&mut self) {
        self.store.note_checked(&self.newly);
    }
}

/// Loose blobs read with one `read(2)` into a buffer kept between them, and inflated with
/// one zlib state: gix maps each loose file, and unmapping it while other threads run costs
/// every core a TLB flush, which was a third of `show --format jsonl`'s time. Anything
/// unexpected (a packed object, a damaged file) is left to gix.
struct Loose {
    objects: std::path::PathBuf,
    file: Vec<u8>,
    inflate: gix_zlib::Inflate,
}

impl Loose {
    fn new(objects: std::path::PathBuf) -> Loose {
        Loose { objects, file: Vec::new(), inflate: gix_zlib::Inflate::default() }
    }

    fn blob(&mut self, id: ObjectId) -> Option<Vec<u8>> {
        use std::io::Read as _;
        let hex = id.to_hex().to_string();
        let mut file = std::fs::File::open(self.objects.join(&hex[..2]).join(&hex[2..])).ok()?;
        self.file.clear();
        file.read_to_end(&mut self.file).ok()?;
        self.inflate.reset();
        let mut head = [0u8; 64];
        let (status, used, written) = self.inflate.prefix(&self.file, &mut head).ok()?;
        let head = &head[..written];
        let end = head.iter().position(|b| *b == 0)?;
        let size: usize = std::str::from_utf8(head[..end].strip_prefix(b"blob ")?).ok()?.parse().ok()?;
        let mut out = Vec::with_capacity(size);
        let n = match status {
            gix_zlib::Status::StreamEnd => {
                out.extend_from_slice(&head[end + 1..]);
                out.len()
            }
            _ => self.inflate.rest(&self.file[used..], head, end + 1, &mut out, size).ok()?,
        };
        (n == size && out.len() == size).then_some(out)
    }
}

/// Segments read one at a time in the caller's thread, loose ones as [`Loose`] reads them:
/// for a search across thousands of small conversations, where starting the workers of
/// [`StoredLines`] would cost more than the reading.
pub struct SegmentReader<'a> {
    store: &'a Store,
    loose: Loose,
}

impl SegmentReader<'_> {
    /// The bytes of segment blob `blob`.
    pub fn read(&mut self, blob: ObjectId) -> Result<Vec<u8>> {
        match self.loose.blob(blob) {
            Some(bytes) => Ok(bytes),
            None => self.store.read_blob(blob),
        }
    }
}

impl Store {
    pub fn segment_reader(&self) -> SegmentReader<'_> {
        SegmentReader { store: self, loose: Loose::new(self.repo.common_dir().join("objects")) }
    }

    /// The stored lines of conversation `id`, checked but not parsed (see the module's doc).
    pub fn stored_lines(&self, id: &str) -> Result<StoredLines<'_>> {
        let segments = self.segments(id)?;
        Ok(self.stored_lines_of(&segments))
    }

    /// The stored lines of the segments `outlined` was read from, in its order.
    pub fn outlined_lines(&self, outlined: &super::OutlinedAt) -> StoredLines<'_> {
        let segments: Vec<(String, ObjectId)> = outlined.segments.iter().map(|(p, b, _)| (p.clone(), *b)).collect();
        self.stored_lines_of(&segments)
    }

    fn stored_lines_of(&self, segments: &[(String, ObjectId)]) -> StoredLines<'_> {
        let batches: Vec<Vec<(String, ObjectId)>> = segments.chunks(BATCH).map(<[_]>::to_vec).collect();
        let mut queues = Vec::new();
        for worker in 0..WORKERS.min(batches.len().max(1)) {
            let (send, queue) = mpsc::sync_channel(AHEAD);
            queues.push(queue);
            let mine: Vec<Vec<(String, ObjectId)>> = batches.iter().skip(worker).step_by(WORKERS).cloned().collect();
            // gix is built without its `parallel` feature (its handles are not `Send`): each
            // worker opens the repository itself, which costs about a millisecond.
            let root = self.root.clone();
            let objects = self.repo.common_dir().join("objects");
            std::thread::spawn(move || {
                let repo = gix::open(&root).ok();
                let mut loose = Loose::new(objects);
                for batch in mine {
                    let inflated: Vec<Segment> = batch
                        .into_iter()
                        .map(|(path, blob)| {
                            let bytes = loose.blob(blob).or_else(|| {
                                repo.as_ref().and_then(|r| r.find_blob(blob).ok()).map(|b| b.detach().data)
                            });
                            (path, blob, bytes)
                        })
                        .collect();
                    // The reader went away (an error, a closed pipe): stop.
                    if send.send(inflated).is_err() {
                        return;
                    }
                }
            });
        }
        StoredLines {
            store: self,
            queues,
            next_queue: 0,
            batches: batches.len(),
            batch: Vec::new().into_iter(),
            checked: self.checked(),
            newly: Vec::new(),
        }
    }

    /// The blob ids known to hold good JSON lines. A record torn by a crash is cut off
    /// (and the file cut back, so later records line up again).
    fn checked(&self) -> HashSet<ObjectId> {
        let path = self.state_dir().join(FILE);
        let bytes = std::fs::read(&path).unwrap_or_default();
        let whole = bytes.len() - bytes.len() % 20;
        if whole != bytes.len()
            && let Ok(file) = private_options().write(true).open(&path)
        {
            let _ = file.set_len(whole as u64);
        }
        bytes[..whole].chunks_exact(20).map(ObjectId::from_bytes_or_panic).collect()
    }

    /// Remember blobs as good JSON lines. Best effort, one `write(2)` so a crash tears at
    /// most this batch (and a torn file is simply not believed).
    pub(super) fn note_checked(&self, blobs: &[ObjectId]) {
        if blobs.is_empty() {
            return;
        }
        let bytes: Vec<u8> = blobs.iter().flat_map(|b| b.as_bytes().to_vec()).collect();
        let path = self.state_dir().join(FILE);
        if let Ok(mut file) = private_options().append(true).open(&path) {
            let _ = file.write_all(&bytes);
        }
    }

    /// Segment blobs among `(path, blob)` pairs a writer just committed.
    pub(super) fn note_written_segments<'a>(&self, written: impl IntoIterator<Item = (&'a str, ObjectId)>) {
        let segments: Vec<ObjectId> = written
            .into_iter()
            .filter(|(path, _)| path.rsplit('/').next().and_then(layout::parse_segment_name).is_some())
            .map(|(_, blob)| blob)
            .collect();
        self.note_checked(&segments);
    }
}
