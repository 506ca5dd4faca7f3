"""Retargeting a take or a bake onto another character."""
