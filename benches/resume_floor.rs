//! The floor under `convo resume`: a process that reads a conversation's stored lines as
//! `show --format jsonl` does and turns each into another JSON line, parsing it into a tree
//! and writing a tree out, and nothing else. Any hand-over to another tool's format pays at
//! least this: the agent's lines are not convo's, so every line is parsed and written anew.
//! `benches/handoff.py` runs it in the same rounds as `convo resume` and `convo show`, so
//! the resume/show goal can be read against what no such hand-over goes under here.
//!
//! Build: `cargo build --release --example resume_floor`. Run: `resume_floor STORE ID OUT`
//! (OUT a file it creates, as resume does; `/dev/null` works too). The lines come from the
//! library's own segment stream (`Store::stored_lines`, what `show --format jsonl` copies);
//! each is parsed with serde_json into a `Value` and written back, wrapped in one object
//! (`{"message": ...}`), through a buffered writer: no mapping, ids, counts or commit.

use std::io::Write as _;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, store, id, out] = args.as_slice() else {
        eprintln!("usage: resume_floor STORE ID OUT");
        std::process::exit(2);
    };
    let store = convo::store::Store::open(std::path::Path::new(store)).expect("a convo store");
    let file = std::fs::File::create(out).expect("OUT can be created");
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    for segment in store.stored_lines(id).expect("the conversation's segments") {
        let segment = segment.expect("a segment");
        for line in segment.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let value: serde_json::Value = serde_json::from_slice(line).expect("a JSON line");
            serde_json::to_writer(&mut out, &serde_json::json!({ "message": value })).expect("written");
            out.write_all(b"\n").expect("written");
        }
    }
    out.flush().expect("flushed");
}
