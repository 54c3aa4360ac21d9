//! The git index patched, for the common write: an append changes one or two files the
//! index already has an entry for (or adds a segment), and in a store of 10,000
//! conversations the index is 2.5 MB that gix would decode, re-encode and hash whole.
//!
//! An entry's stat data and object id sit at fixed offsets and keep their size, so they are
//! rewritten where they are; a new path's entry is put where it sorts and the count in the
//! header goes up. The new index is described as pieces (ranges of the old one kept as they
//! are, and new bytes), so it is written from a mapping of the old one without copying it
//! in memory first. The pieces stop before the trailing checksum, which the writer hashes
//! from them: a git that read the index checks it before writing back what it refreshed, so
//! a null one (which git reads as "not computed") would let it overwrite a newer index.
//! Anything else (a conflicted or removed path, an extension such as git's cache tree, which
//! would go stale, an index version other than 2 or 3) is left to the whole write. Pure:
//! bytes in, pieces out.
//!
//! Kept over gix's whole write (issue 30): the split-index writer (`split_index`, which gix
//! cannot do) is built from these pieces and entry codecs, and for an index that is not
//! split the whole write through gix cost an append 10% more CPU and wall time in a store of
//! one 10,000-turn conversation (1,436 entries), in alternating rounds of appends.

use std::ops::Range;

use gix::ObjectId;
use gix::index::entry::Stat;

/// One entry to rewrite or add: its path, the blob it now holds, and the file's stat.
pub(super) struct Update<'a> {
    pub path: &'a str,
    pub id: ObjectId,
    pub stat: Stat,
}

/// A part of the new index: bytes of the old one, or new bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Piece {
    Keep(Range<usize>),
    New(Vec<u8>),
}

impl Piece {
    /// Its bytes, `source` being the index it keeps ranges of.
    pub(super) fn bytes<'a>(&'a self, source: &'a [u8]) -> &'a [u8] {
        match self {
            Piece::Keep(range) => &source[range.clone()],
            Piece::New(bytes) => bytes,
        }
    }
}

pub(super) const HEADER: usize = 12;
/// ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each).
pub(super) const STAT_BYTES: usize = 40;
const FLAG_EXTENDED: u16 = 0x4000;
const NAME_MASK: u16 = 0x0fff;
const STAGE_MASK: u16 = 0x3000;
/// A regular, non-executable file: what convo writes.
const MODE_FILE: u32 = 0o100644;

/// The version, entry count and end of the body (where the trailing checksum starts) of a
/// version 2 or 3 index; `None` for anything else (version 4 compresses paths).
pub(super) fn header(index: &[u8], hash_len: usize) -> Option<(u32, usize, usize)> {
    if index.len() < HEADER + hash_len || &index[..4] != b"DIRC" {
        return None;
    }
    let version = u32::from_be_bytes(index[4..8].try_into().ok()?);
    if version != 2 && version != 3 {
        return None;
    }
    let count = u32::from_be_bytes(index[8..12].try_into().ok()?) as usize;
    Some((version, count, index.len() - hash_len))
}

/// One entry of an index, where it lies in the file.
pub(super) struct RawEntry<'a> {
    pub start: usize,
    /// The end of its stat data and object id: what [`write_entry`] rewrites.
    pub fixed: usize,
    pub end: usize,
    pub flags: u16,
    pub name: &'a [u8],
}

impl RawEntry<'_> {
    pub(super) fn is_conflicted(&self) -> bool {
        self.flags & STAGE_MASK != 0
    }
}

/// The entry that starts at `at`, if a whole one does before `body_end`.
pub(super) fn entry_at(
    index: &[u8],
    at: usize,
    version: u32,
    hash_len: usize,
    body_end: usize,
) -> Option<RawEntry<'_>> {
    let fixed = at + STAT_BYTES + hash_len;
    let flags = u16::from_be_bytes(index.get(fixed..fixed + 2)?.try_into().ok()?);
    let mut name_at = fixed + 2;
    if version == 3 && flags & FLAG_EXTENDED != 0 {
        name_at += 2;
    }
    let name_len = match flags & NAME_MASK {
        NAME_MASK => memchr::memchr(0, index.get(name_at..body_end)?)?,
        n => n as usize,
    };
    let name = index.get(name_at..name_at + name_len)?;
    // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
    let end = at + ((name_at - at + name_len + 8) & !7);
    (end <= body_end).then_some(RawEntry { start: at, fixed, end, flags, name })
}

/// The extensions between `from` (the end of the entries) and `body_end`: signature and
/// the range of its data; `None` when they do not fill the space exactly.
pub(super) fn extensions(index: &[u8], mut from: usize, body_end: usize) -> Option<Vec<([u8; 4], Range<usize>)>> {
    let mut found = Vec::new();
    while from < body_end {
        let signature: [u8; 4] = index.get(from..from + 4)?.try_into().ok()?;
        let len = u32::from_be_bytes(index.get(from + 4..from + 8)?.try_into().ok()?) as usize;
        let data = from + 8..(from + 8).checked_add(len)?;
        if data.end > body_end {
            return None;
        }
        from = data.end;
        found.push((signature, data));
    }
    Some(found)
}

/// `index` with each of `updates` written into its entry (or added as a new one), as
/// pieces to write in order, without the trailing checksum (the writer adds it); `None`
/// when the index must be written whole.
pub(super) fn patched(index: &[u8], updates: &[Update], hash_len: usize) -> Option<Vec<Piece>> {
    if updates.is_empty() {
        return None;
    }
    let (version, count, body_end) = header(index, hash_len)?;
    let order = sorted(updates)?;
    // New paths in index order: each goes before the first entry that sorts after it.
    let mut inserts: Vec<usize> = Vec::new();
    let mut found = vec![false; updates.len()];
    // (offset, bytes) to put into the old index, in order: rewritten entries and insertions.
    let mut edits: Vec<(usize, Option<usize>, Vec<u8>)> = Vec::new();
    let mut next_new = 0;
    let mut at = HEADER;
    for _ in 0..count {
        let entry = entry_at(index, at, version, hash_len, body_end)?;
        // Paths not yet placed that sort before this one are new: they go here.
        while next_new < order.len() && updates[order[next_new]].path.as_bytes() < entry.name {
            let i = order[next_new];
            if !found[i] {
                found[i] = true;
                inserts.push(i);
                edits.push((at, None, new_entry(&updates[i], hash_len)?));
            }
            next_new += 1;
        }
        // Both in path order: only the next update can be this entry's.
        if next_new < order.len() && updates[order[next_new]].path.as_bytes() == entry.name {
            let i = order[next_new];
            // A conflicted path has several entries: the whole write resolves it.
            if entry.is_conflicted() || found[i] {
                return None;
            }
            found[i] = true;
            next_new += 1;
            let mut bytes = index[at..entry.fixed].to_vec();
            write_entry(&mut bytes, &updates[i], hash_len);
            edits.push((at, Some(entry.fixed), bytes));
        }
        at = entry.end;
    }
    // Extensions follow the entries: one convo did not write (git's cache tree, say) could
    // go stale.
    if at != body_end {
        return None;
    }
    for &i in &order[next_new..] {
        if !found[i] {
            found[i] = true;
            inserts.push(i);
            edits.push((body_end, None, new_entry(&updates[i], hash_len)?));
        }
    }
    let mut pieces = vec![Piece::New(header_bytes(version, count + inserts.len())?)];
    let mut kept = HEADER;
    for (offset, replaced_end, bytes) in edits {
        if offset > kept {
            pieces.push(Piece::Keep(kept..offset));
        }
        pieces.push(Piece::New(bytes));
        kept = replaced_end.unwrap_or(offset);
    }
    if body_end > kept {
        pieces.push(Piece::Keep(kept..body_end));
    }
    Some(pieces)
}

/// The indices of `updates` in path order; `None` when a path comes twice.
pub(super) fn sorted(updates: &[Update]) -> Option<Vec<usize>> {
    let mut order: Vec<usize> = (0..updates.len()).collect();
    order.sort_by(|a, b| updates[*a].path.cmp(updates[*b].path));
    (!order.windows(2).any(|w| updates[w[0]].path == updates[w[1]].path)).then_some(order)
}

/// An index header: signature, version, entry count.
pub(super) fn header_bytes(version: u32, count: usize) -> Option<Vec<u8>> {
    let mut header = b"DIRC".to_vec();
    header.extend_from_slice(&version.to_be_bytes());
    header.extend_from_slice(&u32::try_from(count).ok()?.to_be_bytes());
    Some(header)
}

/// The bytes of `pieces` over `index`, joined, and their SHA-1: what the index writer puts
/// in the file.
#[cfg(test)]
pub(super) fn join(index: &[u8], pieces: &[Piece]) -> Vec<u8> {
    let mut bytes: Vec<u8> = pieces.iter().flat_map(|p| p.bytes(index).to_vec()).collect();
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(&bytes);
    bytes.extend_from_slice(hasher.try_finalize().unwrap().as_slice());
    bytes
}

/// A whole version 2 entry for a path the index does not have: stat, object id, flags (the
/// name's length, stage 0), the name, NUL padding to a multiple of 8 bytes.
pub(super) fn new_entry(update: &Update, hash_len: usize) -> Option<Vec<u8>> {
    let name = update.path.as_bytes();
    // Longer names are stored with the mask and found by their NUL: left to gix.
    if name.len() >= NAME_MASK as usize || name.contains(&0) {
        return None;
    }
    let fixed = STAT_BYTES + hash_len;
    let size = (fixed + 2 + name.len() + 8) & !7;
    let mut entry = vec![0u8; size];
    write_entry(&mut entry[..fixed], update, hash_len);
    entry[fixed..fixed + 2].copy_from_slice(&(name.len() as u16).to_be_bytes());
    entry[fixed + 2..fixed + 2 + name.len()].copy_from_slice(name);
    Some(entry)
}

/// The stat data, mode and object id of one entry (`entry`: its first 40 + hash bytes).
pub(super) fn write_entry(entry: &mut [u8], update: &Update, hash_len: usize) {
    let s = &update.stat;
    let words =
        [s.ctime.secs, s.ctime.nsecs, s.mtime.secs, s.mtime.nsecs, s.dev, s.ino, MODE_FILE, s.uid, s.gid, s.size];
    for (slot, word) in entry[..STAT_BYTES].chunks_exact_mut(4).zip(words) {
        slot.copy_from_slice(&word.to_be_bytes());
    }
    entry[STAT_BYTES..STAT_BYTES + hash_len].copy_from_slice(update.id.as_slice());
}

#[cfg(test)]
mod tests {
    use super::*;
    use gix::bstr::ByteSlice;
    use gix::index::entry::{Flags, Mode, Stage};

    fn stat(n: u32) -> Stat {
        Stat {
            mtime: gix::index::entry::stat::Time { secs: 1_700_000_000 + n, nsecs: n },
            ctime: gix::index::entry::stat::Time { secs: 1_600_000_000 + n, nsecs: 2 * n },
            dev: 7,
            ino: 100 + n,
            uid: 1000,
            gid: 1000,
            size: 10 * n,
        }
    }

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    /// An index as gix writes it, with `paths`.
    fn index(paths: &[String]) -> Vec<u8> {
        let mut state = gix::index::State::new(gix::hash::Kind::Sha1);
        for (n, path) in paths.iter().enumerate() {
            state.dangerously_push_entry(
                stat(n as u32),
                id(n as u8),
                Flags::empty(),
                Mode::FILE,
                path.as_bytes().as_bstr(),
            );
        }
        state.sort_entries();
        let file = gix::index::File::from_state(state, "unused");
        let mut bytes = Vec::new();
        file.write_to(&mut bytes, Default::default()).unwrap();
        bytes
    }

    fn decode(bytes: &[u8]) -> gix::index::State {
        gix::index::State::from_bytes(bytes, std::time::UNIX_EPOCH.into(), gix::hash::Kind::Sha1, Default::default())
            .unwrap()
            .0
    }

    #[test]
    fn a_patched_index_decodes_as_gix_would_have_written_it() {
        let mut paths: Vec<String> =
            (0..50).map(|n| format!("conversations/{n:02}/events/0000/000000.jsonl")).collect();
        paths.push(format!("conversations/long/{}", "x".repeat(4000)));
        paths.push("a".into());
        let before = index(&paths);
        let changed = ["conversations/17/events/0000/000000.jsonl", paths[50].as_str(), "a"];
        let updates: Vec<Update> = changed
            .iter()
            .enumerate()
            .map(|(n, p)| Update { path: p, id: id(200 + n as u8), stat: stat(900 + n as u32) })
            .collect();
        let after = join(&before, &patched(&before, &updates, 20).expect("patchable"));
        assert_eq!(after.len(), before.len());
        let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
        hasher.update(&after[..after.len() - 20]);
        assert_eq!(hasher.try_finalize().unwrap().as_slice(), &after[after.len() - 20..], "the checksum is the body's");

        let mut expected = decode(&before);
        for u in &updates {
            let entry = expected.entry_mut_by_path_and_stage(u.path.as_bytes().as_bstr(), Stage::Unconflicted).unwrap();
            entry.id = u.id;
            entry.stat = u.stat;
        }
        let got = decode(&after);
        assert_eq!(got.entries().len(), expected.entries().len());
        for (g, e) in got.entries().iter().zip(expected.entries()) {
            assert_eq!(g.path(&got), e.path(&expected));
            assert_eq!((g.id, g.stat, g.mode, g.flags), (e.id, e.stat, e.mode, e.flags));
        }
    }

    #[test]
    fn new_paths_are_inserted_where_they_sort() {
        let paths: Vec<String> = vec!["b".into(), "conversations/AB/x/events/0000/000001.jsonl".into(), "d".into()];
        let before = index(&paths);
        let added = ["a", "c", "conversations/AB/x/events/0000/000002.jsonl", "e"];
        let mut updates: Vec<Update> = added
            .iter()
            .enumerate()
            .map(|(n, p)| Update { path: p, id: id(100 + n as u8), stat: stat(50 + n as u32) })
            .collect();
        updates.push(Update { path: "d", id: id(99), stat: stat(99) });
        let after = join(&before, &patched(&before, &updates, 20).expect("patchable"));
        let got = decode(&after);
        let mut all: Vec<String> = paths.iter().cloned().chain(added.iter().map(|p| p.to_string())).collect();
        all.sort();
        let names: Vec<String> = got.entries().iter().map(|e| e.path(&got).to_string()).collect();
        assert_eq!(names, all);
        for u in &updates {
            let e = got.entry_by_path_and_stage(u.path.as_bytes().as_bstr(), Stage::Unconflicted).unwrap();
            assert_eq!((e.id, e.stat, e.mode), (u.id, u.stat, Mode::FILE), "{}", u.path);
        }
        // What git itself reads back.
        let dir = tempfile::tempdir().unwrap();
        let git =
            |args: &[&str]| std::process::Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
        assert!(git(&["init", "-q"]).status.success());
        std::fs::write(dir.path().join(".git/index"), &after).unwrap();
        let listed = git(&["ls-files", "-s"]);
        assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
        assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), all.len());
    }

    #[test]
    fn what_cannot_be_patched_is_left_to_the_whole_write() {
        let paths: Vec<String> = vec!["a".into(), "b".into()];
        let bytes = index(&paths);
        let update = |p: &'static str| vec![Update { path: p, id: id(9), stat: stat(9) }];
        assert!(patched(&bytes, &update("a"), 20).is_some());
        assert!(patched(&bytes, &[], 20).is_none());
        // The same path twice.
        let twice: Vec<Update> = update("a").into_iter().chain(update("a")).collect();
        assert!(patched(&bytes, &twice, 20).is_none());
        // An extension after the entries (git's cache tree, say).
        let mut with_extension = bytes[..bytes.len() - 20].to_vec();
        with_extension.extend_from_slice(b"TREE\0\0\0\0");
        with_extension.extend_from_slice(&[0; 20]);
        assert!(patched(&with_extension, &update("a"), 20).is_none());
        // Version 4 compresses paths; and anything that is not an index.
        let mut v4 = bytes.clone();
        v4[7] = 4;
        assert!(patched(&v4, &update("a"), 20).is_none());
        assert!(patched(b"not an index at all, really", &update("a"), 20).is_none());
        // Cut short.
        assert!(patched(&bytes[..bytes.len() - 30], &update("b"), 20).is_none());
    }
}
