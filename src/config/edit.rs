//! Setting or removing one key in a TOML document while keeping the rest of it, comments
//! included.

use toml_edit::{DocumentMut, Item, Table};

/// Why a document could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The document (or the value, rendered) is not TOML.
    #[error("{0}")]
    Parse(#[from] toml_edit::TomlError),
    #[error("empty key")]
    EmptyKey,
    /// A dotted key goes through a value that is not a table.
    #[error("`{key}`: `{part}` is not a table")]
    NotATable { key: String, part: String },
    #[error("{0}")]
    Render(#[from] toml::ser::Error),
    #[error("value did not render")]
    NotRendered,
}

/// `text` with dotted `key` set to `value` (given as TOML, e.g. `5` or `"strip"`).
pub fn set_in_document(text: &str, key: &str, value: &toml::Value) -> Result<String, EditError> {
    let mut doc: DocumentMut = text.parse()?;
    let parts = super::split_key(key);
    let (last, parents) = parts.split_last().ok_or(EditError::EmptyKey)?;
    let mut table: &mut Table = doc.as_table_mut();
    for part in parents {
        let item = table.entry(part.as_str()).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        table = item.as_table_mut().ok_or_else(|| EditError::NotATable { key: key.to_owned(), part: part.clone() })?;
    }
    let rendered = toml::to_string(&toml::Table::from_iter([("v".to_owned(), value.clone())]))?;
    let parsed: DocumentMut = rendered.parse()?;
    let item = parsed.get("v").cloned().ok_or(EditError::NotRendered)?;
    // Replace the value in place so the key keeps its comments.
    match table.get_mut(last.as_str()) {
        Some(existing) if existing.is_value() && item.is_value() => *existing = item,
        _ => {
            table.insert(last.as_str(), item);
        }
    }
    Ok(doc.to_string())
}

/// `text` without dotted `key`; `None` when it does not set it. A table the removal leaves
/// empty goes too, so `unset` after `set` gives back the file as it was.
pub fn remove_in_document(text: &str, key: &str) -> Result<Option<String>, EditError> {
    let mut doc: DocumentMut = text.parse()?;
    let parts = super::split_key(key);
    if parts.is_empty() {
        return Err(EditError::EmptyKey);
    }
    if !remove_path(doc.as_table_mut(), &parts) {
        return Ok(None);
    }
    Ok(Some(doc.to_string()))
}

/// Remove `parts` under `table`; whether it was there. Emptied tables below are removed.
fn remove_path(table: &mut Table, parts: &[String]) -> bool {
    match parts {
        [] => false,
        [last] => table.remove(last.as_str()).is_some(),
        [first, rest @ ..] => {
            let Some(child) = table.get_mut(first.as_str()).and_then(Item::as_table_mut) else { return false };
            let removed = remove_path(child, rest);
            if removed && child.is_empty() {
                table.remove(first.as_str());
            }
            removed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_after_set_gives_back_the_file() {
        let text = "# mine\n[llm]\nmodel = \"a\"\n";
        let set = set_in_document(text, "compaction.keep_last", &toml::Value::Integer(4)).unwrap();
        assert_eq!(remove_in_document(&set, "compaction.keep_last").unwrap().as_deref(), Some(text));
        assert_eq!(remove_in_document(text, "compaction.keep_last").unwrap(), None);
        // A comment above a table is the table's: it goes with the table's last key.
        assert_eq!(remove_in_document(text, "llm.model").unwrap().as_deref(), Some(""));
    }

    #[test]
    fn setting_a_key_keeps_comments_and_other_keys() {
        let text = "# my settings\n[compaction]\n# keep a few\nkeep_last = 3\n";
        let out = set_in_document(text, "compaction.keep_last", &toml::Value::Integer(5)).unwrap();
        assert_eq!(out, "# my settings\n[compaction]\n# keep a few\nkeep_last = 5\n");
        let out =
            set_in_document("", "tools.fs_read_file.compaction.request", &toml::Value::String("keep".into())).unwrap();
        assert_eq!(out, "[tools.fs_read_file.compaction]\nrequest = \"keep\"\n");
    }

    #[test]
    fn what_cannot_be_edited_says_why_and_keeps_the_parser_error() {
        let one = toml::Value::Integer(1);
        let err = set_in_document("[a\n", "a.b", &one).unwrap_err();
        assert!(matches!(err, EditError::Parse(_)), "{err:?}");
        assert!(std::error::Error::source(&err).is_some());
        let err = set_in_document("a = 1\n", "a.b", &one).unwrap_err();
        assert_eq!(err.to_string(), "`a.b`: `a` is not a table");
    }
}
