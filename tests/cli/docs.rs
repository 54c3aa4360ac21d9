//! The committed man pages and completions must match what the CLI definitions generate.

use std::collections::BTreeMap;
use std::path::Path;

fn read_dir(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn man_pages_and_completions_are_fresh() {
    let env = crate::common::TestEnv::bare();
    let out = env.root.join("generated");
    env.run(&["generate-docs", out.to_str().unwrap()]).ok();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["man", "completions"] {
        let generated = read_dir(&out.join(dir));
        let committed = read_dir(&repo.join(dir));
        assert_eq!(
            generated.keys().collect::<Vec<_>>(),
            committed.keys().collect::<Vec<_>>(),
            "{dir}/ is stale: run `cargo run -- generate-docs .`"
        );
        for (name, bytes) in &generated {
            assert!(committed[name] == *bytes, "{dir}/{name} is stale: run `cargo run -- generate-docs .`");
        }
    }
    assert!(read_dir(&out.join("man")).contains_key("convo-append.1"));
}
