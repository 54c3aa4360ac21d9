//! The git index patched in place, for the common write: an append changes one or two files
//! the index already has an entry for, and in a store of 10,000 conversations the index is
//! 2.5 MB that gix would decode, re-encode and hash whole (a third of such an append).
//!
//! An entry's stat data and object id sit at fixed offsets and keep their size, so they are
//! rewritten where they are, and the trailing checksum is zeroed instead of recomputed: git
//! reads a null checksum as "not computed" (`index.skipHash`, git 2.40), and convo's own
//! reads skip it. Anything else (a path without an entry, an extension such as git's cache
//! tree, which would go stale, an index version other than 2 or 3) is left to the whole
//! write. Pure: bytes in, bytes out.

use gix::ObjectId;
use gix::index::entry::Stat;

/// One entry to rewrite: its path, the blob it now holds, and the file's stat.
pub(super) struct Update<'a> {
    pub path: &'a str,
    pub id: ObjectId,
    pub stat: Stat,
}

const HEADER: usize = 12;
/// ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each).
const STAT_BYTES: usize = 40;
const FLAG_EXTENDED: u16 = 0x4000;
const NAME_MASK: u16 = 0x0fff;
const STAGE_MASK: u16 = 0x3000;
/// A regular, non-executable file: what convo writes.
const MODE_FILE: u32 = 0o100644;

/// `index` with each of `updates` written into its entry and the checksum zeroed, or `None`
/// when the index must be written whole.
pub(super) fn patched(index: &[u8], updates: &[Update], hash_len: usize) -> Option<Vec<u8>> {
    if updates.is_empty() || index.len() < HEADER + hash_len || &index[..4] != b"DIRC" {
        return None;
    }
    let version = u32::from_be_bytes(index[4..8].try_into().ok()?);
    if version != 2 && version != 3 {
        return None;
    }
    let count = u32::from_be_bytes(index[8..12].try_into().ok()?) as usize;
    let body_end = index.len() - hash_len;
    let mut out = index.to_vec();
    let mut found = vec![false; updates.len()];
    let mut at = HEADER;
    for _ in 0..count {
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
        if let Some(i) = updates.iter().position(|u| u.path.as_bytes() == name) {
            // A conflicted path has several entries: the whole write resolves it.
            if flags & STAGE_MASK != 0 || found[i] {
                return None;
            }
            found[i] = true;
            write_entry(&mut out[at..fixed], &updates[i], hash_len);
        }
        // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
        let base = name_at - at;
        at += (base + name_len + 8) & !7;
        if at > body_end {
            return None;
        }
    }
    // Extensions follow the entries: one convo did not write (git's cache tree, say) could
    // go stale.
    if at != body_end || !found.iter().all(|f| *f) {
        return None;
    }
    out[body_end..].fill(0);
    Some(out)
}

/// The stat data, mode and object id of one entry (`entry`: its first 40 + hash bytes).
fn write_entry(entry: &mut [u8], update: &Update, hash_len: usize) {
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
        let after = patched(&before, &updates, 20).expect("patchable");
        assert_eq!(after.len(), before.len());
        assert_eq!(&after[after.len() - 20..], &[0u8; 20], "the checksum is zeroed");

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
    fn what_cannot_be_patched_is_left_to_the_whole_write() {
        let paths: Vec<String> = vec!["a".into(), "b".into()];
        let bytes = index(&paths);
        let update = |p: &'static str| vec![Update { path: p, id: id(9), stat: stat(9) }];
        assert!(patched(&bytes, &update("a"), 20).is_some());
        assert!(patched(&bytes, &update("c"), 20).is_none(), "a new path needs an entry inserted");
        assert!(patched(&bytes, &[], 20).is_none());
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
