//! The list of queue disciplines shown by `aqmlab qdiscs`: name, source, and every parameter
//! with its default (taken from the parameter type itself, so the list cannot drift).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::{DropTailParams, RedParams};

fn defaults<T: DeserializeOwned + Serialize>() -> Value {
    let p: T = toml::Value::Table(toml::Table::new()).try_into().expect("every parameter has a default");
    serde_json::to_value(p).expect("params serialise")
}

/// One entry per discipline.
pub fn catalog() -> Value {
    json!([
        {
            "kind": "droptail",
            "aliases": ["fifo", "pfifo"],
            "summary": "drop-tail FIFO: drop the arrival when the buffer is full",
            "source": "Parris 2001 Fig. 3.4; specs/seed000-cbt-algorithms.md §2.1",
            "params": defaults::<DropTailParams>(),
            "docs": {"limit": "packets (integer) or bytes (\"150KB\")"},
        },
        {
            "kind": "red",
            "aliases": [],
            "summary": "Random Early Detection with count-spaced early drops and idle-time decay",
            "source": "Floyd & Jacobson 1993; Parris 2001 Figs. 3.6-3.10; ALTQ altq_red.c; ns-2 red.cc; specs/seed000-cbt-algorithms.md §2.2",
            "params": defaults::<RedParams>(),
            "docs": {
                "limit": "hard limit, packets or bytes",
                "min_th": "minimum threshold on the average queue (packets); aliases thresh_, min",
                "max_th": "maximum threshold (packets); aliases maxthresh_, max",
                "max_p": "early-drop probability at max_th, in (0, 1]; alias probability",
                "weight": "EWMA weight w, in (0, 1]; alias q_weight_",
                "variant": "documented (Parris Figs. 3.7-3.10) | altq (ALTQ altq_red.c) | ns2 (ns-2 red.cc / ns-3 RedQueueDisc); see docs/red.md",
                "wait": "ns-2 wait_: no early drop until count*pb >= 1 (default: true for ns2, else false; not for altq)",
                "ecn_forced_mark": "with ecn, also mark instead of drop in the forced region",
                "protected_pkts": "no drop on the average while at most this many packets are queued (Fig. 3.8: q_len > 1)",
                "gentle": "ramp the probability from max_p to 1 between max_th and 2*max_th",
                "byte_mode": "queue in bytes / mean_packet_size; probability scaled by packet size",
                "ecn": "mark ECN-capable packets instead of early-dropping them",
                "mean_packet_size": "mean packet size for idle-time decay and byte mode; alias avpkt",
            },
        },
    ])
}
