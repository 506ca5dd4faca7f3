"""Developer tools (not shipped in the extension zip)."""
