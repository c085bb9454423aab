"""Workers, counters and the sampler. Never imports textual or rich."""
