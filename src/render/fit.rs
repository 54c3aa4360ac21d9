//! Fitting text output to a width, and naming conversations by the shortest id prefix that
//! is unique in the store.
//!
//! The width is the caller's (the CLI reads the terminal or `COLUMNS`); `None` means no
//! limit, so output piped to a script carries whole titles. Widths are terminal columns,
//! not characters: a CJK character takes two.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

use super::{Style, Theme, escape_char, is_unsafe};
use crate::clock::SHORT_ID;

/// The shortest id prefix shown. ULIDs start with their time, so four characters change
/// only every few days: a store's ids mostly need more, and never less.
pub const MIN_ID_PREFIX: usize = 4;

/// Terminal columns `text` takes (text without escape sequences).
pub fn columns(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Stored text as one line: escaped as [`super::escape_line`] does, runs of spaces and tabs
/// made one space, then cut to `width` columns with `…` when longer. The cut falls between
/// the escaped forms of two characters, never inside one, so `<U+009B>` or `^[` is shown
/// whole or not at all.
pub fn fit(text: &str, width: Option<usize>) -> String {
    // No limit (output to a pipe, every `log` entry's subject): one pass, no pieces.
    let Some(width) = width else {
        let mut out = String::with_capacity(text.len());
        for unit in units_iter(text) {
            out.push_str(&unit);
        }
        return out;
    };
    let units: Vec<Cow<'_, str>> = units_iter(text).collect();
    let total: usize = units.iter().map(|u| columns(u)).sum();
    if total <= width {
        return units.concat();
    }
    let mut out = String::new();
    let mut used = 0;
    for unit in &units {
        let w = columns(unit);
        if used + w + 1 > width {
            break;
        }
        out.push_str(unit);
        used += w;
    }
    // A subject convo already cut ends in one; two in a row read as a glitch.
    if width > 0 && !out.ends_with('…') {
        out.push('…');
    }
    out
}

/// The escaped pieces of `text`, one per character kept, whitespace runs collapsed. A
/// character shown as itself is borrowed from `text`: `log` fits every subject it prints,
/// and a piece allocated per character was most of its rendering.
fn units_iter(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    let mut started = false;
    let mut space = false;
    text.char_indices()
        .flat_map(move |(at, c)| {
            if c.is_whitespace() && !is_unsafe(c, true) {
                space = started;
                return [None, None];
            }
            started = true;
            let gap = std::mem::take(&mut space).then_some(Cow::Borrowed(" "));
            let unit = if is_unsafe(c, true) {
                Cow::Owned(escape_char(c))
            } else {
                Cow::Borrowed(&text[at..at + c.len_utf8()])
            };
            [gap, Some(unit)]
        })
        .flatten()
}

/// Every conversation id of a store, to show each by its shortest unique prefix highlighted
/// in [`SHORT_ID`] characters (as jj shows change ids): a whole id is 26 columns. New ids
/// differ within those eight, so the ids shown stay unique as the store grows; ids made
/// before that, or pulled from a store that made one in the same second, show longer.
#[derive(Debug, Clone, Default)]
pub struct ShortIds {
    sorted: Vec<String>,
}

impl ShortIds {
    pub fn new(ids: impl IntoIterator<Item = String>) -> ShortIds {
        let mut sorted: Vec<String> = ids.into_iter().collect();
        sorted.sort();
        sorted.dedup();
        ShortIds { sorted }
    }

    /// How many characters of `id` tell it from every other id (at least [`MIN_ID_PREFIX`],
    /// at most the whole id). Neighbours in sorted order share the longest prefixes with it.
    pub fn unique_len(&self, id: &str) -> usize {
        let (before, after) = match self.sorted.binary_search_by(|s| s.as_str().cmp(id)) {
            Ok(i) => (i.checked_sub(1), i + 1),
            Err(i) => (i.checked_sub(1), i),
        };
        let shared =
            |other: Option<&String>| other.map_or(0, |o| o.chars().zip(id.chars()).take_while(|(a, b)| a == b).count());
        let longest = shared(before.and_then(|i| self.sorted.get(i))).max(shared(self.sorted.get(after)));
        (longest + 1).max(MIN_ID_PREFIX).min(id.chars().count())
    }

    /// `id` cut to `width` characters (never shorter than its unique prefix), the unique part
    /// highlighted and the rest dim when colour is on. Escaped: ids from `meta.json` are
    /// stored text.
    pub fn show(&self, id: &str, width: usize, theme: Theme) -> String {
        let unique = self.unique_len(id);
        let head: String = id.chars().take(unique).collect();
        let tail: String = id.chars().skip(unique).take(width.saturating_sub(unique)).collect();
        let head = theme.paint(Style::IdPrefix, &super::escape_line(&head));
        if tail.is_empty() { head } else { format!("{head}{}", theme.paint(Style::Dim, &super::escape_line(&tail))) }
    }

    /// `id` as people type it: [`SHORT_ID`] characters, or its unique prefix when longer.
    pub fn short(&self, id: &str, theme: Theme) -> String {
        self.show(id, self.width(id), theme)
    }

    /// The columns [`ShortIds::short`] takes for `id`.
    pub fn width(&self, id: &str) -> usize {
        self.unique_len(id).max(SHORT_ID.min(id.chars().count()))
    }

    /// `id` whole, its unique prefix highlighted.
    pub fn show_whole(&self, id: &str, theme: Theme) -> String {
        self.show(id, id.chars().count(), theme)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_between_escaped_characters() {
        assert_eq!(fit("a\nb", Some(10)), "a\\nb");
        assert_eq!(fit("  a \t b  ", None), "a b");
        assert_eq!(fit("abcdef", Some(4)), "abc…");
        assert_eq!(fit("abcdef", Some(6)), "abcdef");
        // `<U+009B>` is 8 columns: with 9 it fits, with 8 it goes whole.
        assert_eq!(fit("a\u{9b}bc", Some(10)), "a<U+009B>…");
        assert_eq!(fit("a\u{9b}bc", Some(8)), "a…");
        assert_eq!(fit("ab\x1bc", Some(4)), "ab…");
        assert_eq!(fit("日本語です", Some(6)), "日本…");
        assert_eq!(columns(&fit("日本語です", Some(6))), 5);
    }

    #[test]
    fn unique_prefixes_follow_the_neighbours() {
        let ids =
            ShortIds::new(["01KDVDNA000000000000000001", "01KDVDNA000000000000000002", "01KDZZ00"].map(String::from));
        assert_eq!(ids.unique_len("01KDVDNA000000000000000001"), 26);
        assert_eq!(ids.unique_len("01KDZZ00"), 5);
        assert_eq!(ids.unique_len("02"), 2);
        assert_eq!(ShortIds::new(["ABCDEFGH".to_owned()]).unique_len("ABCDEFGH"), MIN_ID_PREFIX);
        assert_eq!(ids.show("01KDZZ00", 7, Theme::default()), "01KDZZ0");
    }
}
