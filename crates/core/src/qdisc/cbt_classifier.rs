//! The CBT classifier (Parris 2001 §IV.3; spec `seed000-cbt-algorithms.md` §2.7.1 and
//! `seed000-cbt-evaluation.md` §1.4): maps a packet to one of the configured classes.
//!
//! The dissertation classifies on the IP header: protocol TCP → *TCP*; UDP to the well-known
//! destination ports of the multimedia applications (6000–6010 in Ch. V) → *multimedia*; everything
//! else → *other*. Our packets carry no addresses or ports, only a [`PacketKind`] (TCP data, TCP
//! ACK, UDP) and a per-flow-group tag (`class`, set with `class = n` in `[[flows]]`, default 0). So a
//! class is selected by a rule on both:
//!
//! * `match`: `"tcp"` (data and ACKs: the IP protocol is TCP for both), `"tcp-data"`, `"tcp-ack"`,
//!   `"udp"`, or `"any"` (default);
//! * `tags`: the list of `class` tags it accepts (0–255); absent = every tag.
//!
//! "UDP to a port range" is expressed by giving the multimedia flows a tag (`class = 1` in their
//! `[[flows]]` group) and the multimedia class `match = "udp"`, `tags = [1]`.
//!
//! Rules are tried in the order the classes are listed; the first match wins. Validation rejects
//! (a) a list under which some (kind, tag) combination reaches no class — end the list with a
//! catch-all (`match = "any"` without `tags`), as the dissertation's *other* class is — and (b) a
//! class no packet can reach because earlier classes take everything it matches, which is always
//! a configuration mistake. The rules are compiled into a 3 × 256 table, so classifying costs one
//! lookup on arrival and one on departure (the class is not stored in the packet).

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, ConfigResult};
use crate::packet::{Packet, PacketKind};

/// Which packet kinds a class rule accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// TCP data segments and pure ACKs (IP protocol = TCP).
    Tcp,
    /// TCP data segments only.
    TcpData,
    /// Pure TCP ACKs only.
    TcpAck,
    /// UDP datagrams.
    Udp,
    /// Every packet.
    #[default]
    Any,
}

impl Protocol {
    /// Whether a packet of `kind` matches.
    pub fn matches(self, kind: PacketKind) -> bool {
        match self {
            Protocol::Tcp => matches!(kind, PacketKind::TcpData | PacketKind::TcpAck),
            Protocol::TcpData => kind == PacketKind::TcpData,
            Protocol::TcpAck => kind == PacketKind::TcpAck,
            // TFRC runs over UDP (RFC 5348 §1): its data and reports classify as udp.
            Protocol::Udp => matches!(kind, PacketKind::Udp | PacketKind::TfrcData | PacketKind::TfrcFeedback),
            Protocol::Any => true,
        }
    }
}

const KINDS: [PacketKind; 3] = [PacketKind::TcpData, PacketKind::TcpAck, PacketKind::Udp];

fn kind_index(kind: PacketKind) -> usize {
    match kind {
        PacketKind::TcpData => 0,
        PacketKind::TcpAck => 1,
        PacketKind::Udp | PacketKind::TfrcData | PacketKind::TfrcFeedback => 2,
    }
}

fn kind_name(kind: PacketKind) -> &'static str {
    match kind {
        PacketKind::TcpData => "tcp-data",
        PacketKind::TcpAck => "tcp-ack",
        PacketKind::Udp | PacketKind::TfrcData | PacketKind::TfrcFeedback => "udp",
    }
}

/// One class's rule: a protocol and optionally the accepted tags.
#[derive(Clone, Copy, Debug)]
pub struct Rule<'a> {
    /// Packet kinds accepted.
    pub protocol: Protocol,
    /// Tags accepted; `None` = all.
    pub tags: Option<&'a [u8]>,
}

impl Rule<'_> {
    fn matches(&self, kind: PacketKind, tag: u8) -> bool {
        self.protocol.matches(kind) && self.tags.is_none_or(|t| t.contains(&tag))
    }
}

/// Compiled first-match-wins rules: class index per (packet kind, tag).
#[derive(Clone, Debug)]
pub struct Classifier {
    table: Box<[[u16; 256]; 3]>,
}

impl Classifier {
    /// Compiles `rules` (class `i` has rule `rules[i]`). `path` is the key of the class list
    /// (e.g. `queue.classes`) for error messages.
    pub fn new(rules: &[Rule<'_>], path: &str) -> ConfigResult<Classifier> {
        const NONE: u16 = u16::MAX;
        if rules.is_empty() {
            return Err(ConfigError::new(path, "at least one class is required"));
        }
        if rules.len() >= NONE as usize {
            return Err(ConfigError::new(path, format!("at most {} classes, got {}", NONE - 1, rules.len())));
        }
        let mut table = Box::new([[NONE; 256]; 3]);
        for (i, rule) in rules.iter().enumerate() {
            if rule.tags.is_some_and(|t| t.is_empty()) {
                return Err(ConfigError::new(
                    format!("{path}[{i}].tags"),
                    "must list at least one tag (0-255); omit tags to accept every tag",
                ));
            }
            let mut reachable = false;
            for kind in KINDS {
                for tag in 0..=255u8 {
                    let slot = &mut table[kind_index(kind)][tag as usize];
                    if *slot == NONE && rule.matches(kind, tag) {
                        *slot = i as u16;
                        reachable = true;
                    }
                }
            }
            if !reachable {
                return Err(ConfigError::new(
                    format!("{path}[{i}]"),
                    "no packet can reach this class: the classes before it take every packet it matches \
                     (classes are tried in order, the first match wins)",
                ));
            }
        }
        let mut missing = Vec::new();
        for kind in KINDS {
            for tag in 0..=255u8 {
                if table[kind_index(kind)][tag as usize] == NONE {
                    missing.push((kind, tag));
                }
            }
        }
        if let Some(&(kind, tag)) = missing.first() {
            let more = if missing.len() > 1 { format!(" (and {} more kind/tag combinations)", missing.len() - 1) } else { String::new() };
            return Err(ConfigError::new(
                path,
                format!(
                    "no class matches {} packets with tag {tag}{more}; every packet needs a class: \
                     end the list with a catch-all class (match = \"any\" and no tags)",
                    kind_name(kind)
                ),
            ));
        }
        Ok(Classifier { table })
    }

    /// The class of `pkt` (an index into the rules given to [`Classifier::new`]).
    #[inline]
    pub fn classify(&self, pkt: &Packet) -> usize {
        self.table[kind_index(pkt.kind)][pkt.class as usize] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(kind: PacketKind, tag: u8) -> Packet {
        Packet { class: tag, ..Packet::new(kind, 0) }
    }

    #[test]
    fn dissertation_classes_first_match_wins() {
        let mm = [1u8, 2];
        let rules = [
            Rule { protocol: Protocol::Tcp, tags: None },
            Rule { protocol: Protocol::Udp, tags: Some(&mm) },
            Rule { protocol: Protocol::Any, tags: None },
        ];
        let c = Classifier::new(&rules, "queue.classes").unwrap();
        assert_eq!(c.classify(&pkt(PacketKind::TcpData, 0)), 0);
        assert_eq!(c.classify(&pkt(PacketKind::TcpAck, 1)), 0, "TCP wins over the tag: it is listed first");
        assert_eq!(c.classify(&pkt(PacketKind::Udp, 1)), 1);
        assert_eq!(c.classify(&pkt(PacketKind::Udp, 2)), 1);
        assert_eq!(c.classify(&pkt(PacketKind::Udp, 0)), 2);
        assert_eq!(c.classify(&pkt(PacketKind::Udp, 255)), 2);
    }

    #[test]
    fn explicit_tags_alone_classify() {
        let (a, b) = ([0u8], [7u8]);
        let rules = [
            Rule { protocol: Protocol::Any, tags: Some(&b) },
            Rule { protocol: Protocol::Any, tags: Some(&a) },
            Rule { protocol: Protocol::Any, tags: None },
        ];
        let c = Classifier::new(&rules, "q").unwrap();
        assert_eq!(c.classify(&pkt(PacketKind::TcpData, 7)), 0);
        assert_eq!(c.classify(&pkt(PacketKind::Udp, 0)), 1);
        assert_eq!(c.classify(&pkt(PacketKind::TcpAck, 3)), 2);
    }

    #[test]
    fn uncovered_packets_are_an_error() {
        let rules = [Rule { protocol: Protocol::Tcp, tags: None }, Rule { protocol: Protocol::Udp, tags: Some(&[1]) }];
        let e = Classifier::new(&rules, "queue.classes").unwrap_err();
        assert_eq!(e.path, "queue.classes");
        assert!(e.message.contains("no class matches udp packets with tag 0 (and 254 more") && e.message.contains("catch-all"), "{}", e.message);
        let e = Classifier::new(&[Rule { protocol: Protocol::TcpData, tags: None }], "q").unwrap_err();
        assert!(e.message.contains("tcp-ack packets with tag 0"), "{}", e.message);
        assert_eq!(Classifier::new(&[], "q").unwrap_err().message, "at least one class is required");
    }

    #[test]
    fn shadowed_class_and_empty_tag_list_are_errors() {
        let rules = [Rule { protocol: Protocol::Any, tags: None }, Rule { protocol: Protocol::Udp, tags: None }];
        assert_eq!(Classifier::new(&rules, "queue.classes").unwrap_err().path, "queue.classes[1]");
        let rules = [Rule { protocol: Protocol::Udp, tags: Some(&[]) }, Rule { protocol: Protocol::Any, tags: None }];
        assert_eq!(Classifier::new(&rules, "queue.classes").unwrap_err().path, "queue.classes[0].tags");
    }
}
