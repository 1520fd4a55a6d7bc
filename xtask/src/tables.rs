//! `benchmarks [--check]`: BENCHMARKS.md's result tables, made from the saved results.
//!
//! The load runs append their rows as JSON lines (`RESULTS=FILE bash benches/load.sh`, and
//! `benches/site.sh` the same); the lines kept in `benches/results/*.jsonl` and the committed
//! instruction counts (`benches/instructions.json`) are the saved results. Each table in
//! BENCHMARKS.md sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`, and
//! this task writes it from them: nobody types a figure. `--check` fails when a table differs
//! from what the results make (CI runs it).

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use crate::bench::{COUNTS, LIMIT_PCT};

/// The document the tables live in.
const DOC: &str = "BENCHMARKS.md";

/// How a table is made from the workspace root.
type Make = fn(&Path) -> Result<String, String>;

/// Every generated table: its marker name and how it is made.
const TABLES: &[(&str, Make)] = &[
    ("site", site_table),
    ("load-reads", load_reads_table),
    ("load-creates", load_creates_table),
    ("instructions", instructions_table),
    ("targets", targets_table),
    ("import", import_table),
    ("search-creates-http", search_creates_http_table),
    ("sled-keys", sled_keys_table),
];

/// Runs the task.
pub(crate) fn benchmarks(root: &Path, args: &[String]) -> ExitCode {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => {
            eprintln!("xtask: `benchmarks` takes only `--check`");
            return ExitCode::from(2);
        }
    };
    let path = root.join(DOC);
    let Ok(doc) = fs::read_to_string(&path) else {
        eprintln!("xtask: cannot read {DOC}");
        return ExitCode::FAILURE;
    };
    let mut made = doc.clone();
    for (name, table) in TABLES {
        let text = match table(root) {
            Ok(text) => text,
            Err(problem) => {
                eprintln!("xtask: table `{name}`: {problem}");
                return ExitCode::FAILURE;
            }
        };
        made = match splice(&made, name, &text) {
            Ok(next) => next,
            Err(problem) => {
                eprintln!("xtask: {DOC}: {problem}");
                return ExitCode::FAILURE;
            }
        };
    }
    if check {
        if made == doc {
            println!("{DOC}: every generated table matches the saved results");
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "xtask: {DOC}: a generated table differs from the saved results; run `cargo xtask benchmarks`"
        );
        return ExitCode::FAILURE;
    }
    if let Err(e) = fs::write(&path, made) {
        eprintln!("xtask: writing {DOC}: {e}");
        return ExitCode::FAILURE;
    }
    println!("{DOC}: {} tables written", TABLES.len());
    ExitCode::SUCCESS
}

/// `doc` with the text between `name`'s markers replaced by `table`.
pub(crate) fn splice(doc: &str, name: &str, table: &str) -> Result<String, String> {
    let open = format!("<!-- generated:{name} -->\n");
    let close = format!("<!-- /generated:{name} -->");
    let start = doc
        .find(&open)
        .ok_or_else(|| format!("no `{}` marker", open.trim_end()))?
        + open.len();
    let end = doc[start..]
        .find(&close)
        .ok_or_else(|| format!("no `{close}` after `{}`", open.trim_end()))?
        + start;
    Ok(format!("{}{table}{}", &doc[..start], &doc[end..]))
}

/// The JSON lines of a results file.
fn lines(root: &Path, file: &str) -> Result<Vec<Value>, String> {
    let text = fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{file}: {e}: {l}")))
        .collect()
}

/// A number as the tables show it: whole when it is whole or above 100, one decimal above
/// 10, else two.
fn num(value: &Value) -> String {
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 || n.abs() >= 100.0 => format!("{n:.0}"),
        Some(n) if n.abs() >= 10.0 => format!("{n:.1}"),
        Some(n) => format!("{n:.2}"),
        None => value.as_str().unwrap_or("-").to_owned(),
    }
}

/// Where and when the rows of a results file were measured (the first row's).
fn provenance(rows: &[Value]) -> String {
    let first = rows.first().cloned().unwrap_or(Value::Null);
    format!(
        "Measured on {} at commit `{}`, {} s per run, {} round(s) (the median round).\n\n",
        first["machine"].as_str().unwrap_or("?"),
        first["commit"].as_str().unwrap_or("?"),
        num(&first["duration_s"]),
        num(&first["rounds"])
    )
}

fn site_table(root: &Path) -> Result<String, String> {
    let rows = lines(root, "benches/results/site.jsonl")?;
    let mut out = provenance(&rows);
    out.push_str(
        "| server | req/s | p50 ms | p99 ms | vs baseline | CPU µs/answer | detail hits | list hits | asset hits | writes |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r["row"].as_str().unwrap_or("?"),
            num(&r["rps"]),
            num(&r["p50_ms"]),
            num(&r["p99_ms"]),
            num(&r["share"]),
            num(&r["cpu_us"]),
            r["hits"]["details"].as_str().unwrap_or("-"),
            r["hits"]["lists"].as_str().unwrap_or("-"),
            r["hits"]["assets"].as_str().unwrap_or("-"),
            num(&r["writes"]),
        ));
    }
    Ok(out)
}

fn load_rows(root: &Path, reads: bool) -> Result<Vec<Value>, String> {
    let creates = ["create", "create+hook", "create1t"];
    Ok(lines(root, "benches/results/load.jsonl")?
        .into_iter()
        .filter(|r| creates.contains(&r["endpoint"].as_str().unwrap_or("")) != reads)
        .collect())
}

fn load_reads_table(root: &Path) -> Result<String, String> {
    let rows = load_rows(root, true)?;
    let mut out = provenance(&rows);
    out.push_str(
        "| server | endpoint | req/s | p50 ms | p99 ms | vs baseline | CPU µs/answer |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
    );
    for r in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r["row"].as_str().unwrap_or("?"),
            r["endpoint"].as_str().unwrap_or("?"),
            num(&r["rps"]),
            num(&r["p50_ms"]),
            num(&r["p99_ms"]),
            num(&r["share"]),
            num(&r["cpu_us"]),
        ));
    }
    Ok(out)
}

fn load_creates_table(root: &Path) -> Result<String, String> {
    let rows = load_rows(root, false)?;
    let mut out = provenance(&rows);
    out.push_str(
        "| server | run | creates/s | p50 ms | p99 ms | CPU µs/create |\n\
         |---|---|---:|---:|---:|---:|\n",
    );
    for r in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r["row"].as_str().unwrap_or("?"),
            r["endpoint"].as_str().unwrap_or("?"),
            num(&r["rps"]),
            num(&r["p50_ms"]),
            num(&r["p99_ms"]),
            num(&r["cpu_us"]),
        ));
    }
    Ok(out)
}

/// Where and when a one-shot bench's rows were measured (the first row's commit and cores).
fn measured_at(rows: &[Value]) -> String {
    let first = rows.first().cloned().unwrap_or(Value::Null);
    format!(
        "Measured on {} cores at commit `{}`.\n\n",
        num(&first["cores"]),
        first["commit"].as_str().unwrap_or("?")
    )
}

fn import_table(root: &Path) -> Result<String, String> {
    let rows = lines(root, "benches/results/import.jsonl")?;
    let mut out = measured_at(&rows);
    out.push_str(
        "| store | run | files | time s | files/s | peak memory MiB |\n\
         |---|---|---:|---:|---:|---:|\n",
    );
    for r in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r["store"].as_str().unwrap_or("?"),
            r["run"].as_str().unwrap_or("?"),
            num(&r["files"]),
            num(&r["seconds"]),
            num(&r["files_per_s"]),
            num(&r["peak_rss_mib"]),
        ));
    }
    Ok(out)
}

fn search_creates_http_table(root: &Path) -> Result<String, String> {
    let rows = lines(root, "benches/results/search_creates_http.jsonl")?;
    let mut out = measured_at(&rows);
    out.push_str(
        "| build | creates/s | p50 ms | p99 ms | CPU µs/create |\n\
         |---|---:|---:|---:|---:|\n",
    );
    let mut ratio = None;
    for r in &rows {
        if let Some(build) = r["build"].as_str() {
            out.push_str(&format!(
                "| {build} | {} | {} | {} | {} |\n",
                num(&r["creates_per_s"]),
                num(&r["p50_ms"]),
                num(&r["p99_ms"]),
                num(&r["cpu_us"]),
            ));
        } else if r["ratio_median"].is_number() {
            ratio = Some(r);
        }
    }
    if let Some(r) = ratio {
        let each: Vec<String> = r["ratios"]
            .as_array()
            .map(|a| a.iter().map(num).collect())
            .unwrap_or_default();
        out.push_str(&format!(
            "\nWith `search` against without, round by round: {}; median {}.\n",
            each.join(", "),
            num(&r["ratio_median"])
        ));
    }
    Ok(out)
}

fn sled_keys_table(root: &Path) -> Result<String, String> {
    let rows = lines(root, "benches/results/sled_keys.jsonl")?;
    let mut out = measured_at(&rows);
    out.push_str(
        "| writers | words | where | creates/s | CPU µs/create | CPU µs a word |\n\
         |---:|---:|---|---:|---:|---:|\n",
    );
    for r in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            num(&r["writers"]),
            num(&r["words"]),
            r["where"].as_str().unwrap_or("?"),
            num(&r["creates_per_s"]),
            num(&r["cpu_us"]),
            num(&r["cpu_us_a_word"]),
        ));
    }
    Ok(out)
}

fn instructions_table(root: &Path) -> Result<String, String> {
    let text = fs::read_to_string(root.join(COUNTS)).map_err(|e| format!("{COUNTS}: {e}"))?;
    let file: Value = serde_json::from_str(&text).map_err(|e| format!("{COUNTS}: {e}"))?;
    let counts = file["counts"]
        .as_object()
        .ok_or_else(|| format!("{COUNTS}: no counts"))?;
    let mut out = format!(
        "Committed in `{COUNTS}` ({}, {}); `cargo xtask instructions` fails past +{LIMIT_PCT}%.\n\n\
         | bench | instructions |\n|---|---:|\n",
        file["rustc"].as_str().unwrap_or("?"),
        file["valgrind"].as_str().unwrap_or("?"),
    );
    for (name, count) in counts {
        out.push_str(&format!("| `{name}` | {} |\n", count.as_u64().unwrap_or(0)));
    }
    Ok(out)
}

/// One target of the speed issue: the row it reads, the least share (or rate), the most p99.
struct Target {
    what: &'static str,
    bench: &'static str,
    row: &'static str,
    endpoint: &'static str,
    /// The field held to `least`: `share` or `rps`.
    field: &'static str,
    least: f64,
    /// The most p99 in ms, when the target bounds it.
    p99: Option<f64>,
}

const TARGETS: &[Target] = &[
    Target {
        what: "realistic site, sled",
        bench: "site",
        row: "sled",
        endpoint: "",
        field: "share",
        least: 0.50,
        p99: Some(20.0),
    },
    Target {
        what: "realistic site, PostgreSQL",
        bench: "site",
        row: "pg",
        endpoint: "",
        field: "share",
        least: 0.40,
        p99: Some(20.0),
    },
    Target {
        what: "realistic site, two PostgreSQL replicas",
        bench: "site",
        row: "pg-x2",
        endpoint: "",
        field: "share",
        least: 0.40,
        p99: Some(20.0),
    },
    Target {
        what: "cold library detail, sled",
        bench: "load",
        row: "axum-nocache",
        endpoint: "detail",
        field: "share",
        least: 0.25,
        p99: None,
    },
    Target {
        what: "cold library detail, PostgreSQL",
        bench: "load",
        row: "axum-pg-nocache",
        endpoint: "detail",
        field: "share",
        least: 0.15,
        p99: None,
    },
    Target {
        what: "cold list, sled",
        bench: "load",
        row: "axum-nocache",
        endpoint: "list",
        field: "share",
        least: 0.30,
        p99: None,
    },
    Target {
        what: "cold list, PostgreSQL",
        bench: "load",
        row: "axum-pg-nocache",
        endpoint: "list",
        field: "share",
        least: 0.20,
        p99: None,
    },
    Target {
        what: "hot library detail, sled",
        bench: "load",
        row: "axum",
        endpoint: "detail",
        field: "share",
        least: 0.85,
        p99: None,
    },
    Target {
        what: "hot library detail, PostgreSQL",
        bench: "load",
        row: "axum-pg",
        endpoint: "detail",
        field: "share",
        least: 0.85,
        p99: None,
    },
    Target {
        what: "hot list, sled",
        bench: "load",
        row: "axum",
        endpoint: "list",
        field: "share",
        least: 0.85,
        p99: None,
    },
    Target {
        what: "hot list, PostgreSQL",
        bench: "load",
        row: "axum-pg",
        endpoint: "list",
        field: "share",
        least: 0.85,
        p99: None,
    },
    Target {
        what: "hot asset, sled",
        bench: "load",
        row: "axum",
        endpoint: "asset",
        field: "share",
        least: 0.85,
        p99: None,
    },
    Target {
        what: "hot asset, PostgreSQL",
        bench: "load",
        row: "axum-pg",
        endpoint: "asset",
        field: "share",
        least: 0.85,
        p99: None,
    },
    Target {
        what: "durable creates, one title, sled",
        bench: "load",
        row: "axum",
        endpoint: "create1t",
        field: "rps",
        least: 4000.0,
        p99: Some(15.0),
    },
    Target {
        what: "durable creates, one title, PostgreSQL",
        bench: "load",
        row: "axum-pg",
        endpoint: "create1t",
        field: "rps",
        least: 4000.0,
        p99: Some(15.0),
    },
];

fn targets_table(root: &Path) -> Result<String, String> {
    let mut rows = lines(root, "benches/results/load.jsonl")?;
    rows.extend(lines(root, "benches/results/site.jsonl")?);
    let mut out = String::from("| target | wanted | measured | met |\n|---|---|---|---|\n");
    for t in TARGETS {
        let found = rows.iter().find(|r| {
            r["bench"] == t.bench
                && r["row"] == t.row
                && (t.endpoint.is_empty() || r["endpoint"] == t.endpoint)
        });
        let Some(r) = found else {
            return Err(format!("no result for `{}`", t.what));
        };
        let value = r[t.field].as_f64().unwrap_or(0.0);
        let p99 = r["p99_ms"].as_f64().unwrap_or(f64::INFINITY);
        let met = value >= t.least && t.p99.is_none_or(|most| p99 <= most);
        let unit = if t.field == "rps" {
            "/s"
        } else {
            " of the baseline"
        };
        let wanted = match t.p99 {
            Some(most) => format!("≥ {}{unit}, p99 ≤ {most} ms", num(&t.least.into())),
            None => format!("≥ {}{unit}", num(&t.least.into())),
        };
        let measured = match t.p99 {
            Some(_) => format!("{}{unit}, p99 {} ms", num(&r[t.field]), num(&r["p99_ms"])),
            None => format!("{}{unit}", num(&r[t.field])),
        };
        out.push_str(&format!(
            "| {} | {wanted} | {measured} | {} |\n",
            t.what,
            if met { "yes" } else { "no" }
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_replaces_only_what_its_markers_hold() {
        let doc = "a\n<!-- generated:t -->\nold\n<!-- /generated:t -->\nb\n";
        let made = splice(doc, "t", "new\n").expect("spliced");
        assert_eq!(
            made,
            "a\n<!-- generated:t -->\nnew\n<!-- /generated:t -->\nb\n"
        );
        assert!(splice(doc, "u", "x").is_err());
    }

    #[test]
    fn numbers_are_whole_above_a_hundred() {
        assert_eq!(num(&serde_json::json!(12345.6)), "12346");
        assert_eq!(num(&serde_json::json!(0.456)), "0.46");
        assert_eq!(num(&serde_json::json!(30.0)), "30");
        assert_eq!(num(&serde_json::json!(11.84)), "11.8");
        assert_eq!(num(&serde_json::json!("95%")), "95%");
    }
}
