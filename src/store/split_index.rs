//! git's split index, for appends in a big store. git replaces the index whole on every
//! write (a new file renamed over it, under `index.lock`); at 10,000 conversations that is
//! 2.5 MB of page-cache work per append, most of what made an append there cost 1.4 times
//! one in a small store. Split (git's `core.splitIndex`), `.git/index` holds only what
//! changed since a shared index, `sharedindex.<its checksum>`, which it names in its `link`
//! extension, with a bitmap of the shared entries it deletes (and one of those it replaces).
//!
//! convo writes a changed path as its shared entry deleted plus an entry of the split
//! index's own, never as a replacement: a replacing entry has no name, so finding it again
//! would mean walking the shared index. git and gix both read that back as the path's new
//! entry. An append whose paths already have entries of the split index's own (the open
//! segment, appended to again and again) reads nothing of the shared index but its header.
//! When the own entries pass `splitIndex.maxPercentChange` of all (git's default, 20%),
//! the two are merged into a new shared index and the split index starts again empty.
//! A split index git wrote with replacements, extensions or conflicts is left to the whole
//! write, which un-splits it. Pure: bytes in, bytes or pieces out.

use std::borrow::Cow;

use gix::ObjectId;

use super::index_patch::{self, HEADER, Piece, RawEntry, Update};

/// A split index as convo can update it.
pub(super) struct Link<'a> {
    version: u32,
    /// Its own entries, in path order.
    entries: Vec<RawEntry<'a>>,
    /// The checksum of the shared index, which is also its file's name.
    pub shared: ObjectId,
    deleted: gix_bitmap::ewah::Vec,
}

/// What an update of a split index comes to.
#[derive(Debug)]
pub(super) enum Outcome {
    /// A new split index over the same shared index, without its checksum (the writer
    /// hashes it: a racing git's check that the index did not change compares checksums).
    Split(Vec<u8>),
    /// So much changed that the two merge into a new shared index: its pieces over the old
    /// shared index, without the checksum (the writer hashes the pieces and names the file
    /// by the hash), and its version.
    Reshare { pieces: Vec<Piece>, version: u32 },
}

/// `index` read as a split index convo can update: own entries that are unconflicted and in
/// order, the `link` extension as its only extension, with bitmaps and no replacement.
pub(super) fn link(index: &[u8], hash_len: usize) -> Option<Link<'_>> {
    let (version, count, body_end) = index_patch::header(index, hash_len)?;
    let mut entries: Vec<RawEntry> = Vec::with_capacity(count);
    let mut at = HEADER;
    for _ in 0..count {
        let entry = index_patch::entry_at(index, at, version, hash_len, body_end)?;
        if entry.is_conflicted() || entry.name.is_empty() || entries.last().is_some_and(|e| e.name >= entry.name) {
            return None;
        }
        at = entry.end;
        entries.push(entry);
    }
    let extensions = index_patch::extensions(index, at, body_end)?;
    let [(signature, data)] = extensions.as_slice() else { return None };
    if signature != b"link" {
        return None;
    }
    let data = &index[data.clone()];
    let shared = ObjectId::try_from(data.get(..hash_len)?).ok().filter(|id| !id.is_null())?;
    let (deleted, rest) = gix_bitmap::ewah::decode(data.get(hash_len..)?).ok()?;
    let (replaced, rest) = gix_bitmap::ewah::decode(rest).ok()?;
    // `for_each_set_bit` stops at the first set bit (or a malformed bitmap).
    if !rest.is_empty() || replaced.for_each_set_bit(|_| None).is_none() {
        return None;
    }
    Some(Link { version, entries, shared, deleted })
}

/// The split index `split` (read by [`link`]) over `shared`, with each of `updates` written
/// into an own entry (a path the shared index has is deleted there); `None` when the index
/// must be written whole. Past `max_percent` of own entries, the merged shared index.
pub(super) fn patched(
    split: &[u8],
    link: &Link,
    shared: &[u8],
    updates: &[Update],
    hash_len: usize,
    max_percent: u32,
) -> Option<Outcome> {
    let (shared_version, shared_count, shared_end) = index_patch::header(shared, hash_len)?;
    // Named by its checksum: a file that does not end with it is not the one linked.
    if shared[shared_end..] != *link.shared.as_slice() {
        return None;
    }
    let mut deleted = vec![false; shared_count];
    link.deleted.for_each_set_bit(|k| {
        *deleted.get_mut(k)? = true;
        Some(())
    })?;
    let order = index_patch::sorted(updates)?;
    let mut own: Vec<(&[u8], Cow<[u8]>)> =
        link.entries.iter().map(|e| (e.name, Cow::Borrowed(&split[e.start..e.end]))).collect();
    let fixed = index_patch::STAT_BYTES + hash_len;
    let mut pending: Vec<usize> = Vec::new();
    for &i in &order {
        let update = &updates[i];
        match own.binary_search_by(|(name, _)| (*name).cmp(update.path.as_bytes())) {
            Ok(at) => index_patch::write_entry(&mut own[at].1.to_mut()[..fixed], update, hash_len),
            Err(_) => pending.push(i),
        }
    }
    if !pending.is_empty() {
        // One walk of the shared index, in path order, for the paths it may have.
        let mut next = 0;
        let mut at = HEADER;
        for slot in deleted.iter_mut() {
            if next == pending.len() {
                break;
            }
            let entry = index_patch::entry_at(shared, at, shared_version, hash_len, shared_end)?;
            while next < pending.len() && updates[pending[next]].path.as_bytes() < entry.name {
                next += 1;
            }
            if next < pending.len() && updates[pending[next]].path.as_bytes() == entry.name {
                if entry.is_conflicted() {
                    return None;
                }
                *slot = true;
                next += 1;
            }
            at = entry.end;
        }
        for &i in &pending {
            own.push((updates[i].path.as_bytes(), Cow::Owned(index_patch::new_entry(&updates[i], hash_len)?)));
        }
        own.sort_by(|a, b| a.0.cmp(b.0));
    }
    let total = deleted.iter().filter(|d| !**d).count() + own.len();
    let reshare = match max_percent {
        0 => true,
        100.. => false,
        percent => own.len() * 100 > total * percent as usize,
    };
    if !reshare {
        return Some(Outcome::Split(split_bytes(link.version, &own, link.shared, &deleted)?));
    }
    let version = shared_version.max(link.version);
    let mut pieces = vec![Piece::New(index_patch::header_bytes(version, total)?)];
    let mut mine = own.iter().peekable();
    let mut run: Option<std::ops::Range<usize>> = None;
    let mut at = HEADER;
    for &gone in &deleted {
        let entry = index_patch::entry_at(shared, at, shared_version, hash_len, shared_end)?;
        while let Some((_, bytes)) = mine.next_if(|own| own.0 < entry.name) {
            pieces.extend(run.take().map(Piece::Keep));
            pieces.push(Piece::New(bytes.to_vec()));
        }
        if gone {
            pieces.extend(run.take().map(Piece::Keep));
        } else {
            run = Some(run.map_or(entry.start..entry.end, |r| r.start..entry.end));
        }
        at = entry.end;
    }
    pieces.extend(run.take().map(Piece::Keep));
    pieces.extend(mine.map(|(_, bytes)| Piece::New(bytes.to_vec())));
    Some(Outcome::Reshare { pieces, version })
}

/// A split index with no entries of its own, over the shared index `shared`, without its
/// checksum: what follows writing a new shared index.
pub(super) fn empty(version: u32, shared: ObjectId) -> Option<Vec<u8>> {
    split_bytes(version, &[], shared, &[])
}

/// A split index without its checksum: header, `own` entries, the `link` extension.
fn split_bytes(version: u32, own: &[(&[u8], Cow<[u8]>)], shared: ObjectId, deleted: &[bool]) -> Option<Vec<u8>> {
    let mut out = index_patch::header_bytes(version, own.len())?;
    for (_, bytes) in own {
        out.extend_from_slice(bytes);
    }
    let mut link = shared.as_slice().to_vec();
    // Literal words only: a bit per shared entry, 3 KB at 25,000 entries.
    gix_bitmap::ewah::Vec::from_bits(deleted)?.write_to(&mut link).ok()?;
    gix_bitmap::ewah::Vec::from_bits(&[])?.write_to(&mut link).ok()?;
    out.extend_from_slice(b"link");
    out.extend_from_slice(&u32::try_from(link.len()).ok()?.to_be_bytes());
    out.extend_from_slice(&link);
    Some(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use gix::bstr::ByteSlice;
    use gix::index::entry::{Flags, Mode, Stat};

    use super::*;

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

    fn id(n: u32) -> ObjectId {
        let mut bytes = [0u8; 20];
        bytes[..4].copy_from_slice(&(n + 1).to_be_bytes());
        ObjectId::from_bytes_or_panic(&bytes)
    }

    type Model = BTreeMap<String, (ObjectId, Stat)>;

    /// A whole index as gix writes it.
    fn whole(model: &Model) -> Vec<u8> {
        let mut state = gix::index::State::new(gix::hash::Kind::Sha1);
        for (path, (id, stat)) in model {
            state.dangerously_push_entry(*stat, *id, Flags::empty(), Mode::FILE, path.as_bytes().as_bstr());
        }
        state.sort_entries();
        let mut bytes = Vec::new();
        gix::index::File::from_state(state, "unused").write_to(&mut bytes, Default::default()).unwrap();
        bytes
    }

    /// `body` and its checksum, as the index writer puts them.
    fn hashed(mut body: Vec<u8>) -> Vec<u8> {
        let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
        hasher.update(&body);
        body.extend_from_slice(hasher.try_finalize().unwrap().as_slice());
        body
    }

    /// `pieces` over `source` written as a shared index in `git_dir`: its checksum.
    fn share(git_dir: &Path, source: &[u8], pieces: &[Piece]) -> ObjectId {
        let mut bytes: Vec<u8> = pieces.iter().flat_map(|p| p.bytes(source).to_vec()).collect();
        let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
        hasher.update(&bytes);
        let id = hasher.try_finalize().unwrap();
        bytes.extend_from_slice(id.as_slice());
        std::fs::write(git_dir.join(format!("sharedindex.{id}")), bytes).unwrap();
        id
    }

    /// What gix and git read from the index in `git_dir`, against `model`.
    fn reads_as(git_dir: &Path, model: &Model, when: &str) {
        let file = gix::index::File::at(git_dir.join("index"), gix::hash::Kind::Sha1, false, Default::default())
            .unwrap_or_else(|e| panic!("{when}: gix reads the split index: {e}"));
        let read: Model = file.entries().iter().map(|e| (e.path(&file).to_string(), (e.id, e.stat))).collect();
        assert_eq!(file.entries().len(), model.len(), "{when}: no path twice");
        assert_eq!(&read, model, "{when}");
        let listed = std::process::Command::new("git")
            .args(["ls-files", "-s"])
            .current_dir(git_dir.parent().unwrap())
            .output()
            .unwrap();
        assert!(listed.status.success(), "{when}: {}", String::from_utf8_lossy(&listed.stderr));
        let expected: String = model.iter().map(|(path, (id, _))| format!("100644 {id} 0\t{path}\n")).collect();
        assert_eq!(String::from_utf8_lossy(&listed.stdout), expected, "{when}");
    }

    #[test]
    fn updates_of_a_split_index_read_back_as_the_whole_index() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap().success()
        );
        let git_dir = dir.path().join(".git");
        let mut model: Model = (0..40)
            .map(|n| (format!("conversations/{:02}/x/events/0000/{n:06}.jsonl", n % 7), (id(n), stat(n))))
            .collect();
        let before = whole(&model);
        // A whole index becomes the first shared index, with the update that split it.
        let first = Update { path: "conversations/03/x/events/0000/000003.jsonl", id: id(1000), stat: stat(1000) };
        let pieces = index_patch::patched(&before, std::slice::from_ref(&first), 20).unwrap();
        model.insert(first.path.into(), (first.id, first.stat));
        let mut shared_id = share(&git_dir, &before, &pieces);
        let mut split = hashed(empty(2, shared_id).unwrap());
        std::fs::write(git_dir.join("index"), &split).unwrap();
        reads_as(&git_dir, &model, "just split");

        let mut next = 2000;
        for round in 0..8 {
            // A shared path, a path changed in an earlier round (own), and a new one.
            let paths = [
                format!("conversations/{:02}/x/events/0000/{:06}.jsonl", (round * 5) % 7, round * 5),
                "conversations/03/x/events/0000/000003.jsonl".to_owned(),
                format!("conversations/{:02}/new/{round}.jsonl", round % 3),
            ];
            let updates: Vec<Update> = paths
                .iter()
                .map(|path| {
                    next += 1;
                    Update { path, id: id(next), stat: stat(next) }
                })
                .collect();
            for u in &updates {
                model.insert(u.path.to_owned(), (u.id, u.stat));
            }
            let shared = std::fs::read(git_dir.join(format!("sharedindex.{shared_id}"))).unwrap();
            let link = link(&split, 20).expect("convo's own split index");
            // Merged in the last round only.
            let percent = if round == 7 { 0 } else { 100 };
            match patched(&split, &link, &shared, &updates, 20, percent).expect("updatable") {
                Outcome::Split(bytes) => {
                    assert!(round < 7);
                    split = hashed(bytes);
                }
                Outcome::Reshare { pieces, version } => {
                    assert_eq!(round, 7);
                    shared_id = share(&git_dir, &shared, &pieces);
                    split = hashed(empty(version, shared_id).unwrap());
                }
            }
            std::fs::write(git_dir.join("index"), &split).unwrap();
            reads_as(&git_dir, &model, &format!("round {round}"));
        }
        // The merged shared index is the whole index, with nothing of its own left over.
        let shared = std::fs::read(git_dir.join(format!("sharedindex.{shared_id}"))).unwrap();
        assert_eq!(index_patch::header(&shared, 20).unwrap().1, model.len());
        assert_eq!(index_patch::header(&split, 20).unwrap().1, 0);
    }

    #[test]
    fn split_indexes_convo_cannot_update_are_left_to_the_whole_write() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a"), "a").unwrap();
        git(&["add", "a"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"]);
        // git's own split index keeps its cache tree beside the link.
        git(&["update-index", "--split-index"]);
        let gits = std::fs::read(dir.path().join(".git/index")).unwrap();
        assert!(gits.windows(4).any(|w| w == b"link") && link(&gits, 20).is_none());

        let model: Model = (0..3).map(|n| (format!("p{n}"), (id(n), stat(n)))).collect();
        let shared_body = whole(&model);
        let pieces = vec![Piece::Keep(0..shared_body.len() - 20)];
        let shared_id = share(dir.path(), &shared_body, &pieces);
        let shared = std::fs::read(dir.path().join(format!("sharedindex.{shared_id}"))).unwrap();
        let split = hashed(empty(2, shared_id).unwrap());
        let update = [Update { path: "p1", id: id(9), stat: stat(9) }];
        assert!(patched(&split, &link(&split, 20).unwrap(), &shared, &update, 20, 20).is_some());
        // A shared index that is not the one linked (its checksum differs).
        let mut other = shared.clone();
        let last = other.len() - 1;
        other[last] ^= 1;
        assert!(patched(&split, &link(&split, 20).unwrap(), &other, &update, 20, 20).is_none());
        // Replacements (git's way to change a shared entry): convo does not write them.
        let with_replace = |bits: &[bool]| {
            let mut empty_bitmap = Vec::new();
            gix_bitmap::ewah::Vec::from_bits(&[]).unwrap().write_to(&mut empty_bitmap).unwrap();
            let mut bytes = split[..split.len() - 20 - empty_bitmap.len()].to_vec();
            gix_bitmap::ewah::Vec::from_bits(bits).unwrap().write_to(&mut bytes).unwrap();
            let link_len = (bytes.len() - index_patch::HEADER - 8) as u32;
            bytes[index_patch::HEADER + 4..index_patch::HEADER + 8].copy_from_slice(&link_len.to_be_bytes());
            bytes.extend_from_slice(&[0; 20]);
            bytes
        };
        assert!(link(&with_replace(&[false, false, false]), 20).is_some(), "none set");
        assert!(link(&with_replace(&[false, true, false]), 20).is_none());
        // A link without bitmaps, and a null shared checksum.
        let mut bare = index_patch::header_bytes(2, 0).unwrap();
        bare.extend_from_slice(b"link\0\0\0\x14");
        bare.extend_from_slice(shared_id.as_slice());
        bare.extend_from_slice(&[0; 20]);
        assert!(link(&bare, 20).is_none());
        let null = hashed(empty(2, ObjectId::null(gix::hash::Kind::Sha1)).unwrap());
        assert!(link(&null, 20).is_none());
    }
}
