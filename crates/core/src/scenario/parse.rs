//! Reading scenario text (TOML files, or JSON from the Python API) into a validated
//! [`Scenario`], with errors that name the key path and, for files, the line.

use std::path::Path;

use super::schema::ScenarioFile;
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
    let file: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
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
    let file: ScenarioFile = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| {
            // The position in generated JSON text means nothing to the author of a dict.
            let message = e.inner().to_string();
            let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m).to_string();
            path_error(e.path().to_string(), &message)
        })?;
    validate(file, base_dir)
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
        .replace("invalid type: ", "wrong type: ")
        .replace("data did not match any variant of untagged enum OneOrMany", "expected a value or a list with one value per flow")
        .replace(
            "data did not match any variant of untagged enum DelayedAckParams",
            "expected true, false or a table { count = 2, timeout = \"200ms\" }",
        );
    // serde names the Rust field type ("expected i64"); a user wrote TOML, so say it in TOML's terms.
    for rust in ["u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize"] {
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
}
