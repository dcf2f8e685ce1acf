//! Reading scenario text (TOML files, or JSON from the Python API) into a validated
//! [`Scenario`], with errors that name the key path and, for files, the line.

use std::path::Path;

use super::schema::ScenarioFile;
use super::strict::Strict;
use super::validate::{validate, Scenario};
use crate::error::{join, ConfigError, ConfigResult};

/// Parses and validates a TOML scenario (files it names are read relative to the working
/// directory).
pub fn parse_toml(text: &str) -> ConfigResult<Scenario> {
    parse_toml_in(text, None)
}

/// Parses and validates a TOML scenario whose relative file names (a link's `trace`) are
/// relative to `base_dir` (the scenario file's directory), or to the working directory.
pub fn parse_toml_in(text: &str, base_dir: Option<&Path>) -> ConfigResult<Scenario> {
    let de = toml::de::Deserializer::new(text);
    let file: ScenarioFile = serde_path_to_error::deserialize(Strict(de)).map_err(|e| {
        let span = e.inner().span();
        let mut err = path_error(e.path().to_string(), e.inner().message());
        if err.message.contains("number too large to fit in target type") {
            // TOML integers are i64: say so, and which key and value on the line it was.
            let start = span.as_ref().map_or(0, |s| s.start.min(text.len()));
            let value = text[start..].split(['\n', ',', '}']).next().unwrap_or("").trim();
            let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
            let key = text[line_start..start].rsplit_once('=').map(|(k, _)| k.rsplit(['{', ',']).next().unwrap_or(k).trim());
            let what = if value.is_empty() { "a number" } else { value };
            err.message = match key.filter(|k| !k.is_empty()) {
                Some(k) => format!("{k} = {what} is too large: TOML integers are at most {}", i64::MAX),
                None => format!("{what} is too large: TOML integers are at most {}", i64::MAX),
            };
            if key == Some("seed") {
                // Seeds run to u64::MAX; only TOML cannot write the top half of that range.
                err.path = "run.seed".into();
                err.message.push_str(&format!("; seeds up to {} can be given with --seed or in a JSON scenario", u64::MAX));
            }
        }
        if let Some((table, message)) = duplicate_table(e.inner().message()) {
            err.path = table;
            err.message = message;
        }
        // The key's own line beats the span toml reports (often the enclosing table's).
        err.line = locate(text, &err.path).or_else(|| span.map(|s| line_of_offset(text, s.start)));
        err
    })?;
    validate(file, base_dir).map_err(|mut e| {
        e.line = locate(text, &e.path);
        e
    })
}

/// Parses and validates a JSON scenario (same keys as TOML).
pub fn parse_json(text: &str) -> ConfigResult<Scenario> {
    parse_json_in(text, None)
}

/// [`parse_json`] with relative file names resolved against `base_dir` (see [`parse_toml_in`]).
pub fn parse_json_in(text: &str, base_dir: Option<&Path>) -> ConfigResult<Scenario> {
    let mut de = serde_json::Deserializer::from_str(text);
    let file: ScenarioFile = serde_path_to_error::deserialize(Strict(&mut de))
        .map_err(|e| {
            // The position in generated JSON text means nothing to the author of a dict.
            let message = e.inner().to_string();
            let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m).to_string();
            path_error(e.path().to_string(), &message)
        })?;
    validate(file, base_dir)
}

/// A second `[queue]` header is, to toml, "invalid table header" with "duplicate key `queue` in
/// document root" on the next line (which a one-line message loses): (`queue`, "duplicate table
/// [queue]; ...").
fn duplicate_table(message: &str) -> Option<(String, String)> {
    let rest = message.strip_prefix("invalid table header")?;
    let rest = &rest[rest.find("duplicate key `")? + "duplicate key `".len()..];
    let (key, rest) = rest.split_once('`')?;
    let table = match rest.trim().strip_prefix("in table `").and_then(|t| t.split_once('`')) {
        Some((parent, _)) => format!("{parent}.{key}"),
        None => key.to_string(),
    };
    let message = format!("duplicate table [{table}]; a table is given once, so put all its keys under one [{table}]");
    Some((table, message))
}

/// Builds an error from a serde path and message, moving the offending key of "missing field"
/// and "unknown field" messages into the path.
fn path_error(path: String, message: &str) -> ConfigError {
    let path = if path == "." { String::new() } else { path };
    let message = clean_serde_message(message);
    for (prefix, what) in [("missing field `", "missing"), ("unknown field `", "unknown key")] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some(end) = rest.find('`') {
                let key = &rest[..end];
                // serde_path_to_error already puts an unknown key at the end of the path.
                let path = if path.ends_with(key) { path.rsplit_once('.').map(|(p, _)| p.to_string()).unwrap_or_default() } else { path };
                let tail = rest[end + 1..].trim_start_matches(',').trim();
                let msg = if tail.is_empty() { what.to_string() } else { format!("{what}; {}", tail.replace('`', "")) };
                let msg = msg.replace("expected one of", "allowed:").replace("expected", "allowed:");
                return ConfigError::new(join(&path, key), msg);
            }
        }
    }
    ConfigError::new(path, message)
}

/// Makes serde's messages one lowercase line without Rust type names.
pub(crate) fn clean_serde_message(m: &str) -> String {
    let first = m.lines().next().unwrap_or("").trim();
    let mut s = first
        // serde's words for TOML's arrays and tables (JSON's arrays and objects).
        .replace("invalid type: sequence", "wrong type: array")
        .replace("invalid type: map", "wrong type: table")
        .replace("invalid type: ", "wrong type: ")
        .replace("data did not match any variant of untagged enum OneOrMany", "expected a value or a list with one value per flow")
        .replace(
            "data did not match any variant of untagged enum DelayedAckParams",
            "expected true, false or a table { count = 2, timeout = \"200ms\" }",
        );
    // serde names the Rust field type ("expected u32"); a user wrote TOML, so say it in TOML's terms,
    // with the range the key holds: "invalid value: integer `-1`, expected u32" said neither.
    for (rust, range) in [
        ("u8", "0..=255"),
        ("u16", "0..=65535"),
        ("u32", "0..=4294967295"),
        ("u64", "0..=18446744073709551615"),
        ("usize", "0..=18446744073709551615"),
        ("i8", "-128..=127"),
        ("i16", "-32768..=32767"),
        ("i32", "-2147483648..=2147483647"),
    ] {
        let tail = format!("`, expected {rust}");
        if let Some(value) = s.strip_prefix("invalid value: integer `").and_then(|r| r.strip_suffix(tail.as_str())) {
            return format!("must be an integer in {range}, got {value}");
        }
        s = s.replace(&format!("expected {rust}"), &format!("expected an integer in {range}"));
    }
    for rust in ["i64", "isize"] {
        s = s.replace(&format!("expected {rust}"), "expected an integer");
    }
    for rust in ["f32", "f64"] {
        s = s.replace(&format!("expected {rust}"), "expected a number");
    }
    if let Some(c) = s.get(..1) {
        s = c.to_lowercase() + &s[1..];
    }
    s
}

fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

/// Finds the line of a dotted key path like `flows[1].rate` in TOML text, falling back to the
/// nearest existing parent.
pub fn locate(text: &str, path: &str) -> Option<usize> {
    use toml_edit::{ImDocument, Item};
    let doc = ImDocument::parse(text).ok()?;
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    let mut best = None;
    for part in path.split('.') {
        let (key, index) = match part.find('[') {
            Some(i) => (&part[..i], part[i + 1..].trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let Some((k, item)) = table.get_key_value(key) else { break };
        best = k.span().map(|s| s.start).or(best);
        let next: Option<&dyn toml_edit::TableLike> = match (item, index) {
            (Item::ArrayOfTables(a), Some(i)) => a.get(i).map(|t| {
                best = t.span().map(|s| s.start).or(best);
                t as &dyn toml_edit::TableLike
            }),
            // An inline array of inline tables, e.g. `classes = [{ name = "a" }, { name = "b" }]`.
            (Item::Value(toml_edit::Value::Array(a)), Some(i)) => a.get(i).and_then(|v| v.as_inline_table()).map(|t| {
                best = t.span().map(|s| s.start).or(best);
                t as &dyn toml_edit::TableLike
            }),
            (_, None) => item.as_table_like(),
            _ => None,
        };
        match next {
            Some(t) => table = t,
            None => break,
        }
    }
    best.map(|o| line_of_offset(text, o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::TcpConfig;

    const GOOD: &str = r#"
[run]
duration = "10s"
warmup = "1s"

[topology]
bottleneck = { rate = "10Mbps", delay = "20ms" }

[queue]
kind = "red"
min_th = 5
max_th = 15

[[flows]]
kind = "tcp"
count = 3

[[flows]]
kind = "udp-cbr"
rate = "1Mbps"
"#;

    fn error_of(text: &str) -> String {
        parse_toml(text).err().map(|e| e.to_string()).unwrap_or_else(|| "no error".into())
    }

    #[test]
    fn good_scenario_expands_flow_groups() {
        let s = parse_toml(GOOD).unwrap();
        assert_eq!(s.flows.len(), 4);
        assert_eq!(s.tcp_configs.len(), 1);
        assert_eq!(s.echo["flows"][0]["variant"], "newreno");
    }

    #[test]
    fn unknown_key_names_path_and_line() {
        let e = error_of(&GOOD.replace("count = 3", "count = 3\ncolour = 1"));
        assert!(e.starts_with("flows[0].colour (line 17): unknown key"), "{e}");
    }

    #[test]
    fn missing_required_key_names_it() {
        let e = error_of(&GOOD.replace("duration = \"10s\"\n", ""));
        assert!(e.starts_with("run.duration") && e.contains("missing"), "{e}");
    }

    #[test]
    fn wrong_unit_names_key_line_and_allowed_units() {
        let e = error_of(&GOOD.replace("\"1Mbps\"", "\"10Mbs\""));
        assert!(e.contains("flows[1].rate") && e.contains("line 20") && e.contains("Mbps"), "{e}");
    }

    #[test]
    fn impossible_values_are_rejected_with_the_key() {
        assert!(error_of(&GOOD.replace("count = 3", "count = 0")).starts_with("flows[0].count (line 16): must be at least 1"));
        assert!(error_of(&GOOD.replace("warmup = \"1s\"", "warmup = \"20s\"")).starts_with("run.warmup (line 4)"));
        assert!(error_of(&GOOD.replace("\"10Mbps\"", "\"-10Mbps\"")).contains("topology.bottleneck.rate"));
        assert!(error_of(&GOOD.replace("kind = \"red\"", "kind = \"purple\"")).contains("queue.kind (line 10): unknown queue discipline \"purple\""));
        assert!(error_of(&GOOD.replace("rate = \"1Mbps\"", "rate = \"1Mbps\"\nvariant = \"reno\"")).starts_with("flows[1].variant"));
    }

    #[test]
    fn seed_out_of_range_names_key_value_and_allowed_range() {
        let e = error_of(&GOOD.replace("warmup = \"1s\"", "warmup = \"1s\"\nseed = -1"));
        assert!(e.starts_with("run.seed (line 5): must be an integer from 0 to 18446744073709551615, got -1"), "{e}");
        let e = error_of(&GOOD.replace("warmup = \"1s\"", "warmup = \"1s\"\nseed = 18446744073709551616"));
        assert!(e.contains("line 5") && e.contains("18446744073709551616 is too large") && e.contains("9223372036854775807"), "{e}");
        // 2^63 is a valid seed that TOML cannot write: name the key and the way around it.
        let e = error_of(&GOOD.replace("warmup = \"1s\"", "warmup = \"1s\"\nseed = 9223372036854775808"));
        assert!(e.starts_with("run.seed (line 5): seed = 9223372036854775808 is too large"), "{e}");
        assert!(e.contains("seeds up to 18446744073709551615 can be given with --seed or in a JSON scenario"), "{e}");
        let e = parse_json(r#"{"run": {"duration": "1s", "seed": 18446744073709551616}, "topology": {"bottleneck": {"rate": "1Mbps"}}, "flows": [{"kind": "tcp"}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("run.seed: must be an integer from 0 to 18446744073709551615, got 18446744073709551616"), "{e}");
    }

    #[test]
    fn exponent_and_huge_durations_name_the_key() {
        assert!(parse_toml(&GOOD.replace("\"10s\"", "\"1e1s\"")).is_ok());
        let e = error_of(&GOOD.replace("\"10s\"", "\"1e10s\""));
        assert!(e.starts_with("run.duration (line 3): duration \"1e10s\" is too long; allowed: at most 1000000000s"), "{e}");
    }

    #[test]
    fn tiny_bin_says_the_row_limit_and_the_smallest_bin() {
        let e = error_of(&format!("{GOOD}\n[output]\nbin = \"1ns\"\n"));
        assert!(e.starts_with("output.bin (line 23): 1ns gives 10000000000 time-series rows over run.duration 10s"), "{e}");
        assert!(e.contains("at most 1000000 are allowed") && e.contains("at least 10us"), "{e}");
        assert!(parse_toml(&format!("{GOOD}\n[output]\nbin = \"10us\"\n")).is_ok());
    }

    #[test]
    fn per_flow_columns_over_the_limit_are_refused_or_off_by_default() {
        let many = GOOD.replace("count = 3", "count = 200000");
        let e = error_of(&format!("{many}\n[output]\nper_flow_timeseries = true\n"));
        assert!(e.starts_with("output.per_flow_timeseries (line 23): 200001 flows give 400002 per-flow columns × 100 rows"), "{e}");
        let s = parse_toml(&many).unwrap();
        assert!(!s.output.per_flow_timeseries);
        assert_eq!(s.echo["output"]["per_flow_timeseries"], false);
        // Within the value bound, the default is on up to 1000 flows and off above.
        let on = parse_toml(&GOOD.replace("count = 3", "count = 999")).unwrap();
        let off = parse_toml(&GOOD.replace("count = 3", "count = 1000")).unwrap();
        assert_eq!((on.flows.len(), on.output.per_flow_timeseries), (1000, true));
        assert_eq!((off.flows.len(), off.output.per_flow_timeseries), (1001, false));
    }

    #[test]
    fn tcp_state_columns_over_the_limit_are_refused() {
        // 200 TCP flows at a 40-µs bin over 10 s: 2 × 200 × 250,000 = 100 M values (was accepted,
        // and took gigabytes). The goodput columns are off, so only this bound can refuse it.
        let many = GOOD.replace("count = 3", "count = 200");
        let e = error_of(&format!("{many}\n[output]\nbin = \"40us\"\nper_flow_timeseries = false\nper_flow_tcp_state = true\n"));
        assert!(e.starts_with("output.per_flow_tcp_state (line 25): 200 TCP flows give 400 columns (cwnd and smoothed RTT) × 250000 rows = 100000000 values"), "{e}");
        assert!(e.contains("at most 20000000 are allowed"), "{e}");
        assert!(parse_toml(&format!("{many}\n[output]\nbin = \"40us\"\nper_flow_timeseries = false\n")).is_ok());
        assert!(parse_toml(&format!("{many}\n[output]\nbin = \"1ms\"\nper_flow_tcp_state = true\n")).is_ok());
    }

    #[test]
    fn the_echo_states_the_resolved_delayed_ack_and_receiver_window() {
        // `validate --show` printed `delayed_ack: true` and no `max_window` for these defaults.
        let s = parse_toml(GOOD).unwrap();
        let tcp = &s.echo["flows"][0];
        assert_eq!(tcp["delayed_ack"], serde_json::json!({"count": 2, "timeout": "200ms"}));
        assert_eq!(tcp["max_window"], "none");
        let s = parse_toml(&GOOD.replace("count = 3", "count = 3\ndelayed_ack = false\nmax_window = \"none\"")).unwrap();
        assert_eq!(s.echo["flows"][0]["delayed_ack"]["count"], 1);
        assert_eq!(s.tcp_configs[0].max_window, TcpConfig::default().max_window);
        let s = parse_toml(&GOOD.replace("count = 3", "count = 3\nmax_window = \"14480B\"")).unwrap();
        assert_eq!((s.echo["flows"][0]["max_window"].as_str(), s.tcp_configs[0].max_window), (Some("14480B"), 10));
        let e = error_of(&GOOD.replace("count = 3", "count = 3\nmax_window = \"lots\""));
        assert!(e.contains("flows[0].max_window") && e.contains("\"none\""), "{e}");
    }

    #[test]
    fn too_many_flows_are_refused_before_they_are_expanded() {
        let e = error_of(&GOOD.replace("count = 3", "count = 100000000"));
        assert!(e.starts_with("flows[0].count (line 16): the groups' counts add up to 100000001 flows; at most 4000000"), "{e}");
        let e = error_of(&GOOD.replace("count = 3", "count = 4000000"));
        assert!(e.starts_with("flows[1].count"), "the second group carries the total past the bound: {e}");
        assert!(parse_toml(&GOOD.replace("count = 3", "count = 100000")).is_ok());
    }

    #[test]
    fn udp_packet_size_below_its_headers_is_refused() {
        let e = error_of(&GOOD.replace("rate = \"1Mbps\"", "rate = \"1Mbps\"\npacket_size = \"27B\""));
        assert!(e.starts_with("flows[1].packet_size (line 21): must be between 28B"), "{e}");
        assert!(parse_toml(&GOOD.replace("rate = \"1Mbps\"", "rate = \"1Mbps\"\npacket_size = \"28B\"")).is_ok());
    }

    #[test]
    fn locate_finds_keys_inside_inline_tables_of_an_array() {
        let text = "[queue]\nkind = \"cbt\"\nclasses = [\n  { name = \"a\", max_th = 3 },\n  { name = \"b\", max_th = 4 },\n]\n";
        assert_eq!(locate(text, "queue.classes[1].max_th"), Some(5));
        assert_eq!(locate(text, "queue.classes[0]"), Some(4));
        assert_eq!(locate(text, "queue.classes[7].max_th"), Some(3), "falls back to the array's key");
    }

    /// GOOD with its `[queue]` table replaced by `kind` and `extra`.
    fn with_queue(kind: &str, extra: &str) -> String {
        GOOD.replace("kind = \"red\"\nmin_th = 5\nmax_th = 15", &format!("kind = \"{kind}\"\n{extra}"))
    }

    #[test]
    fn a_list_where_a_table_belongs_is_refused() {
        // Each was read field by field in declaration order: the first ran 2 s with seed 7.
        let run = GOOD.replace("[run]\nduration = \"10s\"\nwarmup = \"1s\"\n", "");
        let e = error_of(&format!("run = [\"2s\", \"0.5s\", 7]\n{run}"));
        assert_eq!(e, "run (line 1): wrong type: array, expected a table with keys duration, warmup, seed");
        let e = error_of(&format!("flows = [[\"tcp\", 2]]\n{}", &GOOD[..GOOD.find("[[flows]]").unwrap()]));
        assert!(e.starts_with("flows[0] (line 1): wrong type: array, expected a table with keys kind, count, direction"), "{e}");
        let topo = GOOD.replace("[topology]\nbottleneck = { rate = \"10Mbps\", delay = \"20ms\" }\n", "");
        let e = error_of(&format!("topology = [\"dumbbell\", {{ rate = \"1Mbps\" }}]\n{topo}"));
        assert!(e.starts_with("topology (line 1): wrong type: array, expected a table with keys kind, bottleneck"), "{e}");
        let e = error_of(&GOOD.replace("count = 3", "count = 3\ndelayed_ack = [2, \"100ms\"]"));
        assert!(e.starts_with("flows[0].delayed_ack (line 17): wrong type: array, expected true, false or a table"), "{e}");
        let e = error_of(&with_queue("cbt", "classes = [[\"a\", 3]]"));
        assert!(e.starts_with("queue.classes[0] (line 11): wrong type: array, expected a table with keys name"), "{e}");
        let e = error_of(&GOOD.replace("bottleneck = { rate = \"10Mbps\", delay = \"20ms\" }", "bottleneck = { rate = \"10Mbps\", rate_schedule = [[\"1s\", \"5Mbps\"]] }"));
        assert!(e.starts_with("topology.bottleneck.rate_schedule[0] (line 7): wrong type: array, expected a table with keys at, rate"), "{e}");
        let e = parse_json(r#"{"run": ["2s", "0.5s", 7], "topology": {"bottleneck": {"rate": "1Mbps"}}, "flows": [{"kind": "tcp"}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "run: wrong type: array, expected a table with keys duration, warmup, seed");
        let e = parse_json(r#"{"run": {"duration": "2s"}, "topology": {"bottleneck": {"rate": "1Mbps"}}, "flows": [["tcp", 2]]}"#).unwrap_err();
        assert!(e.to_string().starts_with("flows[0]: wrong type: array, expected a table"), "{e}");
        // Tables still read as before, and delayed_ack still takes true, false or a table.
        assert!(parse_toml(&GOOD.replace("count = 3", "count = 3\ndelayed_ack = { count = 3, timeout = \"100ms\" }")).is_ok());
        assert!(parse_toml(&GOOD.replace("count = 3", "count = 3\ndelayed_ack = false")).is_ok());
        let e = error_of(&GOOD.replace("count = 3", "count = 3\ndelayed_ack = { count = \"two\" }"));
        assert!(e.starts_with("flows[0].delayed_ack.count (line 17): wrong type: string \"two\", expected an integer in 0..=4294967295"), "{e}");
    }

    #[test]
    fn messages_name_what_is_expected_not_rust_types() {
        let topo = GOOD.replace("[topology]\nbottleneck = { rate = \"10Mbps\", delay = \"20ms\" }\n", "");
        let e = error_of(&format!("topology = 5\n{topo}"));
        assert_eq!(e, "topology (line 1): wrong type: integer `5`, expected a table with keys kind, bottleneck, access, receiver_access");
        let e = error_of(&GOOD.replace("count = 3", "count = 3\ndirection = 1"));
        assert_eq!(e, "flows[0].direction (line 17): expected one of \"forward\", \"reverse\"");
        for text in [format!("topology = 5\n{topo}"), GOOD.replace("count = 3", "count = 3\ndirection = 1"),
                     GOOD.replace("[output]", "").replace("kind = \"udp-cbr\"", "kind = \"udp-cbr\"\noutput = 1")] {
            let e = error_of(&text);
            assert!(!e.contains("struct ") && !e.contains("enum ") && !e.contains("Params"), "{e}");
        }
    }

    #[test]
    fn integer_keys_name_their_allowed_range() {
        // All nine said "invalid value: integer `-1`, expected an integer".
        for (kind, key, range) in [
            ("cbq", "qlimit", "1..=4294967295"),
            ("drr", "buckets", "0..=1048576"),
            ("fq_codel", "drop_batch", "1..=65536"),
            ("fq_cobalt", "drop_batch", "1..=65536"),
            ("fq_pie", "drop_batch", "1..=65536"),
            ("sfb", "bins", "1..=4096"),
            ("cake", "perturbation", "0..=4294967295"),
            ("sfq", "depth", "1..=127"),
            ("choke", "limit", "1..=131071"),
        ] {
            let e = error_of(&with_queue(kind, &format!("{key} = -1")));
            assert_eq!(e, format!("queue.{key} (line 11): must be in {range}, got -1"));
            let e = error_of(&with_queue(kind, &format!("{key} = 1.5")));
            assert_eq!(e, format!("queue.{key} (line 11): wrong type: floating point `1.5`, expected an integer in {range}"));
        }
        let e = error_of(&with_queue("cbq", "classes = [{ name = \"a\", share = 0.5, qlimit = -1 }]"));
        assert!(e.starts_with("queue.classes[0].qlimit (line 11): must be in 1..=4294967295, got -1"), "{e}");
        let e = error_of(&with_queue("drr", "buckets = 4000000000"));
        assert_eq!(e, "queue.buckets (line 11): must be in 0..=1048576, got 4000000000", "4e9 bins aborted the run out of memory");
        for class in ["-1", "256"] {
            let e = error_of(&GOOD.replace("count = 3", &format!("count = 3\nclass = {class}")));
            assert_eq!(e, format!("flows[0].class (line 17): must be in 0..=255, got {class}"));
        }
        // Other integer keys say the range of their type.
        let e = error_of(&GOOD.replace("count = 3", "count = 3\ninitial_window = -2"));
        assert_eq!(e, "flows[0].initial_window (line 17): must be an integer in 0..=4294967295, got -2");
        assert!(parse_toml(&with_queue("sfq", "depth = 127")).is_ok() && parse_toml(&with_queue("drr", "buckets = 0")).is_ok());
    }

    #[test]
    fn a_duplicate_table_is_named() {
        let e = error_of(&format!("{GOOD}\n[queue]\nkind = \"codel\"\n"));
        assert!(e.starts_with("queue (line 22): duplicate table [queue]; a table is given once"), "{e}");
        let e = error_of("[topology.bottleneck]\nrate = \"1Mbps\"\n[topology.bottleneck]\nrate = \"2Mbps\"\n");
        assert!(e.starts_with("topology.bottleneck (line 3): duplicate table [topology.bottleneck]"), "{e}");
    }

    #[test]
    fn a_bin_giving_fewer_than_two_rows_is_refused() {
        // bin = duration gave one row at the end, bin > duration none: an empty plot either way.
        for (bin, rows) in [("10s", "1 time-series row"), ("60s", "0 time-series rows"), ("5001ms", "1 time-series row")] {
            let e = error_of(&format!("{GOOD}\n[output]\nbin = \"{bin}\"\n"));
            assert!(e.starts_with(&format!("output.bin (line 23): {bin} gives {rows} over run.duration 10s; at least 2")), "{e}");
            assert!(e.ends_with("so the bin must be at most 5s"), "{e}");
        }
        assert!(parse_toml(&format!("{GOOD}\n[output]\nbin = \"5s\"\n")).is_ok());
        // A run shorter than two default bins keeps its summary-only run.
        assert!(parse_toml(&GOOD.replace("duration = \"10s\"\nwarmup = \"1s\"", "duration = \"150ms\"")).is_ok());
    }

    #[test]
    fn rates_and_mean_packet_sizes_have_upper_bounds() {
        let e = error_of(&GOOD.replace("\"10Mbps\"", "\"1e30Tbps\""));
        assert!(e.starts_with("topology.bottleneck.rate (line 7): rate \"1e30Tbps\" is above the largest allowed, 1Tbps"), "{e}");
        assert!(parse_toml(&GOOD.replace("\"10Mbps\"", "\"1Tbps\"")).is_ok());
        let e = error_of(&GOOD.replace("rate = \"1Mbps\"", "rate = \"2Tbps\""));
        assert!(e.starts_with("flows[1].rate (line 20): rate \"2Tbps\" is above the largest allowed, 1Tbps"), "{e}");
        for (kind, key) in [
            ("red", "mean_packet_size"), ("rio", "mean_packet_size"), ("fpq", "mean_packet_size"), ("choke", "mean_packet_size"),
            ("chardonnay", "mean_packet_size"), ("chablis", "mean_packet_size"), ("aecn", "mean_packet_size"),
            ("fred", "mean_packet_size"), ("rem", "mean_packet_size"), ("pie", "mean_pkt_size"),
        ] {
            let e = error_of(&with_queue(kind, &format!("{key} = \"65536B\"")));
            assert_eq!(e, format!("queue.{key} (line 11): must be in 1B..=65535B (the largest IP packet), got 65536B"), "{kind}");
            let e = error_of(&with_queue(kind, &format!("{key} = \"1e300B\"")));
            assert_eq!(e, format!("queue.{key} (line 11): size \"1e300B\" is too large; allowed: at most 1000000GB (10^15 bytes)"), "{kind}");
            assert!(parse_toml(&with_queue(kind, &format!("{key} = \"65535B\""))).is_ok(), "{kind}");
        }
        let e = error_of(&with_queue("cbt", "classes = [{ name = \"a\", max_th = 5, mean_packet_size = \"1e300B\" }]"));
        assert!(e.starts_with("queue.classes[0].mean_packet_size"), "{e}");
    }
}
