"""The live preview (preview), digests of what it was simulated from (inputs)
and noticing edits to simulate again (follow)."""
