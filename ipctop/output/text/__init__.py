"""Terminal text: fixed-width tables, compare's tables, latency and profile text, and the
stdout rules (ASCII fallback, a reader that left)."""
