"""The database on the scene: its inputs' property groups (properties), the
build (build, mirror), the .npz bytes kept on the scene (store), tags and the
dance card (tags), and the handlers that notice when its inputs change."""
