//! Class-Based Queueing with link sharing (Floyd & Jacobson 1995), the dissertation's "gold
//! standard" (Parris 2001 Figs. 3.17–3.20; spec `seed000-cbt-algorithms.md` §2.6, settings
//! `seed000-cbt-evaluation.md` §4.6, expected behaviour §5.2 and §5.15).
//!
//! The dissertation ran ALTQ's CBQ and gives only conceptual pseudocode, so the internals here are
//! the spec's "implementable resolution" (§2.6), made precise:
//!
//! * **Classes.** Each arrival is classified with the CBT classifier
//!   ([`super::cbt_classifier`], same keys `match` and `tags`, first match wins, coverage checked)
//!   into one of N classes. Each class has its **own drop-tail FIFO** of `qlimit` packets
//!   (Fig. 3.18: `if Q[cl].qlen < qlimit: enqueue else drop`) and a rate `r_c = share_c · C`,
//!   where C is the bottleneck's rate.
//! * **Tree.** Two levels under the link: a class either hangs off the root directly or belongs to
//!   a **group** (`parent`). A group's rate is `r_g = share_g · C` (by default the sum of its
//!   members' shares). The dissertation's hierarchy (L2616) is the default: {tcp, multimedia} in
//!   group `tcp-mm`, *other* directly under the root.
//! * **Clocks (virtual clock).** Each class and each group keeps `next` (the time at which it has
//!   received exactly its rate since it last became backlogged). When a packet arrives to an empty
//!   class, `next_c = max(next_c, now)` (same for a group that had nothing queued); when a packet of
//!   `s` bytes leaves class c, `next_c += s / r_c` and, for its group, `next_g += s / r_g`. This is
//!   the spec's `next_c = max(next_c, now) + s/r_c` with the `max` taken when the class becomes
//!   backlogged rather than at every departure: a continuously backlogged class that had to wait
//!   for the link keeps its credit, so its long-run rate is exactly `r_c` instead of `r_c` minus the
//!   waiting (tested: ±2 %). A class (group) is **under limit** when `next ≤ now`.
//! * **Borrowing debt is bounded.** Service beyond the rate pushes `next` ahead of real time. Whenever
//!   a class becomes backlogged (a new contender), every class and group clock is capped at
//!   `now + max_lead`. Without the cap a class that had the link to itself for a minute would be
//!   starved for a minute when a competitor returns (the virtual-clock "punishment" problem); ALTQ
//!   bounds the same debt with `minidle`. The cap is applied only when the set of contenders grows,
//!   so while it is stable the clocks are exact and excess shared at one level is split in
//!   proportion to the rates (tested); a class that empties and refills after every packet (a
//!   light CBR flow) re-applies the cap often, which can only shorten other classes' debts.
//!
//! # Scheduling and borrowing rule (`dequeue` at time `now`)
//!
//! Among the classes with packets queued, serve the one with the **smallest `next_c`** in the first
//! non-empty level:
//!
//! 1. **L0, within its rate:** `next_c ≤ now`.
//! 2. **L1, borrowing from its group** (siblings' unused allocation): the class has a parent group
//!    and the group is under limit, `next_g ≤ now`.
//! 3. **L2, borrowing from the root:** the class may borrow (`borrow = true`, and its group's
//!    `borrow = true`).
//! 4. **L3, the link would otherwise idle:** any class (`borrow = false` classes too).
//!
//! Relation to Floyd–Jacobson's formal link-sharing guidelines: a class may be served while
//! under limit, or while over limit if an ancestor is under limit (L1 is "ancestor = its group";
//! L2 is "ancestor = the root", which has capacity exactly when the link is free and nobody at L0 or
//! L1 wants it); excess goes first to the closest ancestor's children, i.e. **siblings inside a
//! group borrow each other's excess before anything leaves the group**. A class with `borrow =
//! false` is not allowed to borrow from the root while any borrowing class has packets: it gets
//! only "what remains" (§4.6: "TCP and MM borrow each other's excess first, *other* may borrow
//! only what remains"), which holds *other* at its allocation whenever TCP or multimedia are
//! backlogged (§5.2: "≈147–150 KB/s, almost exactly"), and lets it use a link that would
//! otherwise be idle.
//!
//! The discipline is therefore **work-conserving** (spec §2.6: "It is work-conserving: empty classes
//! are skipped"): it never returns `None` while packets are queued, so the simulator needs no
//! retry timer. ALTQ's non-work-conserving "bounded" classes (held at the rate even on an idle link)
//! are **not** modelled: the spec's expected behaviour is met without them, because in the blast
//! period TCP keeps its class backlogged, so nothing "remains" for *other* beyond its rate.
//!
//! # Parameters (`[queue]` with `kind = "cbq"`)
//!
//! | key | unit | default | meaning |
//! |---|---|---|---|
//! | `qlimit` | packets | 50 | per-class drop-tail limit (ALTQ/pf default; the dissertation gives none) |
//! | `max_lead` | duration | `"20ms"` | cap on how far a borrowing class's clock may run ahead of real time |
//! | `classes` | list of tables | tcp / multimedia / other, Table 5.4 HTTP-Proshare | classes in classifier order |
//! | `groups` | list of tables | one group per distinct `parent`, with defaults | the interior classes |
//!
//! Per class: `name` (required, unique), `match` (`tcp` \| `tcp-data` \| `tcp-ack` \| `udp` \| `any`,
//! default `any`), `tags` (class tags, absent = all), `share` (fraction of the link in (0, 1],
//! required), `parent` (a group name; absent = directly under the root), `borrow` (bool, default
//! true: may borrow from the root at L2), `qlimit` (packets, default the global `qlimit`).
//!
//! Per group: `name` (required, unique), `share` (in (0, 1], default = sum of its members' shares;
//! must be at least that sum), `borrow` (default true: its members may borrow from the root).
//!
//! Shares of the top level (groups plus classes without parent) must sum to at most 1.
//!
//! Default (Table 5.4, HTTP-Proshare row: MM 13 %, other 12 %, TCP 75 %):
//! ```toml
//! [queue]
//! kind = "cbq"
//! qlimit = 50
//! max_lead = "20ms"
//!
//! [[queue.classes]]
//! name = "tcp"
//! match = "tcp"
//! share = 0.75
//! parent = "tcp-mm"
//!
//! [[queue.classes]]
//! name = "multimedia"
//! match = "udp"
//! tags = [1]                   # the multimedia [[flows]] groups say class = 1
//! share = 0.13
//! parent = "tcp-mm"
//!
//! [[queue.classes]]
//! name = "other"
//! share = 0.12                 # 12 % of 10 Mb/s = 146.5 KiB/s ("147 KB/s")
//! borrow = false               # only what TCP and multimedia leave
//!
//! [[queue.groups]]
//! name = "tcp-mm"              # share = 0.88, the sum of its members
//! ```
//!
//! # Documented choices
//!
//! 1. **C** is the bottleneck rate (10 Mb/s in the lab); 12 % of it is 150,000 B/s = 146.5 KiB/s, the
//!    dissertation's "147 KB/s" (errata #15: 1225 vs 1250). Shares are fractions, so integer percent
//!    is written 0.12.
//! 2. **qlimit** 50 packets per class (spec §2.6 note: pf/ALTQ default), overridable per class.
//!    Overflow drops are [`DropKind::Overflow`]; CBQ has no early or forced drops.
//! 3. **Ties** (equal `next`) go to the class listed first.
//! 4. **`peek`** returns `None`: the choice depends on the time of the dequeue.
//! 5. **`class_stats().average`** is the class's clock lead over real time at the last event, in
//!    milliseconds (negative = credit); CBQ keeps no average queue.
//! 6. **Not modelled**: ALTQ's estimator (`avgidle` EWMA, `maxidle`, `offtime`, `minburst`,
//!    `maxburst`), priorities and weighted round robin, delay-bounded "bounded" classes, admission
//!    control. The virtual clocks play the estimator's role (both measure a class's service
//!    against its rate); `max_lead` plays `minidle`'s.

use serde::{Deserialize, Serialize};

use super::cbt_classifier::{Classifier, Protocol, Rule};
use super::fifo::Fifo;
use super::{ClassStats, DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::{Duration, Limit};

/// One leaf class of `kind = "cbq"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbqClassParams {
    /// Unique class name.
    pub name: String,
    /// Packet kinds the class accepts.
    #[serde(rename = "match", default)]
    pub protocol: Protocol,
    /// `class` tags the class accepts; `None` = every tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<u8>>,
    /// Fraction of the link, in (0, 1].
    pub share: f64,
    /// The group the class belongs to; `None` = directly under the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// May borrow from the root (L2).
    #[serde(default = "yes")]
    pub borrow: bool,
    /// Per-class queue limit, packets; `None` = the global `qlimit`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::scenario::units::opt_int_in::<_, _, 1, 4294967295>")]
    pub qlimit: Option<u32>,
}

/// One group (interior class) of `kind = "cbq"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbqGroupParams {
    /// Unique group name, referenced by the classes' `parent`.
    pub name: String,
    /// Fraction of the link; `None` = the sum of the members' shares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Members may borrow from the root.
    #[serde(default = "yes")]
    pub borrow: bool,
}

/// Scenario keys of `kind = "cbq"`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbqParams {
    /// Default per-class queue limit, packets.
    #[serde(default = "default_qlimit", deserialize_with = "crate::scenario::units::int_in::<_, _, 1, 4294967295>")]
    pub qlimit: u32,
    /// Cap on a clock's lead over real time after borrowing.
    #[serde(default = "default_max_lead")]
    pub max_lead: Duration,
    /// Leaf classes in classifier order.
    #[serde(default = "default_classes")]
    pub classes: Vec<CbqClassParams>,
    /// Groups; `None` = one per distinct `parent`, with defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<CbqGroupParams>>,
}

fn yes() -> bool {
    true
}
fn default_qlimit() -> u32 {
    50
}
fn default_max_lead() -> Duration {
    Duration(Dur::from_millis(20))
}

fn class(name: &str, protocol: Protocol, tags: Option<Vec<u8>>, share: f64, parent: Option<&str>, borrow: bool) -> CbqClassParams {
    CbqClassParams { name: name.into(), protocol, tags, share, parent: parent.map(Into::into), borrow, qlimit: None }
}

/// Table 5.4, HTTP-Proshare row (the row CBT's defaults use too), with the L2616 hierarchy.
fn default_classes() -> Vec<CbqClassParams> {
    vec![
        class("tcp", Protocol::Tcp, None, 0.75, Some("tcp-mm"), true),
        class("multimedia", Protocol::Udp, Some(vec![1]), 0.13, Some("tcp-mm"), true),
        class("other", Protocol::Any, None, 0.12, None, false),
    ]
}

impl Default for CbqParams {
    fn default() -> Self {
        CbqParams { qlimit: default_qlimit(), max_lead: default_max_lead(), classes: default_classes(), groups: None }
    }
}

impl CbqParams {
    /// The parameters with implied values written out (the derived groups), for the echo.
    pub fn filled(mut self) -> CbqParams {
        if self.groups.is_none() {
            let mut groups: Vec<CbqGroupParams> = Vec::new();
            for c in &self.classes {
                if let Some(p) = &c.parent {
                    if !groups.iter().any(|g| &g.name == p) {
                        groups.push(CbqGroupParams { name: p.clone(), share: None, borrow: true });
                    }
                }
            }
            self.groups = Some(groups);
        }
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Cbq> {
        let filled = self.clone().filled();
        let groups_p = filled.groups.as_deref().unwrap_or(&[]);
        let classes_path = format!("{path}.classes");
        let groups_path = format!("{path}.groups");
        if filled.classes.is_empty() {
            return Err(ConfigError::new(&classes_path, "at least one class is required"));
        }
        if filled.qlimit == 0 {
            return Err(ConfigError::new(format!("{path}.qlimit"), "must be at least 1 packet, got 0"));
        }
        if !(link_rate_bps.is_finite() && link_rate_bps > 0.0) {
            return Err(ConfigError::new(path, "needs a link with a positive rate"));
        }
        let bytes_per_ns = link_rate_bps / 8.0e9;
        let share_ok = |s: f64| s > 0.0 && s <= 1.0;
        const EPS: f64 = 1e-9;

        // Groups.
        let mut groups = Vec::with_capacity(groups_p.len());
        for (j, g) in groups_p.iter().enumerate() {
            let gpath = format!("{groups_path}[{j}]");
            if g.name.trim().is_empty() {
                return Err(ConfigError::new(format!("{gpath}.name"), "must not be empty"));
            }
            if let Some(k) = groups_p[..j].iter().position(|o| o.name == g.name) {
                return Err(ConfigError::new(
                    format!("{gpath}.name"),
                    format!("\"{}\" is already the name of {groups_path}[{k}]; names must be unique", g.name),
                ));
            }
            let members: Vec<&CbqClassParams> = filled.classes.iter().filter(|c| c.parent.as_deref() == Some(g.name.as_str())).collect();
            let sum: f64 = members.iter().map(|c| c.share).sum();
            let share = match g.share {
                Some(s) if !share_ok(s) => return Err(ConfigError::new(format!("{gpath}.share"), format!("must be in (0, 1], got {s}"))),
                Some(s) if s + EPS < sum => {
                    return Err(ConfigError::new(
                        format!("{gpath}.share"),
                        format!("must be at least the sum of its classes' shares ({sum}), got {s}"),
                    ))
                }
                Some(s) => s,
                None => sum,
            };
            groups.push(Group { name: g.name.clone(), rate: share * bytes_per_ns, share, borrow: g.borrow, next: 0.0, queued: 0 });
        }

        // Classes.
        let mut classes = Vec::with_capacity(filled.classes.len());
        for (i, c) in filled.classes.iter().enumerate() {
            let cpath = format!("{classes_path}[{i}]");
            let key = |k: &str| format!("{cpath}.{k}");
            if c.name.trim().is_empty() {
                return Err(ConfigError::new(key("name"), "must not be empty"));
            }
            if let Some(j) = filled.classes[..i].iter().position(|o| o.name == c.name) {
                return Err(ConfigError::new(key("name"), format!("\"{}\" is already the name of {classes_path}[{j}]; names must be unique", c.name)));
            }
            if !share_ok(c.share) {
                return Err(ConfigError::new(key("share"), format!("must be in (0, 1] (a fraction of the link: 12 % = 0.12), got {}", c.share)));
            }
            let qlimit = c.qlimit.unwrap_or(filled.qlimit);
            if qlimit == 0 {
                return Err(ConfigError::new(key("qlimit"), "must be at least 1 packet, got 0"));
            }
            let group = match &c.parent {
                None => None,
                Some(p) => match groups.iter().position(|g| &g.name == p) {
                    Some(g) => Some(g),
                    None => {
                        let names: Vec<String> = groups.iter().map(|g| format!("\"{}\"", g.name)).collect();
                        return Err(ConfigError::new(
                            key("parent"),
                            format!("unknown group \"{p}\"; declared in {groups_path}: {}", if names.is_empty() { "none".into() } else { names.join(", ") }),
                        ));
                    }
                },
            };
            let borrow = c.borrow && group.is_none_or(|g| groups[g].borrow);
            classes.push(Class {
                name: c.name.clone(),
                rate: c.share * bytes_per_ns,
                group,
                borrow,
                qlimit,
                next: 0.0,
                fifo: Fifo::new(Limit::Packets(qlimit as u64)),
                stats: QdiscStats::default(),
                byte_stats: QdiscStats::default(),
                served: [0; 4],
            });
        }
        for (j, g) in groups.iter().enumerate() {
            if !filled.classes.iter().any(|c| c.parent.as_deref() == Some(g.name.as_str())) {
                return Err(ConfigError::new(
                    format!("{groups_path}[{j}]"),
                    format!("no class has parent = \"{}\"; remove the group or put classes in it", g.name),
                ));
            }
        }
        let top: f64 = groups.iter().map(|g| g.share).sum::<f64>()
            + filled.classes.iter().filter(|c| c.parent.is_none()).map(|c| c.share).sum::<f64>();
        if top > 1.0 + EPS {
            return Err(ConfigError::new(
                &classes_path,
                format!("shares sum to {top:.6} > 1 (the groups plus the classes without parent share the link)"),
            ));
        }
        let rules: Vec<Rule<'_>> = filled.classes.iter().map(|c| Rule { protocol: c.protocol, tags: c.tags.as_deref() }).collect();
        let classifier = Classifier::new(&rules, &classes_path)?;
        Ok(Cbq {
            classes,
            groups,
            classifier,
            max_lead: filled.max_lead.0 .0 as f64,
            packets: 0,
            bytes: 0,
            stats: QdiscStats::default(),
            last_now: 0.0,
        })
    }
}

/// A leaf class: its rate, clock, queue and counters.
struct Class {
    name: String,
    /// `r_c`, bytes per nanosecond.
    rate: f64,
    group: Option<usize>,
    /// May borrow from the root (its own flag and its group's).
    borrow: bool,
    qlimit: u32,
    /// `next_c`, nanoseconds.
    next: f64,
    fifo: Fifo,
    stats: QdiscStats,
    byte_stats: QdiscStats,
    /// Departures at each level L0..L3.
    served: [u64; 4],
}

/// A group (interior class).
#[derive(Debug)]
struct Group {
    name: String,
    share: f64,
    /// `r_g`, bytes per nanosecond.
    rate: f64,
    borrow: bool,
    /// `next_g`, nanoseconds.
    next: f64,
    /// Packets queued in its classes.
    queued: usize,
}

/// Class-Based Queueing: per-class drop-tail queues, virtual-clock link sharing, two-level tree.
pub struct Cbq {
    classes: Vec<Class>,
    groups: Vec<Group>,
    classifier: Classifier,
    /// `max_lead`, nanoseconds.
    max_lead: f64,
    packets: usize,
    bytes: u64,
    stats: QdiscStats,
    /// Time of the last call, nanoseconds (for the clock leads in `class_stats`).
    last_now: f64,
}

impl Cbq {
    /// Index of the class named `name`.
    pub fn class_index(&self, name: &str) -> Option<usize> {
        self.classes.iter().position(|c| c.name == name)
    }

    /// The class a packet would be assigned to.
    pub fn classify(&self, pkt: &Packet) -> &str {
        &self.classes[self.classifier.classify(pkt)].name
    }

    /// The rate of class `name`, bits per second.
    pub fn class_rate_bps(&self, name: &str) -> Option<f64> {
        self.class_index(name).map(|i| self.classes[i].rate * 8.0e9)
    }

    /// Departures of class `name` at each level: within rate, from its group, from the root,
    /// on an otherwise idle link.
    pub fn served_by_level(&self, name: &str) -> Option<[u64; 4]> {
        self.class_index(name).map(|i| self.classes[i].served)
    }

    /// The name and share of each group.
    pub fn groups(&self) -> Vec<(&str, f64)> {
        self.groups.iter().map(|g| (g.name.as_str(), g.share)).collect()
    }

    /// The class to serve at `now` and its level.
    fn select(&self, now: f64) -> Option<(usize, usize)> {
        let mut best: [Option<usize>; 4] = [None; 4];
        for (i, c) in self.classes.iter().enumerate() {
            if c.fifo.is_empty() {
                continue;
            }
            let level = if c.next <= now {
                0
            } else if c.group.is_some_and(|g| self.groups[g].next <= now) {
                1
            } else if c.borrow {
                2
            } else {
                3
            };
            let slot = &mut best[level];
            if slot.is_none_or(|b| c.next < self.classes[b].next) {
                *slot = Some(i);
            }
        }
        best.iter().enumerate().find_map(|(level, b)| b.map(|i| (i, level)))
    }
}

impl Qdisc for Cbq {
    fn enqueue(&mut self, pkt: Packet, now: Time, _rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        let t = now.0 as f64;
        self.last_now = t;
        let c = self.classifier.classify(&pkt);
        let size = pkt.size as u64;
        self.stats.arrivals += 1;
        let mut joined = false;
        let cls = &mut self.classes[c];
        cls.stats.arrivals += 1;
        cls.byte_stats.arrivals += size;
        if cls.fifo.len() >= cls.qlimit as usize {
            cls.stats.drops_overflow += 1;
            cls.byte_stats.drops_overflow += size;
            self.stats.drops_overflow += 1;
            return Verdict::Dropped(DropKind::Overflow);
        }
        if cls.fifo.is_empty() {
            cls.next = cls.next.max(t);
            joined = true;
        }
        if let Some(g) = cls.group {
            let grp = &mut self.groups[g];
            if grp.queued == 0 {
                grp.next = grp.next.max(t);
            }
            grp.queued += 1;
        }
        cls.stats.enqueues += 1;
        cls.byte_stats.enqueues += size;
        cls.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        self.packets += 1;
        self.bytes += size;
        if joined {
            // A class became backlogged: nobody keeps more than `max_lead` of borrowing debt
            // against it (choice: the cap applies when the set of contenders changes).
            let cap = t + self.max_lead;
            for c in &mut self.classes {
                c.next = c.next.min(cap);
            }
            for g in &mut self.groups {
                g.next = g.next.min(cap);
            }
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let t = now.0 as f64;
        self.last_now = t;
        let (c, level) = self.select(t)?;
        let cls = &mut self.classes[c];
        let pkt = cls.fifo.pop().expect("selected classes have packets");
        let s = pkt.size as f64;
        let step = s / cls.rate;
        cls.next += step;
        cls.served[level] += 1;
        cls.stats.dequeues += 1;
        cls.byte_stats.dequeues += pkt.size as u64;
        if let Some(g) = cls.group {
            let grp = &mut self.groups[g];
            grp.next += s / grp.rate;
            grp.queued -= 1;
        }
        self.stats.dequeues += 1;
        self.packets -= 1;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    fn peek(&self) -> Option<&Packet> {
        None
    }
    fn len_packets(&self) -> usize {
        self.packets
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn stats(&self) -> &QdiscStats {
        &self.stats
    }
    fn class_stats(&self) -> Vec<ClassStats> {
        self.classes
            .iter()
            .map(|c| ClassStats {
                name: c.name.clone(),
                stats: c.stats,
                bytes: c.byte_stats,
                average: (c.next - self.last_now) * 1e-6,
                len_packets: c.fifo.len(),
                len_bytes: c.fifo.bytes(),
            })
            .collect()
    }
    fn class_count(&self) -> usize {
        self.classes.len()
    }
    fn class_len_at(&self, i: usize) -> (usize, u64) {
        (self.classes[i].fifo.len(), self.classes[i].fifo.bytes())
    }
    fn class_average_at(&self, i: usize) -> f64 {
        (self.classes[i].next - self.last_now) * 1e-6
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind::{self, TcpAck, TcpData, Udp};
    use crate::qdisc::{AnyQdisc, DropTailParams};
    use rand::Rng as _;

    const C: f64 = 10e6;

    fn params(text: &str) -> CbqParams {
        toml::from_str(text).unwrap()
    }
    fn cbq(text: &str) -> Cbq {
        params(text).validate("queue", C).unwrap()
    }
    fn error(text: &str) -> String {
        params(text).validate("queue", C).err().expect("should be rejected").to_string()
    }

    /// What a traffic source offers.
    #[derive(Clone, Copy)]
    enum Offer {
        /// Always keeps packets queued in its class.
        Backlogged,
        /// Constant bit rate, bits per second.
        Cbr(f64),
        /// Nothing.
        Idle,
    }

    /// One source: packet kind, tag, size, what it offers, and from when to when (seconds).
    #[derive(Clone, Copy)]
    struct Src {
        kind: PacketKind,
        tag: u8,
        size: u32,
        offer: Offer,
        from: f64,
        until: f64,
    }

    fn src(kind: PacketKind, tag: u8, size: u32, offer: Offer) -> Src {
        Src { kind, tag, size, offer, from: 0.0, until: f64::INFINITY }
    }

    /// Results of a run: bytes sent per class inside the window, the largest queue seen per class.
    struct Run {
        sent: Vec<u64>,
        max_len: Vec<usize>,
        window_s: f64,
    }

    impl Run {
        fn fraction(&self, class: usize) -> f64 {
            self.sent[class] as f64 * 8.0 / (C * self.window_s)
        }
    }

    /// Drives `q` as the simulator's bottleneck does: a dequeue when the link becomes free
    /// (transmission of `size` at rate C), arrivals enqueued at their own times in between.
    /// Bytes are counted per class for departures in [warm, end) seconds.
    fn drive(q: &mut Cbq, sources: &[Src], warm: f64, end: f64) -> Run {
        let n = q.classes.len();
        let mut rng = stream(1, StreamId::Queue(0));
        let mut drops = DropBuf::new();
        let mut sent = vec![0u64; n];
        let mut max_len = vec![0usize; n];
        let ns = |s: f64| (s * 1e9) as u64;
        let mut next_arrival: Vec<f64> = sources.iter().map(|s| s.from).collect();
        let mut seq = 0u32;
        let mut t = 0u64;
        let mut pkt = |s: &Src| {
            seq += 1;
            Packet { size: s.size, class: s.tag, seq, ..Packet::new(s.kind, 0) }
        };
        while t < ns(end) {
            // Arrivals up to t.
            for (i, s) in sources.iter().enumerate() {
                let now_s = t as f64 / 1e9;
                match s.offer {
                    Offer::Idle => {}
                    Offer::Backlogged => {
                        if now_s >= s.from && now_s < s.until {
                            let c = q.classifier.classify(&pkt(s));
                            while q.classes[c].fifo.len() < 8 {
                                q.enqueue(pkt(s), Time(t), &mut rng, &mut drops);
                            }
                        }
                    }
                    Offer::Cbr(bps) => {
                        while next_arrival[i] <= now_s && next_arrival[i] < s.until {
                            let at = Time(ns(next_arrival[i]).max(q.last_now as u64));
                            q.enqueue(pkt(s), at, &mut rng, &mut drops);
                            next_arrival[i] += s.size as f64 * 8.0 / bps;
                        }
                    }
                }
            }
            for (c, m) in max_len.iter_mut().enumerate() {
                *m = (*m).max(q.classes[c].fifo.len());
            }
            match q.dequeue(Time(t), &mut drops) {
                Some(p) => {
                    if t >= ns(warm) {
                        sent[q.classifier.classify(&p)] += p.size as u64;
                    }
                    t += Dur::transmission(p.size, C).0;
                }
                None => {
                    assert_eq!(q.len_packets(), 0, "work-conserving: None only when empty");
                    let next = next_arrival.iter().zip(sources).filter(|(_, s)| matches!(s.offer, Offer::Cbr(_))).map(|(a, _)| *a).fold(f64::INFINITY, f64::min);
                    let starts = sources.iter().filter(|s| matches!(s.offer, Offer::Backlogged) && s.from * 1e9 > t as f64).map(|s| s.from).fold(f64::INFINITY, f64::min);
                    t = ns(next.min(starts).min(end)).max(t + 1);
                }
            }
        }
        Run { sent, max_len, window_s: end - warm }
    }

    fn near(got: f64, want: f64, tol: f64, what: &str) {
        assert!((got - want).abs() <= tol * want, "{what}: got {got:.4}, want {want:.4} ± {:.0} %", tol * 100.0);
    }

    /// The dissertation's three classes with differing packet sizes.
    fn dissertation(tcp: Offer, mm: Offer, other: Offer) -> [Src; 3] {
        [src(TcpData, 0, 1500, tcp), src(Udp, 1, 800, mm), src(Udp, 0, 1000, other)]
    }

    #[test]
    fn every_backlogged_class_gets_its_share() {
        let mut q = cbq("");
        let r = drive(&mut q, &dissertation(Offer::Backlogged, Offer::Backlogged, Offer::Backlogged), 1.0, 21.0);
        for (c, share) in [(0, 0.75), (1, 0.13), (2, 0.12)] {
            near(r.fraction(c), share, 0.02, &q.classes[c].name);
        }
        // Shares of another split, flat (no groups), all classes may borrow.
        let mut q = cbq(r#"classes = [
            { name = "a", match = "tcp", share = 0.5 },
            { name = "b", match = "udp", tags = [1], share = 0.3 },
            { name = "c", share = 0.2 },
        ]"#);
        let r = drive(&mut q, &dissertation(Offer::Backlogged, Offer::Backlogged, Offer::Backlogged), 1.0, 21.0);
        for (c, share) in [(0, 0.5), (1, 0.3), (2, 0.2)] {
            near(r.fraction(c), share, 0.02, &q.classes[c].name);
        }
    }

    #[test]
    fn an_idle_siblings_share_goes_to_its_sibling_first_and_other_stays_at_its_rate() {
        // Multimedia idle: TCP borrows its 13 % from the group; *other* stays at 12 %.
        let mut q = cbq("");
        let r = drive(&mut q, &dissertation(Offer::Backlogged, Offer::Idle, Offer::Backlogged), 1.0, 21.0);
        near(r.fraction(0), 0.88, 0.02, "tcp");
        near(r.fraction(2), 0.12, 0.02, "other");
        let lv = q.served_by_level("tcp").unwrap();
        assert!(lv[1] > lv[0] / 10, "tcp borrowed from its group: {lv:?}");
        assert_eq!(q.served_by_level("other").unwrap()[3] * 100 / q.classes[2].stats.dequeues.max(1), 0, "other hardly ever on an idle link");
        // TCP idle: multimedia borrows TCP's share.
        let mut q = cbq("");
        let r = drive(&mut q, &dissertation(Offer::Idle, Offer::Backlogged, Offer::Backlogged), 1.0, 21.0);
        near(r.fraction(1), 0.88, 0.02, "multimedia");
        near(r.fraction(2), 0.12, 0.02, "other");
    }

    #[test]
    fn excess_flows_inside_the_group_before_a_borrowing_outsider_gets_any() {
        // Flat vs grouped: a and b in a group, c outside, all may borrow. b idle.
        let grouped = r#"classes = [
            { name = "a", match = "tcp", share = 0.4, parent = "g" },
            { name = "b", match = "udp", tags = [1], share = 0.3, parent = "g" },
            { name = "c", share = 0.3 },
        ]"#;
        let mut q = cbq(grouped);
        let r = drive(&mut q, &dissertation(Offer::Backlogged, Offer::Idle, Offer::Backlogged), 1.0, 11.0);
        near(r.fraction(0), 0.7, 0.02, "a takes its idle sibling's share");
        near(r.fraction(2), 0.3, 0.02, "c keeps its own");
        // Without the group, b's share is split between a and c by their rates (virtual clock
        // at L2): a ≈ 0.4 + 0.3·4/7, c ≈ 0.3 + 0.3·3/7.
        let mut q = cbq(&grouped.replace(", parent = \"g\"", ""));
        let r = drive(&mut q, &dissertation(Offer::Backlogged, Offer::Idle, Offer::Backlogged), 1.0, 11.0);
        near(r.fraction(0), 0.4 + 0.3 * 4.0 / 7.0, 0.03, "a, flat");
        near(r.fraction(2), 0.3 + 0.3 * 3.0 / 7.0, 0.03, "c, flat");
    }

    #[test]
    fn other_gets_only_what_remains() {
        // Shares sum to 0.7: 30 % of the link is unallocated. *other* (borrow = false) is held at
        // its 10 % while TCP and MM are backlogged; the excess goes to them, by their rates.
        let text = r#"classes = [
            { name = "tcp", match = "tcp", share = 0.5, parent = "tcp-mm" },
            { name = "multimedia", match = "udp", tags = [1], share = 0.1, parent = "tcp-mm" },
            { name = "other", share = 0.1, borrow = false },
        ]"#;
        let all = dissertation(Offer::Backlogged, Offer::Backlogged, Offer::Backlogged);
        let r = drive(&mut cbq(text), &all, 1.0, 11.0);
        near(r.fraction(2), 0.1, 0.02, "bounded other");
        near(r.fraction(0), 0.75, 0.02, "tcp");
        near(r.fraction(1), 0.15, 0.02, "multimedia");
        // The same with borrow = true: other takes part of the excess (proportional to its rate).
        let r = drive(&mut cbq(&text.replace("borrow = false", "borrow = true")), &all, 1.0, 11.0);
        near(r.fraction(2), 0.1 + 0.3 / 7.0, 0.03, "borrowing other");
        // A group with borrow = false keeps its members off the root: the excess goes to other.
        let r = drive(&mut cbq(&format!("{}\ngroups = [{{ name = \"tcp-mm\", borrow = false }}]", text.replace("borrow = false", "borrow = true"))), &all, 1.0, 11.0);
        near(r.fraction(2), 0.4, 0.02, "other borrows the excess");
        near(r.fraction(0) + r.fraction(1), 0.6, 0.02, "tcp-mm held at its group rate");
        // Work-conserving: when TCP sends only 30 % and MM nothing, other gets the remaining 70 %.
        let light = dissertation(Offer::Cbr(0.3 * C), Offer::Idle, Offer::Backlogged);
        let r = drive(&mut cbq(text), &light, 1.0, 11.0);
        near(r.fraction(0), 0.3, 0.02, "tcp gets all it offers");
        near(r.fraction(2), 0.7, 0.02, "other uses what remains");
    }

    #[test]
    fn a_class_within_its_allocation_sees_almost_no_queue() {
        // Multimedia offers 10 % (< its 13 %) against a backlogged TCP and other: its packets wait
        // at most for the packet in service plus one per class, never for the TCP backlog.
        let mut q = cbq("");
        let r = drive(&mut q, &dissertation(Offer::Backlogged, Offer::Cbr(0.10 * C), Offer::Backlogged), 1.0, 11.0);
        near(r.fraction(1), 0.10, 0.02, "multimedia gets all it offers");
        assert!(r.max_len[1] <= 3, "multimedia queue {}", r.max_len[1]);
        assert_eq!(q.classes[1].stats.drops(), 0);
        // Over its allocation (20 %) it builds its own queue and drops, TCP keeps ≥ its share.
        let mut q = cbq("");
        let r = drive(&mut q, &dissertation(Offer::Backlogged, Offer::Cbr(0.20 * C), Offer::Backlogged), 1.0, 11.0);
        assert_eq!(r.max_len[1], 50);
        assert!(q.classes[1].stats.drops_overflow > 0);
        assert!(r.fraction(0) >= 0.75 * 0.98 && r.fraction(1) < 0.20 * 0.98, "{} {}", r.fraction(0), r.fraction(1));
    }

    #[test]
    fn borrowing_debt_is_capped_by_max_lead() {
        // a alone for 5 s (twice its rate), then b joins: a keeps about its half right away.
        let flat = r#"classes = [{ name = "a", match = "tcp", share = 0.5 }, { name = "b", share = 0.5 }]"#;
        let mut s = [src(TcpData, 0, 1000, Offer::Backlogged), src(Udp, 0, 1000, Offer::Backlogged)];
        s[1].from = 5.0;
        let r = drive(&mut cbq(flat), &s, 5.1, 6.1);
        near(r.fraction(0), 0.5, 0.03, "a after b joins");
        // With an effectively unbounded lead, a is starved for seconds (the virtual-clock problem).
        let r = drive(&mut cbq(&format!("max_lead = \"100s\"\n{flat}")), &s, 5.1, 6.1);
        assert!(r.fraction(0) < 0.1, "a starved: {}", r.fraction(0));
    }

    #[test]
    fn per_class_drop_tail_overflow() {
        let mut q = cbq(r#"
            qlimit = 5
            classes = [{ name = "tcp", match = "tcp", share = 0.5, qlimit = 3 }, { name = "other", share = 0.5 }]"#);
        let mut rng = stream(1, StreamId::Queue(0));
        let mut drops = DropBuf::new();
        let mut v = Vec::new();
        for i in 0..5 {
            v.push(q.enqueue(Packet { size: 1000, seq: i, ..Packet::new(TcpData, 0) }, Time(0), &mut rng, &mut drops));
        }
        let ovf = Verdict::Dropped(DropKind::Overflow);
        assert_eq!(v, [Verdict::Enqueued, Verdict::Enqueued, Verdict::Enqueued, ovf, ovf]);
        // The other class has its own room.
        for _ in 0..5 {
            assert_eq!(q.enqueue(Packet { size: 500, ..Packet::new(Udp, 0) }, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        assert_eq!(q.enqueue(Packet { size: 500, ..Packet::new(Udp, 0) }, Time(0), &mut rng, &mut drops), ovf);
        assert!(drops.is_empty(), "drop-tail: never from inside the queue");
        let cs = q.class_stats();
        assert_eq!((cs[0].stats.drops_overflow, cs[0].bytes.drops_overflow, cs[0].len_packets), (2, 2000, 3));
        assert_eq!((cs[1].stats.drops_overflow, cs[1].len_bytes), (1, 2500));
        assert_eq!((q.len_packets(), q.len_bytes(), q.stats().drops_overflow), (8, 5500, 3));
        // A departure makes room for exactly one more; per-class FIFO order.
        let p = q.dequeue(Time(1), &mut drops).unwrap();
        let first = if p.kind == TcpData { assert_eq!(p.seq, 0); true } else { false };
        let k = if first { TcpData } else { Udp };
        assert_eq!(q.enqueue(Packet { size: 1000, ..Packet::new(k, 0) }, Time(1), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!(q.enqueue(Packet { size: 1000, ..Packet::new(k, 0) }, Time(1), &mut rng, &mut drops), ovf);
    }

    fn check_invariants(q: &Cbq) {
        let mut sum = QdiscStats::default();
        let (mut pkts, mut bytes) = (0usize, 0u64);
        for c in q.class_stats() {
            let (s, b) = (c.stats, c.bytes);
            assert_eq!(s.arrivals, s.enqueues + s.drops(), "{}", c.name);
            assert_eq!(s.enqueues, s.dequeues + c.len_packets as u64, "{}", c.name);
            assert_eq!(b.arrivals, b.enqueues + b.drops(), "{} bytes", c.name);
            assert_eq!(b.enqueues, b.dequeues + c.len_bytes, "{} bytes", c.name);
            assert_eq!(s.drops(), s.drops_overflow, "CBQ drops only on overflow");
            sum.arrivals += s.arrivals;
            sum.enqueues += s.enqueues;
            sum.dequeues += s.dequeues;
            sum.drops_overflow += s.drops_overflow;
            pkts += c.len_packets;
            bytes += c.len_bytes;
        }
        assert_eq!(&sum, q.stats());
        assert_eq!((pkts, bytes), (q.len_packets(), q.len_bytes()));
        for g in &q.groups {
            let members: usize = q.classes.iter().filter(|c| c.group.is_some_and(|i| q.groups[i].name == g.name)).map(|c| c.fifo.len()).sum();
            assert_eq!(g.queued, members, "group {}", g.name);
        }
    }

    #[test]
    fn random_trace_loses_and_duplicates_nothing_and_counters_balance() {
        for seed in 1..=5u64 {
            let mut q = cbq(r#"
                qlimit = 20
                classes = [
                  { name = "tcp", match = "tcp", share = 0.6, parent = "g" },
                  { name = "mm", match = "udp", tags = [1, 2], share = 0.2, parent = "g", qlimit = 7 },
                  { name = "other", share = 0.15, borrow = false },
                ]"#);
            let mut rng = stream(seed, StreamId::Queue(1));
            let mut qrng = stream(seed, StreamId::Queue(0));
            let mut drops = DropBuf::new();
            let (mut accepted, mut out) = (Vec::new(), Vec::new());
            let mut t = 0u64;
            for seq in 0..20_000u32 {
                t += rng.gen_range(0..400_000);
                if rng.gen_bool(0.55) {
                    let kind = [TcpData, TcpAck, Udp][rng.gen_range(0..3)];
                    let p = Packet { size: rng.gen_range(40..1500), class: rng.gen_range(0..4), seq, ..Packet::new(kind, 0) };
                    if q.enqueue(p, Time(t), &mut qrng, &mut drops) == Verdict::Enqueued {
                        accepted.push((seq, q.classify(&p).to_string()));
                    }
                } else if let Some(p) = q.dequeue(Time(t), &mut drops) {
                    out.push((p.seq, q.classify(&p).to_string()));
                } else {
                    assert_eq!(q.len_packets(), 0);
                }
                if seq % 97 == 0 {
                    check_invariants(&q);
                }
            }
            while let Some(p) = q.dequeue(Time(t), &mut drops) {
                out.push((p.seq, q.classify(&p).to_string()));
                t += 1000;
            }
            check_invariants(&q);
            assert!(drops.is_empty());
            assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
            assert!(q.stats().drops_overflow > 0, "the trace overflows some class");
            // Every accepted packet left exactly once, and each class kept FIFO order.
            let mut a: Vec<u32> = accepted.iter().map(|x| x.0).collect();
            let mut o: Vec<u32> = out.iter().map(|x| x.0).collect();
            assert_eq!(o.len(), a.len());
            a.sort_unstable();
            o.sort_unstable();
            assert_eq!(a, o);
            for name in ["tcp", "mm", "other"] {
                let ina: Vec<u32> = accepted.iter().filter(|x| x.1 == name).map(|x| x.0).collect();
                let outa: Vec<u32> = out.iter().filter(|x| x.1 == name).map(|x| x.0).collect();
                assert_eq!(ina, outa, "{name} in FIFO order");
            }
        }
    }

    #[test]
    fn defaults_are_table_5_4_with_the_tcp_mm_group() {
        let q = cbq("");
        let names: Vec<&str> = q.classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["tcp", "multimedia", "other"]);
        assert!((q.class_rate_bps("other").unwrap() - 1.2e6).abs() < 1e-3, "12 % of 10 Mb/s");
        assert!((q.class_rate_bps("other").unwrap() / 8.0 / 1024.0 - 146.48).abs() < 0.01, "≈ 147 KiB/s");
        assert_eq!(q.groups().len(), 1);
        assert_eq!(q.groups()[0].0, "tcp-mm");
        assert!((q.groups()[0].1 - 0.88).abs() < 1e-12);
        assert!(q.classes[0].borrow && q.classes[1].borrow && !q.classes[2].borrow);
        assert_eq!(q.classes.iter().map(|c| c.qlimit).collect::<Vec<_>>(), [50, 50, 50]);
        assert_eq!(q.classify(&Packet::new(TcpAck, 0)), "tcp");
        assert_eq!(q.classify(&Packet { class: 1, ..Packet::new(Udp, 0) }), "multimedia");
        assert_eq!(q.classify(&Packet { class: 1, ..Packet::new(TcpData, 0) }), "tcp");
        assert_eq!(q.classify(&Packet::new(Udp, 0)), "other");
        assert!(q.peek().is_none() && q.average().is_none());
        let cat = crate::qdisc::catalog();
        let entry = cat.as_array().unwrap().iter().find(|e| e["kind"] == "cbq").expect("cbq in the catalog");
        assert_eq!(entry["params"]["qlimit"], 50);
        assert_eq!(entry["params"]["classes"][2]["borrow"], false);
        for key in entry["params"].as_object().unwrap().keys() {
            assert!(entry["docs"].get(key).is_some(), "{key} documented");
        }
        for key in entry["params"]["classes"][0].as_object().unwrap().keys().map(|k| k.as_str()).chain(["tags", "parent", "qlimit"]) {
            assert!(entry["docs"].get(format!("classes[].{key}")).is_some(), "classes[].{key} documented");
        }
        for key in ["groups", "groups[].name", "groups[].share", "groups[].borrow"] {
            assert!(entry["docs"].get(key).is_some(), "{key} documented");
        }
        assert!(crate::scenario::QDISC_KINDS.contains(&"cbq"));
    }

    #[test]
    fn bad_input_names_the_key() {
        assert!(error("classes = []").starts_with("queue.classes: at least one class"));
        // A qlimit below 1 is refused as it is read (the scenario parser names the key and line).
        let unreadable = |text: &str| toml::from_str::<CbqParams>(text).unwrap_err().to_string();
        assert!(unreadable("qlimit = 0").contains("must be in 1..=4294967295, got 0"));
        for bad in ["0", "-0.1", "1.5", "nan"] {
            let m = error(&format!("classes = [{{ name = \"a\", share = {bad} }}]"));
            assert!(m.starts_with("queue.classes[0].share: must be in (0, 1]"), "{m}");
        }
        let m = error(r#"classes = [{ name = "a", match = "tcp", share = 0.6 }, { name = "b", share = 0.5 }]"#);
        assert!(m.starts_with("queue.classes: shares sum to 1.1") && m.contains("> 1"), "{m}");
        let m = error(r#"classes = [{ name = "a", match = "tcp", share = 0.5, parent = "g" }, { name = "b", share = 0.5 }]
            groups = [{ name = "g", share = 0.6 }]"#);
        assert!(m.starts_with("queue.classes: shares sum to 1.1"), "{m}");
        let m = error(r#"classes = [{ name = "a", match = "tcp", share = 0.5, parent = "h" }, { name = "b", share = 0.5 }]
            groups = [{ name = "g" }]"#);
        assert!(m.starts_with("queue.classes[0].parent: unknown group \"h\"") && m.contains("\"g\""), "{m}");
        let m = error(r#"classes = [{ name = "a", match = "tcp", share = 0.5 }, { name = "b", share = 0.5 }]
            groups = [{ name = "g" }]"#);
        assert!(m.starts_with("queue.groups[0]: no class has parent = \"g\""), "{m}");
        let m = error(r#"classes = [{ name = "a", match = "tcp", share = 0.3, parent = "g" }, { name = "b", share = 0.3, parent = "g" }]
            groups = [{ name = "g", share = 0.5 }]"#);
        assert!(m.starts_with("queue.groups[0].share: must be at least the sum"), "{m}");
        let m = error(r#"classes = [{ name = "a", share = 0.3, parent = "g" }]
            groups = [{ name = "g", share = 0.3 }, { name = "g" }]"#);
        assert!(m.starts_with("queue.groups[1].name: \"g\" is already"), "{m}");
        assert!(unreadable(r#"classes = [{ name = "a", share = 0.5, qlimit = 0 }]"#).contains("must be in 1..=4294967295, got 0"));
        let m = error(r#"classes = [{ name = "a", match = "tcp", share = 0.5 }, { name = "a", share = 0.5 }]"#);
        assert!(m.starts_with("queue.classes[1].name: \"a\" is already the name of queue.classes[0]"), "{m}");
        assert!(error(r#"classes = [{ name = "", share = 0.5 }]"#).starts_with("queue.classes[0].name"));
        let m = error(r#"classes = [{ name = "tcp", match = "tcp", share = 0.5 }, { name = "mm", match = "udp", tags = [1], share = 0.5 }]"#);
        assert!(m.starts_with("queue.classes: no class matches udp packets with tag 0") && m.contains("catch-all"), "{m}");
        let m = error(r#"classes = [{ name = "all", share = 0.5 }, { name = "tcp", match = "tcp", share = 0.5 }]"#);
        assert!(m.starts_with("queue.classes[1]: no packet can reach this class"), "{m}");
    }

    #[test]
    fn scenario_keys_parse_with_paths_and_echo_filled_in() {
        use crate::scenario::validate::{queue_spec, QueueSpec};
        let spec = |text: &str| {
            let table: toml::Table = toml::from_str(text).unwrap();
            queue_spec(Some(&table), "queue", QueueSpec::DropTail(DropTailParams::default()))
        };
        let s = spec("kind = \"cbq\"").unwrap();
        assert_eq!(s.kind(), "cbq");
        let echo = s.echo();
        assert_eq!(echo["kind"], "cbq");
        assert_eq!(echo["max_lead"], "20ms");
        assert_eq!(echo["groups"][0]["name"], "tcp-mm", "derived group written out");
        assert_eq!(echo["classes"][1]["tags"][0], 1);
        // The echo parses back to the same discipline.
        let back = toml::to_string(&echo).unwrap();
        assert_eq!(spec(&back).unwrap().echo(), echo);
        let AnyQdisc::Cbq(q) = s.build("queue", 10e6).unwrap() else { panic!("not cbq") };
        assert_eq!(q.classes.len(), 3);
        let e = spec("kind = \"cbq\"\nclasses = [{ name = \"a\", share = 1, colour = 1 }]").unwrap_err();
        assert!(e.path.starts_with("queue.classes[0]") && e.message.contains("colour"), "{e}");
        let e = spec("kind = \"cbq\"\nclasses = [{ name = \"a\" }]").unwrap_err();
        assert!(e.path.starts_with("queue.classes[0]") && e.message.contains("share"), "{e}");
        let e = spec("kind = \"cbq\"\ngroups = [{ name = \"g\", weight = 1 }]").unwrap_err();
        assert!(e.path.starts_with("queue.groups[0]") && e.message.contains("weight"), "{e}");
    }

    /// The module docs' example, in a scenario.
    const DOC_EXAMPLE: &str = r#"
[run]
duration = "1s"

[topology]
bottleneck = { rate = "10Mbps", delay = "20ms" }

[queue]
kind = "cbq"
qlimit = 50
max_lead = "20ms"

[[queue.classes]]
name = "tcp"
match = "tcp"
share = 0.75
parent = "tcp-mm"

[[queue.classes]]
name = "multimedia"
match = "udp"
tags = [1]                   # the multimedia [[flows]] groups say class = 1
share = 0.13
parent = "tcp-mm"

[[queue.classes]]
name = "other"
share = 0.12                 # 12 % of 10 Mb/s = 146.5 KiB/s ("147 KB/s")
borrow = false               # only what TCP and multimedia leave

[[queue.groups]]
name = "tcp-mm"              # share = 0.88, the sum of its members

[[flows]]
kind = "tcp"
"#;

    #[test]
    fn doc_example_is_the_default() {
        let sc = crate::scenario::parse_toml(DOC_EXAMPLE).unwrap();
        let mut want = serde_json::to_value(CbqParams::default().filled()).unwrap();
        want["kind"] = "cbq".into();
        assert_eq!(sc.queue.echo(), want);
        let e = crate::scenario::parse_toml(&DOC_EXAMPLE.replace("share = 0.13", "share = 0.2")).unwrap_err();
        assert_eq!(e.path, "queue.classes", "{e}");
        assert!(e.message.contains("1.07"), "{e}");
    }

    #[test]
    fn simulation_holds_a_udp_blast_at_its_allocation() {
        let text = r#"
[run]
duration = "12s"
warmup = "2s"
seed = 5

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms" }

[queue]
kind = "cbq"

[[flows]]
kind = "tcp"
count = 8
start_jitter = "100ms"

[[flows]]
kind = "udp-cbr"
rate = "10Mbps"
"#;
        let sc = crate::run::load(text, crate::run::Format::Toml, None).unwrap();
        let out = crate::run::simulate(&sc, None, |_| true).unwrap();
        let classes = out.summary["queues"][0]["classes"].as_array().expect("per-class rows").clone();
        let bps = |name: &str| classes.iter().find(|c| c["name"] == name).unwrap()["throughput_bps"].as_f64().unwrap();
        let (tcp, other) = (bps("tcp"), bps("other"));
        // The blast (10 Mb/s offered, tag 0 → other) is held near 12 % of the link; TCP gets the rest.
        assert!((other - 1.2e6).abs() < 0.05 * 1.2e6, "other {other}");
        assert!(tcp > 0.80 * 10e6, "tcp {tcp}");
        assert!(classes.iter().find(|c| c["name"] == "other").unwrap()["drops"].as_u64().unwrap() > 1000);
    }
}
