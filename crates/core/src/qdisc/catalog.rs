//! The list of queue disciplines shown by `aqmlab qdiscs`: name, source, and every parameter
//! with its default (taken from the parameter type itself, so the list cannot drift).
//!
//! Every key a discipline accepts is listed: `keys` is the field list serde_derive gives the
//! deserializer (the list `deny_unknown_fields` checks), `params` the defaults with the
//! variant-dependent ones written out (`filled`), and `key_aliases` maps each remaining key to the
//! parameter it spells (found by serde's own duplicate-field check).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::white::{WhiteFlavour, WhiteParams};
use super::{
    AecnParams, BmreParams, CbqParams, CbtParams, CsfqParams, DrrParams, DropFrontParams, DropTailParams, EarlyRandomDropParams, FpqParams,
    FredParams, RandomDropParams, RedParams,
    RioParams,
};
use super::{PiParams, TsqParams};
use super::{CodelParams, FqCodelParams};
use super::PieParams;
use super::FqPieParams;
use super::{BlueParams, SfbParams};
use super::DualPi2Params;
use super::CakeParams;
use super::RemParams;
use super::{ChokeParams, SfqParams};
use super::{CobaltQdiscParams, FqCobaltParams};

fn defaults<T: DeserializeOwned + Serialize>(fill: fn(T) -> T) -> Value {
    let p: T = toml::Value::Table(toml::Table::new()).try_into().expect("every parameter has a default");
    serde_json::to_value(fill(p)).expect("params serialise")
}

/// Every key `T` accepts, aliases included, as serde_derive lists them for `deserialize_struct`.
pub fn accepted_keys<T: DeserializeOwned>() -> Vec<&'static str> {
    let mut fields = None;
    let _ = T::deserialize(FieldProbe(&mut fields));
    fields.expect("parameters are a struct with named fields").to_vec()
}

/// A deserializer that only records the field list of the struct asked of it.
struct FieldProbe<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> serde::Deserializer<'de> for FieldProbe<'_> {
    type Error = serde::de::value::Error;
    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("not a struct"))
    }
    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(serde::de::Error::custom("fields recorded"))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// `{alias: parameter}` for every accepted key of `T` that is not a parameter name: serde reports
/// "duplicate field `p`" when an alias is given together with its parameter `p`.
fn key_aliases<T: DeserializeOwned + Serialize>(fill: fn(T) -> T) -> Value {
    let params = defaults::<T>(fill);
    let params = params.as_object().expect("params are a table");
    let mut aliases = serde_json::Map::new();
    for key in accepted_keys::<T>().into_iter().filter(|k| !params.contains_key(*k)) {
        for (name, value) in params {
            let Ok(v) = toml::Value::try_from(value) else { continue };
            let table = toml::Table::from_iter([(name.clone(), v.clone()), (key.to_string(), v)]);
            if let Err(e) = toml::Value::Table(table).try_into::<T>() {
                if e.to_string().contains(&format!("duplicate field `{name}`")) {
                    aliases.insert(key.into(), name.clone().into());
                    break;
                }
            }
        }
    }
    Value::Object(aliases)
}

/// The `keys`, `params` and `key_aliases` members of a catalog entry.
fn described<T: DeserializeOwned + Serialize>(fill: fn(T) -> T) -> Value {
    json!({"keys": accepted_keys::<T>(), "params": defaults::<T>(fill), "key_aliases": key_aliases::<T>(fill)})
}

/// One entry per discipline.
pub fn catalog() -> Value {
    let mut entries = entries();
    let described = [
        described::<DropTailParams>(std::convert::identity),
        described::<DropFrontParams>(std::convert::identity),
        described::<EarlyRandomDropParams>(std::convert::identity),
        described::<RandomDropParams>(std::convert::identity),
        described::<RedParams>(red_listed),
        described::<RioParams>(RioParams::filled),
        described::<FpqParams>(std::convert::identity),
        described::<FredParams>(FredParams::filled),
        described::<CbtParams>(CbtParams::filled),
        described::<CbqParams>(CbqParams::filled),
        described::<WhiteParams>(|p| p.filled(WhiteFlavour::Chardonnay)),
        described::<WhiteParams>(|p| p.filled(WhiteFlavour::Chablis)),
        described::<AecnParams>(AecnParams::filled),
        described::<DrrParams>(std::convert::identity),
        described::<CsfqParams>(std::convert::identity),
        described::<BmreParams>(BmreParams::filled),
        described::<PiParams>(std::convert::identity),
        described::<TsqParams>(std::convert::identity),
        described::<CodelParams>(std::convert::identity),
        described::<FqCodelParams>(std::convert::identity),
        described::<PieParams>(std::convert::identity),
        described::<FqPieParams>(std::convert::identity),
        described::<BlueParams>(std::convert::identity),
        described::<SfbParams>(std::convert::identity),
        described::<DualPi2Params>(DualPi2Params::filled),
        described::<CakeParams>(std::convert::identity),
        described::<RemParams>(std::convert::identity),
        described::<SfqParams>(std::convert::identity),
        described::<ChokeParams>(std::convert::identity),
        described::<CobaltQdiscParams>(std::convert::identity),
        described::<FqCobaltParams>(std::convert::identity),
    ];
    for (entry, d) in entries.as_array_mut().expect("a list").iter_mut().zip(described) {
        let entry = entry.as_object_mut().expect("an entry");
        assert_eq!(entry["params"], d["params"], "{}: entries and described in the same order", entry["kind"]);
        entry.extend(d.as_object().expect("a table").clone());
    }
    entries
}

fn entries() -> Value {
    let mut all = thesis_entries();
    let list = all.as_array_mut().expect("a list");
    list.extend(modern_entries().as_array().expect("a list").iter().cloned());
    all
}

/// The disciplines of the five theses and their baselines.
fn thesis_entries() -> Value {
    json!([
        {
            "kind": "droptail",
            "aliases": ["fifo", "pfifo"],
            "summary": "drop-tail FIFO: drop the arrival when the buffer is full",
            "source": "Parris 2001 Fig. 3.4; docs/cbt.md",
            "params": defaults::<DropTailParams>(std::convert::identity),
            "docs": {"limit": "packets (integer), bytes (\"150KB\") or \"none\""},
        },
        {
            "kind": "drop-front",
            "aliases": ["drop_front"],
            "summary": "drop-front on full: discard the head packet, queue the arrival",
            "source": "Parris 2001 Sec. III.2.1; Lakshman et al. 1996; docs/cbt.md",
            "params": defaults::<DropFrontParams>(std::convert::identity),
            "docs": {"limit": "packets (integer) or bytes (\"150KB\")"},
        },
        {
            "kind": "early-random-drop",
            "aliases": ["early_random_drop"],
            "summary": "Early Random Drop: drop arrivals with fixed probability while the instantaneous queue exceeds a threshold",
            "source": "Hashem 1989; Parris 2001 Sec. III.2.1; docs/cbt.md",
            "params": defaults::<EarlyRandomDropParams>(std::convert::identity),
            "docs": {
                "limit": "buffer limit: packets, bytes or \"none\"",
                "threshold": "drop early while more than this many packets wait (below limit)",
                "drop_p": "drop probability above the threshold, in (0, 1]",
            },
        },
        {
            "kind": "random-drop",
            "aliases": ["random_drop"],
            "summary": "random drop on full: evict a uniformly chosen queued packet, always queue the arrival",
            "source": "Morris 1999 Sec. 5.2; Mankin 1990; docs/fpq.md",
            "params": defaults::<RandomDropParams>(std::convert::identity),
            "docs": {"limit": "packets (integer) or bytes (\"150KB\")"},
        },
        {
            "kind": "red",
            "aliases": [],
            "summary": "Random Early Detection with count-spaced early drops and idle-time decay; adaptive = true is Adaptive RED (max_p steered towards a target band)",
            "source": "Floyd & Jacobson 1993; Parris 2001 Figs. 3.6-3.10; ALTQ altq_red.c; ns-2 red.cc; Adaptive RED: Floyd, Gummadi & Shenker 2001, ns-3 red-queue-disc.cc, Linux red.h; Nonlinear RED: Zhou, Ye & Wu 2006 Sec. 3.1, ns-3 NLRED; docs/red.md",
            "params": defaults::<RedParams>(red_listed),
            "docs": red_docs(),
        },
        {
            "kind": "rio",
            "aliases": [],
            "summary": "RED with In and Out: In packets tested on the In occupancy, Out packets on the whole queue",
            "source": "Clark & Fang 1998; Parris 2001 Sec. III.2.3.3; docs/cbt.md",
            "params": defaults::<RioParams>(RioParams::filled),
            "docs": {
                "limit": "hard limit: packets, bytes or \"none\"",
                "in_tags": "class tags (flows' `class`) that are In profile",
                "in": "{ min_th, max_th, max_p } of the In test, on the average of In packets queued",
                "out": "{ min_th, max_th, max_p } of the Out test, on the average of the whole queue",
                "weight": "EWMA weight of both averages, in (0, 1]",
                "variant": "documented | altq | ns2 (see red)",
                "wait": "ns-2 wait_ for both tests",
                "mean_packet_size": "for the idle-time decay",
                "protected_pkts": "no drop while at most this many packets are queued",
            },
        },
        {
            "kind": "fpq",
            "aliases": [],
            "summary": "Flow-Proportional Queuing: RED with max_th = 2q, max_p = l re-set from a bit-vector flow count",
            "source": "Morris 1999 Ch. 6, Figs. 6.1, 6.2, 6.4, Eq. 6.1; docs/fpq.md",
            "params": defaults::<FpqParams>(std::convert::identity),
            "docs": {
                "bdp_pkts": "bandwidth-delay product r of the typical path, packets (configured, not measured)",
                "ppf": "packets of buffer per flow when many flows share the link",
                "loss_cap": "cap on the target loss rate, in (0, 1]; 1 = uncapped",
                "min_th": "RED minimum threshold, packets",
                "weight": "RED EWMA weight, in (0, 1] (the thesis does not state FPQ's)",
                "variant": "RED underneath: documented | altq | ns2 (ns-1.4 behaves like ns2)",
                "wait": "ns-2 wait_ (off: Eq. 5.8 assumes count-spaced drops without it)",
                "gentle": "gentle RED above max_th",
                "limit": "hard buffer limit: packets, bytes or \"none\" (the thesis: none)",
                "mean_packet_size": "packet size for RED's idle-time decay",
                "protected_pkts": "no drop while at most this many packets are queued",
                "counter": "flow counter: bits (v_max, 2..2^30), t_clear (> 0), clearing (random | sweep)",
            },
        },
        {
            "kind": "fred",
            "aliases": [],
            "summary": "Flow Random Early Drop: RED average plus per-flow queue caps and strikes; many-flows variant keeps 2 packets per flow above max_th",
            "source": "Lin & Morris 1997; Parris 2001 Figs. 3.12-3.15, Table 5.1; docs/cbt.md",
            "params": defaults::<FredParams>(FredParams::filled),
            "docs": {
                "limit": "hard buffer limit: packets, bytes or \"none\" (Table 5.1: 240 packets); overflow drops come after FRED's tests",
                "min_th": "minimum threshold on the average (packets) and the per-flow cap maxq, >= 1",
                "max_th": "maximum threshold on the average (packets), >= min_th",
                "max_p": "early-drop probability at max_th, in (0, 1]",
                "weight": "EWMA weight w, in (0, 1] (Table 5.1: 1/256)",
                "minq": "packets a flow holds before it can be early-dropped (robust-flow test q_len_f >= max(minq, avgcq)), >= 0",
                "max_th_flow_cap": "packets per flow while avg >= max_th (Fig. 3.14's 2, Lin & Morris's maxq = 2), >= 1",
                "variant": "parris (Fig. 3.14, the dissertation's many-flows FRED) | lin-morris (published FRED: maxq = max_th_flow_cap above max_th and a 2*avgcq clause, both striking; drop-all above max_th by default)",
                "above_max_th": "flow-cap (drop only flows holding max_th_flow_cap packets) | drop-all (drop every arrival); default: parris flow-cap, lin-morris drop-all",
                "red_variant": "RED underneath: documented (Figs. 3.7-3.9, pa = pb/(1-count*pb)) | altq (pa = pb/(2-count*pb), ALTQ idle handling)",
                "mean_packet_size": "packet size for the idle-time decay (drain rate = link rate / this); the unit of byte mode",
                "byte_mode": "lengths, the average, min_th, max_th, minq, max_th_flow_cap in bytes / mean_packet_size; early-drop probability scaled by size / mean_packet_size (Cho 2002's FRED)",
            },
        },
        {
            "kind": "cbt",
            "aliases": [],
            "summary": "Class-Based Thresholds: one FIFO, per-class RED on each class's own average (sampled on its own arrivals); min_th = max_th makes a class deterministic; shared limit",
            "source": "Parris 2001 Ch. IV Figs. 4.2-4.6, Table 5.3, Table B.13; docs/cbt.md",
            "params": defaults::<CbtParams>(CbtParams::filled),
            "docs": {
                "limit": "shared limit on the whole queue: packets, bytes or \"none\" (Table 5.1: 240)",
                "classes": "list of classes, tried in order, first match wins; the last must catch every remaining packet (match = \"any\", no tags). Default: tcp / multimedia (udp, tag 1) / other, Table 5.3 HTTP-Proshare (L = 30 ms)",
                "classes[].name": "unique class name",
                "classes[].match": "tcp (data and ACKs) | tcp-data | tcp-ack | udp | any (default)",
                "classes[].tags": "class tags (0-255, set with class = n in [[flows]]) the class accepts; absent = every tag. Multimedia 'ports 6000-6010' = tag the multimedia flows",
                "classes[].min_th": "ThMin, packets (mean-size packets in byte mode); default = max_th (deterministic class)",
                "classes[].max_th": "ThMax, packets, real-valued (required); eq. 4.1: B·L/P",
                "classes[].max_p": "early-drop probability at max_th, in (0, 1]; default 0.1; unused when min_th = max_th",
                "classes[].weight": "EWMA weight, in (0, 1]; default 1/256 (Table B.13: tcp 1/256, multimedia 1/16, other 1/4)",
                "classes[].mean_packet_size": "P, bytes: unit of byte mode and of the drain rate; default 1000B",
                "classes[].allocation": "B, a rate such as \"915KiB/s\": drain_rate = allocation / mean_packet_size",
                "classes[].drain_rate": "idle-decay rate, packets/s (instead of allocation); default link rate / mean_packet_size",
                "classes[].protected_pkts": "per-class override of protected_pkts",
                "variant": "documented (Figs. 4.3-4.6, default) | altq | ns2: RED formulas and test order, as for red",
                "wait": "ns-2 wait_ (default: true for ns2, else false; not for altq)",
                "byte_mode": "class queues and averages in bytes / mean_packet_size (sec. VI.5.1.1)",
                "protected_pkts": "no drop on the average while the class has at most this many packets queued (Fig. 4.3: q_len_c > 1 -> 1; 0 = q_len_c >= 1)",
                "idle_rule": "empty (default: every arrival finding its class empty decays, last_c = now; Fig. 4.6 + spec resolution) | flag (ALTQ idle flag: only the first)",
                "sampling": "own (default: a class's average moves only on its own arrivals) | all (synchronized averages, sec. VI.5.1.1)",
            },
        },
        {
            "kind": "cbq",
            "aliases": [],
            "summary": "Class-Based Queueing (link sharing): per-class drop-tail queues, virtual-clock service at share * link rate, two-level tree; excess goes to siblings in a group first, then to borrowing classes, then (work-conserving) to classes with borrow = false",
            "source": "Floyd & Jacobson 1995; Parris 2001 Figs. 3.17-3.20, Table 5.4 (ALTQ CBQ as the gold standard); module docs of qdisc/cbq.rs; docs/cbt.md",
            "params": defaults::<CbqParams>(CbqParams::filled),
            "docs": {
                "qlimit": "per-class drop-tail limit, packets, >= 1 (default 50: the ALTQ/pf default; the dissertation gives none)",
                "max_lead": "cap on a class or group clock's lead over real time (borrowing debt), applied whenever a class becomes backlogged (ALTQ minidle analogue); a duration, default 20ms",
                "classes": "leaf classes, tried in order, first match wins; the last must catch every remaining packet. Default: tcp 0.75 + multimedia (udp, tag 1) 0.13 in group tcp-mm, other 0.12 with borrow = false (Table 5.4 HTTP-Proshare)",
                "classes[].name": "unique class name",
                "classes[].match": "tcp (data and ACKs) | tcp-data | tcp-ack | udp | any (default)",
                "classes[].tags": "class tags (0-255, set with class = n in [[flows]]) the class accepts; absent = every tag",
                "classes[].share": "fraction of the link rate, in (0, 1] (12 % = 0.12); required",
                "classes[].parent": "name of the group the class belongs to; absent = directly under the root",
                "classes[].borrow": "true (default): may borrow from the root when over its rate and its group is over its rate; false: gets only what the borrowing classes leave (link otherwise idle)",
                "classes[].qlimit": "per-class override of qlimit, packets",
                "groups": "interior classes { name, share, borrow }; default: one group per distinct parent, share = sum of its members, borrow = true",
                "groups[].name": "unique group name, referenced by classes[].parent",
                "groups[].share": "fraction of the link, in (0, 1], at least the sum of its members (default: that sum)",
                "groups[].borrow": "false: no member borrows from the root (default true)",
            },
        },
        {
            "kind": "chardonnay",
            "aliases": [],
            "summary": "WHITE, dropping: ns-2 RED with the early-drop probability scaled per packet by (R_formula/RTT hint)^alpha (robust) or ^beta (fragile); no per-flow state",
            "source": "Lee 2002 ch. 3, Figs. 3.1-3.2, eqs. 3.1-3.6, Sec. 5.1 (alpha 0.65, beta 1.40); docs/white.md",
            "params": defaults::<WhiteParams>(|p| p.filled(WhiteFlavour::Chardonnay)),
            "docs": white_docs(),
        },
        {
            "kind": "chablis",
            "aliases": [],
            "summary": "WHITE, marking: as chardonnay but ECN-capable packets are marked CE instead of dropped early (alpha 1.60, beta 1.40)",
            "source": "Lee 2002 ch. 6, Sec. 6.1; docs/white.md",
            "params": defaults::<WhiteParams>(|p| p.filled(WhiteFlavour::Chablis)),
            "docs": white_docs(),
        },
        {
            "kind": "aecn",
            "aliases": [],
            "summary": "Adaptive ECN: RED marking with per-RTT-class max_p (robust / average / fragile by the packet's RTT hint) and mark-front within the class's virtual queue",
            "source": "Zheng & Kinicki 2002 (ISCC, DOI 10.1109/ISCC.2002.1021773); related work only in Lee 2002 (sec. 2.1.5, Fig. 2.5), no results to reproduce; docs/white.md",
            "params": defaults::<AecnParams>(AecnParams::filled),
            "docs": {
                "limit": "hard limit: packets, bytes or \"none\" (ns-2.1b8 limit_: 50)",
                "min_th": "minimum threshold on the average queue (packets); below it every arrival is queued",
                "max_th": "maximum threshold (packets); at or above it (2*max_th with gentle) the arrival is dropped",
                "max_p_robust": "mark probability at max_th for robust packets (hint < robust_below), in (0, 1]; default 0.1*2^1.58",
                "max_p_average": "mark probability at max_th for average packets and packets without a hint, in (0, 1]; ns-2 default 0.1",
                "max_p_fragile": "mark probability at max_th for fragile packets (hint > fragile_above), in (0, 1]; default 0.1/2^1.58",
                "robust_below": "RTT hint (ms) below which a TCP data packet is robust; default 75, between the 50 and 100 ms clusters",
                "fragile_above": "RTT hint (ms) above which a TCP data packet is fragile; default 150, between the 100 and 200 ms clusters",
                "weight": "EWMA weight w, in (0, 1]",
                "variant": "RED underneath: documented | altq | ns2 (default, the simulator of the AECN and WHITE papers); see docs/red.md",
                "wait": "ns-2 wait_: no early decision until count*pb >= 1 (default: true for ns2, else false; not for altq)",
                "gentle": "ramp pb from max_p to 1 between max_th and 2*max_th; early decisions there drop (ns-2 marks only below max_th)",
                "mean_packet_size": "mean packet size for the idle-time decay (ns-2.1b8 mean_pktsize_: 500 B)",
                "protected_pkts": "no decision on the average while at most this many packets are queued (ns-2 qlen > 1)",
            },
        },
        {
            "kind": "drr",
            "aliases": [],
            "summary": "Deficit Round Robin as ns-2 queue/drr.cc ran it: per-flow (or hashed) bins served round robin with a deficit counter; on overflow drop from the head of the longest bin",
            "source": "Shreedhar & Varghese 1995; ns-2.1b8 queue/drr.cc; Lee 2002 Sec. 2.1.4, Fig. 2.4; docs/white.md; module docs of qdisc/drr.rs",
            "params": defaults::<DrrParams>(std::convert::identity),
            "docs": {
                "quantum": "bytes added to a bin's deficit when its turn starts (ns-2 quantum_ 250B), >= 1B",
                "limit_bytes": "byte limit on the whole buffer (ns-2 blimit_ 25000B); over it, drop from the head of the longest bin until under",
                "limit_pkts": "packet limit on the whole buffer, handled the same way, or \"none\" (ns-2's DRR has none)",
                "buckets": "0 = one bin per flow (SV95, the fairness ideal); n > 0 = bin flow mod n, colliding flows share a FIFO (ns-2 Tcl default 10, hashing the source address)",
                "longest": "bytes (ns-2 getMaxflow on bcount) | packets (the thesis's Fig. 2.4 prose): which bin loses on overflow; ties go to the first from the current bin",
            },
        },
        {
            "kind": "csfq",
            "aliases": [],
            "summary": "Core-Stateless Fair Queueing with the router as edge and core: per-flow rate labels, drop with probability max(0, 1 - alpha/label), fair share alpha from aggregate arrival and accepted rates; FIFO",
            "source": "Stoica, Shenker & Zhang 1998 (eq. 3, Fig. 3, Sec. 2.3.1); Lee 2002 Sec. 2.1.3, Fig. 2.3; docs/white.md; module docs of qdisc/csfq.rs",
            "params": defaults::<CsfqParams>(std::convert::identity),
            "docs": {
                "limit": "FIFO buffer, packets or bytes, finite (default 50 packets: ns-2's default; the thesis's value is lost)",
                "k": "K, averaging constant of the per-flow rate estimate (SSZ98: 100ms)",
                "k_alpha": "K_alpha, averaging constant of the aggregate arrival and accepted rates (SSZ98: 200ms)",
                "k_c": "K_c, time the link must stay congested or uncongested before alpha is updated (200ms = K_alpha, as INET's CSFQ port uses; not checked against SSZ98)",
                "overflow_decrease": "relative cut of alpha on each buffer overflow, in [0, 1) (SSZ98: 1 %); 0 disables",
                "max_decrease": "largest total cut by overflows between two alpha updates, in [0, 1] (SSZ98: 25 %)",
                "uncongested_hold": "an uncongested link stays so while the queue is below this fraction of limit, in [0, 1] (SSZ98: half); 0 disables",
                "alpha_init": "initial alpha as a fraction of the link rate, > 0 (1: no drop before the first update)",
            },
        },
        {
            "kind": "bmre",
            "aliases": [],
            "summary": "BMRE: one FIFO, per-flow state for recently buffered flows (max_nflow slots, expiry 3K after the last buffered packet, random recycling of an empty slot when full), virtual limit vth(N_flow), per-flow drop (q_i/max_th_f)^beta_i with beta adapted to the estimated rate over the fair rate, Fair Drop above fd_th; weighted variant",
            "source": "Cho 2002 (KAIST MS thesis) Ch. 3, eqs. 3.4-3.6, Appendix, Sec. 4.4; docs/bmre.md; module docs of qdisc/bmre.rs",
            "params": defaults::<BmreParams>(BmreParams::filled),
            "docs": {
                "max_q": "physical buffer (Appendix max_q 320000B); literal test q >= max_q before adding the packet",
                "fd_th": "Fair Drop threshold: q >= fd_th drops every packet of a flow with state (140000B), <= max_q",
                "max_targetq": "cap on target_q = min(vmax_q/2, max_targetq) (120000B)",
                "max_nflow": "flow-state slots (320); when full a new flow recycles a random slot holding nothing",
                "alpha": "beta increase factor (1.2), >= 1",
                "weight": "EWMA weight w_q of avg_q (0.004), in (0, 1]",
                "beta_min": "lower clamp of beta (0.5), > 0",
                "beta_max": "upper clamp of beta (10), >= beta_min",
                "beta_init": "beta of a new flow (7.5), in [beta_min, beta_max]",
                "k": "K, time constant of the per-flow rate estimator (150ms)",
                "timeout": "state lifetime after the flow's last buffered packet (default 3K = 450ms)",
                "vth_per_flow_hi": "vth = hi*n up to vth_n1 (no congestion; 8000B)",
                "vth_per_flow_lo": "vth = lo*n above vth_n2 (severe; 4000B), <= vth_per_flow_hi",
                "vth_n1": "end of the no-congestion mode, flows (30); between n1 and n2 vth is the line from hi*n1 to lo*n2 (R1: flat 240000B)",
                "vth_n2": "end of the moderate mode, flows (60), >= vth_n1",
                "count_reset": "on-update (reset count_i in update_beta, default) | never (the Appendix code as printed)",
                "count_departed": "also add departed bytes to count_i before the departure-side beta check (spec A2's alternative, 'processed' bytes); default false: arrivals only, Appendix line 21",
                "limit_check": "literal (q >= limit before the packet, overshoot < 1 packet; default) | strict (q + size > limit)",
                "cap_test": "with-arrival (eq. 3.6 on q_i with the arriving packet, Appendix lines 20/24: 3 packets of 1000B under a 4000B cap; default) | before-arrival (on the q_i the packet finds: 4 packets, Morris's rule)",
                "weighted": "weighted BMRE: weight = class + 1 (class 0-3, the 2 TOS bits); N_flow = sum of weights",
                "expiry": "spec A6: qtime (a slot holding nothing expires timeout after its last buffered packet, the Appendix code; default) | queue_empty (timeout after q_i last reached 0, the text's rule, §3.3(6))",
            },
        },
        {
            "kind": "pi",
            "aliases": [],
            "summary": "PI controller AQM as ns-2 Queue/PI runs it: drop with p updated at sample_rate Hz from the instantaneous queue in packets, p += a(q - q_ref) - b(q_old - q_ref), clamped to [0, 1]",
            "source": "Hollot, Misra, Towsley & Gong 2001; ns-2 queue/pi.cc; Kumar 2003 Secs. 2.5, 5.1; docs/tsq.md",
            "params": defaults::<PiParams>(std::convert::identity),
            "docs": pi_docs(),
        },
        {
            "kind": "tsq",
            "aliases": [],
            "summary": "Traffic Sensitive QoS over PI: packets with delay hint d (1-16) cut in line at weight t_a + d*t_d/16 and are dropped with p' = p*((l+t_d)/(l+q'))^2",
            "source": "Kumar 2003 ch. 4, Eqs. 4.1-4.4, Fig. 4.2, Sec. 5.1; docs/tsq.md",
            "params": defaults::<TsqParams>(std::convert::identity),
            "docs": tsq_docs(),
        },
    ])
}

/// The disciplines in use today beyond the theses' (one `json!` each: a single list this long
/// exceeds the macro's recursion limit).
fn modern_entries() -> Value {
    json!([
        {
            "kind": "codel",
            "aliases": [],
            "summary": "CoDel: drop at dequeue once the sojourn time has stayed above target for an interval, then at interval/sqrt(count) spacing until it falls below",
            "source": "Nichols, Jacobson, McGregor & Iyengar, RFC 8289 sec. 5; ns-3 3.44 codel-queue-disc.cc (variant ns3); docs/codel.md",
            "params": defaults::<CodelParams>(std::convert::identity),
            "docs": codel_docs(),
        },
        {
            "kind": "fq_codel",
            "aliases": ["fq-codel"],
            "summary": "FQ-CoDel: flows hashed into queues served by deficit round robin, new flows first, CoDel on each queue; overflow drops from the head of the fattest queue",
            "source": "Hoeiland-Joergensen et al., RFC 8290 sec. 4; ns-3 3.44 fq-codel-queue-disc.cc; docs/codel.md",
            "params": defaults::<FqCodelParams>(std::convert::identity),
            "docs": fq_codel_docs(),
        },
        {
            "kind": "pie",
            "aliases": [],
            "summary": "PIE: drop arrivals with p updated every t_update from the queue delay, p += alpha(qdelay - target) + beta(qdelay - qdelay_old), scaled down while p is small; burst allowance; docs/pie.md",
            "source": "Pan et al., RFC 8033; ns-3 3.44 pie-queue-disc.cc",
            "params": defaults::<PieParams>(std::convert::identity),
            "docs": pie_docs(),
        },
        {
            "kind": "fq_pie",
            "aliases": ["fq-pie"],
            "summary": "FQ-PIE: flows hashed into queues served by deficit round robin, new flows first, PIE on each queue; overflow drops the arrival (Linux) or from the head of the fattest queue (ns-3); docs/fq_pie.md",
            "source": "Linux net/sched/sch_fq_pie.c (variant rfc8033); ns-3 3.44 fq-pie-queue-disc.cc (variant ns3); RFC 8033, RFC 8290 sec. 4",
            "params": defaults::<FqPieParams>(std::convert::identity),
            "docs": fq_pie_docs(),
        },
        {
            "kind": "blue",
            "aliases": [],
            "summary": "BLUE: drop/mark arrivals with p_m; p_m += d1 on buffer overflow (or queue above threshold), p_m -= d2 when the link is idle, at most once per freeze_time; docs/blue.md",
            "source": "Feng, Shin, Kandlur & Saha, IEEE/ACM ToN 10(4) 2002, sec. III (Fig. 3); linux variant: the per-bin rule of net/sched/sch_sfb.c",
            "params": defaults::<BlueParams>(std::convert::identity),
            "docs": blue_docs(),
        },
        {
            "kind": "sfb",
            "aliases": [],
            "summary": "Stochastic Fair Blue: levels x bins Bloom-filter bins with a BLUE p_m each; an arrival's probability is the least p_m of its bins; flows with p_m = 1 in every bin are rate-limited (penalty box); two hash sets swapped every rehash; docs/blue.md",
            "source": "Feng, Shin, Kandlur & Saha, IEEE/ACM ToN 10(4) 2002, sec. V; Linux net/sched/sch_sfb.c with tc sfb's defaults",
            "params": defaults::<SfbParams>(std::convert::identity),
            "docs": sfb_docs(),
        },
        {
            "kind": "dualpi2",
            "aliases": [],
            "summary": "DualPI2 (DualQ Coupled AQM for L4S): ECT(1)/CE into an L queue, the rest into a C queue, one buffer; a PI controller on the classic delay sets p'; classic drop/mark p_C = p'^2, L4S mark max(native ramp/step on the L sojourn, k p'); overload drops L4S with p_C; docs/dualpi2.md",
            "source": "De Schepper, Briscoe & White, RFC 9332 sec. 2.4, 4.2.3, Appendix A.1-A.2 (variant rfc9332); Linux net/sched/sch_dualpi2.c (variant linux)",
            "params": defaults::<DualPi2Params>(DualPi2Params::filled),
            "docs": dualpi2_docs(),
        },
        {
            "kind": "cake",
            "aliases": [],
            "summary": "CAKE: deficit-mode shaper (bandwidth), Diffserv tins, 8-way set-associative flow queues with per-host fairness (triple-isolate), DRR++ with new/old/decaying lists, COBALT (CoDel with decaying count + BLUE) per queue, overload prunes the fattest queue; docs/cake.md",
            "source": "Hoeiland-Joergensen, Taeht & Morton, Piece of CAKE, IEEE LANMAN 2018; Linux net/sched/sch_cake.c",
            "params": defaults::<CakeParams>(std::convert::identity),
            "docs": cake_docs(),
        },
        {
            "kind": "rem",
            "aliases": [],
            "summary": "REM (Random Exponential Marking) as ns-2 Queue/REM runs it: every update_interval the price p += gamma*(alpha*(b - b*) + x - c), floored at 0 (x: arrivals, b: backlog, c: link capacity, packets per interval); drop arrivals (or mark ECT departures) with 1 - phi^-p; docs/rem.md",
            "source": "Athuraliya, Low, Li & Yin, REM: Active Queue Management, IEEE Network 15(3) 2001; ns-2.35 queue/rem.cc (run_updaterule, enque, deque), ns-default.tcl",
            "params": defaults::<RemParams>(std::convert::identity),
            "docs": rem_docs(),
        },
        {
            "kind": "sfq",
            "aliases": [],
            "summary": "SFQ: flows hashed into divisor buckets mapped to at most `flows` slots, byte-quantum round robin over the active slots; per-slot depth limit; over limit, drop the tail of the longest slot; optional periodic hash perturbation; docs/sfq.md",
            "source": "McKenney, Stochastic Fairness Queueing, IEEE INFOCOM 1990; Linux net/sched/sch_sfq.c (sfq_enqueue, sfq_drop, sfq_dequeue, sfq_rehash) with its defaults",
            "params": defaults::<SfqParams>(std::convert::identity),
            "docs": sfq_docs(),
        },
        {
            "kind": "choke",
            "aliases": [],
            "summary": "CHOKe: RED on the average queue (packets); above min_th each arrival is compared with one randomly drawn queued packet and both are dropped if they share a flow, else RED's early/forced drop; docs/choke.md",
            "source": "Pan, Prabhakar & Psounis, CHOKe, IEEE INFOCOM 2000, sec. 2; Linux net/sched/sch_choke.c (choke_enqueue, choke_peek_random) with tc choke's defaults",
            "params": defaults::<ChokeParams>(std::convert::identity),
            "docs": choke_docs(),
        },
        {
            "kind": "cobalt",
            "aliases": [],
            "summary": "COBALT (CoDel + BLUE) on one FIFO: at dequeue CoDel signals (drop, or CE-mark with ecn) at interval/sqrt(count) spacing while the sojourn exceeds target, its count decaying below target; BLUE drops every packet with p_drop, raised 1/256 on overflow (the arrival is dropped) and lowered 1/4096 when the queue is found empty; docs/cobalt.md",
            "source": "Palmei et al., Design and Evaluation of COBALT Queue Discipline, IEEE LANMAN 2019; ns-3 3.44 src/traffic-control/model/cobalt-queue-disc.cc (variant ns3); Linux net/sched/sch_cake.c cobalt_should_drop, cobalt_queue_full, cobalt_queue_empty (variant linux)",
            "params": defaults::<CobaltQdiscParams>(std::convert::identity),
            "docs": cobalt_docs(),
        },
        {
            "kind": "fq_cobalt",
            "aliases": ["fq-cobalt"],
            "summary": "FQ-COBALT: flows hashed (optionally set-associatively) into queues served by deficit round robin, new flows first, COBALT on each queue; overflow drops from the head of the fattest queue; docs/cobalt.md",
            "source": "ns-3 3.44 src/traffic-control/model/fq-cobalt-queue-disc.cc and cobalt-queue-disc.cc (variant ns3); Linux net/sched/sch_cake.c COBALT and cake_drop (variant linux); RFC 8290 sec. 4",
            "params": defaults::<FqCobaltParams>(std::convert::identity),
            "docs": fq_cobalt_docs(),
        },
    ])
}

/// The keys of `cobalt`.
fn cobalt_docs() -> Value {
    json!({
        "variant": "ns3 (default: ns-3 3.44 CobaltQueueDisc: fresh queue's 1/sqrt(count) = 1, BLUE threshold, 32-bit BLUE timer, CE threshold) | linux (sch_cake.c's law: fresh 1/sqrt(count) = 0, none of ns-3's additions); both in Linux's 0.32 fixed point",
        "target": "largest acceptable standing sojourn time, > 0 and < interval (5ms); also BLUE's hold-off",
        "interval": "CoDel interval, > 0 and <= 4.294967295s (100ms)",
        "limit": "buffer: packets (integer), bytes (\"150KB\") or \"none\" (ns-3 MaxSize: 1500000B); a full buffer drops the arrival and raises BLUE",
        "ecn": "CE-mark ECN-capable packets on CoDel's signal instead of dropping them (ns-3 UseEcn: false; Linux always marks)",
        "p_inc": "BLUE's increment of p_drop on overflow, in (0, 1] (1/256)",
        "p_dec": "BLUE's decrement of p_drop when the queue is found empty, in (0, 1] (1/4096)",
        "blue_threshold": "ns-3 BlueThreshold: a packet that waited longer raises p_drop as an overflow would; auto (400ms for ns3, none for linux) | none | a duration (ns3 only)",
        "ce_threshold": "ns-3 CeThreshold: CE-mark ECN-capable packets that waited longer (needs ecn); auto = none | none | a duration (ns3 only)",
    })
}

/// The keys of `fq_cobalt`.
fn fq_cobalt_docs() -> Value {
    let mut d = cobalt_docs();
    let m = d.as_object_mut().expect("a table");
    for (k, v) in [
        ("variant", "ns3 (default: ns-3 3.44 FqCobaltQueueDisc, each queue ns-3's COBALT, overflow sheds without raising BLUE) | linux (each queue sch_cake.c's law, overflow raises the pruned queue's BLUE as cake_drop does)"),
        ("limit", "packets in the whole discipline, 1..=16777216 (10240); one queue holding limit packets refuses the arrival"),
        ("flows", "flow queues packets are hashed into, 1..=65536 (1024)"),
        ("quantum", "bytes a queue may send per round, 1..=1048576 (1514B; ns-3 uses the device MTU, 1500B)"),
        ("drop_batch", "most packets shed from the fattest queue per overflow, 1..=65536 (64)"),
        ("perturbation", "salt of the flow hash (0)"),
        ("ecn", "CE-mark ECN-capable packets on CoDel's signal instead of dropping them (ns-3 UseEcn: true)"),
        ("set_associative_hash", "ns-3 EnableSetAssociativeHash: a flow takes the first inactive or own-tagged queue of its set of set_ways queues (false)"),
        ("set_ways", "queues per set of the set-associative hash, 1..=65536, must divide flows (8)"),
        ("p_inc", "BLUE's increment of a queue's p_drop when the queue refuses an arrival at limit or (ns3) a packet waited past blue_threshold, and (linux) when the queue is shed on overflow, in (0, 1] (1/256)"),
    ] {
        m.insert(k.into(), v.into());
    }
    d
}

/// The keys of `rem` (ns-2 `Queue/REM` names are aliases).
fn rem_docs() -> Value {
    json!({
        "gamma": "price step size, >= 0 (ns-2 gamma_: 0.001)",
        "phi": "base of the probability 1 - phi^-p, > 1 (ns-2 phi_: 1.001)",
        "input_weight": "weight of the latest interval's arrivals in the input-rate filter, (0, 1] (ns-2 inw_: 1, no filtering)",
        "alpha": "weight of the backlog mismatch b - b*, >= 0 (ns-2 hard-codes 0.1)",
        "target_backlog": "target backlog b*, packets, >= 0 (ns-2 pbo_: 20)",
        "update_interval": "time between price updates, > 0 (ns-2 pupdtime_: 2ms)",
        "mean_packet_size": "bytes per packet for the capacity c = interval*rate/(8*size) and for queue_in_bytes (ns-2 mean_pktsize_: 1000B)",
        "limit": "buffer, packets, >= 2; as ns-2, the arrival is dropped when the length with it reaches limit, so at most limit - 1 wait (ns-2 Queue limit_: 50)",
        "ecn": "false (default): drop arrivals with the probability; true: mark ECN-capable departures instead, non-ECT ones pass (ns-2 markpkts_)",
        "queue_in_bytes": "measure backlog, arrivals and limit in bytes / mean_packet_size and scale the probability by size/mean_packet_size (ns-2 qib_: false)",
    })
}

/// The keys of `cake`.
fn cake_docs() -> Value {
    json!({
        "bandwidth": "shaper rate such as \"5Mbps\", or \"unlimited\" (default: the link paces); sch_cake's deficit-mode shaper, no burst",
        "rtt": "COBALT interval, > 0 (100ms); per tin: max(rtt + tin target - target, 2 tin target)",
        "target": "COBALT target, > 0 (5ms); per tin: max(1.5 MTU times at the tin rate, target)",
        "isolation": "flowblind | srchost | dsthost | hosts | flows | dual-srchost | dual-dsthost | triple-isolate (default): what a queue is, and whether hosts share fairly (flow keys sender_host/receiver_host)",
        "diffserv": "besteffort | diffserv3 (default, as Linux) | diffserv4: tins and the DSCP -> tin table (flow key dscp)",
        "memlimit": "bytes held before the fattest queue is pruned: \"auto\" (default: max(4MiB, 4 rate x rtt) shaped, 10240 MTU unlimited, capped at 10240 MTU) or a size",
        "mtu": "device MTU with link header, 64B..=65535B (1514B): MTU time and the memlimit cap",
        "overhead": "bytes added to each packet for the shaper and deficits, -64..=256 (0)",
        "mpu": "minimum charged packet size, 0B..=256B (0B)",
        "set_ways": "associativity of the flow and host tables, a power of two 1..=1024 (8; 1 = direct-mapped)",
        "perturbation": "salt of the flow and host hashes (0)",
    })
}

/// The keys of `sfq`.
fn sfq_docs() -> Value {
    json!({
        "limit": "packets the whole queue holds, >= 1 (127); Linux clamps it to depth x flows",
        "divisor": "hash buckets, a power of two 1..=65536 (1024)",
        "flows": "slots active at once, 1..=65408 (128); clamped to divisor and to limit; an arrival finding none free is dropped",
        "depth": "packets one slot holds, 1..=127 (127)",
        "quantum": "bytes a slot sends per turn, counted in 8-byte units rounded up (1514B, Linux's Ethernet MTU + header)",
        "perturb": "time between hash perturbations, queued packets re-filed; 0 = never (0, Linux's default)",
        "headdrop": "drop from the head of the slot instead of its tail (false)",
    })
}

/// The keys of `choke`.
fn choke_docs() -> Value {
    json!({
        "limit": "packets the queue holds, 1..=131071 (1000)",
        "min_th": "average queue in packets above which arrivals are compared with a random queued packet and RED may drop (83 = tc's max/3)",
        "max_th": "average queue above which unmatched arrivals are dropped (250 = tc's limit/4)",
        "max_p": "RED drop probability at max_th, in (0, 1] (0.02, tc's probability)",
        "weight": "EWMA weight of the average, in (0, 1] (0.002; tc derives Wlog from burst)",
        "mean_packet_size": "bytes per missed sample in the idle decay (1000B, tc's avpkt)",
        "victim": "linux (default: uniform over the ring with holes, three tries, then the head) | uniform (the paper: uniform over queued packets)",
        "ecn": "CE-mark ECN-capable arrivals RED would drop; matched pairs are always dropped (false)",
        "harddrop": "with ecn, drop rather than mark above max_th (false)",
    })
}

/// The keys of `dualpi2`.
fn dualpi2_docs() -> Value {
    json!({
        "variant": "rfc9332 (default: RFC 9332 Appendix A: time-shifted FIFO, PI on the classic head delay, ramp L4S AQM, recur() decisions) | linux (sch_dualpi2.c: WRR credit scheduler, PI on the larger head delay, 1 ms step, random draws, 2-MTU safeguard)",
        "limit": "buffer shared by both queues: \"auto\" (default; rfc9332: 250 ms at the bottleneck rate in bytes, RFC Figure 2; linux: 10000 packets), packets (integer), bytes (\"150KB\") or \"none\"",
        "target": "classic queue delay target, > 0 (15ms)",
        "rtt_max": "worst-case RTT the rfc9332 default gains are derived from, > 0 (100ms)",
        "tupdate": "PI update period, > 0 (rfc9332: min(target, rtt_max/3) = 15ms; linux: 16ms)",
        "alpha": "PI integral gain, Hz, >= 0 (rfc9332: 0.1 tupdate/rtt_max^2 = 0.15; linux: 41/256 = 0.16)",
        "beta": "PI proportional gain, Hz, >= 0 (rfc9332: 0.3/rtt_max = 3; linux: 819/256 = 3.2)",
        "k": "coupling factor: p_CL = k p', in (0, 256] (2)",
        "l4s_min_th": "L queue sojourn where native marking starts (rfc9332 minTh 800us; linux step_thresh 1ms)",
        "l4s_range": "width of the native ramp to certain marking; 0 is a step (rfc9332 400us; linux 0)",
        "l4s_min_packets": "native marking only while the L queue holds more than this many packets, the dequeued one included (rfc9332 Th_len 1; linux 0)",
        "draws": "recur (rfc9332 default: the RFC's deterministic accumulator per queue) | random (linux default: a uniform per decision)",
        "tshift": "rfc9332 scheduler: the classic head's wait is reduced by this before the two heads are compared (2 x target = 30ms)",
        "c_protection": "linux scheduler: classic WRR weight, percent, 0..=100 (10)",
        "ecn": "mark ECT(0) classic packets with p_C instead of dropping them while p_C < 1/k^2 (true)",
        "drop_on_overload": "once k p' saturates, drop L4S packets with p_C as classic ones (RFC 9332 sec. 4.2.3; true); false: never drop L4S, the buffer limit acts",
    })
}

/// The keys of `blue`.
fn blue_docs() -> Value {
    json!({
        "variant": "paper (default: Fig. 3, event-driven with freeze_time) | linux (sch_sfb.c's per-bin rule on the whole queue: every arrival, +d1 at or above threshold, -d2 when empty, no freeze; p > 1/2 drops even ECN packets)",
        "limit": "buffer: packets (integer), bytes (\"150KB\") or \"none\" (1000 packets); a full buffer drops the arrival",
        "trigger": "overflow (default: p_m rises on buffer overflow only) | threshold (also when an arrival finds more than threshold packets queued)",
        "threshold": "queue length L in packets for trigger = threshold and the linux variant, 1..limit (default half the packet limit)",
        "d1": "increment of p_m per congestion event, in [0, 1] (0.0025)",
        "d2": "decrement of p_m per link-idle event, in [0, 1] (0.00025)",
        "freeze_time": "least time between two changes of p_m (100ms; ignored by the linux variant)",
        "ecn": "CE-mark ECN-capable packets instead of dropping them (false)",
    })
}

/// The keys of `sfb`.
fn sfb_docs() -> Value {
    json!({
        "variant": "linux (default: sch_sfb.c; p_min > 1/2 drops even ECN packets, only penalised flows warm the next bin set) | paper (sec. V: an arrival finding any of its bins above target is dropped, every flow warms the next bin set, ECN packets always marked)",
        "limit": "packets the queue holds, 1..=16777216 (1000, Linux's tx_queue_len)",
        "levels": "hash levels L, 1..=32 (8)",
        "bins": "bins per level N, 1..=4096 (16)",
        "target": "bin occupancy in packets at or above which the bin's p_m rises (20)",
        "max": "an arrival whose least-filled bin holds this many packets is dropped (25; the paper variant also drops when any bin is above target)",
        "increment": "increment of a bin's p_m, in [0, 1] (0.0005, tc's default)",
        "decrement": "decrement of a bin's p_m when the bin is empty, in [0, 1] (0.00005, tc's default)",
        "freeze_time": "least time between two changes of one bin's p_m; 0 = every arrival, as Linux (0)",
        "rehash": "time between hash-seed changes; 0 = never (600s)",
        "db": "double-buffering warm-up before each change, shorter than rehash (60s)",
        "penalty": "rate_limit (default: flows with p_m = 1 in every bin share a token bucket) | drop (they are dropped)",
        "penalty_rate": "packets per second the penalty box admits, >= 0 (10)",
        "penalty_burst": "depth of the penalty token bucket, packets (20)",
        "ecn": "CE-mark ECN-capable packets instead of dropping them (false; Linux always marks)",
    })
}

/// The CoDel keys (most shared by `codel` and `fq_codel`).
fn codel_docs() -> Value {
    json!({
        "target": "acceptable standing queue delay (RFC 8289: 5ms), positive and below interval",
        "interval": "how long the delay must stay above target before dropping starts (100ms)",
        "limit": "buffer: packets (integer) or bytes (\"150KB\"); a full buffer drops the arrival (1000 packets)",
        "min_bytes": "no CoDel drop while fewer bytes wait: a size, or auto (the largest packet seen for rfc8289, 1500B for ns3)",
        "ecn": "mark ECN-capable packets CE instead of dropping them",
        "variant": "rfc8289 (exact interval/sqrt(count)) | ns3 (ns-3 3.44 / Linux: fixed-point Newton step, bytes < min_bytes, strict interval test)",
    })
}

/// The keys of `fq_codel`.
fn fq_codel_docs() -> Value {
    let mut d = codel_docs();
    let m = d.as_object_mut().expect("a table");
    for (k, v) in [
        ("limit", "packets in the whole discipline before overflow drops from the fattest queue (10240), >= 1"),
        ("flows", "flow queues packets are hashed into (1024), 1..=65536"),
        ("quantum", "bytes a queue may send per round (1514B; ns-3 uses the device MTU, 1500B)"),
        ("drop_batch", "most packets shed from the fattest queue per overflow (64)"),
        ("perturbation", "salt of the flow hash (0): other values map flows to queues differently"),
        ("ecn", "mark ECN-capable packets instead of dropping them (RFC 8290: on)"),
    ] {
        m.insert(k.into(), v.into());
    }
    d
}

/// RED's defaults as listed: `filled`, plus the ns2 variant's `mark_p` (the default variant has none).
fn red_listed(p: RedParams) -> RedParams {
    let mut p = p.filled();
    p.mark_p.get_or_insert(super::red::NS2_MARK_P);
    p
}

/// The keys of `red` (Adaptive RED's included).
fn red_docs() -> Value {
    json!({
        "limit": "hard limit, packets or bytes",
        "min_th": "minimum threshold on the average queue (packets; adaptive: max(5, target_delay*C/2) unless set)",
        "max_th": "maximum threshold (packets; adaptive: 3*min_th unless set)",
        "max_p": "early-drop probability at max_th, in (0, 1] (adaptive: its initial value)",
        "weight": "EWMA weight w, in (0, 1] (adaptive: 1 - exp(-1/C) unless set)",
        "variant": "documented (Parris Figs. 3.7-3.10) | altq (ALTQ altq_red.c) | ns2 (ns-2 red.cc / ns-3 RedQueueDisc); see docs/red.md",
        "wait": "ns-2 wait_: no early drop until count*pb >= 1 (default: true for ns2, else false; not for altq)",
        "ecn_forced_mark": "with ecn, also mark instead of drop in the forced region",
        "ecn_gentle_mark": "with ecn and gentle, mark instead of drop in the gentle region (default: true; under ns2, mark_p decides)",
        "mark_p": "ns2 only (ns-2 mark_p_, use_mark_p_ true): with ecn, an early decision marks an ECN-capable packet only while the base probability pb is below it, else drops it (0.1, ns-default.tcl; red.cc drop_early); not a key of the other variants",
        "protected_pkts": "no drop on the average while at most this many packets are queued (Fig. 3.8: q_len > 1)",
        "gentle": "ramp the probability from max_p to 1 between max_th and 2*max_th (default: false; true with adaptive)",
        "byte_mode": "queue in bytes / mean_packet_size; probability scaled by packet size",
        "nonlinear": "Nonlinear RED (Zhou, Ye & Wu 2006; ns-3 NLRED): below max_th the probability is 1.5*max_p*x^2, x = (avg - min_th)/(max_th - min_th)",
        "ecn": "mark ECN-capable packets instead of early-dropping them",
        "mean_packet_size": "mean packet size for idle-time decay and byte mode",
        "adaptive": "Adaptive RED (Floyd, Gummadi & Shenker 2001; ns-3 ARED, tc red adaptive): adapt max_p every interval towards the band [min_th + 0.4(max_th - min_th), min_th + 0.6(max_th - min_th)]; min_th, max_th, weight and gentle left unset become automatic (docs/ared.md)",
        "adaptive_variant": "ns3 (default: ns-3 3.44 UpdateMaxP at arrivals once interval has passed since the last change) | linux (red_adaptative_algo from a 500 ms timer, Q0.32 max_P within 1 % and 50 %) | feng (ns-3 FengAdaptive: divide / multiply on leaving the thresholds)",
        "interval": "time between adaptations, > 0 (500ms; ns3 only)",
        "alpha": "largest additive increase of max_p, alpha' = min(alpha, max_p/4), in (0, 1] (0.01; ns3 only)",
        "beta": "multiplicative decrease of max_p, in (0, 1) (0.9; ns3 only)",
        "top": "max_p is raised only while below this, in (0, 1] (0.5; ns3 only)",
        "bottom": "max_p is lowered only while above this: a probability or \"auto\" (default: ns-3's Bottom = 0 rule min(0.01, 8*mean_packet_size*rtt/link_rate), i.e. rtt/C; ns3 only)",
        "rtt": "round-trip time for the automatic bottom, > 0 (100ms, ns-3's Rtt; ns3 only)",
        "target_delay": "target queueing delay of the automatic min_th = max(5, target_delay*C/2), > 0 (5ms, ns-3's TargetDelay)",
        "feng_alpha": "feng: max_p divided by this on going below min_th, > 1 (3)",
        "feng_beta": "feng: max_p multiplied by this on going above max_th, > 1 (2)",
    })
}

/// The keys of `pie`.
fn pie_docs() -> Value {
    json!({
        "variant": "rfc8033 (default: RFC 8033 burst allowance, byte-based two-packet safeguard) | ns3 (ns-3 3.44 PieQueueDisc: burst state machine, p held at 0 during the allowance)",
        "limit": "buffer: packets (integer), bytes (\"150KB\") or \"none\" (default 1000 packets, as Linux; ns-3 25p)",
        "target": "target queue delay QDELAY_REF, > 0 (15ms)",
        "t_update": "period of the drop-probability update T_UPDATE, > 0 (15ms)",
        "max_burst": "burst allowance MAX_BURST: no early drops this long after congestion starts (150ms)",
        "alpha": "weight of (qdelay - target), per second, >= 0 (0.125)",
        "beta": "weight of (qdelay - qdelay_old), per second, >= 0 (1.25)",
        "delay_estimator": "timestamp (default; sojourn of the last dequeued packet, ns-3 default) | dq_rate (queued bytes / measured departure rate)",
        "dq_threshold": "bytes per departure-rate measurement cycle, >= 1 (16384B)",
        "mean_pkt_size": "packet size of the two-packet safeguard and of ns3's byte-mode scaling, >= 1 (1000B)",
        "cap_drop_adjustment": "cap each increase of p at 0.02 once p >= 0.1 (RFC 8033 sec. 5.5; true)",
        "ecn": "CE-mark ECN-capable packets instead of early-dropping them while p <= mark_ecn_threshold",
        "mark_ecn_threshold": "highest p at which ecn marks, in [0, 1] (0.1)",
        "derandomize": "derandomized drops from the accumulated probability (RFC 8033 sec. 5.3; false)",
    })
}

/// The keys of `fq_pie`.
fn fq_pie_docs() -> Value {
    let mut d = pie_docs();
    let m = d.as_object_mut().expect("a table");
    m.remove("mark_ecn_threshold");
    for (k, v) in [
        ("variant", "rfc8033 (default: Linux sch_fq_pie; RFC 8033 PIE per queue, one update grid, overflow drops the arrival) | ns3 (ns-3 3.44 FqPieQueueDisc: ns-3 PIE per queue, updates from each queue's creation, overflow sheds the fattest queue)"),
        ("limit", "packets in the whole discipline, 1..=16777216 (10240, Linux and ns-3)"),
        ("flows", "flow queues packets are hashed into, 1..=65536 (1024)"),
        ("quantum", "bytes a queue may send per round, 1..=1048576 (1514B; ns-3 uses the device MTU, 1500B)"),
        ("perturbation", "salt of the flow hash (0): other values map flows to queues differently"),
        ("overflow", "auto (default: tail for rfc8033, fattest for ns3) | tail (drop the arrival, Linux) | fattest (enqueue, then drop from the head of the queue with most bytes, ns-3)"),
        ("drop_batch", "most packets shed from the fattest queue per overflow, 1..=65536 (64; overflow = fattest only)"),
        ("target", "target queue delay of each queue, > 0 (15ms)"),
        ("t_update", "period of each queue's drop-probability update, > 0 (15ms)"),
        ("dq_threshold", "bytes per departure-rate measurement cycle, 1..=1073741824 (16384B)"),
        ("mean_pkt_size", "packet size of the rfc8033 two-packet safeguard and of bytemode, 1..=1048576 (1000B)"),
        ("ecn", "CE-mark ECN-capable packets instead of early-dropping them while p <= ecn_prob (ns3: p < ecn_prob); false"),
        ("ecn_prob", "highest p at which ecn marks, in [0, 1] (0.1: Linux ecn_prob 10 %)"),
        ("bytemode", "scale each arrival's p by size / mean_pkt_size (Linux bytemode; false)"),
    ] {
        m.insert(k.into(), v.into());
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_cite_only_files_in_the_repository() {
        // `aqmlab qdiscs` cited specs/*.md 18 times; no such folder is in the repository.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut cited = 0;
        for entry in catalog().as_array().unwrap() {
            let source = entry["source"].as_str().unwrap();
            assert!(!source.contains("specs/"), "{}: {source}", entry["kind"]);
            for word in source.split([' ', ';', ',', '(', ')']).filter(|w| w.starts_with("docs/")) {
                assert!(root.join(word).is_file(), "{}: {word} does not exist", entry["kind"]);
                cited += 1;
            }
        }
        assert!(cited >= 18, "{cited}");
    }

    #[test]
    fn every_accepted_key_is_a_listed_parameter_or_alias() {
        for entry in catalog().as_array().unwrap() {
            let (params, aliases) = (entry["params"].as_object().unwrap(), entry["key_aliases"].as_object().unwrap());
            for key in entry["keys"].as_array().unwrap() {
                let key = key.as_str().unwrap();
                assert!(params.contains_key(key) || aliases.contains_key(key), "{}: {key} is not listed", entry["kind"]);
            }
        }
    }

    #[test]
    fn red_lists_wait_and_the_linux_and_ns2_spellings() {
        let red = catalog().as_array().unwrap().iter().find(|e| e["kind"] == "red").unwrap().clone();
        assert_eq!(red["params"]["wait"], false);
        assert_eq!(red["key_aliases"]["thresh_"], "min_th");
        assert_eq!(red["key_aliases"]["avpkt"], "mean_packet_size");
        let fred = catalog().as_array().unwrap().iter().find(|e| e["kind"] == "fred").unwrap().clone();
        assert_eq!(fred["params"]["above_max_th"], "flow-cap");
    }
}

/// The keys of `chardonnay` and `chablis` (the same discipline with different α, β and ECN).
fn white_docs() -> Value {
    json!({
        "alpha": "exponent of (R_formula/hint) for robust packets (hint < R_formula), 0-10",
        "beta": "exponent for fragile packets (hint > R_formula), 0-10",
        "ecn": "mark ECN-capable packets instead of dropping them early",
        "ecn_gentle_mark": "with ecn and gentle, mark in the gentle region too (default: false for ns2, as red.cc)",
        "combine": "where the factor enters RED: scale_pb_before_count (max_p per packet) | scale_pa_after_count | literal_no_count",
        "scale_in_gentle": "also scale the gentle ramp (ns-2 computes it without max_p)",
        "max_factor": "upper bound on the RTT factor (R_formula/hint)^alpha, at least 1 (default: none; the thesis clamps only p at 1)",
        "rtt_weight": "EWMA weight of R_average per packet (0.1)",
        "band": "half-width of R_formula's hysteresis band (12.5 ms)",
        "hold": "time R_average must stay outside the band before R_formula moves (100 ms)",
        "limit": "hard buffer limit (ns-2 limit_ 50 packets)",
        "min_th": "RED minimum threshold, packets",
        "max_th": "RED maximum threshold, packets",
        "max_p": "RED max_p, in (0, 1]",
        "weight": "RED averaging weight, in (0, 1]",
        "variant": "RED underneath: ns2 (default, the code WHITE patched) | documented | altq",
        "wait": "ns-2 wait_",
        "gentle": "gentle RED (ns-2.1b8 default true)",
        "mean_packet_size": "RED idle-decay packet size (ns-2 mean_pktsize_ 500 B)",
    })
}

/// The PI keys (shared by `pi` and `tsq`).
fn pi_docs() -> Value {
    json!({
        "a": "coefficient of (q - q_ref), per packet, >= 0 (Kumar 2003 / ns-2: 1.822e-5); `aqmlab pi-design` computes it for a link",
        "b": "coefficient of (q_old - q_ref), per packet, >= 0 (1.816e-5)",
        "sample_rate": "controller updates per second, Hz, in (0, 1e6] (ns-2 w_: 170)",
        "q_ref": "target queue, packets, in [0, limit) (thesis 200; ns-2 default 50)",
        "limit": "buffer, packets, >= 1 (thesis q_max 800); a full buffer drops the arrival",
    })
}

/// The keys of `tsq`.
fn tsq_docs() -> Value {
    let mut d = pi_docs();
    let m = d.as_object_mut().expect("a table");
    for (k, v) in [
        ("enabled", "true: cut-in-line and the p' penalty; false: PI alone (identical to kind = \"pi\")"),
        ("latency", "the constant l of Eq. 4.4 (40 ms in the thesis)"),
        ("penalty_position", "actual (default: q' = delay of the bytes really ahead) | target (q' = d*t_d/16)"),
        ("overflow", "drop-arrival (default) | drop-last (ns-2 Queue/PI: insert, then drop the largest-weight packet)"),
        ("default_hint", "hint for packets that carry none, 1-16 (16 = tail, no penalty)"),
        ("limit", "buffer, packets, >= 1 (thesis q_max 800); see overflow"),
    ] {
        m.insert(k.into(), v.into());
    }
    d
}
