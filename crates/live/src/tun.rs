//! A Linux TUN device: IP packets in and out of a file descriptor.
//!
//! The device is created non-persistent (it disappears when the descriptor closes, so a crashed
//! run leaves nothing behind) and without the packet-information prefix or offloads: the kernel
//! hands over one IP packet of at most the device MTU per read, segmenting TSO/GSO bursts first,
//! so the queue sees packets as a router on the wire would.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
/// `_IOW('T', 202, int)` from linux/if_tun.h.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// `struct ifreq` as TUNSETIFF reads it: the name and the flags word of the union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _rest: [u8; 22],
}

/// An open TUN device.
pub struct Tun {
    file: File,
    name: String,
}

impl Tun {
    /// Creates the TUN device `name` (needs CAP_NET_ADMIN). The name must be 1–15 ASCII letters,
    /// digits, '-' or '_' and not in use.
    pub fn create(name: &str) -> io::Result<Tun> {
        let valid = !name.is_empty()
            && name.len() < libc::IFNAMSIZ
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("TUN device name {name:?}: 1 to 15 ASCII letters, digits, '-' or '_'"),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _rest: [0; 22] };
        req.name[..name.len()].copy_from_slice(CString::new(name)?.as_bytes());
        // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which `req` is laid out as.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("creating TUN device {name}: {e}")));
        }
        Ok(Tun { file, name: name.to_string() })
    }

    /// The device name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet into `buf`; `None` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Hands one packet to the kernel as if it arrived on the device.
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        (&self.file).write(pkt).map(|_| ())
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}
