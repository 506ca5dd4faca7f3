"""Panels in the 3D Viewport sidebar, tab "Motion Matching": UI only. Each
module lists what it registers in ``classes``; registration.py registers them."""
