//! Shared RED machinery (placeholder: being written; see qdisc/red.rs).
