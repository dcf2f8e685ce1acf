"""Application quality models of Kumar 2003, ch. 3 (spec ``seed002-tsq.md`` §3): interactive audio,
interactive video (H.323) and file transfer, each a function of one-way delay (ms) and throughput,
in [0, 1]; overall quality is ``min(Q_d, Q_t)`` (Sec. 3, used in every experiment of ch. 5).

Errata and choices, each explicit:

* **Audio delay, first segment** (Sec. 3.1.1, Fig. 3.2): printed slope −0.00133 gives Q(150) = 0.80,
  contradicting the text's 0.98 and the second segment. Corrected to **−0.000133** (= −0.02/150);
  ``printed_typo=True`` gives the printed curve for comparison.
* **Audio throughput** (Sec. 3.1.2, Fig. 3.3): ``0.24045·ln(T) − 0.17`` with the **natural log**
  (the anchors Q(128) ≈ 1 and Q(64) = 0.83 only hold for ln), a **4 Kbps cliff** (0 below the
  lowest codec rate) and 1 from 128 Kbps. ``exact=True`` gives the intended ``(log2 T − 1)/6``.
* **Video throughput** (Sec. 3.2, Fig. 3.4): the printed piecewise-linear constants (tiny jumps of
  0.003 at 160 and 384 Kbps kept). Video delay quality is the audio one (the text's reference to
  "Section 3.1.2" should read 3.1.1).
* **File transfer** (Sec. 3.3, Figs. 3.5–3.6): Q_d = 1 (defined up to 1 s; the thesis misprints it as
  "Q_a"), Q_t = T/S capped at 1, S the file size in the same bit units ("best when the file arrives
  in 1 s"). The experiments' S is never stated; it cancels in normalised quality while T < S.

>>> round(audio_delay_quality(150), 3), round(audio_delay_quality(400), 3)
(0.98, 0.5)
>>> round(audio_throughput_quality(64), 3)
0.83
>>> round(video_throughput_quality(384), 3)
0.8
"""

from __future__ import annotations

import math

from ._checks import check_nonnegative, check_positive

__all__ = ["audio_delay_quality", "audio_throughput_quality", "video_delay_quality", "video_throughput_quality",
           "ftp_delay_quality", "ftp_throughput_quality", "quality", "application_quality", "APPLICATIONS"]

APPLICATIONS = ("audio", "video", "ftp")


def audio_delay_quality(delay_ms: float, *, printed_typo: bool = False) -> float:
    """Q_d of interactive audio (Sec. 3.1.1): piecewise linear through (0, 1), (150, 0.98),
    (400, 0.5), (525, 0); 0 beyond. `delay_ms` is the one-way delay, propagation included."""
    check_nonnegative("delay_ms", delay_ms)
    d = float(delay_ms)
    if d <= 150:
        return 1 - (0.00133 if printed_typo else 0.000133) * d
    if d <= 400:
        return 1.268 - 0.00192 * d
    if d <= 525:
        return max(0.0, 2.1 - 0.004 * d)
    return 0.0


def audio_throughput_quality(kbps: float, *, exact: bool = False) -> float:
    """Q_t of interactive audio (Sec. 3.1.2): 1 from 128 Kbps; 0.24045·ln(T) − 0.17 from 4 to 128 Kbps;
    0 below 4 Kbps (the lowest codec rate). `exact`: the intended (log2 T − 1)/6."""
    check_nonnegative("kbps", kbps)
    t = float(kbps)
    if t >= 128:
        return 1.0
    if t < 4:
        return 0.0
    return (math.log2(t) - 1) / 6 if exact else 0.24045 * math.log(t) - 0.17


def video_delay_quality(delay_ms: float) -> float:
    """Q_d of interactive video: the audio delay quality (Sec. 3.2)."""
    return audio_delay_quality(delay_ms)


def video_throughput_quality(kbps: float) -> float:
    """Q_t of H.323 video (Sec. 3.2, Fig. 3.4), the printed constants: through (0, 0), (160, 0.6),
    (384, 0.8), (512, 0.85), (768, 0.9), (1500, 1); 1 above 1500 Kbps."""
    check_nonnegative("kbps", kbps)
    t = float(kbps)
    if t > 1500:
        return 1.0
    if t >= 768:
        return 0.0001367 * t + 0.795
    if t >= 512:
        return 0.0001953 * t + 0.75
    if t >= 384:
        return 0.0003906 * t + 0.65
    if t >= 160:
        return 0.0008928 * t + 0.46
    return 0.00375 * t


def ftp_delay_quality(delay_ms: float) -> float:
    """Q_d of file transfer (Sec. 3.3): 1 (the thesis defines it up to 1000 ms; kept at 1 beyond)."""
    check_nonnegative("delay_ms", delay_ms)
    return 1.0


def ftp_throughput_quality(throughput: float, file_size: float) -> float:
    """Q_t of file transfer (Sec. 3.3): T/S capped at 1, T and S in the same bit units (1 = the file
    arrives in one second)."""
    check_nonnegative("throughput", throughput)
    check_positive("file_size", file_size)
    return min(1.0, float(throughput) / float(file_size))


def quality(delay_quality: float, throughput_quality: float) -> float:
    """Overall quality: the minimum of the two (Sec. 3)."""
    return min(delay_quality, throughput_quality)


def application_quality(app: str, delay_ms: float, kbps: float, *, ftp_file_kbits: float = 15_000.0
                        ) -> tuple[float, float, float]:
    """(Q_d, Q_t, Q) of application `app` ("audio", "video" or "ftp") at one-way delay `delay_ms`
    and throughput `kbps`. FTP's file size defaults to 15 Mb (the bottleneck rate, so T/S < 1)."""
    if app == "audio":
        qd, qt = audio_delay_quality(delay_ms), audio_throughput_quality(kbps)
    elif app == "video":
        qd, qt = video_delay_quality(delay_ms), video_throughput_quality(kbps)
    elif app == "ftp":
        qd, qt = ftp_delay_quality(delay_ms), ftp_throughput_quality(kbps, ftp_file_kbits)
    else:
        raise ValueError(f"app must be one of {', '.join(APPLICATIONS)}, got {app!r}")
    return qd, qt, quality(qd, qt)
