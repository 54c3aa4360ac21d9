//! The `conversations` folder, looked up without decoding it: with 10,000 conversations it
//! is a 530 KB tree object that every command touching one conversation would otherwise
//! inflate and split into 10,000 strings.
//!
//! A folder convo wrote holds only conversation folders, and git stores each as
//! `40000 <26-character id>\0<20-byte id>`: 53 bytes, in id order. Such a tree's raw bytes are
//! searched in place (binary search, no allocation). The raw bytes of the last folder read
//! are kept in `.git/convo/listing` (its tree id and length on the first line), so the next command
//! reads a file instead of inflating the object; like every file under `.git/convo/` it is
//! disposable and is used only for exactly the tree id it names. Any other tree (another
//! tool's, a hash other than SHA-1) is decoded the ordinary way.

use std::sync::Arc;

use gix::ObjectId;

use super::{Result, Store, txn::write_private_file};

const FILE: &str = "listing";
/// `40000 ` + a ULID + NUL + a SHA-1.
const ENTRY: usize = 6 + 26 + 1 + 20;
const MODE: &[u8] = b"40000 ";

/// One decoded `conversations` folder.
pub(super) enum Listing {
    /// Raw tree bytes of fixed-size conversation entries, in order.
    Fixed(Vec<u8>),
    /// Anything else: `(name, id, is_tree)` sorted by name.
    Decoded(Vec<(String, ObjectId, bool)>),
}

impl Listing {
    fn of_raw(bytes: Vec<u8>) -> Option<Listing> {
        let fixed = bytes.len().is_multiple_of(ENTRY)
            && bytes.chunks_exact(ENTRY).all(|e| e.starts_with(MODE) && e[ENTRY - 21] == 0)
            && bytes.chunks_exact(ENTRY).zip(bytes.chunks_exact(ENTRY).skip(1)).all(|(a, b)| name(a) < name(b));
        fixed.then_some(Listing::Fixed(bytes))
    }

    /// The object id and kind of entry `wanted`.
    pub(super) fn find(&self, wanted: &str) -> Option<(ObjectId, bool)> {
        match self {
            Listing::Fixed(bytes) => {
                let (mut low, mut high) = (0, bytes.len() / ENTRY);
                while low < high {
                    let mid = (low + high) / 2;
                    let entry = &bytes[mid * ENTRY..(mid + 1) * ENTRY];
                    match name(entry).cmp(wanted.as_bytes()) {
                        std::cmp::Ordering::Less => low = mid + 1,
                        std::cmp::Ordering::Greater => high = mid,
                        std::cmp::Ordering::Equal => return Some((oid(entry), true)),
                    }
                }
                None
            }
            Listing::Decoded(entries) => entries
                .binary_search_by(|(name, _, _)| name.as_str().cmp(wanted))
                .ok()
                .map(|at| (entries[at].1, entries[at].2)),
        }
    }

    /// `(name, id)` of every folder entry, in name order.
    pub(super) fn folders(&self) -> Vec<(String, ObjectId)> {
        match self {
            Listing::Fixed(bytes) => {
                bytes.chunks_exact(ENTRY).map(|e| (String::from_utf8_lossy(name(e)).into_owned(), oid(e))).collect()
            }
            Listing::Decoded(entries) => {
                entries.iter().filter(|(_, _, is_tree)| *is_tree).map(|(n, id, _)| (n.clone(), *id)).collect()
            }
        }
    }

    /// The folder names that start with `prefix`, in order.
    pub(super) fn with_prefix(&self, prefix: &str) -> Vec<String> {
        match self {
            Listing::Fixed(bytes) => {
                let count = bytes.len() / ENTRY;
                let (mut low, mut high) = (0, count);
                while low < high {
                    let mid = (low + high) / 2;
                    if name(&bytes[mid * ENTRY..(mid + 1) * ENTRY]) < prefix.as_bytes() {
                        low = mid + 1;
                    } else {
                        high = mid;
                    }
                }
                bytes[low * ENTRY..]
                    .chunks_exact(ENTRY)
                    .map(name)
                    .take_while(|n| n.starts_with(prefix.as_bytes()))
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .collect()
            }
            Listing::Decoded(_) => {
                self.folders().into_iter().map(|(n, _)| n).filter(|n| n.starts_with(prefix)).collect()
            }
        }
    }

    /// The folder names just before and after where `wanted` sorts (itself excluded): all
    /// that the shortest unique prefix of `wanted` depends on.
    pub(super) fn neighbours(&self, wanted: &str) -> (Option<String>, Option<String>) {
        let names: Vec<String> = match self {
            // Cheap enough for the decoded form, which only other tools' trees take.
            Listing::Decoded(_) => self.folders().into_iter().map(|(n, _)| n).collect(),
            Listing::Fixed(bytes) => {
                let count = bytes.len() / ENTRY;
                let at = |i: usize| String::from_utf8_lossy(name(&bytes[i * ENTRY..(i + 1) * ENTRY])).into_owned();
                let (mut low, mut high) = (0, count);
                while low < high {
                    let mid = (low + high) / 2;
                    if name(&bytes[mid * ENTRY..(mid + 1) * ENTRY]) < wanted.as_bytes() {
                        low = mid + 1;
                    } else {
                        high = mid;
                    }
                }
                let after = if low < count && at(low) == wanted { low + 1 } else { low };
                let before = low.checked_sub(1).map(at);
                return (before, (after < count).then(|| at(after)));
            }
        };
        let before = names.iter().rfind(|n| n.as_str() < wanted).cloned();
        let after = names.iter().find(|n| n.as_str() > wanted).cloned();
        (before, after)
    }
}

fn name(entry: &[u8]) -> &[u8] {
    &entry[MODE.len()..MODE.len() + 26]
}

fn oid(entry: &[u8]) -> ObjectId {
    ObjectId::from_bytes_or_panic(&entry[ENTRY - 20..])
}

impl Store {
    /// The `conversations` folder `dir`: from this command's memo, else the listing file
    /// when it names `dir`, else the object (and the file is written for the next command).
    pub(super) fn listing(&self, dir: ObjectId) -> Result<Arc<Listing>> {
        let mut memo = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, listing)) = memo.iter().find(|(id, _)| *id == dir) {
            return Ok(listing.clone());
        }
        let listing = Arc::new(match self.read_listing_file(dir) {
            Some(listing) => listing,
            None => self.decode_listing(dir)?,
        });
        // HEAD's and the tree a writer just made are all a command needs at once.
        if memo.len() >= 2 {
            memo.remove(0);
        }
        memo.push((dir, listing.clone()));
        Ok(listing)
    }

    fn read_listing_file(&self, dir: ObjectId) -> Option<Listing> {
        if dir.kind() != gix::hash::Kind::Sha1 {
            return None;
        }
        let bytes = std::fs::read(self.state_dir().join(FILE)).ok()?;
        let newline = bytes.iter().position(|b| *b == b'\n')?;
        let (header, raw) = (&bytes[..newline], &bytes[newline + 1..]);
        // The length too: a file cut short at an entry's end is still well shaped.
        (header == format!("{dir} {}", raw.len()).as_bytes()).then(|| Listing::of_raw(raw.to_vec())).flatten()
    }

    fn decode_listing(&self, dir: ObjectId) -> Result<Listing> {
        let data = self.object_data(dir, gix::objs::Kind::Tree)?;
        if dir.kind() == gix::hash::Kind::Sha1
            && let Some(listing) = Listing::of_raw(data.clone())
        {
            // Only HEAD's folder is worth keeping (fsck and log read older ones), and
            // keeping it is best effort: a store we cannot write to just answers slower.
            if self.head_commit_id().ok().flatten().and_then(|c| self.conversations_tree(Some(c)).ok().flatten())
                == Some(dir)
            {
                let mut file = format!("{dir} {}\n", data.len()).into_bytes();
                file.extend_from_slice(&data);
                let _ = write_private_file(&self.state_dir(), &self.state_dir().join(FILE), &file);
            }
            return Ok(listing);
        }
        let mut entries = self.tree_entries(dir)?;
        // Git orders a folder's entries as if folders' names ended in `/`; by name is what
        // a binary search needs.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Listing::Decoded(entries))
    }

    /// HEAD's conversation ids that start with `prefix`.
    pub(super) fn ids_with_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let Some(root) = self.head_tree_id()? else { return Ok(Vec::new()) };
        let Some(dir) = self.entry_at(root, super::layout::CONVERSATIONS)? else { return Ok(Vec::new()) };
        Ok(self.listing(dir)?.with_prefix(prefix))
    }

    /// Whether HEAD holds conversation `id`.
    pub fn has_conversation(&self, id: &str) -> Result<bool> {
        if !super::layout::is_conversation_id(id) {
            return Ok(false);
        }
        let Some(root) = self.head_tree_id()? else { return Ok(false) };
        Ok(self.entry_at(root, &super::layout::conversation_dir(id))?.is_some())
    }

    /// The ids just before and after `id` among HEAD's conversations: what its shortest
    /// unique prefix depends on, without listing all of them.
    pub fn id_neighbours(&self, id: &str) -> Result<Vec<String>> {
        let Some(root) = self.head_tree_id()? else { return Ok(Vec::new()) };
        let Some(dir) = self.entry_at(root, super::layout::CONVERSATIONS)? else { return Ok(Vec::new()) };
        let (before, after) = self.listing(dir)?.neighbours(id);
        Ok(before.into_iter().chain(after).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, byte: u8) -> Vec<u8> {
        let mut e = MODE.to_vec();
        e.extend_from_slice(id.as_bytes());
        e.push(0);
        e.extend_from_slice(&[byte; 20]);
        e
    }

    #[test]
    fn fixed_listings_are_searched_in_place() {
        let ids = ["01ARZ3NDEKTSV4RRFFQ69G5FA1", "01ARZ3NDEKTSV4RRFFQ69G5FA5", "01ARZ3NDEKTSV4RRFFQ69G5FA9"];
        let raw: Vec<u8> = ids.iter().enumerate().flat_map(|(i, id)| entry(id, i as u8 + 1)).collect();
        let listing = Listing::of_raw(raw).expect("fixed");
        assert_eq!(listing.find(ids[1]), Some((ObjectId::from_bytes_or_panic(&[2; 20]), true)));
        assert_eq!(listing.find("01ARZ3NDEKTSV4RRFFQ69G5FA3"), None);
        assert_eq!(listing.neighbours(ids[1]), (Some(ids[0].into()), Some(ids[2].into())));
        assert_eq!(listing.neighbours("01ARZ3NDEKTSV4RRFFQ69G5FA3"), (Some(ids[0].into()), Some(ids[1].into())));
        assert_eq!(listing.neighbours(ids[0]), (None, Some(ids[1].into())));
        assert_eq!(listing.folders().len(), 3);
        assert_eq!(listing.with_prefix("01ARZ3NDEKTSV4RRFFQ69G5FA"), ids.to_vec());
        assert_eq!(listing.with_prefix("01ARZ3NDEKTSV4RRFFQ69G5FA5"), vec![ids[1].to_owned()]);
        assert!(listing.with_prefix("02").is_empty());
    }

    #[test]
    fn anything_else_is_not_read_in_place() {
        let mut raw = entry("01ARZ3NDEKTSV4RRFFQ69G5FA1", 1);
        raw.extend(b"100644 convo.toml\0".iter().chain(&[7u8; 20]));
        assert!(Listing::of_raw(raw).is_none());
        // Out of order: not what git writes, so not trusted to search.
        let raw = [entry("01ARZ3NDEKTSV4RRFFQ69G5FA5", 1), entry("01ARZ3NDEKTSV4RRFFQ69G5FA1", 2)].concat();
        assert!(Listing::of_raw(raw).is_none());
    }
}
