//! Setting one key in a TOML document while keeping the rest of it, comments included.

use toml_edit::{DocumentMut, Item, Table};

/// `text` with dotted `key` set to `value` (given as TOML, e.g. `5` or `"strip"`).
pub fn set_in_document(text: &str, key: &str, value: &toml::Value) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    let parts = super::split_key(key);
    let (last, parents) = parts.split_last().ok_or("empty key")?;
    let mut table: &mut Table = doc.as_table_mut();
    for part in parents {
        let item = table.entry(part.as_str()).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        table = item.as_table_mut().ok_or_else(|| format!("`{key}`: `{part}` is not a table"))?;
    }
    let rendered =
        toml::to_string(&toml::Table::from_iter([("v".to_owned(), value.clone())])).map_err(|e| e.to_string())?;
    let parsed: DocumentMut = rendered.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    let item = parsed.get("v").cloned().ok_or("value did not render")?;
    // Replace the value in place so the key keeps its comments.
    match table.get_mut(last.as_str()) {
        Some(existing) if existing.is_value() && item.is_value() => *existing = item,
        _ => {
            table.insert(last.as_str(), item);
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_a_key_keeps_comments_and_other_keys() {
        let text = "# my settings\n[compaction]\n# keep a few\nkeep_last = 3\n";
        let out = set_in_document(text, "compaction.keep_last", &toml::Value::Integer(5)).unwrap();
        assert_eq!(out, "# my settings\n[compaction]\n# keep a few\nkeep_last = 5\n");
        let out =
            set_in_document("", "tools.fs_read_file.compaction.request", &toml::Value::String("keep".into())).unwrap();
        assert_eq!(out, "[tools.fs_read_file.compaction]\nrequest = \"keep\"\n");
    }
}
