//! The library's modules form layers: each may use only the modules listed for it, so the
//! dependency graph has no cycles and a new back-edge fails this test. The same table is in
//! ARCHITECTURE.md; change both together, and only downwards.

/// Each library module and the modules it may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("clock", &[]),
    ("event", &[]),
    ("compaction", &["event"]),
    ("projection", &["compaction", "event"]),
    ("config", &["compaction", "event"]),
    ("llm", &["config", "event"]),
    ("store", &["clock", "event"]),
    ("render", &["clock", "compaction", "event", "projection", "store"]),
    ("interop", &["clock", "compaction", "event", "projection", "store"]),
    ("sync", &["clock", "store"]),
    ("agents", &["clock", "interop"]),
    ("ops", &["agents", "clock", "compaction", "config", "event", "interop", "llm", "projection", "store", "sync"]),
    ("mcp", &["clock", "compaction", "config", "event", "ops", "projection", "render", "store"]),
    ("serve", &["clock", "event", "interop", "ops", "projection", "render", "store"]),
];

/// The modules `text` names through `crate::` paths, grouped imports included.
fn uses(text: &str) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                found.insert(name);
            }
        } else {
            found.insert(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
        }
    }
    found.retain(|name| !name.is_empty());
    found
}

fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn library_modules_use_only_the_layers_below_them() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (module, allowed) in ALLOWED {
        let mut sources = Vec::new();
        let folder = src.join(module);
        if folder.is_dir() {
            files(&folder, &mut sources);
        } else {
            sources.push(src.join(format!("{module}.rs")));
        }
        for file in sources {
            let text = std::fs::read_to_string(&file).unwrap();
            for used in uses(&text) {
                if used != *module && !allowed.contains(&used.as_str()) {
                    wrong.push(format!("{} uses crate::{used}", file.strip_prefix(&src).unwrap().display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "back-edges between library layers (see src/layers.rs):\n{}", wrong.join("\n"));
}

#[test]
fn every_library_module_has_a_layer() {
    let lib = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ").and_then(|l| l.strip_suffix(';')) {
            assert!(ALLOWED.iter().any(|(m, _)| *m == name), "module `{name}` is missing from ALLOWED");
        }
    }
}

/// A command is a file under `src/cli/commands/`, or a folder there whose files are its parts
/// (`config/set.rs`); the parts may use each other through `super::`, never another command.
#[test]
fn no_command_uses_another() {
    let commands = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli/commands");
    let mut by_command: Vec<(String, Vec<std::path::PathBuf>)> = Vec::new();
    for entry in std::fs::read_dir(&commands).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "mod" {
            continue;
        }
        let mut sources = Vec::new();
        if path.is_dir() {
            files(&path, &mut sources);
        } else {
            sources.push(path);
        }
        by_command.push((name, sources));
    }
    assert!(by_command.iter().any(|(n, s)| n == "config" && s.len() > 1), "command folders are seen");
    for (name, sources) in &by_command {
        for file in sources {
            let text = std::fs::read_to_string(file).unwrap();
            for (other, _) in by_command.iter().filter(|(o, _)| o != name) {
                for path in [format!("super::{other}::"), format!("commands::{other}::")] {
                    assert!(
                        !text.contains(&path),
                        "{} uses command `{other}`: shared work belongs in ops",
                        file.display()
                    );
                }
            }
        }
    }
}

#[test]
fn grouped_imports_are_seen() {
    let found = uses("use crate::{store::Store, ops};\nlet x = crate::event::tokens(1);");
    assert_eq!(found.into_iter().collect::<Vec<_>>(), ["event", "ops", "store"]);
}
