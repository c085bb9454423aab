"""The monitor without a screen: sample sources, the session model, records and baselines of a run. Never imports textual or rich."""
