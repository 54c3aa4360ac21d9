//! The integration tests are one binary (`autotests = false`, one `[[test]]` in Cargo.toml):
//! a `.rs` file under `tests/` that no `mod` declaration reaches from `tests/cli/main.rs` is
//! never compiled, so its tests would silently never run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, found: &mut BTreeSet<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.insert(path);
        }
    }
}

/// The names `x` of the `mod x;` declarations (any visibility) in a source file; inline
/// `mod x { … }` blocks have no file of their own.
fn declared_modules(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub(crate) ").or_else(|| line.strip_prefix("pub ")).unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            Some(name.to_owned())
        })
        .collect()
}

/// Every file reached from `root` through `mod x;`, resolved as rustc does: from `main.rs`
/// or `mod.rs` a child is a sibling (`x.rs` or `x/mod.rs`), from `foo.rs` it is under `foo/`.
fn reached(root: &Path, seen: &mut BTreeSet<PathBuf>) {
    assert!(seen.insert(root.to_owned()), "{} is reached twice", root.display());
    let source = std::fs::read_to_string(root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    let stem = root.file_stem().unwrap();
    let dir = if stem == "main" || stem == "mod" { root.parent().unwrap().to_owned() } else { root.with_extension("") };
    for name in declared_modules(&source) {
        let file = dir.join(format!("{name}.rs"));
        let nested = dir.join(&name).join("mod.rs");
        let child = match (file.is_file(), nested.is_file()) {
            (true, false) => file,
            (false, true) => nested,
            _ => panic!(
                "`mod {name};` in {}: exactly one of {} and {} must exist",
                root.display(),
                file.display(),
                nested.display()
            ),
        };
        reached(&child, seen);
    }
}

#[test]
fn every_test_file_is_part_of_the_test_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut on_disk = BTreeSet::new();
    rust_files(&tests, &mut on_disk);
    let mut compiled = BTreeSet::new();
    reached(&tests.join("cli/main.rs"), &mut compiled);
    let stray: Vec<_> =
        on_disk.difference(&compiled).map(|p| p.strip_prefix(&tests).unwrap().display().to_string()).collect();
    assert!(
        stray.is_empty(),
        "not compiled into the test binary (add a `mod` for it under tests/cli/main.rs): {stray:?}"
    );
    assert!(compiled.contains(&tests.join("cli/common/server.rs")), "nested modules are followed");
}
