"""Cost estimates as a reader takes them in: CPU time in the unit that fits its size.

Why: "about 0 CPU-min" for 25 seconds of work reads like a fault, and "about 5400 CPU-s"
has to be divided before it means anything.
"""

from __future__ import annotations

MINUTE = 60.0
HOUR = 3600.0


def cpu_time(seconds: float) -> str:
    """`about 30 CPU-s`, `about 12 CPU-min`, `about 3.5 CPU-h`: seconds below 90 s,
    minutes below 90 min, hours beyond (one decimal below 10 h); never `about 0`."""
    if seconds < 1.5 * MINUTE:
        return f"about {max(1, round(seconds))} CPU-s"
    if seconds < 1.5 * HOUR:
        return f"about {round(seconds / MINUTE)} CPU-min"
    hours = seconds / HOUR
    return f"about {hours:.1f} CPU-h" if hours < 10 else f"about {round(hours)} CPU-h"
